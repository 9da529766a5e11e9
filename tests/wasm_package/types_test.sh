#!/bin/bash
# usage: types_test.sh PACKAGE_FILES...
set -euo pipefail
for f in "$@"; do
  if [[ "$f" == */package.json ]]; then package_dir="$(dirname "$f")"; fi
done
exec /usr/bin/node tests/wasm_package/types_test.mjs "$package_dir"
