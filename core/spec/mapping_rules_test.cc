// The mapping rules' table against the checker: on a sweep of mappings of
// three small models (dense with grouped-query heads, MoE with shared
// experts, latent attention), each row fails exactly when the checker
// reports its violation, given the values the search builds from the bare
// degrees. The search filters with the rows' predicates
// (core/search/enumerate.cc), so the two cannot drift.
#include "core/spec/mapping_rules.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/spec/check.h"
#include "core/spec/derive.h"
#include "core/spec/spec.h"
#include "core/spec/spec_schedule.h"
#include "core/testing/programs.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

// Sizes chosen so that every row fails for some degrees of the sweep.
TransformerModel Dense() {
  TransformerModel m = CalculonModel("dense", 10, 18, 6, 2, 6, 18);
  m.kv_heads = 2;
  return m;
}
TransformerModel Moe() {
  TransformerModel m = CalculonModel("moe", 10, 18, 6, 2, 6, 18);
  m.moe = MixtureOfExperts{/*experts=*/6, /*topk=*/2, /*ffn=*/9,
                           /*shared_ffn=*/4};
  return m;
}
TransformerModel Latent() {
  TransformerModel m = CalculonModel("latent", 10, 18, 6, 5, 6, 18);
  // q_lora_rank, kv_lora_rank, qk_head_dim, qk_rope_head_dim, v_head_dim.
  m.latent_attention = LatentAttention{6, 4, 2, 3, 2};
  return m;
}

struct Mapping {
  int64_t t, cp, p, v, d, ep, etp, b;
  TensorCommunication comm;
};

TransformerTrainingMappingSpec SpecOf(const TransformerModel& model,
                                      const Mapping& m) {
  TransformerTrainingMappingSpec spec;
  spec.model = model;
  spec.system = test_programs::A100System();
  TransformerTrainingParallelism& par = spec.parallelism;
  par.tensor.degree = m.t;
  par.tensor.communication = m.comm;
  par.tensor.network_tier = 1;
  par.pipeline.degree = m.p;
  par.pipeline.network_tier = 1;
  if (m.p == 1) {
    par.pipeline.schedule = SingleStage{};
  } else if (m.v == 1) {
    par.pipeline.schedule = OneForwardOneBackward{};
  } else {
    par.pipeline.schedule = InterleavedOneForwardOneBackward{m.v};
  }
  par.pipeline.stage_layout = model.num_blocks % m.p == 0
                                  ? StageLayout::kEven
                                  : StageLayout::kUneven;
  par.data.degree = m.d;
  par.data.network_tier = 1;
  par.context.degree = m.cp;
  par.context.network_tier = 1;
  par.expert.degree = m.ep;
  par.expert.tensor_degree = m.etp;
  par.expert.network_tier = 1;
  spec.batch = {m.d * m.b * 4, m.b};
  return spec;
}

// The values as the search builds them (the degrees alone), plus the names
// the messages print.
MappingValues ValuesOf(const TransformerModel& model, const Mapping& m,
                       const PipelineSchedule& schedule,
                       const std::string& v_field) {
  return MappingValues{&model,
                       m.t,
                       m.cp,
                       m.p,
                       m.v,
                       m.d,
                       m.ep,
                       m.etp == 0 ? m.t : m.etp,
                       m.b,
                       SplitsActivations(m.comm),
                       v_field.c_str(),
                       PipelineScheduleName(schedule),
                       TensorCommunicationName(m.comm)};
}

bool Reported(const std::vector<Violation>& violations,
              const Violation& violation) {
  return std::find(violations.begin(), violations.end(), violation) !=
         violations.end();
}

// Checks every row on one mapping; counts each row's failures by index.
void ExpectRowsAgree(const TransformerModel& model, const Mapping& m,
                     std::map<size_t, int>* failures) {
  const TransformerTrainingMappingSpec spec = SpecOf(model, m);
  const std::vector<Violation> violations = FindViolations(spec);
  const PipelineSchedule& schedule = spec.parallelism.pipeline.schedule;
  const std::string v_field = SpecFieldOfShapeField(schedule, "v");
  const MappingValues values = ValuesOf(model, m, schedule, v_field);
  const std::vector<MappingRule>& rows = MappingRules();
  bool all_hold = true;
  for (size_t i = 0; i < rows.size(); ++i) {
    const MappingRule& row = rows[i];
    const bool holds = row.holds(values);
    all_hold &= holds;
    if (!holds) ++(*failures)[i];
    const Violation violation{row.field != nullptr ? row.field : v_field,
                              holds ? "" : row.message(row, values), row.code};
    EXPECT_EQ(!holds, Reported(violations, violation))
        << model.name << " t" << m.t << " cp" << m.cp << " p" << m.p << " v"
        << m.v << " d" << m.d << " ep" << m.ep << " etp" << m.etp << " b"
        << m.b << " " << TensorCommunicationName(m.comm) << ": row " << i
        << " (" << violation.field << ") " << violation.message;
  }
  EXPECT_EQ(all_hold,
            MappingRulesHold(values, kReadsGroup | kReadsMicrobatch |
                                         kReadsCommunication));
}

TEST(MappingRules, EveryRowAgreesWithTheChecker) {
  std::map<size_t, int> failures;
  int mappings = 0;
  for (const TransformerModel& model : {Dense(), Moe(), Latent()}) {
    const bool moe = model.moe.has_value();
    for (int64_t t : {1, 2, 3, 4}) {
      for (int64_t cp : {1, 2, 3}) {
        for (int64_t p : {1, 2, 4}) {
          for (int64_t v : {1, 2, 3, 4}) {
            if (p == 1 && v > 1) continue;
            for (int64_t d : {1, 2}) {
              for (int64_t b : {1, 3}) {
                for (const TensorCommunication& comm :
                     {TensorCommunication{AllReduce{}},
                      TensorCommunication{ReduceScatterAllGather{}}}) {
                  for (int64_t ep : moe ? std::vector<int64_t>{1, 2, 4}
                                        : std::vector<int64_t>{1}) {
                    for (int64_t etp : moe ? std::vector<int64_t>{0, 1, 2}
                                           : std::vector<int64_t>{0}) {
                      ExpectRowsAgree(model, {t, cp, p, v, d, ep, etp, b, comm},
                                      &failures);
                      ++mappings;
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(mappings, 1000);
  // The sweep exercises every row but the overflow (below): a row that never
  // fails would prove nothing.
  const std::vector<MappingRule>& rows = MappingRules();
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].code == ErrorCode::kOutOfRange &&
        rows[i].group == MappingRuleGroup::kActivations) {
      continue;
    }
    EXPECT_GT(failures[i], 0) << "row " << i << " (" << rows[i].field
                              << ") never fails in the sweep";
  }
}

TEST(MappingRules, ActivationRowsOverflowAgreesWithTheChecker) {
  TransformerModel model = Dense();
  model.seq_size = int64_t{1} << 30;
  std::map<size_t, int> failures;
  ExpectRowsAgree(model,
                  {2, 1, 1, 1, 1, 1, 0, int64_t{1} << 40,
                   TensorCommunication{ReduceScatterAllGather{}}},
                  &failures);
  size_t overflow = 0;
  for (const auto& [row, count] : failures) {
    if (MappingRules()[row].group == MappingRuleGroup::kActivations) {
      ++overflow;
    }
  }
  EXPECT_EQ(overflow, 1u);  // the overflow row alone
}

// The search's filters: Calculon's step 1 filters t by hidden and heads; a t
// that splits them but not the feed-forward size is enumerated, and fails
// the group's rules (counted as bad executions).
TEST(MappingRules, SearchFiltersAreTheMarkedRows) {
  const TransformerModel model = CalculonModel("m", 12, 18, 4, 2, 6, 12);
  MappingValues values;
  values.model = &model;
  values.tensor = 4;
  EXPECT_TRUE(SearchFilterHolds(values, kReadsTensor, kReadsTensor));
  EXPECT_FALSE(MappingRulesHold(values, kReadsTensor));
  values.tensor = 3;  // heads 4 do not split
  EXPECT_FALSE(SearchFilterHolds(values, kReadsTensor, kReadsTensor));
  // cp 4 does not split seq 12 into 8 chunks; a filter that reads cp alone.
  values.tensor = 2;
  values.context = 4;
  EXPECT_TRUE(SearchFilterHolds(values, kReadsTensor, kReadsTensor));
  EXPECT_FALSE(SearchFilterHolds(values, kReadsTensor | kReadsContext,
                                 kReadsContext));
}

}  // namespace
}  // namespace blueprint
