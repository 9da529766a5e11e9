// The canonical spec ("blueprinting.spec/1", core/spec/spec_json.cc) as the
// page edits it: its form fields, path access, the check a spec from a URL
// must pass before the form shows it, and the training/inference switch.

export const SPEC_FORMAT = 'blueprinting.spec/1';

const training = (spec) => spec.kind === 'training';
const inference = (spec) => spec.kind === 'inference';
// Schedules with a number of virtual stages (forward chunks per stage).
const hasVirtualStages = (spec) =>
  ['interleaved_1f1b', 'forward_only'].includes(spec.parallelism?.pipeline?.schedule?.type);
const rsAg = (spec) => spec.parallelism?.tensor?.communication?.type === 'rs_ag';

const MODEL_INTS = [
  ['hidden', 'Hidden size'], ['feedforward', 'Feed-forward size'],
  ['seq_size', 'Sequence length'], ['attn_heads', 'Attention heads'],
  ['attn_size', 'Attention head size'], ['num_blocks', 'Transformer blocks'],
];

// Every editable field. `errorPath` (default `path`) is the JSON path whose
// error lines belong next to the field; `when` says if the spec has the field.
// Types: int, text, bool, select (options), tier (a network tier index).
export const FIELDS = [
  {section: 'model', path: 'model.name', type: 'text', label: 'Model name'},
  ...MODEL_INTS.map(([key, label]) =>
    ({section: 'model', path: `model.${key}`, type: 'int', label, min: 1})),

  {section: 'shape', path: 'kind', type: 'select', label: 'Job',
   options: [['training', 'Training'], ['inference', 'Inference']]},
  {section: 'shape', path: 'parallelism.tensor.degree', type: 'int', min: 1,
   label: 'Tensor parallel (t)'},
  {section: 'shape', path: 'parallelism.pipeline.degree', type: 'int', min: 1,
   label: 'Pipeline parallel (p)'},
  {section: 'shape', path: 'parallelism.data.degree', type: 'int', min: 1,
   label: 'Data parallel (d)', when: training},
  {section: 'shape', path: 'parallelism.replica.degree', type: 'int', min: 1,
   label: 'Replicas', when: inference},
  {section: 'shape', path: 'parallelism.pipeline.schedule.type', type: 'select',
   errorPath: 'parallelism.pipeline.schedule', label: 'Pipeline schedule',
   options: [['single_stage', 'Single stage'], ['1f1b', '1F1B'],
             ['interleaved_1f1b', 'Interleaved 1F1B'], ['forward_only', 'Forward only']]},
  {section: 'shape', path: 'parallelism.pipeline.schedule.virtual_stages', type: 'int',
   min: 1, label: 'Virtual stages (v)', when: hasVirtualStages},
  {section: 'shape', path: 'parallelism.pipeline.stage_layout', type: 'select',
   label: 'Stage layout',
   options: [['even', 'Even'], ['uneven', 'Uneven (round up)']]},
  {section: 'shape', path: 'batch.global_batch_size', type: 'int', min: 1,
   label: 'Global batch size'},
  {section: 'shape', path: 'batch.microbatch_size', type: 'int', min: 1,
   label: 'Microbatch size'},

  {section: 'comm', path: 'parallelism.tensor.communication.type', type: 'select',
   errorPath: 'parallelism.tensor.communication', label: 'TP communication',
   options: [['ar', 'All-reduce (ar)'], ['rs_ag', 'Reduce-scatter + all-gather (rs_ag)'],
             ['p2p_rs_ag', 'Edge RS + AG (p2p_rs_ag)']]},
  {section: 'comm', path: 'parallelism.tensor.communication.all_gather_redo',
   type: 'bool', label: 'Redo all-gather in backward', when: rsAg},
  {section: 'comm', path: 'parallelism.tensor.overlap', type: 'select',
   label: 'TP overlap', options: [['none', 'None'], ['ring', 'Ring'], ['pipe', 'Pipe']]},
  {section: 'comm', path: 'parallelism.data.overlap', type: 'bool',
   label: 'Overlap DP communication', when: training},
  {section: 'comm', path: 'parallelism.data.optimizer_sharding', type: 'bool',
   label: 'Optimizer sharding', when: training},
  {section: 'comm', path: 'parallelism.tensor.network_tier', type: 'tier',
   label: 'Network tier for t'},
  {section: 'comm', path: 'parallelism.pipeline.network_tier', type: 'tier',
   label: 'Network tier for p'},
  {section: 'comm', path: 'parallelism.data.network_tier', type: 'tier',
   label: 'Network tier for d', when: training},
  {section: 'comm', path: 'parallelism.replica.network_tier', type: 'tier',
   label: 'Network tier for replicas', when: inference},

  {section: 'exec', path: 'parallelism.recompute', type: 'select', label: 'Recompute',
   options: [['none', 'None'], ['attn_only', 'Attention only'], ['full', 'Full']],
   when: training},
  {section: 'exec', path: 'options.datatype', type: 'select', label: 'Datatype',
   options: [['float8', 'float8'], ['float16', 'float16'], ['bfloat16', 'bfloat16'],
             ['float32', 'float32']]},
  {section: 'exec', path: 'options.attention', type: 'select', label: 'Attention',
   options: [['multihead', 'Multi-head'], ['multiquery', 'Multi-query']]},
  {section: 'exec', path: 'options.fused_activation', type: 'bool', label: 'Fused activation'},
  {section: 'exec', path: 'options.offload.weights', type: 'bool', label: 'Offload weights'},
  {section: 'exec', path: 'options.offload.activations', type: 'bool',
   label: 'Offload activations'},
  {section: 'exec', path: 'options.offload.optimizer', type: 'bool',
   label: 'Offload optimizer'},
];

export function getPath(object, path) {
  let value = object;
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, key)) {
      return undefined;
    }
    value = value[key];
  }
  return value;
}

export function setPath(object, path, value) {
  const keys = path.split('.');
  let target = object;
  for (const key of keys.slice(0, -1)) target = target[key];
  target[keys.at(-1)] = value;
}

export const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

// The keys each object of a spec has (the canonical format spells all out).
function expectedKeys(spec) {
  const schedule = ['type', ...(hasVirtualStages(spec) ? ['virtual_stages'] : [])];
  const communication = ['type', ...(rsAg(spec) ? ['all_gather_redo'] : [])];
  const keys = {
    '': ['batch', 'format', 'kind', 'model', 'options', 'parallelism', 'system'],
    'model': ['name', ...MODEL_INTS.map(([k]) => k)],
    'batch': ['global_batch_size', 'microbatch_size'],
    'options': ['attention', 'datatype', 'fused_activation', 'offload'],
    'options.offload': ['activations', 'optimizer', 'weights'],
    'parallelism.tensor': ['communication', 'degree', 'network_tier', 'overlap'],
    'parallelism.tensor.communication': communication,
    'parallelism.pipeline': ['degree', 'network_tier', 'schedule', 'stage_layout'],
    'parallelism.pipeline.schedule': schedule,
  };
  if (training(spec)) {
    keys['parallelism'] = ['data', 'pipeline', 'recompute', 'tensor'];
    keys['parallelism.data'] = ['degree', 'network_tier', 'optimizer_sharding', 'overlap'];
  } else {
    keys['parallelism'] = ['pipeline', 'replica', 'tensor'];
    keys['parallelism.replica'] = ['degree', 'network_tier'];
  }
  return keys;
}

function valueProblem(field, value) {
  switch (field.type) {
    case 'int':
    case 'tier':
      return Number.isSafeInteger(value) ? null : 'expected an integer below 2^53';
    case 'bool':
      return typeof value === 'boolean' ? null : 'expected true or false';
    case 'text':
      return typeof value === 'string' && value.length <= 200 ? null
                                                              : 'expected a short string';
    case 'select':
      return field.options.some(([v]) => v === value) ? null
          : `expected one of ${field.options.map(([v]) => v).join(', ')}`;
  }
  return 'unknown field type';
}

// The problems that keep `spec` (untrusted, parsed JSON) out of the form: a
// wrong shape or value type the form cannot show. Rule violations (v not
// dividing the blocks, ...) are not problems here: the checker reports those
// next to their fields. The system is checked by the core.
export function shapeProblems(spec) {
  if (!isObject(spec)) return ['the spec is not a JSON object'];
  if (spec.format !== SPEC_FORMAT) return [`format: expected "${SPEC_FORMAT}"`];
  if (spec.kind !== 'training' && spec.kind !== 'inference') {
    return ['kind: expected "training" or "inference"'];
  }
  const problems = [];
  for (const [path, keys] of Object.entries(expectedKeys(spec))) {
    const object = path ? getPath(spec, path) : spec;
    if (!isObject(object)) {
      problems.push(`${path}: expected an object`);
      continue;
    }
    for (const key of Object.keys(object)) {
      if (!keys.includes(key)) problems.push(`${path ? path + '.' : ''}${key}: unknown key`);
    }
  }
  if (!isObject(spec.system)) problems.push('system: expected an object');
  if (problems.length) return problems;
  for (const field of FIELDS) {
    if (field.when && !field.when(spec)) continue;
    const problem = valueProblem(field, getPath(spec, field.path));
    if (problem) problems.push(`${field.path}: ${problem}`);
  }
  return problems;
}

// Switches a spec between training and inference in place, keeping what
// carries over (degrees, tiers); `memory` keeps the training-only choices
// for switching back.
export function setKind(spec, kind, memory) {
  if (spec.kind === kind) return;
  const par = spec.parallelism;
  const pipeline = par.pipeline;
  if (kind === 'inference') {
    memory.training = {data: par.data, recompute: par.recompute, schedule: pipeline.schedule,
                       optimizerOffload: spec.options.offload.optimizer};
    spec.parallelism = {
      tensor: par.tensor, pipeline,
      replica: {degree: par.data.degree, network_tier: par.data.network_tier},
    };
    pipeline.schedule = pipeline.degree > 1 ? {type: 'forward_only', virtual_stages: 1}
                                            : {type: 'single_stage'};
    spec.options.offload.optimizer = false;
  } else {
    const old = memory.training;
    spec.parallelism = {
      tensor: par.tensor, pipeline,
      data: {degree: par.replica.degree, network_tier: par.replica.network_tier,
             optimizer_sharding: old?.data.optimizer_sharding ?? false,
             overlap: old?.data.overlap ?? false},
      recompute: old?.recompute ?? 'none',
    };
    const oldType = old?.schedule.type;
    pipeline.schedule = pipeline.degree === 1 ? {type: 'single_stage'}
        : oldType === '1f1b' || oldType === 'interleaved_1f1b' ? old.schedule : {type: '1f1b'};
    spec.options.offload.optimizer = old?.optimizerOffload ?? false;
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
  if (path === 'parallelism.tensor.communication.type') {
    const old = spec.parallelism.tensor.communication;
    if (old.all_gather_redo !== undefined) memory.allGatherRedo = old.all_gather_redo;
    spec.parallelism.tensor.communication = value === 'rs_ag'
        ? {type: value, all_gather_redo: memory.allGatherRedo ?? false} : {type: value};
    return;
  }
  setPath(spec, path, value);
}

// Calculon's application JSON (the model without its name).
export function appJson(spec) {
  const {name, ...app} = spec.model;
  return JSON.stringify(app);
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
