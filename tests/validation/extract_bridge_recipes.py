#!/usr/bin/env python3
"""Megatron-Bridge's performance recipes for the models of S1, per release.

usage: extract_bridge_recipes.py MEGATRON_BRIDGE_GIT_DIR > bridge_recipes.json

S1's measured runs (docs/performance-summary.md) come from the NeMo container
of their `container` column, each built from one Megatron-Bridge release
branch (the branch's own performance-summary.md opens with that container):
r0.2.0 25.11, r0.3.0 26.02 and 26.02.01, r0.4.0 26.04 and 26.04.01, r0.5.0
26.06 and 26.06.01, r0.6.0 26.08. The recipes changed between releases (the
token dispatcher, the expert-parallel overlap, recompute, CUDA graphs), so
the same mapping was measured with different settings; this reads, from each
branch, the settings every workload of S1's models ran with, for
make_corpus.py:

* r0.2.0 to r0.5.0: scripts/performance/configs/<family>/*workload_base_
  configs.py, plain data (WorkloadBaseConfig(...) and dataclasses.replace
  chains), evaluated with a stand-in WorkloadBaseConfig that keeps every
  field given; what scripts/performance/utils/overrides.py
  set_workload_base_configs makes of them is make_corpus.py's.
  The family's own settings (set_<family>_common_configs, e.g. the fused
  router) come first. r0.2.0 hands the dispatcher backend to the model
  recipe's function, r0.3.0 on to apply_flex_dispatcher_backend: the same
  setting either way.
* r0.6.0: src/megatron/bridge/perf_recipes/<family>/<gpu>/*.py, one function
  per workload assigning cfg.model.* and cfg.train.* fields, read with `ast`
  (no import): the assignments of each function and of the helpers it calls
  from the family's common.py.
* The tensor-parallel communication overlap, which r0.2.0 to r0.5.0 set in
  the family's per-GPU function (scripts/performance/configs/<family>/
  *llm_pretrain.py, e.g. llama3_70b_pretrain_config_gb200), either there
  (CommOverlapConfig(tp_comm_overlap=...)) or in the model recipe it calls
  (src/megatron/bridge/recipes/, e.g. llama3_70b_pretrain_config), and which
  the function turns off for NVFP4 (`tp_comm_overlap = False if precision ==
  "nvfp4" else ...`).

Nothing here is run from Megatron-Bridge: files are read with `git show`.
"""
import ast
import json
import re
import subprocess
import sys

RELEASES = {
    "r0.2.0": ["NeMo 25.11"],
    "r0.3.0": ["NeMo 26.02", "NeMo 26.02.01"],
    "r0.4.0": ["NeMo 26.04", "NeMo 26.04.01"],
    "r0.5.0": ["NeMo 26.06", "NeMo 26.06.01"],
    "r0.6.0": ["NeMo 26.08"],
}

# The corpus's model names by the recipes' (upper-case config names in
# r0.2.0..r0.5.0, function names in r0.6.0).
MODELS = {
    "DEEPSEEK_V3": "deepseek-v3",
    "GPT_OSS_120B": "gpt-oss-120b",
    "QWEN3_30B_A3B": "qwen3-30b-a3b",
    "QWEN3_235B_A22B": "qwen3-235b-a22b",
    "KIMI_K2": "kimi-k2",
    "LLAMA3_8B": "llama3-8b",
    "LLAMA3_70B": "llama3-70b",
    "LLAMA31_405B": "llama3.1-405b",
}

# The fields make_corpus.py reads, as WorkloadBaseConfig names them.
FIELDS = [
    "num_gpus", "tensor_model_parallel_size", "pipeline_model_parallel_size",
    "context_parallel_size", "virtual_pipeline_model_parallel_size",
    "expert_model_parallel_size", "expert_tensor_parallel_size",
    "global_batch_size", "micro_batch_size", "moe_flex_dispatcher_backend",
    "moe_token_dispatcher_type", "moe_a2a_overlap", "recompute_modules",
    "recompute_num_layers", "recompute_granularity", "cuda_graph_impl",
    "cuda_graph_scope", "cutedsl_fused_grouped_mlp",
    "fp8_dot_product_attention", "cpu_offloading_num_layers", "pp_layout",
    "moe_router_fusion", "moe_shared_expert_overlap",
    "overlap_moe_expert_parallel_comm", "delay_wgrad_compute",
    "use_megatron_fsdp", "nccl_ub", "tp_comm_overlap",
]

NAME = re.compile(r"^(?P<model>[A-Z0-9_]+?)_PRETRAIN_CONFIG_(?P<gpu>[A-Z0-9]+)_"
                  r"(?P<precision>[A-Z0-9_]+?)(?:_(?P<variant>V\d+|LARGE_SCALE))?$")


def git_show(git_dir, ref, path):
    return subprocess.run(["git", "--git-dir", git_dir, "show", "%s:%s" % (ref, path)],
                          check=True, capture_output=True, text=True).stdout


def git_files(git_dir, ref, prefix):
    out = subprocess.run(["git", "--git-dir", git_dir, "ls-tree", "-r", "--name-only", ref, prefix],
                         check=True, capture_output=True, text=True).stdout
    return out.split()


class StandIn:
    """WorkloadBaseConfig's fields as given (its defaults are the class's)."""

    def __init__(self, **fields):
        self.fields = dict(fields)


def replace(base, **fields):
    merged = dict(base.fields)
    merged.update(fields)
    return StandIn(**merged)


def base_configs(git_dir, ref):
    """NAME -> fields of every *_PRETRAIN_CONFIG_* of the release's MoE families."""
    out = {}
    for path in git_files(git_dir, ref, "scripts/performance/configs/"):
        if not path.endswith("workload_base_configs.py"):
            continue
        text = git_show(git_dir, ref, path)
        # The data only: the imports are the stand-ins'.
        code = "\n".join(line for line in text.splitlines()
                         if not re.match(r"^\s*(from|import)\s", line))
        names = {"WorkloadBaseConfig": StandIn, "replace": replace}
        exec(compile(code, path, "exec"), names)  # the release's data, no imports
        for name, value in names.items():
            # r0.3.0 on: MODEL_PRETRAIN_CONFIG_GPU_PRECISION_VARIANT; r0.2.0:
            # MODEL_GPU_PRECISION_BASE_CONFIG (one variant).
            old = re.match(r"^([A-Z0-9_]+?)_((?:GB|B|H)\d+)_(.+)_BASE_CONFIG$", name)
            if old and isinstance(value, StandIn):
                name = "%s_PRETRAIN_CONFIG_%s_%s" % old.groups()
            if isinstance(value, StandIn) and "_PRETRAIN_CONFIG_" in name:
                out[name] = (value.fields, path)
    return out


def literal(node):
    try:
        return ast.literal_eval(node)
    except ValueError:
        return None


def assignments(statements, helpers, seen=()):
    """The cfg.model/train/comm_overlap fields statements set, in order (a
    later assignment wins; an `if`'s branches are read in order too)."""
    fields = {}
    for statement in statements:
        if isinstance(statement, ast.FunctionDef):
            fields.update(assignments(statement.body, helpers, seen))
        elif isinstance(statement, ast.If):
            fields.update(assignments(statement.body + statement.orelse, helpers, seen))
        elif isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target = statement.targets[0]
            value = statement.value
            # cfg = another_workload_config(): that one's fields first.
            if (isinstance(target, ast.Name) and isinstance(value, ast.Call)
                    and isinstance(value.func, ast.Name) and value.func.id in helpers
                    and value.func.id not in seen):
                fields.update(assignments(helpers[value.func.id].body, helpers,
                                          seen + (value.func.id,)))
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Attribute):
                fields[target.attr] = literal(statement.value)
            elif (isinstance(target, ast.Attribute) and target.attr == "comm_overlap"
                  and isinstance(statement.value, ast.Call)):
                for keyword in statement.value.keywords:
                    fields[keyword.arg] = literal(keyword.value)
        elif (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)
              and isinstance(statement.value.func, ast.Name)):
            callee = statement.value.func.id
            # r0.6.0: set_deepseek_v3_pipeline_model_parallel_layout(cfg.model,
            # "Et*4|...") sets the layout string it is given.
            if (callee.endswith("_pipeline_model_parallel_layout") and len(statement.value.args) > 1
                    and isinstance(literal(statement.value.args[1]), str)):
                fields["pp_layout"] = literal(statement.value.args[1])
            if callee in helpers and callee not in seen:
                fields.update(assignments(helpers[callee].body, helpers, seen + (callee,)))
    return fields


# The per-family settings of r0.2.0..r0.5.0 (set_<family>_common_configs in
# scripts/performance/configs/<family>/*llm_pretrain.py, applied to every
# workload of the family before set_workload_base_configs): their MoE
# models by function name.
COMMON_CONFIGS = {
    "set_deepseek_v3_common_configs": ["deepseek-v3"],
    "set_gpt_oss_common_configs": ["gpt-oss-120b"],
    "set_qwen3_common_configs": ["qwen3-30b-a3b", "qwen3-235b-a22b"],
    "set_kimi_k2_common_configs": ["kimi-k2"],
    "set_llama3_common_configs": ["llama3-8b", "llama3-70b"],
    "set_llama31_common_configs": ["llama3.1-405b"],
}


def common_configs(git_dir, ref):
    """model -> the fields its family's common settings assign."""
    out = {}
    for path in git_files(git_dir, ref, "scripts/performance/configs/"):
        if not path.endswith("llm_pretrain.py"):
            continue
        for node in ast.parse(git_show(git_dir, ref, path)).body:
            if isinstance(node, ast.FunctionDef) and node.name in COMMON_CONFIGS:
                for model in COMMON_CONFIGS[node.name]:
                    out[model] = assignments(node.body, {})
    return out


# A per-GPU function of scripts/performance/configs/<family>/*llm_pretrain.py:
# llama3_70b_gb200_config (r0.2.0) or llama3_70b_pretrain_config_gb200.
GPU_FUNCTION = re.compile(r"^(?P<model>[a-z0-9_]+?)_(?:pretrain_config_)?"
                          r"(?P<gpu>gb300|gb200|b300|b200|h100)(?:_config)?$")


def tp_overlap_of(function):
    """tp_comm_overlap of the first CommOverlapConfig(...) `function` builds,
    or None when it builds none."""
    for node in ast.walk(function):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id == "CommOverlapConfig"):
            for keyword in node.keywords:
                if keyword.arg == "tp_comm_overlap":
                    return literal(keyword.value)
            return False  # CommOverlapConfig's default
    return None


def tp_comm_overlaps(git_dir, ref):
    """(model, GPU) -> (tp_comm_overlap, off for NVFP4) of the release's
    per-GPU functions, the model recipe's when the function keeps it."""
    recipes = {}
    for path in git_files(git_dir, ref, "src/megatron/bridge/recipes/"):
        if path.endswith(".py"):
            for node in ast.parse(git_show(git_dir, ref, path)).body:
                if isinstance(node, ast.FunctionDef):
                    recipes[node.name] = node
    out = {}
    for path in git_files(git_dir, ref, "scripts/performance/configs/"):
        if not path.endswith("llm_pretrain.py"):
            continue
        for node in ast.parse(git_show(git_dir, ref, path)).body:
            match = isinstance(node, ast.FunctionDef) and GPU_FUNCTION.match(node.name)
            if not match or match.group("model").upper() not in MODELS:
                continue
            overlap = tp_overlap_of(node)
            if overlap is None:
                called = [n.func.id for n in ast.walk(node) if isinstance(n, ast.Call)
                          and isinstance(n.func, ast.Name) and n.func.id.endswith("_pretrain_config")]
                overlap = bool(called and called[0] in recipes and tp_overlap_of(recipes[called[0]]))
            nvfp4_off = any(isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Attribute)
                            and n.targets[0].attr == "tp_comm_overlap" and "nvfp4" in ast.dump(n.value)
                            for n in ast.walk(node))
            out[(MODELS[match.group("model").upper()], match.group("gpu").upper())] = (overlap, nvfp4_off)
    return out


def perf_recipes(git_dir, ref):
    """NAME -> fields of every *_config() of the release's perf_recipes."""
    out = {}
    files = git_files(git_dir, ref, "src/megatron/bridge/perf_recipes/")
    for path in files:
        parts = path.split("/")
        if len(parts) != 7 or not path.endswith(".py") or parts[-1] == "__init__.py":
            continue
        family, gpu = parts[4], parts[5]
        helpers = {}
        common = "src/megatron/bridge/perf_recipes/%s/common.py" % family
        if common in files:
            for node in ast.parse(git_show(git_dir, ref, common)).body:
                if isinstance(node, ast.FunctionDef):
                    helpers[node.name] = node
        tree = ast.parse(git_show(git_dir, ref, path))
        own = dict(helpers)
        own.update({node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)})
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name.endswith("_config"):
                fields = assignments(node.body, own, (node.name,))
                fields["gpu"] = gpu
                out[node.name] = (fields, path)
    return out


def entry(ref, name, fields, path, model, gpu, precision, variant):
    row = {"release": ref, "containers": RELEASES[ref], "config": name, "file": path,
           "model": model, "gpu": gpu, "precision": precision, "variant": variant}
    for field in FIELDS:
        if fields.get(field) is not None:
            row[field] = fields[field]
    return row


def main():
    git_dir = sys.argv[1]
    rows = []
    for ref in RELEASES:
        if ref == "r0.6.0":
            for name, (fields, path) in sorted(perf_recipes(git_dir, ref).items()):
                # e.g. qwen3_235b_a22b_pretrain_64gpu_gb300_bf16_config
                match = re.match(r"^(?P<model>.+?)_pretrain_(?P<gpus>\d+)gpu_(?P<gpu>[a-z0-9]+)_"
                                 r"(?P<precision>[a-z0-9_]+?)_config$", name)
                if not match or match.group("model").upper() not in MODELS:
                    continue
                fields = dict(fields)
                fields["num_gpus"] = int(match.group("gpus"))
                for ours, theirs in (("global_batch_size", "global_batch_size"),
                                     ("micro_batch_size", "micro_batch_size")):
                    fields[ours] = fields.get(theirs)
                rows.append(entry(ref, name, fields, path, MODELS[match.group("model").upper()],
                                  match.group("gpu").upper(), match.group("precision").upper(), None))
            continue
        common = common_configs(git_dir, ref)
        overlaps = tp_comm_overlaps(git_dir, ref)
        for name, (fields, path) in sorted(base_configs(git_dir, ref).items()):
            match = NAME.match(name)
            if not match or match.group("model") not in MODELS:
                continue
            model = MODELS[match.group("model")]
            # The family's settings first, the workload's over them.
            fields = dict(common.get(model, {}), **fields)
            overlap, nvfp4_off = overlaps.get((model, match.group("gpu")), (False, False))
            fields["tp_comm_overlap"] = overlap and not (nvfp4_off and match.group("precision") == "NVFP4")
            rows.append(entry(ref, name, fields, path, model,
                              match.group("gpu"), match.group("precision"),
                              match.group("variant")))
    json.dump({"format": "blueprinting.bridge_recipes/1",
               "derived_from": "Megatron-Bridge release branches %s (tests/validation/extract_bridge_recipes.py)"
                               % ", ".join(RELEASES),
               "rows": rows}, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
