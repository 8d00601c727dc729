#!/usr/bin/env bash
# The chart's images, built without a registry: Debian base images made by mmdebstrap, then one
# image per service by Jib (Maven profile `images`), written as OCI archives.
#
#   scripts/images.sh base               # the base images (cached; prints their directory)
#   scripts/images.sh build [MVN_ARG...] # base + every service image into target/images/<name>.tar
#                                        # (packages the service modules against the installed
#                                        # upstream modules: `mvn install` first, or pass -am), each
#                                        # with its AppCDS archive (profile images' package phase
#                                        # runs appcds after Jib, in any build of the images)
#   scripts/images.sh appcds IMAGE.tar   # trains IMAGE's class archive in its own root and adds it
#   scripts/images.sh maven-args         # base, then the -D arguments profile images needs (one a
#                                        # line): `mvn -Pimages verify $(scripts/images.sh maven-args)`
#                                        # builds the images in the reactor and runs ChartImagesTest
#   scripts/images.sh out-dir            # where the service images are written
#
# Bases, in ${CALICO_CACHE_DIR:-~/.cache/calico-java}/images/<key>/ (key: hash of the package
# lists, the mmdebstrap options and scripts/lib/oci-base.py, so a change builds anew):
#   jre-base.tar   Debian bookworm, essential packages + openjdk-17-jre-headless, ca-certificates
#   node-base.tar  jre-base + one layer: what felix, confd/BIRD and the CNI installer exec
# Both are `docker save` archives, the local base image format Jib's `tar://` reads.
# Needs root (mmdebstrap's root mode, an overlay mount) and Debian's mirror, the first time only.
# AppCDS (issue 30): Jib runs nothing, so each image of a JVM service gets its class archive after
# Jib: a training run of the image's own entrypoint (its JVM, its jars with Jib's file times) in its
# unpacked root (chroot; new mount, network and pid namespaces, so nothing reaches the host: only
# the namespace's own loopback), stopped at context refresh (Spring) or once ready (a plain main:
# confd, the CNI daemon, felix; calico-health's TrainingRun), and the archive added as one more layer
# (scripts/lib/oci-image.py).
# Needs root (chroot, namespaces).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${CALICO_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/calico-java}
out_dir=$root/target/images
suite=bookworm

# The packages of each base. The node's: felix's iptables/ip6tables-{nft,legacy}-restore and ipset
# (its iptables dataplane; nftables it programs over netlink), `ip` for the operator, BIRD 2 and
# birdc (confd validates with `bird -p`, the chart's bird container runs it), libbpf 1 (felix's
# eBPF dataplane loads libbpf.so.1 through JNA); /bin/sh, cp and base64 of the CNI install
# script are essential packages.
jre_packages=(openjdk-17-jre-headless ca-certificates)
node_packages=(nftables iptables ipset iproute2 bird2 libbpf1)
# Small bases: no documentation, manuals or translations; merged /usr without the usrmerge
# package (which pulls perl in). openjdk's postinst needs /usr/share/man/man1 to exist.
mmdebstrap_options=(--mode=root --format=directory --skip=check/empty
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*'
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright'
    --dpkgopt='path-exclude=/usr/share/info/*'
    --essential-hook='mkdir -p "$1/usr/share/man/man1"'
    --customize-hook='rm -f "$1/etc/resolv.conf" "$1/etc/hostname"; rm -rf "$1/usr/share/man"')
java_home=/usr/lib/jvm/java-17-openjdk-amd64

base_key() {
    { printf '%s\n' "$suite" "${jre_packages[@]}" -- "${node_packages[@]}" -- "${mmdebstrap_options[@]}"
      cat "$root/scripts/lib/oci-base.py"; } | sha256sum | cut -c1-16
}

base_dir() { echo "$cache/images/$(base_key)"; }

# The service images and the chart's tag (its appVersion): one place says what the chart pulls.
app_version() { sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$root/charts/calico/Chart.yaml"; }

# mmdebstrap with the options above; its chatter goes to a log shown only when it fails.
bootstrap() {
    mmdebstrap "${mmdebstrap_options[@]}" "$@" >"$work/mmdebstrap.log" 2>&1 && return 0
    tail -40 "$work/mmdebstrap.log" >&2
    echo "images: mmdebstrap failed (above: the end of its log)" >&2
    return 1
}

base() {
    local dir key
    key=$(base_key)
    dir=$(base_dir)
    if [[ -f $dir/node-base.tar ]]; then
        echo "images: base built already: $dir" >&2
        echo "$dir"
        return 0
    fi
    if ! command -v mmdebstrap >/dev/null 2>&1; then
        echo "images: mmdebstrap is needed for the base images: scripts/lib/install-deps.sh installs it" >&2
        return 1
    fi
    local started=$SECONDS work
    mkdir -p "$cache/images"
    work=$(mktemp -d "$cache/images/build.XXXXXX")
    # On any exit, a failed step included (set -e leaves without running a RETURN trap, and an
    # overlay left mounted keeps the scratch tree); expanded now: $work is local.
    # shellcheck disable=SC2064
    trap "umount '$work/node' 2>/dev/null || true; rm -rf '$work'" EXIT
    local labels=(label:org.opencontainers.image.vendor=calico-java
                  "label:org.opencontainers.image.version=$suite-$key")
    echo "images: bootstrapping the JRE base ($suite: ${jre_packages[*]})" >&2
    mkdir "$work/jre"
    bootstrap --variant=essential --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
        --include="$(IFS=,; echo "${jre_packages[*]}")" "$suite" "$work/jre"
    python3 "$root/scripts/lib/oci-base.py" layer "$work/jre" "$work/jre.tar.gz"
    python3 "$root/scripts/lib/oci-base.py" image "$work/jre-base.tar" "calico-java/jre-base:$key" - \
        "$work/jre.tar.gz" -- "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
        "JAVA_HOME=$java_home" "${labels[@]}" "label:org.opencontainers.image.title=jre-base"
    # The node's packages installed over the JRE tree through an overlay: the upper directory is
    # exactly the new layer (whiteouts included). /dev is in no layer, and mmdebstrap fills it anew.
    find "$work/jre/dev" -mindepth 1 -delete
    echo "images: adding the node's layer (${node_packages[*]})" >&2
    mkdir "$work/upper" "$work/overlay-work" "$work/node"
    mount -t overlay overlay -o "lowerdir=$work/jre,upperdir=$work/upper,workdir=$work/overlay-work" "$work/node"
    bootstrap --variant=custom --include="$(IFS=,; echo "${node_packages[*]}")" "$suite" "$work/node"
    umount "$work/node"
    python3 "$root/scripts/lib/oci-base.py" layer "$work/upper" "$work/node.tar.gz"
    python3 "$root/scripts/lib/oci-base.py" image "$work/node-base.tar" "calico-java/node-base:$key" \
        "$work/jre-base.tar" "$work/node.tar.gz" -- "${labels[@]}" "label:org.opencontainers.image.title=node-base"
    mkdir -p "$dir"
    mv "$work/jre-base.tar" "$work/node-base.tar" "$dir/"
    echo "images: base built in $((SECONDS - started)) s: $dir ($(du -h "$dir/jre-base.tar" | cut -f1) JRE," \
         "$(du -h "$dir/node-base.tar" | cut -f1) node)" >&2
    echo "$dir"
}

# The modules with an image (their poms set calico.image.*), in build order.
service_modules=(felix-service typha-service goldmane-service whisker-backend cni-plugin confd-service
                 node-startup apiserver-service controllers-service)

# The images with an AppCDS archive, and what each needs set to reach the end of its training run: a Spring
# context's refresh (nothing is contacted before it), or a plain main's ready moment with no datastore but its
# own memory one: confd's first configuration pass (this node is in none: refused; no BIRD runs), the CNI
# daemon's socket bound (the chart's args; the usage endpoint's datastore opened), felix ready (the memory
# store holding felix-training.yaml: datastore ready, in sync, the chart's nftables dataplane applied in the
# run's own network namespace).
declare -A appcds_env=(
    [typha]="" [goldmane]="" [whisker]="WHISKER_AUTH_TOKEN_FILE=/etc/os-release" [node-startup]="NODENAME=appcds-training"
    [apiserver]="" [kube-controllers]=""
    [confd]="DATASTORE_TYPE=memory NODENAME=appcds-training CONFD_HEALTHHOST=127.0.0.1 CONFD_ADMINHOST=127.0.0.1"
    [cni-plugin]="DATASTORE_TYPE=memory"
    [felix]="DATASTORE_TYPE=memory CALICO_MEMORY_MANIFEST=/tmp/appcds-training.yaml FELIX_FELIXHOSTNAME=appcds-training FELIX_NFTABLESMODE=Enabled")
# The arguments of a training run, where the image's command has some (the chart's).
declare -A appcds_args=([cni-plugin]="daemon /tmp/appcds-training.sock")
# A file a training run reads, copied to /tmp/appcds-training.yaml in its root (not into the image).
declare -A appcds_files=([felix]="$root/scripts/lib/felix-training.yaml")

# appcds IMAGE.tar: the image's class archive, trained in its own root, as one more layer; the image
# runs on /app/app.jar (Jib's classes and resources as a jar: JDK 17 archives from no directory) with
# -XX:SharedArchiveFile. A failed training leaves the image as Jib made it, and says so.
appcds() {
    local image=$1 name work env cmd=() word flags
    name=$(basename "$image" .tar)
    [[ -v appcds_env[$name] ]] || return 0
    work=$(mktemp -d "${TMPDIR:-/tmp}/appcds-$name.XXXXXX")
    # shellcheck disable=SC2064
    trap "rm -rf '$work'" RETURN
    python3 "$root/scripts/lib/oci-image.py" unpack "$image" "$work/root"
    python3 "$root/scripts/lib/oci-image.py" appjar "$work/root"
    if [[ -v appcds_files[$name] ]]; then
        mkdir -p "$work/root/tmp" && cp "${appcds_files[$name]}" "$work/root/tmp/appcds-training.yaml"
    fi
    env=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)
    local part=entrypoint
    while IFS= read -r word; do
        if [[ $word == -- ]]; then part=env; continue; fi
        if [[ $part == entrypoint ]]; then cmd+=("${word/#@\/app\/jib-classpath-file/@/app/appcds-classpath}")
        else env+=("$word"); fi
    done < <(python3 "$root/scripts/lib/oci-image.py" config "$image")
    # shellcheck disable=SC2206
    env+=(${appcds_env[$name]})
    # Both ends: each kind of main honours its own (launcher/: AppCds does the same).
    flags=(-XX:ArchiveClassesAtExit=/app/appcds.jsa -Dspring.context.exit=onRefresh -Dcalico.exit=onReady)
    local args=()
    # shellcheck disable=SC2206
    args=(${appcds_args[$name]:-})
    # The plain mains' servers bind 127.0.0.1: the new network namespace's loopback, brought up by the host's ip.
    if ! unshare --mount --net --pid --fork sh -c 'ip link set lo up && mount -t proc proc "$0/proc" && mount --rbind /dev "$0/dev" && exec chroot "$0" "$@"' \
            "$work/root" env -i "${env[@]}" "${cmd[0]}" "${flags[@]}" "${cmd[@]:1}" "${args[@]}" >"$work/training.log" 2>&1 \
            || [[ ! -s $work/root/app/appcds.jsa ]]; then
        grep -v '\]\[cds\]' "$work/training.log" | tail -20 >&2
        echo "images: $name: the AppCDS training run failed (above: its log's end, without CDS's warnings); the image has no archive" >&2
        return 0
    fi
    mkdir -p "$work/layer/app"
    cp -p "$work/root/app/appcds.jsa" "$work/root/app/app.jar" "$work/root/app/appcds-classpath" "$work/layer/app/"
    python3 "$root/scripts/lib/oci-base.py" layer "$work/layer" "$work/appcds.tar.gz"
    python3 "$root/scripts/lib/oci-image.py" append "$image" "$work/appcds.tar.gz" \
        @/app/jib-classpath-file=@/app/appcds-classpath -- -XX:SharedArchiveFile=/app/appcds.jsa -Xshare:auto
    echo "images: $name: AppCDS archive of $(du -h "$work/root/app/appcds.jsa" | cut -f1) added" >&2
}

maven_args() {
    local dir
    dir=$(base)
    mkdir -p "$out_dir"
    printf '%s\n' "-Dcalico.images.base=$dir" "-Dcalico.images.out=$out_dir" "-Dcalico.images.tag=$(app_version)" \
        "-Dcalico.images.revision=$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)"
}

build() {
    local started=$SECONDS modules args
    mapfile -t args < <(maven_args)
    ((${#args[@]} == 4)) || return 1
    rm -f "$out_dir"/*.tar
    modules=$(IFS=,; echo "${service_modules[*]}")
    # Each module's package phase adds its image's class archive after Jib (calico-parent, profile images).
    (cd "$root" && mvn -B -q -Pimages -DskipTests -pl "$modules" package "${args[@]}" "$@")
    echo "images: built in $((SECONDS - started)) s:" >&2
    du -h "$out_dir"/*.tar >&2
}

case ${1:-} in
    base) base ;;
    build) shift; build "$@" ;;
    maven-args) maven_args ;;
    appcds) appcds "$2" ;;
    out-dir) echo "$out_dir" ;;
    *) sed -n '2,26s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
esac
