// The checker: verifies a MappingSpec against every divisibility rule of the
// seed and every rejection of Calculon (MODEL.md §5) that does not need the
// analysis, and derives the TypedProgram. All violations are reported at once.
#ifndef BLUEPRINTING_CORE_SPEC_CHECK_H_
#define BLUEPRINTING_CORE_SPEC_CHECK_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/base/field_errors.h"
#include "core/spec/program.h"
#include "core/spec/spec.h"

namespace blueprint {

// One violated rule: the field path it concerns, one line of text that
// names the field, the values and the rule, and the rule's kind, e.g.
//   {"parallelism.pipeline.schedule.virtual_stages",
//    "parallelism.pipeline.schedule.virtual_stages (5) must divide "
//    "blocks_per_stage (12)", ErrorCode::kNotDivisible}
using Violation = FieldError;

// The most network tiers a system may list. Real systems have a few levels
// (NVLink, node, rack, pod); the bound keeps the search's enumeration of tier
// assignments small.
inline constexpr int64_t kMaxNetworkTiers = 8;

// The largest value of every integer of a spec that counts something (a
// model size, a degree, a batch, a network tier's processors, a shard group,
// virtual stages): 2^31, far above any model (hidden sizes below 2^16,
// sequences below 2^24) or cluster (below 2^20 processors). With it, every
// product the analysis keeps in a double is finite; the products it keeps in
// 64-bit integers are bounded by the checker's work rule (CheckWorkFits).
inline constexpr int64_t kMaxCount = int64_t{1} << 31;
inline constexpr char kMaxCountWhy[] =
    "the largest size, degree or batch a spec may give";

// The documented range of one spec field, as data (for the metadata that
// core/api/metadata.h exports; the checker's rules read the same constants).
// `field` is a path pattern of the canonical spec JSON: "[]" stands for any
// index of a list, "<datatype>" for any datatype key. Every field has a
// maximum.
struct FieldRange {
  std::string field;
  double min = 0;
  double max = 0;
  std::string unit;
  std::string why;
};
std::vector<FieldRange> CheckedFieldRanges();

// TierAssignmentFits: Calculon's _check_network_assignments on one network
// tier, whose mapped degrees (those > 1) multiply to `product` (1 when none
// is mapped to it): the product fits in the tier and, when the tier must be
// filled, divides its size. Pure; the checker reports each tier that fails
// it, and the strategy search tests its tier assignments with it.
inline bool TierAssignmentFits(const NetworkTier& tier, int64_t product) {
  return product <= tier.size &&
         !(tier.must_be_filled && tier.size % product != 0);
}

// The violations of the model's and the system's own rules (rules 1 and 2:
// sizes, features, efficiency tables, network tiers), at the spec's paths
// "model.*" and "system.*": the serving spec (core/serving) holds the same
// model and system and judges them with the same rules.
std::vector<Violation> FindModelAndSystemViolations(
    const TransformerModel& model, const System& system);

// Every violation of `spec`, in a fixed order; empty when the spec is valid.
std::vector<Violation> FindViolations(const MappingSpec& spec);

// The checked program, or kInvalidArgument whose message is the violations'
// messages joined by '\n' (InvalidInputError: with their fields and codes).
absl::StatusOr<TypedProgram> CheckSpec(const MappingSpec& spec);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SPEC_CHECK_H_
