#!/usr/bin/env python3
"""Derives tests/validation/corpus.json from the measured runs of
../shared/measured (runs.csv, models.csv; their README gives every source)
and the runs this project added beside this script (added_runs.csv,
added_models.csv, the same columns; README.md gives their sources).

Run once when the measured runs change:
  python3 tests/validation/make_corpus.py /work/shared/measured > tests/validation/corpus.json

Every row keeps its citation and its full mapping as Megatron-LM flags; a value
the source leaves open is filled with a stated default and listed in the
row's `assumptions`. A row that cannot be modelled is kept with a `skip`
reason. No measured value is changed.
"""
import csv
import json
import os
import sys

# The system presets (presets/systems) a measured GPU runs on: the DGX/HGX
# node of 8 GPUs, or for GB200/GB300 the NVL72 rack (Megatron-Bridge's
# DGX-GB200 and DGX-GB300 systems are NVL72 racks).
SYSTEMS = {"A100": "a100_sxm_80g", "H100": "h100_sxm_80g", "H200": "h200_sxm_141g",
           "H800": "h800_sxm_80g", "B200": "b200_sxm_180g", "B300": "b300_sxm_288g",
           "GB200": "gb200_nvl72", "GB300": "gb300_nvl72"}

# Blackwell GPUs: their rows are summarised in groups of their own, per
# precision recipe, so that the Ampere/Hopper groups keep their rows.
BLACKWELL = {"B200", "B300", "GB200", "GB300"}

# The summary group's recipe of a runs.csv precision token
# (measured/README.md): FP8 and FP8-CS are per-tensor scaling (delayed, or
# current); MXFP8 (FP8-MX), FP8 with 32x32 or 128x128 block scales and NVFP4
# are recipes of their own (RECIPE_FLAGS below: the recipe each is run in).
RECIPES = {"BF16": "bf16", "BF16?": "bf16", "FP16": "bf16", "FP8": "fp8", "FP8-CS": "fp8",
           "MXFP8": "mxfp8", "FP8-MX": "mxfp8", "FP8-block32x32": "fp8_block",
           "FP8-block128x128": "fp8_block", "NVFP4": "nvfp4"}

# Each precision token of runs.csv as the recipe its source names, in
# Megatron-LM's flags (core/spec/recipes.h): "FP8" leaves the recipe
# unstated, so Megatron-LM's default (delayed scaling) is taken.
RECIPE_FLAGS = {
    "FP8": (["--fp8-format", "hybrid"],
            "FP8 recipe unstated: Megatron-LM's default, delayed scaling (hybrid format)"),
    "FP8-CS": (["--fp8-format", "hybrid", "--fp8-recipe", "tensorwise"],
               "FP8 current scaling: --fp8-recipe tensorwise"),
    "FP8-block128x128": (["--fp8-format", "e4m3", "--fp8-recipe", "blockwise"],
                         "FP8 128x128 weight / 1x128 activation blocks: --fp8-recipe blockwise"),
    "FP8-block32x32": (["--fp8-format", "e4m3", "--fp8-recipe", "mxfp8"],
                       "FP8 32-element blocks (Megatron-Bridge 25.09's 32x32 footnote): priced as MXFP8"),
    "FP8-MX": (["--fp8-format", "e4m3", "--fp8-recipe", "mxfp8"], "MXFP8: --fp8-recipe mxfp8"),
    "MXFP8": (["--fp8-format", "e4m3", "--fp8-recipe", "mxfp8"], "MXFP8: --fp8-recipe mxfp8"),
    "NVFP4": (["--fp4-format", "e2m1", "--fp4-recipe", "nvfp4"], "NVFP4: --fp4-recipe nvfp4"),
}

# The attention kernel of each source's software. FlashAttention (Dao et al.,
# May 2022) reached Megatron-LM as --use-flash-attn in 2023; Narayanan et al.
# (2021), BLOOM (Megatron-DeepSpeed, trained 2022-03..07) and the NeMo
# Megatron launcher of 2022-09 ran Megatron's unfused attention (the s x s
# scores in memory, with its fused masked-softmax kernel). The NeMo and
# Megatron-Bridge containers of 2024 on run Transformer Engine's fused
# (flash) attention by default.
UNFUSED_ATTENTION_SOURCES = {"S7": "Megatron-LM 2021", "S10": "Megatron-DeepSpeed 2022",
                             "S11": "Metaseq 2022", "S12": "Megatron-LM 2022",
                             "S13": "NeMo Megatron launcher 2022-09",
                             "S15": "NeMo Megatron launcher 2022-07",
                             "S14": "Megatron-LM 2022"}

# DeepSeek-V3's pipeline layouts in the Megatron-Bridge recipes (S1's runs):
# recipes/deepseek/h100/deepseek_v3.py _get_deepseek_v3_pipeline_layout, per
# (p, v): the decoder layers of each of the p * v stages in model order, the
# embedding on the first and the MTP layer and the loss on the last (the
# recipe's one MTP layer: deepseek_v3.py sets cfg.model.mtp_num_layers = 1).
# Other (p, v) have no entry there (the recipe keeps its own layout, which
# the source does not print): those rows keep the uneven split.
DEEPSEEK_V3_LAYOUTS = {
    (4, 1): [16, 16, 16, 13],
    (8, 1): [8] * 7 + [5],
    (4, 2): [8] * 7 + [5],
    (16, 1): [4] * 15 + [1],
    (8, 2): [4] * 15 + [1],
    (4, 4): [4] * 15 + [1],
}


def layout_string(stage_layers):
    """Megatron-LM's --pipeline-model-parallel-layout for `stage_layers`."""
    stages = ["t" * n for n in stage_layers]
    stages[0] = "E" + stages[0]
    stages[-1] = stages[-1] + "mL"
    return "|".join(stages)


# The FLOP count behind a source's TFLOP/s (measured/README.md).
FLOP_DEFINITIONS = {
    "S1": "megatron_model",   # "Model TFLOP/sec/GPU": model FLOPs, no recompute
    "S2": "megatron_model",
    "S3": "megatron_model",   # NeMo's formula is not printed with the table
    "S4": "megatron_model",
    "S5": "megatron_model",
    "S7": "narayanan_eq3",    # Eq. 3: 96Bslh^2(1+s/6h+V/16lh), counts recompute
    "S10": "narayanan_eq3",   # hardware TFLOPs, the 4*2 coefficient (recompute)
    "S11": "hardware",
    "S12": "megatron_model",
    "S13": "megatron_model",
    "S14": "megatron_model",  # iteration times only
    "S15": "megatron_model",  # tokens/s only
}


def model_flags(m):
    """Megatron-LM architecture flags of one models.csv row, or a skip reason."""
    if "Mamba" in m["position_embedding"] or "Mamba" in m["moe_layers"] or m["model"].startswith("nemotron-3-nano"):
        return None, "hybrid Mamba-2/attention model: Mamba layers are not modelled"
    if m["vocab"].startswith("~"):
        return None, "vocabulary size not published (models.csv: %s)" % m["vocab"]
    flags = ["--num-layers", m["layers"], "--hidden-size", m["hidden"],
             "--ffn-hidden-size", m["ffn"].split()[0],
             "--num-attention-heads", m["heads"], "--vocab-size", m["vocab"]]
    if m["head_dim"].startswith("MLA"):
        flags += ["--multi-latent-attention", "--q-lora-rank", m["q_lora_rank"],
                  "--kv-lora-rank", m["kv_lora_rank"], "--qk-head-dim", m["qk_nope_head_dim"],
                  "--qk-pos-emb-head-dim", m["qk_rope_head_dim"], "--v-head-dim", m["v_head_dim"]]
    else:
        flags += ["--kv-channels", m["head_dim"]]
        if m["kv_heads"] != m["heads"]:
            flags += ["--group-query-attention", "--num-query-groups", m["kv_heads"]]
    if m["gated_mlp"].startswith("yes"):
        flags += ["--swiglu"]
    if m["norm"].startswith("RMSNorm"):
        flags += ["--normalization", "RMSNorm"]
    if not m["tied_embeddings"].startswith("yes"):
        flags += ["--untie-embeddings-and-output-weights"]
    pos = m["position_embedding"]
    if pos.startswith("learned"):
        flags += ["--position-embedding-type", "learned_absolute"]
    elif pos.startswith("ALiBi") or pos.startswith("none"):
        flags += ["--position-embedding-type", "none"]
    else:
        flags += ["--position-embedding-type", "rope"]
    # GPT-3, Megatron GPT and BLOOM keep Megatron-LM's linear biases; the
    # LLaMA, Qwen, Nemotron, DeepSeek and gpt-oss families have none.
    if not (m["model"].startswith("gpt3") or m["model"].startswith("megatron-gpt") or m["model"].startswith("bloom") or m["model"].startswith("opt")):
        flags += ["--disable-bias-linear"]
    if m["num_experts"]:
        flags += ["--num-experts", m["num_experts"], "--moe-router-topk", m["topk"],
                  "--moe-ffn-hidden-size", m["moe_ffn"]]
        if m["shared_expert_ffn"] not in ("", "0"):
            flags += ["--moe-shared-expert-intermediate-size", m["shared_expert_ffn"]]
        if m["moe_layers"].startswith("first"):
            dense = int(m["moe_layers"].split()[1])
            pattern = "[" + ",".join(["0"] * dense + ["1"] * (int(m["layers"]) - dense)) + "]"
            flags += ["--moe-layer-freq", pattern]
    return flags, None


# Megatron-Bridge's performance recipes per release (bridge_recipes.json,
# made by extract_bridge_recipes.py from the release branches; its docstring
# maps each NeMo container to its branch). S1's rows were measured with the
# settings of their container's recipe, which changed between releases: the
# precision recipe, the tensor-parallel overlap, the token dispatcher, the
# expert-parallel overlap, recompute, router fusion.
BRIDGE_RECIPES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bridge_recipes.json")

# A corpus precision token -> the recipe names of Megatron-Bridge's configs
# (underscores removed): FP8 on S1's Hopper rows is current scaling or
# subchannel (blockwise) scaling, told apart by the mapping if at all.
BRIDGE_PRECISIONS = {"BF16": {"BF16"}, "FP8": {"FP8CS", "FP8SC"}, "FP8-CS": {"FP8CS"},
                     "MXFP8": {"FP8MX"}, "FP8-MX": {"FP8MX"}, "NVFP4": {"NVFP4"},
                     "FP8-block128x128": {"FP8SC"}, "FP8-block32x32": {"FP8MX"}}

# Each Megatron-Bridge precision (scripts/performance/utils/precision.py
# get_precision_config; training/mixed_precision.py, the same in r0.2.0 to
# r0.6.0) in Megatron-LM's flags, with what the flags leave out.
BRIDGE_PRECISION_FLAGS = {
    "BF16": ([], "BF16 (bf16_mixed)"),
    "FP8CS": (["--fp8-format", "hybrid", "--fp8-recipe", "tensorwise", "--fp8-param-gather"],
              "FP8 current scaling with FP8 parameter all-gathers (bf16_with_fp8_current_scaling_mixed; "
              "the performance scripts turn its BF16 first and last layers off)"),
    "FP8SC": (["--fp8-format", "hybrid", "--fp8-recipe", "blockwise"],
              "FP8 blockwise scaling, 128x128 weights and 1x128 activations (bf16_with_fp8_subchannel_scaling_mixed)"),
    "FP8MX": (["--fp8-format", "e4m3", "--fp8-recipe", "mxfp8", "--fp8-param-gather"],
              "MXFP8 with FP8 parameter all-gathers (bf16_with_mxfp8_mixed)"),
    "NVFP4": (["--fp4-format", "e2m1", "--fp4-recipe", "nvfp4"], "NVFP4 (bf16_with_nvfp4_mixed)"),
}

# Recompute modules the import models (core/adapters/README.md).
MODELLED_RECOMPUTE_MODULES = {"core_attn", "moe_act", "layernorm", "mla_up_proj", "mlp",
                              "moe", "shared_experts"}

_bridge_rows = None


def bridge_recipe(r, moe):
    """The recipe config S1's row (of an MoE model or not) ran with, or
    (None, why not)."""
    global _bridge_rows
    if _bridge_rows is None:
        _bridge_rows = json.load(open(BRIDGE_RECIPES))["rows"]
    want = BRIDGE_PRECISIONS.get(r["precision"], set())
    dims = {"num_gpus": int(r["gpus"]), "global_batch_size": as_int(r["gbs"]),
            "micro_batch_size": as_int(r["mbs"]), "tensor_model_parallel_size": as_int(r["tp"]),
            "pipeline_model_parallel_size": as_int(r["pp"]),
            "context_parallel_size": as_int(r["cp"]) or 1,
            "expert_model_parallel_size": as_int(r["ep"]) or 1,
            "virtual_pipeline_model_parallel_size": as_int(r["vp"])}
    defaults = {"tensor_model_parallel_size": 1, "pipeline_model_parallel_size": 1,
                "context_parallel_size": 1, "expert_model_parallel_size": 1,
                "virtual_pipeline_model_parallel_size": None, "micro_batch_size": 1}
    found = []
    for b in _bridge_rows:
        if r["container"] not in b["containers"] or b["model"] != r["model"] or b["gpu"] != r["gpu"]:
            continue
        if b["precision"].replace("_", "") not in want:
            continue
        if all(b.get(k, defaults.get(k)) == v for k, v in dims.items()):
            found.append(b)
    releases = {c for b in _bridge_rows for c in b["containers"]}
    if r["container"] not in releases:
        return None, "no Megatron-Bridge recipe read for %s (extract_bridge_recipes.py)" % r["container"]
    settings = {json.dumps(recipe_flags(b, moe, as_int(r["tp"]) or 1), sort_keys=True) for b in found}
    if not found:
        return None, "no %s recipe of %s matches the row's mapping" % (r["container"], r["model"])
    if len(settings) > 1:
        return None, "%d %s recipes match the row's mapping with different settings (%s)" % (
            len(found), r["container"], ", ".join(b["config"] for b in found))
    return found[0], None


def recipe_flags(b, moe, t):
    """(Megatron-LM flags, notes) of a recipe's settings for a row of `t`
    tensor-parallel ranks, as scripts/performance/utils/overrides.py
    set_workload_base_configs (r0.2.0..r0.5.0) or the r0.6.0 perf_recipes
    functions apply them."""
    flags, notes = list(BRIDGE_PRECISION_FLAGS[b["precision"].replace("_", "")][0]), []
    if b["precision"] == "NVFP4" and b["release"] not in ("r0.2.0", "r0.3.0", "r0.4.0"):
        notes.append("FP4 parameter all-gathers (bf16_with_nvfp4_mixed fp4_param_gather, from r0.5.0) not modelled")
    # CommOverlapConfig turns the overlap off below two tensor-parallel ranks
    # (training/comm_overlap.py); Megatron-Bridge's recipes run sequence
    # parallelism with t > 1 (WorkloadBaseConfig.sequence_parallel).
    if b.get("tp_comm_overlap") and t > 1:
        if moe:
            notes.append("tensor-parallel communication overlap (the recipe's tp_comm_overlap) not modelled with MoE")
        else:
            flags += ["--tp-comm-overlap"]
    for field, what in (("cuda_graph_impl", "CUDA graphs"), ("cutedsl_fused_grouped_mlp", "the CuTe DSL fused grouped MLP"),
                        ("fp8_dot_product_attention", "FP8 attention"),
                        ("cpu_offloading_num_layers", "activation offloading")):
        if b.get(field) and b.get(field) != "none":
            scope = b.get("cuda_graph_scope") if field == "cuda_graph_impl" else None
            notes.append("%s (%s%s) not modelled" % (what, b[field], ", scope %s" % scope if scope else ""))
    if not moe:
        return flags, notes
    backend = b.get("moe_flex_dispatcher_backend")
    dispatcher = b.get("moe_token_dispatcher_type")
    if b["release"] != "r0.6.0":
        # apply_flex_dispatcher_backend (training/flex_dispatcher_backend.py):
        # DeepEP only on Ampere, Hopper, B200 and B300, HybridEP on
        # Ampere to Blackwell; else the recipe's all-to-all.
        dispatcher = "alltoall"
        if backend == "hybridep" or (backend == "deepep" and b["gpu"] not in ("GB200", "GB300")):
            dispatcher = "flex"
    if dispatcher == "flex" and backend in ("deepep", "hybridep"):
        flags += ["--moe-token-dispatcher-type", "flex", "--moe-flex-dispatcher-backend", backend]
    else:
        flags += ["--moe-token-dispatcher-type", "alltoall"]
    overlap = b.get("moe_a2a_overlap") or b.get("overlap_moe_expert_parallel_comm")
    if overlap:
        # _set_moe_a2a_overlap_overrides: the overlap with delayed wgrad.
        flags += ["--overlap-moe-expert-parallel-comm"]
        if b.get("moe_a2a_overlap") or b.get("delay_wgrad_compute"):
            flags += ["--delay-wgrad-compute"]
    modules = b.get("recompute_modules")
    if b.get("recompute_num_layers") is not None:
        notes.append("recipe recompute_num_layers %s (full block recompute) not passed" % b["recompute_num_layers"])
    elif modules:
        kept = [m for m in modules if m in MODELLED_RECOMPUTE_MODULES]
        if kept:
            flags += ["--recompute-granularity", "selective", "--recompute-modules"] + kept
        if len(kept) != len(modules):
            notes.append("recompute modules not modelled: %s" % ", ".join(m for m in modules if m not in kept))
    if b.get("moe_router_fusion"):
        flags += ["--moe-router-fusion"]
    return flags, notes


def as_int(text):
    return int(text) if text.strip() else None


def row_of(r, models):
    out = {
        "id": r["id"], "source_key": r["source_key"], "source": r["source"],
        "trust": r["trust"], "gpu": r["gpu"], "system_name": r["system"],
        "precision": r["precision"], "gpus": int(r["gpus"]), "model": r["model"],
        "measured_metric": r["measured_metric"], "measured_value": float(r["measured_value"]),
        "flop_definition": FLOP_DEFINITIONS[r["source_key"]],
        "derived": r["derived"], "notes": r["notes"], "assumptions": [],
        # A "low" trust is a mapping the source does not print (launcher
        # defaults, a partly stated configuration): its rows' ranking is
        # reported beside #45's goals, never in them.
        "mapping_assumed": r["trust"].startswith("low"),
    }
    m = models.get(r["model"])
    moe = bool(m and m["num_experts"])
    fp8 = "FP8" in r["precision"] or "FP4" in r["precision"]
    recipe = RECIPES[r["precision"]]
    if r["gpu"] in BLACKWELL:
        # blackwell_<recipe> (dense) or blackwell_moe_<recipe>; bf16 dense
        # keeps the name of its Hopper group.
        out["group"] = "blackwell_" + ("moe_" if moe else "") + (
            "bf16_dense" if recipe == "bf16" and not moe else recipe)
        # A source's Blackwell rows have a summary of their own, so that the
        # regression gate's figure of its Hopper rows stays comparable.
        out["summary_source"] = r["source_key"] + "/blackwell"
    else:
        out["group"] = "moe" if moe else ("fp8" if fp8 else "bf16_dense")
    system = SYSTEMS.get(r["gpu"])
    # BLOOM's Jean Zay nodes: 8 A100 80GB on NVLink, but 4 Omni-Path links
    # per node (the BLOOM README's hardware list), a quarter of a DGX A100's
    # per-GPU InfiniBand: their own preset (presets/systems/README.md).
    if system and r["system"].startswith("Jean Zay"):
        system = "jean_zay_a100_80g"
    out["system"] = system or ""
    def skip(reason):
        out["skip"] = reason
        return out
    if not system:
        return skip("no system preset for %s (%s): no preset is fabricated" % (r["gpu"], r["trust"]))
    if m is None:
        return skip("model %s has no architecture in models.csv" % r["model"])
    if r["layers_override"]:
        return skip("proxy run with a truncated model")
    flags, reason = model_flags(m)
    if reason:
        return skip(reason)
    a = out["assumptions"]
    t, p, cp, ep = as_int(r["tp"]), as_int(r["pp"]), as_int(r["cp"]) or 1, as_int(r["ep"]) or 1
    if t is None or p is None:
        return skip("tensor and pipeline degrees not given by the source")
    gbs, mbs = as_int(r["gbs"]), as_int(r["mbs"])
    if gbs is None:
        return skip("global batch size not given by the source")
    if mbs is None:
        mbs = 1
        a.append("micro batch size 1 (not given)")
    seq = int(r["seq"])
    gpus = int(r["gpus"])
    d = gpus // (t * p * cp)
    if d * t * p * cp != gpus:
        return skip("gpus %d is not a multiple of t*p*cp = %d" % (gpus, t * p * cp))
    vp = as_int(r["vp"])
    recompute = r["recompute"]
    if recompute.startswith("full, block, 0 layers"):
        rc = "none"
        a.append("recompute none (launcher yaml: full, block, 0 layers)")
    elif recompute.startswith("full"):
        rc = "full"
    elif recompute.startswith("selective"):
        rc = "selective"
    elif r["source_key"] == "S7":
        # Narayanan et al. count every run's FLOPs with Eq. 3, which includes
        # the recompute forward pass; the ZeRO-3 baselines of Table 2 print
        # no recompute column, and without it their activations (b up to 4,
        # s 2048, h 12288+) do not fit in 80 GB.
        rc = "full"
        a.append("full activation recompute (not printed; Eq. 3 counts it, and without it the activations exceed 80 GB)")
    else:
        rc = "none"
        if r["source_key"] in ("S1", "S2", "S3", "S4", "S5"):
            a.append("no activation recompute (not printed)")
    sp_text = r["seq_parallel"]
    if sp_text.startswith("yes"):
        sp = True
    elif sp_text.startswith("no"):
        sp = False
    elif r["source_key"] in ("S1", "S2", "S3", "S4", "S5") and t > 1:
        sp = True
        a.append("sequence parallel with t > 1 (NeMo/Megatron-Bridge recipes' default)")
    else:
        sp = False
    fsdp = as_int(r["fsdp"]) or 0
    if fsdp == 1 and "FSDP on" in r["notes"]:
        # The 25.04 GB200 table prints FSDP as a 0/1 flag (the row's notes:
        # "FSDP=1 (FSDP on)"): sharded over every data-parallel rank.
        fsdp = d
        a.append("FSDP over all %d data-parallel ranks (the source's FSDP column is the flag 1)" % d)
    if r["source_key"] in ("S1", "S2", "S3", "S4", "S5"):
        dist_opt, overlap = True, True
        a.append("distributed optimizer and overlapped gradient reduction (NeMo/Megatron-Bridge recipes' default)")
    elif r["source_key"] == "S10":
        dist_opt, overlap = True, False
        a.append("ZeRO-1-like BF16 optimizer as Megatron-LM's distributed optimizer; no overlapped gradient reduction")
    elif r["source_key"] == "S13":
        # The launcher yaml at the table's commit (3579cdb3) names
        # optim.name: distributed_fused_adam: Apex's DistributedFusedAdam
        # shards the optimizer states over data parallelism and overlaps
        # the gradient reduction with the backward (overlap_grad_sync, on by
        # default).
        dist_opt, overlap = True, True
        a.append("distributed optimizer with overlapped gradient reduction (launcher yaml at 3579cdb3: optim distributed_fused_adam, Apex's overlap_grad_sync default)")
    elif r["source_key"] == "S15":
        # The launcher yaml at the table's commit (0a94c378) names
        # optim.name: fused_adam with megatron_amp_O2 and bf16: NeMo r1.10's
        # MainParamsOptimizerWrapper (megatron_gpt_model.py
        # configure_optimizers) keeps fp32 main gradients in a contiguous
        # bucket and all-reduces them asynchronously during the backward
        # only when pipeline_model_parallel_size is 1.
        dist_opt, overlap = False, p == 1
        a.append("plain data parallelism (launcher yaml at 0a94c378: optim fused_adam); gradient all-reduce overlapped with the backward only for p = 1 (NeMo r1.10 MainParamsOptimizerWrapper async_grad_allreduce)")
    else:
        dist_opt, overlap = False, False
        if d > 1:
            a.append("plain data parallelism without overlap (Megatron-LM of the time)")
    if vp is None and p > 1:
        a.append("no interleaved schedule (V not given)")
    args = flags + ["--seq-length", str(seq)]
    if "--position-embedding-type" in args and args[args.index("--position-embedding-type") + 1] == "learned_absolute":
        args += ["--max-position-embeddings", str(seq)]
    args += ["--tensor-model-parallel-size", str(t), "--pipeline-model-parallel-size", str(p)]
    recipe_row = None
    if r["source_key"] == "S1":
        recipe_row, why = bridge_recipe(r, moe)
        if recipe_row is None:
            a.append(why + (": Megatron-LM's defaults" if moe else ": the precision's stated flags"))
            if moe:
                # Megatron-Bridge's model bridges set the alltoall dispatcher
                # (e.g. models/deepseek/deepseek_v3_bridge.py,
                # models/qwen/qwen3_moe_bridge.py), not Megatron-LM's
                # allgather default.
                args += ["--moe-token-dispatcher-type", "alltoall"]
                a.append("the all-to-all dispatcher (Megatron-Bridge's MoE model providers set moe_token_dispatcher_type alltoall)")
    deepseek_v3_recipe = r["model"] == "deepseek-v3" and r["source_key"] == "S1"
    layout = DEEPSEEK_V3_LAYOUTS.get((p, vp or 1)) if deepseek_v3_recipe else None
    if recipe_row is not None and recipe_row.get("pp_layout"):
        layout = recipe_row["pp_layout"]
    if vp and vp > 1 and layout is None:
        # A layout string sets the virtual stages itself (Megatron-LM asserts
        # that no virtual-stage flag comes with it).
        args += ["--num-virtual-stages-per-pipeline-rank", str(vp)]
    if cp > 1:
        args += ["--context-parallel-size", str(cp)]
    if ep > 1:
        args += ["--expert-model-parallel-size", str(ep)]
        if r["source_key"] == "S1":
            args += ["--expert-tensor-parallel-size", "1"]
            a.append("expert tensor parallelism 1 (Megatron-Bridge MoE recipes' default)")
    if recipe_row is not None:
        more, notes = recipe_flags(recipe_row, moe, t)
        args += more
        a.append("Megatron-Bridge %s recipe %s (%s): %s" % (
            recipe_row["release"], recipe_row["config"], recipe_row["file"], " ".join(more)))
        a.append(BRIDGE_PRECISION_FLAGS[recipe_row["precision"].replace("_", "")][1])
        a += notes
    args += ["--world-size", str(gpus), "--micro-batch-size", str(mbs), "--global-batch-size", str(gbs)]
    if sp and t > 1:
        args += ["--sequence-parallel"]
    if rc == "full":
        args += ["--recompute-granularity", "full", "--recompute-method", "uniform", "--recompute-num-layers", "1"]
    elif rc == "selective":
        args += ["--recompute-granularity", "selective"]
    if fsdp:
        if fsdp != d:
            return skip("sharding group %d is not the data-parallel group %d" % (fsdp, d))
        args += ["--use-megatron-fsdp", "--data-parallel-sharding-strategy", "optim_grads_params"]
    elif dist_opt:
        args += ["--use-distributed-optimizer"]
    if overlap and d > 1:
        args += ["--overlap-grad-reduce"]
    if r["precision"].startswith("FP16"):
        args += ["--fp16"]
    else:
        args += ["--bf16"]
        if r["precision"].startswith("BF16?"):
            a.append("BF16 (precision not stated)")
    if fp8 and recipe_row is None:
        flags, note = RECIPE_FLAGS[r["precision"]]
        args += flags
        a.append(note)
    if r["source_key"] in UNFUSED_ATTENTION_SOURCES:
        out["attention_kernel"] = "unfused"
        a.append("unfused attention (%s predates FlashAttention in Megatron-LM): the refined profile's flash_attention and causal_attention corrections are off" % UNFUSED_ATTENTION_SOURCES[r["source_key"]])
    else:
        out["attention_kernel"] = "flash"
    layers = int(m["layers"])
    if deepseek_v3_recipe:
        args += ["--mtp-num-layers", "1"]
        a.append("one MTP layer (Megatron-Bridge's DeepSeek-V3 recipe: cfg.model.mtp_num_layers = 1)")
    if isinstance(layout, str):
        args += ["--pipeline-model-parallel-layout", layout]
        a.append("pipeline layout %s: the recipe's (pp_layout)" % layout)
    elif layout is not None:
        args += ["--pipeline-model-parallel-layout", layout_string(layout)]
        a.append("pipeline layout %s: Megatron-Bridge's DeepSeek-V3 recipe table (_get_deepseek_v3_pipeline_layout) for p %d, v %d" % (layout_string(layout), p, vp or 1))
    out["uneven_stages"] = layers % p != 0 and layout is None
    if out["uneven_stages"]:
        a.append("%d blocks over %d stages: uneven stages (blocks per stage rounded up), as the framework's own split (embedding/loss counted as layers, or a partition method) makes them" % (layers, p))
    out["mapping"] = {"t": t, "p": p, "v": vp or 1, "cp": cp, "ep": ep, "d": d,
                      "mbs": mbs, "gbs": gbs, "seq": seq, "recompute": rc,
                      "sequence_parallel": sp and t > 1,
                      "distributed_optimizer": dist_opt and not fsdp,
                      "fsdp": fsdp}
    out["megatron_args"] = args
    return out


def main():
    root = sys.argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    models = {}
    runs = []
    for folder in (root, here):
        prefix = "" if folder == root else "added_"
        models.update({m["model"]: m for m in csv.DictReader(open(os.path.join(folder, prefix + "models.csv")))})
        runs += list(csv.DictReader(open(os.path.join(folder, prefix + "runs.csv"))))
    rows = [row_of(r, models) for r in runs]
    doc = {"format": "blueprinting.validation_corpus/1",
           "derived_from": "shared/measured/runs.csv and models.csv (331 runs; README.md there gives every source), and tests/validation/added_runs.csv and added_models.csv (README.md gives their sources)",
           "rows": rows}
    json.dump(doc, sys.stdout, indent=1, sort_keys=True, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
