#include "core/serving/engine_flags.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/parse_int.h"

namespace blueprint {
namespace {

const char* ClassName(EngineFlagClass c) {
  switch (c) {
    case EngineFlagClass::kModelled:
      return "modelled";
    case EngineFlagClass::kIgnored:
      return "ignored";
    case EngineFlagClass::kUnsupported:
      return "unsupported";
  }
  return "ignored";
}

}  // namespace

std::string EngineFlagsMarkdown(const std::vector<EngineFlag>& flags) {
  std::string out = "| flag | class | meaning |\n| --- | --- | --- |\n";
  for (const EngineFlag& flag : flags) {
    std::vector<std::string> names;
    for (const std::string& name : flag.names) {
      names.push_back(
          absl::StrCat("`", name, flag.takes_value ? " N" : "", "`"));
    }
    absl::StrAppend(&out, "| ", absl::StrJoin(names, ", "), " | ",
                    ClassName(flag.flag_class), " | ", flag.doc, " |\n");
  }
  return out;
}

EngineFlagReader::EngineFlagReader(const std::vector<EngineFlag>* flags,
                                   std::string engine,
                                   std::vector<FieldError>* errors,
                                   std::vector<std::string>* notes)
    : flags_(flags),
      engine_(std::move(engine)),
      errors_(errors),
      notes_(notes) {}

void EngineFlagReader::Read(const std::vector<std::string>& args) {
  size_t i = 0;
  if (!args.empty() && !absl::StartsWith(args[0], "-")) {
    Note(absl::StrCat("the model \"", args[0],
                      "\" of the command line is served as the --hf-config "
                      "model"));
    i = 1;
  }
  for (; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (!absl::StartsWith(word, "-")) {
      Error("", ErrorCode::kSyntax,
            absl::StrCat("\"", word,
                         "\" is not a flag, and no flag before it takes a "
                         "value"));
      continue;
    }
    const size_t eq = word.find('=');
    const std::string name = word.substr(0, eq);
    const EngineFlag* flag = Find(name);
    if (flag == nullptr) {
      Error(name, ErrorCode::kUnknownField,
            absl::StrCat(name, ": not ", engine_,
                         " flag this import knows (core/serving/README.md "
                         "lists them)"));
      if (eq == std::string::npos && i + 1 < args.size() &&
          !absl::StartsWith(args[i + 1], "-")) {
        ++i;  // its value, most likely
      }
      continue;
    }
    std::string value;
    if (flag->takes_value) {
      if (eq != std::string::npos) {
        value = word.substr(eq + 1);
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        Error(name, ErrorCode::kSyntax, absl::StrCat(name, " needs a value"));
        continue;
      }
    } else if (eq != std::string::npos) {
      Error(name, ErrorCode::kSyntax,
            absl::StrCat(name, " is a switch and takes no value"));
      continue;
    }
    const std::string& key = flag->names[0];
    if (!given_.emplace(key, value).second) {
      Error(name, ErrorCode::kSyntax, absl::StrCat(key, " is given twice"));
    }
  }
  std::vector<std::string> ignored;
  for (const EngineFlag& flag : *flags_) {
    if (given_.count(flag.names[0]) == 0) continue;
    switch (flag.flag_class) {
      case EngineFlagClass::kModelled:
        break;
      case EngineFlagClass::kIgnored:
        ignored.push_back(absl::StrCat(flag.names[0], " (", flag.doc, ")"));
        break;
      case EngineFlagClass::kUnsupported:
        Error(flag.names[0], ErrorCode::kUnsupported,
              absl::StrCat(flag.names[0], " is not modelled: ", flag.doc));
        break;
    }
  }
  if (!ignored.empty()) {
    Note(absl::StrCat("ignored: ", absl::StrJoin(ignored, "; ")));
  }
}

const std::string* EngineFlagReader::Get(const std::string& name) const {
  auto it = given_.find(name);
  return it == given_.end() ? nullptr : &it->second;
}

std::optional<int64_t> EngineFlagReader::Count(const std::string& name,
                                               int64_t absent) {
  const std::string* given = Get(name);
  if (given == nullptr) return absent;
  const std::optional<int64_t> value = ParsePositiveInteger(*given);
  if (!value) {
    Error(name, ErrorCode::kWrongType,
          absl::StrCat(name, ": expected a positive integer, got \"", *given,
                       "\""));
  }
  return value;
}

std::optional<double> EngineFlagReader::Number(const std::string& name,
                                               double absent) {
  const std::string* given = Get(name);
  if (given == nullptr) return absent;
  double value = 0;
  if (absl::SimpleAtod(*given, &value)) return value;
  Error(name, ErrorCode::kWrongType,
        absl::StrCat(name, ": expected a number, got \"", *given, "\""));
  return std::nullopt;
}

void EngineFlagReader::Error(std::string field, ErrorCode code,
                             std::string message) {
  errors_->push_back({std::move(field), std::move(message), code});
}

void EngineFlagReader::Note(std::string note) {
  notes_->push_back(std::move(note));
}

const EngineFlag* EngineFlagReader::Find(const std::string& name) const {
  for (const EngineFlag& flag : *flags_) {
    for (const std::string& n : flag.names) {
      if (n == name) return &flag;
    }
  }
  return nullptr;
}

void EngineFlagReader::ChoiceError(const std::string& name,
                                   const std::string& value,
                                   const std::vector<std::string>& spellings) {
  std::vector<std::string> quoted;
  for (const std::string& s : spellings) {
    quoted.push_back(absl::StrCat("\"", s, "\""));
  }
  Error(name, ErrorCode::kUnknownChoice,
        absl::StrCat(name, ": expected one of ", absl::StrJoin(quoted, ", "),
                     ", got \"", value, "\""));
}

void ReadRequestLengths(const BenchmarkFlagNames& names, EngineFlagReader* r,
                        ServingSpec* spec) {
  const std::pair<const char*, std::optional<int64_t>> lengths[] = {
      {names.input_len, names.default_input_len},
      {names.output_len, names.default_output_len}};
  for (const auto& [name, absent] : lengths) {
    if (!absent && !r->Has(name)) {
      r->Error(name, ErrorCode::kMissingField,
               absl::StrCat(name,
                            " (or its synonym) is required: the "
                            "benchmark's tokens per request"));
    }
  }
  const std::optional<int64_t> input =
      r->Count(names.input_len, names.default_input_len.value_or(0));
  const std::optional<int64_t> output =
      r->Count(names.output_len, names.default_output_len.value_or(0));
  if (input) spec->workload.input_tokens = *input;
  if (output) spec->workload.output_tokens = *output;
  const std::optional<int64_t> length = r->Count(names.max_model_len, 0);
  if (length && *length > 0 && input && output && *input + *output > *length) {
    r->Error(names.max_model_len, ErrorCode::kInconsistent,
             absl::StrCat(names.max_model_len, " (", *length,
                          ") must hold a request's input and output tokens (",
                          *input, " + ", *output, ")"));
  }
}

bool ReadMaxConcurrency(int64_t replicas, const char* replicas_flag,
                        EngineFlagReader* r, ServingSpec* spec) {
  const std::string* total = r->Get("--max-concurrency");
  if (total == nullptr) return false;
  const std::optional<int64_t> c = r->Count("--max-concurrency", 0);
  if (!c) return true;
  if (*c % replicas != 0) {
    r->Error(
        "--max-concurrency", ErrorCode::kNotDivisible,
        absl::StrCat("--max-concurrency (", *total, ") must be a multiple of ",
                     replicas_flag, " (", replicas,
                     "): the requests in flight spread evenly over the "
                     "replicas"));
    return true;
  }
  spec->workload.concurrency = *c / replicas;
  return true;
}

absl::StatusOr<ServingSpec> ImportEngineFlags(
    const std::vector<EngineFlag>& flags, const std::string& engine,
    const std::vector<EngineFlagStep>& steps,
    const std::vector<std::string>& args, const TransformerModel& model,
    const System& system, std::vector<std::string>* notes) {
  std::vector<FieldError> errors;
  EngineFlagReader reader(&flags, engine, &errors, notes);
  reader.Read(args);
  ServingSpec spec;
  spec.model = model;
  spec.system = system;
  for (EngineFlagStep step : steps) step(model, &reader, &spec);
  if (!errors.empty()) return InvalidInputError(errors);
  return spec;
}

void ReadWeightDatatype(EngineFlagReader* r, ServingSpec* spec) {
  const std::optional<DataType> dtype =
      r->Choice<DataType>("--dtype",
                          {{"auto", DataType::kBFloat16},
                           {"bfloat16", DataType::kBFloat16},
                           {"float16", DataType::kFloat16},
                           {"half", DataType::kFloat16}},
                          DataType::kBFloat16);
  if (dtype) spec->weight_datatype = *dtype;
  if (r->Has("--quantization")) {
    const std::optional<bool> fp8 =
        r->Choice<bool>("--quantization", {{"fp8", true}}, false);
    if (fp8 && *fp8) spec->weight_datatype = DataType::kFloat8;
  }
}

}  // namespace blueprint
