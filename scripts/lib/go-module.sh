# Shared by the scripts that build commands from a pinned Go module of ours (control-plane.sh,
# helm.sh): where the binaries of one go.mod/go.sum live, and the check for the Go toolchain.
# Source it; it defines functions only.

# go_module_bin_dir CACHE NAME MODULE_DIR: CACHE/NAME/<hash of go.mod and go.sum>/bin, so a change
# of version builds anew and an unchanged one never does.
go_module_bin_dir() {
    local key
    key=$(cat "$3/go.mod" "$3/go.sum" | sha256sum | cut -c1-16)
    echo "$1/$2/$key/bin"
}

# go_toolchain_or_explain NAME MODULE_DIR WHAT SCRIPT: true when `go` is on the PATH; else says
# what needs it and how to get it, and fails.
go_toolchain_or_explain() {
    command -v go >/dev/null 2>&1 && return 0
    echo "$1: the Go toolchain is needed to build $3 (go $(sed -n 's/^go //p' "$2/go.mod") or newer):" \
         "install it from https://go.dev/dl/ or Debian's golang package, then run $4 build again" >&2
    return 1
}
