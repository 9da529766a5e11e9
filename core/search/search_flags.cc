#include "core/search/search_flags.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "core/base/field_errors.h"
#include "core/base/parse_int.h"
#include "core/base/quote.h"
#include "core/spec/enums.h"
#include "core/spec/spec.h"

namespace blueprint {
namespace {

using Kind = SearchFlagKind;
using Value = SearchFlagValue;
using Options = SearchOptions;

// A flag's own spelling of "every value of the dimension".
constexpr char kAll[] = "all";

// "calculon" (Calculon's values only) or "all" (every value).
const std::vector<std::string>& CalculonOrAll() {
  static const auto* choices =
      new std::vector<std::string>{"calculon", kAll};
  return *choices;
}

const std::vector<std::string>& StageLayoutChoices() {
  static const auto* choices =
      new std::vector<std::string>{"calculon", "megatron", kAll};
  return *choices;
}

// A kChoiceList's choices: "calculon" and "all", then an enum's spellings
// (core/spec/enums.h).
template <typename E>
std::vector<std::string> CalculonAllOrList() {
  std::vector<std::string> choices = CalculonOrAll();
  for (const std::string& choice : EnumChoices<E>()) choices.push_back(choice);
  return choices;
}

// A kChoiceList's words as the enum's values (each word is one: the
// parser took only its choices).
template <typename E>
std::vector<E> EnumsOf(const std::vector<std::string>& words) {
  std::vector<E> out;
  for (const std::string& word : words) out.push_back(*ParseEnum<E>(word));
  return out;
}

// An enum's spellings (core/spec/enums.h), then "all".
template <typename E>
std::vector<std::string> ChoicesOrAll() {
  std::vector<std::string> choices = EnumChoices<E>();
  choices.push_back(kAll);
  return choices;
}

}  // namespace

const std::vector<SearchFlag>& SearchFlags() {
  constexpr int64_t kMaxCount = int64_t{1} << 31;
  // clang-format off
  // {name, kind, placeholder, choices, max, required, needs, needs_why,
  //  target, absent, doc, set}
  static const auto* flags = new std::vector<SearchFlag>{
      {"--app", Kind::kCallerFile, "APP.json", {}, 0, true, "", "", "",
       "required",
       "the model: Calculon's application JSON or a spec/2 or spec/3 model "
       "object (read by the CLI)"},
      {"--system", Kind::kCallerFile, "SYS.json", {}, 0, true, "", "", "",
       "required", "Calculon's system JSON or a preset's name (read by the CLI)"},
      {"--procs", Kind::kPositiveInteger, "N", {}, kMaxCount, true, "", "",
       "procs", "required", "processors: `num_procs` of every mapping",
       [](const Value& v, Options* o) { o->procs = v.integer; }},
      {"--max-batch", Kind::kPositiveInteger, "B", {}, kMaxCount, true, "", "",
       "max_batch", "required", "the largest global batch",
       [](const Value& v, Options* o) { o->max_batch = v.integer; }},
      // Calculon's datatypes: float4 is a GEMM datatype only (spec.h).
      {"--datatype", Kind::kChoice, "D", EnumCalculonChoices<DataType>(), 0,
       true, "",
       "", "datatype", "required", "the datatype of every mapping",
       [](const Value& v, Options* o) {
         o->datatype = *ParseEnum<DataType>(v.choice);
       }},
      {"--top", Kind::kPositiveInteger, "K", {}, int64_t{1} << 20, false, "",
       "", "top", "10", "how many mappings to keep, best first",
       [](const Value& v, Options* o) { o->top = static_cast<int>(v.integer); }},
      {"--mbs-break", Kind::kSwitch, "", {}, 0, false, "", "", "mbs_break",
       "off",
       "stop growing the microbatch once one size gives no valid mapping "
       "(Calculon's option)",
       [](const Value&, Options* o) { o->mbs_break = true; }},
      {"--no-tp-overlap", Kind::kSwitch, "", {}, 0, false, "", "",
       "tp_overlap", "TP overlap ring and pipe are tried",
       "try no TP overlap",
       [](const Value&, Options* o) { o->tp_overlap = false; }},
      {"--no-dp-overlap", Kind::kSwitch, "", {}, 0, false, "", "",
       "dp_overlap", "DP overlap is tried", "try no DP overlap",
       [](const Value&, Options* o) { o->dp_overlap = false; }},
      {"--fused-activation", Kind::kChoice, "", {"true", "false", kAll}, 0,
       false, "", "", "fused_activation", "`true`",
       "the fused activations tried: `true`, `false` or `all` (both)",
       [](const Value& v, Options* o) {
         o->fused_activation = v.choice == kAll ? std::vector<bool>{true, false}
                               : std::vector<bool>{v.choice == "true"};
       }},
      {"--precision", Kind::kChoice, "", EnumChoices<PrecisionAccounting>(), 0,
       false, "", "", "precision", "`calculon`",
       "how weights, gradients and optimizer state are counted in every "
       "mapping (`options.precision`)",
       [](const Value& v, Options* o) {
         o->precision = *ParseEnum<PrecisionAccounting>(v.choice);
       }},
      {"--profile", Kind::kChoice, "", EnumChoices<ModelProfile>(), 0, false,
       "", "", "profile", "`calculon`",
       "the performance model's profile of every mapping "
       "(`options.profile`: `refined` adds its corrections)",
       [](const Value& v, Options* o) {
         o->profile = *ParseEnum<ModelProfile>(v.choice);
       }},
      {"--max-context", Kind::kPositiveInteger, "N", {}, kMaxCount, false, "",
       "", "max_context", "1: no context parallelism (Calculon's space)",
       "the largest context-parallel degree tried",
       [](const Value& v, Options* o) { o->max_context = v.integer; }},
      {"--context-exchange", Kind::kChoice, "", ChoicesOrAll<ContextExchange>(),
       0, false, "", "", "context_exchange", "`ring`",
       "the K/V exchanges tried with cp > 1 (`all`: both)",
       [](const Value& v, Options* o) {
         o->context_exchange =
             v.choice == kAll
                 ? std::vector<ContextExchange>{ContextExchange::kRing,
                                                ContextExchange::kAllGather}
                 : std::vector<ContextExchange>{
                       *ParseEnum<ContextExchange>(v.choice)};
       }},
      {"--recipes", Kind::kChoiceList, "", CalculonAllOrList<QuantizationRecipe>(),
       0, false, "", "", "recipes, every_recipe",
       "`calculon`: no recipe, GEMMs in the datatype",
       "the low-precision recipes tried (`options.recipe`, with its GEMM "
       "datatype and, as Megatron-Bridge runs fp8_delayed, fp8_tensorwise "
       "and mxfp8, FP8 weights): `all`: every recipe the system runs "
       "(mxfp8 and nvfp4 where it has a float4 rate), or a comma-separated "
       "list",
       [](const Value& v, Options* o) {
         o->every_recipe = v.choice == kAll;
         o->recipes = v.choice.empty()
                          ? EnumsOf<QuantizationRecipe>(v.list)
                          : std::vector<QuantizationRecipe>{
                                QuantizationRecipe::kNone};
       }},
      {"--expert-dispatchers", Kind::kChoiceList, "",
       CalculonAllOrList<ExpertDispatcher>(), 0, false, "", "",
       "expert_dispatchers", "`calculon`: all_to_all",
       "the expert dispatchers tried with a model with experts "
       "(`parallelism.expert.dispatcher`; all but all_to_all with ep > 1): "
       "`all`: every one (all_gather without the expert overlap), or a "
       "comma-separated list",
       [](const Value& v, Options* o) {
         o->expert_dispatchers =
             v.choice == kAll ? EnumsOf<ExpertDispatcher>(
                                    EnumChoices<ExpertDispatcher>())
             : v.choice.empty()
                 ? EnumsOf<ExpertDispatcher>(v.list)
                 : std::vector<ExpertDispatcher>{ExpertDispatcher::kAllToAll};
       }},
      {"--expert-overlap", Kind::kChoice, "", CalculonOrAll(), 0, false, "", "",
       "expert_overlap", "`calculon`: no expert overlap",
       "`all`: also `parallelism.expert.overlap` with `delay_wgrad` "
       "(Megatron-LM's --overlap-moe-expert-parallel-comm "
       "--delay-wgrad-compute) with a model with experts, where the checker "
       "allows it: ep > 1, no full recomputation, interleaved_1f1b for p > 1",
       [](const Value& v, Options* o) {
         o->expert_overlap = v.choice == kAll ? std::vector<bool>{false, true}
                                              : std::vector<bool>{false};
       }},
      {"--sharding", Kind::kChoice, "", CalculonOrAll(), 0, false, "", "",
       "every_sharding", "`calculon`: optimizer state sharded or not",
       "`all`: every ZeRO stage (none, optimizer, gradients, parameters)",
       [](const Value& v, Options* o) { o->every_sharding = v.choice == kAll; }},
      {"--schedules", Kind::kChoice, "", CalculonOrAll(), 0, false, "", "",
       "every_schedule", "`calculon`: 1f1b, interleaved_1f1b",
       "`all`: also gpipe, zb_h1, zb_h2, dualpipe (v = 1), dualpipe_v and "
       "zb_v (v = 2), simulated, for p > 1",
       [](const Value& v, Options* o) { o->every_schedule = v.choice == kAll; }},
      {"--stage-layouts", Kind::kChoice, "", StageLayoutChoices(), 0, false, "",
       "", "uneven_stages, first_last_stages",
       "`calculon`: p divides the blocks",
       "`megatron`: also every p up to the block count that does not, with "
       "Megatron-LM's first and last stages of their own block counts and "
       "the middle ones even; `all`: those and Calculon's uneven stages",
       [](const Value& v, Options* o) {
         o->uneven_stages = v.choice == kAll;
         o->first_last_stages = v.choice == kAll || v.choice == "megatron";
       }},
      {"--threads", Kind::kPositiveInteger, "N", {}, SearchOptions::kMaxThreads,
       false, "", "", "threads", "one per core (one in WebAssembly)",
       "the worker threads (the result does not depend on them)",
       [](const Value& v, Options* o) { o->threads = v.integer; }},
      {"--exhaustive", Kind::kSwitch, "", {}, 0, false, "", "", "exhaustive",
       "off: pruned by the bounds",
       "evaluate every mapping in full (the same result; for tests)",
       [](const Value&, Options* o) { o->exhaustive = true; }},
      {"--json", Kind::kSwitch, "", {}, 0, false, "", "", "json",
       "off: a table", "print the result as JSON",
       [](const Value&, Options* o) { o->json = true; }},
      {"--specs", Kind::kSwitch, "", {}, 0, false, "--json",
       "the specs are JSON objects of its ranked mappings", "specs", "off",
       "add each ranked mapping's canonical spec to the JSON",
       [](const Value&, Options* o) { o->specs = true; }},
      {"--partition", Kind::kPartition, "I/N", {},
       SearchOptions::kMaxPartitions, false, "--json",
       "the parts merge from their JSON outputs (mergeSearch)",
       "partition, partitions", "0/1: the whole space",
       "search part I of N (the page's workers; `mergeSearch` joins them)",
       [](const Value& v, Options* o) {
         o->partition = v.integer;
         o->partitions = v.count;
       }},
  };
  // clang-format on
  return *flags;
}

absl::StatusOr<SearchOptions> ParseSearchFlags(
    const std::vector<std::string>& args) {
  return ParseFlagTable(SearchFlags(), args);
}

std::string SearchFlagsSynopsis() { return FlagTableSynopsis(SearchFlags()); }

std::string SearchFlagsMarkdown() {
  return FlagTableMarkdown(SearchFlags(), "SearchOptions");
}

}  // namespace blueprint
