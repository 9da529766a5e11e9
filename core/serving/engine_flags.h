// The pieces the serving engines' command-line imports share (vllm_import.h,
// sglang_import.h): one table row per flag (EngineFlag), the reader that
// checks a command line against such a table (EngineFlagReader: unknown
// flags, missing values, repeats and unsupported flags are errors, the
// ignored ones one note), the table as Markdown for core/serving/README.md,
// and the benchmark's load read into the spec's workload, the same for
// every engine whose benchmark sends fixed-length random requests.
//
// Each engine keeps its own table and its own mapping rules; what is here
// is only what does not depend on the engine.
#ifndef BLUEPRINTING_CORE_SERVING_ENGINE_FLAGS_H_
#define BLUEPRINTING_CORE_SERVING_ENGINE_FLAGS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/base/field_errors.h"
#include "core/serving/serving_spec.h"

namespace blueprint {

// The discipline of the Megatron-LM import (core/adapters/megatron.h):
//   * modelled: the flag sets a field of the spec (its row says which and
//     what holds without it);
//   * ignored: accepted and listed in one note, with why it changes nothing
//     the serving model computes;
//   * unsupported: an error naming the flag and why.
enum class EngineFlagClass { kModelled, kIgnored, kUnsupported };

// One flag: its spellings (the first is its name in messages), whether it
// takes a value, its class and a line saying what it sets (modelled), why
// it changes nothing modelled (ignored) or why it is an error (unsupported).
struct EngineFlag {
  std::vector<std::string> names;
  bool takes_value = true;
  EngineFlagClass flag_class = EngineFlagClass::kIgnored;
  std::string doc;
};

// EngineFlagsMarkdown: a flag table as Markdown, a header row then one row
// per flag in the table's order.
std::string EngineFlagsMarkdown(const std::vector<EngineFlag>& flags);

// Reads one command line against one table. Errors are FieldErrors whose
// field is the flag (or "" for a stray word), all collected; `notes`
// receives the ignored flags (one note) and whatever the caller adds.
class EngineFlagReader {
 public:
  // `engine` names the engine in messages, with its article ("a vLLM",
  // "an SGLang").
  EngineFlagReader(const std::vector<EngineFlag>* flags, std::string engine,
                   std::vector<FieldError>* errors,
                   std::vector<std::string>* notes);

  // Reads `args`; a first word that is not a flag is the model's name (as
  // `vllm serve MODEL` takes it), served as the --hf-config model (a note).
  void Read(const std::vector<std::string>& args);

  // The value of a flag, by its first name (nullptr: not given; "" for a
  // switch).
  const std::string* Get(const std::string& name) const;
  bool Has(const std::string& name) const { return Get(name) != nullptr; }

  // A positive integer flag, `absent` without it (nullopt: reported).
  std::optional<int64_t> Count(const std::string& name, int64_t absent);

  // A number flag, `absent` without it (nullopt: reported).
  std::optional<double> Number(const std::string& name, double absent);

  // One of `choices` (each with its meaning), `absent` without the flag
  // (nullopt: reported, naming the choices).
  template <typename T>
  std::optional<T> Choice(const std::string& name,
                          const std::vector<std::pair<std::string, T>>& choices,
                          T absent) {
    const std::string* value = Get(name);
    if (value == nullptr) return absent;
    for (const auto& [spelling, meaning] : choices) {
      if (*value == spelling) return meaning;
    }
    std::vector<std::string> spellings;
    for (const auto& choice : choices) spellings.push_back(choice.first);
    ChoiceError(name, *value, spellings);
    return std::nullopt;
  }

  void Error(std::string field, ErrorCode code, std::string message);
  void Note(std::string note);

 private:
  const EngineFlag* Find(const std::string& name) const;
  void ChoiceError(const std::string& name, const std::string& value,
                   const std::vector<std::string>& spellings);

  const std::vector<EngineFlag>* flags_;
  std::string engine_;
  std::vector<FieldError>* errors_;
  std::vector<std::string>* notes_;
  std::map<std::string, std::string> given_;  // by the flag's first name
};

// The benchmark's flags as one engine spells them.
struct BenchmarkFlagNames {
  const char* input_len;      // "--random-input-len"
  const char* output_len;     // "--random-output-len"
  const char* max_model_len;  // the serve line's longest sequence
  // The benchmark's lengths without the flags; nullopt: the flag is
  // required.
  std::optional<int64_t> default_input_len;
  std::optional<int64_t> default_output_len;
};

// ReadRequestLengths: `workload.input_tokens` and `output_tokens`, and the
// serve line's longest sequence (when given) must hold both.
void ReadRequestLengths(const BenchmarkFlagNames& names, EngineFlagReader* r,
                        ServingSpec* spec);

// ReadMaxConcurrency: the benchmark's --max-concurrency, over `replicas`
// (`replicas_flag` names them in the message), into workload.concurrency.
// Returns false when the flag is absent (the caller's default applies).
bool ReadMaxConcurrency(int64_t replicas, const char* replicas_flag,
                        EngineFlagReader* r, ServingSpec* spec);

// One step of an import: reads some flags into the spec.
using EngineFlagStep = void (*)(const TransformerModel& model,
                                EngineFlagReader* r, ServingSpec* spec);

// ImportEngineFlags: reads `args` against `flags` (`engine` as
// EngineFlagReader takes it), then runs `steps` in order on a spec of
// `model` on `system`; every error of every step at once.
absl::StatusOr<ServingSpec> ImportEngineFlags(
    const std::vector<EngineFlag>& flags, const std::string& engine,
    const std::vector<EngineFlagStep>& steps,
    const std::vector<std::string>& args, const TransformerModel& model,
    const System& system, std::vector<std::string>* notes);

// ReadWeightDatatype: `weight_datatype` from --dtype (`auto`, the
// checkpoint's bfloat16 for every preset, `bfloat16`, `float16`/`half`) and
// --quantization (`fp8`: float8; another method an error), spelled the same
// by vLLM and SGLang.
void ReadWeightDatatype(EngineFlagReader* r, ServingSpec* spec);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SERVING_ENGINE_FLAGS_H_
