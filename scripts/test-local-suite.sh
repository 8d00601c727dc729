#!/usr/bin/env bash
# End-to-end test of local mode: `./calico up` (jars already built: CALICO_SKIP_BUILD=1), every
# service ready, the demo pods networked by the CNI plugin, allowed AND denied flows (and the
# staged policy's pending deny) arriving, a second `up` changing nothing, then `./calico down`
# leaving no namespace, nft table, iptables rule, veth or process behind (compared with a
# snapshot of this machine's own namespace taken before `up`).
#
#   scripts/test-local-suite.sh        (root; run by scripts/test.sh after a passing Maven build)
#   scripts/test-local-suite.sh --missing-jar   (prints a jar `up` needs that is not built; exit 1)
#
# `up` runs CALICO_NODES nodes (default 2: the demo pods spread over them, routes between them by
# BGP without encapsulation): pods on different nodes reach each other, every node's BIRD has its
# sessions Established, and a cross-node flow is reported by both ends.
#
# CALICO_TEST_DATASTORES (default "kubernetes") lists the datastores to run it on, one full run
# each: "kubernetes etcd memory" also runs `./calico up --datastore etcd` and `--datastore memory`
# (apiserver-service holding the memory store, every component on DATASTORE_TYPE=apiserver); the
# last line then sums the runs. An entry DATASTORE:vxlan runs that datastore's suite with
# `--encapsulation vxlan` instead of none (CALICO_ENCAPSULATION for a single run): no confd or
# BIRD, felix's vxlan.calico on every node and the other nodes' blocks routed through it.
#
# On the kubernetes run without encapsulation it then runs the fault suite (`./calico faults`: each
# service SIGKILLed under probes and started again; CALICO_TEST_FAULTS=0 skips it).
#
# Prints one PASS/FAIL line per check and ends with `local-suite: N passed, N failed`; exits
# non-zero on any failure. `./calico down` always runs on exit.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DATASTORES=${CALICO_TEST_DATASTORES:-kubernetes}
for entry in $DATASTORES; do
    ds=${entry%%:*} encap=${entry#"$ds"}
    [[ $ds == kubernetes || $ds == etcd || $ds == memory ]] \
        || { echo "CALICO_TEST_DATASTORES: '$ds' is not kubernetes, etcd or memory" >&2; exit 2; }
    [[ -z $encap || $encap == :none || $encap == :vxlan ]] \
        || { echo "CALICO_TEST_DATASTORES: '$entry': the encapsulation after ':' is not none or vxlan" >&2; exit 2; }
done
read -ra datastore_list <<<"$DATASTORES"
if ((${#datastore_list[@]} > 1)) && [[ ${1:-} != --missing-jar ]]; then
    total_passed=0 total_failed=0 rc=0
    for entry in "${datastore_list[@]}"; do
        ds=${entry%%:*} encap=${entry#*:}
        [[ $entry == *:* ]] || encap=${CALICO_ENCAPSULATION:-none}
        echo "== local suite on --datastore $ds --encapsulation $encap"
        out=$(mktemp)
        CALICO_TEST_DATASTORES=$ds CALICO_ENCAPSULATION=$encap "$0" "$@" 2>&1 | tee "$out"
        ((PIPESTATUS[0] == 0)) || rc=1
        read -r p f < <(sed -n 's/^local-suite: \([0-9]*\) passed, \([0-9]*\) failed.*/\1 \2/p' "$out" | tail -n 1)
        rm -f "$out"
        [[ -n ${p:-} ]] || { p=0; f=1; }
        total_passed=$((total_passed + p)) total_failed=$((total_failed + f))
    done
    echo "local-suite: $total_passed passed, $total_failed failed (datastores: $DATASTORES)"
    exit "$rc"
fi
DATASTORE=${datastore_list[0]:-kubernetes}
ENCAPSULATION=${CALICO_ENCAPSULATION:-none}
if [[ $DATASTORE == *:* ]]; then ENCAPSULATION=${DATASTORE#*:} DATASTORE=${DATASTORE%%:*}; fi
[[ $ENCAPSULATION == none || $ENCAPSULATION == vxlan ]] \
    || { echo "CALICO_ENCAPSULATION: '$ENCAPSULATION' is not none or vxlan (the suite checks those)" >&2; exit 2; }
RUN_DIR=$ROOT/.calico-run
NODES=${CALICO_NODES:-2}
FLOW_TIMEOUT=${LOCAL_SUITE_FLOW_TIMEOUT:-60}
JARS=(felix-service/target/felix-service-exec.jar node-startup/target/node-startup-exec.jar typha-service/target/typha-service-exec.jar
    goldmane-service/target/goldmane-service-exec.jar cni-plugin/target/cni-plugin.jar calicoctl/target/calicoctl.jar
    confd-service/target/confd-service-exec.jar launcher/target/launcher.jar controllers-service/target/controllers-service-exec.jar)
[[ " ${datastore_list[*]} " == *" memory"[\ :]* ]] && JARS+=(apiserver-service/target/apiserver-service-exec.jar)

# --missing-jar: prints the first jar `up` needs that is not built and exits 1 (0: all there).
if [[ ${1:-} == --missing-jar ]]; then
    for j in "${JARS[@]}"; do [[ -f $j ]] || { echo "$j"; exit 1; }; done
    exit 0
fi
LOG=$(mktemp -d /tmp/local-suite.XXXXXX)
passed=0 failed=0

pass() { printf 'PASS: %s\n' "$*"; passed=$((passed + 1)); }
fail() { printf 'FAIL: %s\n' "$*"; failed=$((failed + 1)); }
check() { local what=$1; shift; if "$@" >>"$LOG/checks.log" 2>&1; then pass "$what"; else fail "$what"; fi; }

finish() {
    local rc=$?
    # The services' logs outlive `down`, for a failure's post-mortem.
    if [[ -d $RUN_DIR/logs ]]; then cp -r "$RUN_DIR/logs" "$LOG/service-logs" 2>/dev/null || true; fi
    if [[ -d $RUN_DIR ]]; then ./calico down >>"$LOG/down-on-exit.log" 2>&1 || true; fi
    echo "logs: $LOG"
    echo "local-suite: $passed passed, $failed failed"
    ((failed == 0 && rc == 0)) || exit 1
    exit 0
}
trap finish EXIT

if ((EUID != 0)); then
    fail "needs root (network namespaces, veths)"
    exit 1
fi
if [[ -d $RUN_DIR ]]; then
    fail "$RUN_DIR exists: a local suite is already up here (./calico down first)"
    trap - EXIT
    echo "local-suite: $passed passed, $failed failed"
    exit 1
fi

# This machine's own namespace, as `down` must leave it.
snapshot() {
    nft list ruleset 2>&1
    for t in iptables-nft-save ip6tables-nft-save iptables-legacy-save ip6tables-legacy-save; do
        command -v "$t" >/dev/null && "$t" 2>/dev/null | grep -v '^#' | sed 's/\[[0-9]*:[0-9]*\]//'
    done
    ip netns list
    ip -o link show | awk -F': ' '{print $2}'
    ip route show table all
}
snapshot >"$LOG/before.txt"

# ------------------------------------------------------------------ up
started=$SECONDS
if CALICO_SKIP_BUILD=1 ./calico up --datastore "$DATASTORE" --nodes "$NODES" --encapsulation "$ENCAPSULATION" >"$LOG/up1.log" 2>&1; then
    pass "./calico up --datastore $DATASTORE --nodes $NODES --encapsulation $ENCAPSULATION ($((SECONDS - started))s)"
else
    fail "./calico up exited non-zero; last lines:"
    tail -n 20 "$LOG/up1.log" | sed 's/^/    /'
    exit 1
fi

./calico status >"$LOG/status1.log" 2>&1
check "./calico status exits 0" test "${PIPESTATUS[0]}" -eq 0
services=(kube apiserver flows goldmane typha)
[[ $DATASTORE == etcd ]] && services+=(etcd)
# controllers-service (kube-controllers) runs on etcd and kubernetes, not on memory.
[[ $DATASTORE == memory ]] || services+=(controllers)
for ((i = 1; i <= NODES; i++)); do
    services+=("felix-node-$i" "cni-node-$i")
    # Calico's vxlan networking backend runs no BIRD (nor its confd).
    [[ $ENCAPSULATION == vxlan ]] || services+=("confd-node-$i" "bird-node-$i")
done
[[ -f whisker-backend/target/whisker-backend-exec.jar ]] && services+=(whisker)
for s in "${services[@]}"; do
    check "$s is ready" grep -qE "^$s +running \(pid [0-9]+\), ready$" "$LOG/status1.log"
done
if [[ $DATASTORE == memory ]]; then
    check "memory mode: no etcd started" test ! -e "$RUN_DIR/etcd.pid"
    check "memory mode: status says why controllers-service is skipped" grep -qE "^controllers +skipped on --datastore memory" "$LOG/status1.log"
    check "memory mode: calicoctl reads the apiserver's store" bash -c "./calico ctl get ippools -o yaml | grep -q 192.168.0.0/16"
fi

# ------------------------------------------------------------------ workloads
mapfile -t pods < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' examples/demo-pods.conf | awk '{print $1 "/" $2}')
# The pods are Pod objects of the real control plane, bound to this node, reported running with their address.
./calico kubectl get pods -A --no-headers -o custom-columns=NS:.metadata.namespace,NAME:.metadata.name,READY:.status.containerStatuses[0].ready,IP:.status.podIP,NODE:.spec.nodeName \
    >"$LOG/pods.txt" 2>&1
check "kubectl lists ${#pods[@]} ready pods, each with its address" \
    test "$(grep -cE ' true +192\.168\.[0-9.]+ +[^ ]+$' "$LOG/pods.txt")" -eq "${#pods[@]}"
for p in "${pods[@]}"; do
    check "pod $p's address in kubectl is the one the CNI plugin gave it" \
        grep -qE "^${p%/*} +${p#*/} +true +$(cat "$RUN_DIR/pods/${p/\//.}/ip" 2>/dev/null) " "$LOG/pods.txt"
done
if [[ $DATASTORE != memory ]]; then
    # apiserver-service behind kube-apiserver: kubectl reaches projectcalico.org/v3 through the aggregator.
    ./calico kubectl get networkpolicies.projectcalico.org -A >"$LOG/calico-policies.txt" 2>&1
    check "kubectl get networkpolicies.projectcalico.org -A (through kube-apiserver) lists the demo's policies" \
        grep -qE '^data +allow-backend-to-database ' "$LOG/calico-policies.txt"
    check "kubectl get globalnetworkpolicies through kube-apiserver" \
        bash -c "./calico kubectl get globalnetworkpolicies.projectcalico.org -o name | grep -q security.deny-client-to-database"
fi
if [[ $DATASTORE == kubernetes ]]; then
    check "the Kubernetes NetworkPolicy is in felix's ruleset (knp.default.database-ingress)" bash -c \
        "ip netns exec calico-node-1 nft list ruleset | grep -q knp.default.database-ingress || ip netns exec calico-node-1 iptables-nft-save | grep -q knp.default.database-ingress"
    check "Calico's resources are custom resources (kubectl get ippools.crd.projectcalico.org)" \
        bash -c "./calico kubectl get ippools.crd.projectcalico.org default-ipv4-ippool -o name | grep -q default-ipv4-ippool"
fi
./calico ctl get nodes -o yaml >"$LOG/nodes.yaml" 2>&1
for ((i = 1; i <= NODES; i++)); do
    check "calico-node start-up wrote node-$i's address, autodetected on its eth0 on the underlay (172.31.255.$i/24)" \
        grep -q "ipv4Address: 172.31.255.$i/24" "$LOG/nodes.yaml"
done
pool_mode="grep -q 'vxlanMode: Never'"
[[ $ENCAPSULATION == vxlan ]] && pool_mode="grep -q 'vxlanMode: Always'"
check "calico-node start-up made the default pool (192.168.0.0/16, encapsulation $ENCAPSULATION), the only one" bash -c \
    "test \$(./calico ctl get ippools -o yaml | grep -c 'kind: IPPool\$') -eq 1 && ./calico ctl get ippools -o yaml | grep -q 'cidr: 192.168.0.0/16' && ./calico ctl get ippools -o yaml | $pool_mode"
check "calico-node start-up wrote ClusterInformation (datastoreReady)" bash -c \
    "./calico ctl get clusterinformations default -o yaml | grep -q 'datastoreReady: true'"
check "${#pods[@]} demo pods have a namespace" test "$(ip netns list | grep -c '^calico-pod-')" -eq "${#pods[@]}"
# The pods go round-robin over the nodes: node i holds every NODES-th, from the i-th.
for ((i = 1; i <= NODES; i++)); do
    on_node=$(( (${#pods[@]} - i) / NODES + 1 ))
    ((i <= ${#pods[@]})) || on_node=0
    check "node-$i's namespace holds its $on_node cali* host ends, and felix routes to them" bash -c \
        "test \$(ip -n calico-node-$i -o link show | grep -c ': cali') -eq $on_node && test \$(ip -n calico-node-$i route show | grep -c 'dev cali') -ge $on_node"
    if grep -q 'kernel dataplane nftables' "$LOG/up1.log"; then
        check "felix's nftables table is in node-$i's namespace" ip netns exec "calico-node-$i" nft list table inet calico
    else
        check "felix's iptables chains are in node-$i's namespace" bash -c \
            "ip netns exec calico-node-$i iptables-nft-save -t filter | grep -q '^:cali-FORWARD'"
    fi
done
check "kubectl places the pods on node-1..node-$NODES" \
    test "$(awk '{print $5}' "$LOG/pods.txt" | sort -u | wc -l)" -eq "$(( NODES < ${#pods[@]} ? NODES : ${#pods[@]} ))"
check "no cali* interface in this machine's namespace" bash -c "! ip -o link show | grep -q ': cali'"
./calico ctl get workloadendpoints -A -o yaml >"$LOG/weps.yaml" 2>&1
check "the CNI plugin wrote ${#pods[@]} WorkloadEndpoints" test "$(grep -c 'kind: WorkloadEndpoint$' "$LOG/weps.yaml")" -eq "${#pods[@]}"
check "endpoints carry the pods' labels (app=...)" test "$(grep -c '^      app: ' "$LOG/weps.yaml")" -eq "${#pods[@]}"
check "endpoints name the kns.shop / kns.data profiles" grep -q 'kns.data' "$LOG/weps.yaml"
if [[ " ${services[*]} " == *" whisker "* ]]; then
    token=$(cat "$RUN_DIR/whisker-token" 2>/dev/null)
    check "whisker's token file is mode 0600" test "$(stat -c %a "$RUN_DIR/whisker-token")" = 600
    check "up printed the whisker URL with the token" grep -qF "http://127.0.0.1:${CALICO_WHISKER_PORT:-8081}/#token=$token" "$LOG/up1.log"
    check "whisker refuses GET /flows without the token (401)" test "$(curl -s -o /dev/null -w '%{http_code}' \
        "http://127.0.0.1:${CALICO_WHISKER_PORT:-8081}/flows")" = 401
fi
if [[ $DATASTORE != memory ]]; then
    # Calico's kube-controllers' IPAM metrics on 9094 (KubeControllersConfiguration's prometheusMetricsPort).
    check "controllers-service serves Calico's ipam_* metrics on 9094 (the default pool's size, 65536)" bash -c \
        "curl -fsS http://127.0.0.1:9094/metrics | grep -qE '^ipam_ippool_size\{[^}]*\} 65536(\.0)?\$'"
fi
admin_endpoints=0
for ((i = 1; i <= NODES; i++)); do
    n=$(curl -fsS "http://127.0.0.1:$((${CALICO_FELIX_ADMIN_PORT:-9097} + (i - 1) * ${CALICO_NODE_PORT_STRIDE:-100}))/felix/v1/endpoints" | grep -o '"interfaceName"' | wc -l)
    admin_endpoints=$((admin_endpoints + n))
done
check "the felixes' admin APIs list ${#pods[@]} endpoints between them" test "$admin_endpoints" -ge "${#pods[@]}"

# ------------------------------------------------------------------ between nodes
# none: BGP without encapsulation: each node's BIRD peers with every other (confd's mesh), and
# the kernel of each node routes the other nodes' blocks via their underlay addresses.
# vxlan: felix makes vxlan.calico on every node (its VTEP from start-up's tunnel address) and
# routes the other nodes' blocks through it; no BIRD.
for ((i = 1; i <= NODES; i++)); do
    if [[ $ENCAPSULATION == vxlan ]]; then
        check "node-$i has felix's vxlan.calico (VNI 4096, up) and no tunl0" bash -c \
            "ip -n calico-node-$i -d link show vxlan.calico | grep -q 'vxlan id 4096' && ip -n calico-node-$i link show vxlan.calico | grep -q ',UP' && ! ip -n calico-node-$i -o link show | grep -qE ': tunl0[@:]'"
    else
        check "node-$i's BIRD has $((NODES - 1)) mesh sessions Established" test \
            "$(birdc -s "$RUN_DIR/nodes/node-$i/bird.ctl" show protocols 2>/dev/null | grep -c '^Mesh_.*Established')" -eq $((NODES - 1))
        check "node-$i has no encapsulation device (vxlan.calico, tunl0)" bash -c \
            "! ip -n calico-node-$i -o link show | grep -qE ': (vxlan\.calico|tunl0)[@:]'"
    fi
done
# The first allowed TCP line of demo-traffic.conf whose pods are on different nodes (the pods go
# round-robin, so which pair crosses depends on the node count): "FROM TO PORT".
cross=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' examples/demo-traffic.conf | while read -r from to proto port verdict; do
    [[ $proto == tcp && $verdict == Allow ]] || continue
    [[ $(cat "$RUN_DIR/pods/${from/\//.}/node" 2>/dev/null) != "$(cat "$RUN_DIR/pods/${to/\//.}/node" 2>/dev/null)" ]] || continue
    echo "$from $to $port"; break
done)
# reaches FROM TO PORT: FROM's pod gets TO's server's answer within 30 s (a connection may be lost
# while felix programs a new endpoint's policy, or under load: the demo's loops see that too).
reaches() {
    local from=$1 to=$2 port=$3 ip deadline=$((SECONDS + 30))
    ip=$(cat "$RUN_DIR/pods/${to/\//.}/ip")
    until ip netns exec "calico-pod-${from/\//-}" socat -T3 -u "TCP:$ip:$port,connect-timeout=3" - | grep -q "reply from $to"; do
        ((SECONDS < deadline)) || return 1
        sleep 1
    done
}
# node_pod_ip NODE: the address of a demo pod on NODE.
node_pod_ip() { grep -lx "$1" "$RUN_DIR"/pods/*/node 2>/dev/null | head -n 1 | xargs -r dirname | xargs -r -I{} cat {}/ip; }
if ((NODES > 1)); then
    if [[ $ENCAPSULATION == vxlan ]]; then
        # node-1's VXLAN tunnel address (start-up's, from IPAM) is the gateway of its block's route.
        tunnel1=$(awk '/name: node-1$/ {n = 1} n && /ipv4VXLANTunnelAddr:/ {print $2; exit}' "$LOG/nodes.yaml")
        pod1=$(node_pod_ip node-1)
        check "node-2 routes node-1's block ($pod1's) via node-1's VXLAN tunnel address ${tunnel1:-?} on vxlan.calico (felix's, proto 80)" bash -c \
            "test -n '$tunnel1' && test -n '$pod1' && ip -n calico-node-2 route show proto 80 | grep -qE '^192\.168\.[0-9.]+/26 via $tunnel1 dev vxlan.calico' && ip -n calico-node-2 route get '$pod1' | grep -q 'via $tunnel1 dev vxlan.calico'"
        check "node-2 has no BGP route (no BIRD with vxlan)" bash -c "test -z \"\$(ip -n calico-node-2 route show proto bird)\""
    else
        check "node-2 routes node-1's block via node-1's underlay address, learnt by BIRD" bash -c \
            "ip -n calico-node-2 route show proto bird | grep -q 'via 172.31.255.1 dev eth0'"
    fi
    read -r from to port <<<"$cross"
    if [[ -n $cross ]]; then
        check "$from on $(cat "$RUN_DIR/pods/${from/\//.}/node") reaches $to on $(cat "$RUN_DIR/pods/${to/\//.}/node") (TCP $port, encapsulation $ENCAPSULATION)" \
            reaches "$from" "$to" "$port"
        if [[ $ENCAPSULATION == vxlan ]]; then
            # That traffic went through the tunnel: the source node's vxlan.calico has sent packets.
            src_node=$(cat "$RUN_DIR/pods/${from/\//.}/node")
            check "$src_node's vxlan.calico has sent packets (the crossing pair's traffic is encapsulated)" bash -c \
                "test \$(ip netns exec calico-$src_node cat /sys/class/net/vxlan.calico/statistics/tx_packets) -gt 0"
        fi
    else
        fail "no allowed TCP line of examples/demo-traffic.conf crosses nodes"
    fi
fi

# ------------------------------------------------------------------ flows
# Every line of demo-traffic.conf must show as a flow reported by the destination with the
# expected action; plus the staged backend-lockdown's pending deny on the allowed UDP flow.
flows_json() {
    if [[ -s $RUN_DIR/whisker-token ]] && curl -fsS -o /dev/null "http://127.0.0.1:${CALICO_WHISKER_HEALTH_PORT:-9092}/readiness" 2>/dev/null; then
        curl -fsS -H "Authorization: Bearer $(cat "$RUN_DIR/whisker-token")" \
            "http://127.0.0.1:${CALICO_WHISKER_PORT:-8081}/flows?pageSize=1000" | python3 "$ROOT/scripts/lib/flows.py" whisker
    else
        python3 "$ROOT/scripts/lib/flows.py" ndjson <"$RUN_DIR/flows.ndjson"
    fi
}
source_of_flows=ndjson
[[ -s $RUN_DIR/whisker-token ]] && source_of_flows="whisker GET /flows"
mapfile -t expected < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' examples/demo-traffic.conf | awk '{print $1, $2, $3, $4, $5}')
expected+=("shop/frontend shop/backend udp 9053 pending:Deny:backend-lockdown")
# Reported by the source too: both ends' felixes (on two nodes for the crossing pair).
if [[ -n $cross ]]; then read -r from to port <<<"$cross"; else read -r from to port <<<"shop/client shop/frontend 80"; fi
expected+=("$from $to tcp $port src:Allow")
deadline=$((SECONDS + FLOW_TIMEOUT))
started=$SECONDS
missing=("${expected[@]}")
while ((${#missing[@]} > 0 && SECONDS < deadline)); do
    sleep 2
    flows_json >"$LOG/flows.txt" 2>>"$LOG/flows.err" || continue
    still=()
    for e in "${missing[@]}"; do grep -qxF "$e" "$LOG/flows.txt" || still+=("$e"); done
    missing=("${still[@]}")
done
for e in "${expected[@]}"; do
    if grep -qxF "$e" "$LOG/flows.txt" 2>/dev/null; then
        pass "flow $e (via $source_of_flows, within $((SECONDS - started))s)"
    else
        fail "flow $e not seen within ${FLOW_TIMEOUT}s (via $source_of_flows; seen: $LOG/flows.txt)"
    fi
done

# ------------------------------------------------------------------ second up
weps_before=$(grep -c 'kind: WorkloadEndpoint$' "$LOG/weps.yaml")
pids_before=$(cat "$RUN_DIR"/*.pid | awk '{print $1}' | sort | tr '\n' ' ')
if CALICO_SKIP_BUILD=1 ./calico up --datastore "$DATASTORE" --nodes "$NODES" --encapsulation "$ENCAPSULATION" >"$LOG/up2.log" 2>&1; then pass "second ./calico up exits 0"; else fail "second ./calico up exited non-zero"; fi
for s in "${services[@]}"; do
    check "second up: $s already running" grep -q "^calico: $s already running$" "$LOG/up2.log"
done
check "second up: calico-node start-up ran again on each node and changed nothing" \
    test "$(grep -c 'start-up done for node .*: nothing to change' "$RUN_DIR/logs/node-startup.log")" -ge "$NODES"
check "second up: pods already exist" test "$(grep -c '^calico: pod .* already exists' "$LOG/up2.log")" -eq "${#pods[@]}"
check "second up: no new process" test "$(cat "$RUN_DIR"/*.pid | awk '{print $1}' | sort | tr '\n' ' ')" == "$pids_before"
check "second up: still ${#pods[@]} pod namespaces" test "$(ip netns list | grep -c '^calico-pod-')" -eq "${#pods[@]}"
check "second up: still $weps_before WorkloadEndpoints" \
    test "$(./calico ctl get workloadendpoints -A -o yaml 2>/dev/null | grep -c 'kind: WorkloadEndpoint$')" -eq "$weps_before"

# ------------------------------------------------------------------ faults
# The fault suite (launcher/: calico.launcher.faults; docs/local-suite.md): every service killed with
# SIGKILL under 100 ms probes and started again, its verdicts as PASS/FAIL lines here, its figures in
# $LOG/faults.log. Once, on the kubernetes run without encapsulation (where BIRD and confd run);
# CALICO_TEST_FAULTS=0 skips it.
if [[ ${CALICO_TEST_FAULTS:-1} != 0 && $DATASTORE == kubernetes && $ENCAPSULATION == none ]]; then
    started=$SECONDS
    ./calico faults >"$LOG/faults.log" 2>&1
    faults_rc=$?
    while IFS= read -r line; do
        if [[ $line == PASS:* ]]; then pass "${line#PASS: }"; else fail "${line#FAIL: }"; fi
    done < <(grep -E '^(PASS|FAIL): ' "$LOG/faults.log")
    if ((faults_rc != 0)) && ! grep -qE '^FAIL: ' "$LOG/faults.log"; then
        fail "./calico faults exited $faults_rc without a verdict; last lines:"
        tail -n 10 "$LOG/faults.log" | sed 's/^/    /'
    fi
    grep -E '^\|' "$LOG/faults.log" | sed 's/^/    /'
    echo "fault suite: $((SECONDS - started))s"
fi

# ------------------------------------------------------------------ down
mapfile -t pids < <(cat "$RUN_DIR"/*.pid | awk '{print $1}'; sed -n 's/^pid\.[a-z-]*=//p' "$RUN_DIR/kube/control-plane.state" 2>/dev/null)
cp -r "$RUN_DIR/logs" "$LOG/service-logs" 2>/dev/null || true
started=$SECONDS
if ./calico down >"$LOG/down.log" 2>&1; then pass "./calico down ($((SECONDS - started))s)"; else fail "./calico down exited non-zero"; fi
check "down removed .calico-run/" test ! -e "$RUN_DIR"
alive=()
# A zombie waiting for this machine's init to reap it has stopped; anything else has not.
for p in "${pids[@]}"; do
    state=$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null) || continue
    [[ $state == Z ]] || alive+=("$p")
done
check "down stopped all ${#pids[@]} processes it started" test "${#alive[@]}" -eq 0
check "no calico-* network namespace left" bash -c "! ip netns list | grep -q '^calico-'"
snapshot >"$LOG/after.txt"
if diff "$LOG/before.txt" "$LOG/after.txt" >"$LOG/snapshot.diff"; then
    pass "this machine's nft ruleset, iptables, namespaces, links and routes are as before up"
else
    fail "this machine's namespace changed:"
    sed 's/^/    /' "$LOG/snapshot.diff" | head -n 20
fi
