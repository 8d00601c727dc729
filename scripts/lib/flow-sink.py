#!/usr/bin/python3
"""goldmane's NDJSON push target for ./calico up (goldmane PUSH_URL): appends every pushed
window's flows, one JSON Flow per line, to FILE. Lets `./calico status`, the local-suite test and
a plain `tail -f` see allowed and denied flows without whisker.

    flow-sink.py PORT FILE      (listens on 127.0.0.1 only)
"""
import http.server
import sys


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        if body and not body.endswith(b"\n"):
            body += b"\n"
        with open(FILE, "ab") as f:
            f.write(body)
        self.send_response(204)
        self.end_headers()

    def do_GET(self):
        # a health answer for `./calico status`
        self.send_response(200)
        self.send_header("Content-Length", "3")
        self.end_headers()
        self.wfile.write(b"ok\n")

    def log_message(self, fmt, *args):
        pass


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: flow-sink.py PORT FILE")
    FILE = sys.argv[2]
    http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
