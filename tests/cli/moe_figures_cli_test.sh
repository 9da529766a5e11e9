#!/usr/bin/env bash
# One MoE block's figures (moe_block_*, issue #45) through the real binary:
# `explain` prints a figure's formula, value and the plans of its tasks;
# `analyze` reports every one and `metadata` lists them; on the calculon
# profile (a spec of the golden corpus) and the refined one (Megatron-LM
# flags imported), and 0 for a model without experts.
#   moe_figures_cli_test.sh BLUEPRINT MOE_SPEC DENSE_SPEC SYSTEM FLAGS
set -uo pipefail
blueprint="$1"
moe_spec="$2"    # calculon profile, every block MoE, ep 4, no shared experts
dense_spec="$3"  # no experts
system="$4"      # and FLAGS: Qwen3-30B-A3B on the refined profile, ep 16
flags="$5"
work="${TEST_TMPDIR:-$(mktemp -d)}/moe_figures_cli"
mkdir -p "$work"
source tests/cli/cli_test_lib.sh  # fail, expect_exit, expect_ok

# figure REPORT NAME: the figure's value in a report JSON.
figure() {
  grep -o "\"$2\": [^,}]*" "$1" | head -1 | sed 's/.*: //'
}

# 1. explain: the formula (backward = activation + weight gradient), the
# value, and the plans of the experts' tasks it sums.
expect_ok "$blueprint" explain "$moe_spec" moe_block_experts_bw_time
head -1 "$work/out" | grep -q '^moe_block_experts_bw_time = training ? sum over the routed experts'"'"' tasks .*agrad + wgrad.* = [0-9.e-]*$' ||
  fail "explain: no formula line: $(head -1 "$work/out")"
grep -q '^  <- plan:[0-9]* ' "$work/out" || fail "explain: no task plan among the sources"
expect_ok "$blueprint" explain "$moe_spec" moe_block_dispatch_fw_exposed_time
head -1 "$work/out" | grep -q '^moe_block_dispatch_fw_exposed_time = fw exposed .* of MoeBlock_Dispatch' ||
  fail "explain: no dispatch formula: $(head -1 "$work/out")"

# 2. analyze, calculon profile: the experts' and exchanges' figures are
# there and positive; no permutation task, no shared experts.
expect_ok "$blueprint" analyze "$moe_spec"
cp "$work/out" "$work/calculon.json"
for name in moe_block_router_fw_time moe_block_experts_fw_time \
    moe_block_experts_bw_time moe_block_dispatch_fw_net_time \
    moe_block_combine_bw_exposed_time moe_blocks_per_stage; do
  value="$(figure "$work/calculon.json" "$name")"
  [[ -n "$value" && "$value" != 0 ]] || fail "analyze: $name is '$value'"
done
for name in moe_block_permutation_fw_time moe_block_shared_experts_fw_time; do
  value="$(figure "$work/calculon.json" "$name")"
  [[ "$value" == 0 ]] || fail "analyze: $name is '$value', not 0"
done

# 3. the refined profile: the permutations are tasks of their own.
expect_ok "$blueprint" import megatron --system "$system" -- $(cat "$flags")
cp "$work/out" "$work/refined_spec.json"
grep -q '"profile": "refined"' "$work/refined_spec.json" || fail "import: not the refined profile"
expect_ok "$blueprint" analyze "$work/refined_spec.json"
value="$(figure "$work/out" moe_block_permutation_bw_time)"
[[ -n "$value" && "$value" != 0 ]] || fail "refined: moe_block_permutation_bw_time is '$value'"

# 4. no experts: every MoE figure 0.
expect_ok "$blueprint" analyze "$dense_spec"
count=0
while read -r line; do
  count=$((count + 1))
  [[ "$line" == *": 0" ]] || fail "dense: $line"
done < <(grep -o '"moe_block[a-z_]*": [^,}]*' "$work/out")
((count == 17)) || fail "dense: $count MoE figures, want 17"

# 5. metadata lists them with their unit and meaning.
expect_ok "$blueprint" metadata
grep -q '"moe_block_shared_experts_bw_time"' "$work/out" || fail "metadata: no moe_block_shared_experts_bw_time"

((failures == 0)) || exit 1
echo "PASS"
