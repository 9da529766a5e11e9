// BlockTable: the strategy search's memo of block figures. A block's figures
// (plan_ir.h BlockFigures) depend only on its BlockConfig, the TP network
// tier and the optimizer shard, not on p, v, d, the batch, the PP/DP tiers,
// offload or DP overlap; the search asks for them once per mapping and this
// table computes each distinct one once.
//
// Cost model: Lower + Plan (the full passes) run once per BlockConfig and TP
// tier. The optimizer-sharded variant of a block differs only in its
// optimizer terms, which are re-derived from the unsharded task IR exactly as
// LowerTensorParallelBlock and PlanPortable compute them (about 1/30 of the
// passes' cost); block_table_test checks every field bit for bit against the
// full passes on the sharded program.
#ifndef BLUEPRINTING_CORE_SEARCH_BLOCK_TABLE_H_
#define BLUEPRINTING_CORE_SEARCH_BLOCK_TABLE_H_

#include <cstdint>
#include <deque>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "core/analysis/figures.h"
#include "core/plan/plan_ir.h"
#include "core/spec/derive.h"
#include "core/spec/program.h"
#include "core/spec/spec.h"

namespace blueprint {

// One block's figures and the first and last stage's extra work (plan IR
// first_stage / last_stage; 0 without a vocabulary), planned together.
struct StagedBlock {
  BlockFigures block;
  StageExtras extras;
};

// Everything one block's lowering depends on besides the model, the
// datatype and the optimizer shard.
struct BlockConfig {
  int64_t tensor = 1;
  int64_t microbatch_size = 1;
  RecomputePolicy recompute = RecomputePolicy::kNone;
  TensorCommunication comm = AllReduce{};  // with all_gather_redo
  TensorOverlap tp_overlap = TensorOverlap::kNone;
  bool fused_activation = true;

  friend bool operator==(const BlockConfig& a, const BlockConfig& b) {
    return a.tensor == b.tensor && a.microbatch_size == b.microbatch_size &&
           a.recompute == b.recompute && a.comm.index() == b.comm.index() &&
           AllGatherRedo(a.comm) == AllGatherRedo(b.comm) &&
           a.tp_overlap == b.tp_overlap &&
           a.fused_activation == b.fused_activation;
  }
  template <typename H>
  friend H AbslHashValue(H h, const BlockConfig& c) {
    return H::combine(std::move(h), c.tensor, c.microbatch_size, c.recompute,
                      c.comm.index(), AllGatherRedo(c.comm), c.tp_overlap,
                      c.fused_activation);
  }
};

class BlockTable {
 public:
  // `model` and `system` must outlive the table.
  BlockTable(const TransformerModel& model, const System& system,
             DataType datatype);

  // The figures of the block `config` with its TP collectives on network
  // tier `tensor_net` and the optimizer sharded `shard` ways (1: unsharded).
  // The pointer stays valid until Clear() or a Get() with another shard.
  absl::StatusOr<const StagedBlock*> Get(const BlockConfig& config,
                                         int64_t tensor_net, int64_t shard);

  // Forgets every block. The search calls it when t changes (no later
  // mapping shares a block with an earlier t), keeping the table small.
  // Sharded variants are kept for one shard at a time: asking for another
  // shard forgets them (the search asks for one d after another).
  void Clear();

  int64_t blocks_planned() const { return blocks_planned_; }
  int64_t blocks_resharded() const { return blocks_resharded_; }

 private:
  // What the optimizer terms of one task are made of, unsharded.
  struct TaskOptimizerInputs {
    double weight_grad_elements = 0;
    double weight_grad_bytes = 0;  // weight_grad_elements * bytes per element
    double optimizer_bytes = 0;    // master copy + Adam state
    double forward_flops = 0;
    double activation_grad_flops = 0;
    double weight_grad_flops = 0;
    bool tensor_comm = false;  // TPComm: never charged as compute
    Placement placement = Placement::kEveryBlock;
  };
  struct Lowered {
    TypedProgram program;     // the unsharded block's program
    DistributedTaskIR tasks;  // its lowering, planned per tier on demand
    std::vector<TaskOptimizerInputs> optimizer_inputs;
    std::vector<std::optional<StagedBlock>> by_tensor_net;
  };
  struct Sharded {
    std::vector<std::optional<StagedBlock>> by_tensor_net;
  };

  absl::StatusOr<Lowered*> FindOrLower(const BlockConfig& config);
  absl::StatusOr<const StagedBlock*> Unsharded(Lowered& lowered,
                                               int64_t tensor_net);
  // Overwrites the shard-dependent figures of `block` (optimizer step,
  // sharded gradients and optimizer state, useful FLOPs).
  void Reshard(const Lowered& lowered, int64_t shard,
               StagedBlock& staged) const;

  const TransformerModel& model_;
  const System& system_;
  DataType datatype_;
  absl::flat_hash_map<BlockConfig, Lowered*> lowered_index_;
  std::deque<Lowered> lowered_;
  int64_t sharded_for_ = 0;  // the shard of the entries in sharded_
  absl::flat_hash_map<BlockConfig, Sharded*> sharded_index_;
  std::deque<Sharded> sharded_;
  int64_t blocks_planned_ = 0;
  int64_t blocks_resharded_ = 0;
};

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SEARCH_BLOCK_TABLE_H_
