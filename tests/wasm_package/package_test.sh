#!/bin/bash
# usage: package_test.sh DIGEST_DEMO_BINARY PACKAGE_FILES...
set -euo pipefail
digest_demo="$1"
shift
for f in "$@"; do
  if [[ "$f" == */package.json ]]; then package_dir="$(dirname "$f")"; fi
done
exec /usr/bin/node tests/wasm_package/package_test.mjs "$package_dir" "$("$digest_demo")"
