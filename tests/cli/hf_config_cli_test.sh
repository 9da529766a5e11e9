#!/usr/bin/env bash
# `blueprint import megatron --hf-config` and the presets, through the real
# binary.
#   hf_config_cli_test.sh BLUEPRINT [--end-to-end]
# Always: `blueprint presets`; `--system` (import megatron, search) and
# `--hf-config` take a preset's name or a file (the same bytes give the same
# result); unknown names,
# unreadable files, bad configs and bad command lines give exit 2 or 1 with
# the right "error: " lines.
# --end-to-end (//tests/cli:hf_config_cli_e2e_test): every model preset
# imports on every system preset and `blueprint check` accepts the spec, whose
# model is the config's; a config plus flags is the import of the equivalent
# flags, byte for byte.
set -uo pipefail
blueprint="$1"
end_to_end="${2:-}"
work="${TEST_TMPDIR:-$(mktemp -d)}/hf_config_cli"
mkdir -p "$work"
source tests/cli/cli_test_lib.sh  # fail, expect_exit

# GPT-3 175B (Korthikanti et al.) on 64 ranks, in bf16.
gpt3=(--num-layers 96 --hidden-size 12288 --num-attention-heads 96
      --seq-length 2048 --micro-batch-size 1 --tensor-model-parallel-size 8
      --pipeline-model-parallel-size 8 --world-size 64 --global-batch-size 64
      --bf16)

# 1. The presets: JSON naming both systems and every model.
"$blueprint" presets > "$work/presets.json" 2> "$work/err" ||
  fail "presets: $(cat "$work/err")"
grep -q '^  "format": "blueprinting.presets/1",$' "$work/presets.json" ||
  fail "presets: no format line"
systems=(a100_sxm_80g h100_sxm_80g h200_sxm_141g jean_zay_a100_80g)
models=(llama2-7b llama2-13b llama2-70b llama3.1-8b llama3.1-70b llama3.1-405b
        llama3.2-1b llama3.2-3b llama3.3-70b mistral-7b-v0.1 mistral-7b-v0.3
        qwen2.5-7b qwen2.5-14b qwen2.5-32b qwen2.5-72b qwen3-8b qwen3-14b
        qwen3-32b mixtral-8x7b-v0.1 mixtral-8x22b-v0.1 qwen3-30b-a3b
        qwen3-235b-a22b deepseek-v3)
for name in "${systems[@]}" "${models[@]}"; do
  grep -q "^    \"$name\": {$" "$work/presets.json" || fail "presets: no $name"
done
expect_exit 1 "expected: blueprint presets" "$blueprint" presets x

# 2. A system preset by name: a valid spec, the same as from its file.
for system in "${systems[@]}"; do
  "$blueprint" import megatron --system "$system" -- "${gpt3[@]}" \
    > "$work/$system.spec.json" 2> "$work/err" ||
    fail "import on $system: $(cat "$work/err")"
  "$blueprint" check "$work/$system.spec.json" > /dev/null 2> "$work/err" ||
    fail "check on $system: $(cat "$work/err")"
done
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); json.dump(d["systems"]["h100_sxm_80g"], open(sys.argv[2], "w"))' \
  "$work/presets.json" "$work/h100.json" || fail "cannot write h100.json"
"$blueprint" import megatron --system="$work/h100.json" -- "${gpt3[@]}" \
  > "$work/from_file.json" 2> "$work/err" || fail "import from file: $(cat "$work/err")"
cmp -s "$work/from_file.json" "$work/h100_sxm_80g.spec.json" ||
  fail "the h100_sxm_80g preset and its file give different specs"

# search takes a system preset too.
printf '{"hidden": 4096, "feedforward": 16384, "seq_size": 2048, "attn_heads": 32, "attn_size": 128, "num_blocks": 32}' \
  > "$work/app.json"
"$blueprint" search --app "$work/app.json" --system h200_sxm_141g --procs 8 \
  --max-batch 8 --datatype bfloat16 --top 1 > /dev/null 2> "$work/err" ||
  fail "search --system h200_sxm_141g: $(cat "$work/err")"

# 3. Names that are neither a file nor a preset; bad command lines.
expect_exit 2 "^error: cannot read nosuch: No such file or directory (nor a preset: systems a100_sxm_80g, b200_sxm_180g, b300_sxm_288g, gb200_nvl72, gb300_nvl72, h100_sxm_80g, h200_sxm_141g, h800_sxm_80g, jean_zay_a100_80g)$" \
  "$blueprint" import megatron --system nosuch -- "${gpt3[@]}"
expect_exit 2 "^error: cannot read llama9: .*(nor a preset: models deepseek-v3, llama2-13b, " \
  "$blueprint" import megatron --system h100_sxm_80g --hf-config llama9 -- --micro-batch-size 1
expect_exit 2 "^error: cannot read ./h100_sxm_80g: No such file or directory$" \
  "$blueprint" import megatron --system ./h100_sxm_80g -- "${gpt3[@]}"
expect_exit 1 "^error: --hf-config given twice$" \
  "$blueprint" import megatron --hf-config qwen3-8b --system h100_sxm_80g --hf-config=qwen3-8b -- --bf16
expect_exit 1 "expected: blueprint import megatron --system SYS.json \[--hf-config CONFIG.json\] --" \
  "$blueprint" import megatron --system h100_sxm_80g --hf-config qwen3-8b
expect_exit 1 "usage:" "$blueprint" import megatron --hf-config qwen3-8b -- --bf16
expect_exit 1 "usage:" "$blueprint" import megatron --system h100_sxm_80g --hf-config= -- --bf16

# 4. A bad config: every problem, each naming its key.
printf '{"model_type": "gemma2", "hidden_size": "4096", "vocab_size": -1}' \
  > "$work/bad_config.json"
expect_exit 2 '^error: hf_config.model_type: expected one of "deepseek_v2", "deepseek_v3", "gemma", "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", got string "gemma2"$' \
  "$blueprint" import megatron --system h100_sxm_80g --hf-config "$work/bad_config.json" -- --micro-batch-size 1
for line in 'hf_config.num_hidden_layers: required key is missing' \
            'hf_config.hidden_size: expected an integer, got string "4096"' \
            'hf_config.vocab_size: expected a positive integer, got -1'; do
  grep -qxF "error: $line" "$work/err" || fail "bad config: no '$line': $(cat "$work/err")"
done
printf '[' > "$work/truncated.json"
expect_exit 2 "^error: hf_config: malformed JSON: parse error at line 1" \
  "$blueprint" import megatron --system h100_sxm_80g --hf-config "$work/truncated.json" -- --micro-batch-size 1

# 5. A config by name and by file: the same stdout, stderr and exit status
# (whatever the Megatron-LM adapter makes of the flags).
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); json.dump(d["models"]["qwen3-32b"], open(sys.argv[2], "w"))' \
  "$work/presets.json" "$work/qwen3.json" || fail "cannot write qwen3.json"
"$blueprint" import megatron --system h100_sxm_80g --hf-config qwen3-32b -- \
  --micro-batch-size 1 --bf16 > "$work/by_name.out" 2> "$work/by_name.err"
by_name=$?
"$blueprint" import megatron --hf-config="$work/qwen3.json" --system h100_sxm_80g -- \
  --micro-batch-size 1 --bf16 > "$work/by_file.out" 2> "$work/by_file.err"
by_file=$?
((by_name == by_file)) || fail "qwen3-32b: exit $by_name by name, $by_file by file"
cmp -s "$work/by_name.out" "$work/by_file.out" || fail "qwen3-32b: stdout differs"
cmp -s "$work/by_name.err" "$work/by_file.err" || fail "qwen3-32b: stderr differs"

# 6. End to end (needs the Megatron-LM adapter's model flags).
if [[ "$end_to_end" == "--end-to-end" ]]; then
  for system in "${systems[@]}"; do
    for model in "${models[@]}"; do
      spec="$work/$model.$system.json"
      "$blueprint" import megatron --system "$system" --hf-config "$model" -- \
        --micro-batch-size 1 --bf16 --tensor-model-parallel-size 4 \
        --sequence-parallel --seq-length 4096 > "$spec" 2> "$work/err" ||
        { fail "import $model on $system: $(cat "$work/err")"; continue; }
      "$blueprint" check "$spec" > /dev/null 2> "$work/err" ||
        fail "check $model on $system: $(cat "$work/err")"
      for field in '"mlp": "gated"' '"norm": "rmsnorm"' '"linear_bias": false' \
                   '"position_embedding": "rope"' '"divisible_by": 128' \
                   '"seq_size": 4096'; do
        grep -qF "$field" "$spec" || fail "$model on $system: no $field"
      done
    done
  done
  # Llama-3.1-8B: the config plus flags is the import of the equivalent flags.
  "$blueprint" import megatron --system h100_sxm_80g --hf-config llama3.1-8b -- \
    --micro-batch-size 1 --bf16 --seq-length 8192 > "$work/config.json" 2> "$work/err" ||
    fail "llama3.1-8b: $(cat "$work/err")"
  "$blueprint" import megatron --system h100_sxm_80g -- \
    --num-layers 32 --hidden-size 4096 --ffn-hidden-size 14336 \
    --num-attention-heads 32 --group-query-attention --num-query-groups 8 \
    --seq-length 8192 --max-position-embeddings 131072 --vocab-size 128256 \
    --make-vocab-size-divisible-by 128 --untie-embeddings-and-output-weights \
    --disable-bias-linear --swiglu --normalization RMSNorm \
    --position-embedding-type rope --micro-batch-size 1 --bf16 \
    > "$work/flags.json" 2> "$work/err" || fail "llama3.1-8b flags: $(cat "$work/err")"
  cmp -s "$work/config.json" "$work/flags.json" ||
    fail "llama3.1-8b: --hf-config differs from the equivalent flags"
fi

if ((failures)); then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "PASS${end_to_end:+ (end to end)}"
