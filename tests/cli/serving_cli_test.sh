#!/usr/bin/env bash
# `blueprint serve`, `serve check` and `serve explain` through the real
# binary: outputs on stdout, exit 2 with "error: FIELD..." lines for a
# rejected spec or an unknown figure, exit 1 for a bad command line.
#   serving_cli_test.sh BLUEPRINT
set -uo pipefail
blueprint="$1"
work="${TEST_TMPDIR:-$(mktemp -d)}/serving_cli"
mkdir -p "$work"
source tests/cli/cli_test_lib.sh  # fail, expect_exit, expect_ok

spec() {  # spec TENSOR CONCURRENCY: Llama-3.1-70B on h100_sxm_80g
  cat <<JSON
{"format": "blueprinting.serving_spec/1", "model": "llama3.1-70b",
 "system": "h100_sxm_80g", "weight_datatype": "bfloat16",
 "memory_utilization": 0.9,
 "kv_cache": {"datatype": "bfloat16", "block_tokens": 16},
 "pools": {"type": "aggregated", "pool": {"tensor": $1, "pipeline": 1,
           "expert": 1, "attention_data": 1, "replicas": 1}},
 "workload": {"input_tokens": 1024, "output_tokens": 256, "concurrency": $2},
 "speculative": {"type": "none"}}
JSON
}
spec 8 64 > "$work/good.json"
spec 3 0 > "$work/bad.json"

# 1. serve: the analysis, its figures and lineage.
expect_ok "$blueprint" serve "$work/good.json"
head -1 "$work/out" | grep -qx 'blueprinting.serving_analysis/1' ||
  fail "serve: no format line"
grep -qx 'kv_cache_bytes_per_token 327680' "$work/out" ||
  fail "serve: kv_cache_bytes_per_token is not 80 * 2 * 8 * 128 * 2"
grep -q '^lineage ttft = prefill_time + kv_transfer_time pass=AnalyzeServing' \
  "$work/out" || fail "serve: no lineage of ttft"

# 2. serve check: the canonical spec, which checks to itself.
expect_ok "$blueprint" serve check "$work/good.json"
cp "$work/out" "$work/canonical.json"
expect_ok "$blueprint" serve check "$work/canonical.json"
cmp -s "$work/out" "$work/canonical.json" || fail "serve check: not canonical"

# 3. serve explain.
expect_ok "$blueprint" serve explain "$work/good.json" tpot
head -1 "$work/out" | grep -q '^tpot = ' || fail "serve explain: no tpot line"

# 4. import vllm: a serve line and its benchmark's load, then serve check.
expect_ok "$blueprint" import vllm --system h100_sxm_80g --hf-config \
  llama3.1-70b -- meta-llama/Llama-3.1-70B-Instruct --tensor-parallel-size 8 \
  --kv-cache-dtype fp8 --port 8000 --random-input-len 1024 \
  --random-output-len 256 --max-concurrency 64
grep -q '^note: ignored: --port' "$work/err" || fail "import vllm: no note"
cp "$work/out" "$work/vllm.json"
expect_ok "$blueprint" serve check "$work/vllm.json"
grep -q '"concurrency": 64' "$work/out" || fail "import vllm: concurrency"
expect_exit 2 '^error: --frobnicate: not a vLLM flag' "$blueprint" import \
  vllm --system h100_sxm_80g --hf-config llama3.1-70b -- --frobnicate 1 \
  --input-len 8 --output-len 8
expect_exit 2 '^error: --hf-config is required' "$blueprint" import vllm \
  --system h100_sxm_80g -- --input-len 8 --output-len 8

# 4b. import sglang: a launch_server line and bench_serving's load.
expect_ok "$blueprint" import sglang --system h100_sxm_80g --hf-config \
  llama3.1-70b -- --model-path meta-llama/Llama-3.1-70B-Instruct --tp 8 \
  --mem-fraction-static 0.85 --kv-cache-dtype fp8_e4m3 --port 30000 \
  --dataset-name random --random-input-len 1024 --random-output-len 256 \
  --random-range-ratio 1 --max-concurrency 64
grep -q '^note: ignored: --model-path' "$work/err" ||
  fail "import sglang: no note"
cp "$work/out" "$work/sglang.json"
expect_ok "$blueprint" serve check "$work/sglang.json"
grep -q '"block_tokens": 1' "$work/out" || fail "import sglang: page size"
expect_exit 2 '^error: --random-range-ratio 0.5' "$blueprint" import sglang \
  --system h100_sxm_80g --hf-config llama3.1-70b -- --tp 8 \
  --mem-fraction-static 0.85 --dataset-name random --random-range-ratio 0.5 \
  --max-concurrency 8
expect_exit 2 '^error: --frobnicate: not an SGLang flag' "$blueprint" import \
  sglang --system h100_sxm_80g --hf-config llama3.1-70b -- --frobnicate 1

# 5. Errors: every violation, an unknown figure, a bad command line.
expect_exit 2 '^error: pools.pool.tensor (3) must divide model.attn_heads (64)' \
  "$blueprint" serve "$work/bad.json"
grep -q '^error: workload.concurrency (0) must be at least 1' "$work/err" ||
  fail "serve: the concurrency's violation is not reported with the others"
expect_exit 2 'is not a serving figure' \
  "$blueprint" serve explain "$work/good.json" mfu
expect_exit 1 'usage' "$blueprint" serve
expect_exit 2 'cannot read' "$blueprint" serve "$work/missing.json"

((failures == 0)) || exit 1
echo "PASS"
