#!/bin/bash
# usage: serving_node_test.sh BLUEPRINT PACKAGE_FILES...
set -euo pipefail
blueprint="$1"
shift
for f in "$@"; do
  if [[ "$f" == */package.json ]]; then package_dir="$(dirname "$f")"; fi
done
exec /usr/bin/node tests/wasm_package/serving_node_test.mjs "$package_dir" "$blueprint"
