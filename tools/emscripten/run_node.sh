#!/bin/bash
# Runs a wasm program's JS under node: run_node.sh PROGRAM.js [ARGS...].
# Its exit code is the program's (wasm tests link with -sEXIT_RUNTIME=1).
set -euo pipefail
exec /usr/bin/node "$@"
