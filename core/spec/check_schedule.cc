// The checker's rules on the pipeline schedule (rule 10 of
// core/spec/README.md) and its stages (rule 11).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/checked_math.h"
#include "core/base/field_errors.h"
#include "core/spec/check_internal.h"
#include "core/spec/derive.h"
#include "core/schedule/schedule_ir.h"
#include "core/spec/spec_schedule.h"

namespace blueprint {
namespace check_internal {

// Returns the schedule's v (its virtual_stages field, or its schedule table
// row's fixed v), after checking that the schedule suits the spec kind and
// the pipeline degree.
int64_t CheckSchedule(const SpecView& view, Collector* out) {
  const PipelineSchedule& schedule = view.pipeline->schedule;
  const int64_t p = view.pipeline->degree;
  const std::string name = PipelineScheduleName(schedule);
  const std::string field = "parallelism.pipeline.schedule";
  const std::string degree = Named("parallelism.pipeline.degree", p);
  const auto wrong_kind = [&]() {
    out->Add(
        field, ErrorCode::kInconsistent,
        view.training
            ? absl::StrCat(field, " ", name,
                           " is an inference schedule; "
                           "training uses single_stage (pipeline degree 1), "
                           "1f1b or interleaved_1f1b")
            : absl::StrCat(field, " ", name,
                           " is a training schedule; "
                           "inference uses single_stage (pipeline degree 1) "
                           "or forward_only"));
  };
  const auto needs_pipeline = [&](const std::string& what,
                                  const char* instead) {
    if (p != 1) return;  // p < 1 is reported by CheckDegrees
    out->Add(field, ErrorCode::kInconsistent,
             absl::StrCat(field, " ", what,
                          " requires parallelism.pipeline.degree > 1 "
                          "(got 1); use ",
                          instead));
  };
  // A training schedule with a pipeline and `chunks` per stage.
  const auto training_pipeline = [&](int64_t chunks) -> int64_t {
    if (!view.training) {
      wrong_kind();
    } else {
      needs_pipeline(name, "single_stage");
    }
    return chunks;
  };
  return std::visit(
      Overloaded{
          [&](const SingleStage&) -> int64_t {
            if (p > 1) {
              out->Add(field, ErrorCode::kInconsistent,
                       absl::StrCat(field,
                                    " single_stage requires "
                                    "parallelism.pipeline.degree 1, but ",
                                    degree, " is larger; use ",
                                    view.training ? "1f1b or interleaved_1f1b"
                                                  : "forward_only"));
            }
            return 1;
          },
          [&](const InterleavedOneForwardOneBackward& s) -> int64_t {
            const std::string v_path = field + ".virtual_stages";
            if (!view.training) wrong_kind();
            if (s.virtual_stages < 2) {
              out->Add(v_path, ErrorCode::kOutOfRange,
                       absl::StrCat(Named(v_path, s.virtual_stages),
                                    " must be at least 2 (one virtual stage "
                                    "is the 1f1b schedule)"));
              return 1;
            }
            if (!out->RequireAtMostMaxCount(v_path, s.virtual_stages)) return 1;
            if (view.training) {
              needs_pipeline(absl::StrCat("interleaved_1f1b with ",
                                          Named(v_path, s.virtual_stages)),
                             "single_stage");
            }
            return s.virtual_stages;
          },
          [&](const ForwardOnly& s) -> int64_t {
            const std::string v_path = field + ".virtual_stages";
            if (view.training) {
              wrong_kind();
            } else {
              needs_pipeline("forward_only", "single_stage");
            }
            if (s.virtual_stages < 1) {
              out->Add(v_path, ErrorCode::kOutOfRange,
                       absl::StrCat(Named(v_path, s.virtual_stages),
                                    " must be at least 1"));
              return 1;
            }
            if (!out->RequireAtMostMaxCount(v_path, s.virtual_stages)) return 1;
            return s.virtual_stages;
          },
          // 1f1b and the simulated schedules: their rows say it all.
          [&](const auto& alternative) -> int64_t {
            using Schedule = std::decay_t<decltype(alternative)>;
            constexpr const ScheduleRow& kRow = ScheduleRowOf(Schedule::kKind);
            static_assert(kRow.virtual_stages.fixed != 0 && kRow.trains &&
                              !kRow.infers && kRow.needs_pipeline,
                          "a schedule with a field, one that inference "
                          "runs or one without a pipeline needs its own "
                          "case here");
            return training_pipeline(kRow.virtual_stages.fixed);
          }},
      schedule);
}

// A simulated schedule's shape rules (core/schedule ScheduleShapeErrors:
// dualpipe_v needs m >= 2p, the command count is bounded, ...) on the
// spec's fields, and the stage layouts its route can take. Checked
// here so that a spec the checker accepts always analyses.
void CheckSimulatedSchedule(const SpecView& view, bool degrees_ok, int64_t v,
                            Collector* out) {
  const std::optional<ScheduleKind> kind =
      SimulatedScheduleKind(view.pipeline->schedule);
  if (!kind.has_value() || !degrees_ok) return;
  const std::string field = "parallelism.pipeline.schedule";
  const std::string name = PipelineScheduleName(view.pipeline->schedule);
  if (!view.pipeline->stage_blocks.empty() && !TakesStageLayout(*kind)) {
    out->Add("parallelism.pipeline.stage_blocks", ErrorCode::kUnsupported,
             absl::StrCat("parallelism.pipeline.stage_blocks cannot be "
                          "combined with ", field, " ", name,
                          ": its route does not put model stage k on rank "
                          "k % degree (Megatron-LM's layout order); use "
                          "1f1b, interleaved_1f1b, gpipe, zb_h1 or zb_h2"));
  }
  if (view.pipeline->stage_layout == StageLayout::kUneven) {
    out->Add("parallelism.pipeline.stage_layout", ErrorCode::kUnsupported,
             absl::StrCat("parallelism.pipeline.stage_layout uneven cannot be "
                          "combined with ", field, " ", name,
                          ": the simulated schedules price equal stages; use "
                          "even (or 1f1b, interleaved_1f1b)"));
  }
  if (!ScheduleRowOf(*kind).allows_data_overlap && view.data_overlap) {
    out->Add("parallelism.data.overlap", ErrorCode::kUnsupported,
             absl::StrCat("parallelism.data.overlap cannot be combined with ",
                          field, " ", name,
                          ": the overlap windows are one stage's backward "
                          "passes per rank, while a dualpipe rank holds two "
                          "stages whose gradients are summed with the twin "
                          "rank's first; set parallelism.data.overlap to "
                          "false"));
  }
  const Batch& batch = *view.batch;
  if (batch.global_batch_size < 1 || batch.microbatch_size < 1 ||
      batch.global_batch_size % view.data_degree != 0 ||
      (batch.global_batch_size / view.data_degree) % batch.microbatch_size !=
          0) {
    return;  // CheckBatch reports it
  }
  const int64_t m =
      batch.global_batch_size / view.data_degree / batch.microbatch_size;
  for (const FieldError& error :
       ScheduleShapeErrors(*kind, view.pipeline->degree, v, m)) {
    out->Add(SpecFieldOfShapeField(view.pipeline->schedule, error.field),
             error.code,
             absl::StrCat(field, " ", name, ": ", error.message,
                          error.field == "m"
                              ? " (m, the microbatches: "
                                "batch.global_batch_size / (data degree * "
                                "batch.microbatch_size))"
                              : ""));
  }
}

namespace {

std::string OffloadNames(const Offload& offload) {
  std::vector<const char*> names;
  if (offload.weights) names.push_back("weights");
  if (offload.activations) names.push_back("activations");
  if (offload.optimizer) names.push_back("optimizer");
  return absl::StrJoin(names, ", ");
}

void CheckOffloadFits(const SpecView& view, int64_t per_stage,
                      Collector* out) {
  const Offload& offload = view.options->offload;
  if (!OffloadFits(offload, per_stage)) {
    out->Add("options.offload", ErrorCode::kUnsupported,
             absl::StrCat("options.offload (", OffloadNames(offload),
                          ") requires blocks_per_stage >= ",
                          kMinOffloadBlocksPerStage, " (got ", per_stage, ")"));
  }
}

// An explicit layout (parallelism.pipeline.stage_blocks): Megatron-LM's
// rules for a custom layout (pipeline_parallel_layer_layout.py
// PipelineParallelLayerLayout.__init__ and validate_layer_layout: p * v
// stages; the decoder layers counted once, summing to num_layers; a stage
// may hold none, as "L" alone does). True when it holds.
bool CheckStageBlocks(const SpecView& view, int64_t v, Collector* out) {
  const std::string path = "parallelism.pipeline.stage_blocks";
  const std::vector<int64_t>& blocks = view.pipeline->stage_blocks;
  const int64_t p = view.pipeline->degree;
  const int64_t nb = view.model->num_blocks;
  bool ok = true;
  if (view.pipeline->stage_layout != StageLayout::kEven) {
    out->Add("parallelism.pipeline.stage_layout", ErrorCode::kInconsistent,
             absl::StrCat("parallelism.pipeline.stage_layout ",
                          StageLayoutName(view.pipeline->stage_layout),
                          " cannot be combined with ", path,
                          ", which lays the blocks out itself; use even"));
    ok = false;
  }
  const std::optional<int64_t> stages = CheckedMul(p, v);
  if (!stages || static_cast<int64_t>(blocks.size()) != *stages) {
    out->Add(path, ErrorCode::kInconsistent,
             absl::StrCat(path, " has ", blocks.size(),
                          " entries but needs one per pipeline stage and "
                          "virtual stage: ",
                          Named("parallelism.pipeline.degree", p), " * ", v,
                          " virtual stages of ",
                          PipelineScheduleName(view.pipeline->schedule)));
    ok = false;
  }
  int64_t sum = 0;
  bool sum_ok = true;
  for (size_t k = 0; k < blocks.size(); ++k) {
    const std::string entry = absl::StrCat(path, "[", k, "]");
    if (blocks[k] < 0) {
      out->Add(entry, ErrorCode::kOutOfRange,
               absl::StrCat(Named(entry, blocks[k]), " must be at least 0"));
      ok = sum_ok = false;
    } else if (!out->RequireAtMostMaxCount(entry, blocks[k])) {
      ok = sum_ok = false;
    } else {
      sum += blocks[k];  // at most 4096 * 2^31: no overflow
    }
  }
  if (sum_ok && sum != nb) {
    out->Add(path, ErrorCode::kInconsistent,
             absl::StrCat(path, " sums to ", sum, " blocks but ",
                          Named("model.num_blocks", nb),
                          ": every block sits on exactly one stage"));
    ok = false;
  }
  return ok;
}

}  // namespace

// Blocks per stage and per virtual chunk (Calculon's compile()).
void CheckStages(const SpecView& view, const MappingValues& values,
                 Collector* out) {
  const int64_t v = values.virtual_stages;
  const int64_t p = view.pipeline->degree;
  const int64_t nb = view.model->num_blocks;
  if (p < 1 || nb < 1) return;
  const std::string degree = Named("parallelism.pipeline.degree", p);
  const std::string blocks = Named("model.num_blocks", nb);
  if (!view.pipeline->stage_blocks.empty()) {
    if (CheckStageBlocks(view, v, out)) {
      CheckOffloadFits(view, MostRankBlocks(view.pipeline->stage_blocks, p),
                       out);
    }
    return;
  }
  const int64_t remainder = nb % p;
  switch (view.pipeline->stage_layout) {
    case StageLayout::kEven:
      if (remainder != 0) {
        out->Add("parallelism.pipeline.stage_layout", ErrorCode::kNotDivisible,
                 absl::StrCat(blocks, " must be divisible by ", degree,
                              " with parallelism.pipeline.stage_layout even "
                              "(uneven rounds blocks_per_stage up and shortens "
                              "the bubble, as Calculon does)"));
        return;
      }
      break;
    case StageLayout::kUneven:
      // Calculon accepts p > num_blocks too: the last p - num_blocks stages
      // hold no block and shorten the bubble accordingly.
      break;
  }
  const int64_t per_stage = BlocksPerStage(nb, p);

  out->AddMappingRules(values, MappingRuleGroup::kInterleaving);
  CheckOffloadFits(view, per_stage, out);
}

}  // namespace check_internal
}  // namespace blueprint
