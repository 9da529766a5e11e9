#!/bin/bash
# usage: package_test.sh BLUEPRINT SPEC PACKAGE_FILES...
set -euo pipefail
blueprint="$1"
spec="$2"
shift 2
for f in "$@"; do
  if [[ "$f" == */package.json ]]; then package_dir="$(dirname "$f")"; fi
done
exec /usr/bin/node tests/wasm_package/package_test.mjs "$package_dir" "$blueprint" "$spec"
