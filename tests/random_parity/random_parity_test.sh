#!/usr/bin/env bash
# Native and wasm builds of random_mappings must print the same bytes.
# usage: random_parity_test.sh NATIVE_BINARY WASM_JS
set -euo pipefail
native="$1"; wasm_js="$2"
out="${TEST_TMPDIR:-$(mktemp -d)}"
"$native" 300 > "$out/native.txt"
node "$wasm_js" 300 > "$out/wasm.txt"
tail -n 1 "$out/native.txt"
if ! cmp -s "$out/native.txt" "$out/wasm.txt"; then
  echo "native and wasm differ:" >&2
  diff "$out/native.txt" "$out/wasm.txt" | head -40 >&2
  exit 1
fi
accepted=$(tail -n 1 "$out/native.txt" | awk '{print $2}')
# The draw must exercise the pipeline, not only the checker.
if [[ "$accepted" -lt 30 ]]; then
  echo "only $accepted random mappings were accepted; widen the draw" >&2
  exit 1
fi
echo "native == wasm for $(wc -l < "$out/native.txt") lines"
