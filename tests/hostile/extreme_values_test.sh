#!/usr/bin/env bash
# The extreme-value property natively and as wasm (fixed seed), and the two
# builds' records byte for byte.
# usage: extreme_values_test.sh NATIVE WASM_JS [--powers] INPUT...
#   --powers: 2^16 ... 2^62 in every integer field instead of the extreme
#   tokens and random mutations.
set -uo pipefail
native="$1"; wasm_js="$2"; shift 2
out="${TEST_TMPDIR:-$(mktemp -d)}"
mode=(400 20261201)  # COUNT SEED of the random mutations
if [[ "${1:-}" == --powers ]]; then mode=(--powers); shift; fi
status=0
"$native" "${mode[@]}" "$@" > "$out/native.txt" 2> "$out/native.err" || status=1
node "$wasm_js" "${mode[@]}" "$@" > "$out/wasm.txt" 2> "$out/wasm.err" || status=1
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
