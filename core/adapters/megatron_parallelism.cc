// The parallelism and batch sections' rules of the Megatron-LM adapter
// (megatron_internal.h): the data degree from the world size, the pipeline
// schedule and layout, recompute, tensor, context and expert parallelism,
// the expert dispatcher, data-parallel sharding and overlap, and the global
// batch's default.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "core/adapters/megatron_internal.h"
#include "core/adapters/megatron_layout.h"
#include "core/base/checked_math.h"
#include "core/base/field_errors.h"
#include "core/spec/derive.h"

namespace blueprint {
namespace megatron_internal {
namespace {

// The last network tier, where groups too wide for the first talk.
int64_t OutermostTier(const System& system) {
  return system.networks.empty()
             ? 0
             : static_cast<int64_t>(system.networks.size()) - 1;
}

// The tier of a group whose ranks lie within `ranks` neighbouring ranks:
// tier 0 when they fit in it (and fill it evenly if it must be filled),
// otherwise the last tier. Megatron-LM orders ranks tensor, context,
// expert, data, pipeline (megatron/core/parallel_state.py, the default
// order "tp-cp-ep-dp-pp"), so a tensor group spans t ranks, a context group
// t cp, a data group t cp d and a pipeline group every rank: a 64-GPU job
// inside one 72-GPU NVLink domain exchanges its gradients over NVLink.
int64_t TierOfNeighbours(const System& system, std::optional<int64_t> ranks) {
  if (system.networks.empty()) return 0;
  const NetworkTier& first = system.networks.front();
  const bool fits = ranks && *ranks <= first.size &&
                    (!first.must_be_filled || first.size % *ranks == 0);
  return fits ? 0 : OutermostTier(system);
}

// Megatron-FSDP's --data-parallel-sharding-strategy as a sharding over all
// data-parallel ranks.
DataSharding ShardingOfStrategy(const std::string& strategy) {
  if (strategy == "optim") return ShardOptimizer{};
  if (strategy == "optim_grads") return ShardGradients{};
  if (strategy == "optim_grads_params") return ShardParameters{};
  return NoSharding{};
}

// Context parallelism: how the ranks exchange keys and values, and where.
void ContextRules(const System& system, Conversion* c) {
  ContextParallel& context = c->spec.parallelism.context;
  const std::string exchange =
      c->flags.Choice("--cp-comm-type").value_or("p2p");
  context.exchange = exchange == "allgather" ? ContextExchange::kAllGather
                                             : ContextExchange::kRing;
  if (exchange == "a2a" || exchange == "a2a+p2p") {
    c->Error(
        "--cp-comm-type", ErrorCode::kUnsupported,
        absl::StrCat("unsupported Megatron-LM flag --cp-comm-type ", exchange,
                     ": all-to-all (Ulysses) context parallelism is not "
                     "modelled (parallelism.context.exchange is ring, "
                     "p2p, or all_gather, allgather)"));
  }
  if (context.degree == 1) {
    // Nothing to exchange: the spec keeps its defaults.
    if (c->flags.Given("--cp-comm-type")) {
      c->notes.push_back(
          "--cp-comm-type has no effect with one context-parallel rank");
    }
    context = ContextParallel{};
    return;
  }
  context.network_tier = TierOfNeighbours(
      system, CheckedMul(c->spec.parallelism.tensor.degree, context.degree));
}

// Expert parallelism: needs experts; its tensor degree and its tier.
void ExpertRules(const System& system, Conversion* c) {
  ExpertParallel& expert = c->spec.parallelism.expert;
  const ParsedFlags& flags = c->flags;
  expert.tensor_degree = 0;
  if (!c->spec.model.moe.has_value()) {
    if (expert.degree > 1 && !flags.Given("--num-experts")) {
      c->Error("--expert-model-parallel-size", ErrorCode::kInconsistent,
               absl::StrCat("--expert-model-parallel-size (", expert.degree,
                            ") needs --num-experts, as Megatron-LM asserts"));
    }
    if (!flags.Given("--num-experts")) {
      NoteIdle(flags, {"--expert-tensor-parallel-size"}, "--num-experts",
               &c->notes);
    }
  } else {
    expert.tensor_degree =
        flags.Integer("--expert-tensor-parallel-size").value_or(0);
  }
  // One expert-parallel rank has no all-to-all: tier 0, the default.
  const int64_t t = c->spec.parallelism.tensor.degree;
  expert.network_tier =
      expert.degree == 1
          ? 0
          : TierOfNeighbours(system, CheckedMul(expert.degree,
                                                ExpertTensorDegree(expert, t)));
}

// The expert dispatcher: Megatron-LM's --moe-token-dispatcher-type (its
// default allgather for a model with experts; a dense model keeps the
// spec's all_to_all, which nothing reads), its
// flex backend (megatron/core/transformer/moe/token_dispatcher.py
// MoEFlexTokenDispatcher) or the older --moe-enable-deepep, which
// transformer_config.py allows only with the flex type.
void DispatcherRules(Conversion* c) {
  const ParsedFlags& flags = c->flags;
  ExpertParallel& expert = c->spec.parallelism.expert;
  const std::string type =
      flags.Choice("--moe-token-dispatcher-type")
          .value_or(c->spec.model.moe.has_value() ? "allgather" : "alltoall");
  const std::string backend =
      flags.Choice("--moe-flex-dispatcher-backend").value_or("deepep");
  const bool deepep = flags.Switch("--moe-enable-deepep");
  if (deepep && type != "flex") {
    c->Error("--moe-enable-deepep", ErrorCode::kInconsistent,
             absl::StrCat("--moe-enable-deepep needs "
                          "--moe-token-dispatcher-type flex, not ",
                          type, ", as Megatron-LM asserts"));
  }
  if (type != "flex") {
    if (flags.Given("--moe-flex-dispatcher-backend")) {
      c->notes.push_back(
          "--moe-flex-dispatcher-backend has no effect without "
          "--moe-token-dispatcher-type flex");
    }
    expert.dispatcher = type == "allgather" ? ExpertDispatcher::kAllGather
                                            : ExpertDispatcher::kAllToAll;
    return;
  }
  if (backend == "ncclep" && !deepep) {
    c->Error("--moe-flex-dispatcher-backend", ErrorCode::kUnsupported,
             "--moe-flex-dispatcher-backend ncclep is not modelled (deepep "
             "and hybridep are)");
  }
  expert.dispatcher = backend == "hybridep" && !deepep
                          ? ExpertDispatcher::kHybridEp
                          : ExpertDispatcher::kDeepEp;
}

// The pipeline layout flags' values (megatron_layout.h).
PipelineLayoutFlags PipelineLayoutFlagsOf(const ParsedFlags& flags,
                                          int64_t layers, int64_t mtp_layers,
                                          int64_t p, int64_t v,
                                          bool virtual_given) {
  std::optional<std::string> layout;
  if (const Value* given = flags.Find("--pipeline-model-parallel-layout")) {
    layout = given->pattern;
  }
  // In PipelineLayoutFlags' order.
  return {layers,
          mtp_layers,
          p,
          v,
          flags.Integer("--num-layers-per-virtual-pipeline-stage"),
          virtual_given,
          flags.Integer("--decoder-first-pipeline-num-layers"),
          flags.Integer("--decoder-last-pipeline-num-layers"),
          flags.Switch("--account-for-embedding-in-pipeline-split"),
          flags.Switch("--account-for-loss-in-pipeline-split"),
          std::move(layout)};
}

// The data degree: --world-size over the model-parallel ranks (1 without
// it).
int64_t DataDegree(int64_t t, int64_t cp, int64_t p, Conversion* c) {
  const ParsedFlags& flags = c->flags;
  const std::optional<int64_t> world = flags.Integer("--world-size");
  if (!world) return 1;
  const std::optional<int64_t> model_parallel = CheckedProduct({t, cp, p});
  if (!model_parallel || *world % *model_parallel != 0) {
    c->Error("--world-size", ErrorCode::kNotDivisible,
             absl::StrCat(
                 "--world-size (", *world,
                 ") must be divisible by "
                 "--tensor-model-parallel-size (",
                 t, ") * ",
                 flags.Given("--context-parallel-size")
                     ? absl::StrCat("--context-parallel-size (", cp, ") * ")
                     : "",
                 "--pipeline-model-parallel-size (", p, ")"));
    return 1;
  }
  return *world / *model_parallel;
}

// The pipeline schedule and its stage layout: v from at most one of three
// flags, then the layout flags (megatron_layout.h).
void PipelineRules(const System& system, Conversion* c) {
  const ParsedFlags& flags = c->flags;
  PipelineParallel& pipeline = c->spec.parallelism.pipeline;
  const int64_t p = pipeline.degree;
  int64_t v = 1;
  const std::optional<int64_t> layers = flags.Integer("--num-layers");
  const std::optional<int64_t> layers_per_virtual =
      flags.Integer("--num-layers-per-virtual-pipeline-stage");
  std::vector<std::string> chunk_flags;
  std::optional<int64_t> chunks;
  for (const char* name : {"--virtual-pipeline-model-parallel-size",
                           "--num-virtual-stages-per-pipeline-rank",
                           "--num-layers-per-virtual-pipeline-stage"}) {
    if (!flags.Integer(name)) continue;
    chunk_flags.push_back(name);
    if (name != std::string("--num-layers-per-virtual-pipeline-stage")) {
      chunks = flags.Integer(name);
    }
  }
  if (chunk_flags.size() > 1) {
    c->Error(
        "parallelism.pipeline.schedule", ErrorCode::kInconsistent,
        absl::StrCat(
            absl::StrJoin(chunk_flags.begin(), chunk_flags.end() - 1, ", "),
            " and ", chunk_flags.back(),
            chunk_flags.size() == 2 ? " cannot both be given"
                                    : " cannot be given together"));
  } else if (chunks) {
    v = *chunks;
  } else if (layers_per_virtual && layers &&
             (flags.Switch("--account-for-embedding-in-pipeline-split") ||
              flags.Switch("--account-for-loss-in-pipeline-split"))) {
    // The stage layout's rule counts the embedding and loss first.
  } else if (layers_per_virtual && layers) {
    if (*layers % p != 0) {
      c->Error("--num-layers-per-virtual-pipeline-stage",
               ErrorCode::kNotDivisible,
               absl::StrCat("--num-layers (", *layers,
                            ") must be divisible by "
                            "--pipeline-model-parallel-size (",
                            p,
                            ") to use "
                            "--num-layers-per-virtual-pipeline-stage"));
    } else if ((*layers / p) % *layers_per_virtual != 0) {
      c->Error("--num-layers-per-virtual-pipeline-stage",
               ErrorCode::kNotDivisible,
               absl::StrCat("--num-layers-per-virtual-pipeline-stage (",
                            *layers_per_virtual,
                            ") must divide the layers per pipeline stage "
                            "(--num-layers ",
                            *layers, " / --pipeline-model-parallel-size ", p,
                            " = ", *layers / p, ")"));
    } else {
      v = *layers / p / *layers_per_virtual;
    }
  }
  if (layers) {
    PipelineLayout layout = PipelineLayoutOf(PipelineLayoutFlagsOf(
        flags, *layers, c->spec.model.mtp_layers, p, v, !chunk_flags.empty()));
    c->errors.insert(c->errors.end(), layout.errors.begin(),
                     layout.errors.end());
    c->notes.insert(c->notes.end(), layout.notes.begin(), layout.notes.end());
    v = layout.virtual_stages;
    pipeline.stage_blocks = std::move(layout.stage_blocks);
  }
  pipeline.schedule = OneForwardOneBackwardSchedule(p, v);
  pipeline.stage_layout = StageLayout::kEven;
}

// --recompute-modules: Megatron-LM reads them with selective granularity
// only (transformer_config.py __post_init__); "core_attn" is the policy
// attn_only, the others parallelism.recompute_modules. The granularity's
// setter made selective attn_only (Megatron-LM's default ["core_attn"]).
void ModulesRule(const std::string& words, Conversion* c) {
  RecomputePolicy& recompute = c->spec.parallelism.recompute;
  if (recompute != RecomputePolicy::kAttentionOnly) {
    c->notes.push_back(absl::StrCat(
        "--recompute-modules has no effect without --recompute-granularity "
        "selective, as in Megatron-LM (granularity ",
        recompute == RecomputePolicy::kFull ? "full" : "none", ")"));
    return;
  }
  recompute = RecomputePolicy::kNone;
  RecomputeModules& modules = c->spec.parallelism.recompute_modules;
  for (absl::string_view word : absl::StrSplit(words, ' ')) {
    if (word == "core_attn") {
      recompute = RecomputePolicy::kAttentionOnly;
    } else if (const std::optional<RecomputeModule> module =
                   ParseRecomputeModule(std::string(word))) {
      modules.Add(*module);
    }
  }
}

// Recompute: the granularity set the policy (Megatron-LM's older
// --recompute-activations overrides it); the method and the number of
// layers must fit it.
void RecomputeRules(Conversion* c) {
  const ParsedFlags& flags = c->flags;
  RecomputePolicy& recompute = c->spec.parallelism.recompute;
  if (flags.Switch("--recompute-activations")) {
    recompute = RecomputePolicy::kAttentionOnly;
  }
  if (const Value* modules = flags.Find("--recompute-modules")) {
    ModulesRule(modules->pattern, c);
  }
  const std::optional<std::string> method = flags.Choice("--recompute-method");
  const std::optional<int64_t> recompute_layers =
      flags.Integer("--recompute-num-layers");
  if (recompute != RecomputePolicy::kFull) {
    if (method) {
      c->Error("--recompute-method", ErrorCode::kInconsistent,
               "--recompute-method only applies to --recompute-granularity "
               "full");
    }
    if (recompute_layers) {
      c->Error("--recompute-num-layers", ErrorCode::kInconsistent,
               "--recompute-num-layers only applies to --recompute-granularity "
               "full");
    }
  } else if (!method) {
    c->Error("--recompute-method", ErrorCode::kMissingField,
             "--recompute-granularity full needs --recompute-method uniform");
  } else if (*method == "block") {
    c->Error("--recompute-method", ErrorCode::kUnsupported,
             "--recompute-method block recomputes only some blocks of each "
             "stage, which the model cannot represent (it recomputes every "
             "block); use --recompute-method uniform");
  } else if (recompute_layers && *recompute_layers != 1) {
    c->Error("--recompute-num-layers", ErrorCode::kUnsupported,
             absl::StrCat("--recompute-num-layers ", *recompute_layers,
                          " keeps the input of every ", *recompute_layers,
                          "th block only, which the model cannot represent (it "
                          "keeps each block's input); use "
                          "--recompute-num-layers 1"));
  }
}

// Tensor parallelism: Megatron-LM turns sequence parallelism off at t == 1,
// and overlaps the tensor-parallel exchanges with their GEMMs only under
// sequence parallelism (megatron/training/arguments.py asserts it).
void TensorRules(Conversion* c) {
  auto& parallelism = c->spec.parallelism;
  parallelism.tensor.overlap = TensorOverlap::kNone;
  parallelism.tensor.network_tier = 0;
  const bool sequence_parallel =
      c->flags.Switch("--sequence-parallel") && parallelism.tensor.degree > 1;
  if (c->flags.Switch("--tp-comm-overlap")) {
    if (sequence_parallel) {
      // Transformer Engine's userbuffers split each all-gather and
      // reduce-scatter into t chunks, each exchanged beside the GEMM of the
      // previous one: Calculon's ring overlap (t tiles).
      parallelism.tensor.overlap = TensorOverlap::kRing;
    } else {
      c->Error("--tp-comm-overlap", ErrorCode::kInconsistent,
               absl::StrCat("--tp-comm-overlap needs --sequence-parallel with "
                            "--tensor-model-parallel-size > 1 (got ",
                            parallelism.tensor.degree,
                            "), as Megatron-LM asserts"));
    }
  }
  if (sequence_parallel) {
    // Selective granularity redoes the all-gathers, whatever its modules.
    parallelism.tensor.communication = ReduceScatterAllGather{
        parallelism.recompute == RecomputePolicy::kAttentionOnly ||
        !parallelism.recompute_modules.empty()};
  } else {
    parallelism.tensor.communication = AllReduce{};
    if (c->flags.Switch("--sequence-parallel")) {
      c->notes.push_back(
          "--sequence-parallel has no effect with one tensor-parallel rank, as "
          "in Megatron-LM");
    }
  }
}

// Data parallelism over `d` ranks (`cp` context-parallel ranks beside):
// the sharding, and with one rank nothing to shard or overlap.
void DataParallelRules(const System& system, int64_t d, int64_t cp,
                       Conversion* c) {
  const ParsedFlags& flags = c->flags;
  DataParallel& data = c->spec.parallelism.data;
  const bool fsdp = flags.Switch("--use-megatron-fsdp");
  if (flags.Switch("--overlap-param-gather")) {
    if (!flags.Switch("--overlap-grad-reduce")) {
      c->Error("--overlap-param-gather", ErrorCode::kInconsistent,
               "--overlap-param-gather needs --overlap-grad-reduce, as "
               "Megatron-LM asserts");
    }
    if (!flags.Switch("--use-distributed-optimizer") && !fsdp) {
      c->Error("--overlap-param-gather", ErrorCode::kInconsistent,
               "--overlap-param-gather needs --use-distributed-optimizer or "
               "--use-megatron-fsdp, as Megatron-LM asserts");
    }
  }
  data.degree = d;
  data.sharding = NoSharding{};
  if (fsdp) {
    data.sharding =
        ShardingOfStrategy(flags.Choice("--data-parallel-sharding-strategy")
                               .value_or("optim_grads_params"));
  } else if (flags.Switch("--use-distributed-optimizer")) {
    data.sharding = ShardOptimizer{};
  }
  if (!fsdp) {
    NoteIdle(flags, {"--data-parallel-sharding-strategy"},
             "--use-megatron-fsdp", &c->notes);
  }
  if (d != 1) return;
  std::vector<std::string> idle;
  for (const char* name :
       {"--use-distributed-optimizer", "--use-megatron-fsdp",
        "--overlap-grad-reduce", "--overlap-param-gather"}) {
    if (flags.Switch(name)) idle.push_back(name);
  }
  if (!idle.empty()) {
    c->notes.push_back(absl::StrCat(
        absl::StrJoin(idle, " and "), idle.size() == 1 ? " has" : " have",
        " no effect with one data-parallel rank (--world-size = "
        "--tensor-model-parallel-size * ",
        cp > 1 ? "--context-parallel-size * " : "",
        "--pipeline-model-parallel-size)"));
  }
  data.sharding = NoSharding{};
  data.overlap = false;
}

// The tiers of the data and pipeline groups, which span t cp d and all
// t cp d p ranks (TierOfNeighbours). A group of one rank exchanges nothing
// and keeps the last tier, as Calculon's own cases write it.
void OuterGroupTiers(const System& system, int64_t d, int64_t cp,
                     Conversion* c) {
  auto& parallelism = c->spec.parallelism;
  parallelism.data.network_tier = OutermostTier(system);
  parallelism.pipeline.network_tier = OutermostTier(system);
  const std::optional<int64_t> tensor_context =
      CheckedMul(parallelism.tensor.degree, cp);
  const std::optional<int64_t> data_span =
      tensor_context ? CheckedMul(*tensor_context, d) : std::nullopt;
  const std::optional<int64_t> world =
      data_span ? CheckedMul(*data_span, parallelism.pipeline.degree)
                : std::nullopt;
  if (d > 1) parallelism.data.network_tier = TierOfNeighbours(system, data_span);
  if (parallelism.pipeline.degree > 1) {
    parallelism.pipeline.network_tier = TierOfNeighbours(system, world);
  }
}

}  // namespace

// The data degree, the schedule, recompute, TP communication and the knobs
// Megatron-LM has no flag for, in this order (the order of their errors).
void ParallelismRules(const System& system, Conversion* c) {
  const auto& parallelism = c->spec.parallelism;
  const int64_t cp = parallelism.context.degree;
  const int64_t d = DataDegree(parallelism.tensor.degree, cp,
                               parallelism.pipeline.degree, c);
  PipelineRules(system, c);
  RecomputeRules(c);
  TensorRules(c);
  ContextRules(system, c);
  ExpertRules(system, c);
  DispatcherRules(c);
  DataParallelRules(system, d, cp, c);
  OuterGroupTiers(system, d, cp, c);
}

// The global batch's default.
void BatchRules(Conversion* c) {
  const std::optional<int64_t> micro = c->flags.Integer("--micro-batch-size");
  if (c->flags.Integer("--global-batch-size") || !micro) return;
  const int64_t d = c->spec.parallelism.data.degree;
  const std::optional<int64_t> global = CheckedMul(*micro, d);
  if (!global) {
    c->Error("batch.global_batch_size", ErrorCode::kOutOfRange,
             absl::StrCat(
                 "--global-batch-size defaults to --micro-batch-size (", *micro,
                 ") * data-parallel size (", d, "), which overflows 64 bits"));
  }
  c->spec.batch.global_batch_size = global.value_or(0);
}

}  // namespace megatron_internal
}  // namespace blueprint
