#include "core/spec/mapping_rules.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/checked_math.h"
#include "core/spec/check_internal.h"
#include "core/spec/derive.h"

namespace blueprint {
namespace {

using check_internal::Named;
using V = MappingValues;
using Row = MappingRule;

constexpr char kTensorDegree[] = "parallelism.tensor.degree";

// The model sizes that rows split.
int64_t Hidden(const TransformerModel& m) { return m.hidden; }
int64_t Feedforward(const TransformerModel& m) { return m.feedforward; }
int64_t AttnHeads(const TransformerModel& m) { return m.attn_heads; }
// kv_heads == attn_heads (multi-head attention) is the heads' rule, said
// once: 0 stands for "nothing to split".
int64_t DistinctKvHeads(const TransformerModel& m) {
  return m.kv_heads == m.attn_heads ? 0 : m.kv_heads;
}
int64_t SharedFfn(const TransformerModel& m) {
  return m.moe.has_value() ? m.moe->shared_ffn : 0;
}
// Latent attention's ranks are split t ways only with t > 1 (a 0 rank is
// none).
int64_t QLoraRank(const TransformerModel& m) {
  return m.latent_attention.has_value() ? m.latent_attention->q_lora_rank : 0;
}
int64_t KvLoraRank(const TransformerModel& m) {
  return m.latent_attention.has_value() ? m.latent_attention->kv_lora_rank
                                        : 0;
}
int64_t QkRopeHeadDim(const TransformerModel& m) {
  return m.latent_attention.has_value()
             ? m.latent_attention->qk_rope_head_dim
             : 0;
}

// A size of the model split t ways (a size <= 0 is its own rule's report).
template <int64_t (*kSize)(const TransformerModel&)>
bool SplitsByTensor(const V& v) {
  const int64_t size = kSize(*v.model);
  return size <= 0 || v.tensor < 1 || size % v.tensor == 0;
}
template <int64_t (*kSize)(const TransformerModel&)>
std::string SizeNotSplit(const Row& row, const V& v) {
  return absl::StrCat(Named(row.field, kSize(*v.model)),
                      " must be divisible by ", Named(kTensorDegree, v.tensor));
}
template <int64_t (*kSize)(const TransformerModel&)>
bool LatentSplitsByTensor(const V& v) {
  return v.tensor <= 1 || SplitsByTensor<kSize>(v);
}
template <int64_t (*kSize)(const TransformerModel&)>
std::string LatentNotSplit(const Row& row, const V& v) {
  return absl::StrCat(SizeNotSplit<kSize>(row, v),
                      ": every latent-attention matrix is split t ways, as "
                      "Megatron-LM's accounting has it");
}

// Expert parallelism: ep splits the experts, etp each expert's matrices;
// both fold onto the t * cp * d ranks of a pipeline stage.
bool ExpertsSplit(const V& v) {
  const auto& moe = v.model->moe;
  return !moe.has_value() || moe->experts <= 0 || v.expert < 1 ||
         moe->experts % v.expert == 0;
}
std::string ExpertsNotSplit(const Row&, const V& v) {
  return absl::StrCat(Named("parallelism.expert.degree", v.expert),
                      " must divide ",
                      Named("model.moe.experts", v.model->moe->experts));
}
bool ExpertFfnSplits(const V& v) {
  const auto& moe = v.model->moe;
  return !moe.has_value() || moe->ffn <= 0 || v.expert_tensor < 1 ||
         moe->ffn % v.expert_tensor == 0;
}
std::string ExpertFfnNotSplit(const Row&, const V& v) {
  return absl::StrCat(Named("model.moe.ffn", v.model->moe->ffn),
                      " must be divisible by the expert tensor degree (",
                      v.expert_tensor, ")");
}
// nullopt when t * cp * d overflows (the world size rule's report).
std::optional<int64_t> StageRanks(const V& v) {
  return CheckedProduct({v.tensor, v.context, v.data});
}
bool ExpertRanksFit(const V& v) {
  if (!v.model->moe.has_value()) return true;
  const std::optional<int64_t> stage = StageRanks(v);
  const std::optional<int64_t> experts = CheckedMul(v.expert, v.expert_tensor);
  return !stage || (experts && *experts > 0 && *stage % *experts == 0);
}
std::string ExpertRanksDoNotFit(const Row&, const V& v) {
  return absl::StrCat(
      Named("parallelism.expert.degree", v.expert), " * expert tensor degree (",
      v.expert_tensor,
      ") must divide the ranks of a pipeline stage, "
      "parallelism.tensor.degree * context.degree * data.degree (",
      *StageRanks(v), "): expert parallelism is folded onto them");
}

// Context parallelism splits each sequence into 2 * cp chunks (one early
// and one late per rank, which balances the causal work).
bool SequenceSplitsByContext(const V& v) {
  const int64_t s = v.model->seq_size;
  const int64_t cp = v.context;
  return cp <= 1 || s <= 0 || (s % cp == 0 && (s / cp) % 2 == 0);
}
std::string SequenceNotSplit(const Row&, const V& v) {
  return absl::StrCat(Named("model.seq_size", v.model->seq_size),
                      " must be divisible by 2 * ",
                      Named("parallelism.context.degree", v.context),
                      ": each rank holds two load-balanced causal chunks");
}

// Calculon's batch_seq rule: with rs_ag or p2p_rs_ag the activations
// (microbatch * sequence rows) are split t ways. With context parallelism a
// rank holds s / cp of each sequence, and it is those rows that are split
// (a sequence cp does not divide is the context rule's report; the rows of
// the whole sequence must still split t ways). nullopt: no rows to split;
// a value of nullopt: b * s / cp overflows.
struct ActivationRows {
  int64_t context;
  std::optional<int64_t> rows;
};
std::optional<ActivationRows> RowsSplit(const V& v) {
  const int64_t s = v.model->seq_size;
  if (!v.splits_activations || v.tensor < 1 || v.microbatch < 1 || s < 1) {
    return std::nullopt;
  }
  const int64_t cp = v.context < 1 || s % v.context != 0 ? 1 : v.context;
  return ActivationRows{cp, CheckedMul(v.microbatch, s / cp)};
}
std::string RowOperands(const V& v, int64_t cp) {
  const std::string rows =
      absl::StrCat(Named("batch.microbatch_size", v.microbatch), " * ",
                   Named("model.seq_size", v.model->seq_size));
  return cp == 1 ? rows
                 : absl::StrCat(rows, " / ",
                                Named("parallelism.context.degree", cp));
}
bool RowsFit(const V& v) {
  const std::optional<ActivationRows> split = RowsSplit(v);
  return !split || split->rows.has_value();
}
std::string RowsOverflow(const Row&, const V& v) {
  return absl::StrCat(RowOperands(v, RowsSplit(v)->context),
                      " overflows 64-bit integers");
}
bool RowsSplitByTensor(const V& v) {
  const std::optional<ActivationRows> split = RowsSplit(v);
  return !split || !split->rows || *split->rows % v.tensor == 0;
}
std::string RowsNotSplit(const Row&, const V& v) {
  const ActivationRows split = *RowsSplit(v);
  return absl::StrCat(RowOperands(v, split.context), " = ", *split.rows,
                      " must be divisible by ", Named(kTensorDegree, v.tensor),
                      " with parallelism.tensor.communication ",
                      v.communication_name,
                      ": its activations are split t ways");
}

// Calculon's compile(): v chunks split the blocks of a stage evenly, v <=
// blocks_per_stage (ceil(num_blocks / p)) and v divides it.
int64_t StageBlocks(const V& v) {
  return BlocksPerStage(v.model->num_blocks, v.pipeline);
}
bool Measurable(const V& v) {
  return v.pipeline >= 1 && v.model->num_blocks >= 1 && v.virtual_stages >= 1;
}
bool ChunksFitStage(const V& v) {
  return !Measurable(v) || v.virtual_stages <= StageBlocks(v);
}
bool ChunksDivideStage(const V& v) {
  return !Measurable(v) || v.virtual_stages > StageBlocks(v) ||
         StageBlocks(v) % v.virtual_stages == 0;
}
// dualpipe_v and zb_v hold two chunks per stage without a field for it.
std::string Chunks(const V& v) {
  const std::string path = v.virtual_stages_field;
  return path != "parallelism.pipeline.schedule"
             ? Named(path, v.virtual_stages)
             : absl::StrCat(path, " ", v.schedule_name, "'s ",
                            v.virtual_stages, " chunks per stage");
}
std::string ChunksDoNotFit(const Row&, const V& v) {
  return absl::StrCat(Chunks(v), " must be at most blocks_per_stage (",
                      StageBlocks(v), ")");
}
std::string ChunksDoNotDivide(const Row&, const V& v) {
  return absl::StrCat(Chunks(v), " must divide blocks_per_stage (",
                      StageBlocks(v), ")");
}

using G = MappingRuleGroup;
constexpr ErrorCode kNotDivisible = ErrorCode::kNotDivisible;
constexpr uint32_t kT = kReadsTensor;
constexpr uint32_t kActivationReads =
    kReadsTensor | kReadsContext | kReadsMicrobatch | kReadsCommunication;

}  // namespace

const std::vector<MappingRule>& MappingRules() {
  // group, code, field, reads, search_filters, holds, message.
  static const std::vector<MappingRule>* const kMappingRules =
      new std::vector<MappingRule>{
          {G::kExpertCount, kNotDivisible, "parallelism.expert.degree",
           kReadsExperts, true, ExpertsSplit, ExpertsNotSplit},
          {G::kExpertSplit, kNotDivisible, "model.moe.ffn", kReadsExperts,
           false, ExpertFfnSplits, ExpertFfnNotSplit},
          {G::kExpertSplit, kNotDivisible, "model.moe.shared_ffn", kT, false,
           SplitsByTensor<SharedFfn>, SizeNotSplit<SharedFfn>},
          {G::kExpertRanks, kNotDivisible, "parallelism.expert.degree",
           kReadsExperts | kReadsTensor | kReadsContext | kReadsData, true,
           ExpertRanksFit, ExpertRanksDoNotFit},
          {G::kContext, kNotDivisible, "model.seq_size", kReadsContext, true,
           SequenceSplitsByContext, SequenceNotSplit},
          // Megatron-LM splits query heads and key/value groups over the TP
          // ranks; Calculon's search enumerates t by hidden and heads only.
          {G::kTensor, kNotDivisible, "model.hidden", kT, true,
           SplitsByTensor<Hidden>, SizeNotSplit<Hidden>},
          {G::kTensor, kNotDivisible, "model.feedforward", kT, false,
           SplitsByTensor<Feedforward>, SizeNotSplit<Feedforward>},
          {G::kTensor, kNotDivisible, "model.attn_heads", kT, true,
           SplitsByTensor<AttnHeads>, SizeNotSplit<AttnHeads>},
          {G::kTensor, kNotDivisible, "model.kv_heads", kT, false,
           SplitsByTensor<DistinctKvHeads>, SizeNotSplit<DistinctKvHeads>},
          {G::kActivations, ErrorCode::kOutOfRange, "batch.microbatch_size",
           kActivationReads, true, RowsFit, RowsOverflow},
          {G::kActivations, kNotDivisible, "parallelism.tensor.communication",
           kActivationReads, true, RowsSplitByTensor, RowsNotSplit},
          {G::kLatent, kNotDivisible, "model.latent_attention.q_lora_rank", kT,
           false, LatentSplitsByTensor<QLoraRank>, LatentNotSplit<QLoraRank>},
          {G::kLatent, kNotDivisible, "model.latent_attention.kv_lora_rank",
           kT, false, LatentSplitsByTensor<KvLoraRank>,
           LatentNotSplit<KvLoraRank>},
          {G::kLatent, kNotDivisible,
           "model.latent_attention.qk_rope_head_dim", kT, false,
           LatentSplitsByTensor<QkRopeHeadDim>,
           LatentNotSplit<QkRopeHeadDim>},
          {G::kInterleaving, ErrorCode::kOutOfRange, nullptr,
           kReadsPipeline | kReadsVirtualStages, false, ChunksFitStage,
           ChunksDoNotFit},
          {G::kInterleaving, kNotDivisible, nullptr,
           kReadsPipeline | kReadsVirtualStages, false, ChunksDivideStage,
           ChunksDoNotDivide},
      };
  return *kMappingRules;
}

bool MappingRulesHold(const MappingValues& values, uint32_t known) {
  for (const MappingRule& row : MappingRules()) {
    if ((row.reads & ~known) == 0 && !row.holds(values)) return false;
  }
  return true;
}

bool SearchFilterHolds(const MappingValues& values, uint32_t known,
                       uint32_t added) {
  for (const MappingRule& row : MappingRules()) {
    if (row.search_filters && (row.reads & ~known) == 0 &&
        (row.reads & added) != 0 && !row.holds(values)) {
      return false;
    }
  }
  return true;
}

void AddMappingViolations(const MappingValues& values, MappingRuleGroup group,
                          std::vector<FieldError>* out) {
  for (const MappingRule& row : MappingRules()) {
    if (row.group != group || row.holds(values)) continue;
    out->push_back({row.field != nullptr ? row.field
                                         : values.virtual_stages_field,
                    row.message(row, values), row.code});
  }
}

}  // namespace blueprint
