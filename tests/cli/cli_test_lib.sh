# Shared by the CLI test scripts (sourced from the runfiles root, after the
# script has set `work`, its scratch folder):
#   fail MESSAGE                      counts a failure in `failures`
#   expect_exit CODE PATTERN CMD...   runs CMD; its exit code must be CODE and
#                                     its stderr must match PATTERN (grep)
#   expect_ok CMD...                  runs CMD; it must exit 0 (stdout in
#                                     $work/out, stderr in $work/err)
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

expect_exit() {  # expect_exit CODE PATTERN COMMAND...: exit code and stderr
  local code="$1" pattern="$2"
  shift 2
  "$@" > "$work/out" 2> "$work/err"
  local status=$?
  ((status == code)) || fail "$*: exit $status, want $code: $(cat "$work/err")"
  grep -q -- "$pattern" "$work/err" || fail "$*: stderr lacks '$pattern': $(cat "$work/err")"
}

expect_ok() {  # expect_ok COMMAND...: exit 0, stdout in $work/out
  "$@" > "$work/out" 2> "$work/err" || fail "$*: exit $?: $(cat "$work/err")"
}
