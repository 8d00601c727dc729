#!/usr/bin/env bash
# Installs the Debian packages the build, the tests and `./calico up` need, and nothing else.
# Idempotent: a package already installed (or a tool already on PATH, for the JDK and Maven)
# is left alone, and `apt-get update` runs once, only when something is missing.
#
# Source it and call `calico_install_deps [EXTRA_PACKAGE...]`, or run it directly:
#   scripts/lib/install-deps.sh [EXTRA_PACKAGE...]
# Needs root (or sudo) only when something is missing. Non-interactive.

# Packages every build needs. Later components add theirs here (nftables, ipset, bird2, ...).
CALICO_DEB_PACKAGES=(etcd-server etcd-client iproute2 nftables libnftables1 iptables ipset curl
    bird2 containernetworking-plugins)
# cni-plugin: a C compiler for the CNI thin client (src/main/c/calico-cni.c), built by its tests
CALICO_DEB_PACKAGES+=(gcc libc6-dev)
# ./calico up's demo: socat (pod servers and client loops), python3 (the flow sink and the flow
# reader under scripts/lib/)
CALICO_DEB_PACKAGES+=(socat python3)
# felix's e2e tests: ping with DF set and a given size (path MTU across nodes)
CALICO_DEB_PACKAGES+=(iputils-ping)
# whisker-ui: the browser its tests drive (playwright-core, never a downloaded browser)
CALICO_DEB_PACKAGES+=(chromium)
# felix's WireGuard where the kernel has no wireguard module: the userspace implementation
CALICO_DEB_PACKAGES+=(wireguard-go)
# felix's cross-node throughput benchmarks (pod to pod against node to node)
CALICO_DEB_PACKAGES+=(iperf3)
# felix's eBPF dataplane: clang compiles native-dataplane's BPF programs at build time (llvm: llvm-strip
# and friends), libbpf loads and attaches them (through JNA)
CALICO_DEB_PACKAGES+=(clang llvm libbpf-dev libbpf1)
# scripts/images.sh: the Debian base images of the chart's images
CALICO_DEB_PACKAGES+=(mmdebstrap)
# charts' real node (KubeletNode): the container runtime kubelet drives. The tests start their own
# containerd (own root, state and socket), so the packages' service is kept from starting (below).
CALICO_DEB_PACKAGES+=(containerd runc)

# Prints "name" if the Debian package is not installed.
calico_missing_package() {
    local status
    status=$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null || true)
    [[ $status == installed ]] || echo "$1"
}

# Prints the packages (one a line) that are needed and not installed yet.
calico_missing_packages() {
    local pkg
    for pkg in "${CALICO_DEB_PACKAGES[@]}" "$@"; do
        calico_missing_package "$pkg"
    done
    # The JDK and Maven may come from elsewhere (SDKMAN, a CI image): only a missing tool counts.
    if ! command -v java >/dev/null 2>&1 || ! command -v javac >/dev/null 2>&1; then
        calico_missing_package openjdk-17-jdk-headless
    fi
    if ! command -v mvn >/dev/null 2>&1; then
        calico_missing_package maven
    fi
    # whisker-ui builds with the machine's Node.js and npm (NodeSource or Debian): only a missing tool counts.
    if ! command -v node >/dev/null 2>&1; then
        calico_missing_package nodejs
    fi
    if ! command -v npm >/dev/null 2>&1; then
        calico_missing_package npm
    fi
    # kubectl may come from Google's repository (package kubectl) or Debian's kubernetes-client.
    if ! command -v kubectl >/dev/null 2>&1; then
        calico_missing_package kubernetes-client
    fi
}

calico_install_deps() {
    if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
        echo "install-deps: not a Debian system (no dpkg/apt-get); install these yourself:" \
             "${CALICO_DEB_PACKAGES[*]} $* openjdk-17-jdk-headless maven" >&2
        return 1
    fi
    local missing
    mapfile -t missing < <(calico_missing_packages "$@")
    if ((${#missing[@]} == 0)); then
        echo "install-deps: all required packages are present"
        return 0
    fi
    local -a as_root=()
    if ((EUID != 0)); then
        if command -v sudo >/dev/null 2>&1; then
            as_root=(sudo)
        else
            echo "install-deps: missing packages: ${missing[*]}; run as root or install sudo" >&2
            return 1
        fi
    fi
    echo "install-deps: installing ${missing[*]}"
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    # No service a package ships (containerd's) is started by the install: a policy-rc.d that
    # refuses every start (invoke-rc.d and deb-systemd-invoke obey it), unless one exists already.
    local policy=/usr/sbin/policy-rc.d own_policy=0
    if [[ ! -e $policy ]]; then
        printf '#!/bin/sh\nexit 101\n' | "${as_root[@]}" tee "$policy" >/dev/null
        "${as_root[@]}" chmod 755 "$policy"
        own_policy=1
    fi
    local rc=0
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" || rc=$?
    if ((own_policy)); then
        "${as_root[@]}" rm -f "$policy"
    fi
    ((rc == 0)) || return "$rc"
    # Verify rather than trust: a package that did not install is a clear error here, not a
    # confusing one in the middle of the build.
    mapfile -t missing < <(calico_missing_packages "$@")
    if ((${#missing[@]} != 0)); then
        echo "install-deps: still missing after apt-get install: ${missing[*]}" >&2
        return 1
    fi
}

# Run directly: install and exit with the result.
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
    set -euo pipefail
    calico_install_deps "$@"
fi
