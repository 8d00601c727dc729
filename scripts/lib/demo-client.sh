#!/usr/bin/env bash
# One demo client loop, run inside a pod's network namespace by ./calico up:
#   demo-client.sh tcp|udp ADDRESS PORT INTERVAL_SECONDS
# Every INTERVAL it sends one line and prints the answer (or that none came): a connection that
# policy denies shows as "no answer" here and as a Deny flow in goldmane/whisker.
set -u
proto=$1 addr=$2 port=$3 interval=$4
while true; do
    case $proto in
        tcp) reply=$(echo "hello from $(hostname)" | socat -T1 - "TCP:$addr:$port,connect-timeout=1" 2>/dev/null) ;;
        udp) reply=$(echo "hello from $(hostname)" | socat -T1 - "UDP:$addr:$port" 2>/dev/null) ;;
        *) echo "demo-client: proto: '$proto' is not tcp or udp" >&2; exit 2 ;;
    esac
    printf '%s %s %s:%s %s\n' "$(date -u +%H:%M:%S)" "$proto" "$addr" "$port" "${reply:-no answer}"
    sleep "$interval"
done
