#include "core/serving/serving_search_flags.h"

#include <cstdint>

#include "core/spec/check.h"
#include "core/spec/enums.h"
#include "core/spec/spec.h"

namespace blueprint {

const std::vector<ServingSearchFlag>& ServingSearchFlags() {
  using Kind = SearchFlagKind;
  using Value = SearchFlagValue;
  using Options = ServingSearchOptions;
  // The most mappings kept: the training search's --top bound.
  constexpr int64_t kMaxTop = int64_t{1} << 20;
  // clang-format off
  // {name, kind, placeholder, choices, max, required, needs, needs_why,
  //  target, absent, doc, set}
  static const auto* flags = new std::vector<ServingSearchFlag>{
      {"--hf-config", Kind::kCallerFile, "CONFIG", {}, 0, true, "", "", "",
       "required",
       "the model: a Hugging Face config.json or a model preset's name "
       "(read by the CLI)"},
      {"--system", Kind::kCallerFile, "SYS", {}, 0, true, "", "", "",
       "required", "Calculon's system JSON or a preset's name (read by the CLI)"},
      {"--procs", Kind::kPositiveInteger, "N", {}, kMaxCount, true, "", "",
       "procs", "required", "the GPUs every mapping uses, all of them",
       [](const Value& v, Options* o) { o->procs = v.integer; }},
      {"--input-len", Kind::kPositiveInteger, "I", {}, kMaxCount, true, "", "",
       "input_tokens", "required", "prompt tokens per request",
       [](const Value& v, Options* o) { o->input_tokens = v.integer; }},
      {"--output-len", Kind::kPositiveInteger, "O", {}, kMaxCount, true, "",
       "", "output_tokens", "required", "generated tokens per request",
       [](const Value& v, Options* o) { o->output_tokens = v.integer; }},
      {"--max-ttft", Kind::kPositiveNumber, "SECONDS", {}, 0, false, "", "",
       "max_ttft", "no target", "keep mappings whose ttft is at most this",
       [](const Value& v, Options* o) { o->max_ttft = v.number; }},
      {"--max-tpot", Kind::kPositiveNumber, "SECONDS", {}, 0, false, "", "",
       "max_tpot", "no target", "keep mappings whose tpot is at most this",
       [](const Value& v, Options* o) { o->max_tpot = v.number; }},
      {"--top", Kind::kPositiveInteger, "K", {}, kMaxTop, false, "", "", "top",
       "10", "how many mappings to print, best first",
       [](const Value& v, Options* o) { o->top = v.integer; }},
      {"--kv-cache-dtype", Kind::kChoice, "", {"bfloat16", "float8"}, 0, false,
       "", "", "kv_datatype", "`bfloat16`",
       "the KV cache's datatype (`kv_cache.datatype`)",
       [](const Value& v, Options* o) {
         o->kv_datatype = *ParseEnum<DataType>(v.choice);
       }},
      {"--weight-datatype", Kind::kChoice, "",
       {"bfloat16", "float16", "float8"}, 0, false, "", "", "weight_datatype",
       "`bfloat16`", "the weights' and GEMMs' datatype (`weight_datatype`)",
       [](const Value& v, Options* o) {
         o->weight_datatype = *ParseEnum<DataType>(v.choice);
       }},
      {"--json", Kind::kSwitch, "", {}, 0, false, "", "", "json",
       "off: a table",
       "print the result as JSON, each mapping with its canonical serving "
       "spec",
       [](const Value&, Options* o) { o->json = true; }},
  };
  // clang-format on
  return *flags;
}

absl::StatusOr<ServingSearchOptions> ParseServingSearchFlags(
    const std::vector<std::string>& args) {
  return ParseFlagTable(ServingSearchFlags(), args);
}

std::string ServingSearchFlagsSynopsis() {
  return FlagTableSynopsis(ServingSearchFlags());
}

std::string ServingSearchFlagsMarkdown() {
  return FlagTableMarkdown(ServingSearchFlags(), "ServingSearchOptions");
}

}  // namespace blueprint
