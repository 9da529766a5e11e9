#include "core/adapters/megatron.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/checked_math.h"
#include "core/base/parse_int.h"
#include "core/base/quote.h"
#include "re2/re2.h"

namespace blueprint {
namespace {

enum class FlagKind {
  kInteger,  // a positive integer value
  kSwitch,   // no value (argparse store_true)
  kChoice,   // one of FlagInfo::choices
};

struct FlagInfo {
  const char* name;  // without the leading "--"
  FlagKind kind;
  std::vector<std::string> choices;
};

// The supported flags, in the documented order (megatron.h).
const std::vector<FlagInfo>& Flags() {
  static const auto* flags = new std::vector<FlagInfo>{
      {"num-layers", FlagKind::kInteger, {}},
      {"hidden-size", FlagKind::kInteger, {}},
      {"num-attention-heads", FlagKind::kInteger, {}},
      {"seq-length", FlagKind::kInteger, {}},
      {"ffn-hidden-size", FlagKind::kInteger, {}},
      {"kv-channels", FlagKind::kInteger, {}},
      {"tensor-model-parallel-size", FlagKind::kInteger, {}},
      {"pipeline-model-parallel-size", FlagKind::kInteger, {}},
      {"virtual-pipeline-model-parallel-size", FlagKind::kInteger, {}},
      {"num-layers-per-virtual-pipeline-stage", FlagKind::kInteger, {}},
      {"world-size", FlagKind::kInteger, {}},
      {"micro-batch-size", FlagKind::kInteger, {}},
      {"global-batch-size", FlagKind::kInteger, {}},
      {"sequence-parallel", FlagKind::kSwitch, {}},
      {"recompute-granularity", FlagKind::kChoice, {"full", "selective"}},
      {"recompute-method", FlagKind::kChoice, {"uniform", "block"}},
      {"use-distributed-optimizer", FlagKind::kSwitch, {}},
      {"overlap-grad-reduce", FlagKind::kSwitch, {}},
      {"fp16", FlagKind::kSwitch, {}},
      {"bf16", FlagKind::kSwitch, {}},
  };
  return *flags;
}

const FlagInfo* FindFlag(const std::string& name) {
  for (const FlagInfo& flag : Flags()) {
    if (name == flag.name) return &flag;
  }
  return nullptr;
}

// A user's word in a message: a short escaped excerpt (core/base/quote.h).
std::string Quoted(const std::string& s) { return QuoteExcerpt(s); }

// The flags of one command line after syntax checks: integers parsed,
// choices validated, switches present or not.
class ParsedFlags {
 public:
  // Given: the flag appeared, even with a bad value (already reported).
  bool Given(const std::string& name) const { return given_.count(name) > 0; }
  std::optional<int64_t> Integer(const std::string& name) const {
    const auto it = integers_.find(name);
    if (it == integers_.end()) return std::nullopt;
    return it->second;
  }
  std::optional<std::string> Text(const std::string& name) const {
    const auto it = texts_.find(name);
    if (it == texts_.end()) return std::nullopt;
    return it->second;
  }
  bool Switch(const std::string& name) const { return texts_.count(name) > 0; }

  void MarkGiven(const std::string& name) { given_.insert(name); }
  void SetInteger(const std::string& name, int64_t value) {
    integers_[name] = value;
  }
  void SetText(const std::string& name, std::string value) {
    texts_[name] = std::move(value);
  }

 private:
  std::map<std::string, int64_t> integers_;
  std::map<std::string, std::string> texts_;  // choices; switches as ""
  std::set<std::string> given_;
};

// Splits `args` into flags and values, appending one error per problem.
ParsedFlags ParseArgs(const std::vector<std::string>& args,
                      std::vector<std::string>* errors) {
  // Latin-1 and (?s): a value may hold any byte, newlines and invalid UTF-8
  // included, and is then reported rather than mistaken for a stray word.
  static const RE2::Options* const kBytes = [] {
    auto* options = new RE2::Options;
    options->set_encoding(RE2::Options::EncodingLatin1);
    return options;
  }();
  static const RE2* const kFlagWithValue =
      new RE2("(?s)--([a-z0-9][a-z0-9-]*)=(.*)", *kBytes);
  static const RE2* const kFlagAlone =
      new RE2("--([a-z0-9][a-z0-9-]*)", *kBytes);

  ParsedFlags parsed;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    std::string name;
    std::string value;
    bool has_value = false;
    if (RE2::FullMatch(arg, *kFlagWithValue, &name, &value)) {
      has_value = true;
    } else if (!RE2::FullMatch(arg, *kFlagAlone, &name)) {
      errors->push_back(absl::StrCat(
          "unexpected argument ", Quoted(arg),
          ": expected a Megatron-LM flag such as --num-layers 96"));
      continue;
    }
    const std::string flag = "--" + name;
    const FlagInfo* info = FindFlag(name);
    if (info == nullptr) {
      // The name is [a-z0-9-]+ but may be of any length: quote a long one.
      errors->push_back(absl::StrCat(
          "unsupported Megatron-LM flag ",
          flag.size() <= kMaxExcerptBytes ? flag : QuoteExcerpt(flag),
          ": the model cannot represent it (supported flags: ",
          absl::StrJoin(MegatronFlagNames(), " "), ")"));
      // Skip its value too, so that it is not reported as a stray argument.
      if (!has_value && i + 1 < args.size() &&
          args[i + 1].rfind("--", 0) != 0) {
        ++i;
      }
      continue;
    }
    if (parsed.Given(name)) {
      errors->push_back(absl::StrCat(flag, " is given more than once"));
      if (!has_value && info->kind != FlagKind::kSwitch &&
          i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0) {
        ++i;
      }
      continue;
    }
    parsed.MarkGiven(name);
    if (info->kind == FlagKind::kSwitch) {
      if (has_value) {
        errors->push_back(
            absl::StrCat(flag, " takes no value (got ", Quoted(value), ")"));
      } else {
        parsed.SetText(name, "");
      }
      continue;
    }
    if (!has_value) {
      if (i + 1 >= args.size() || args[i + 1].rfind("--", 0) == 0) {
        errors->push_back(absl::StrCat(flag, " needs a value"));
        continue;
      }
      value = args[++i];
    }
    if (info->kind == FlagKind::kChoice) {
      if (std::find(info->choices.begin(), info->choices.end(), value) ==
          info->choices.end()) {
        errors->push_back(absl::StrCat(flag, " must be one of ",
                                       absl::StrJoin(info->choices, ", "),
                                       " (got ", Quoted(value), ")"));
      } else {
        parsed.SetText(name, value);
      }
      continue;
    }
    const std::optional<int64_t> number = ParsePositiveInteger(value);
    if (!number) {
      errors->push_back(absl::StrCat(
          flag, " needs a positive integer that fits in 64 bits (",
          kPositiveIntegerSpelling, "; got ", Quoted(value), ")"));
      continue;
    }
    parsed.SetInteger(name, *number);
  }
  return parsed;
}

// The value of a required integer flag, or an error.
std::optional<int64_t> Required(const ParsedFlags& flags,
                                const std::string& name,
                                std::vector<std::string>* errors) {
  std::optional<int64_t> value = flags.Integer(name);
  if (!value && !flags.Given(name)) {
    errors->push_back(absl::StrCat("--", name, " is required"));
  }
  return value;
}

// The last network tier, where Megatron-LM's pipeline and data groups
// usually talk (across nodes).
int64_t OutermostTier(const System& system) {
  return system.networks.empty()
             ? 0
             : static_cast<int64_t>(system.networks.size()) - 1;
}

}  // namespace

const std::vector<std::string>& MegatronFlagNames() {
  static const auto* names = [] {
    auto* out = new std::vector<std::string>;
    for (const FlagInfo& flag : Flags())
      out->push_back(absl::StrCat("--", flag.name));
    return out;
  }();
  return *names;
}

absl::StatusOr<MappingSpec> FromMegatronArgs(
    const std::vector<std::string>& args, const System& system) {
  std::vector<std::string> errors;
  const ParsedFlags flags = ParseArgs(args, &errors);

  TransformerTrainingMappingSpec spec;
  spec.system = system;

  // Model.
  const std::optional<int64_t> layers = Required(flags, "num-layers", &errors);
  const std::optional<int64_t> hidden = Required(flags, "hidden-size", &errors);
  const std::optional<int64_t> heads =
      Required(flags, "num-attention-heads", &errors);
  const std::optional<int64_t> seq = Required(flags, "seq-length", &errors);
  spec.model.num_blocks = layers.value_or(0);
  spec.model.hidden = hidden.value_or(0);
  spec.model.attn_heads = heads.value_or(0);
  spec.model.seq_size = seq.value_or(0);
  if (std::optional<int64_t> ffn = flags.Integer("ffn-hidden-size")) {
    spec.model.feedforward = *ffn;
  } else if (hidden) {
    const std::optional<int64_t> four_h = CheckedMul(4, *hidden);
    if (!four_h) {
      errors.push_back(
          absl::StrCat("--ffn-hidden-size defaults to 4 * "
                       "--hidden-size (",
                       *hidden, "), which overflows 64 bits"));
    }
    spec.model.feedforward = four_h.value_or(0);
  }
  if (std::optional<int64_t> kv = flags.Integer("kv-channels")) {
    spec.model.attn_size = *kv;
  } else if (hidden && heads) {
    if (*hidden % *heads != 0) {
      errors.push_back(
          absl::StrCat("--kv-channels defaults to --hidden-size (", *hidden,
                       ") / --num-attention-heads (", *heads,
                       "), which must then divide evenly; give --kv-channels"));
    } else {
      spec.model.attn_size = *hidden / *heads;
    }
  }

  // Degrees.
  const int64_t t = flags.Integer("tensor-model-parallel-size").value_or(1);
  const int64_t p = flags.Integer("pipeline-model-parallel-size").value_or(1);
  int64_t d = 1;
  if (std::optional<int64_t> world = flags.Integer("world-size")) {
    const std::optional<int64_t> model_parallel = CheckedMul(t, p);
    if (!model_parallel || *world % *model_parallel != 0) {
      errors.push_back(absl::StrCat("--world-size (", *world,
                                    ") must be divisible by "
                                    "--tensor-model-parallel-size (",
                                    t, ") * --pipeline-model-parallel-size (",
                                    p, ")"));
    } else {
      d = *world / *model_parallel;
    }
  }

  // Pipeline schedule.
  int64_t v = 1;
  const std::optional<int64_t> vpp =
      flags.Integer("virtual-pipeline-model-parallel-size");
  const std::optional<int64_t> layers_per_virtual =
      flags.Integer("num-layers-per-virtual-pipeline-stage");
  if (vpp && layers_per_virtual) {
    errors.push_back(
        "--virtual-pipeline-model-parallel-size and "
        "--num-layers-per-virtual-pipeline-stage cannot both be given");
  } else if (vpp) {
    v = *vpp;
  } else if (layers_per_virtual && layers) {
    if (*layers % p != 0) {
      errors.push_back(absl::StrCat(
          "--num-layers (", *layers,
          ") must be divisible by --pipeline-model-parallel-size (", p,
          ") to use --num-layers-per-virtual-pipeline-stage"));
    } else if ((*layers / p) % *layers_per_virtual != 0) {
      errors.push_back(absl::StrCat(
          "--num-layers-per-virtual-pipeline-stage (", *layers_per_virtual,
          ") must divide the layers per pipeline stage (--num-layers ", *layers,
          " / --pipeline-model-parallel-size ", p, " = ", *layers / p, ")"));
    } else {
      v = *layers / p / *layers_per_virtual;
    }
  }
  spec.parallelism.pipeline.degree = p;
  if (v > 1) {
    spec.parallelism.pipeline.schedule = InterleavedOneForwardOneBackward{v};
  } else if (p == 1) {
    spec.parallelism.pipeline.schedule = SingleStage{};
  } else {
    spec.parallelism.pipeline.schedule = OneForwardOneBackward{};
  }
  spec.parallelism.pipeline.stage_layout = StageLayout::kEven;
  spec.parallelism.pipeline.network_tier = OutermostTier(system);

  // Recompute.
  const std::optional<std::string> granularity =
      flags.Text("recompute-granularity");
  const std::optional<std::string> method = flags.Text("recompute-method");
  spec.parallelism.recompute = RecomputePolicy::kNone;
  if (granularity == "selective") {
    spec.parallelism.recompute = RecomputePolicy::kAttentionOnly;
    if (method) {
      errors.push_back(
          "--recompute-method only applies to --recompute-granularity full");
    }
  } else if (granularity == "full") {
    spec.parallelism.recompute = RecomputePolicy::kFull;
    if (!method) {
      errors.push_back(
          "--recompute-granularity full needs --recompute-method uniform");
    } else if (*method == "block") {
      errors.push_back(
          "--recompute-method block recomputes only some blocks of each "
          "stage, which the model cannot represent (it recomputes every "
          "block); use --recompute-method uniform");
    }
  } else if (method) {
    errors.push_back(
        "--recompute-method only applies to --recompute-granularity full");
  }

  // Tensor parallelism: Megatron-LM turns sequence parallelism off at t == 1.
  spec.parallelism.tensor.degree = t;
  spec.parallelism.tensor.overlap = TensorOverlap::kNone;
  spec.parallelism.tensor.network_tier = 0;
  if (flags.Switch("sequence-parallel") && t > 1) {
    spec.parallelism.tensor.communication = ReduceScatterAllGather{
        spec.parallelism.recompute == RecomputePolicy::kAttentionOnly};
  } else {
    spec.parallelism.tensor.communication = AllReduce{};
  }

  // Data parallelism.
  spec.parallelism.data.degree = d;
  spec.parallelism.data.optimizer_sharding =
      flags.Switch("use-distributed-optimizer");
  spec.parallelism.data.overlap = flags.Switch("overlap-grad-reduce");
  spec.parallelism.data.network_tier = OutermostTier(system);

  // Batch.
  const std::optional<int64_t> micro =
      Required(flags, "micro-batch-size", &errors);
  spec.batch.microbatch_size = micro.value_or(0);
  if (std::optional<int64_t> global = flags.Integer("global-batch-size")) {
    spec.batch.global_batch_size = *global;
  } else if (micro) {
    const std::optional<int64_t> global_default = CheckedMul(*micro, d);
    if (!global_default) {
      errors.push_back(absl::StrCat(
          "--global-batch-size defaults to --micro-batch-size (", *micro,
          ") * data-parallel size (", d, "), which overflows 64 bits"));
    }
    spec.batch.global_batch_size = global_default.value_or(0);
  }

  // Options.
  if (flags.Switch("fp16") && flags.Switch("bf16")) {
    errors.push_back("--fp16 and --bf16 cannot both be given");
  }
  spec.options.datatype = flags.Switch("fp16")   ? DataType::kFloat16
                          : flags.Switch("bf16") ? DataType::kBFloat16
                                                 : DataType::kFloat32;
  spec.options.fused_activation = false;
  spec.options.attention = AttentionType::kMultiHead;
  spec.options.offload = Offload{};

  if (!errors.empty()) {
    return absl::InvalidArgumentError(absl::StrJoin(errors, "\n"));
  }
  return MappingSpec(std::move(spec));
}

}  // namespace blueprint
