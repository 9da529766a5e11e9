// The typed mapping spec: what a user asks Blueprinting to analyse. A
// transformer model, a system (Calculon's system description), and a typed
// parallelism strategy whose sum types are std::variants of distinct structs.
//
// Degrees (t, p, d, v, world size) are not stored twice: they are derived
// projections, see derived.h. Adapters (core/adapters, spec_json.h) build a
// spec from external keys; the checker (check.h) verifies it.
//
// Example:
//   TransformerTrainingMappingSpec spec;
//   spec.parallelism.pipeline.schedule = InterleavedOneForwardOneBackward{3};
//   std::visit(Overloaded{[](const SingleStage&) {...},
//                         [](const OneForwardOneBackward&) {...},
//                         [](const InterleavedOneForwardOneBackward& s) {...},
//                         [](const ForwardOnly&) {...}},
//              spec.parallelism.pipeline.schedule);
#ifndef BLUEPRINTING_CORE_SPEC_SPEC_H_
#define BLUEPRINTING_CORE_SPEC_SPEC_H_

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "core/schedule/schedule_table.h"

namespace blueprint {

//----- Model ------------------------------------------------------------------

enum class MlpType { kPlain, kGated };
enum class NormType { kLayerNorm, kRmsNorm };
enum class PositionEmbedding { kNone, kRope, kLearned };

// Vocabulary: the input embedding (first pipeline stage), the final norm and
// the output layer (last stage). size 0 is Calculon's model: transformer
// blocks only, no embedding, no LM head.
struct Vocabulary {
  int64_t size = 0;            // V before padding; 0: no embedding, no head
  int64_t divisible_by = 128;  // Megatron-LM's make_vocab_size_divisible_by
  bool tied = true;            // the output layer reuses the embedding
  PositionEmbedding position = PositionEmbedding::kNone;
  int64_t max_positions = 0;   // rows of a learned position table
};

// Mixture of experts: which blocks replace their dense MLP by `experts`
// routed experts (each a gated or plain MLP of intermediate size `ffn`, the
// model's `mlp` type), `topk` of them per token, plus `shared_ffn` of shared
// experts that every token runs, and a router (hidden x experts).
struct MixtureOfExperts {
  int64_t experts = 0;        // routed experts
  int64_t topk = 0;           // experts per token
  int64_t ffn = 0;            // one expert's intermediate size
  int64_t shared_ffn = 0;     // the shared experts' intermediate size, 0: none
  // Which blocks are MoE: "" every block; otherwise one character per block,
  // '1' MoE and '0' dense (Megatron-LM's --moe-layer-freq, expanded).
  std::string layer_pattern;
  // Tokens an expert is sized for, over the even share (>= 1): the
  // imbalance of routing that the busiest expert sees.
  double capacity_factor = 1;
  // How the router's kernels after its gating GEMM run (the refined
  // profile's correction moe_router_kernels): fused into one pass each way
  // (Megatron-LM's --moe-router-fusion, Transformer Engine's fused router
  // kernels) or as PyTorch's separate kernels; and whether an auxiliary
  // load-balancing loss is computed (--moe-aux-loss-coeff above 0 with an
  // aux_loss, seq_aux_loss or global_aux_loss balancing type), which scores
  // every expert once more.
  bool router_fusion = false;
  bool aux_loss = false;
};

// Multi-latent attention (DeepSeek-V2/V3): queries through a low-rank
// latent (q_lora_rank, 0: a direct projection), keys and values through a
// shared latent of kv_lora_rank; each head's query/key has a part without
// position (qk_head_dim) and a rotary part (qk_rope_head_dim, one key shared
// by all heads); values have v_head_dim.
struct LatentAttention {
  int64_t q_lora_rank = 0;
  int64_t kv_lora_rank = 0;
  int64_t qk_head_dim = 0;
  int64_t qk_rope_head_dim = 0;
  int64_t v_head_dim = 0;
};

// TransformerModel: Calculon's application (hidden ... seq_size) plus the
// architecture of today's models. The defaults of the architecture fields
// (kv_heads = attn_heads, plain MLP, LayerNorm, no biases, no vocabulary)
// are exactly Calculon's block.
struct TransformerModel {
  std::string name;          // Free text, e.g. "gpt3-175B"; not used in math.
  int64_t hidden = 0;        // h
  int64_t feedforward = 0;   // ff, the MLP's intermediate size
  int64_t attn_heads = 0;    // a, query heads
  int64_t attn_size = 0;     // dh, size of one head (need not be h / a)
  int64_t num_blocks = 0;    // nb, transformer blocks
  int64_t seq_size = 0;      // s, sequence length
  int64_t kv_heads = 0;      // g, key/value heads (query groups): a for MHA
  MlpType mlp = MlpType::kPlain;
  NormType norm = NormType::kLayerNorm;
  bool linear_bias = false;  // biases on the linear layers
  Vocabulary vocabulary;
  std::optional<MixtureOfExperts> moe;              // none: every MLP dense
  std::optional<LatentAttention> latent_attention;  // none: Q/K/V heads
  // Multi-token prediction (DeepSeek-V3): extra blocks on the last stage,
  // each predicting one more token through the shared output layer.
  int64_t mtp_layers = 0;
};

// CalculonModel: a model of Calculon's block (kv_heads = attn_heads and every
// other architecture field at its default).
TransformerModel CalculonModel(std::string name, int64_t hidden,
                               int64_t feedforward, int64_t attn_heads,
                               int64_t attn_size, int64_t num_blocks,
                               int64_t seq_size);

//----- System -----------------------------------------------------------------

// kFloat4 is a GEMM datatype only (NVFP4's E2M1 tensor-core rate, a
// system's `float4` matrix key): the checker admits it nowhere else, since no
// tensor of the model is stored in it but by its recipe (core/spec/recipes.h).
enum class DataType { kFloat8, kFloat16, kBFloat16, kFloat32, kFloat4 };

// One (threshold, efficiency) row of an efficiency table. The threshold is in
// GFLOP for processors and MB for memories; rows are strictly descending and
// the last threshold is 0.
struct EfficiencyRow {
  double threshold = 0;
  double efficiency = 0;
};

// ProcessorRate: one datatype of a compute engine.
struct ProcessorRate {
  double tflops = 0;
  std::vector<EfficiencyRow> gflops_efficiency;
  // The maximum achievable matmul rate (TFLOP/s) measured on the GPU, the
  // best over GEMM shapes (a `matrix.<datatype>.achievable_tflops` key of
  // this project's presets, absent in Calculon's files); the refined
  // profile's correction kAchievableMatmulRate caps the GEMM rate there.
  std::optional<double> achievable_tflops;
};

// Processor: a matrix or vector engine. Keyed by datatype; std::map keeps a
// deterministic order in every canonical text.
struct Processor {
  std::map<DataType, ProcessorRate> rates;
};

// MemoryTier: mem1 (HBM) or mem2 (the offload tier).
struct MemoryTier {
  double gib = 0;
  double gbps = 0;
  std::vector<EfficiencyRow> mb_efficiency;
};

// NetworkOpCost: how a collective's size scales: S' = S*scalar,
// S' += (S'/n)*offset. p2p has no offset (Calculon's null).
struct NetworkOpCost {
  double scalar = 1;
  std::optional<double> offset;
  // The bus bandwidth (GB/s) NCCL measures for this collective on the tier
  // (nccl-tests' busbw at large messages), by group size: rows of [ranks,
  // GB/s], ranks strictly descending to 0, the first row with ranks <= the
  // group's taken (the NVLS all-reduce of an NVSwitch node is faster with
  // more ranks). Optional (this project's presets: the tier's
  // measured_busbw key; Calculon's files have none); empty: the tier's
  // bandwidth x efficiency. Only the refined profile's correction
  // measured_collective_rates reads it (core/plan/hardware.h
  // SystemUnderCorrections, CollectiveTime).
  std::vector<EfficiencyRow> measured_busbw;
};

// NetworkTier: one level of the network hierarchy (NVLink, InfiniBand, ...).
struct NetworkTier {
  double bandwidth_gbps = 0;
  double efficiency = 0;
  int64_t size = 0;
  double latency_s = 0;
  NetworkOpCost p2p;
  NetworkOpCost reduce_scatter;
  NetworkOpCost all_gather;
  NetworkOpCost all_reduce;
  bool must_be_filled = false;
  double processor_usage = 0;
};

// The collectives of a tier (point-to-point is none) under their JSON names,
// for reading, writing and checking their measured_busbw alike. `Tier` is
// NetworkTier or const NetworkTier.
template <typename Tier>
auto NetworkCollectives(Tier& net)
    -> std::array<std::pair<const char*, decltype(&net.all_reduce)>, 3> {
  return {{{"reduce_scatter", &net.reduce_scatter},
           {"all_gather", &net.all_gather},
           {"all_reduce", &net.all_reduce}}};
}

enum class ProcessingMode { kNoOverlap, kRoofline };

// System: Calculon's system JSON, typed.
struct System {
  std::string name;  // Free text; not used in math.
  Processor matrix;
  Processor vector;
  MemoryTier mem1;
  MemoryTier mem2;
  ProcessingMode processing_mode = ProcessingMode::kNoOverlap;
  std::vector<NetworkTier> networks;
};

//----- Strategy ---------------------------------------------------------------

// Tensor-parallel communication, the sum type of the seed.
struct AllReduce {};                    // Calculon "ar"
struct ReduceScatterAllGather {         // Calculon "rs_ag" (sequence parallel)
  bool all_gather_redo = false;         // Calculon "seq_par_ag_redo"
};
struct EdgeReduceScatterAllGather {};   // Calculon "p2p_rs_ag"
using TensorCommunication =
    std::variant<AllReduce, ReduceScatterAllGather, EdgeReduceScatterAllGather>;

// TP communication overlapped with the adjacent linear layers.
enum class TensorOverlap { kNone, kRing, kPipe };

struct TensorParallel {
  int64_t degree = 1;
  TensorCommunication communication = AllReduce{};
  TensorOverlap overlap = TensorOverlap::kNone;
  int64_t network_tier = 0;
};

// Pipeline schedules, the sum type of the seed. Each alternative names its
// row of the schedule table (core/schedule/schedule_table.h: names, shape
// rules, traits, order builder), which sits at the alternative's variant
// index (core/spec/spec_schedule.h checks both at compile time). A schedule
// without a virtual_stages field takes its row's fixed v.
struct SingleStage {                         // p = 1
  static constexpr ScheduleKind kKind = ScheduleKind::kSingleStage;
};
struct OneForwardOneBackward {               // 1F1B
  static constexpr ScheduleKind kKind = ScheduleKind::kOneForwardOneBackward;
};
struct InterleavedOneForwardOneBackward {    // interleaved 1F1B
  static constexpr ScheduleKind kKind = ScheduleKind::kInterleaved;
  int64_t virtual_stages = 2;                // v
};
struct ForwardOnly {                         // inference pipeline
  static constexpr ScheduleKind kKind = ScheduleKind::kForwardOnly;
  // Forward chunks per stage (Calculon's pipeline_interleaving when not
  // training): 1 is the plain forward pipeline.
  int64_t virtual_stages = 1;
};
// Schedules with no closed form in Calculon: their bubble and in-flight
// microbatches come from the concrete scheduler (core/schedule), which
// builds and simulates their command order for the mapping's p and m.
struct GPipe {  // all forwards, then all backwards
  static constexpr ScheduleKind kKind = ScheduleKind::kGPipe;
};
struct DualPipeV {  // DeepSeek's DualPipeV ("cut-in-half" DualPipe)
  static constexpr ScheduleKind kKind = ScheduleKind::kDualPipeV;
};
// Zero bubble ZB-H1 (Qi et al. 2024): 1F1B with each backward split into
// the input gradient B and the weight gradient W, W deferred into the
// cool-down's waits; 1F1B's activation memory.
struct ZeroBubbleH1 {
  static constexpr ScheduleKind kKind = ScheduleKind::kZbH1;
};
// Zero bubble ZB-V (Qi et al. 2024, section 6): two chunks per stage in a
// V, B and W split, ordered for the mapping's F, B and W times by the
// paper's reference list scheduler; 1F1B's activation memory.
struct ZeroBubbleV {
  static constexpr ScheduleKind kKind = ScheduleKind::kZbV;
};
// Zero bubble ZB-H2 (Qi et al. 2024, section 3): ZB-H1's split with more
// warm-up forwards, ordered for the mapping's F, B and W times by the
// reference's heuristic; up to 2p - 1 microbatches in flight.
struct ZeroBubbleH2 {
  static constexpr ScheduleKind kKind = ScheduleKind::kZbH2;
};
// DeepSeek's DualPipe (DeepSeek-V3 report, section 3.2.1): two copies of
// the model fed from both ends; rank s holds stage s of one and stage
// p - 1 - s of the other, so twice a stage's weights, gradients and
// optimizer state, and its gradients are summed with rank p - 1 - s's.
struct DualPipe {
  static constexpr ScheduleKind kKind = ScheduleKind::kDualPipe;
};
using PipelineSchedule =
    std::variant<SingleStage, OneForwardOneBackward,
                 InterleavedOneForwardOneBackward, ForwardOnly, GPipe,
                 DualPipeV, ZeroBubbleH1, ZeroBubbleV, ZeroBubbleH2,
                 DualPipe>;

// How blocks are laid over stages. kEven requires p | num_blocks. kUneven is
// Calculon's behaviour for num_blocks % p != 0: blocks per stage rounded up,
// the bubble shortened by the missing blocks. Only used when the spec says so.
enum class StageLayout { kEven, kUneven };

// kMaxStageBlocksEntries: the most entries `stage_blocks` may hold (p * v of
// a checked spec is far below it; the bound keeps a hostile document from
// making the checker and the analyses loop over a huge list).
inline constexpr int64_t kMaxStageBlocksEntries = 4096;

struct PipelineParallel {
  int64_t degree = 1;
  PipelineSchedule schedule = SingleStage{};
  int64_t network_tier = 0;
  StageLayout stage_layout = StageLayout::kEven;
  // An explicit layout: the transformer blocks of each (virtual) stage, p * v
  // entries in model order, entry k on pipeline rank k % p as its chunk
  // k / p (Megatron-LM's pipeline_parallel_layer_layout.py
  // PipelineParallelLayerLayout: stage index vp_rank * pp + pp_rank). The
  // embedding always sits on entry 0's stage and the loss (output layer,
  // MTP) on the last entry's; a recipe that counts them as layers gives
  // those stages fewer blocks. Empty: the blocks split by stage_layout.
  std::vector<int64_t> stage_blocks;
};

// What the data-parallel ranks shard (ZeRO stages, the sum type of the
// issue): nothing; the optimizer state (ZeRO-1, Megatron-LM's distributed
// optimizer); + the gradients (ZeRO-2); + the parameters (ZeRO-3, FSDP
// FULL_SHARD). `group` ranks share one copy (0: all d ranks; a divisor of d
// below d is hybrid sharding, HSDP: shard within a group, replicate across).
struct NoSharding {};
struct ShardOptimizer { int64_t group = 0; };
struct ShardGradients { int64_t group = 0; };
struct ShardParameters { int64_t group = 0; };
using DataSharding =
    std::variant<NoSharding, ShardOptimizer, ShardGradients, ShardParameters>;

struct DataParallel {
  int64_t degree = 1;
  DataSharding sharding = NoSharding{};
  bool overlap = false;  // DP communication overlapped with backward
  int64_t network_tier = 0;
};

// How an MoE block's tokens reach the ranks of their experts and come back.
enum class ExpertDispatcher {
  kAllToAll,  // NCCL all-to-all: one copy per routed expert on another rank
  kDeepEp,    // flex dispatcher, DeepEP: one copy per destination node
  kHybridEp,  // flex dispatcher, HybridEP: one copy per destination node
  kAllGather,  // all-gather of the tokens over the etp x ep ranks, then a
               // reduce-scatter of the outputs (Megatron-LM's default)
};

// Whether Megatron-LM runs its combined-1F1B expert overlap
// (--overlap-moe-expert-parallel-comm) with dispatcher `d`: with alltoall
// and flex, not allgather (transformer_config.py asserts it). The checker's
// rule and the search's offer both read it.
bool DispatcherRunsExpertOverlap(ExpertDispatcher d);

// Expert parallelism: each MoE layer's experts split over `degree` ranks,
// each expert's matrices over `tensor_degree` ranks (0: the tensor degree
// t, Megatron-LM's default), folded onto the t * cp * d ranks of a stage;
// tokens reach their experts by an all-to-all over `network_tier`.
struct ExpertParallel {
  int64_t degree = 1;
  int64_t tensor_degree = 0;
  int64_t network_tier = 0;
  // How the tokens travel (Megatron-LM's --moe-token-dispatcher-type and
  // --moe-flex-dispatcher-backend).
  ExpertDispatcher dispatcher = ExpertDispatcher::kAllToAll;
  // Megatron-LM's combined 1F1B (--overlap-moe-expert-parallel-comm): the
  // dispatch and combine of one microbatch run under the other pass of an
  // adjacent microbatch; with `delay_wgrad` (--delay-wgrad-compute) the
  // weight-gradient GEMMs are more work to hide them under.
  bool overlap = false;
  bool delay_wgrad = false;
  // --moe-shared-expert-overlap: the shared experts run beside the
  // dispatch (their first linear) and the combine (their second).
  bool shared_expert_overlap = false;
};

// How context-parallel ranks exchange keys and values.
enum class ContextExchange {
  kRing,       // p2p ring: cp - 1 steps, each overlapped with a block
  kAllGather,  // one all-gather of K/V before attention
};

// Context parallelism: the sequence split over `degree` ranks in 2 * cp
// load-balanced causal chunks; world = t * cp * p * d.
struct ContextParallel {
  int64_t degree = 1;
  ContextExchange exchange = ContextExchange::kRing;
  int64_t network_tier = 0;
};

// Independent serving replicas (inference); no gradient synchronization.
struct ReplicaParallel {
  int64_t degree = 1;
  int64_t network_tier = 0;
};

enum class RecomputePolicy { kNone, kAttentionOnly, kFull };

// A module Megatron-LM's selective recomputation can checkpoint besides the
// core attention (--recompute-granularity selective --recompute-modules;
// megatron/core/transformer/transformer_config.py `recompute_modules`). The
// core attention itself ("core_attn") is RecomputePolicy::kAttentionOnly,
// its one home. In Megatron-LM's documented order (the canonical one).
enum class RecomputeModule {
  kMoeAct,         // the routed experts' activation (moe/experts.py)
  kLayerNorm,      // input_layernorm and pre_mlp_layernorm
  kMlaUpProj,      // MLA's query and key/value up projections and RoPE
  kMlp,            // the dense MLP submodule
  kMoe,            // the whole MoE layer (moe/moe_layer.py)
  kSharedExperts,  // the MoE layer's shared experts
};
inline constexpr int kRecomputeModuleCount = 6;

// A set of RecomputeModule values (a bit each: the search copies mappings
// without allocating).
struct RecomputeModules {
  uint32_t bits = 0;

  bool Has(RecomputeModule m) const {
    return (bits >> static_cast<int>(m)) & 1u;
  }
  void Add(RecomputeModule m) { bits |= 1u << static_cast<int>(m); }
  bool empty() const { return bits == 0; }
};
inline bool operator==(RecomputeModules a, RecomputeModules b) {
  return a.bits == b.bits;
}
inline bool operator!=(RecomputeModules a, RecomputeModules b) {
  return !(a == b);
}
enum class AttentionType { kMultiHead, kMultiQuery };

struct Batch {
  int64_t global_batch_size = 0;
  int64_t microbatch_size = 0;
};

// Offload of each kind of state to the system's second memory tier.
struct Offload {
  bool weights = false;
  bool activations = false;
  bool optimizer = false;
};

// How weights, gradients and optimizer state are counted in bytes.
enum class PrecisionAccounting {
  kCalculon,        // gradients in the datatype, sharded with the optimizer
  kMegatronMixed,   // fp32 main gradients; fp32 master weights and moments
};

// Which performance model prices the mapping. kCalculon is Calculon's model
// (calculon/MODEL.md), figure for figure; kRefined applies the named
// corrections of core/analysis/refined.h, each measured against the runs of
// tests/validation.
enum class ModelProfile { kCalculon, kRefined };

// The low-precision training recipe of the GEMMs, as Transformer Engine runs
// it and Megatron-LM names it (--fp8-recipe, --fp4-recipe): how its
// operands are scaled, which decides the GEMM datatype, the quantization
// passes and the scales stored (core/spec/recipes.h, one row each).
enum class QuantizationRecipe {
  kNone,           // GEMMs in options.gemm_datatype, no recipe priced
  kFp8Delayed,     // FP8, one scale per tensor from the amax history
  kFp8Tensorwise,  // FP8, one scale per tensor from its current amax
  kFp8Blockwise,   // FP8, 1x128 activation and 128x128 weight blocks
  kMxfp8,          // FP8, 32-element blocks, E8M0 scales
  kNvfp4,          // FP4 E2M1, 16-element blocks, E4M3 scales + tensor scale
};

// Execution knobs that are neither a degree nor a schedule.
struct ExecutionOptions {
  DataType datatype = DataType::kFloat16;
  // The matrix engine's GEMM datatype (Transformer Engine's FP8 GEMMs on
  // 16-bit activations) and the model weights' storage datatype (FP8
  // parameters, Megatron-LM's --fp8-param-gather); none: `datatype`.
  std::optional<DataType> gemm_datatype;
  std::optional<DataType> weight_datatype;
  // The datatype the data-parallel gradient reduction (all-reduce, or a
  // sharded optimizer's reduce-scatter) moves: float32 or `datatype`
  // (Megatron-LM's --accumulate-allreduce-grads-in-fp32 and
  // --grad-reduce-in-bf16); none: the profile's (float32 for bfloat16 under
  // megatron_mixed with the refined profile, core/spec/corrections.h;
  // `datatype` otherwise).
  std::optional<DataType> grad_reduce_datatype;
  PrecisionAccounting precision = PrecisionAccounting::kCalculon;
  // The recipe of the GEMMs in gemm_datatype (none: unpriced, as before).
  QuantizationRecipe recipe = QuantizationRecipe::kNone;
  // The first and the last blocks of the model that run outside the recipe,
  // their GEMMs in `datatype` (Megatron-LM's --first-last-layers-bf16 with
  // --num-layers-at-start-in-bf16 / --num-layers-at-end-in-bf16:
  // megatron/core/fp8_utils.py is_first_last_bf16_layer, fp4_utils.py
  // get_fp4_context); 0: every block runs in the recipe.
  int64_t unquantized_first_blocks = 0;
  int64_t unquantized_last_blocks = 0;
  bool fused_activation = false;
  AttentionType attention = AttentionType::kMultiHead;
  Offload offload;
  ModelProfile profile = ModelProfile::kCalculon;
};

struct TransformerTrainingParallelism {
  TensorParallel tensor;
  PipelineParallel pipeline;
  DataParallel data;
  ContextParallel context;
  ExpertParallel expert;
  RecomputePolicy recompute = RecomputePolicy::kNone;
  // The modules recomputed besides the core attention (recompute none or
  // attn_only; the checker's rules). Printed only when not empty.
  RecomputeModules recompute_modules;
};

struct TransformerInferenceParallelism {
  TensorParallel tensor;
  PipelineParallel pipeline;  // SingleStage or ForwardOnly
  ReplicaParallel replica;
};

struct TransformerTrainingMappingSpec {
  TransformerModel model;
  System system;
  TransformerTrainingParallelism parallelism;
  Batch batch;
  ExecutionOptions options;
};

struct TransformerInferenceMappingSpec {
  TransformerModel model;
  System system;
  TransformerInferenceParallelism parallelism;
  Batch batch;
  ExecutionOptions options;
};

using MappingSpec =
    std::variant<TransformerTrainingMappingSpec, TransformerInferenceMappingSpec>;

// A training mapping: all of a training spec but its model and system. It
// is what the strategy search enumerates and ranks (core/search) and what
// the Calculon adapter makes of an execution (core/adapters/calculon.h);
// TrainingSpecOf makes it a spec again. One type, so that a mapping has one
// shape from the checker to the search's output.
struct TrainingMapping {
  TransformerTrainingParallelism parallelism;
  Batch batch;
  ExecutionOptions options;
};

// TrainingSpecOf: the training spec of `mapping` on this model and system.
TransformerTrainingMappingSpec TrainingSpecOf(TransformerModel model,
                                              System system,
                                              const TrainingMapping& mapping);

// OneForwardOneBackwardSchedule: the schedule Calculon and Megatron-LM run
// p stages with v virtual stages per rank in: single_stage for p = 1,
// interleaved_1f1b with v > 1, else 1f1b.
PipelineSchedule OneForwardOneBackwardSchedule(int64_t p, int64_t v);

// CalculonPipeline: Calculon's pipeline of p stages with v virtual stages
// per rank (its `pipeline_par` and `pipeline_interleaving`): single_stage for
// p = 1, interleaved_1f1b with v > 1, else 1f1b; the even stage layout when
// p divides the model's blocks, else the uneven one (each stage priced at
// ceil(blocks / p)). Allocation-free: the search builds one per mapping it
// ranks.
PipelineParallel CalculonPipeline(int64_t p, int64_t v, int64_t num_blocks,
                                  int64_t network_tier);

//----- Names ------------------------------------------------------------------

// The canonical JSON spelling of each enum value, from the tables of
// enums.h (which also hold Calculon's spellings and each value's meaning).
const char* DataTypeName(DataType t);            // "float16", ...
int BytesPerElement(DataType t);                 // 1, 2, 2, 4 (float4: 1)
// The weights' storage datatype: options.weight_datatype, else
// options.datatype.
DataType WeightDatatype(const ExecutionOptions& options);
const char* TensorOverlapName(TensorOverlap o);  // "none", "ring", "pipe"
const char* RecomputeName(RecomputePolicy r);    // "none","attn_only","full"
const char* RecomputeModuleName(RecomputeModule m);  // "moe_act", ...
const char* AttentionName(AttentionType a);      // "multihead", "multiquery"
const char* ProcessingModeName(ProcessingMode m);  // "no_overlap","roofline"
const char* StageLayoutName(StageLayout l);      // "even", "uneven"
const char* MlpTypeName(MlpType m);              // "plain", "gated"
const char* NormTypeName(NormType n);            // "layernorm", "rmsnorm"
const char* PositionEmbeddingName(PositionEmbedding p);  // "none", ...
const char* PrecisionName(PrecisionAccounting p);  // "calculon", ...
const char* ContextExchangeName(ContextExchange e);
const char* ExpertDispatcherName(ExpertDispatcher e);  // "all_to_all", ...  // "ring", "all_gather"
const char* ModelProfileName(ModelProfile p);  // "calculon", "refined"
const char* RecipeName(QuantizationRecipe r);   // "none", "mxfp8", ...
// "none", "optimizer", "gradients", "parameters".
const char* DataShardingName(const DataSharding& s);
// "ar", "rs_ag", "p2p_rs_ag".
const char* TensorCommunicationName(const TensorCommunication& c);
// "single_stage", "1f1b", "interleaved_1f1b", "forward_only".
const char* PipelineScheduleName(const PipelineSchedule& s);

std::optional<DataType> ParseDataType(const std::string& s);
std::optional<TensorOverlap> ParseTensorOverlap(const std::string& s);
std::optional<RecomputePolicy> ParseRecompute(const std::string& s);
std::optional<RecomputeModule> ParseRecomputeModule(const std::string& s);
std::optional<AttentionType> ParseAttention(const std::string& s);
std::optional<ProcessingMode> ParseProcessingMode(const std::string& s);
std::optional<StageLayout> ParseStageLayout(const std::string& s);
std::optional<MlpType> ParseMlpType(const std::string& s);
std::optional<NormType> ParseNormType(const std::string& s);
std::optional<PositionEmbedding> ParsePositionEmbedding(const std::string& s);
std::optional<PrecisionAccounting> ParsePrecision(const std::string& s);
std::optional<ContextExchange> ParseContextExchange(const std::string& s);
std::optional<ExpertDispatcher> ParseExpertDispatcher(const std::string& s);
std::optional<ModelProfile> ParseModelProfile(const std::string& s);
std::optional<QuantizationRecipe> ParseRecipe(const std::string& s);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SPEC_SPEC_H_
