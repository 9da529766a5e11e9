#!/bin/bash
# usage: embed_test.sh PLAYWRIGHT_CORE_INDEX SERVE_PY BLUEPRINT DEFAULT_SPEC SITE_FILES...
set -euo pipefail
playwright="$1"
serve_py="$2"
blueprint="$3"
default_spec="$4"
shift 4
for f in "$@"; do
  if [[ "$f" == */index.html && "$f" != */docs/* ]]; then site_dir="$(dirname "$f")"; fi
done
exec /usr/bin/node tests/browser/embed_test.mjs "$playwright" "$serve_py" "$site_dir" \
  "$blueprint" "$default_spec"
