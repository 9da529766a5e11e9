// The search's tests' one comparison of a ranked mapping with the full
// pipeline (search_test, variant_search_test): the figures the search
// ranked it by are those `analyze` gives its spec, bit for bit.
#ifndef BLUEPRINTING_CORE_SEARCH_FULL_PIPELINE_TESTING_H_
#define BLUEPRINTING_CORE_SEARCH_FULL_PIPELINE_TESTING_H_

#include "absl/status/statusor.h"
#include "core/pipeline/pipeline.h"
#include "core/search/search.h"
#include "core/spec/spec_json.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace search_testing {

// The full pipeline on a ranked mapping's checked program gives the
// figures the search ranked it by, bit for bit.
inline void ExpectTheFullPipelinesFigures(const RankedExecution& r,
                                          const TypedProgram& program) {
  absl::StatusOr<PipelineResult> full = RunPipeline(program);
  ASSERT_TRUE(full.ok()) << full.status() << "\n" << SpecToJson(program.spec);
  EXPECT_EQ(r.iteration.sample_rate, full->iteration.figures.sample_rate);
  EXPECT_EQ(r.iteration.total_time, full->iteration.figures.total_time);
  EXPECT_EQ(r.iteration.mfu, full->iteration.figures.mfu);
  EXPECT_EQ(r.memory.max_stage_mem_tier1_req,
            full->memory.figures.max_stage_mem_tier1_req);
  EXPECT_EQ(r.memory.proc_mem_tier2_cap_req,
            full->memory.figures.proc_mem_tier2_cap_req);
  EXPECT_EQ(r.memory.weight_and_optimizer_bytes,
            full->memory.figures.weight_and_optimizer_bytes);
}

}  // namespace search_testing
}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SEARCH_FULL_PIPELINE_TESTING_H_
