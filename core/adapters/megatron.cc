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
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/string_view.h"
#include "core/base/checked_math.h"
#include "core/base/field_errors.h"
#include "core/base/parse_int.h"
#include "core/base/quote.h"
#include "re2/re2.h"

namespace blueprint {
namespace {

using Spec = TransformerTrainingMappingSpec;
using Value = MegatronFlagValue;
using Kind = MegatronFlagKind;

}  // namespace

//----- The table --------------------------------------------------------------

const std::vector<MegatronFlag>& MegatronFlags() {
  // clang-format off
  // {name, kind, choices, field, absent, doc, set}
  static const auto* flags = new std::vector<MegatronFlag>{
      {"--num-layers", Kind::kPositiveInteger, {}, "model.num_blocks",
       kMegatronRequired, "transformer blocks (layers)",
       [](const Value& v, Spec* s) { s->model.num_blocks = v.integer; }},
      {"--hidden-size", Kind::kPositiveInteger, {}, "model.hidden",
       kMegatronRequired, "hidden size",
       [](const Value& v, Spec* s) { s->model.hidden = v.integer; }},
      {"--num-attention-heads", Kind::kPositiveInteger, {}, "model.attn_heads",
       kMegatronRequired, "attention heads",
       [](const Value& v, Spec* s) { s->model.attn_heads = v.integer; }},
      {"--seq-length", Kind::kPositiveInteger, {}, "model.seq_size",
       kMegatronRequired, "sequence length (tokens)",
       [](const Value& v, Spec* s) { s->model.seq_size = v.integer; }},
      {"--ffn-hidden-size", Kind::kPositiveInteger, {}, "model.feedforward",
       "4 * `--hidden-size`", "hidden size of the feed-forward (MLP) block",
       [](const Value& v, Spec* s) { s->model.feedforward = v.integer; }},
      {"--kv-channels", Kind::kPositiveInteger, {}, "model.attn_size",
       "`--hidden-size` / `--num-attention-heads`, which must divide evenly",
       "size of one attention head",
       [](const Value& v, Spec* s) { s->model.attn_size = v.integer; }},
      {"--tensor-model-parallel-size", Kind::kPositiveInteger, {},
       "parallelism.tensor.degree", "1", "tensor-parallel degree t",
       [](const Value& v, Spec* s) {
         s->parallelism.tensor.degree = v.integer;
       }},
      {"--pipeline-model-parallel-size", Kind::kPositiveInteger, {},
       "parallelism.pipeline.degree", "1", "pipeline-parallel degree p",
       [](const Value& v, Spec* s) {
         s->parallelism.pipeline.degree = v.integer;
       }},
      {"--virtual-pipeline-model-parallel-size", Kind::kPositiveInteger, {},
       "parallelism.pipeline.schedule",
       "`1f1b` (`single_stage` when p = 1)",
       "model chunks per pipeline stage v: `interleaved_1f1b` when v > 1; "
       "not with `--num-layers-per-virtual-pipeline-stage`"},
      {"--num-layers-per-virtual-pipeline-stage", Kind::kPositiveInteger, {},
       "parallelism.pipeline.schedule",
       "`1f1b` (`single_stage` when p = 1)",
       "layers per model chunk L: interleaved with v = `--num-layers` / p / L, "
       "which must divide evenly"},
      {"--world-size", Kind::kPositiveInteger, {}, "parallelism.data.degree",
       "t * p (data degree 1)",
       "all ranks N (torchrun's `WORLD_SIZE`): data degree N / (t * p), which "
       "must divide evenly"},
      {"--micro-batch-size", Kind::kPositiveInteger, {},
       "batch.microbatch_size", kMegatronRequired, "microbatch size",
       [](const Value& v, Spec* s) { s->batch.microbatch_size = v.integer; }},
      {"--global-batch-size", Kind::kPositiveInteger, {},
       "batch.global_batch_size", "`--micro-batch-size` * data degree",
       "global batch size",
       [](const Value& v, Spec* s) { s->batch.global_batch_size = v.integer; }},
      {"--sequence-parallel", Kind::kSwitch, {},
       "parallelism.tensor.communication", "off: `ar`",
       "`rs_ag` (ignored when t = 1, as Megatron-LM does); with selective "
       "recompute the all-gathers are redone in the backward pass"},
      {"--recompute-granularity", Kind::kChoice, {"full", "selective"},
       "parallelism.recompute", "`none`",
       "`full`: `full` (every block is recomputed), `selective`: `attn_only` "
       "(the attention only)",
       [](const Value& v, Spec* s) {
         s->parallelism.recompute = v.choice == "full"
                                        ? RecomputePolicy::kFull
                                    : v.choice == "selective"
                                        ? RecomputePolicy::kAttentionOnly
                                        : RecomputePolicy::kNone;
       }},
      {"--recompute-method", Kind::kChoice, {"uniform", "block"},
       "parallelism.recompute", "none",
       "needed with granularity `full`, and only then; `block` recomputes "
       "only some blocks per stage, which the model cannot represent"},
      {"--use-distributed-optimizer", Kind::kSwitch, {},
       "parallelism.data.optimizer_sharding", "off",
       "shards the optimizer state across the data-parallel ranks",
       [](const Value& v, Spec* s) {
         s->parallelism.data.optimizer_sharding = v.given;
       }},
      {"--overlap-grad-reduce", Kind::kSwitch, {}, "parallelism.data.overlap",
       "off", "overlaps the gradient reduction with the backward pass",
       [](const Value& v, Spec* s) { s->parallelism.data.overlap = v.given; }},
      {"--fp16", Kind::kSwitch, {}, "options.datatype",
       "off: `float32` unless `--bf16`", "`float16`; not with `--bf16`"},
      {"--bf16", Kind::kSwitch, {}, "options.datatype",
       "off: `float32` unless `--fp16`", "`bfloat16`; not with `--fp16`"},
  };
  // clang-format on
  return *flags;
}

const std::vector<std::string>& MegatronFlagNames() {
  static const auto* names = [] {
    auto* out = new std::vector<std::string>;
    for (const MegatronFlag& flag : MegatronFlags()) out->push_back(flag.name);
    return out;
  }();
  return *names;
}

std::string MegatronFlagsMarkdown() {
  const auto cell = [](absl::string_view text) {
    return absl::StrReplaceAll(text, {{"|", "\\|"}});
  };
  std::string out =
      "| Flag | Value | Spec field | Without it | Meaning |\n"
      "| --- | --- | --- | --- | --- |\n";
  for (const MegatronFlag& flag : MegatronFlags()) {
    std::string value;
    switch (flag.kind) {
      case Kind::kPositiveInteger:
        value = "positive integer";
        break;
      case Kind::kSwitch:
        value = "none (switch)";
        break;
      case Kind::kChoice:
        value = absl::StrCat("`", absl::StrJoin(flag.choices, "`, `"), "`");
        break;
    }
    absl::StrAppend(&out, "| `", flag.name, "` | ", cell(value), " | `",
                    flag.field, "` | ", cell(flag.absent), " | ",
                    cell(flag.doc), " |\n");
  }
  return out;
}

namespace {

const MegatronFlag* FindFlag(absl::string_view name) {
  for (const MegatronFlag& flag : MegatronFlags()) {
    if (name == flag.name) return &flag;
  }
  return nullptr;
}

// Levenshtein distance of two short ASCII words.
size_t EditDistance(absl::string_view a, absl::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1,
                         diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The known flag `flag` is most likely a misspelling of: the first one at the
// smallest edit distance, if that is at most a quarter of its length.
const MegatronFlag* ClosestFlag(absl::string_view flag) {
  const MegatronFlag* closest = nullptr;
  size_t best = 0;
  for (const MegatronFlag& known : MegatronFlags()) {
    // Cheap bound first: a long word is far from every flag.
    if (flag.size() > 2 * known.name.size()) continue;
    const size_t distance = EditDistance(flag, known.name);
    if (4 * distance <= known.name.size() &&
        (closest == nullptr || distance < best)) {
      closest = &known;
      best = distance;
    }
  }
  return closest;
}

// A user's word in a message: a short escaped excerpt (core/base/quote.h).
std::string Quoted(const std::string& s) { return QuoteExcerpt(s); }

bool LooksLikeFlag(const std::string& arg) { return arg.rfind("--", 0) == 0; }

// The flags of one command line after syntax checks: values parsed and
// validated, keyed by the flag's name ("--num-layers").
class ParsedFlags {
 public:
  // Given: the flag appeared, even with a bad value (already reported).
  bool Given(const std::string& name) const { return given_.count(name) > 0; }
  // The value of a flag given with a valid value.
  const Value* Find(const std::string& name) const {
    const auto it = values_.find(name);
    return it == values_.end() ? nullptr : &it->second;
  }
  std::optional<int64_t> Integer(const std::string& name) const {
    const Value* value = Find(name);
    if (value == nullptr) return std::nullopt;
    return value->integer;
  }
  std::optional<std::string> Choice(const std::string& name) const {
    const Value* value = Find(name);
    if (value == nullptr) return std::nullopt;
    return value->choice;
  }
  bool Switch(const std::string& name) const { return Find(name) != nullptr; }

  void MarkGiven(const std::string& name) { given_.insert(name); }
  void Set(const std::string& name, Value value) {
    value.given = true;
    values_[name] = std::move(value);
  }

 private:
  std::map<std::string, Value> values_;
  std::set<std::string> given_;
};

// Splits `args` into flags and values, appending one error per problem.
ParsedFlags ParseArgs(const std::vector<std::string>& args,
                      std::vector<FieldError>* errors) {
  // Latin-1 and (?s): a value may hold any byte, newlines and invalid UTF-8
  // included, and is then reported rather than mistaken for a stray word.
  static const RE2::Options* const kBytes = [] {
    auto* options = new RE2::Options;
    options->set_encoding(RE2::Options::EncodingLatin1);
    return options;
  }();
  static const RE2* const kFlagWithValue =
      new RE2("(?s)(--[a-z0-9][a-z0-9-]*)=(.*)", *kBytes);
  static const RE2* const kFlagAlone =
      new RE2("(--[a-z0-9][a-z0-9-]*)", *kBytes);

  ParsedFlags parsed;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    std::string flag;
    std::string value;
    bool has_value = false;
    if (RE2::FullMatch(arg, *kFlagWithValue, &flag, &value)) {
      has_value = true;
    } else if (!RE2::FullMatch(arg, *kFlagAlone, &flag)) {
      errors->push_back(
          {"", absl::StrCat(
                   "unexpected argument ", Quoted(arg),
                   ": expected a Megatron-LM flag such as --num-layers 96")});
      continue;
    }
    // Skips the next word when it is this flag's value.
    const auto skip_value = [&] {
      if (!has_value && i + 1 < args.size() && !LooksLikeFlag(args[i + 1])) {
        ++i;
      }
    };
    const MegatronFlag* info = FindFlag(flag);
    if (info == nullptr) {
      // The name is [a-z0-9-]+ but may be of any length: quote a long one.
      const std::string shown =
          flag.size() <= kMaxExcerptBytes ? flag : QuoteExcerpt(flag);
      const MegatronFlag* closest = ClosestFlag(flag);
      errors->push_back(
          {shown,
           absl::StrCat("unsupported Megatron-LM flag ", shown, ": ",
                        closest != nullptr
                            ? absl::StrCat("did you mean ", closest->name, "?")
                            : "the model cannot represent it",
                        " (supported flags: ",
                        absl::StrJoin(MegatronFlagNames(), " "), ")")});
      // Skip its value too, so that it is not reported as a stray argument.
      skip_value();
      continue;
    }
    if (parsed.Given(flag)) {
      errors->push_back({flag, absl::StrCat(flag, " is given more than once")});
      if (info->kind != Kind::kSwitch) skip_value();
      continue;
    }
    parsed.MarkGiven(flag);
    if (info->kind == Kind::kSwitch) {
      if (has_value) {
        errors->push_back({flag, absl::StrCat(flag, " takes no value (got ",
                                              Quoted(value), ")")});
      } else {
        parsed.Set(flag, Value{});
      }
      continue;
    }
    if (!has_value) {
      if (i + 1 >= args.size() || LooksLikeFlag(args[i + 1])) {
        errors->push_back({flag, absl::StrCat(flag, " needs a value")});
        continue;
      }
      value = args[++i];
    }
    if (info->kind == Kind::kChoice) {
      if (std::find(info->choices.begin(), info->choices.end(), value) ==
          info->choices.end()) {
        errors->push_back(
            {flag, absl::StrCat(flag, " must be one of ",
                                absl::StrJoin(info->choices, ", "), " (got ",
                                Quoted(value), ")")});
      } else {
        Value choice;
        choice.choice = value;
        parsed.Set(flag, std::move(choice));
      }
      continue;
    }
    const std::optional<int64_t> number = ParsePositiveInteger(value);
    if (!number) {
      errors->push_back(
          {flag, absl::StrCat(
                     flag, " needs a positive integer that fits in 64 bits (",
                     kPositiveIntegerSpelling, "; got ", Quoted(value), ")")});
      continue;
    }
    Value integer;
    integer.integer = *number;
    parsed.Set(flag, std::move(integer));
  }
  return parsed;
}

// The value `flag` has without being given (valid), if the table says one.
std::optional<Value> AbsentValue(const MegatronFlag& flag) {
  switch (flag.kind) {
    case Kind::kSwitch:
    case Kind::kChoice:
      return Value{};
    case Kind::kPositiveInteger:
      if (const std::optional<int64_t> number =
              ParsePositiveInteger(flag.absent)) {
        Value value;
        value.integer = *number;
        return value;
      }
      return std::nullopt;
  }
  return std::nullopt;
}

// One conversion: the flags, the spec being filled and the errors so far.
struct Conversion {
  ParsedFlags flags;
  Spec spec;
  std::vector<FieldError> errors;

  void Error(std::string field, std::string message) {
    errors.push_back({std::move(field), std::move(message)});
  }
};

// The table's part of one spec section: every flag whose field is in it is
// required or written by its setter.
void ApplyFlags(absl::string_view section, Conversion* c) {
  for (const MegatronFlag& flag : MegatronFlags()) {
    if (!absl::StartsWith(flag.field, absl::StrCat(section, "."))) continue;
    if (flag.absent == kMegatronRequired && !c->flags.Given(flag.name)) {
      c->Error(flag.name, absl::StrCat(flag.name, " is required"));
    }
    if (flag.set == nullptr) continue;
    // A flag given with a bad value (reported) takes its default, if any.
    if (const Value* given = c->flags.Find(flag.name)) {
      flag.set(*given, &c->spec);
    } else if (std::optional<Value> absent = AbsentValue(flag)) {
      flag.set(*absent, &c->spec);
    }
  }
}

//----- The rules the table cannot express -------------------------------------

// The last network tier, where Megatron-LM's pipeline and data groups
// usually talk (across nodes).
int64_t OutermostTier(const System& system) {
  return system.networks.empty()
             ? 0
             : static_cast<int64_t>(system.networks.size()) - 1;
}

// The model's derived defaults.
void ModelRules(Conversion* c) {
  const std::optional<int64_t> hidden = c->flags.Integer("--hidden-size");
  const std::optional<int64_t> heads =
      c->flags.Integer("--num-attention-heads");
  if (!c->flags.Integer("--ffn-hidden-size") && hidden) {
    const std::optional<int64_t> four_h = CheckedMul(4, *hidden);
    if (!four_h) {
      c->Error("model.feedforward",
               absl::StrCat("--ffn-hidden-size defaults to 4 * "
                            "--hidden-size (",
                            *hidden, "), which overflows 64 bits"));
    }
    c->spec.model.feedforward = four_h.value_or(0);
  }
  c->spec.model.kv_heads = c->spec.model.attn_heads;
  if (!c->flags.Integer("--kv-channels") && hidden && heads) {
    if (*hidden % *heads != 0) {
      c->Error(
          "model.attn_size",
          absl::StrCat("--kv-channels defaults to --hidden-size (", *hidden,
                       ") / --num-attention-heads (", *heads,
                       "), which must then divide evenly; give --kv-channels"));
    } else {
      c->spec.model.attn_size = *hidden / *heads;
    }
  }
}

// The data degree, the schedule, recompute, TP communication and the knobs
// Megatron-LM has no flag for.
void ParallelismRules(const System& system, Conversion* c) {
  const ParsedFlags& flags = c->flags;
  auto& parallelism = c->spec.parallelism;
  const int64_t t = parallelism.tensor.degree;
  const int64_t p = parallelism.pipeline.degree;

  int64_t d = 1;
  if (std::optional<int64_t> world = flags.Integer("--world-size")) {
    const std::optional<int64_t> model_parallel = CheckedMul(t, p);
    if (!model_parallel || *world % *model_parallel != 0) {
      c->Error("--world-size",
               absl::StrCat("--world-size (", *world,
                            ") must be divisible by "
                            "--tensor-model-parallel-size (",
                            t, ") * --pipeline-model-parallel-size (", p, ")"));
    } else {
      d = *world / *model_parallel;
    }
  }

  // Pipeline schedule.
  int64_t v = 1;
  const std::optional<int64_t> layers = flags.Integer("--num-layers");
  const std::optional<int64_t> vpp =
      flags.Integer("--virtual-pipeline-model-parallel-size");
  const std::optional<int64_t> layers_per_virtual =
      flags.Integer("--num-layers-per-virtual-pipeline-stage");
  if (vpp && layers_per_virtual) {
    c->Error("parallelism.pipeline.schedule",
             "--virtual-pipeline-model-parallel-size and "
             "--num-layers-per-virtual-pipeline-stage cannot both be given");
  } else if (vpp) {
    v = *vpp;
  } else if (layers_per_virtual && layers) {
    if (*layers % p != 0) {
      c->Error("--num-layers-per-virtual-pipeline-stage",
               absl::StrCat("--num-layers (", *layers,
                            ") must be divisible by "
                            "--pipeline-model-parallel-size (",
                            p,
                            ") to use "
                            "--num-layers-per-virtual-pipeline-stage"));
    } else if ((*layers / p) % *layers_per_virtual != 0) {
      c->Error("--num-layers-per-virtual-pipeline-stage",
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
  if (v > 1) {
    parallelism.pipeline.schedule = InterleavedOneForwardOneBackward{v};
  } else if (p == 1) {
    parallelism.pipeline.schedule = SingleStage{};
  } else {
    parallelism.pipeline.schedule = OneForwardOneBackward{};
  }
  parallelism.pipeline.stage_layout = StageLayout::kEven;
  parallelism.pipeline.network_tier = OutermostTier(system);

  // Recompute: the granularity set the policy; the method must fit it.
  const std::optional<std::string> method = flags.Choice("--recompute-method");
  if (parallelism.recompute != RecomputePolicy::kFull) {
    if (method) {
      c->Error("--recompute-method",
               "--recompute-method only applies to --recompute-granularity "
               "full");
    }
  } else if (!method) {
    c->Error("--recompute-method",
             "--recompute-granularity full needs --recompute-method uniform");
  } else if (*method == "block") {
    c->Error("--recompute-method",
             "--recompute-method block recomputes only some blocks of each "
             "stage, which the model cannot represent (it recomputes every "
             "block); use --recompute-method uniform");
  }

  // Tensor parallelism: Megatron-LM turns sequence parallelism off at t == 1.
  parallelism.tensor.overlap = TensorOverlap::kNone;
  parallelism.tensor.network_tier = 0;
  if (flags.Switch("--sequence-parallel") && t > 1) {
    parallelism.tensor.communication = ReduceScatterAllGather{
        parallelism.recompute == RecomputePolicy::kAttentionOnly};
  } else {
    parallelism.tensor.communication = AllReduce{};
  }

  parallelism.data.degree = d;
  parallelism.data.network_tier = OutermostTier(system);
}

// The global batch's default.
void BatchRules(Conversion* c) {
  const std::optional<int64_t> micro = c->flags.Integer("--micro-batch-size");
  if (c->flags.Integer("--global-batch-size") || !micro) return;
  const int64_t d = c->spec.parallelism.data.degree;
  const std::optional<int64_t> global = CheckedMul(*micro, d);
  if (!global) {
    c->Error("batch.global_batch_size",
             absl::StrCat(
                 "--global-batch-size defaults to --micro-batch-size (", *micro,
                 ") * data-parallel size (", d, "), which overflows 64 bits"));
  }
  c->spec.batch.global_batch_size = global.value_or(0);
}

// The datatype, and the options Megatron-LM has no flag for.
void OptionsRules(Conversion* c) {
  const bool fp16 = c->flags.Switch("--fp16");
  const bool bf16 = c->flags.Switch("--bf16");
  if (fp16 && bf16) {
    c->Error("options.datatype", "--fp16 and --bf16 cannot both be given");
  }
  c->spec.options.datatype = fp16   ? DataType::kFloat16
                             : bf16 ? DataType::kBFloat16
                                    : DataType::kFloat32;
  c->spec.options.fused_activation = false;
  c->spec.options.attention = AttentionType::kMultiHead;
  c->spec.options.offload = Offload{};
}

}  // namespace

absl::StatusOr<MappingSpec> FromMegatronArgs(
    const std::vector<std::string>& args, const System& system) {
  Conversion c;
  c.flags = ParseArgs(args, &c.errors);
  c.spec.system = system;
  // Section by section, the table's flags and then the section's rules (which
  // read what the table wrote): errors come in this order.
  ApplyFlags("model", &c);
  ModelRules(&c);
  ApplyFlags("parallelism", &c);
  ParallelismRules(system, &c);
  ApplyFlags("batch", &c);
  BatchRules(&c);
  ApplyFlags("options", &c);
  OptionsRules(&c);
  if (!c.errors.empty()) return InvalidInputError(c.errors);
  return MappingSpec(std::move(c.spec));
}

}  // namespace blueprint
