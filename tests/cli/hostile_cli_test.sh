#!/usr/bin/env bash
# End-to-end: the real blueprint binary under hostile use.
#   hostile_cli_test.sh BLUEPRINT SPEC CALCULON_CASE_DIR SEARCH_TESTDATA_DIR
#  1. A failed write is never a success: every command with stdout on
#     /dev/full, on a closed descriptor, or over the file size limit exits 2
#     with "error: cannot write standard output: <strerror>".
#  2. analyze --dump-ir DIR: '' is a usage error; DIR is created (one level);
#     a non-directory DIR is refused; files are written only inside DIR, whole
#     sets or nothing, and a planted symlink is replaced, never followed.
#  3. Inputs: /dev/zero, a FIFO, a directory and a sparse 17 MiB file are
#     refused promptly with exit 2 in every input slot of every command.
# Each case checks the exit code and the exact error line, so that a CLI
# that ignores the failure fails this test.
set -uo pipefail
absolute() { if [[ "$1" == /* ]]; then echo "$1"; else echo "$PWD/$1"; fi; }
blueprint="$(absolute "$1")"
spec="$(absolute "$2")"
case_dir="$(absolute "$3")"
search_dir="$(absolute "$4")"
work="${TEST_TMPDIR:-$(mktemp -d)}/hostile_cli"
rm -rf "$work"
mkdir -p "$work"
umask 022
failures=0
checks=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

app="$case_dir/app.json"
exe="$case_dir/exe.json"
sys="$case_dir/sys.json"
search_app="$search_dir/megatron-22B.json"
search_sys="$search_dir/a100_80g.json"
search_flags="--procs|16|--max-batch|32|--datatype|float16|--top|5"  # '|'-joined
stages=(spec task_ir plan_ir iteration memory schedule_analysis report)
for f in "$spec" "$app" "$exe" "$sys" "$search_app" "$search_sys"; do
  [[ -f "$f" ]] || { echo "missing test input $f" >&2; exit 1; }
done

# run COMMAND...: runs it with stdout in $work/out, stderr in $work/err;
# sets $status. The caller may redirect stdout by running its own command.
run() {
  "$@" > "$work/out" 2> "$work/err"
  status=$?
}
# expect CODE LINE WHAT: the last run exited CODE and its stderr has the exact
# line LINE.
expect() {
  local code="$1" line="$2" what="$3"
  checks=$((checks + 1))
  ((status == code)) || fail "$what: exit $status, want $code; stderr: $(cat "$work/err")"
  grep -qxF -- "$line" "$work/err" ||
    fail "$what: stderr lacks the line '$line': $(cat "$work/err")"
}

# ---------------------------------------------------------------------------
# 1. Failed writes. Every command first succeeds with real output, so that a
# CLI which writes nothing cannot pass.
commands=(
  "check|$spec"
  "analyze|$spec"
  "digest|$spec"
  "explain|$spec|total_time"
  "calculon|$app|$exe|$sys"
  "search|--app|$search_app|--system|$search_sys|$search_flags|--json"
  "search|--app|$search_app|--system|$search_sys|$search_flags"
  "import|calculon|$app|$exe|$sys"
  "help"
)
for entry in "${commands[@]}"; do
  IFS='|' read -r -a args <<< "$entry"
  name="${args[*]:0:2}"
  run "$blueprint" "${args[@]}"
  ((status == 0)) || fail "$name: exit $status on a writable stdout: $(cat "$work/err")"
  [[ -s "$work/out" ]] || fail "$name: no output on a writable stdout"

  "$blueprint" "${args[@]}" > /dev/full 2> "$work/err"
  status=$?
  expect 2 "error: cannot write standard output: No space left on device" \
    "$name > /dev/full"

  "$blueprint" "${args[@]}" >&- 2> "$work/err"
  status=$?
  expect 2 "error: cannot write standard output: Bad file descriptor" \
    "$name >&-"
done

# A short write to a regular file (the file size limit; SIGXFSZ ignored so
# that write() fails with EFBIG instead of killing the process).
(
  trap '' XFSZ
  ulimit -f 8  # 8 KiB; explain's output is far larger
  exec "$blueprint" explain "$spec" total_time > "$work/limited" 2> "$work/err"
)
status=$?
expect 2 "error: cannot write standard output: File too large" \
  "explain over the file size limit"

# import megatron, on the v09 case's system.
megatron_flags=(--num-layers 96 --hidden-size 12288 --num-attention-heads 96
  --seq-length 2048 --tensor-model-parallel-size 8
  --pipeline-model-parallel-size 8 --num-layers-per-virtual-pipeline-stage 4
  --world-size 64 --micro-batch-size 1 --global-batch-size 64
  --recompute-granularity full --recompute-method uniform --fp16)
run "$blueprint" import megatron --system "$sys" -- "${megatron_flags[@]}"
((status == 0)) || fail "import megatron: exit $status: $(cat "$work/err")"
"$blueprint" import megatron --system "$sys" -- "${megatron_flags[@]}" \
  > /dev/full 2> "$work/err"
status=$?
expect 2 "error: cannot write standard output: No space left on device" \
  "import megatron > /dev/full"

# Invalid input stays exit 2 with its own errors when stdout is also full.
printf '{"format": ' > "$work/truncated.json"
"$blueprint" check "$work/truncated.json" > /dev/full 2> "$work/err"
status=$?
((status == 2)) || fail "check of a truncated spec > /dev/full: exit $status"
grep -q "^error: malformed JSON" "$work/err" ||
  fail "check of a truncated spec > /dev/full: lost its error: $(cat "$work/err")"

# The usage documents exit 3 and the input rule.
run "$blueprint" help
grep -q "3 internal error" "$work/out" || fail "usage lacks exit status 3"
grep -q "regular files of at most 16 MiB" "$work/out" ||
  fail "usage lacks the input rule"

# ---------------------------------------------------------------------------
# 2. analyze --dump-ir.
ref="$work/ref_dump"
run "$blueprint" analyze "$spec" --dump-ir "$ref"
((status == 0)) || fail "--dump-ir into a missing directory: exit $status: $(cat "$work/err")"
[[ -d "$ref" ]] || fail "--dump-ir did not create $ref"
[[ "$(stat -c %a "$ref" 2> /dev/null)" == 755 ]] ||
  fail "--dump-ir created $ref with mode $(stat -c %a "$ref"), want 755"
cp "$work/out" "$work/report.json"
for stage in "${stages[@]}"; do
  [[ -s "$ref/$stage.txt" ]] || fail "--dump-ir did not write $stage.txt"
done
cmp -s "$ref/report.txt" "$work/report.json" ||
  fail "--dump-ir report.txt differs from analyze's stdout"
# only_stages DIR WHAT: DIR holds exactly the stage files (no temporaries).
only_stages() {
  local listing want
  listing="$(ls -A "$1" | sort | tr '\n' ' ')"
  want="$(printf '%s.txt\n' "${stages[@]}" | sort | tr '\n' ' ')"
  [[ "$listing" == "$want" ]] || fail "$2: $1 holds '$listing', want '$want'"
}
only_stages "$ref" "--dump-ir into a missing directory"
# same_as_ref DIR WHAT: every stage file equals the reference dump.
same_as_ref() {
  local stage
  for stage in "${stages[@]}"; do
    cmp -s "$1/$stage.txt" "$ref/$stage.txt" 2> /dev/null || fail "$2: $stage.txt differs"
  done
}

# Rewriting an existing dump replaces it.
run "$blueprint" analyze "$spec" --dump-ir "$ref"
((status == 0)) || fail "--dump-ir over an existing dump: exit $status"
only_stages "$ref" "--dump-ir over an existing dump"

# An empty DIR is a usage error naming the rule; nothing is written.
(cd "$work" && exec "$blueprint" analyze "$spec" --dump-ir '' > "$work/out" 2> "$work/err")
status=$?
expect 1 'error: --dump-ir needs a directory name, not ""' "--dump-ir ''"
grep -q "^usage:" "$work/err" || fail "--dump-ir '': no usage text"
[[ ! -s "$work/out" ]] || fail "--dump-ir '': printed a report"

# An existing non-directory is refused and left alone.
echo "keep me" > "$work/a_file"
run "$blueprint" analyze "$spec" --dump-ir "$work/a_file"
expect 2 "error: cannot use $work/a_file as the dump directory: Not a directory" \
  "--dump-ir onto a file"
[[ "$(cat "$work/a_file")" == "keep me" ]] || fail "--dump-ir onto a file changed it"

# Only one level is created.
run "$blueprint" analyze "$spec" --dump-ir "$work/no/such"
expect 2 "error: cannot create directory $work/no/such: No such file or directory" \
  "--dump-ir two levels deep"
[[ ! -e "$work/no" ]] || fail "--dump-ir created $work/no"

# A planted symlink is replaced by the rename, never followed.
planted="$work/planted"
mkdir "$planted"
echo "precious" > "$work/victim"
ln -s "$work/victim" "$planted/report.txt"
run "$blueprint" analyze "$spec" --dump-ir "$planted"
((status == 0)) || fail "--dump-ir with a planted symlink: exit $status: $(cat "$work/err")"
[[ "$(cat "$work/victim")" == "precious" ]] || fail "--dump-ir wrote through a symlink"
[[ -f "$planted/report.txt" && ! -L "$planted/report.txt" ]] ||
  fail "--dump-ir left the planted symlink report.txt in place"
same_as_ref "$planted" "--dump-ir with a planted symlink"
only_stages "$planted" "--dump-ir with a planted symlink"

# Likewise a symlink to a directory at a stage's name.
planted_dir="$work/planted_dir"
mkdir "$planted_dir" "$work/victim_dir"
ln -s "$work/victim_dir" "$planted_dir/spec.txt"
run "$blueprint" analyze "$spec" --dump-ir "$planted_dir"
((status == 0)) || fail "--dump-ir with a symlink to a directory: exit $status: $(cat "$work/err")"
[[ -z "$(ls -A "$work/victim_dir")" ]] || fail "--dump-ir wrote into a symlinked directory"
[[ -f "$planted_dir/spec.txt" && ! -L "$planted_dir/spec.txt" ]] ||
  fail "--dump-ir left the planted symlink spec.txt in place"
same_as_ref "$planted_dir" "--dump-ir with a symlink to a directory"

# A final name that cannot be replaced (a directory): nothing is renamed,
# no temporaries are left.
blocked="$work/blocked"
mkdir -p "$blocked/report.txt"
run "$blueprint" analyze "$spec" --dump-ir "$blocked"
expect 2 "error: cannot replace $blocked/report.txt: Is a directory" \
  "--dump-ir with a directory at report.txt"
[[ "$(ls -A "$blocked")" == "report.txt" ]] ||
  fail "--dump-ir left a partial set: $(ls -A "$blocked")"

# A write failing half-way (the file size limit): an old dump stays whole,
# no temporaries are left.
partial="$work/partial"
mkdir "$partial"
for stage in "${stages[@]}"; do echo "old $stage" > "$partial/$stage.txt"; done
(
  trap '' XFSZ
  ulimit -f 8  # 8 KiB: spec.txt fits, task_ir.txt does not
  exec "$blueprint" analyze "$spec" --dump-ir "$partial" > /dev/null 2> "$work/err"
)
status=$?
checks=$((checks + 1))
((status == 2)) || fail "--dump-ir with a failing write: exit $status, want 2"
grep -Eq "^error: cannot write $partial/\.[a-z_]+\.txt\.tmp[^:]*: File too large$" "$work/err" ||
  fail "--dump-ir with a failing write: $(cat "$work/err")"
for stage in "${stages[@]}"; do
  [[ "$(cat "$partial/$stage.txt")" == "old $stage" ]] ||
    fail "--dump-ir with a failing write replaced $stage.txt (a partial set)"
done
only_stages "$partial" "--dump-ir with a failing write"

# Closed stdout: exit 2, and the report does not land in a dump file.
closed="$work/closed"
"$blueprint" analyze "$spec" --dump-ir "$closed" >&- 2> "$work/err"
status=$?
expect 2 "error: cannot write standard output: Bad file descriptor" \
  "analyze --dump-ir >&-"
same_as_ref "$closed" "analyze --dump-ir >&-"

# An unwritable directory (root ignores modes: skipped as root).
if [[ "$(id -u)" != 0 ]]; then
  locked="$work/locked"
  mkdir "$locked"
  chmod 555 "$locked"
  run "$blueprint" analyze "$spec" --dump-ir "$locked"
  checks=$((checks + 1))
  ((status == 2)) || fail "--dump-ir into a read-only directory: exit $status, want 2"
  grep -Eq "^error: cannot create $locked/\.spec\.txt\.tmp[^:]*: Permission denied$" "$work/err" ||
    fail "--dump-ir into a read-only directory: $(cat "$work/err")"
  [[ -z "$(ls -A "$locked")" ]] || fail "--dump-ir wrote into a read-only directory"
  chmod 755 "$locked"
else
  echo "SKIP: read-only dump directory (running as root)"
fi

# ---------------------------------------------------------------------------
# 3. Inputs that are not small regular files, in every input slot.
mkfifo "$work/fifo"
mkdir "$work/a_dir"
truncate -s 17M "$work/sparse"
truncate -s $((16 * 1024 * 1024 + 1)) "$work/one_over"
limit=$((16 * 1024 * 1024))
declare -A bad_line=(
  [/dev/zero]="error: /dev/zero: not a regular file"
  [$work/fifo]="error: $work/fifo: not a regular file"
  [$work/a_dir]="error: $work/a_dir: not a regular file"
  [$work/sparse]="error: $work/sparse: input is larger than the limit of $limit bytes (16 MiB)"
  [$work/one_over]="error: $work/one_over: input is larger than the limit of $limit bytes (16 MiB)"
)
for bad in /dev/zero "$work/fifo" "$work/a_dir" "$work/sparse" "$work/one_over"; do
  slots=(
    "check|@"
    "analyze|@"
    "analyze|@|--dump-ir|$work/never"
    "digest|@"
    "explain|@|total_time"
    "calculon|@|$exe|$sys"
    "calculon|$app|@|$sys"
    "calculon|$app|$exe|@"
    "import|calculon|@|$exe|$sys"
    "import|calculon|$app|@|$sys"
    "import|calculon|$app|$exe|@"
    "import|megatron|--system|@|--|--num-layers|2"
    "search|--app|@|--system|$search_sys|$search_flags"
    "search|--app|$search_app|--system|@|$search_flags|--json"
  )
  for slot in "${slots[@]}"; do
    IFS='|' read -r -a args <<< "${slot//@/$bad}"
    timeout 10 "$blueprint" "${args[@]}" > "$work/out" 2> "$work/err"
    status=$?
    expect 2 "${bad_line[$bad]}" "${args[*]}"
    [[ ! -s "$work/out" ]] || fail "${args[*]}: printed output"
  done
done
[[ ! -e "$work/never" ]] || fail "analyze created the dump directory for a refused input"

# Exactly at the limit is not refused for its size (it is no JSON, though).
truncate -s "$limit" "$work/at_limit"
run "$blueprint" check "$work/at_limit"
checks=$((checks + 1))
((status == 2)) || fail "check of a file of exactly 16 MiB: exit $status, want 2"
grep -q "^error: malformed JSON" "$work/err" ||
  fail "a file of exactly 16 MiB is refused for another reason: $(cat "$work/err")"

if ((failures)); then
  echo "$failures failure(s) in $checks checks" >&2
  exit 1
fi
echo "PASS: $checks hostile-use checks"
