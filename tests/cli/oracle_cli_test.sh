#!/usr/bin/env bash
# End-to-end: the real blueprint binary over every shared Calculon oracle case.
#   oracle_cli_test.sh BLUEPRINT ORACLE_RC SEED_DIR GPT3_FLAGS
# For each "<case> <rc>" line of ORACLE_RC, writes the case's app/exe/sys JSON
# (verbatim, from SEED_DIR/calculon-<case>) to files, runs
# `blueprint import calculon` then `blueprint check`, and compares accepted /
# rejected with Calculon's exit code. x09 is rejected by Calculon's memory
# check only, which belongs to the analysis: the checker accepts it.
# Also checks the CLI's contract: exit 2 with "error: " lines on invalid
# input, exit 1 with the usage on a bad command line, never anything else.
set -uo pipefail
blueprint="$1"
oracle_rc="$2"
seeds="$3"
gpt3_flags="$4"  # Megatron-LM's GPT-3 175B example, one word per line
work="${TEST_TMPDIR:-$(mktemp -d)}/oracle_cli"
mkdir -p "$work"
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# split_seed SEED DIR: the seed is '1' app NUL exe NUL sys.
split_seed() {
  local app exe sys
  {
    IFS= read -r -d '' app
    IFS= read -r -d '' exe
    IFS= read -r -d '' sys || true
  } < <(tail -c +2 "$1")
  printf '%s' "$app" > "$2/app.json"
  printf '%s' "$exe" > "$2/exe.json"
  printf '%s' "$sys" > "$2/sys.json"
}

cases=0
while read -r case rc; do
  [[ -n "$case" ]] || continue
  cases=$((cases + 1))
  dir="$work/$case"
  mkdir -p "$dir"
  split_seed "$seeds/calculon-$case" "$dir"
  "$blueprint" import calculon "$dir/app.json" "$dir/exe.json" "$dir/sys.json" \
    > "$dir/spec.json" 2> "$dir/import.err"
  status=$?
  if ((status == 0)); then
    "$blueprint" check "$dir/spec.json" > "$dir/program.json" 2> "$dir/check.err"
    status=$?
    err="$dir/check.err"
  else
    err="$dir/import.err"
  fi
  expect_ok=0
  [[ "$rc" == 0 || "$case" == x09_* ]] && expect_ok=1
  if ((status != 0 && status != 2)); then
    fail "$case: exit $status (only 0 and 2 are allowed)"
  elif ((expect_ok && status != 0)); then
    fail "$case: Calculon accepted it (rc $rc) but blueprint rejected it: $(cat "$err")"
  elif ((!expect_ok && status == 0)); then
    fail "$case: Calculon rejected it (rc $rc) but blueprint accepted it"
  elif ((status == 2)) && ! grep -Eq '^error: .*[a-z_]+\.[a-z_]+.* \([^)]+\)' "$err"; then
    fail "$case: rejection does not name a field and its value: $(cat "$err")"
  fi
done < "$oracle_rc"
((cases >= 55)) || fail "only $cases oracle cases found in $oracle_rc"

# The CLI contract.
expect_exit() {  # expect_exit CODE PATTERN COMMAND...: exit code and stderr
  local code="$1" pattern="$2"
  shift 2
  "$@" > "$work/out" 2> "$work/err"
  local status=$?
  ((status == code)) || fail "$*: exit $status, want $code"
  grep -q -- "$pattern" "$work/err" || fail "$*: stderr lacks '$pattern': $(cat "$work/err")"
}
expect_exit 1 "no command given" "$blueprint"
expect_exit 1 "unknown command \"frobnicate\"" "$blueprint" frobnicate
expect_exit 1 "unknown command \"import tensorflow\"" "$blueprint" import tensorflow x
expect_exit 1 "import needs a source" "$blueprint" import
expect_exit 1 "expected: blueprint check SPEC.json" "$blueprint" check
expect_exit 1 "usage:" "$blueprint" import megatron --system
expect_exit 2 "^error: cannot read $work/missing.json: No such file" \
  "$blueprint" check "$work/missing.json"
expect_exit 2 "^error: $work: not a regular file$" "$blueprint" check "$work"
printf '{"format": ' > "$work/truncated.json"
expect_exit 2 "^error: malformed JSON: parse error at line 1" \
  "$blueprint" check "$work/truncated.json"
"$blueprint" --help > "$work/help" || fail "--help exits non-zero"
grep -q "blueprint import calculon APP.json EXE.json SYS.json" "$work/help" ||
  fail "--help lacks the import calculon synopsis"

# Megatron-LM flags for Korthikanti et al.'s 175B run give v09's spec, byte
# for byte.
v09="$work/v09_175B_t8p8_v3_full_ar_paperval"
"$blueprint" import megatron --system "$v09/sys.json" -- \
  --num-layers 96 --hidden-size 12288 --num-attention-heads 96 \
  --seq-length 2048 --tensor-model-parallel-size 8 \
  --pipeline-model-parallel-size 8 --num-layers-per-virtual-pipeline-stage 4 \
  --world-size 64 --micro-batch-size 1 --global-batch-size 64 \
  --recompute-granularity full --recompute-method uniform --fp16 \
  > "$work/megatron.json" 2> "$work/megatron.err" ||
  fail "import megatron: $(cat "$work/megatron.err")"
# The same but for Megatron-LM's linear biases, mixed-precision accounting and
# the refined profile, which Calculon's files do not have; without
# --vocab-size, a note says that there is no vocabulary.
sed -e 's/"linear_bias": true/"linear_bias": false/' \
  -e 's/"precision": "megatron_mixed"/"precision": "calculon"/' \
  -e 's/"profile": "refined"/"profile": "calculon"/' \
  "$work/megatron.json" > "$work/megatron_as_calculon.json"
cmp -s "$work/megatron_as_calculon.json" "$v09/spec.json" ||
  fail "import megatron differs from import calculon for v09"
grep -q '^note: without --vocab-size there is no vocabulary' \
  "$work/megatron.err" || fail "import megatron: no vocabulary note: $(cat "$work/megatron.err")"
expect_exit 2 "^error: unknown Megatron-LM flag --learning-rate: " \
  "$blueprint" import megatron --system "$v09/sys.json" -- --learning-rate 1
expect_exit 2 "^error: unsupported Megatron-LM flag --moe-latent-size \"8\": MoE latent projections" \
  "$blueprint" import megatron --system "$v09/sys.json" -- --moe-latent-size 8

# Megatron-LM's own GPT-3 175B launch line (with --world-size) imports as it
# is: exit 0, the flags it ignores in one note, and the spec checks.
mapfile -t gpt3 < <(grep -v '^#' "$gpt3_flags")
"$blueprint" import megatron --system "$v09/sys.json" -- "${gpt3[@]}" \
  > "$work/gpt3.json" 2> "$work/gpt3.err" ||
  fail "import megatron of the GPT-3 example: $(cat "$work/gpt3.err")"
[[ "$(grep -c '^note: ignored 24 Megatron-LM flags' "$work/gpt3.err")" == 1 ]] ||
  fail "the GPT-3 example's ignored flags are not one note: $(cat "$work/gpt3.err")"
! grep -q '^error:' "$work/gpt3.err" || fail "the GPT-3 example has errors: $(cat "$work/gpt3.err")"
"$blueprint" check "$work/gpt3.json" > /dev/null 2> "$work/gpt3.check" ||
  fail "the GPT-3 example does not check: $(cat "$work/gpt3.check")"

if ((failures)); then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "all $cases oracle cases agree with Calculon; CLI contract holds"
