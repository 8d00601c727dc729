#!/usr/bin/python3
"""Prints flows as comparable lines, for scripts/test-local-suite.sh and a quick look:

    SRC_NS/SRC DST_NS/DST PROTO PORT ACTION               (flows the destination reported)
    SRC_NS/SRC DST_NS/DST PROTO PORT pending:ACTION:NAME  (a staged policy's pending verdict)
    SRC_NS/SRC DST_NS/DST PROTO PORT src:ACTION           (flows the source reported)

    flows.py ndjson < .calico-run/flows.ndjson     goldmane's NDJSON push (proto3 JSON Flows)
    flows.py whisker < GET /flows answer           whisker-backend's API (whisker-backend/API.md)
"""
import json
import sys


def from_ndjson(stream):
    for line in stream:
        if line.strip():
            k = json.loads(line)["Key"]
            pol = k.get("policies", {})
            yield (k.get("sourceNamespace", ""), k.get("sourceName", ""), k.get("destNamespace", ""),
                   k.get("destName", ""), k.get("proto", ""), str(k.get("destPort", "0")), k.get("reporter", ""),
                   k.get("action", ""), pol.get("pendingPolicies", []))


def from_whisker(stream):
    for f in json.load(stream).get("items", []):
        yield (f.get("source_namespace", ""), f.get("source_name", ""), f.get("dest_namespace", ""),
               f.get("dest_name", ""), f.get("protocol", ""), str(f.get("dest_port", 0)), f.get("reporter", ""),
               f.get("action", ""), (f.get("policies") or {}).get("pending") or [])


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in ("ndjson", "whisker"):
        sys.exit("usage: flows.py ndjson|whisker < FLOWS")
    read = from_ndjson if sys.argv[1] == "ndjson" else from_whisker
    seen = set()
    for sns, src, dns, dst, proto, port, reporter, action, pending in read(sys.stdin):
        flow = f"{sns}/{src} {dns}/{dst} {proto} {port}"
        if reporter == "Src":
            seen.add(f"{flow} src:{action}")
        if reporter != "Dst":
            continue
        seen.add(f"{flow} {action}")
        for p in pending:
            if p.get("kind", "").startswith("Staged"):
                seen.add(f"{flow} pending:{p.get('action')}:{p.get('name')}")
    print("\n".join(sorted(seen)))


if __name__ == "__main__":
    main()
