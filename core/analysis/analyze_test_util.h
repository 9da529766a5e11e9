// Test-only fixture of the analysis tests (analyze_test.cc and its
// siblings): a test program run through every pass up to the iteration and
// memory analyses.
#ifndef BLUEPRINTING_CORE_ANALYSIS_ANALYZE_TEST_UTIL_H_
#define BLUEPRINTING_CORE_ANALYSIS_ANALYZE_TEST_UTIL_H_

#include <optional>

#include "absl/status/statusor.h"
#include "core/analysis/analyze.h"
#include "core/plan/plan_ir.h"
#include "core/spec/program.h"
#include "core/taskir/task_ir.h"
#include "core/testing/programs.h"

namespace blueprint {
namespace analyze_test {

// A program and what the passes make of it.
struct Analysed {
  TypedProgram program;
  DistributedTaskIR tasks;
  PortablePlanIR plan;
  IterationAnalysis iteration;
  MemoryAnalysis memory;
};

// Lowers, plans and analyses `program`, with `corrections` in force
// (default: the spec's, none for the test mappings' calculon profile); the
// first pass's error otherwise.
absl::StatusOr<Analysed> AnalyseProgram(
    absl::StatusOr<TypedProgram> program,
    std::optional<Corrections> corrections = {});

// AnalyseProgram of the test mapping `m` (core/testing/programs.h).
absl::StatusOr<Analysed> Analyse(
    const test_programs::TestMapping& m,
    std::optional<Corrections> corrections = {});

}  // namespace analyze_test
}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_ANALYSIS_ANALYZE_TEST_UTIL_H_
