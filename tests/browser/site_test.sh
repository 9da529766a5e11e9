#!/bin/bash
# usage: site_test.sh PLAYWRIGHT_CORE_INDEX SERVE_PY BLUEPRINT DEFAULT_SPEC GOLDEN_CASES SITE_FILES...
set -euo pipefail
playwright="$1"
serve_py="$2"
blueprint="$3"
default_spec="$4"
golden_cases="$5"
shift 5
for f in "$@"; do
  if [[ "$f" == */index.html ]]; then site_dir="$(dirname "$f")"; fi
done
exec /usr/bin/node tests/browser/site_test.mjs "$playwright" "$serve_py" "$site_dir" \
  "$blueprint" "$default_spec" "$golden_cases"
