#!/usr/bin/env bash
# helm, built from the Go module pinned in charts/go/go.mod (never a downloaded binary).
#
#   scripts/helm.sh build      # build once per machine (cached; prints the binary's path)
#   scripts/helm.sh bin-dir    # where the binary of the pinned version lives
#   scripts/helm.sh ARGS...    # run that helm (built first if missing)
#
# The cache is ${CALICO_CACHE_DIR:-~/.cache/calico-java}/helm/<hash of go.mod and go.sum>, so a
# change of version builds anew and an unchanged one never does.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
module=$root/charts/go
cache=${CALICO_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/calico-java}

# shellcheck source=lib/go-module.sh
source "$root/scripts/lib/go-module.sh"

bin_dir() { go_module_bin_dir "$cache" helm "$module"; }

build() {
    local bin
    bin=$(bin_dir)
    if [[ -x $bin/helm ]]; then
        echo "helm: built already: $bin/helm"
        return 0
    fi
    go_toolchain_or_explain helm "$module" helm "$0" || return 1
    local release started=$SECONDS tmp
    release=$(sed -n 's/^require helm.sh\/helm\/v4 \(v[0-9.]*\)$/\1/p' "$module/go.mod")
    echo "helm: building $release with $(go version | cut -d' ' -f3) into $bin" >&2
    mkdir -p "$cache/helm"
    tmp=$(mktemp -d "$cache/helm/build.XXXXXX")
    # The release stamped as helm's own Makefile does (else `helm version` says v4.3 only).
    (cd "$module" && GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath \
        -ldflags="-s -w -X helm.sh/helm/v4/internal/version.version=$release -X helm.sh/helm/v4/internal/version.gitTreeState=clean" \
        -o "$tmp/helm" helm.sh/helm/v4/cmd/helm)
    chmod 755 "$tmp"
    mkdir -p "$(dirname "$bin")"
    rm -rf "$bin"
    mv "$tmp" "$bin"
    echo "helm: built in $((SECONDS - started)) s: $bin/helm"
}

case ${1:-} in
    build) build ;;
    bin-dir) bin_dir ;;
    ''|-h|--help) sed -n '2,9s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
    *) [[ -x $(bin_dir)/helm ]] || build >&2; exec "$(bin_dir)/helm" "$@" ;;
esac
