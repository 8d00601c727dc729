#!/usr/bin/env python3
"""Reads and extends the OCI image archives Jib writes (scripts/images.sh; oci-base.py makes the bases).

  oci-image.py unpack IMAGE.tar DIR
      The image's file system in DIR: its layers in order, whiteouts applied (files keep their mtimes,
      which a class archive checks).
  oci-image.py config IMAGE.tar
      The image's Entrypoint, then its Env, one word a line, the two parts separated by a line "--".
  oci-image.py appjar DIR
      DIR/app/app.jar from Jib's /app/resources and /app/classes (resources first, as Jib's class
      path has them), and DIR/app/appcds-classpath: Jib's class path with the two directories
      replaced by that jar. A JDK 17 class archive refuses a non-empty directory on the class path.
  oci-image.py append IMAGE.tar LAYER.tar.gz FROM=TO... [-- FLAG...]
      IMAGE.tar rewritten with LAYER as one more layer; each Entrypoint word FROM replaced by TO, and
      FLAGs inserted after the Entrypoint's first word (java).
"""
import gzip
import hashlib
import io
import json
import os
import shutil
import sys
import tarfile
import zipfile

LAYER_TYPE = "application/vnd.oci.image.layer.v1.tar+gzip"
JIB_MTIME = 1  # Jib's file times (1970-01-01T00:00:01Z): the jar made here gets the same


def blob_name(digest):
    return "blobs/sha256/" + digest.split(":", 1)[1]


def read(image):
    """{return} (every member's bytes by name, the manifest, the config)."""
    with tarfile.open(image) as t:
        files = {m.name: t.extractfile(m).read() for m in t.getmembers() if m.isfile()}
    index = json.loads(files["index.json"])
    manifest = json.loads(files[blob_name(index["manifests"][0]["digest"])])
    config = json.loads(files[blob_name(manifest["config"]["digest"])])
    return files, index, manifest, config


def inside(root, path):
    real = os.path.realpath(path)
    return real == root or real.startswith(root + os.sep)


def unpack(image, out):
    files, _, manifest, _ = read(image)
    root = os.path.realpath(out)
    os.makedirs(root, exist_ok=True)
    for layer in manifest["layers"]:
        with tarfile.open(fileobj=io.BytesIO(files[blob_name(layer["digest"])]), mode="r:gz") as t:
            for m in t.getmembers():
                rel = m.name[2:] if m.name.startswith("./") else m.name.lstrip("/")
                head, name = os.path.split(rel)
                target = os.path.join(root, head, name)
                if not inside(root, os.path.join(root, head)):
                    raise SystemExit(f"unpack: {m.name} leaves the root through a link")
                if name == ".wh..wh..opq":
                    d = os.path.join(root, head)
                    for child in os.listdir(d):
                        p = os.path.join(d, child)
                        shutil.rmtree(p) if os.path.isdir(p) and not os.path.islink(p) else os.remove(p)
                elif name.startswith(".wh."):
                    p = os.path.join(root, head, name[len(".wh."):])
                    if os.path.isdir(p) and not os.path.islink(p):
                        shutil.rmtree(p)
                    elif os.path.lexists(p):
                        os.remove(p)
                elif not (m.isdir() and os.path.isdir(target)):
                    if os.path.lexists(target) and not os.path.isdir(target):
                        os.remove(target)
                    t.extract(m, root, numeric_owner=True)


def config(image):
    _, _, _, c = read(image)
    for word in c["config"].get("Entrypoint") or []:
        print(word)
    print("--")
    for e in c["config"].get("Env") or []:
        print(e)


def appjar(root):
    app = os.path.join(root, "app")
    jar = os.path.join(app, "app.jar")
    seen = set()
    with zipfile.ZipFile(jar, "w", zipfile.ZIP_DEFLATED) as z:
        for part in ("resources", "classes"):
            base = os.path.join(app, part)
            for d, dirs, names in os.walk(base):
                dirs.sort()
                for n in sorted(names):
                    rel = os.path.relpath(os.path.join(d, n), base)
                    if rel not in seen:
                        seen.add(rel)
                        info = zipfile.ZipInfo(rel, date_time=(1980, 1, 1, 0, 0, 0))
                        info.compress_type = zipfile.ZIP_DEFLATED
                        with open(os.path.join(d, n), "rb") as f:
                            z.writestr(info, f.read())
    os.utime(jar, (JIB_MTIME, JIB_MTIME))
    with open(os.path.join(app, "jib-classpath-file")) as f:
        entries = f.read().strip().split(":")
    cp = ["/app/app.jar"] + [e for e in entries if e not in ("/app/resources", "/app/classes")]
    path = os.path.join(app, "appcds-classpath")
    with open(path, "w") as f:
        f.write(":".join(cp) + "\n")
    os.utime(path, (JIB_MTIME, JIB_MTIME))


def digest(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


def append(image, layer_path, replacements, flags):
    files, index, manifest, cfg = read(image)
    with open(layer_path, "rb") as f:
        layer = f.read()
    entry = [dict(replacements).get(w, w) for w in cfg["config"]["Entrypoint"]]
    cfg["config"]["Entrypoint"] = entry[:1] + flags + entry[1:]
    cfg["rootfs"]["diff_ids"].append(digest(gzip.decompress(layer)))
    cfg.setdefault("history", []).append({"created": "1970-01-01T00:00:01Z",
                                          "created_by": "scripts/images.sh: the AppCDS archive of a training run"})
    config_bytes = json.dumps(cfg, sort_keys=True).encode()
    manifest["config"] = dict(manifest["config"], digest=digest(config_bytes), size=len(config_bytes))
    manifest["layers"].append({"mediaType": LAYER_TYPE, "digest": digest(layer), "size": len(layer)})
    manifest_bytes = json.dumps(manifest).encode()
    old = {blob_name(index["manifests"][0]["digest"]), blob_name(json.loads(
        files[blob_name(index["manifests"][0]["digest"])])["config"]["digest"])}
    index["manifests"][0] = dict(index["manifests"][0], digest=digest(manifest_bytes), size=len(manifest_bytes))
    new = {blob_name(digest(layer)): layer, blob_name(digest(config_bytes)): config_bytes,
           blob_name(digest(manifest_bytes)): manifest_bytes, "index.json": json.dumps(index).encode()}
    tmp = image + ".tmp"
    with tarfile.open(tmp, "w", format=tarfile.PAX_FORMAT) as t:
        for name, data in list(files.items()) + list(new.items()):
            if name in old or (name in new and data is not new[name]):
                continue
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = JIB_MTIME
            t.addfile(info, io.BytesIO(data))
    os.replace(tmp, image)


def main(argv):
    if len(argv) == 3 and argv[0] == "unpack":
        unpack(argv[1], argv[2])
    elif len(argv) == 2 and argv[0] == "config":
        config(argv[1])
    elif len(argv) == 2 and argv[0] == "appjar":
        appjar(argv[1])
    elif len(argv) >= 3 and argv[0] == "append":
        rest = argv[3:]
        cut = rest.index("--") if "--" in rest else len(rest)
        append(argv[1], argv[2], [r.split("=", 1) for r in rest[:cut]], rest[cut + 1:])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
