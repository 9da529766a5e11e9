// The rules the pricing kernel (block_pricing.h) applies per task and per
// program, one home each, read by the kernel, the plan's lineage and the
// analyses: the footprints a task adds, how the expert exchange is routed
// (hierarchical, node-deduplicated), which datatype a GEMM runs in, and
// what a precision recipe's casts move.
//
// Example:
//   const DataType dt = MatrixDatatype(task, program);
//   const QuantizationBytes q = TaskQuantizationBytes(task, program);
#ifndef BLUEPRINTING_CORE_PLAN_PROGRAM_RULES_H_
#define BLUEPRINTING_CORE_PLAN_PROGRAM_RULES_H_

#include <cstdint>

#include "core/plan/plan_ir.h"
#include "core/spec/program.h"
#include "core/spec/recipes.h"
#include "core/spec/spec.h"
#include "core/taskir/task_ir.h"

namespace blueprint {

// The footprint rules: AddTaskFootprint adds one task's footprints, weighed
// by its share, to `b` (weights, activation working and stored space, and
// in training gradients and optimizer state); FinishBlockFootprint applies
// the rules after the sums (full recompute stores no activation but the
// checkpoint, MODEL.md §6.6).
void AddTaskFootprint(const Task& task, bool training, BlockFigures& b);
void FinishBlockFootprint(const TypedProgram& program, bool training,
                          BlockFigures& b);

// The expert-parallel peers of a rank whose share of the expert all-to-all
// on tier `expert_network` moves over the tier below (hardware.h
// ExpertLocalPeers), under correction kHierarchicalAllToAll or a
// node-deduplicating dispatcher under kNodeDeduplicatedDispatch; 1 without.
int64_t ExpertLocalPeersOf(const TypedProgram& program,
                           int64_t expert_network);
// Whether the expert exchange is node-deduplicated: a flex dispatcher
// (DeepEP, HybridEP) under correction kNodeDeduplicatedDispatch.
bool NodeDeduplicatedDispatch(const TypedProgram& program);

// The datatype a task's matrix-engine work runs in: the GEMM datatype (FP8
// with Transformer Engine), except, under the refined profile's correction
// kAttentionInDatatype, the attention's batched matmuls (scores, context),
// which Transformer Engine's fused attention runs in the 16-bit datatype
// (FP8 attention is its opt-in fp8_dpa), and under kHeadAndRouterInDatatype
// the GEMMs Megatron-LM builds outside Transformer Engine (the output
// layer, the MoE router; core/spec/corrections.h).
DataType MatrixDatatype(const Task& task, const TypedProgram& program);

// The share of a rank's blocks that run outside the recipe
// (options.unquantized_first_blocks / _last_blocks, Megatron-LM's BF16
// layers): the blocks of the rank that holds the most of them over the
// blocks it holds. The first and the last blocks sit on one rank at p = 1
// and where the schedule table's row says a rank holds both ends
// (holds_both_ends: zb_v, dualpipe_v, dualpipe);
// else on the first and the last stages, and the slower sets the pace. For
// interleaved schedules whose first blocks spread over several stages'
// first chunks, max(first, last) is an upper bound. 0 without a recipe.
double UnquantizedBlockShare(const TypedProgram& program);

// Whether the matrix-engine work of `task` runs in the recipe: its
// MatrixDatatype is the recipe's (the share above runs it in
// options.datatype instead).
bool RunsInRecipe(const Task& task, const TypedProgram& program);

// The bytes the recipe's quantization passes of `task` move (a linear
// layer whose GEMM runs in the recipe's datatype; zero otherwise, and
// without a recipe or correction kQuantizationPasses), on the share of the
// blocks in the recipe (1 - UnquantizedBlockShare): the kernel prices them
// (TaskPlan::quantize_time) and the report sums them.
QuantizationBytes TaskQuantizationBytes(const Task& task,
                                        const TypedProgram& program);

// A training spec's expert parallelism; null for inference.
const ExpertParallel* ExpertParallelismOf(const TypedProgram& program);

// The GEMM datatype (options.gemm_datatype, else the datatype), and the
// attention's batched matmuls' (the datatype under correction
// kAttentionInDatatype): MatrixDatatype but for the tasks outside
// Transformer Engine, which InDatatypeOutsideTransformerEngine names.
DataType GemmDatatype(const TypedProgram& program);
DataType AttentionDatatype(const TypedProgram& program);
bool InDatatypeOutsideTransformerEngine(const Task& task,
                                        const TypedProgram& program);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_PLAN_PROGRAM_RULES_H_
