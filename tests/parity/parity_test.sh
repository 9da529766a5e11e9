#!/bin/bash
# usage: parity_test.sh NATIVE_BINARY WASM_JS
# Runs the native and the wasm (node) build of parity_main and fails unless their
# outputs are byte-identical. Both outputs are kept as undeclared test outputs.
set -euo pipefail
native="$1"
wasm_js="$2"
dir="${TEST_UNDECLARED_OUTPUTS_DIR:-$(mktemp -d)}"

"$native" > "$dir/native.txt"
/usr/bin/node "$wasm_js" > "$dir/wasm.txt"

lines="$(wc -l < "$dir/native.txt")"
if [[ "$lines" -lt 100 ]]; then
  echo "FAIL: native report has only $lines lines" >&2
  exit 1
fi
if ! cmp -s "$dir/native.txt" "$dir/wasm.txt"; then
  echo "FAIL: native and wasm reports differ:" >&2
  diff -u "$dir/native.txt" "$dir/wasm.txt" | head -50 >&2 || true
  exit 1
fi
echo "PASS: native and wasm reports are byte-identical ($lines lines," \
  "sha256 $(sha256sum < "$dir/native.txt" | cut -c1-16))"
