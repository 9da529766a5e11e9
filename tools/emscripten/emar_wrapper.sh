#!/bin/bash
# Bazel -> Debian emscripten 3.1.6 emar. emcc runs the first python3 on PATH,
# which inside a Bazel action may not be Debian's.
set -euo pipefail
export EMSDK_PYTHON="${EMSDK_PYTHON:-/usr/bin/python3}"
exec /usr/bin/emar "$@"
