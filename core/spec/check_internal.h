// File: check_internal.h
//
// What the checker's files share (internal to core/spec): how a message
// names a field, the documented range of a system number, the Collector
// every rule reports to, and the checker's rule functions, one file per
// cohesive part: model and system numbers (check_model.cc), options
// (check_options.cc), degrees, networks, experts, batch and work
// (check_mapping.cc), the schedule and stages (check_schedule.cc); the
// mapping rules' table is mapping_rules.h. check.cc runs them in order.
#ifndef BLUEPRINTING_CORE_SPEC_CHECK_INTERNAL_H_
#define BLUEPRINTING_CORE_SPEC_CHECK_INTERNAL_H_

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/field_errors.h"
#include "core/base/format.h"
#include "core/spec/check.h"
#include "core/spec/mapping_rules.h"
#include "core/spec/spec.h"
#include "core/spec/spec_view.h"

namespace blueprint {
namespace check_internal {

using spec_internal::SpecView;

inline std::string Num(double value) { return FormatDouble(value); }

// "path (value)", the way every message names a field.
inline std::string Named(const std::string& path, int64_t value) {
  return absl::StrCat(path, " (", value, ")");
}
inline std::string Named(const std::string& path, double value) {
  return absl::StrCat(path, " (", Num(value), ")");
}

// The ranges of the system's numbers. Calculon only asks for positive or
// non-negative values; these bounds also keep every time, rate and
// requirement the analysis derives finite: with at most 2^63 bytes or FLOPs
// per operation, the slowest throughput (1e-3 TFLOP/s or GB/s at efficiency
// 1e-3) still gives times below 1e40 s, and the fastest no overflow.
struct NumberRange {
  double min;
  double max;
  const char* unit;
  const char* why;
};

class Collector {
 public:
  void Add(std::string field, ErrorCode code, std::string message) {
    violations_.push_back({std::move(field), std::move(message), code});
  }

  // Each Require* adds a violation and returns false when the rule fails.
  // A count (a size, degree or batch) is also at most kMaxCount.
  bool RequirePositive(const std::string& path, int64_t value) {
    if (value > 0) return RequireAtMostMaxCount(path, value);
    Add(path, ErrorCode::kOutOfRange,
        absl::StrCat(Named(path, value), " must be positive"));
    return false;
  }
  bool RequireAtLeastOne(const std::string& path, int64_t value) {
    if (value >= 1) return RequireAtMostMaxCount(path, value);
    Add(path, ErrorCode::kOutOfRange,
        absl::StrCat(Named(path, value), " must be at least 1"));
    return false;
  }
  bool RequireAtMostMaxCount(const std::string& path, int64_t value) {
    if (value <= kMaxCount) return true;
    Add(path, ErrorCode::kOutOfRange,
        absl::StrCat(Named(path, value), " must be at most ", kMaxCount,
                     " (", kMaxCountWhy, ")"));
    return false;
  }
  // The documented range of a system number (the NumberRange constants).
  bool RequireWithin(const std::string& path, double value,
                     const NumberRange& range) {
    if (std::isfinite(value) && value >= range.min && value <= range.max) {
      return true;
    }
    Add(path, ErrorCode::kOutOfRange,
        absl::StrCat(Named(path, value), " must be between ", Num(range.min),
                     " and ", Num(range.max), *range.unit != '\0' ? " " : "",
                     range.unit, " (", range.why, ")"));
    return false;
  }

  // The violations of a group of the mapping rules' table, in its order.
  void AddMappingRules(const MappingValues& values, MappingRuleGroup group) {
    AddMappingViolations(values, group, &violations_);
  }

  std::vector<Violation> Take() { return std::move(violations_); }
  bool empty() const { return violations_.empty(); }

 private:
  std::vector<Violation> violations_;
};

// check_model.cc: the model's sizes and features (rule 1) and the system's
// numbers (rule 2).
void CheckModel(const TransformerModel& model, Collector* out);
void CheckSystem(const System& system, Collector* out);

// check_options.cc: datatypes and recipes (rule 3), and the options
// (rule 12) with the mapping rules' latent-attention group.
void CheckDatatype(const SpecView& view, Collector* out);
void CheckGradReduceDatatype(const SpecView& view, Collector* out);
void CheckRecipe(const SpecView& view, Collector* out);
void CheckUnquantizedBlocks(const SpecView& view, Collector* out);
void CheckOptions(const SpecView& view, const MappingValues& values,
                  Collector* out);

// check_mapping.cc: the values the mapping rules read, of a spec (v 1 until
// the schedule is checked; `virtual_stages_field` must outlive them).
MappingValues MappingValuesOf(const SpecView& view,
                              const char* virtual_stages_field);

// One parallel dimension as the network rules see it.
struct Dimension {
  std::string degree_path;
  std::string tier_path;
  int64_t degree;
  int64_t tier;
};
// The dimensions whose product is the world size (t, p, d and, for
// training, cp); expert parallelism is folded onto their ranks.
std::vector<Dimension> DimensionsOf(const SpecView& view);
// Degrees and networks (rules 4 and 5). CheckDegrees returns true when every
// degree is >= 1 and the world size fits in int64; CheckNetworkTiers when
// every dimension names an existing network tier.
bool CheckDegrees(const std::vector<Dimension>& dims, Collector* out);
bool CheckNetworkTiers(const std::vector<Dimension>& dims,
                       const System& system, Collector* out);
void CheckNetworkAssignments(const std::vector<Dimension>& dims,
                             const System& system, Collector* out);
void CheckExperts(const SpecView& view, const MappingValues& values,
                  bool degrees_ok, Collector* out);
void CheckExpertOverlap(const SpecView& view, Collector* out);
// parallelism.recompute_modules against the policy, the model's parts and
// the expert overlaps (Megatron-LM transformer_config.py's rules).
void CheckRecomputeModules(const SpecView& view, Collector* out);
// Batch (rule 6) and one block's work (rule 9).
void CheckBatch(const SpecView& view, bool degrees_ok, Collector* out);
void CheckWorkFits(const SpecView& view, Collector* out);

// check_schedule.cc: the schedule (rule 10; returns its v) and the stages
// (rule 11, with the mapping rules' interleaving group).
int64_t CheckSchedule(const SpecView& view, Collector* out);
void CheckSimulatedSchedule(const SpecView& view, bool degrees_ok, int64_t v,
                            Collector* out);
void CheckStages(const SpecView& view, const MappingValues& values,
                 Collector* out);

}  // namespace check_internal
}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SPEC_CHECK_INTERNAL_H_
