// The canonical spec ("blueprinting.spec/3", core/spec/spec_json.cc) as the
// page edits it: its form fields (from the core's metadata) and the
// training/inference switch. A spec from elsewhere (a share link) is read
// by the core (`canonical`), never judged here.

import {getPath, setPath} from './dom.js';

// What an optional part of the model holds when the form switches it on (a
// starting point the user edits; the checker judges it like any other).
const OPTIONAL_DEFAULTS = {
  'model.moe': {experts: 8, topk: 2, ffn: 14336, shared_ffn: 0, layer_pattern: '',
                capacity_factor: 1, router_fusion: false, aux_loss: false},
  'model.latent_attention': {q_lora_rank: 1536, kv_lora_rank: 512, qk_head_dim: 128,
                             qk_rope_head_dim: 64, v_head_dim: 128},
};

// The stage layout control's choice for an explicit layout
// (parallelism.pipeline.stage_blocks given, stage_layout even).
export const EXPLICIT_LAYOUT = 'explicit';

// The stage layout control's value: explicit when the spec has stage_blocks.
export function stageLayoutChoice(pipeline) {
  return Array.isArray(pipeline?.stage_blocks) ? EXPLICIT_LAYOUT : pipeline?.stage_layout;
}

// A starting point for an explicit layout (the user edits it; the checker
// judges it): model.num_blocks over the p * v (virtual) stages, the first
// ones one block more where they do not divide.
function splitBlocks(spec) {
  const pipeline = spec.parallelism.pipeline;
  const stages = Math.max(1, pipeline.degree * (pipeline.schedule.virtual_stages ?? 1));
  const blocks = spec.model.num_blocks;
  if (!Number.isSafeInteger(stages) || stages > 4096 || !Number.isSafeInteger(blocks)) return [blocks];
  return Array.from({length: stages},
                    (_, k) => Math.floor(blocks / stages) + (k < blocks % stages ? 1 : 0));
}

// The form: which spec fields it shows, in which section, with which label
// (presentation). Everything else about a field comes from the core's
// metadata (web/metadata.js): its type, its choices, its range, which spec
// kinds and alternatives have it. `control: 'tier'` shows an integer as a
// choice of the system's network tiers; `control: 'layout'` shows the stage
// layout's choices and `explicit` (parallelism.pipeline.stage_blocks given);
// `control: 'list'` an integer array as comma-separated numbers.
const FORM = [
  ['model', 'model.name', 'Model name'],
  ['model', 'model.hidden', 'Hidden size'],
  ['model', 'model.feedforward', 'Feed-forward size'],
  ['model', 'model.seq_size', 'Sequence length'],
  ['model', 'model.attn_heads', 'Attention heads'],
  ['model', 'model.attn_size', 'Attention head size'],
  ['model', 'model.num_blocks', 'Transformer blocks'],
  ['model', 'model.moe', 'Mixture of experts'],
  ['model', 'model.moe.experts', 'Routed experts'],
  ['model', 'model.moe.topk', 'Experts per token (top-k)'],
  ['model', 'model.moe.ffn', 'Expert feed-forward size'],
  ['model', 'model.moe.shared_ffn', 'Shared experts feed-forward size'],
  ['model', 'model.moe.layer_pattern', 'MoE blocks (0/1 per block, empty: all)'],
  ['model', 'model.moe.capacity_factor', 'Capacity factor'],
  ['model', 'model.moe.router_fusion', 'Fused router kernels'],
  ['model', 'model.moe.aux_loss', 'Auxiliary load-balancing loss'],
  ['model', 'model.latent_attention', 'Multi-latent attention'],
  ['model', 'model.latent_attention.q_lora_rank', 'Query latent rank (0: none)'],
  ['model', 'model.latent_attention.kv_lora_rank', 'Key/value latent rank'],
  ['model', 'model.latent_attention.qk_head_dim', 'Query/key head size (no position)'],
  ['model', 'model.latent_attention.qk_rope_head_dim', 'Query/key rotary head size'],
  ['model', 'model.latent_attention.v_head_dim', 'Value head size'],
  ['model', 'model.mtp_layers', 'Multi-token prediction blocks'],

  ['shape', 'kind', 'Job'],
  ['shape', 'parallelism.tensor.degree', 'Tensor parallel (t)'],
  ['shape', 'parallelism.pipeline.degree', 'Pipeline parallel (p)'],
  ['shape', 'parallelism.data.degree', 'Data parallel (d)'],
  ['shape', 'parallelism.context.degree', 'Context parallel (cp)'],
  ['shape', 'parallelism.expert.degree', 'Expert parallel (ep)'],
  ['shape', 'parallelism.expert.tensor_degree', 'Expert tensor parallel (0: t)'],
  ['shape', 'parallelism.replica.degree', 'Replicas'],
  ['shape', 'parallelism.pipeline.schedule.type', 'Pipeline schedule'],
  ['shape', 'parallelism.pipeline.schedule.virtual_stages', 'Virtual stages (v)'],
  ['shape', 'parallelism.pipeline.stage_layout', 'Stage layout', 'layout'],
  ['shape', 'parallelism.pipeline.stage_blocks', 'Blocks per stage (p × v, comma-separated)',
   'list'],
  ['shape', 'batch.global_batch_size', 'Global batch size'],
  ['shape', 'batch.microbatch_size', 'Microbatch size'],

  ['comm', 'parallelism.tensor.communication.type', 'TP communication'],
  ['comm', 'parallelism.tensor.communication.all_gather_redo', 'Redo all-gather in backward'],
  ['comm', 'parallelism.tensor.overlap', 'TP overlap'],
  ['comm', 'parallelism.data.overlap', 'Overlap DP communication'],
  ['comm', 'parallelism.data.sharding.type', 'Data-parallel sharding (ZeRO)'],
  ['comm', 'parallelism.data.sharding.group', 'Sharding group (0: all of d)'],
  ['comm', 'parallelism.context.exchange', 'Context K/V exchange'],
  ['comm', 'parallelism.expert.dispatcher', 'Expert token dispatcher'],
  ['comm', 'parallelism.expert.overlap', 'Overlap the expert all-to-all (combined 1F1B)'],
  ['comm', 'parallelism.expert.delay_wgrad', 'Delay expert weight gradients'],
  ['comm', 'parallelism.expert.shared_expert_overlap', 'Shared experts beside the all-to-all'],
  ['comm', 'parallelism.tensor.network_tier', 'Network tier for t', 'tier'],
  ['comm', 'parallelism.pipeline.network_tier', 'Network tier for p', 'tier'],
  ['comm', 'parallelism.data.network_tier', 'Network tier for d', 'tier'],
  ['comm', 'parallelism.context.network_tier', 'Network tier for cp', 'tier'],
  ['comm', 'parallelism.expert.network_tier', 'Network tier for the expert all-to-all',
   'tier'],
  ['comm', 'parallelism.replica.network_tier', 'Network tier for replicas', 'tier'],

  ['exec', 'parallelism.recompute', 'Recompute'],
  ['exec', 'options.datatype', 'Datatype'],
  ['exec', 'options.gemm_datatype', 'GEMM datatype (FP8/FP4 training)'],
  ['exec', 'options.recipe', 'Low-precision recipe'],
  ['exec', 'options.unquantized_first_blocks', 'First blocks outside the recipe'],
  ['exec', 'options.unquantized_last_blocks', 'Last blocks outside the recipe'],
  ['exec', 'options.weight_datatype', 'Weight datatype'],
  ['exec', 'options.grad_reduce_datatype', 'Gradient reduction datatype'],
  ['exec', 'options.attention', 'Attention'],
  ['exec', 'options.profile', 'Performance model profile'],
  ['exec', 'options.fused_activation', 'Fused activation'],
  ['exec', 'options.offload.weights', 'Offload weights'],
  ['exec', 'options.offload.activations', 'Offload activations'],
  ['exec', 'options.offload.optimizer', 'Offload optimizer'],
];

// A line under a field that says more than its label.
const HINTS = {
  'parallelism.pipeline.stage_blocks':
    'Entry k runs on pipeline rank k mod p (its chunk k div p), as Megatron-LM lays a ' +
    'layout out. The embedding sits on the first entry\'s stage and the loss on the ' +
    'last\'s: a recipe that counts them as layers gives those stages fewer blocks.',
};

// The form's fields with what the metadata says about each:
// {section, path, label, type (int, text, bool, select, tier), options
// ([[value, text, meaning]]), min, max, errorPath, when(spec)}. The type
// field of a sum type (an enum that is a variant) stands for the whole
// alternative: its errors are those of the parent object. Throws if the
// core no longer has a field the form shows.
export function formFields(meta) {
  return FORM.map(([section, path, label, control]) => {
    const info = meta.field(path);
    const field = {section, path, label, when: (spec) => meta.applies(path, spec),
                   hint: HINTS[path]};
    if (control === 'tier' || control === 'list') field.type = control;
    else if (info.type === 'object' && info.nullable) field.type = 'present';
    else if (info.type === 'integer') field.type = 'int';
    else if (info.type === 'number') field.type = 'num';
    else if (info.type === 'boolean') field.type = 'bool';
    else if (info.type === 'string' && info.choices) field.type = 'select';
    else if (info.type === 'string') field.type = 'text';
    else throw new Error(`the form cannot show ${path} (${info.type})`);
    if (field.type === 'select') {
      field.options = meta.fieldChoices(path).map((c) => [c.name, c.name, c.meaning]);
      // A nullable choice: '' stands for null (the same as options.datatype;
      // the gradient reduction's: the profile's choice).
      if (info.nullable) {
        field.nullable = true;
        field.options.unshift(path === 'options.grad_reduce_datatype'
          ? ['', 'as the profile says', 'null: float32 for bfloat16 under megatron_mixed ' +
             'precision with the refined profile, else options.datatype']
          : ['', 'same as the datatype', 'null: options.datatype']);
      }
      if (meta.isVariant(info.choices) && path.endsWith('.type')) {
        field.errorPath = path.slice(0, -'.type'.length);
      }
    }
    if (control === 'layout') {
      // The spec's stage_layout choices, then an explicit layout
      // (stage_blocks), which the spec writes with stage_layout even.
      field.type = 'layout';
      field.options.push([EXPLICIT_LAYOUT, EXPLICIT_LAYOUT,
                          'parallelism.pipeline.stage_blocks: the blocks of each (virtual) ' +
                          'stage, as a recipe lays them out']);
    }
    if (control === 'list') {
      // Shown only while the spec has the array (an explicit layout).
      field.when = (spec) => Array.isArray(getPath(spec, path)) && meta.applies(path, spec);
    }
    if (info.min !== undefined) field.min = info.min;
    if (info.max !== undefined) field.max = info.max;
    if (info.why !== undefined) field.why = info.why;
    return field;
  });
}

export const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

// Switches a spec between training and inference in place, keeping what
// carries over (degrees, tiers); `memory` keeps the training-only choices
// (the optimizer's offload, the gradient reduction's datatype, which the
// checker wants null in inference) for switching back.
export function setKind(spec, kind, memory) {
  if (spec.kind === kind) return;
  const par = spec.parallelism;
  const pipeline = par.pipeline;
  if (kind === 'inference') {
    memory.training = {data: par.data, recompute: par.recompute,
                       recomputeModules: par.recompute_modules, schedule: pipeline.schedule,
                       context: par.context, expert: par.expert,
                       optimizerOffload: spec.options.offload.optimizer,
                       gradReduce: spec.options.grad_reduce_datatype};
    spec.parallelism = {
      tensor: par.tensor, pipeline,
      replica: {degree: par.data.degree, network_tier: par.data.network_tier},
    };
    pipeline.schedule = pipeline.degree > 1 ? {type: 'forward_only', virtual_stages: 1}
                                            : {type: 'single_stage'};
    spec.options.offload.optimizer = false;
    spec.options.grad_reduce_datatype = null;
  } else {
    const old = memory.training;
    spec.parallelism = {
      tensor: par.tensor, pipeline,
      data: {degree: par.replica.degree, network_tier: par.replica.network_tier,
             sharding: old?.data.sharding ?? {type: 'none'},
             overlap: old?.data.overlap ?? false},
      context: old?.context ?? {degree: 1, exchange: 'ring', network_tier: 0},
      expert: old?.expert ?? {degree: 1, tensor_degree: 0, network_tier: 0,
                              dispatcher: 'all_to_all', overlap: false,
                              delay_wgrad: false, shared_expert_overlap: false},
      recompute: old?.recompute ?? 'none',
    };
    // parallelism.recompute_modules is printed only when given.
    if (old?.recomputeModules) spec.parallelism.recompute_modules = old.recomputeModules;
    const oldType = old?.schedule.type;
    pipeline.schedule = pipeline.degree === 1 ? {type: 'single_stage'}
        : oldType === '1f1b' || oldType === 'interleaved_1f1b' ? old.schedule : {type: '1f1b'};
    spec.options.offload.optimizer = old?.optimizerOffload ?? false;
    spec.options.grad_reduce_datatype = old?.gradReduce ?? null;
  }
  spec.kind = kind;
}

// Sets a field, keeping the sum types' shapes canonical (a schedule has
// virtual_stages only when interleaved, a communication has all_gather_redo
// only with rs_ag). `memory` remembers the last v and redo for switching back.
export function setField(spec, path, value, memory) {
  if (path === 'kind') return setKind(spec, value, memory);
  if (path === 'parallelism.pipeline.schedule.type') {
    const old = spec.parallelism.pipeline.schedule;
    if (old.virtual_stages !== undefined) memory.virtualStages = old.virtual_stages;
    spec.parallelism.pipeline.schedule = value === 'interleaved_1f1b'
        ? {type: value, virtual_stages: memory.virtualStages ?? 2}
        : value === 'forward_only' ? {type: value, virtual_stages: 1} : {type: value};
    return;
  }
  if (path === 'parallelism.pipeline.stage_layout') {
    // explicit: stage_blocks (the last one given, or an even start) with
    // stage_layout even, as the CLI's import writes it; even or uneven: no
    // stage_blocks.
    const pipeline = spec.parallelism.pipeline;
    if (Array.isArray(pipeline.stage_blocks)) memory.stageBlocks = pipeline.stage_blocks;
    if (value === EXPLICIT_LAYOUT) {
      pipeline.stage_layout = 'even';
      pipeline.stage_blocks = [...(memory.stageBlocks ?? splitBlocks(spec))];
    } else {
      delete pipeline.stage_blocks;
      pipeline.stage_layout = value;
    }
    return;
  }
  if (path === 'parallelism.tensor.communication.type') {
    const old = spec.parallelism.tensor.communication;
    if (old.all_gather_redo !== undefined) memory.allGatherRedo = old.all_gather_redo;
    spec.parallelism.tensor.communication = value === 'rs_ag'
        ? {type: value, all_gather_redo: memory.allGatherRedo ?? false} : {type: value};
    return;
  }
  if (path === 'parallelism.data.sharding.type') {
    const old = spec.parallelism.data.sharding;
    if (old.group !== undefined) memory.shardingGroup = old.group;
    spec.parallelism.data.sharding = value === 'none'
        ? {type: value} : {type: value, group: memory.shardingGroup ?? 0};
    return;
  }
  if (Object.hasOwn(OPTIONAL_DEFAULTS, path)) {
    // On: the part last switched off, or a starting point; off: null.
    const old = getPath(spec, path);
    if (isObject(old)) memory[path] = old;
    setPath(spec, path, value ? structuredClone(memory[path] ?? OPTIONAL_DEFAULTS[path])
                              : null);
    return;
  }
  setPath(spec, path, value);
}

// Calculon's application JSON (the model without its name).
export function appJson(spec) {
  const {name, ...app} = spec.model;
  return JSON.stringify(app);
}

// Calculon's application keys: a model with only these is Calculon's.
const CALCULON_APP_KEYS = new Set(
    ['hidden', 'feedforward', 'seq_size', 'attn_heads', 'attn_size', 'num_blocks']);

// The model as `search` reads it (core/adapters/calculon.h
// FromCalculonApplication): Calculon's application JSON for a model with
// Calculon's keys only; else the spec's model object with its name, which
// marks it as a spec model (GQA, gated MLP, vocabulary, experts, latent
// attention), whose keys a Calculon application may not have.
export function searchAppJson(spec) {
  const calculon = Object.keys(spec.model).every(
      (key) => key === 'name' || CALCULON_APP_KEYS.has(key));
  return calculon ? appJson(spec) : JSON.stringify(spec.model);
}

// Calculon's system JSON (the system without its name).
export function systemJson(spec) {
  const {name, ...system} = spec.system;
  return JSON.stringify(system);
}

// The field an error belongs to: the longest field whose errorPath is its
// `field` or a prefix of it (`system.networks[0].size` belongs to
// `system.networks`). The core names the field of every error; its message
// text is never parsed.
export function fieldForError(error, fields) {
  const target = error?.field ?? '';
  let best = null;
  const pathOf = (field) => field.errorPath ?? field.path;
  for (const field of fields) {
    const path = pathOf(field);
    const next = target.charAt(path.length);
    if (target.startsWith(path) && (next === '' || next === '.' || next === '[') &&
        (!best || path.length > pathOf(best).length)) {
      best = field;
    }
  }
  return best;
}
