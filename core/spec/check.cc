#include "core/spec/check.h"

#include <cstdint>
#include <string>
#include <vector>

#include "core/spec/check_internal.h"
#include "core/spec/derive.h"
#include "core/spec/mapping_rules.h"
#include "core/spec/spec_schedule.h"
#include "core/spec/spec_view.h"

namespace blueprint {
namespace check_internal {
namespace {

using spec_internal::ViewOf;

// Runs every rule, in the order of core/spec/README.md "The checker's
// rules"; the mapping rules' table (mapping_rules.h) is run group by group
// at its place in it.
std::vector<Violation> Verify(const MappingSpec& spec) {
  Collector out;
  const SpecView view = ViewOf(spec);
  CheckModel(*view.model, &out);
  CheckSystem(*view.system, &out);
  CheckDatatype(view, &out);
  CheckGradReduceDatatype(view, &out);
  CheckRecipe(view, &out);
  CheckUnquantizedBlocks(view, &out);

  const std::string v_field =
      SpecFieldOfShapeField(view.pipeline->schedule, "v");
  MappingValues values = MappingValuesOf(view, v_field.c_str());
  const std::vector<Dimension> dims = DimensionsOf(view);
  const bool degrees_ok = CheckDegrees(dims, &out);
  const bool tiers_ok = CheckNetworkTiers(dims, *view.system, &out);
  if (degrees_ok && tiers_ok) {
    CheckNetworkAssignments(dims, *view.system, &out);
  }
  CheckBatch(view, degrees_ok, &out);
  CheckExperts(view, values, degrees_ok, &out);
  CheckExpertOverlap(view, &out);
  CheckRecomputeModules(view, &out);
  out.AddMappingRules(values, MappingRuleGroup::kContext);
  out.AddMappingRules(values, MappingRuleGroup::kTensor);
  out.AddMappingRules(values, MappingRuleGroup::kActivations);
  CheckWorkFits(view, &out);
  values.virtual_stages = CheckSchedule(view, &out);
  CheckSimulatedSchedule(view, degrees_ok, values.virtual_stages, &out);
  CheckStages(view, values, &out);
  CheckOptions(view, values, &out);
  return out.Take();
}

}  // namespace
}  // namespace check_internal

std::vector<Violation> FindModelAndSystemViolations(
    const TransformerModel& model, const System& system) {
  check_internal::Collector out;
  check_internal::CheckModel(model, &out);
  check_internal::CheckSystem(system, &out);
  return out.Take();
}

std::vector<Violation> FindViolations(const MappingSpec& spec) {
  return check_internal::Verify(spec);
}

absl::StatusOr<TypedProgram> CheckSpec(const MappingSpec& spec) {
  const std::vector<Violation> violations = check_internal::Verify(spec);
  if (!violations.empty()) return InvalidInputError(violations);
  return AcceptedProgram(spec);
}

}  // namespace blueprint
