#include "core/adapters/megatron_layout.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"

namespace blueprint {
namespace {

constexpr char kLayoutFlag[] = "--pipeline-model-parallel-layout";
constexpr char kFirstFlag[] = "--decoder-first-pipeline-num-layers";
constexpr char kLastFlag[] = "--decoder-last-pipeline-num-layers";
constexpr char kEmbeddingFlag[] = "--account-for-embedding-in-pipeline-split";
constexpr char kLossFlag[] = "--account-for-loss-in-pipeline-split";

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// The repetition count of "*N" at `s[i]` ('*' there): N and the index past
// it; nullopt when no digit follows. N is bounded by the unrolled length.
struct Repeat {
  size_t count = 0;
  size_t end = 0;
};
absl::StatusOr<std::optional<Repeat>> RepeatAt(absl::string_view s, size_t i) {
  if (i >= s.size() || s[i] != '*' || i + 1 >= s.size() || !IsDigit(s[i + 1])) {
    return std::optional<Repeat>();
  }
  Repeat r;
  size_t j = i + 1;
  for (; j < s.size() && IsDigit(s[j]); ++j) {
    r.count = r.count * 10 + static_cast<size_t>(s[j] - '0');
    if (r.count > kMaxUnrolledLayoutLength) {
      return absl::InvalidArgumentError(
          absl::StrCat("a repetition count above ", kMaxUnrolledLayoutLength));
    }
  }
  r.end = j;
  return std::optional<Repeat>(r);
}

absl::Status Append(absl::string_view part, size_t times, std::string *out) {
  if (part.size() * times > kMaxUnrolledLayoutLength - out->size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "it unrolls to more than ", kMaxUnrolledLayoutLength, " characters"));
  }
  for (size_t k = 0; k < times; ++k)
    out->append(part.data(), part.size());
  return absl::OkStatus();
}

// Megatron-LM's first substitution, r'\(([^)]+)\)\*(\d+)': "(X)*N" -> X N
// times.
absl::StatusOr<std::string> UnrollGroups(absl::string_view s) {
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    if (s[i] != '(') {
      BP_RETURN_IF_ERROR(Append(s.substr(i, 1), 1, &out));
      ++i;
      continue;
    }
    const size_t close = s.find(')', i + 1);
    const size_t open = s.find('(', i + 1);
    if (close == absl::string_view::npos || close == i + 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("the '(' at character ", i + 1,
                       " has no non-empty group closed "
                       "by ')'"));
    }
    if (open != absl::string_view::npos && open < close) {
      return absl::InvalidArgumentError(
          absl::StrCat("the '(' at character ", i + 1,
                       " holds another '(': groups do not nest"));
    }
    BP_ASSIGN_OR_RETURN(const std::optional<Repeat> repeat,
                        RepeatAt(s, close + 1));
    if (!repeat.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat("the group closed at character ", close + 1,
                       " must be followed by *N (a repetition count)"));
    }
    BP_RETURN_IF_ERROR(
        Append(s.substr(i + 1, close - i - 1), repeat->count, &out));
    i = repeat->end;
  }
  return out;
}

// The second substitution, r'(.)\*(\d+)': "c*N" -> c N times.
absl::StatusOr<std::string> UnrollCharacters(absl::string_view s) {
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    BP_ASSIGN_OR_RETURN(const std::optional<Repeat> repeat, RepeatAt(s, i + 1));
    const size_t times = repeat.has_value() ? repeat->count : 1;
    BP_RETURN_IF_ERROR(Append(s.substr(i, 1), times, &out));
    i = repeat.has_value() ? repeat->end : i + 1;
  }
  return out;
}

} // namespace

absl::StatusOr<std::vector<LayoutStage>>
ParsePipelineLayout(absl::string_view layout) {
  if (layout.size() > kMaxLayoutLength) {
    return absl::InvalidArgumentError(
        absl::StrCat("it is longer than ", kMaxLayoutLength, " characters"));
  }
  std::string plain;
  for (char c : layout) {
    if (c != ',')
      plain.push_back(c); // commas are cosmetic
  }
  BP_ASSIGN_OR_RETURN(const std::string groups, UnrollGroups(plain));
  BP_ASSIGN_OR_RETURN(const std::string unrolled, UnrollCharacters(groups));
  std::vector<LayoutStage> stages(1);
  for (size_t i = 0; i < unrolled.size(); ++i) {
    LayoutStage &stage = stages.back();
    switch (unrolled[i]) {
    case '|':
      stages.emplace_back();
      break;
    case 'E':
      ++stage.embedding;
      break;
    case 't':
      ++stage.decoder;
      break;
    case 'm':
      ++stage.mtp;
      break;
    case 'L':
      ++stage.loss;
      break;
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "'", std::string(1, unrolled[i]),
          "' is not a layer (E embedding, t transformer layer, m MTP, "
          "L loss; | separates stages, (X)*N and c*N repeat)"));
    }
  }
  return stages;
}

namespace {

void Error(PipelineLayout *out, const char *flag, ErrorCode code,
           std::string message) {
  out->errors.push_back({flag, std::move(message), code});
}

// --pipeline-model-parallel-layout: Megatron-LM's
// PipelineParallelLayerLayout.__init__ and validate_layer_layout, and
// TransformerConfig.__post_init__'s exclusions.
void FromLayoutString(const PipelineLayoutFlags &f, PipelineLayout *out) {
  const std::string &text = *f.layout;
  absl::StatusOr<std::vector<LayoutStage>> parsed = ParsePipelineLayout(text);
  if (!parsed.ok()) {
    Error(out, kLayoutFlag, ErrorCode::kInvalidValue,
          absl::StrCat(kLayoutFlag,
                       " is not a layout: ", parsed.status().message()));
    return;
  }
  const std::vector<LayoutStage> &stages = *parsed;
  const int64_t n = static_cast<int64_t>(stages.size());
  if (n % f.pipeline != 0) {
    Error(out, kLayoutFlag, ErrorCode::kNotDivisible,
          absl::StrCat(kLayoutFlag, " has ", n,
                       " stages, which must be divisible by "
                       "--pipeline-model-parallel-size (",
                       f.pipeline, ")"));
    return;
  }
  LayoutStage total;
  int64_t first_mtp = -1;
  int64_t last_decoder = -1;
  for (int64_t k = 0; k < n; ++k) {
    const LayoutStage &s = stages[static_cast<size_t>(k)];
    total.embedding += s.embedding;
    total.decoder += s.decoder;
    total.mtp += s.mtp;
    total.loss += s.loss;
    if (s.mtp > 0 && first_mtp < 0)
      first_mtp = k;
    if (s.decoder > 0)
      last_decoder = k;
  }
  const auto rule = [&](bool holds, std::string why) {
    if (!holds) {
      Error(out, kLayoutFlag, ErrorCode::kInconsistent,
            absl::StrCat(kLayoutFlag, ": ", std::move(why)));
    }
    return holds;
  };
  bool ok = rule(total.embedding == 1 && stages.front().embedding == 1,
                 "the embedding (E) must appear once, on the first stage "
                 "(the model places it there)");
  ok = rule(total.loss == 1 && stages.back().loss == 1,
            "the loss (L) must appear once, on the last stage") &&
       ok;
  ok = rule(total.decoder == f.num_layers,
            absl::StrCat("it holds ", total.decoder,
                         " transformer layers (t) but --num-layers is ",
                         f.num_layers)) &&
       ok;
  ok = rule(total.mtp == f.mtp_layers,
            absl::StrCat("it holds ", total.mtp,
                         " MTP layers (m) but --mtp-num-layers is ",
                         f.mtp_layers)) &&
       ok;
  ok = rule(first_mtp < 0 || last_decoder <= first_mtp,
            "transformer layers must come before the MTP layers") &&
       ok;
  if (!ok)
    return;
  out->virtual_stages = n / f.pipeline;
  for (const LayoutStage &s : stages)
    out->stage_blocks.push_back(s.decoder);
  if (first_mtp >= 0 && first_mtp != n - 1) {
    out->notes.push_back(absl::StrCat(
        kLayoutFlag, " puts the MTP layers on stage ", first_mtp,
        " (pipeline rank ", first_mtp % f.pipeline,
        "); they are priced on the last stage, with the output layer"));
  }
}

// --decoder-first/last-pipeline-num-layers: TransformerConfig.__post_init__
// ("Uneven PP") and transformer_block.py get_num_layers_to_build: the
// middle ranks split the rest evenly, each rank's layers over its v chunks.
void FromFirstLast(const PipelineLayoutFlags &f, PipelineLayout *out) {
  const int64_t v = f.virtual_stages;
  int64_t rest = f.num_layers;
  int64_t middle = f.pipeline;
  bool ok = true;
  for (const auto &[flag, value] :
       {std::pair<const char *, std::optional<int64_t>>{kFirstFlag, f.first},
        {kLastFlag, f.last}}) {
    if (!value)
      continue;
    if (*value % v != 0) {
      Error(out, flag, ErrorCode::kNotDivisible,
            absl::StrCat(flag, " (", *value, ") must be divisible by the ", v,
                         " virtual stages per rank"));
      ok = false;
    }
    rest -= *value;
    --middle;
  }
  if (middle < 0) {
    Error(out, kFirstFlag, ErrorCode::kInconsistent,
          absl::StrCat(kFirstFlag, " and ", kLastFlag,
                       " need --pipeline-model-parallel-size >= 2 (got ",
                       f.pipeline, ")"));
    return;
  }
  if ((rest != 0) != (middle != 0) || rest < 0 ||
      (middle > 0 && rest % middle != 0) ||
      (middle > 0 && (rest / middle) % v != 0)) {
    Error(
        out, f.first ? kFirstFlag : kLastFlag, ErrorCode::kNotDivisible,
        absl::StrCat("--num-layers (", f.num_layers,
                     ") less the first and last "
                     "stages' layers leaves ",
                     rest, " for the ", middle,
                     " middle stages, which must split them evenly",
                     v > 1 ? absl::StrCat(", a multiple of the ", v,
                                          " virtual stages on each")
                           : std::string(),
                     " (none when there are no middle stages), as Megatron-LM "
                     "requires"));
    return;
  }
  if (!ok)
    return;
  const int64_t per_middle = middle > 0 ? rest / middle : 0;
  out->virtual_stages = v;
  for (int64_t k = 0; k < f.pipeline * v; ++k) {
    const int64_t rank = k % f.pipeline;
    int64_t layers = per_middle;
    if (rank == 0 && f.first)
      layers = *f.first;
    if (rank == f.pipeline - 1 && f.last)
      layers = *f.last;
    out->stage_blocks.push_back(layers / v);
  }
}

// --account-for-embedding/loss-in-pipeline-split: arguments.py
// validate_args and get_num_layers_to_build: the embedding and the loss
// count as layers of the even split, so the first chunk of rank 0 and the
// last chunk of rank p - 1 build one block fewer.
void FromAccounting(const PipelineLayoutFlags &f, PipelineLayout *out) {
  const int64_t layers =
      f.num_layers + (f.account_embedding ? 1 : 0) + (f.account_loss ? 1 : 0);
  const char *flag = f.account_embedding ? kEmbeddingFlag : kLossFlag;
  if (layers % f.pipeline != 0) {
    Error(out, flag, ErrorCode::kNotDivisible,
          absl::StrCat("--num-layers (", f.num_layers, ") with the ",
                       f.account_embedding && f.account_loss
                           ? "embedding and the loss"
                       : f.account_embedding ? "embedding"
                                             : "loss",
                       " counted (", layers,
                       ") must be divisible by --pipeline-model-parallel-size "
                       "(",
                       f.pipeline, ")"));
    return;
  }
  const int64_t per_rank = layers / f.pipeline;
  int64_t v = f.virtual_stages;
  if (f.layers_per_virtual_stage) {
    if (per_rank % *f.layers_per_virtual_stage != 0) {
      Error(out, "--num-layers-per-virtual-pipeline-stage",
            ErrorCode::kNotDivisible,
            absl::StrCat("--num-layers-per-virtual-pipeline-stage (",
                         *f.layers_per_virtual_stage,
                         ") must divide the layers per pipeline stage (",
                         per_rank, ", the embedding and loss counted)"));
      return;
    }
    v = per_rank / *f.layers_per_virtual_stage;
  }
  if (per_rank % v != 0) {
    Error(out, flag, ErrorCode::kNotDivisible,
          absl::StrCat("the layers per pipeline stage (", per_rank,
                       ", the embedding and loss counted) must be divisible "
                       "by the ",
                       v, " virtual stages per rank"));
    return;
  }
  out->virtual_stages = v;
  out->stage_blocks.assign(static_cast<size_t>(f.pipeline * v), per_rank / v);
  if (f.account_embedding)
    --out->stage_blocks.front();
  if (f.account_loss)
    --out->stage_blocks.back();
  if (out->stage_blocks.front() < 0 || out->stage_blocks.back() < 0) {
    Error(out, flag, ErrorCode::kOutOfRange,
          "a chunk of one layer cannot also hold the embedding and the loss "
          "(not enough layers in the first or last virtual stage)");
    out->stage_blocks.clear();
  }
}

} // namespace

PipelineLayout PipelineLayoutOf(const PipelineLayoutFlags &f) {
  PipelineLayout out;
  out.virtual_stages = f.virtual_stages;
  const bool first_last = f.first.has_value() || f.last.has_value();
  const bool accounting = f.account_embedding || f.account_loss;
  if (f.layout.has_value()) {
    if (first_last || accounting || f.virtual_given) {
      Error(&out, kLayoutFlag, ErrorCode::kInconsistent,
            absl::StrCat(kLayoutFlag,
                         " lays out every stage itself: it "
                         "cannot be combined with ",
                         kFirstFlag, ", ", kLastFlag, ", ", kEmbeddingFlag,
                         ", ", kLossFlag,
                         " or a virtual-stage flag, as Megatron-LM asserts"));
      return out;
    }
    FromLayoutString(f, &out);
    return out;
  }
  if (first_last) {
    if (accounting) {
      Error(&out, f.first ? kFirstFlag : kLastFlag, ErrorCode::kInconsistent,
            absl::StrCat(kFirstFlag, " and ", kLastFlag,
                         " cannot be combined with ", kEmbeddingFlag, " or ",
                         kLossFlag, ", as Megatron-LM asserts"));
      return out;
    }
    if (f.layers_per_virtual_stage) {
      Error(&out, "--num-layers-per-virtual-pipeline-stage",
            ErrorCode::kInconsistent,
            "uneven first and last stages need "
            "--num-virtual-stages-per-pipeline-rank for virtual stages, as "
            "Megatron-LM asserts");
      return out;
    }
    FromFirstLast(f, &out);
    return out;
  }
  if (accounting)
    FromAccounting(f, &out);
  return out;
}

} // namespace blueprint
