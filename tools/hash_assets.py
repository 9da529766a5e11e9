#!/usr/bin/env python3
"""Copies a site's assets to content-hashed names and writes their manifest.

usage: hash_assets.py OUT_DIR MANIFEST [--unhashed PREFIX]... NAME=PATH...

Each NAME=PATH (NAME the asset's path in the site, e.g. elements.js) is copied
to OUT_DIR/STEM.HASH.EXT, HASH the first 12 hex digits of the SHA-256 of what
is copied. Assets are taken in the order given: each one's text has the names
of the assets before it (as './NAME' or 'NAME' in quotes) replaced by their
hashed names first, so that the hashed elements.js imports the hashed modules
and a hashed module loads its hashed .wasm. Give dependencies first. A quoted
'./PREFIX...' of an --unhashed PREFIX (a folder of the site, e.g.
core-presets/) becomes '../PREFIX...': OUT_DIR is assets/, one level down.
MANIFEST gets {"NAME": "assets/STEM.HASH.EXT", ...} (paths relative to the
site). Everything is relative: the site works below any path.
"""

import hashlib
import json
import os
import re
import sys

TEXT_SUFFIXES = (".js", ".mjs", ".css", ".html", ".json")


def hashed_name(name, data):
    stem, ext = os.path.splitext(os.path.basename(name))
    digest = hashlib.sha256(data).hexdigest()[:12]
    return f"{stem}.{digest}{ext}"


def rewrite(data, renames, unhashed):
    """`data` with every quoted reference to a renamed asset replaced."""
    text = data.decode("utf-8")
    for prefix in unhashed:
        text = re.sub(r"(['\"])\./" + re.escape(prefix), r"\1../" + prefix, text)
    for name, new in renames.items():
        base = re.escape(os.path.basename(name))
        text = re.sub(r"(['\"])(\./)?" + base + r"\1",
                      lambda m, new=new: f"{m.group(1)}{m.group(2) or ''}{new}{m.group(1)}",
                      text)
    return text.encode("utf-8")


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    out_dir, manifest_path, rest = argv[0], argv[1], argv[2:]
    unhashed = []
    while rest and rest[0] == "--unhashed":
        unhashed.append(rest[1])
        rest = rest[2:]
    pairs = rest
    os.makedirs(out_dir, exist_ok=True)
    renames = {}  # asset name -> hashed file name (same folder: assets/)
    manifest = {}
    for pair in pairs:
        name, _, path = pair.partition("=")
        with open(path, "rb") as f:
            data = f.read()
        if name.endswith(TEXT_SUFFIXES):
            data = rewrite(data, renames, unhashed)
        new = hashed_name(name, data)
        with open(os.path.join(out_dir, new), "wb") as f:
            f.write(data)
        renames[name] = new
        manifest[name] = "assets/" + new
    with open(manifest_path, "w") as f:
        json.dump(manifest, f, indent=2, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1:])
