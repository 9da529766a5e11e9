#include "core/adapters/fuzz_entry.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_split.h"
#include "core/adapters/calculon.h"
#include "core/adapters/megatron.h"
#include "core/base/status_macros.h"
#include "core/spec/check.h"
#include "core/spec/program.h"
#include "core/spec/spec.h"
#include "core/spec/spec_json.h"

namespace blueprint {
namespace {

// Calculon's a100_80g system (calculon/systems/a100_80g.json), the system
// Megatron-LM inputs are imported on.
constexpr char kA100System[] = R"json({
  "matrix": {"float16": {"tflops": 312, "gflops_efficiency":
      [[128, 0.95], [16, 0.9], [1, 0.6], [0, 0.1]]}},
  "vector": {"float16": {"tflops": 78, "gflops_efficiency":
      [[16, 0.95], [1, 0.5], [0, 0.1]]}},
  "mem1": {"GiB": 80, "GBps": 2048, "MB_efficiency":
      [[100, 0.90], [10, 0.75], [1, 0.6], [0, 0.3]]},
  "mem2": {"GiB": 512, "GBps": 32, "MB_efficiency":
      [[100, 0.95], [10, 0.9], [1, 0.7], [0, 0.3]]},
  "processing_mode": "no_overlap",
  "networks": [
    {"bandwidth": 300, "efficiency": 0.65, "size": 8, "latency": 0.00001,
     "ops": {"p2p": [1.0, null], "reduce_scatter": [1.5, -1],
             "all_gather": [1.5, -1], "all_reduce": [2.0, -1]},
     "must_be_filled": true, "processor_usage": 0.15},
    {"bandwidth": 25, "efficiency": 0.9, "size": 65536, "latency": 0.00002,
     "ops": {"p2p": [1.0, null], "reduce_scatter": [1.0, 0],
             "all_gather": [1.0, 0], "all_reduce": [1.0, 0]},
     "must_be_filled": false, "processor_usage": 0.02}
  ]
})json";

[[noreturn]] void Broken(const char* invariant, const std::string& detail) {
  std::fprintf(stderr, "fuzz invariant broken: %s\n%s\n", invariant,
               detail.c_str());
  std::abort();
}

// print(parse(print(spec))) == print(spec).
void CheckCanonicalRoundTrip(const MappingSpec& spec) {
  const std::string text = SpecToJson(spec);
  absl::StatusOr<MappingSpec> parsed = ParseSpecJson(text);
  if (!parsed.ok()) {
    Broken("canonical spec JSON parses back",
           std::string(parsed.status().message()) + "\n" + text);
  }
  const std::string again = SpecToJson(*parsed);
  if (again != text) {
    Broken("SpecToJson is a fixed point", text + "\n---\n" + again);
  }
}

// Calculon's files carry no names, nothing of the model beyond Calculon's
// block (key/value heads, MLP and norm types, biases, vocabulary), no
// precision accounting and no profile (Calculon's model is the calculon
// profile), and its adapter derives the stage layout from the
// block count: the spec a Calculon export imports back to.
MappingSpec AsCalculonSeesIt(MappingSpec spec, StageLayout layout) {
  const auto as_calculon = [&](auto& s) {
    const TransformerModel& m = s.model;
    s.model = CalculonModel("", m.hidden, m.feedforward, m.attn_heads,
                            m.attn_size, m.num_blocks, m.seq_size);
    s.system.name.clear();
    s.parallelism.pipeline.stage_layout = layout;
    s.options.precision = PrecisionAccounting::kCalculon;
    s.options.profile = ModelProfile::kCalculon;
  };
  std::visit(
      Overloaded{[&](TransformerTrainingMappingSpec& s) { as_calculon(s); },
                 [&](TransformerInferenceMappingSpec& s) { as_calculon(s); }},
      spec);
  return spec;
}

// A checked program exported to Calculon's three files imports back to itself.
void CheckCalculonRoundTrip(const TypedProgram& program) {
  const std::string app = ToCalculonApplication(program.model());
  const std::string exe = ToCalculonExecution(program);
  const std::string sys = ToCalculonSystem(program.system());
  absl::StatusOr<MappingSpec> back = FromCalculon(app, exe, sys);
  if (!back.ok()) {
    Broken("a checked spec's Calculon export imports back",
           std::string(back.status().message()) + "\n" + exe);
  }
  const StageLayout layout = program.derived.bubble_reduction_blocks > 0
                                 ? StageLayout::kUneven
                                 : StageLayout::kEven;
  const std::string expected =
      SpecToJson(AsCalculonSeesIt(program.spec, layout));
  const std::string got = SpecToJson(*back);
  if (got != expected) {
    Broken("a checked spec's Calculon export imports back to itself",
           expected + "\n---\n" + got);
  }
}

// Whether Calculon's execution file can say what the spec's parallelism
// does: no context or expert parallelism (their fields at their defaults),
// no sharding beyond Calculon's optimizer_sharding, ZeRO-1 over every
// data-parallel rank, and no explicit stage layout (stage_blocks). (The model's architecture beyond Calculon's block is
// dropped on both sides, AsCalculonSeesIt.)
bool CalculonExpresses(const MappingSpec& spec) {
  return std::visit(
      Overloaded{[](const TransformerTrainingMappingSpec& s) {
                   const TransformerTrainingParallelism& p = s.parallelism;
                   const ContextParallel context;
                   const ExpertParallel expert;
                   const DataSharding& sharding = p.data.sharding;
                   return p.pipeline.stage_blocks.empty() &&
                          p.context.degree == context.degree &&
                          p.context.exchange == context.exchange &&
                          p.context.network_tier == context.network_tier &&
                          p.expert.degree == expert.degree &&
                          p.expert.tensor_degree == expert.tensor_degree &&
                          p.expert.network_tier == expert.network_tier &&
                          (std::holds_alternative<NoSharding>(sharding) ||
                           (std::holds_alternative<ShardOptimizer>(sharding) &&
                            std::get<ShardOptimizer>(sharding).group == 0));
                 },
                 [](const TransformerInferenceMappingSpec& s) {
                   return s.parallelism.pipeline.stage_blocks.empty();
                 }},
      spec);
}

// Everything every accepted spec must satisfy, wherever it came from.
void CheckSpecInvariants(const MappingSpec& spec) {
  CheckCanonicalRoundTrip(spec);
  absl::StatusOr<TypedProgram> program = CheckSpec(spec);
  if (!program.ok()) return;
  if (ProgramToJson(*program).empty()) Broken("program JSON is printed", "");
  if (CalculonExpresses(spec)) CheckCalculonRoundTrip(*program);
}

void FuzzSpecJson(const std::string& text) {
  absl::StatusOr<MappingSpec> spec = ParseSpecJson(text);
  if (spec.ok()) CheckSpecInvariants(*spec);
}

void FuzzCalculon(const std::string& payload) {
  std::vector<std::string> parts = absl::StrSplit(payload, '\0');
  parts.resize(3);
  absl::StatusOr<MappingSpec> spec = FromCalculon(parts[0], parts[1], parts[2]);
  if (spec.ok()) CheckSpecInvariants(*spec);
}

void FuzzMegatron(const std::string& payload) {
  static const System* const kSystem = [] {
    absl::StatusOr<System> system = FromCalculonSystem(kA100System);
    if (!system.ok()) {
      Broken("the built-in system parses",
             std::string(system.status().message()));
    }
    return new System(*std::move(system));
  }();
  const std::vector<std::string> args =
      absl::StrSplit(payload, '\n', absl::SkipEmpty());
  absl::StatusOr<MappingSpec> spec = FromMegatronArgs(args, *kSystem);
  if (spec.ok()) CheckSpecInvariants(*spec);
}

void FuzzSystem(const std::string& text) {
  absl::StatusOr<System> system = FromCalculonSystem(text);
  if (!system.ok()) return;
  const std::string printed = ToCalculonSystem(*system);
  absl::StatusOr<System> again = FromCalculonSystem(printed);
  if (!again.ok()) {
    Broken("a printed system parses back",
           std::string(again.status().message()) + "\n" + printed);
  }
  if (ToCalculonSystem(*again) != printed) {
    Broken("ToCalculonSystem is a fixed point", printed);
  }
}

}  // namespace

void FuzzAdapters(const uint8_t* data, size_t size) {
  if (size == 0) return;
  const std::string payload(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 4) {
    case 0:
      FuzzSpecJson(payload);
      break;
    case 1:
      FuzzCalculon(payload);
      break;
    case 2:
      FuzzMegatron(payload);
      break;
    case 3:
      FuzzSystem(payload);
      break;
  }
}

}  // namespace blueprint
