#!/bin/bash
# Runs a wasm program's JS under node: run_node.sh PROGRAM.js [ARGS...].
# Its exit code is the program's (wasm tests link with -sEXIT_RUNTIME=1).
# The wasm program does not see node's environment, so Bazel's
# --test_filter (TESTBRIDGE_TEST_ONLY, which a native gtest reads itself) is
# passed on as --gtest_filter.
set -euo pipefail
if [[ -n "${TESTBRIDGE_TEST_ONLY:-}" ]]; then
  set -- "$@" "--gtest_filter=${TESTBRIDGE_TEST_ONLY}"
fi
exec /usr/bin/node "$@"
