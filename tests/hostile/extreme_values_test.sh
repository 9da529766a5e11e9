#!/usr/bin/env bash
# The extreme-value property natively and as wasm (fixed seed), and the two
# builds' records byte for byte.
# usage: extreme_values_test.sh NATIVE WASM_JS INPUT...
set -uo pipefail
native="$1"; wasm_js="$2"; shift 2
out="${TEST_TMPDIR:-$(mktemp -d)}"
count=400; seed=20261201
status=0
"$native" "$count" "$seed" "$@" > "$out/native.txt" 2> "$out/native.err" || status=1
node "$wasm_js" "$count" "$seed" "$@" > "$out/wasm.txt" 2> "$out/wasm.err" || status=1
head -n 40 "$out/native.err" "$out/wasm.err" >&2
tail -n 1 "$out/native.txt"
if ! cmp -s "$out/native.txt" "$out/wasm.txt"; then
  echo "native and wasm records differ:" >&2
  diff "$out/native.txt" "$out/wasm.txt" | head -20 >&2
  status=1
fi
accepted=$(tail -n 1 "$out/native.txt" | awk '{print $4}')
if [[ -z "$accepted" || "$accepted" -lt 100 ]]; then
  echo "only ${accepted:-0} mutated specs were accepted: the draw must reach the analysis" >&2
  status=1
fi
exit "$status"
