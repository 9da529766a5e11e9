#!/bin/bash
# usage: golden_node_test.sh TESTING_MODULE_FILES...
# (//wasm:blueprinting_testing: blueprinting_testing.mjs and .wasm)
set -euo pipefail
for f in "$@"; do
  if [[ "$f" == *.mjs ]]; then module="$f"; fi
done
exec /usr/bin/node tests/wasm_package/golden_node_test.mjs "$module" golden
