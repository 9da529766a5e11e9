// The mapping rules: the checker's rules that read a mapping's degrees and
// sizes (t, cp, p, v, d, ep/etp, the microbatch size, the TP communication)
// besides the model, one row each of one table (mapping_rules.cc
// kMappingRules): its error code, the field it names, the dimensions it
// reads, its predicate and its message. The checker (check.h) reports every
// row that fails; the strategy search (core/search/enumerate.cc) filters its
// space with the same rows, as soon as it knows the dimensions a row reads
// (MappingRulesHold), so that the search and the checker cannot drift.
//
// Example (the search's group of t, cp, p, v, d, ep, etp):
//   MappingValues values = ...;           // no allocation
//   if (!MappingRulesHold(values, kReadsGroup)) ...  // the checker rejects
//
// Adding a rule: core/spec/README.md "Adding a mapping rule".
#ifndef BLUEPRINTING_CORE_SPEC_MAPPING_RULES_H_
#define BLUEPRINTING_CORE_SPEC_MAPPING_RULES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/field_errors.h"
#include "core/spec/spec.h"

namespace blueprint {

// The dimensions of a mapping a rule reads (a bitmask; the model is always
// known). The search knows t first, then cp, then p and v, d, the expert
// degrees, and the microbatch size last; the TP communication is a choice
// within a group.
enum MappingDimension : uint32_t {
  kReadsTensor = 1u << 0,
  kReadsContext = 1u << 1,
  kReadsPipeline = 1u << 2,
  kReadsVirtualStages = 1u << 3,
  kReadsData = 1u << 4,
  kReadsExperts = 1u << 5,  // ep and etp
  kReadsMicrobatch = 1u << 6,
  kReadsCommunication = 1u << 7,
};
// Everything a search group fixes (SEARCH.md steps 1-5): all but the
// microbatch size and the communication.
inline constexpr uint32_t kReadsGroup = kReadsTensor | kReadsContext |
                                        kReadsPipeline | kReadsVirtualStages |
                                        kReadsData | kReadsExperts;

// MappingValues: what the rules read, by value (the model by pointer): the
// search fills one per group and microbatch size without allocating; the
// checker fills one from a spec (check_mapping.cc). A degree the rules are
// not asked about may stay 1.
struct MappingValues {
  const TransformerModel* model = nullptr;
  int64_t tensor = 1;          // t
  int64_t context = 1;         // cp (1 when it does not divide seq_size)
  int64_t pipeline = 1;        // p
  int64_t virtual_stages = 1;  // v, the chunks per stage
  int64_t data = 1;            // d
  int64_t expert = 1;          // ep
  int64_t expert_tensor = 1;   // etp, resolved (ExpertTensorDegree)
  int64_t microbatch = 1;      // b
  // rs_ag or p2p_rs_ag (SplitsActivations): the activations are split t
  // ways. The search sets it: every microbatch size it tries must suit every
  // communication it tries (Calculon's SEARCH.md step 16).
  bool splits_activations = true;
  // For the messages only (the checker's): the field of v (the schedule's
  // virtual_stages, or the schedule itself for one whose v is fixed), the
  // schedule's name and the communication's name.
  const char* virtual_stages_field =
      "parallelism.pipeline.schedule.virtual_stages";
  const char* schedule_name = "";
  const char* communication_name = "";
};

// Where the checker reports a row: its rules run in a fixed order
// (core/spec/README.md "The checker's rules"), and a group's rows are
// reported together at their place in it, each group after the guards
// that make its values meaningful (a degree >= 1, a valid etp, ...).
enum class MappingRuleGroup {
  kExpertCount,    // rule 4: ep divides the experts
  kExpertSplit,    // rule 4: the experts' matrices split etp and t ways
  kExpertRanks,    // rule 4: ep * etp divides t * cp * d
  kContext,        // rule 4: seq_size divides by 2 * cp
  kTensor,         // rule 7: the model's sizes divide by t
  kActivations,    // rule 8: b * s / cp divides by t
  kLatent,         // rule 12: latent-attention ranks divide by t
  kInterleaving,   // rule 11: v fits blocks_per_stage
};

// One mapping rule.
struct MappingRule {
  MappingRuleGroup group;
  ErrorCode code;
  // The field the violation names; nullptr: MappingValues'
  // virtual_stages_field.
  const char* field;
  uint32_t reads;  // MappingDimension bits
  // The search's space holds no mapping failing it: it filters its
  // enumeration by it as soon as it knows what it reads (Calculon's
  // SEARCH.md steps 1 and 16; the search's own cp and (ep, etp) steps), so
  // it counts no execution of one. A mapping failing another row is
  // enumerated and counted among the bad executions, as Calculon does.
  bool search_filters;
  bool (*holds)(const MappingValues&);
  std::string (*message)(const MappingRule&, const MappingValues&);
};

// The table, in the checker's order.
const std::vector<MappingRule>& MappingRules();

// MappingRulesHold: every row that reads only dimensions within `known`
// holds. Allocation-free.
bool MappingRulesHold(const MappingValues& values, uint32_t known);

// SearchFilterHolds: every row marked search_filters that reads only
// dimensions within `known`, at least one of them in `added`, holds: the
// search's filter when it has just chosen `added`. Allocation-free.
bool SearchFilterHolds(const MappingValues& values, uint32_t known,
                       uint32_t added);

// AddMappingViolations: one violation per row of `group` that fails, in
// table order.
void AddMappingViolations(const MappingValues& values, MappingRuleGroup group,
                          std::vector<FieldError>* out);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_SPEC_MAPPING_RULES_H_
