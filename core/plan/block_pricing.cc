#include "core/plan/block_pricing.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>
#include <variant>

#include "core/base/status_macros.h"
#include "core/plan/hardware.h"
#include "core/plan/quirks.h"

namespace blueprint {
namespace {

// The comm phase a stage's collective belongs to (Calculon calls the
// re-communication stage "wgrad").
int PhaseOfStage(int stage) {
  return stage == kFw ? kFwPhase : stage == kAgrad ? kBwPhase : kRecommPhase;
}

// Where the kernel's per-task times go: nowhere (the search), or into the
// plan's TaskPlans (PlanPortable, whose lineage reads them).
struct NoSink {
  void Compute(size_t, const std::array<double, kNumStages>&,
               const std::array<double, kNumStages>&,
               const std::array<double, kNumStages>&,
               const std::array<double, kNumStages>&, double) {}
  template <typename Times>
  void Communication(size_t, const Times&, const Times&) {}
};

struct TaskPlanSink {
  std::vector<TaskPlan>& plans;
  void Compute(size_t i, const std::array<double, kNumStages>& flop_time,
               const std::array<double, kNumStages>& mem_time,
               const std::array<double, kNumStages>& processing_time,
               const std::array<double, kNumStages>& quantize_time,
               double required_bandwidth) {
    TaskPlan& plan = plans[i];
    plan.flop_time = flop_time;
    plan.mem_time = mem_time;
    plan.processing_time = processing_time;
    plan.quantize_time = quantize_time;
    plan.required_bandwidth = required_bandwidth;
  }
  template <typename Times>
  void Communication(size_t i, const Times& net, const Times& exposed) {
    plans[i].net_time = net;
    plans[i].exposed_time = exposed;
  }
};

// The expert exchanges' exposed time that correction kExpertOverlap hides,
// per pass, of a block whose exchanges expose `exchange_fw` / `exchange_bw`
// and whose other tasks compute for `forward`, `activation_grad` and
// `weight_grad` seconds: the forward's exchanges under the adjacent
// microbatch's backward (its weight gradients only with delay_wgrad), the
// backward's under its forward.
struct HiddenExchange {
  double forward = 0;
  double backward = 0;
};
HiddenExchange ExpertOverlapHidden(bool delay_wgrad, double exchange_fw,
                                   double exchange_bw, double forward,
                                   double activation_grad,
                                   double weight_grad) {
  const double backward = activation_grad + (delay_wgrad ? weight_grad : 0);
  return {std::min(exchange_fw, backward), std::min(exchange_bw, forward)};
}

}  // namespace

void SetExpertRules(const TypedProgram& program, BlockTiers& tiers) {
  if (NodeDeduplicatedDispatch(program) && program.model().moe.has_value()) {
    tiers.dedup_topk = program.model().moe->topk;
    tiers.dedup_experts = program.model().moe->experts;
    tiers.dedup_ranks =
        program.corrections.On(Correction::kRankDeduplicatedDispatch);
  }
  const ExpertParallel* expert = ExpertParallelismOf(program);
  if (expert != nullptr && expert->overlap &&
      program.corrections.On(Correction::kExpertOverlap)) {
    tiers.expert_overlap = true;
    tiers.delay_wgrad = expert->delay_wgrad;
    if (program.corrections.On(Correction::kExpertOverlapProcessorUsage)) {
      tiers.expert_overlap_usage = std::max(tiers.expert->processor_usage,
                                            tiers.expert_fast->processor_usage);
    }
  }
}

BlockTiers BlockTiersOf(const TypedProgram& program) {
  const System& system = program.system();
  const DerivedValues& d = program.derived;
  const auto tier = [&](int64_t index) {
    return &system.networks[static_cast<size_t>(index)];
  };
  const int64_t local = ExpertLocalPeersOf(program, d.expert_network);
  BlockTiers tiers{tier(d.tensor_network), tier(d.expert_network),
                   tier(d.context_network),
                   tier(local > 1 ? d.expert_network - 1 : d.expert_network),
                   local};
  SetExpertRules(program, tiers);
  return tiers;
}

void AddFootprints(const DistributedTaskIR& tasks, size_t begin, size_t end,
                   StagedBlock& out) {
  end = std::min(end, tasks.tasks.size());
  for (size_t i = begin; i < end; ++i) {
    const Task& task = tasks.tasks[i];
    AddTaskFootprint(task, tasks.training, FiguresOf(task.placement, out));
  }
}

StagedBlock FootprintFigures(const DistributedTaskIR& tasks,
                             const TypedProgram& program) {
  return FootprintFigures(tasks, program, StagedBlock(), 0);
}

StagedBlock FootprintFigures(const DistributedTaskIR& tasks,
                             const TypedProgram& program,
                             const StagedBlock& prefix, size_t prefix_end) {
  StagedBlock out = prefix;
  AddFootprints(tasks, prefix_end, tasks.tasks.size(), out);
  FinishBlockFootprint(program, tasks.training, out.block);
  return out;
}

bool BlockPrices::Supports(const DistributedTaskIR& tasks) {
  for (const Task& task : tasks.tasks) {
    if (std::holds_alternative<OverlappedLinearTask>(task.kind)) return false;
  }
  return true;
}

BlockPrices::Rates BlockPrices::ProgramRates(const TypedProgram& program) {
  const DataType datatype = program.options().datatype;
  const bool achievable =
      program.corrections.On(Correction::kAchievableMatmulRate);
  Rates rates = RatesOf(program.system(), GemmDatatype(program),
                        AttentionDatatype(program), datatype, achievable);
  rates.program = &program;
  rates.datatype_matrix = EngineRate(program.system().matrix, datatype);
  rates.no_datatype_matrix_time = FlopTime(rates.datatype_matrix, 0.0);
  rates.unquantized_share = UnquantizedBlockShare(program);
  if (achievable) {
    rates.datatype_bound = AchievableThroughput(rates.datatype_matrix);
  }
  return rates;
}

BlockPrices::BlockPrices(const DistributedTaskIR& tasks,
                         const TypedProgram& program) {
  Reprice(tasks, ProgramRates(program));
}

void BlockPrices::Reprice(const DistributedTaskIR& tasks,
                          const TypedProgram& program) {
  Reprice(tasks, ProgramRates(program));
}

BlockPrices::BlockPrices(const DistributedTaskIR& tasks, const System& system,
                         DataType datatype, bool achievable_matmul) {
  Reprice(tasks, system, datatype, achievable_matmul);
}

BlockPrices::Rates BlockPrices::RatesOf(const System& system, DataType matrix,
                                        DataType attention, DataType vector,
                                        bool achievable_matmul) {
  Rates r;
  r.matrix = EngineRate(system.matrix, matrix);
  r.attention_matrix = EngineRate(system.matrix, attention);
  if (achievable_matmul) {
    r.matrix_bound = AchievableThroughput(r.matrix);
    r.attention_bound = AchievableThroughput(r.attention_matrix);
  }
  r.vector = EngineRate(system.vector, vector);
  r.memory = &system.mem1;
  r.mode = system.processing_mode;
  // Most tasks have stages without work (no weight gradient, no optimizer
  // step, a collective's compute): their times, the same for every such
  // stage, are computed once.
  r.no_matrix_time = FlopTime(r.matrix, 0.0);
  r.no_attention_time = FlopTime(r.attention_matrix, 0.0);
  r.no_vector_time = FlopTime(r.vector, 0.0);
  r.no_memory_time = MemoryTime(system.mem1, 0.0);
  return r;
}

void BlockPrices::AddPrices(const Task& task, const Rates& rates) {
  const auto positive_zero = [](double x) {
    return x == 0 && !std::signbit(x);
  };
  PricedTask p;
  // GEMMs run in the GEMM datatype, the attention's as MatrixDatatype says.
  const ProcessorRate* matrix = rates.matrix;
  double matrix_bound = rates.matrix_bound;
  double no_matrix_time = rates.no_matrix_time;
  p.kind = std::visit(
      Overloaded{
          [](const TensorCommTask&) { return Kind::kTensorComm; },
          [&](const ExchangeTask& x) {
            p.overlapped_by = x.overlapped_by;
            p.expert_exchange = x.axis == MeshAxis::kExpert;
            return Kind::kExchange;
          },
          [&](const OverlappedLinearTask& x) {
            p.tiles = static_cast<int32_t>(x.tiles);
            p.pipe_overlap = x.overlap == TensorOverlap::kPipe;
            return Kind::kOverlappedLinear;
          },
          [](const LinearTask&) { return Kind::kCompute; },
          [&](const BatchMatMulTask&) {
            matrix = rates.attention_matrix;
            matrix_bound = rates.attention_bound;
            no_matrix_time = rates.no_attention_time;
            return Kind::kCompute;
          },
          [](const LayerNormTask&) { return Kind::kCompute; },
          [](const DropOutTask&) { return Kind::kCompute; },
          [](const GeLUTask&) { return Kind::kCompute; },
          [](const SoftMaxTask&) { return Kind::kCompute; },
          [](const ElementWiseTask&) { return Kind::kCompute; },
          [](const ForkTask&) { return Kind::kCompute; },
          [](const GatedActivationTask&) { return Kind::kCompute; },
          [](const EmbeddingTask&) { return Kind::kCompute; },
          [](const PermutationTask&) { return Kind::kCompute; },
          [](const RouterKernelsTask&) { return Kind::kCompute; },
      },
      task.kind);
  if (rates.program != nullptr &&
      InDatatypeOutsideTransformerEngine(task, *rates.program)) {
    matrix = rates.datatype_matrix;
    matrix_bound = rates.datatype_bound;
    no_matrix_time = rates.no_datatype_matrix_time;
  }
  // The recipe's casts run as kernels of their own, after (forward,
  // backward) or before (the weights, once per step: the optimizer stage)
  // the GEMM, memory-bound on the first tier.
  if (rates.program != nullptr) {
    const QuantizationBytes q = TaskQuantizationBytes(task, *rates.program);
    p.quantize_time[kFw] = MemoryTime(*rates.memory, q.forward);
    p.quantize_time[kAgrad] = MemoryTime(*rates.memory, q.backward);
    p.quantize_time[kOptim] = MemoryTime(*rates.memory, q.weights);
  }
  // The rank's blocks outside the recipe run its GEMMs at the datatype's
  // rate: the priced block stands for all of them, so its matrix time
  // mixes the two rates by their shares.
  const double unquantized = rates.unquantized_share != 0 &&
                                     RunsInRecipe(task, *rates.program)
                                 ? rates.unquantized_share
                                 : 0;
  p.placement = task.placement;
  p.recompute = task.flags.recompute;
  p.recommunicate = task.flags.recommunicate;
  p.share = task.share;
  for (int s = 0; s < kNumStages; ++s) {
    const StageWork& w = task.work[s];
    p.flops[s] = w.flops;
    p.bytes[s] = w.bytes;
    p.flop_time[s] =
        positive_zero(w.flops)
            ? (w.matrix_engine ? no_matrix_time : rates.no_vector_time)
            : w.matrix_engine ? GemmTime(matrix, matrix_bound, w.flops)
                              : FlopTime(rates.vector, w.flops);
    if (unquantized != 0 && w.matrix_engine && !positive_zero(w.flops)) {
      p.flop_time[s] =
          (1 - unquantized) * p.flop_time[s] +
          unquantized * GemmTime(rates.datatype_matrix, rates.datatype_bound,
                                 w.flops);
    }
    p.mem_time[s] = positive_zero(w.bytes)
                        ? rates.no_memory_time
                        : MemoryTime(*rates.memory, w.bytes);
    p.time[s] = ProcessingTime(rates.mode, p.flop_time[s], p.mem_time[s]) +
                p.quantize_time[s];
    // (Its processing time is 0 when both times are.)
    if (p.flops[s] != 0 || p.bytes[s] != 0 || p.flop_time[s] != 0 ||
        p.mem_time[s] != 0) {
      p.working_stages |= static_cast<uint8_t>(1u << s);
    }
  }
  if (HasCollectives(task)) {
    if (base_ == nullptr) {
      collective_tasks_.push_back(static_cast<int32_t>(tasks_.size()));
    }
    p.first_collective = static_cast<int32_t>(collectives_.size());
    for (const auto& phase : task.collectives) {
      for (const Collective& c : phase) collectives_.push_back(c);
    }
  }
  tasks_.push_back(p);
}

bool BlockPrices::HasCollectives(const Task& task) {
  // Only TPComm and exchanges have network times; any other task's
  // collectives add their sizes alone (none has any).
  if (std::holds_alternative<TensorCommTask>(task.kind) ||
      std::holds_alternative<ExchangeTask>(task.kind)) {
    return true;
  }
  for (const auto& phase : task.collectives) {
    for (const Collective& c : phase) {
      if (c.bytes != 0) return true;
    }
  }
  return false;
}

size_t BlockPrices::CollectivesOf(const Task& task) {
  return HasCollectives(task) ? kNumCommPhases * kNumVariants : 0;
}

void BlockPrices::Reprice(const DistributedTaskIR& tasks,
                          const System& system, DataType datatype,
                          bool achievable_matmul) {
  Reprice(tasks, RatesOf(system, datatype, achievable_matmul));
}

void BlockPrices::Reprice(const DistributedTaskIR& tasks, const Rates& rates) {
  training_ = tasks.training;
  vector_rate_ = rates.vector;
  mode_ = rates.mode;
  base_ = nullptr;
  compute_prefix_end_ = SIZE_MAX;
  override_ids_.clear();
  tasks_.clear();
  collectives_.clear();
  collective_tasks_.clear();
  tasks_.reserve(tasks.tasks.size());
  size_t collectives = 0;
  for (const Task& task : tasks.tasks) collectives += CollectivesOf(task);
  collectives_.reserve(collectives);
  for (const Task& task : tasks.tasks) AddPrices(task, rates);
}

void BlockPrices::RepriceFrom(const BlockPrices& base,
                              const DistributedTaskIR& tasks,
                              const std::vector<int32_t>& ids,
                              const System& system, DataType datatype,
                              bool achievable_matmul) {
  RepriceFrom(base, tasks, ids, RatesOf(system, datatype, achievable_matmul));
}

void BlockPrices::RepriceFrom(const BlockPrices& base,
                              const DistributedTaskIR& tasks,
                              const std::vector<int32_t>& ids,
                              const TypedProgram& program) {
  RepriceFrom(base, tasks, ids, ProgramRates(program));
}

void BlockPrices::RepriceFrom(const BlockPrices& base,
                              const DistributedTaskIR& tasks,
                              const std::vector<int32_t>& ids,
                              const Rates& rates) {
  if (base.base_ != nullptr && base.override_ids_ != ids) {
    // Other tasks vary: not a variant of base's base.
    Reprice(tasks, rates);
    return;
  }
  const BlockPrices& root = base.base_ != nullptr ? *base.base_ : base;
  training_ = tasks.training;
  vector_rate_ = rates.vector;
  mode_ = rates.mode;
  base_ = &root;
  compute_prefix_end_ = SIZE_MAX;
  compute_prefix_.reset();  // only a root's is read
  override_ids_ = ids;
  collective_tasks_.clear();
  // Reserved at once: grown by doubling, the spare room of some thousand
  // variants per run was a tenth of a search's memory.
  ClearForExactly(tasks_, ids.size());
  size_t collectives = 0;
  for (int32_t id : ids) {
    collectives += CollectivesOf(tasks.tasks[static_cast<size_t>(id)]);
  }
  ClearForExactly(collectives_, collectives);
  for (int32_t id : ids) {
    AddPrices(tasks.tasks[static_cast<size_t>(id)], rates);
  }
}

const BlockPrices::PricedTask& BlockPrices::TaskAt(
    size_t i, const Collective** collectives) const {
  if (base_ != nullptr) {
    const auto it = std::lower_bound(override_ids_.begin(),
                                     override_ids_.end(),
                                     static_cast<int32_t>(i));
    if (it != override_ids_.end() && *it == static_cast<int32_t>(i)) {
      *collectives = collectives_.data();
      return tasks_[static_cast<size_t>(it - override_ids_.begin())];
    }
  }
  const BlockPrices& root = base_ != nullptr ? *base_ : *this;
  *collectives = root.collectives_.data();
  return root.tasks_[i];
}

template <typename F>
void BlockPrices::ForEachTask(size_t begin, size_t end, F&& f) const {
  // The block's tasks: base_'s but for the overrides (tasks_), or tasks_.
  const BlockPrices& root = base_ != nullptr ? *base_ : *this;
  const size_t n = std::min(end, root.tasks_.size());
  size_t next_override = 0;
  if (base_ != nullptr && begin > 0) {
    next_override = static_cast<size_t>(
        std::lower_bound(override_ids_.begin(), override_ids_.end(),
                         static_cast<int32_t>(begin)) -
        override_ids_.begin());
  }
  for (size_t i = begin; i < n; ++i) {
    const bool own = base_ != nullptr &&
                     next_override < override_ids_.size() &&
                     override_ids_[next_override] == static_cast<int32_t>(i);
    if (own) {
      f(i, tasks_[next_override], collectives_.data());
      ++next_override;
    } else {
      f(i, root.tasks_[i], root.collectives_.data());
    }
  }
}

template <typename F>
void BlockPrices::ForEachCollectiveTask(F&& f) const {
  if (base_ == nullptr) {
    for (int32_t i : collective_tasks_) {
      f(static_cast<size_t>(i), tasks_[static_cast<size_t>(i)],
        collectives_.data());
    }
    return;
  }
  // base_'s tasks with collectives and the overrides, merged in task order
  // (an override replaces base_'s task of its index).
  const std::vector<int32_t>& kept = base_->collective_tasks_;
  constexpr int32_t kPast = std::numeric_limits<int32_t>::max();
  size_t k = 0, o = 0;
  while (k < kept.size() || o < override_ids_.size()) {
    const int32_t next_kept = k < kept.size() ? kept[k] : kPast;
    const int32_t next_own =
        o < override_ids_.size() ? override_ids_[o] : kPast;
    if (next_own <= next_kept) {
      if (tasks_[o].first_collective >= 0) {
        f(static_cast<size_t>(next_own), tasks_[o], collectives_.data());
      }
      if (next_own == next_kept) ++k;
      ++o;
    } else {
      f(static_cast<size_t>(next_kept),
        base_->tasks_[static_cast<size_t>(next_kept)],
        base_->collectives_.data());
      ++k;
    }
  }
}

StagedBlock BlockPrices::Plan(const StagedBlock& compute,
                              const NetworkTier& tensor_net,
                              const NetworkTier& expert_net,
                              const NetworkTier& context_net,
                              const NetworkTier& expert_fast_net,
                              int64_t expert_local) const {
  return Plan(compute, {&tensor_net, &expert_net, &context_net,
                        &expert_fast_net, expert_local});
}

StagedBlock BlockPrices::Plan(const StagedBlock& compute,
                              const BlockTiers& tiers) const {
  // PlanCompute leaves every figure AddCommunication adds to at 0.
  StagedBlock out = compute;
  NoSink sink;
  AddCommunication(tiers, out, sink);
  return out;
}

namespace {

// The figures AddTaskFootprint and FinishBlockFootprint make.
constexpr double BlockFigures::*kFootprintFigures[] = {
    &BlockFigures::block_weight_space,
    &BlockFigures::block_act_working_space,
    &BlockFigures::block_act_storage_space,
    &BlockFigures::block_act_checkpoint_size,
    &BlockFigures::block_weight_grad_space,
    &BlockFigures::block_weight_grad_space_no_sharding,
    &BlockFigures::block_act_grad_space,
    &BlockFigures::block_optimizer_space,
};

// Copies the footprint figures, computed once, into `out`.
void CopyFootprints(const StagedBlock& footprint, StagedBlock& out) {
  for (int placement = 0; placement < kNumPlacements; ++placement) {
    const BlockFigures& from =
        FiguresOf(static_cast<Placement>(placement), footprint);
    BlockFigures& to = FiguresOf(static_cast<Placement>(placement), out);
    for (double BlockFigures::*figure : kFootprintFigures) {
      to.*figure = from.*figure;
    }
  }
}

}  // namespace

StagedBlock BlockPrices::PlanCompute(const StagedBlock& footprint) const {
  StagedBlock out;
  size_t begin = 0;
  NoSink sink;
  if (base_ != nullptr && !override_ids_.empty()) {
    // The tasks before the first override are base_'s: their running sums
    // are base_'s, made once for its variants.
    const auto first = static_cast<size_t>(override_ids_.front());
    if (base_->compute_prefix_ == nullptr) {
      base_->compute_prefix_ = std::make_unique<StagedBlock>();
      base_->compute_prefix_end_ = SIZE_MAX;
    }
    if (base_->compute_prefix_end_ != first) {
      *base_->compute_prefix_ = StagedBlock{};
      base_->AddCompute(0, first, nullptr, *base_->compute_prefix_, sink);
      base_->compute_prefix_end_ = first;
    }
    out = *base_->compute_prefix_;
    begin = first;
  }
  AddCompute(begin, SIZE_MAX, nullptr, out, sink);
  CopyFootprints(footprint, out);
  return out;
}

StagedBlock BlockPrices::PlanTasks(const StagedBlock& footprint,
                                   const BlockTiers& tiers,
                                   std::vector<TaskPlan>* plans) const {
  StagedBlock out;
  if (plans == nullptr) {
    NoSink sink;
    AddCompute(0, SIZE_MAX, &tiers, out, sink);
    CopyFootprints(footprint, out);
    AddCommunication(tiers, out, sink);
  } else {
    TaskPlanSink sink{*plans};
    AddCompute(0, SIZE_MAX, &tiers, out, sink);
    CopyFootprints(footprint, out);
    AddCommunication(tiers, out, sink);
  }
  return out;
}

template <typename Sink>
void BlockPrices::AddCompute(size_t begin, size_t end,
                             const BlockTiers* tiers, StagedBlock& out,
                             Sink& sink) const {
  ForEachTask(begin, end, [&](size_t i, const PricedTask& t,
                              const Collective* collectives) {
    // The block's sums, in task order.
    BlockFigures& b = FiguresOf(t.placement, out);
    const double w = t.share;
    // The stages' processing times; an overlapped linear's are tiled on
    // the tensor tier (only PlanTasks, with tiers, plans one), and every
    // stage of it is added (a stage without work can take time there).
    StageTimes time = {Processing(t, kFw), Processing(t, kAgrad),
                       Processing(t, kWgrad), Processing(t, kOptim)};
    uint8_t added = t.working_stages;
    double required_bandwidth = 0;
    if (t.kind == Kind::kOverlappedLinear && tiers != nullptr) {
      PhaseTimes net{};
      NetTimes(t, collectives, *tiers, net);
      const Tiling tiling = Tile(t, collectives, *tiers, net);
      time = tiling.time;
      for (int s = 0; s < kNumStages; ++s) time[s] += t.quantize_time[s];
      added = static_cast<uint8_t>((1u << kNumStages) - 1);
      required_bandwidth = tiling.required_bandwidth;
      b.tp_bw_overlap_req = std::max(b.tp_bw_overlap_req, required_bandwidth);
    }
    sink.Compute(i, t.flop_time, t.mem_time, time, t.quantize_time,
                 required_bandwidth);
    const auto add_stage = [&](int stage, double& flops, double& flops_time,
                               double& mem_accessed, double& mem_time,
                               double& stage_time) {
      // No work: each term is +0 or -0, which leaves the sums (+0 or
      // positive: w >= 0, every figure >= 0) as they are.
      if ((added & (1u << stage)) == 0) return;
      flops += w * t.flops[stage];
      flops_time += w * t.flop_time[stage];
      mem_accessed += w * t.bytes[stage];
      mem_time += w * t.mem_time[stage];
      stage_time += w * time[stage];
    };
    add_stage(kFw, b.block_fw_flops, b.block_fw_flops_time,
              b.block_fw_mem_accessed, b.block_fw_mem_time, b.block_fw_time);
    b.useful_flops += w * t.flops[kFw];
    if (!training_) return;
    if (t.recompute) {
      // Quirk (MODEL.md §6.1): Calculon adds the running block totals, not
      // the layer's own figures; block_re_time alone uses the layer's.
      if constexpr (quirks::kRecomputeAddsRunningTotals) {
        b.block_re_flops += b.block_fw_flops;
        b.block_re_flops_time += b.block_fw_flops_time;
        b.block_re_mem_accessed += b.block_fw_mem_accessed;
        b.block_re_mem_time += b.block_fw_mem_time;
      } else {
        b.block_re_flops += t.flops[kFw];
        b.block_re_flops_time += t.flop_time[kFw];
        b.block_re_mem_accessed += t.bytes[kFw];
        b.block_re_mem_time += t.mem_time[kFw];
      }
      b.block_re_time += w * time[kFw];
    }
    add_stage(kAgrad, b.block_agrad_flops, b.block_agrad_flops_time,
              b.block_agrad_mem_accessed, b.block_agrad_mem_time,
              b.block_agrad_time);
    add_stage(kWgrad, b.block_wgrad_flops, b.block_wgrad_flops_time,
              b.block_wgrad_mem_accessed, b.block_wgrad_mem_time,
              b.block_wgrad_time);
    add_stage(kOptim, b.block_optim_flops, b.block_optim_flops_time,
              b.block_optim_mem_accessed, b.block_optim_mem_time,
              b.block_optim_time);
    b.useful_flops += w * (t.flops[kAgrad] + t.flops[kWgrad] + t.flops[kOptim]);
  });
}

namespace {

// The time of the expert all-to-all on `tiers`: node-deduplicated, per
// tier, or whole.
double ExpertAllToAllTime(const BlockTiers& tiers, const Collective& c) {
  return tiers.dedup_topk > 0
             ? DeduplicatedAllToAllTime(*tiers.expert, *tiers.expert_fast,
                                        c.bytes, c.peers, tiers.expert_local,
                                        tiers.dedup_topk, tiers.dedup_experts,
                                        tiers.dedup_ranks)
             : HierarchicalAllToAllTime(*tiers.expert, *tiers.expert_fast,
                                        c.bytes, c.peers, tiers.expert_local);
}

}  // namespace

void BlockPrices::NetTimes(const PricedTask& t, const Collective* collectives,
                           const BlockTiers& tiers, PhaseTimes& net) const {
  for (int phase = 0; phase < kNumCommPhases; ++phase) {
    // Only TPComm, exchanges and overlapped linears have network times; a
    // TPComm's of the re-communication only when it is re-communicated, an
    // exchange's never.
    bool timed = false;
    switch (t.kind) {
      case Kind::kTensorComm:
        timed = phase != kRecommPhase || t.recommunicate;
        break;
      case Kind::kExchange:
        timed = phase != kRecommPhase;
        break;
      case Kind::kOverlappedLinear:
        timed = true;
        break;
      case Kind::kCompute:
        break;
    }
    if (!timed) continue;
    const Collective* priced = nullptr;  // the variant priced last
    double comm = 0;
    for (int v = 0; v < kNumVariants; ++v) {
      const Collective& c =
          collectives[static_cast<size_t>(t.first_collective) +
                      static_cast<size_t>(phase * kNumVariants + v)];
      if (c.peers <= 1) continue;
      // The edge variant's collective is mostly the base one's: the same
      // arguments give the same time.
      if (priced == nullptr || c.op != priced->op ||
          c.bytes != priced->bytes || c.peers != priced->peers ||
          c.axis != priced->axis) {
        const NetworkTier& tier = c.axis == MeshAxis::kExpert ? *tiers.expert
                                  : c.axis == MeshAxis::kContext
                                      ? *tiers.context
                                      : *tiers.tensor;
        comm = c.op == CollectiveOp::kNone ? 0
               : c.axis == MeshAxis::kExpert &&
                       c.op == CollectiveOp::kAllToAll
                   ? ExpertAllToAllTime(tiers, c)
                   : CollectiveTime(tier, c.op, c.bytes, c.peers);
        priced = &c;
      }
      double time = 0;
      switch (t.kind) {
        case Kind::kTensorComm:
          // TPComm charges its own reduction and memory traffic here,
          // never as compute.
          time = comm + t.time[phase == kFwPhase   ? kFw
                               : phase == kBwPhase ? kAgrad
                                                   : kWgrad];
          break;
        case Kind::kExchange:
          time = comm;
          break;
        case Kind::kOverlappedLinear:
          // Its collective and the collective's reduction.
          time = c.op == CollectiveOp::kNone
                     ? 0
                     : comm + FlopTime(vector_rate_, c.reduction_flops);
          break;
        case Kind::kCompute:
          break;
      }
      net[phase][v] = time;
    }
  }
}

BlockPrices::Tiling BlockPrices::Tile(const PricedTask& t,
                                      const Collective* collectives,
                                      const BlockTiers& tiers,
                                      const PhaseTimes& net) const {
  Tiling tiling;
  const double pu = tiers.tensor->processor_usage;
  const double n = static_cast<double>(t.tiles);
  for (int s = 0; s < kNumStages; ++s) {
    const double ft = t.flop_time[s];
    const double fts = ft / (1 - pu);
    const double mt = t.mem_time[s];
    // compute_processing_time always prices the base block.
    const double net_time = s == kOptim ? 0 : net[PhaseOfStage(s)][kBase];
    const double ct = ProcessingTime(mode_, ft, mt);
    double time = ct, exposed = 0;
    if (net_time != 0) {
      const double cts = ProcessingTime(mode_, fts, mt);
      const double fts_tile = fts / n;
      const double net_tile = net_time / n;
      const double ct_tile = ct / n;
      const double cts_tile = cts / n;
      const double inflection = net_tile - fts_tile;
      if (inflection > 0) {
        time = ct_tile + (n - 1) * cts_tile;
        exposed = (n - 1) * inflection;
      } else {
        time = ct_tile + (n - 1) * ct_tile + (n - 1) * net_tile * pu;
        exposed = 0;
      }
      // Quirk (MODEL.md §6.3): pipe overlap adds the extra tile to both
      // processing and exposed time.
      if (t.pipe_overlap) {
        exposed += net_tile;
        if constexpr (quirks::kPipeTileInProcessingTime) {
          time += net_tile;
        }
      }
    }
    tiling.time[s] = time;
    tiling.exposed[s] = exposed;
  }
  for (int s : {kFw, kAgrad}) {
    const double fts_tile = t.flop_time[s] / (1 - pu) / n;
    for (int v = 0; v < kNumVariants; ++v) {
      const double tile =
          collectives[static_cast<size_t>(t.first_collective) +
                      static_cast<size_t>(PhaseOfStage(s) * kNumVariants + v)]
              .bytes /
          n;
      tiling.required_bandwidth =
          std::max(tiling.required_bandwidth, tile / fts_tile);
    }
  }
  return tiling;
}

double BlockPrices::CoverTime(size_t i, int stage,
                              const BlockTiers& tiers) const {
  const Collective* collectives = nullptr;
  const PricedTask& cover = TaskAt(i, &collectives);
  if (cover.kind != Kind::kOverlappedLinear) return Processing(cover, stage);
  PhaseTimes net{};
  NetTimes(cover, collectives, tiers, net);
  return Tile(cover, collectives, tiers, net).time[stage] +
         cover.quantize_time[stage];
}

BlockPrices::PhaseTimes BlockPrices::ExposedTimes(
    const PricedTask& t, const Collective* collectives,
    const BlockTiers& tiers, const PhaseTimes& net) const {
  // The collectives' times, exposed in full for TPComm and exchanges,
  // less for an exchange what the compute of the task that runs beside it
  // hides (a ring exchange's consumer, or the shared experts' linears: in
  // the forward and the backward pass), and for an overlapped linear as its
  // tiling says.
  PhaseTimes exposed{};
  switch (t.kind) {
    case Kind::kTensorComm:
    case Kind::kExchange:
      exposed = net;
      break;
    case Kind::kOverlappedLinear: {
      const Tiling tiling = Tile(t, collectives, tiers, net);
      // Quirk (MODEL.md §6.2): get_exposed_net_time returns the value of
      // the last compute_processing_time call, whatever the stage: fw for
      // the forward and the re-communication, agrad for the backward,
      // identical for base and edge.
      const double recomm_exposed = quirks::kOverlapExposedFromLastCall
                                        ? tiling.exposed[kFw]
                                        : tiling.exposed[kWgrad];
      for (int v = 0; v < kNumVariants; ++v) {
        exposed[kFwPhase][v] = tiling.exposed[kFw];
        exposed[kBwPhase][v] = tiling.exposed[kAgrad];
        exposed[kRecommPhase][v] = recomm_exposed;
      }
      break;
    }
    case Kind::kCompute:
      break;
  }
  if (t.kind == Kind::kExchange && t.overlapped_by >= 0) {
    const auto cover = static_cast<size_t>(t.overlapped_by);
    const double cover_fw = CoverTime(cover, kFw, tiers);
    const double cover_agrad = CoverTime(cover, kAgrad, tiers);
    for (int v = 0; v < kNumVariants; ++v) {
      exposed[kFwPhase][v] = std::max(0.0, net[kFwPhase][v] - cover_fw);
      exposed[kBwPhase][v] = std::max(0.0, net[kBwPhase][v] - cover_agrad);
    }
  }
  return exposed;
}

BlockPrices::PhaseTimes BlockPrices::ExpertOverlapKept(
    const BlockTiers& tiers, const BlockFigures& compute) const {
  PhaseTimes kept;
  for (auto& phase : kept) phase.fill(1);
  if (!tiers.expert_overlap) return kept;
  // The block's expert exchanges' exposed times per pass, weighed by their
  // share as the block's sums are; the block's compute (`compute`'s sums:
  // an exchange computes nothing) is what covers them.
  std::array<double, kNumVariants> fw{}, bw{};
  ForEachCollectiveTask([&](size_t, const PricedTask& t,
                            const Collective* collectives) {
    if (!t.expert_exchange || t.placement != Placement::kEveryBlock) return;
    PhaseTimes net{};
    NetTimes(t, collectives, tiers, net);
    const PhaseTimes exposed = ExposedTimes(t, collectives, tiers, net);
    for (int v = 0; v < kNumVariants; ++v) {
      fw[v] += t.share * exposed[kFwPhase][v];
      bw[v] += t.share * exposed[kBwPhase][v];
    }
  });
  for (int v = 0; v < kNumVariants; ++v) {
    const HiddenExchange hidden = ExpertOverlapHidden(
        tiers.delay_wgrad, fw[v], bw[v], compute.block_fw_time,
        compute.block_agrad_time, compute.block_wgrad_time);
    // What stays exposed: the exchange the cover does not hide, and the
    // processor share of the part it hides.
    const double keep = 1 - tiers.expert_overlap_usage;
    kept[kFwPhase][v] =
        fw[v] > 0 ? (fw[v] - keep * hidden.forward) / fw[v] : 1;
    kept[kBwPhase][v] =
        bw[v] > 0 ? (bw[v] - keep * hidden.backward) / bw[v] : 1;
  }
  return kept;
}

template <typename Sink>
void BlockPrices::AddCommunication(const BlockTiers& tiers, StagedBlock& out,
                                   Sink& sink) const {
  // Correction kExpertOverlap: the share of each expert exchange's exposed
  // time that combined 1F1B leaves (1 without it).
  const PhaseTimes kept = ExpertOverlapKept(tiers, out.block);
  // A task without collectives would add +0 to every sum (w >= 0): only
  // those with some are visited, a fifth of a MoE block's.
  ForEachCollectiveTask([&](size_t i, const PricedTask& t,
                            const Collective* collectives) {
    const auto collective = [&](int phase, int variant) -> const Collective& {
      return collectives[static_cast<size_t>(t.first_collective) +
                         static_cast<size_t>(phase * kNumVariants + variant)];
    };
    PhaseTimes net{};
    NetTimes(t, collectives, tiers, net);
    PhaseTimes exposed = ExposedTimes(t, collectives, tiers, net);
    if (t.expert_exchange && tiers.expert_overlap) {
      for (int v = 0; v < kNumVariants; ++v) {
        exposed[kFwPhase][v] *= kept[kFwPhase][v];
        exposed[kBwPhase][v] *= kept[kBwPhase][v];
      }
    }
    sink.Communication(i, net, exposed);
    // The block's sums, in task order.
    BlockFigures& b = FiguresOf(t.placement, out);
    const double w = t.share;
    const auto add_comm = [&](int phase, double& base_size, double& edge_size,
                              double& base_time, double& edge_time,
                              double& base_exposed, double& edge_exposed) {
      base_size += w * collective(phase, 0).bytes;
      edge_size += w * collective(phase, 1).bytes;
      base_time += w * net[phase][0];
      edge_time += w * net[phase][1];
      base_exposed += w * exposed[phase][0];
      edge_exposed += w * exposed[phase][1];
    };
    add_comm(kFwPhase, b.baseblock_fw_tp_size, b.edgeblock_fw_tp_size,
             b.baseblock_fw_tp_time, b.edgeblock_fw_tp_time,
             b.baseblock_fw_tp_time_exposed, b.edgeblock_fw_tp_time_exposed);
    if (!training_) return;
    if (t.recommunicate) {
      add_comm(kRecommPhase, b.baseblock_recomm_size, b.edgeblock_recomm_size,
               b.baseblock_recomm_time, b.edgeblock_recomm_time,
               b.baseblock_recomm_time_exposed,
               b.edgeblock_recomm_time_exposed);
    }
    add_comm(kBwPhase, b.baseblock_bw_tp_size, b.edgeblock_bw_tp_size,
             b.baseblock_agrad_tp_time, b.edgeblock_agrad_tp_time,
             b.baseblock_agrad_tp_time_exposed,
             b.edgeblock_agrad_tp_time_exposed);
  });
}

}  // namespace blueprint
