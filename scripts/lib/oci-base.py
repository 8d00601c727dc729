#!/usr/bin/env python3
"""Turns root file-system trees into the base images scripts/images.sh gives Jib.

  oci-base.py layer TREE OUT.tar.gz
      TREE as one gzip'd image layer: entries sorted by name, numeric owners, no /dev nodes.
      An overlayfs upper directory is a layer too: its whiteouts (0:0 character devices) become
      `.wh.<name>` files and its opaque directories get `.wh..wh..opq`, as the OCI layer
      format says, so a layer made on top of another holds only what changed.
  oci-base.py image OUT.tar NAME:TAG PARENT.tar|- LAYER.tar.gz... -- KEY=VALUE...
      A `docker save` archive (the local base image format Jib's `tar://` reads: manifest.json,
      the config, the layers): PARENT's layers and config (or none with `-`), then the new
      layers; KEY=VALUE pairs are environment variables, `label:K=V` labels.
"""
import gzip
import hashlib
import io
import json
import os
import stat
import sys
import tarfile

EPOCH = 0  # history timestamps: the layers' own mtimes are the packages' ones


def opaque(path):
    try:
        return os.getxattr(path, "trusted.overlay.opaque", follow_symlinks=False) == b"y"
    except OSError:
        return False


def whiteout(st):
    return stat.S_ISCHR(st.st_mode) and st.st_rdev == 0


def layer(tree, out):
    """Writes TREE as a gzip'd tar; returns nothing (the image step hashes the file)."""
    with open(out, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6, mtime=0) as gz, \
            tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
        def add(rel):
            full = os.path.join(tree, rel)
            st = os.lstat(full)
            if rel.startswith("dev/"):
                return False  # the runtime mounts /dev; device nodes in a layer are refused by some
            if whiteout(st):
                head, name = os.path.split(rel)
                info = tarfile.TarInfo(os.path.join(head, ".wh." + name))
                info.mtime = EPOCH
                tar.addfile(info)
                return False
            info = tar.gettarinfo(full, arcname=rel)
            info.uname = info.gname = ""
            if info.isreg():
                with open(full, "rb") as f:
                    tar.addfile(info, f)
            else:
                tar.addfile(info)
            if info.isdir() and opaque(full):
                marker = tarfile.TarInfo(os.path.join(rel, ".wh..wh..opq"))
                marker.mtime = EPOCH
                tar.addfile(marker)
            return info.isdir()

        def walk(rel):
            full = os.path.join(tree, rel) if rel else tree
            for name in sorted(os.listdir(full)):
                child = os.path.join(rel, name) if rel else name
                if add(child):
                    walk(child)

        walk("")


def digest_of(path, opener=open):
    h = hashlib.sha256()
    with opener(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return "sha256:" + h.hexdigest()


def image(out, ref, parent, layers, settings):
    config = {"architecture": "amd64", "os": "linux", "config": {"Env": [], "Labels": {}},
              "rootfs": {"type": "layers", "diff_ids": []}, "history": []}
    parent_layers = []
    if parent != "-":
        with tarfile.open(parent) as p:
            manifest = json.load(p.extractfile("manifest.json"))[0]
            config = json.load(p.extractfile(manifest["Config"]))
            for name in manifest["Layers"]:
                parent_layers.append((name, p.extractfile(name).read()))
    env = dict(e.split("=", 1) for e in config["config"].get("Env") or [])
    labels = dict(config["config"].get("Labels") or {})
    for s in settings:
        if s.startswith("label:"):
            k, v = s[len("label:"):].split("=", 1)
            labels[k] = v
        else:
            k, v = s.split("=", 1)
            env[k] = v
    config["config"]["Env"] = [f"{k}={v}" for k, v in env.items()]
    config["config"]["Labels"] = labels
    for path in layers:
        config["rootfs"]["diff_ids"].append(digest_of(path, gzip.open))
        config["history"].append({"created": "1970-01-01T00:00:00Z", "created_by": "mmdebstrap: " + ref})
    config_bytes = json.dumps(config, sort_keys=True).encode()
    config_name = hashlib.sha256(config_bytes).hexdigest() + ".json"
    names = [n for n, _ in parent_layers]
    with tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as tar:
        def put(name, data=None, path=None):
            if path is not None:
                tar.add(path, arcname=name)
                return
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))

        for name, data in parent_layers:
            put(name, data)
        for path in layers:
            name = digest_of(path)[len("sha256:"):] + ".tar.gz"
            names.append(name)
            put(name, path=path)
        put(config_name, config_bytes)
        manifest = [{"Config": config_name, "RepoTags": [ref], "Layers": names}]
        put("manifest.json", json.dumps(manifest).encode())


def main(argv):
    if len(argv) == 3 and argv[0] == "layer":
        layer(argv[1], argv[2])
    elif len(argv) >= 4 and argv[0] == "image" and "--" in argv:
        cut = argv.index("--")
        image(argv[1], argv[2], argv[3], argv[4:cut], argv[cut + 1:])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
