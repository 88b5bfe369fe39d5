#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Makes an OCI image layout archive (what `ctr images import` reads) from a
root file system tarball, with no registry: one uncompressed layer, a config
(PATH=/bin, the given entrypoint) and a manifest, named NAME in index.json
(io.containerd.image.name, org.opencontainers.image.ref.name).

Usage: oci_archive.py LAYER.tar NAME OUT.tar [ENTRYPOINT...]
"""
import hashlib
import io
import json
import sys
import tarfile


def blob(tar, data):
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    info = tarfile.TarInfo("blobs/sha256/" + digest[7:])
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))
    return {"digest": digest, "size": len(data)}


def main():
    layer_path, name, out = sys.argv[1:4]
    entrypoint = sys.argv[4:]
    with open(layer_path, "rb") as f:
        layer = f.read()
    config = {
        "architecture": "amd64", "os": "linux",
        "config": {"Env": ["PATH=/bin"], "Entrypoint": entrypoint or None},
        "rootfs": {"type": "layers", "diff_ids": ["sha256:" + hashlib.sha256(layer).hexdigest()]},
    }
    with tarfile.open(out, "w") as tar:
        cfg = dict(blob(tar, json.dumps(config).encode()),
                   mediaType="application/vnd.oci.image.config.v1+json")
        lay = dict(blob(tar, layer), mediaType="application/vnd.oci.image.layer.v1.tar")
        manifest = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                    "config": cfg, "layers": [lay]}
        man = dict(blob(tar, json.dumps(manifest).encode()),
                   mediaType="application/vnd.oci.image.manifest.v1+json")
        man["annotations"] = {"io.containerd.image.name": name,
                              "org.opencontainers.image.ref.name": name.rsplit(":", 1)[-1]}
        index = {"schemaVersion": 2, "manifests": [man]}
        for fname, data in (("oci-layout", b'{"imageLayoutVersion":"1.0.0"}'),
                            ("index.json", json.dumps(index).encode())):
            info = tarfile.TarInfo(fname)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


if __name__ == "__main__":
    main()
