#!/usr/bin/env bash
# The local Kubernetes control plane: etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, kubectl and kubelet (for the charts module's real node), built from the Go
# modules pinned in control-plane/go/go.mod.
#
#   scripts/control-plane.sh build              # build once per machine (cached; prints the bin dir)
#   scripts/control-plane.sh bin-dir            # where the binaries of the pinned versions live
#   scripts/control-plane.sh start DIR [OPT...] # start on loopback; DIR/admin.kubeconfig; returns at /readyz
#   scripts/control-plane.sh stop DIR           # stop everything start DIR started
#   scripts/control-plane.sh status DIR         # ports, pids, and whether each part answers
#   scripts/control-plane.sh kubeconfig DIR USER [GROUP...]  # a client-certificate kubeconfig; prints its path
#
# start's options (see `java -jar control-plane/target/control-plane.jar help`): --apiserver-port N,
# --etcd-port N, --crds DIR, --no-scheduler, --no-controller-manager. start, stop and status run
# the launcher in control-plane/ (Java), which the Maven build makes.
#
# The cache is ${CALICO_CACHE_DIR:-~/.cache/calico-java}/control-plane/<hash of go.mod and go.sum>,
# so a change of version builds anew and an unchanged one never does.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
module=$root/control-plane/go
cache=${CALICO_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/calico-java}

# shellcheck source=lib/go-module.sh
source "$root/scripts/lib/go-module.sh"

bin_dir() { go_module_bin_dir "$cache" control-plane "$module"; }

# The commands built, as Go packages, in the order their binaries are named.
PACKAGES=(go.etcd.io/etcd/server/v3 k8s.io/kubernetes/cmd/kube-apiserver
    k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler
    k8s.io/kubernetes/cmd/kubectl k8s.io/kubernetes/cmd/kubelet)
BINARIES=(etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet)

build() {
    local bin missing=() name
    bin=$(bin_dir)
    for name in "${BINARIES[@]}"; do
        [[ -x $bin/$name ]] || missing+=("$name")
    done
    if ((${#missing[@]} == 0)); then
        echo "control-plane: built already: $bin"
        return 0
    fi
    go_toolchain_or_explain control-plane "$module" "${missing[*]}" "$0" || return 1
    echo "control-plane: building ${missing[*]} with $(go version | cut -d' ' -f3) into $bin (a first build takes several minutes)"
    local started=$SECONDS tmp
    tmp=$(mktemp -d "$cache/control-plane/build.XXXXXX" 2>/dev/null || { mkdir -p "$cache/control-plane"; mktemp -d "$cache/control-plane/build.XXXXXX"; })
    # The release, as Kubernetes' own build stamps it (else every binary says v0.0.0-master and
    # kubectl version prints that); -trimpath and no debug symbols: smaller, reproducible binaries.
    local release major minor stamp=k8s.io/component-base/version
    release=$(sed -n 's/^[[:space:]]*k8s.io\/kubernetes \(v[0-9.]*\)$/\1/p' "$module/go.mod")
    major=${release#v}; major=${major%%.*}
    minor=${release#v"$major".}; minor=${minor%%.*}
    local ldflags="-s -w -X $stamp.gitVersion=$release -X $stamp.gitMajor=$major -X $stamp.gitMinor=$minor"
    ldflags+=" -X $stamp.gitTreeState=clean -X $stamp.buildDate=1970-01-01T00:00:00Z"
    (cd "$module" && GOFLAGS=-mod=mod go build -trimpath -ldflags="$ldflags" -o "$tmp/" "${PACKAGES[@]}")
    # go build names etcd's command after its module path (server, the /v3 dropped): name it etcd.
    mv "$tmp/server" "$tmp/etcd"
    chmod 755 "$tmp"
    mkdir -p "$(dirname "$bin")"
    rm -rf "$bin"
    mv "$tmp" "$bin"
    echo "control-plane: built in $((SECONDS - started)) s: $bin"
}

launcher() {
    local jar=$root/control-plane/target/control-plane.jar
    if [[ ! -f $jar ]]; then
        echo "control-plane: $jar is missing: build it first (mvn -pl control-plane package)" >&2
        return 1
    fi
    CALICO_CONTROL_PLANE_BIN=${CALICO_CONTROL_PLANE_BIN:-$(bin_dir)} exec java -jar "$jar" "$@"
}

case ${1:-} in
    build) build ;;
    bin-dir) bin_dir ;;
    start|stop|status|kubeconfig) launcher "$@" ;;
    *) sed -n '2,14s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
esac
