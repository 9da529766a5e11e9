#!/usr/bin/env bash
# `blueprint search --serving` through the real binary: the ranked table,
# the JSON whose first mapping's spec `blueprint serve` analyses to the same
# tokens per second per GPU, --serving anywhere among the flags, and exit 2
# with one "error: --FLAG..." line per problem, every problem at once.
#   serving_search_cli_test.sh BLUEPRINT
set -uo pipefail
blueprint="$1"
work="${TEST_TMPDIR:-$(mktemp -d)}/serving_search_cli"
mkdir -p "$work"
source tests/cli/cli_test_lib.sh  # fail, expect_exit, expect_ok

search=(search --serving --hf-config llama3.1-70b --system h100_sxm_80g
        --procs 8 --input-len 1024 --output-len 256 --max-ttft 1
        --max-tpot 0.05)

# 1. The table: a header and --top rows, best first.
expect_ok "$blueprint" "${search[@]}" --top 4
grep -q '^rank  *tokens/s/GPU' "$work/out" || fail "no table header"
[[ "$(grep -c '^  *[0-9][0-9]* ' "$work/out")" == 4 ]] ||
  fail "--top 4: not 4 rows: $(cat "$work/out")"
cp "$work/out" "$work/table.txt"

# 2. --serving anywhere selects the same search.
expect_ok "$blueprint" search --hf-config llama3.1-70b --system h100_sxm_80g \
  --procs 8 --serving --input-len 1024 --output-len 256 --max-ttft 1 \
  --max-tpot 0.05 --top 4
cmp -s "$work/out" "$work/table.txt" || fail "--serving later: another table"

# 3. --json: each mapping's canonical spec; serve analyses the first to the
# search's figures, and its tpot meets the target.
expect_ok "$blueprint" "${search[@]}" --top 2 --json
/usr/bin/node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  if (r.format !== "blueprinting.serving_search/1") process.exit(1);
  if (r.mappings.length !== 2) process.exit(1);
  const m = r.mappings[0];
  if (!(m.figures.tpot <= 0.05 && m.figures.ttft <= 1)) process.exit(1);
  require("fs").writeFileSync(process.argv[2], JSON.stringify(m.spec));
  require("fs").writeFileSync(process.argv[3],
      String(m.figures.output_tokens_per_second_per_gpu));
' "$work/out" "$work/best.json" "$work/best_rate.txt" ||
  fail "--json: not two mappings meeting the targets: $(head -c 400 "$work/out")"
expect_ok "$blueprint" serve "$work/best.json"
rate="$(awk '$1 == "output_tokens_per_second_per_gpu" {print $2; exit}' \
  "$work/out")"
/usr/bin/node -e 'process.exit(Number(process.argv[1]) === Number(process.argv[2]) ? 0 : 1)' \
  "$rate" "$(cat "$work/best_rate.txt")" ||
  fail "serve of the best spec: $rate tokens/s/GPU, search said $(cat "$work/best_rate.txt")"

# 4. Bad input: every problem at once, each naming its flag, exit 2.
expect_exit 2 '^error: --hf-config: cannot read no-such-model' "$blueprint" \
  search --serving --hf-config no-such-model --system h100_sxm_80g \
  --procs 0 --input-len 1024 --output-len 256 --max-tpot -0.5
grep -q '^error: --procs: expected a positive integer' "$work/err" ||
  fail "--procs 0 not reported beside the unknown preset"
grep -q '^error: --max-tpot: expected a finite number above 0' "$work/err" ||
  fail "--max-tpot -0.5 not reported beside the unknown preset"
expect_exit 2 '^error: --input-len: workload.input_tokens (131072)' \
  "$blueprint" search --serving --hf-config llama3.1-70b \
  --system h100_sxm_80g --procs 8 --input-len 131072 --output-len 256
expect_exit 2 '^error: --procs (1073741824) must be at most' \
  "$blueprint" search --serving --hf-config llama3.1-70b \
  --system h100_sxm_80g --procs 1073741824 --input-len 1024 --output-len 256
expect_exit 1 'usage' "$blueprint" search --serving --procs 8

# 5. The usage text describes it.
expect_ok "$blueprint" help
grep -q '^  blueprint search --serving --hf-config CONFIG' "$work/out" ||
  fail "help: no search --serving line"

((failures == 0)) || exit 1
echo "PASS"
