#!/usr/bin/python3
"""The one Kubernetes API call the CNI plugin makes (policy.type k8s): GET a pod.

./calico up has no Kubernetes, so this stands in for the API server, inside the node network
namespace where the plugin's calls run. Pods are JSON files DIR/<namespace>/<name>.json (the
script writes them); anything else answers a Kubernetes 404 Status.

    kube-api-stub.py PORT DIR
"""
import http.server
import json
import os
import re
import sys

POD = re.compile(r"^/api/v1/namespaces/([a-z0-9-]+)/pods/([a-z0-9.-]+)$")


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        m = POD.match(self.path.split("?", 1)[0])
        path = m and os.path.join(DIR, m.group(1), m.group(2) + ".json")
        if path and os.path.isfile(path):
            with open(path, "rb") as f:
                self.answer(200, f.read())
        else:
            self.answer(404, json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                         "reason": "NotFound", "code": 404}).encode())

    def answer(self, status, body):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, fmt, *args):
        sys.stderr.write("kube-api-stub: " + (fmt % args) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: kube-api-stub.py PORT DIR")
    DIR = sys.argv[2]
    http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
