// BlockTable: the strategy search's memo of block figures. A block's figures
// (plan_ir.h BlockFigures) depend only on its BlockConfig, the network tiers
// of its own collectives (TP, the context K/V exchange, the expert
// all-to-all) and how the data-parallel ranks shard its state, not on d, v,
// the batch, the PP/DP tiers, offload or DP overlap; the search asks for
// them once per mapping and this table computes each distinct one once.
//
// Cost model: Lower + Plan (the full passes) run once per BlockConfig and
// tier triple. The sharded variants of a block (every ZeRO stage, the
// experts' state sharded over the expert data-parallel ranks) differ only in
// their optimizer step, gradients, optimizer state and (ZeRO-3) weights,
// which are re-derived from the unsharded task IR exactly as
// LowerTensorParallelBlock and PlanPortable compute them (about 1/30 of the
// passes' cost); block_table_test checks every field bit for bit against the
// full passes on the sharded program.
#ifndef BLUEPRINTING_CORE_SEARCH_BLOCK_TABLE_H_
#define BLUEPRINTING_CORE_SEARCH_BLOCK_TABLE_H_

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "core/analysis/figures.h"
#include "core/plan/block_pricing.h"
#include "core/plan/plan_ir.h"
#include "core/search/mapping.h"
#include "core/spec/derive.h"
#include "core/spec/program.h"
#include "core/spec/spec.h"
#include "core/taskir/lower.h"
#include "core/taskir/task_ir.h"

namespace blueprint {

// Everything one block's lowering depends on besides the model, the
// datatype, the precision and the shard. The fields after fused_activation
// default to Calculon's block (no context or expert parallelism).
struct BlockConfig {
  int64_t tensor = 1;
  int64_t microbatch_size = 1;
  RecomputePolicy recompute = RecomputePolicy::kNone;
  TensorCommunication comm = AllReduce{};  // with all_gather_redo
  TensorOverlap tp_overlap = TensorOverlap::kNone;
  bool fused_activation = true;
  int64_t context = 1;  // cp
  ContextExchange context_exchange = ContextExchange::kRing;  // with cp > 1
  int64_t expert = 1;         // ep
  int64_t expert_tensor = 0;  // etp; 0: the tensor degree
  // The pipeline degree, which sets the dense and MoE shares of the priced
  // stage's blocks (derive.h StageMoeBlocks); only read for a model whose
  // MoE blocks follow a layer pattern. In a key (BlockTable::Canonical) it
  // is the representative of those shares: a p, or below 0 an explicit
  // layout's (the table's own copy).
  int64_t pipeline = 1;
  // An explicit stage layout (PipelineParallel::stage_blocks) in place of
  // p's even one, or null: not part of the key (Canonical resolves it into
  // `pipeline`), and only read while the config is looked up.
  const std::vector<int64_t>* stage_blocks = nullptr;

  friend bool operator==(const BlockConfig& a, const BlockConfig& b) {
    return a.tensor == b.tensor && a.microbatch_size == b.microbatch_size &&
           a.recompute == b.recompute && a.comm.index() == b.comm.index() &&
           AllGatherRedo(a.comm) == AllGatherRedo(b.comm) &&
           a.tp_overlap == b.tp_overlap &&
           a.fused_activation == b.fused_activation &&
           a.context == b.context &&
           a.context_exchange == b.context_exchange &&
           a.expert == b.expert && a.expert_tensor == b.expert_tensor &&
           a.pipeline == b.pipeline;
  }
  template <typename H>
  friend H AbslHashValue(H h, const BlockConfig& c) {
    return H::combine(std::move(h), c.tensor, c.microbatch_size, c.recompute,
                      c.comm.index(), AllGatherRedo(c.comm), c.tp_overlap,
                      c.fused_activation, c.context, c.context_exchange,
                      c.expert, c.expert_tensor, c.pipeline);
  }
};

// BlockConfigOf: the block of a mapping.
BlockConfig BlockConfigOf(const TrainingMapping& mapping);

// The network tiers of a block's own collectives: TP, the context K/V
// exchange (read with cp > 1) and the expert all-to-all (with ep > 1).
struct BlockNets {
  int64_t tensor = 0;
  int64_t context = 0;
  int64_t expert = 0;
};

// How the data-parallel ranks shard a block's state: the ZeRO stage, the
// ranks that share one copy of the dense state (the sharding group) and
// those of the routed experts' state (ExpertShard).
struct BlockShard {
  ShardingStage stage = ShardingStage::kNone;
  int64_t group = 1;
  double expert = 1;
};

// ExpertShard: the ranks the routed experts' state is sharded over, as
// LowerTensorParallelBlock computes it from the derived values: the expert
// data-parallel ranks, in the proportion the sharding group has to d (1
// without sharding).
double ExpertShard(const DerivedValues& derived);

// BlockShardOf: the shard of a mapping with these derived values.
BlockShard BlockShardOf(const DerivedValues& derived);

class BlockTable {
  struct Lowered;

 public:
  // One block configuration of the table (lowered on first use); stable
  // until Clear().
  using Entry = Lowered;

  // `model` and `system` must outlive the table. Every block is lowered
  // and priced with `precision`, the corrections of `profile` and
  // `variant`'s recipe and expert dispatcher and overlap.
  BlockTable(const TransformerModel& model, const System& system,
             DataType datatype,
             PrecisionAccounting precision = PrecisionAccounting::kCalculon,
             ModelProfile profile = ModelProfile::kCalculon,
             const ExecutionVariant& variant = {});

  // The entry of the block `config`, lowered (LowerTensorParallelBlock) on
  // first use. With a model with experts, `expert_variants` are the (ep,
  // etp) the caller will also ask for with this configuration, and with cp
  // > 1 `exchanges` the K/V exchanges: each such variant is lowered with
  // it, from the one before (Relower, which rebuilds only the experts' and
  // exchanges' tasks and keeps the IR in cache), their prices and shard
  // inputs those of the one before but for the rebuilt tasks. The search
  // asks for some 18 (ep, etp) and both exchanges of each configuration.
  absl::StatusOr<Entry*> Find(
      const BlockConfig& config,
      const std::vector<std::pair<int64_t, int64_t>>& expert_variants = {},
      const std::vector<ContextExchange>& exchanges = {});

  // The figures of the block with its collectives on `nets` and its state
  // sharded as `shard` says. The pointer stays valid until Clear() or the
  // next call for the same entry with another shard (of any ZeRO stage) or
  // the same ZeRO stage.
  absl::StatusOr<const StagedBlock*> Get(Entry* entry, const BlockNets& nets,
                                         const BlockShard& shard);
  // Get's block and what StepTimeLowerBound reads of it (BoundFiguresOf),
  // which the table keeps beside the block's tiers: a bound read from it
  // reads no block (a cache miss per bound in the search). `staged` is
  // valid as Get's pointer, `bound` until the next call for the entry.
  // Without `compose`, a ZeRO variant's block on tiers it has not been
  // composed for stays uncomposed (`staged` is then nullptr; its bound's
  // figures come from the unsharded block's and the variant's terms): the
  // search composes only the blocks its bounds do not rule out.
  struct PlannedBlock {
    const StagedBlock* staged = nullptr;
    const BoundFigures* bound = nullptr;
  };
  absl::StatusOr<PlannedBlock> GetPlanned(Entry* entry, const BlockNets& nets,
                                          const BlockShard& shard,
                                          bool compose = true);
  absl::StatusOr<const StagedBlock*> Get(const BlockConfig& config,
                                         const BlockNets& nets,
                                         const BlockShard& shard);
  // Calculon's block: TP collectives on `tensor_net`, the optimizer sharded
  // `shard` ways (1: unsharded).
  absl::StatusOr<const StagedBlock*> Get(const BlockConfig& config,
                                         int64_t tensor_net, int64_t shard);

  // Figures of the block whose footprints are exact and whatever the tiers:
  // those ComputeMemory reads (weights, activations, checkpoint, weight
  // gradients, optimizer state); every other figure is 0. The block is not
  // planned, only lowered: the search checks memory with it first. Valid
  // as Get's pointer.
  const StagedBlock* Footprint(Entry* entry, const BlockShard& shard);

  // The block's figures without its collectives (BlockPrices::PlanCompute,
  // sharded as `shard` says): Get's on any tiers with every collective's
  // size and time 0, so StepTimeLowerBound of it bounds that of Get's on
  // every tiers (it does not decrease with any exposed time). nullptr for a
  // block BlockPrices::Plan does not price (a TP-overlapped linear). Valid as Get's
  // pointer.
  const StagedBlock* Compute(Entry* entry, const BlockShard& shard);
  // BoundFiguresOf(Compute(entry, shard)->block) (none where Compute is
  // nullptr), made without composing a ZeRO variant's compute block.
  std::optional<BoundFigures> ComputeBound(Entry* entry,
                                           const BlockShard& shard);

  // Forgets every block. The search calls it when t or cp changes (no
  // later mapping shares a block with an earlier run), keeping the table
  // small. Their storage is kept for the blocks lowered next: a table grows
  // to tens of megabytes per run, and giving that back to the system and
  // taking it again for the next run cost the search half its time in page
  // faults. Sharded variants are kept for one (group, expert shard) per
  // entry and ZeRO stage, for every tiers asked: asking for another shard
  // replaces them, of every stage (the search asks for one d after another,
  // and for the stages of one d one after another).
  void Clear();

  // Gives back what `entry` made on use (its figures per tiers and its
  // sharded variants) for the entries used next, keeping its lowering:
  // pointers Get, Footprint and Compute gave for it are no longer valid,
  // and asked again it makes them again. The search calls it for the
  // entries of a group when no later group of its run can use them
  // (Family), so that the table holds the figures of the blocks in use
  // rather than of every block of the run: fresh memory costs a page fault
  // per 4 KiB, some 10 us on a virtual machine.
  void Release(Entry* entry);
  // What a search group fixes of the key of `config` (t, cp, ep, etp and p
  // as the key holds them), the other fields at their defaults: Find gives
  // the same entry for two configurations only if their families are equal.
  BlockConfig Family(const BlockConfig& config);

  int64_t blocks_lowered() const { return blocks_lowered_; }
  int64_t blocks_planned() const { return blocks_planned_; }
  int64_t blocks_resharded() const { return blocks_resharded_; }

 private:
  // What the shard-dependent terms of one task are made of, unsharded.
  struct TaskShardInputs {
    double weight_grad_elements = 0;
    double optimizer_bytes = 0;    // master copy + Adam state
    double weight_bytes = 0;
    double forward_flops = 0;
    double activation_grad_flops = 0;
    double weight_grad_flops = 0;
    // A recipe's cast of the weights, once per step (the pricing's
    // quantize_time of the optimizer stage, which the shard does not
    // change: the whole weight is cast on every rank).
    double weight_cast_time = 0;
    double share = 1;          // Task::share
    bool no_processing = false;  // TPComm and exchanges: never compute
    bool expert_state = false;   // a routed expert's: the expert shard
    bool has_state = false;      // weights, gradients or optimizer state
    Placement placement = Placement::kEveryBlock;
  };
  // One task's shard-dependent terms for one shard (Reshard), before its
  // share weighs them.
  struct TaskShardTerms {
    double optim_flops = 0, optim_bytes = 0, optim_flops_time = 0,
           optim_mem_time = 0, optim_time = 0;
    double weight_space = 0, grads_whole = 0, grads_sharded = 0;
  };
  // The figures the shard changes, of the block, the first and the last
  // stage (Reshard), whatever the tiers.
  struct ShardTerms {
    double optim_flops = 0, optim_flops_time = 0, optim_mem_accessed = 0,
           optim_mem_time = 0, optim_time = 0;
    double weight_space = 0;  // ZeRO-3 only
    double weight_grad_space = 0, optimizer_space = 0, useful_flops = 0;
  };
  // Planned figures (the table's pool holds them), and where an entry or
  // variant finds those of some tiers: the tiers and the bound's figures
  // beside a pointer, so that finding a block and bounding it read one
  // short array.
  struct Planned {
    StagedBlock staged;
  };
  struct PlannedRef {
    BlockNets nets;
    BoundFigures bound;
    Planned* planned = nullptr;  // a variant's: nullptr until composed
  };
  // A ZeRO stage's variant of a block, for one shard group and expert
  // shard at a time.
  struct Sharded {
    std::array<ShardTerms, kNumPlacements> terms{};
    // Footprint's and Compute's figures with the terms applied, made on
    // first use (most variants need neither: a variant is made for every
    // stage at once), and the planned figures with the terms applied, per
    // tiers; the table's pool holds them all.
    Planned* footprint = nullptr;
    Planned* compute = nullptr;
    std::vector<PlannedRef> composed;
  };
  // A block BlockPrices::Plan does not price (Supports is false: a
  // TP-overlapped linear): its program (for the expert peers per tiers) and
  // prices, which PlanTasks plans on each tiers.
  struct Unpriced {
    TypedProgram program;
    BlockPrices prices;
  };
  // Which shard a stage's variant is made for: in the entry, so that a
  // lookup of the same shard reads no variant.
  struct ShardedSlot {
    int64_t group = 0;  // 0: none made yet
    double expert = 0;
    Sharded* variant = nullptr;  // the table's pool holds it
  };
  struct Lowered {
    // Per ZeRO stage but kNone, its variant, made on first use (first, in
    // the entry's first cache lines).
    std::array<ShardedSlot, 3> sharded{};
    BlockConfig key;  // canonical
    // Per task, what Reshard reads: every task's, or (an (ep, etp) variant
    // relowered from another) only those of the tasks shard_override_ids
    // (increasing), the others shard_base's (the entry lowered in full,
    // which lives as long).
    std::vector<TaskShardInputs> shard_inputs;
    const Lowered* shard_base = nullptr;
    std::vector<int32_t> shard_override_ids;
    // Of an entry lowered in full: its tasks' terms for the sharding group
    // shard_terms_group (0: none), made by its last Reshard, for the tasks
    // with state that is not a routed expert's (whose shard varies by
    // variant); its relowered variants read those of the tasks they keep.
    // A cache, which each search worker's table owns alone.
    mutable int64_t shard_terms_group = 0;
    mutable std::vector<TaskShardTerms> shard_terms;
    StagedBlock footprint;  // unsharded, Footprint's
    // How its figures are planned per tiers: BlockPrices::Plan, or (a
    // block with a TP-overlapped linear) unpriced's PlanTasks.
    std::optional<BlockPrices> prices;
    std::unique_ptr<Unpriced> unpriced;
    // With prices: its PlanCompute, unsharded, made on first use (the
    // table's pool holds it), and its bound's figures.
    Planned* compute = nullptr;
    BoundFigures compute_bound;
    // Unsharded, per tiers.
    std::vector<PlannedRef> planned;
  };

  // An empty entry for Find to fill: a released one, or a new one.
  Lowered& NextEntry();
  // Storage for an entry's planned figures or sharded variant: given back
  // by Release, or new.
  Planned& TakePlanned();
  Sharded& TakeSharded();
  // Gives back a sharded variant's planned figures.
  void ReleaseComposed(Sharded& sharded);
  // Sets program_ to the program of the canonical `key`.
  void SetProgram(const BlockConfig& key);
  // Lowers the canonical `key` into a new entry: relowered in scratch_
  // (Relower) from `previous`, the entry whose block scratch_
  // holds, when given and of the same structure (ep > 1 alike), else
  // lowered in full.
  absl::StatusOr<Lowered*> Lower(const BlockConfig& key,
                                 const Lowered* previous);
  // Fills `lowered` from `tasks`, the lowering of its key: its shard
  // inputs, footprint and prices; with `previous`, those of `previous`
  // with the tasks `rebuilt` changed.
  void FillEntry(const DistributedTaskIR& tasks, const Lowered* previous,
                 const std::vector<int32_t>& rebuilt, Lowered& lowered);
  // The config as a key: the fields its lowering does not read at their
  // defaults, and p (read only through the dense and MoE shares of the
  // priced stage) as the first p Find saw with the same shares, or, for an
  // explicit layout whose shares no p seen has, -1 - the index of its copy
  // in layouts_.
  BlockConfig Canonical(const BlockConfig& config);
  absl::StatusOr<const PlannedRef*> Unsharded(Lowered& lowered,
                                              const BlockNets& nets);
  // A priced block's PlanCompute, unsharded.
  const StagedBlock& UnshardedCompute(Lowered& lowered);
  // Correction kHierarchicalAllToAll's local expert peers of a block whose
  // all-to-all runs on tier `expert_net` (program_rules.h ExpertLocalPeersOf).
  int64_t LocalExpertPeers(const BlockConfig& key, int64_t expert_net) const;
  // The stage's variant, made for `shard` when it was for another.
  ShardedSlot& ShardedOf(Lowered& lowered, const BlockShard& shard);
  // Per ZeRO stage but kNone (StageSlot), the shard-dependent terms
  // (optimizer step, sharded gradients, optimizer state and weights, useful
  // FLOPs) per placement, with `shard`'s group and expert shard (its stage
  // is not read): one pass for the three.
  using StageShardTerms =
      std::array<std::array<ShardTerms, kNumPlacements>, 3>;
  void Reshard(const Lowered& lowered, const BlockShard& shard,
               StageShardTerms& terms) const;
  // A task's terms with its state sharded `s` ways.
  TaskShardTerms TermsOf(const TaskShardInputs& in, double s) const;
  // `unsharded` with the terms in the figures of each placement.
  static void ShardFigures(const StagedBlock& unsharded,
                           const std::array<ShardTerms, kNumPlacements>& terms,
                           ShardingStage stage, StagedBlock& out);
  // ShardFigures of `unsharded` with `variant`'s terms, made once per shard
  // into `made` (taken from the pool when null).
  const StagedBlock* ShardOnce(const StagedBlock& unsharded,
                               const Sharded& variant, ShardingStage stage,
                               Planned*& made);
  // BoundFiguresOf a block's ShardFigures with `variant`'s terms, from the
  // block's own bound figures (`unsharded`): the variant's block need not
  // be composed to be bounded.
  static BoundFigures ShardedBound(const BoundFigures& unsharded,
                                   const Sharded& variant);

  const TransformerModel& model_;
  const System& system_;
  DataType datatype_;
  PrecisionAccounting precision_;
  ModelProfile profile_;
  ExecutionVariant variant_;
  // With a recipe, the blocks are priced in the program's datatypes and
  // recipe (BlockPrices' program rates); without one in datatype_, as
  // before recipes were searched (the same prices, without reading the
  // program per task).
  bool program_rates_;
  // Whether the expert all-to-all's rules (SetExpertRules: a deduplicating
  // dispatcher, the expert overlap) may apply: not with the all_to_all
  // dispatcher without overlap.
  bool expert_rules_;
  // Correction kAchievableMatmulRate under profile_ (BlockPrices' rates).
  bool achievable_matmul_;
  const ProcessorRate* vector_rate_;  // of datatype_: the optimizer step's
  // The program lowered next (Find): made once, with the model and the
  // system, and given each block's parallelism, batch and options.
  std::optional<TypedProgram> program_;
  // Whether the dense and MoE shares of a block depend on p.
  bool shares_vary_by_stage_;
  // With shares_vary_by_stage_: the representative p of each p seen, and of
  // each share StageMoeBlocks / BlocksPerStage as a reduced fraction.
  absl::flat_hash_map<int64_t, int64_t> share_pipeline_;
  absl::flat_hash_map<std::pair<int64_t, int64_t>, int64_t> pipeline_of_share_;
  // The explicit layouts that represent their shares (pipeline -1 - i):
  // (p, layout).
  std::deque<std::pair<int64_t, std::vector<int64_t>>> layouts_;
  absl::flat_hash_map<BlockConfig, Lowered*> lowered_index_;
  // The entries in use are the first lowered_used_; the rest are storage
  // that Clear() released, reused by NextEntry.
  std::deque<Lowered> lowered_;
  size_t lowered_used_ = 0;
  // What entries make on use, which Release gives back (deques, so that
  // the figures Get returned stay where they are).
  std::deque<Planned> planned_pool_;
  std::vector<Planned*> free_planned_;
  std::deque<Sharded> sharded_pool_;
  std::vector<Sharded*> free_sharded_;
  // Where Find lowers a priced block: one IR whose storage every lowering
  // reuses.
  DistributedTaskIR scratch_;
  RelowerSections sections_;      // where scratch_'s experts and exchanges are
  // The footprint sums (AddFootprints) over the tasks [0,
  // footprint_prefix_end_) of footprint_prefix_root_, an entry lowered in
  // full, which its relowered variants share: their tasks before the
  // first rebuilt one are its. Made by the first such variant.
  const Lowered* footprint_prefix_root_ = nullptr;
  size_t footprint_prefix_end_ = 0;
  StagedBlock footprint_prefix_;
  std::vector<int32_t> rebuilt_;  // Relower's tasks
  StageShardTerms reshard_scratch_;  // Reshard's, copied to each stage
  int64_t blocks_lowered_ = 0;
  int64_t blocks_planned_ = 0;
  int64_t blocks_resharded_ = 0;
};

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SEARCH_BLOCK_TABLE_H_
