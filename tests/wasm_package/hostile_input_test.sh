#!/bin/bash
# usage: hostile_input_test.sh BLUEPRINT TESTING_MODULE_FILES... PACKAGE_FILES...
set -euo pipefail
blueprint="$1"
shift
for f in "$@"; do
  if [[ "$f" == */package.json ]]; then package_dir="$(dirname "$f")"; fi
  if [[ "$f" == */blueprinting_testing.mjs ]]; then testing_module="$f"; fi
done
# The 320 MB string needs a bigger heap than node's default on small machines.
exec /usr/bin/node --max-old-space-size=4096 tests/wasm_package/hostile_input_test.mjs \
  "$blueprint" "$package_dir" "$testing_module"
