#include "core/plan/plan.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/base/units.h"
#include "core/plan/hardware.h"
#include "core/plan/quirks.h"
#include "core/spec/recipes.h"

namespace blueprint {
namespace {

constexpr int kFw = static_cast<int>(Stage::kForward);
constexpr int kAgrad = static_cast<int>(Stage::kActivationGrad);
constexpr int kWgrad = static_cast<int>(Stage::kWeightGrad);
constexpr int kOptim = static_cast<int>(Stage::kOptimizer);
constexpr int kFwPhase = static_cast<int>(CommPhase::kForward);
constexpr int kBwPhase = static_cast<int>(CommPhase::kBackward);
constexpr int kRecommPhase = static_cast<int>(CommPhase::kRecommunication);
constexpr int kBase = static_cast<int>(BlockVariant::kBase);

// The comm phase a stage's collective belongs to (Calculon calls the
// re-communication stage "wgrad").
int PhaseOfStage(int stage) {
  return stage == kFw ? kFwPhase : stage == kAgrad ? kBwPhase : kRecommPhase;
}

// The backward TP time on a block's critical path: the exposed time.
double BackwardTensorTime(const BlockFigures& b, bool edge) {
  return edge ? b.edgeblock_agrad_tp_time_exposed
              : b.baseblock_agrad_tp_time_exposed;
}

// The datatype a task's matrix-engine work runs in: the GEMM datatype (FP8
// with Transformer Engine), except, under the refined profile's correction
// kAttentionInDatatype, the attention's batched matmuls (scores, context),
// which Transformer Engine's fused attention runs in the 16-bit datatype
// (FP8 attention is its opt-in fp8_dpa; core/spec/corrections.h).
// The GEMMs Megatron-LM builds outside Transformer Engine, which therefore
// run in the 16-bit datatype under the refined profile's correction
// kHeadAndRouterInDatatype (core/spec/corrections.h), by the end of their
// task name (an MTP block's output layer is "Mtp1_Head_Logits").
constexpr const char* kDatatypeGemmNames[] = {
    "Head_Logits",      // gpt_model.py: output_layer, ColumnParallelLinear
    "MoeBlock_Router",  // moe/router.py: Router.gating, torch linear
};

bool RunsOutsideTransformerEngine(const Task& task) {
  for (const char* suffix : kDatatypeGemmNames) {
    if (absl::EndsWith(task.name, suffix)) return true;
  }
  return false;
}

DataType MatrixDatatype(const Task& task, const TypedProgram& program) {
  const ExecutionOptions& options = program.options();
  if (std::holds_alternative<BatchMatMulTask>(task.kind) &&
      program.corrections.On(Correction::kAttentionInDatatype)) {
    return options.datatype;
  }
  if (program.corrections.On(Correction::kHeadAndRouterInDatatype) &&
      RunsOutsideTransformerEngine(task)) {
    return options.datatype;
  }
  return options.gemm_datatype.value_or(options.datatype);
}

// The linears Megatron-LM's Transformer Engine layer spec fuses with the
// norm before them (TELayerNormColumnParallelLinear: linear_qkv,
// linear_fc1), by the end of their task name: the norm kernel writes the
// quantized input itself (transformer_engine/pytorch/module/
// layernorm_linear.py, _LayerNormLinear.forward, with_quantized_norm), so
// their forward cast reads nothing of its own.
constexpr const char* kNormFusedGemmNames[] = {
    "AttnBlock_Query", "AttnBlock_Key",   "AttnBlock_Value",
    "AttnBlock_Query_Down", "AttnBlock_KV_Down", "MlpBlock_Mlp1",
};

bool FusedWithItsNorm(const Task& task) {
  for (const char* suffix : kNormFusedGemmNames) {
    if (absl::EndsWith(task.name, suffix)) return true;
  }
  return false;
}

}  // namespace

QuantizationBytes TaskQuantizationBytes(const Task& task,
                                        const TypedProgram& program) {
  const ExecutionOptions& options = program.options();
  if (options.recipe == QuantizationRecipe::kNone ||
      !program.corrections.On(Correction::kQuantizationPasses)) {
    return {};
  }
  const RecipeInfo& recipe = RecipeOf(options.recipe);
  if (MatrixDatatype(task, program) != recipe.gemm_datatype) return {};
  const double source = BytesPerElement(options.datatype);
  const bool norm_fused = FusedWithItsNorm(task);
  const auto gemm = [&](int64_t m, int64_t n, int64_t k) {
    QuantizationBytes q = GemmQuantizationBytes(recipe, m, n, k, source);
    if (norm_fused) q.forward -= ForwardCastReadBytes(recipe, m, n, source);
    return q;
  };
  return std::visit(
      Overloaded{
          [&](const LinearTask& k) { return gemm(k.m, k.n, k.k); },
          [&](const OverlappedLinearTask& k) { return gemm(k.m, k.n, k.k); },
          [](const BatchMatMulTask&) { return QuantizationBytes{}; },
          [](const LayerNormTask&) { return QuantizationBytes{}; },
          [](const DropOutTask&) { return QuantizationBytes{}; },
          [](const GeLUTask&) { return QuantizationBytes{}; },
          [](const SoftMaxTask&) { return QuantizationBytes{}; },
          [](const ElementWiseTask&) { return QuantizationBytes{}; },
          [](const ForkTask&) { return QuantizationBytes{}; },
          [](const TensorCommTask&) { return QuantizationBytes{}; },
          [](const GatedActivationTask&) { return QuantizationBytes{}; },
          [](const EmbeddingTask&) { return QuantizationBytes{}; },
          [](const ExchangeTask&) { return QuantizationBytes{}; },
      },
      task.kind);
}

namespace {

class TaskPricer {
 public:
  TaskPricer(const System& system, const TypedProgram& program,
             int64_t tp_network, int64_t ep_network, int64_t cp_network)
      : system_(system),
        program_(program),
        datatype_(program.options().datatype),
        tp_net_(system.networks[static_cast<size_t>(tp_network)]),
        ep_net_(system.networks[static_cast<size_t>(ep_network)]),
        cp_net_(system.networks[static_cast<size_t>(cp_network)]),
        ep_local_(ExpertLocalPeersOf(program, ep_network)),
        ep_fast_net_(system.networks[static_cast<size_t>(
            ep_local_ > 1 ? ep_network - 1 : ep_network)]) {}

  // Prices one task into `plan`.
  void Price(const Task& task, TaskPlan& plan) const;

 private:
  double StageFlopTime(const Task& task, const StageWork& w) const {
    // GEMMs run in the GEMM datatype (FP8 with Transformer Engine).
    return w.matrix_engine
               ? FlopTime(system_.matrix, MatrixDatatype(task, program_),
                          w.flops)
               : FlopTime(system_.vector, datatype_, w.flops);
  }
  double Processing(double ft, double mt) const {
    return ProcessingTime(system_.processing_mode, ft, mt);
  }
  // LinearOverlapped/TPComm compute_net_time for one phase and variant.
  double NetTime(const Task& task, const TaskPlan& plan, int phase,
                 int variant) const;

  const NetworkTier& NetworkOf(MeshAxis axis) const {
    switch (axis) {
      case MeshAxis::kTensor: return tp_net_;
      case MeshAxis::kExpert: return ep_net_;
      case MeshAxis::kContext: return cp_net_;
    }
    return tp_net_;
  }

  const System& system_;
  const TypedProgram& program_;
  DataType datatype_;
  const NetworkTier& tp_net_;
  const NetworkTier& ep_net_;
  const NetworkTier& cp_net_;
  // Correction kHierarchicalAllToAll: the expert peers on the tier below
  // the all-to-all's (1: none, or the correction off) and that tier.
  int64_t ep_local_;
  const NetworkTier& ep_fast_net_;
};

double TaskPricer::NetTime(const Task& task, const TaskPlan& plan, int phase,
                           int variant) const {
  const Collective& c = task.collectives[phase][variant];
  const int64_t t = c.peers;
  if (t <= 1) return 0;
  const double comm =
      c.op == CollectiveOp::kNone ? 0
      : c.axis == MeshAxis::kExpert && c.op == CollectiveOp::kAllToAll
          ? HierarchicalAllToAllTime(ep_net_, ep_fast_net_, c.bytes, t,
                                     ep_local_)
          : CollectiveTime(NetworkOf(c.axis), c.op, c.bytes, t);
  return std::visit(
      Overloaded{
          [&](const TensorCommTask&) -> double {
            // TPComm charges its own reduction and memory traffic here, never
            // as compute.
            if (phase == kRecommPhase) {
              if (!task.flags.recommunicate) return 0;
              return comm + Processing(plan.flop_time[kWgrad],
                                       plan.mem_time[kWgrad]);
            }
            const int stage = phase == kFwPhase ? kFw : kAgrad;
            return comm + Processing(plan.flop_time[stage],
                                     plan.mem_time[stage]);
          },
          [&](const OverlappedLinearTask&) -> double {
            if (c.op == CollectiveOp::kNone) return 0;
            const double reduction =
                FlopTime(system_.vector, datatype_, c.reduction_flops);
            return comm + reduction;
          },
          [](const LinearTask&) { return 0.0; },
          [](const BatchMatMulTask&) { return 0.0; },
          [](const LayerNormTask&) { return 0.0; },
          [](const DropOutTask&) { return 0.0; },
          [](const GeLUTask&) { return 0.0; },
          [](const SoftMaxTask&) { return 0.0; },
          [](const ElementWiseTask&) { return 0.0; },
          [](const ForkTask&) { return 0.0; },
          [](const GatedActivationTask&) { return 0.0; },
          [](const EmbeddingTask&) { return 0.0; },
          [&](const ExchangeTask&) -> double {
            if (phase == kRecommPhase) return 0;
            return comm;
          },
      },
      task.kind);
}

void TaskPricer::Price(const Task& task, TaskPlan& plan) const {
  plan.task_id = task.id;
  for (int s = 0; s < kNumStages; ++s) {
    plan.flop_time[s] = StageFlopTime(task, task.work[s]);
    plan.mem_time[s] = MemoryTime(system_.mem1, task.work[s].bytes);
  }
  for (int p = 0; p < kNumCommPhases; ++p) {
    for (int v = 0; v < kNumVariants; ++v) {
      plan.net_time[p][v] = NetTime(task, plan, p, v);
    }
  }
  for (int s = 0; s < kNumStages; ++s) {
    plan.processing_time[s] = Processing(plan.flop_time[s], plan.mem_time[s]);
  }
  plan.exposed_time = {};
  // exposed per stage, for the overlapped linear's quirk below.
  std::array<double, kNumStages> stage_exposed{};
  std::visit(
      Overloaded{
          [&](const TensorCommTask&) {
            // Never overlapped: exposed = link, not compute.
            for (int s = 0; s < kNumStages; ++s) plan.processing_time[s] = 0;
            plan.exposed_time = plan.net_time;
          },
          [&](const OverlappedLinearTask& k) {
            const double pu = tp_net_.processor_usage;
            const double n = static_cast<double>(k.tiles);
            for (int s = 0; s < kNumStages; ++s) {
              const double ft = plan.flop_time[s];
              const double fts = ft / (1 - pu);
              const double mt = plan.mem_time[s];
              // compute_processing_time always prices the base block.
              const double net =
                  s == kOptim ? 0 : plan.net_time[PhaseOfStage(s)][kBase];
              const double ct = Processing(ft, mt);
              double time = ct, exposed = 0;
              if (net != 0) {
                const double cts = Processing(fts, mt);
                const double fts_tile = fts / n;
                const double net_tile = net / n;
                const double ct_tile = ct / n;
                const double cts_tile = cts / n;
                const double inflection = net_tile - fts_tile;
                if (inflection > 0) {
                  time = ct_tile + (n - 1) * cts_tile;
                  exposed = (n - 1) * inflection;
                } else {
                  time = ct_tile + (n - 1) * ct_tile +
                         (n - 1) * net_tile * pu;
                  exposed = 0;
                }
                // Quirk (MODEL.md §6.3): pipe overlap adds the extra tile to
                // both processing and exposed time.
                if (k.overlap == TensorOverlap::kPipe) {
                  exposed += net_tile;
                  if constexpr (quirks::kPipeTileInProcessingTime) {
                    time += net_tile;
                  }
                }
              }
              plan.processing_time[s] = time;
              stage_exposed[s] = exposed;
            }
            // Quirk (MODEL.md §6.2): get_exposed_net_time returns the value
            // of the last compute_processing_time call, whatever the stage:
            // fw for the forward and the re-communication, agrad for the
            // backward, identical for base and edge.
            const double recomm_exposed =
                quirks::kOverlapExposedFromLastCall ? stage_exposed[kFw]
                                                    : stage_exposed[kWgrad];
            for (int v = 0; v < kNumVariants; ++v) {
              plan.exposed_time[kFwPhase][v] = stage_exposed[kFw];
              plan.exposed_time[kBwPhase][v] = stage_exposed[kAgrad];
              plan.exposed_time[kRecommPhase][v] = recomm_exposed;
            }
            for (int s : {kFw, kAgrad}) {
              const double fts_tile = plan.flop_time[s] / (1 - pu) / n;
              for (int v = 0; v < kNumVariants; ++v) {
                const double tile =
                    task.collectives[PhaseOfStage(s)][v].bytes / n;
                plan.required_bandwidth =
                    std::max(plan.required_bandwidth, tile / fts_tile);
              }
            }
          },
          [](const LinearTask&) {},
          [](const BatchMatMulTask&) {},
          [](const LayerNormTask&) {},
          [](const DropOutTask&) {},
          [](const GeLUTask&) {},
          [](const SoftMaxTask&) {},
          [](const ElementWiseTask&) {},
          [](const ForkTask&) {},
          [](const GatedActivationTask&) {},
          [](const EmbeddingTask&) {},
          [&](const ExchangeTask&) {
            // Exposed in full unless a task hides it (HideExchanges).
            for (int s = 0; s < kNumStages; ++s) plan.processing_time[s] = 0;
            plan.exposed_time = plan.net_time;
          },
      },
      task.kind);
  // The recipe's casts run as kernels of their own, after (forward,
  // backward) or before (the weights, once per step: the optimizer stage)
  // the GEMM, memory-bound on the first tier.
  const QuantizationBytes q = TaskQuantizationBytes(task, program_);
  plan.quantize_time[kFw] = MemoryTime(system_.mem1, q.forward);
  plan.quantize_time[kAgrad] = MemoryTime(system_.mem1, q.backward);
  plan.quantize_time[kOptim] = MemoryTime(system_.mem1, q.weights);
  for (int s = 0; s < kNumStages; ++s) {
    plan.processing_time[s] += plan.quantize_time[s];
  }
}

// A ring exchange of context parallelism runs beside the attention that
// consumes it: only what the attention's compute does not cover is exposed,
// in the forward pass and in the backward pass.
void HideExchanges(const DistributedTaskIR& ir, PortablePlanIR& plan) {
  for (size_t i = 0; i < ir.tasks.size(); ++i) {
    const auto* exchange = std::get_if<ExchangeTask>(&ir.tasks[i].kind);
    if (exchange == nullptr || exchange->overlapped_by < 0) continue;
    const TaskPlan& cover =
        plan.tasks[static_cast<size_t>(exchange->overlapped_by)];
    TaskPlan& tp = plan.tasks[i];
    for (int v = 0; v < kNumVariants; ++v) {
      tp.exposed_time[kFwPhase][v] = std::max(
          0.0, tp.net_time[kFwPhase][v] - cover.processing_time[kFw]);
      tp.exposed_time[kBwPhase][v] = std::max(
          0.0, tp.net_time[kBwPhase][v] - cover.processing_time[kAgrad]);
    }
  }
}

// References to the five block figures of one stage (flops, flop time,
// bytes, memory time, processing time) and of one phase's TP traffic.
struct StageSums {
  double& flops;
  double& flops_time;
  double& mem_accessed;
  double& mem_time;
  double& time;
};
struct CommSums {
  double& base_size;
  double& edge_size;
  double& base_time;
  double& edge_time;
  double& base_exposed;
  double& edge_exposed;
};

// Each sum weighs the task by its share of the blocks (1 for every task of
// a model whose blocks are alike: the sums are then Calculon's exactly).
void AddStage(const Task& task, const TaskPlan& plan, int stage,
              StageSums sums) {
  const double w = task.share;
  sums.flops += w * task.work[stage].flops;
  sums.flops_time += w * plan.flop_time[stage];
  sums.mem_accessed += w * task.work[stage].bytes;
  sums.mem_time += w * plan.mem_time[stage];
  sums.time += w * plan.processing_time[stage];
}

void AddComm(const Task& task, const TaskPlan& plan, int phase,
             CommSums sums) {
  const double w = task.share;
  sums.base_size += w * task.collectives[phase][0].bytes;
  sums.edge_size += w * task.collectives[phase][1].bytes;
  sums.base_time += w * plan.net_time[phase][0];
  sums.edge_time += w * plan.net_time[phase][1];
  sums.base_exposed += w * plan.exposed_time[phase][0];
  sums.edge_exposed += w * plan.exposed_time[phase][1];
}

// The figures a task of `placement` adds to.
BlockFigures& FiguresOf(Placement placement, PortablePlanIR& plan) {
  switch (placement) {
    case Placement::kEveryBlock:
      return plan.block;
    case Placement::kFirstStage:
      plan.has_stage_tasks = true;
      return plan.first_stage;
    case Placement::kLastStage:
      plan.has_stage_tasks = true;
      return plan.last_stage;
  }
  return plan.block;
}

}  // namespace

void AddTaskFootprint(const Task& task, bool training, BlockFigures& b) {
  const Footprint& f = task.footprint;
  const double w = task.share;
  b.block_weight_space += w * f.weight;
  if (!task.flags.activation_reused) {
    b.block_act_working_space += w * f.activation;
  }
  b.block_act_storage_space += w * f.activation;
  if (training) {
    if (!task.flags.output_stored) b.block_act_storage_space -= w * f.output;
    if (!task.flags.activation_stored) {
      b.block_act_storage_space -= w * f.activation;
    }
    b.block_weight_grad_space += w * f.weight_grad_sharded;
    b.block_weight_grad_space_no_sharding += w * f.weight_grad_unsharded;
    b.block_act_grad_space += w * f.activation_grad;
    b.block_optimizer_space += w * f.optimizer;
  }
}

void FinishBlockFootprint(const TypedProgram& program, bool training,
                          BlockFigures& b) {
  const DerivedValues& d = program.derived;
  const bool full = d.recompute == RecomputePolicy::kFull;
  if (full) b.block_act_storage_space = 0;
  // Quirk (MODEL.md §6.6): the checkpoint is b*s*h elements, not divided by t
  // even under sequence parallelism.
  if (training && full) {
    b.block_act_checkpoint_size =
        static_cast<double>(program.batch().microbatch_size) *
        program.model().seq_size * program.model().hidden *
        d.bytes_per_element;
    if (!quirks::kCheckpointUnsplitBySequenceParallelism &&
        d.sequence_parallel) {
      b.block_act_checkpoint_size /= static_cast<double>(d.tensor);
    }
  }
}

namespace {

// Sums the task plans into Calculon's block figures, in Calculon's layer
// order (the order matters for the recompute quirk), and the stage tasks'
// into the first and last stage's.
void Aggregate(const DistributedTaskIR& ir, const TypedProgram& program,
               PortablePlanIR& plan) {
  const bool training = ir.training;
  for (size_t i = 0; i < ir.tasks.size(); ++i) {
    const Task& task = ir.tasks[i];
    const TaskPlan& tp = plan.tasks[i];
    BlockFigures& b = FiguresOf(task.placement, plan);
    const auto& fw = task.work[kFw];
    AddStage(task, tp, kFw,
             {b.block_fw_flops, b.block_fw_flops_time, b.block_fw_mem_accessed,
              b.block_fw_mem_time, b.block_fw_time});
    AddComm(task, tp, kFwPhase,
            {b.baseblock_fw_tp_size, b.edgeblock_fw_tp_size,
             b.baseblock_fw_tp_time, b.edgeblock_fw_tp_time,
             b.baseblock_fw_tp_time_exposed, b.edgeblock_fw_tp_time_exposed});
    b.tp_bw_overlap_req = std::max(b.tp_bw_overlap_req, tp.required_bandwidth);
    const double w = task.share;
    b.useful_flops += w * fw.flops;
    if (training) {
      if (task.flags.recompute) {
        // Quirk (MODEL.md §6.1): Calculon adds the running block totals, not
        // the layer's own figures; block_re_time alone uses the layer's.
        if constexpr (quirks::kRecomputeAddsRunningTotals) {
          b.block_re_flops += b.block_fw_flops;
          b.block_re_flops_time += b.block_fw_flops_time;
          b.block_re_mem_accessed += b.block_fw_mem_accessed;
          b.block_re_mem_time += b.block_fw_mem_time;
        } else {
          b.block_re_flops += fw.flops;
          b.block_re_flops_time += tp.flop_time[kFw];
          b.block_re_mem_accessed += fw.bytes;
          b.block_re_mem_time += tp.mem_time[kFw];
        }
        b.block_re_time += w * tp.processing_time[kFw];
      }
      if (task.flags.recommunicate) {
        AddComm(task, tp, kRecommPhase,
                {b.baseblock_recomm_size, b.edgeblock_recomm_size,
                 b.baseblock_recomm_time, b.edgeblock_recomm_time,
                 b.baseblock_recomm_time_exposed,
                 b.edgeblock_recomm_time_exposed});
      }
      AddStage(task, tp, kAgrad,
               {b.block_agrad_flops, b.block_agrad_flops_time,
                b.block_agrad_mem_accessed, b.block_agrad_mem_time,
                b.block_agrad_time});
      AddComm(task, tp, kBwPhase,
              {b.baseblock_bw_tp_size, b.edgeblock_bw_tp_size,
               b.baseblock_agrad_tp_time, b.edgeblock_agrad_tp_time,
               b.baseblock_agrad_tp_time_exposed,
               b.edgeblock_agrad_tp_time_exposed});
      AddStage(task, tp, kWgrad,
               {b.block_wgrad_flops, b.block_wgrad_flops_time,
                b.block_wgrad_mem_accessed, b.block_wgrad_mem_time,
                b.block_wgrad_time});
      AddStage(task, tp, kOptim,
               {b.block_optim_flops, b.block_optim_flops_time,
                b.block_optim_mem_accessed, b.block_optim_mem_time,
                b.block_optim_time});
      b.useful_flops += w * (task.work[kAgrad].flops +
                             task.work[kWgrad].flops + task.work[kOptim].flops);
    }
    AddTaskFootprint(task, training, b);
  }
  BlockFigures& b = plan.block;
  FinishBlockFootprint(program, training, b);
  for (int v = 0; v < kNumVariants; ++v) {
    const bool edge = v == 1;
    BlockCriticalPath& path = plan.critical_path[v];
    path.forward = b.block_fw_time + (edge ? b.edgeblock_fw_tp_time_exposed
                                           : b.baseblock_fw_tp_time_exposed);
    path.backward = b.block_re_time +
                    (edge ? b.edgeblock_recomm_time_exposed
                          : b.baseblock_recomm_time_exposed) +
                    b.block_agrad_time + b.block_wgrad_time +
                    BackwardTensorTime(b, edge);
  }
}

Lineage TaskPlanLineage(const Task& task, const TypedProgram& program,
                        const TaskPlan& plan, const System& system) {
  Lineage lineage;
  lineage.pass = PlanPortable::kName;
  lineage.sources.push_back(absl::StrCat("task:", task.id));
  const ExecutionOptions& options = program.options();
  const DataType gemm = MatrixDatatype(task, program);
  for (int s = 0; s < kNumStages; ++s) {
    const StageWork& w = task.work[s];
    if (w.flops == 0 && w.bytes == 0) continue;
    const Processor& engine = w.matrix_engine ? system.matrix : system.vector;
    const DataType datatype = w.matrix_engine ? gemm : options.datatype;
    const char* dtype = DataTypeName(datatype);
    auto rate = engine.rates.find(datatype);
    if (rate != engine.rates.end() && w.flops != 0) {
      lineage.sources.push_back(absl::StrCat(
          "system:", w.matrix_engine ? "matrix." : "vector.", dtype,
          ".gflops_efficiency[",
          EfficiencyRowIndex(rate->second.gflops_efficiency, w.flops, kGFLOP),
          "]@", StageName(static_cast<Stage>(s))));
    }
    if (w.bytes != 0) {
      lineage.sources.push_back(absl::StrCat(
          "system:mem1.MB_efficiency[",
          EfficiencyRowIndex(system.mem1.mb_efficiency, w.bytes, kMB), "]@",
          StageName(static_cast<Stage>(s))));
    }
  }
  for (double q : plan.quantize_time) {
    if (q == 0) continue;
    lineage.sources.push_back("spec:options.recipe");
    break;
  }
  bool networked = false;
  for (const auto& phase : plan.net_time) {
    for (double x : phase) networked = networked || x != 0;
  }
  if (networked) {
    const auto* exchange = std::get_if<ExchangeTask>(&task.kind);
    const int64_t tier =
        exchange == nullptr                       ? program.derived.tensor_network
        : exchange->axis == MeshAxis::kExpert     ? program.derived.expert_network
        : exchange->axis == MeshAxis::kContext    ? program.derived.context_network
                                                  : program.derived.tensor_network;
    lineage.sources.push_back(absl::StrCat("system:networks[", tier, "]"));
    if (exchange != nullptr && exchange->axis == MeshAxis::kExpert &&
        ExpertLocalPeersOf(program, tier) > 1) {
      lineage.sources.push_back(
          absl::StrCat("system:networks[", tier - 1, "]"));
    }
  }
  lineage.sources.push_back("system:processing_mode");
  return lineage;
}

}  // namespace

int64_t ExpertLocalPeersOf(const TypedProgram& program,
                           int64_t expert_network) {
  if (!program.corrections.On(Correction::kHierarchicalAllToAll)) return 1;
  return ExpertLocalPeers(program.system(), expert_network,
                          program.derived.expert,
                          program.derived.expert_tensor);
}

absl::StatusOr<PortablePlanIR> PlanPortable::Run(
    const DistributedTaskIR& tasks, const TypedProgram& program) const {
  BP_RETURN_IF_ERROR(VerifyTaskIR(tasks));
  const System& system = program.system();
  PortablePlanIR plan;
  plan.tasks.resize(tasks.tasks.size());
  const DerivedValues& d = program.derived;
  TaskPricer pricer(system, program, d.tensor_network, d.expert_network,
                    d.context_network);
  for (size_t i = 0; i < tasks.tasks.size(); ++i) {
    pricer.Price(tasks.tasks[i], plan.tasks[i]);
  }
  HideExchanges(tasks, plan);
  for (size_t i = 0; i < tasks.tasks.size(); ++i) {
    plan.tasks[i].lineage =
        TaskPlanLineage(tasks.tasks[i], program, plan.tasks[i], system);
  }
  Aggregate(tasks, program, plan);
  plan.block_lineage.pass = kName;
  for (const Task& task : tasks.tasks) {
    if (task.placement != Placement::kEveryBlock) continue;
    plan.block_lineage.sources.push_back(absl::StrCat("plan:", task.id));
  }
  BP_RETURN_IF_ERROR(VerifyPlanIR(plan, tasks));
  return plan;
}

}  // namespace blueprint
