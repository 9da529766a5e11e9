#!/bin/bash
# usage: analysis_cli_test.sh BLUEPRINT PACKAGE_FILES...
set -euo pipefail
blueprint="$1"
shift
for f in "$@"; do
  if [[ "$f" == */package.json ]]; then package_dir="$(dirname "$f")"; fi
done
exec /usr/bin/node tests/cli/analysis_cli_test.mjs "$blueprint" "$package_dir"
