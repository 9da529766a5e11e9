#!/bin/bash
# Bazel -> Debian emscripten 3.1.6 wrapper, used to compile AND link.
#  * Pins the environment emcc needs: Bazel actions may see another python3, and
#    node does not search Debian's /usr/share/nodejs (node-acorn, which emcc's JS
#    optimizer needs at link time).
#  * Drops -pthread: abseil and re2 add it for every non-WASI target, and it would
#    force a threaded module that needs SharedArrayBuffer.
#  * Uses emcc for C sources (em++ would compile them as C++).
#  * Link step: a cc_binary declares one output, but emcc writes NAME.js (or .mjs)
#    plus NAME.wasm. For a cc_binary named NAME.tar, link into a temporary folder
#    and pack both files into a deterministic tar; //tools/emscripten:wasm.bzl
#    unpacks it. Any other output name goes to em++ unchanged (link those with
#    -sSINGLE_FILE=1, or the .wasm is lost).
# The toolchain does not use param files, so every argument arrives on argv.
set -euo pipefail
export EMSDK_PYTHON="${EMSDK_PYTHON:-/usr/bin/python3}"
export NODE_PATH="/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}"

args=()
out=""
is_compile=0
is_c=0
ext=js
prev=""
for a in "$@"; do
  [[ "$a" == "-pthread" ]] && continue
  case "$a" in
    -c | -S | -E) is_compile=1 ;;
    -sEXPORT_ES6=1 | -sEXPORT_ES6) ext=mjs ;;
    *.c) is_c=1 ;;
  esac
  [[ "$prev" == "-o" ]] && out="$a"
  prev="$a"
  args+=("$a")
done

if ((is_compile)); then
  if ((is_c)); then exec /usr/bin/emcc "${args[@]}"; fi
  exec /usr/bin/em++ "${args[@]}"
fi
if [[ "$out" != *.tar ]]; then
  exec /usr/bin/em++ "${args[@]}"
fi

tmp="$(mktemp -d "${TMPDIR:-/tmp}/emlink.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
base="$(basename "$out" .tar)"
link_args=()
prev=""
for a in "${args[@]}"; do
  if [[ "$prev" == "-o" ]]; then link_args+=("$tmp/$base.$ext"); else link_args+=("$a"); fi
  prev="$a"
done
/usr/bin/em++ "${link_args[@]}"
tar --sort=name --mtime='@0' --owner=0 --group=0 --numeric-owner -cf "$out" -C "$tmp" .
