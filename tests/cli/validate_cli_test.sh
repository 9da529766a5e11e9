#!/usr/bin/env bash
# `blueprint validate` through the real binary:
#   validate_cli_test.sh BLUEPRINT CORPUS
# the built-in corpus and the same file given by --corpus print the same
# report; both profiles run; --json carries the same rows and summaries as
# the text; bad arguments exit 1 and a malformed corpus exits 2, each with
# its "error: " line.
set -uo pipefail
blueprint="$1"
corpus="$2"
work="${TEST_TMPDIR:-$(mktemp -d)}/validate_cli"
mkdir -p "$work"
source tests/cli/cli_test_lib.sh  # fail, expect_exit

# The corpus' row count (331 shared runs and the runs added beside them).
total=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).rows.length)' "$corpus")
((total > 331)) || fail "the corpus has $total rows"
for profile in calculon refined; do
  "$blueprint" validate --profile "$profile" > "$work/$profile.txt" 2> "$work/err" ||
    fail "validate --profile $profile: $(cat "$work/err")"
  [[ "$(head -1 "$work/$profile.txt")" == "blueprinting.validation/2 profile=$profile" ]] ||
    fail "$profile: first line $(head -1 "$work/$profile.txt")"
  grep -q '^overall rows=[1-9][0-9]* mean_abs_error=' "$work/$profile.txt" ||
    fail "$profile: no overall line"
  # Korthikanti et al. Table 5 (added_runs.csv): all 8 rows predicted.
  grep -q '^source S14 rows=8 ' "$work/$profile.txt" || fail "$profile: no S14 source line"
  for group in bf16_dense fp8 moe blackwell_fp8 blackwell_mxfp8 blackwell_nvfp4 \
      blackwell_fp8_block blackwell_moe_bf16 blackwell_moe_fp8 blackwell_moe_mxfp8; do
    grep -q "^group $group rows=[1-9]" "$work/$profile.txt" || fail "$profile: no group $group"
  done
  # Rankings of each source's mappings (Kendall's tau), the goal's and the
  # assumed ones apart.
  grep -q '^ranking S3 llama2-7b h100_sxm_80g mappings=9 tau=' "$work/$profile.txt" ||
    fail "$profile: no ranking of S3's Llama 2 7B mappings"
  grep -q '^rankings printed rankings=[1-9][0-9]* mean_tau=' "$work/$profile.txt" ||
    fail "$profile: no summary of the rankings"
  # Every row of the corpus is either compared or skipped with a reason.
  rows=$(grep -c '^row ' "$work/$profile.txt")
  skipped=$(grep -c '^skipped [a-z][0-9]* S[0-9]* [a-z0-9_]*: .' "$work/$profile.txt")
  ((rows + skipped == total)) || fail "$profile: $rows rows + $skipped skipped != $total"
  # Blackwell rows run on their presets in their recipes (r0022: Llama 3.1
  # 405B on GB300 in NVFP4); none is skipped for want of a system or a
  # recipe.
  grep -q '^row r0022 S1 blackwell_nvfp4 gb300_nvl72 llama3.1-405b ' "$work/$profile.txt" ||
    fail "$profile: the GB300 NVFP4 row is not predicted"
  grep -q ' no system preset for \| precision recipe not modelled' "$work/$profile.txt" &&
    fail "$profile: a row is skipped for want of a system preset or a recipe"
  "$blueprint" validate --corpus "$corpus" --profile "$profile" > "$work/file.txt" 2> "$work/err" ||
    fail "validate --corpus: $(cat "$work/err")"
  cmp -s "$work/$profile.txt" "$work/file.txt" || fail "$profile: --corpus FILE differs from the built-in corpus"
  "$blueprint" validate --json --profile "$profile" > "$work/$profile.json" 2> "$work/err" ||
    fail "validate --json: $(cat "$work/err")"
  text_rows=$(sed -n 's/^overall rows=\([0-9]*\) .*/\1/p' "$work/$profile.txt")
  text_mean=$(sed -n 's/^overall rows=[0-9]* mean_abs_error=\([^ ]*\) .*/\1/p' "$work/$profile.txt")
  node -e '
    const fs = require("fs");
    const r = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
    const [profile, rows, mean, total] = process.argv.slice(2);
    const ok = r.format === "blueprinting.validation/2" && r.profile === profile &&
        r.overall.rows === Number(rows) && String(r.overall.mean_abs_error) === mean &&
        r.rows.length === Number(rows) && r.rows.length + r.skipped.length === Number(total) &&
        r.rankings.length > 0 && r.rankings_printed.rankings > 0;
    if (!ok) { console.error(JSON.stringify(r.overall)); process.exit(1); }
  ' "$work/$profile.json" "$profile" "$text_rows" "$text_mean" "$total" ||
    fail "$profile: --json does not match the text"
done
cmp -s "$work/calculon.txt" "$work/refined.txt" && fail "the two profiles give the same report"

expect_exit 1 '^error: --profile: expected calculon or refined, got "fast"$' \
  "$blueprint" validate --profile fast
expect_exit 1 '^error: --json given twice$' "$blueprint" validate --json --json
expect_exit 1 '^error: validate: unknown argument "x"' "$blueprint" validate x
expect_exit 1 '^error: --corpus needs a file name$' "$blueprint" validate --corpus
printf '{"format": "blueprinting.validation_corpus/1", "rows": [{"id": 1}]}' > "$work/bad.json"
expect_exit 2 '^error: rows\[0\].id: expected a string, got 1$' \
  "$blueprint" validate --corpus "$work/bad.json"
expect_exit 2 '^error: cannot read nosuch.json' "$blueprint" validate --corpus nosuch.json

((failures == 0)) || { echo "$failures failure(s)" >&2; exit 1; }
echo PASS
