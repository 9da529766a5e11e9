#include "core/analysis/analyze.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/analysis/figures.h"
#include "core/analysis/lineage.h"
#include "core/base/format.h"
#include "core/base/units.h"
#include "core/plan/hardware.h"
#include "core/plan/plan.h"
#include "core/schedule/schedule_ir.h"
#include "core/spec/check.h"
#include "core/taskir/lower.h"
#include "core/testing/doubles.h"
#include "core/testing/programs.h"
#include "core/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

using test_programs::TestMapping;
using test_programs::TestProgram;

struct Analysed {
  TypedProgram program;
  PortablePlanIR plan;
  IterationAnalysis iteration;
  MemoryAnalysis memory;
};

// With `corrections` in force (default: the spec's, none for the test
// mappings' calculon profile).
absl::StatusOr<Analysed> AnalyseProgram(
    absl::StatusOr<TypedProgram> program,
    std::optional<Corrections> corrections = {}) {
  Analysed a;
  if (!program.ok()) return program.status();
  a.program = *program;
  if (corrections.has_value()) a.program.corrections = *corrections;
  absl::StatusOr<DistributedTaskIR> ir =
      LowerTensorParallelBlock().Run(a.program);
  if (!ir.ok()) return ir.status();
  absl::StatusOr<PortablePlanIR> plan = PlanPortable().Run(*ir, a.program);
  if (!plan.ok()) return plan.status();
  a.plan = *plan;
  absl::StatusOr<IterationAnalysis> it =
      AnalyzeIteration().Run(*ir, a.plan, a.program);
  if (!it.ok()) return it.status();
  a.iteration = *it;
  absl::StatusOr<MemoryAnalysis> mem = AnalyzeMemory().Run(a.plan, a.program);
  if (!mem.ok()) return mem.status();
  a.memory = *mem;
  return a;
}

absl::StatusOr<Analysed> Analyse(
    const TestMapping& m, std::optional<Corrections> corrections = {}) {
  return AnalyseProgram(TestProgram(m), corrections);
}

TEST(AnalyzeIteration, SingleStageHasNoBubbleAndNoPipelineTraffic) {
  TestMapping m;
  BP_ASSERT_OK_AND_ASSIGN(const Analysed a, Analyse(m));
  EXPECT_EQ(a.iteration.schedule, "single_stage");
  BP_EXPECT_DOUBLE_EXACT(a.iteration.figures.bubble_time, 0);
  BP_EXPECT_DOUBLE_EXACT(a.iteration.figures.pp_comm_link_time, 0);
  const IterationFigures& f = a.iteration.figures;
  BP_EXPECT_DOUBLE_EQ(f.total_time, f.fw_time + f.bw_time + f.optim_step_time);
}

// 1F1B: bubble = (p-1) * chunk time, with no extra term even when m % p != 0.
TEST(AnalyzeIteration, OneForwardOneBackwardBubble) {
  for (int64_t batch : {8, 6, 2}) {
    TestMapping m;
    m.p = 4;
    m.global_batch = batch;
    BP_ASSERT_OK_AND_ASSIGN(const Analysed a, Analyse(m));
    const IterationFigures& f = a.iteration.figures;
    EXPECT_EQ(a.iteration.schedule, "1f1b");
    BP_EXPECT_DOUBLE_EQ(f.bubble_time, 3 * f.chunk_time) << "batch " << batch;
    BP_EXPECT_DOUBLE_EXACT(f.extra_interleaving_bubbles, 0);
  }
}

// Interleaved: the chunk is bpp/v blocks; m % p != 0 adds (v-1)(p - m%p)
// whole chunks.
TEST(AnalyzeIteration, InterleavedBubbleContract) {
  TestMapping m;
  m.p = 2;
  m.v = 2;
  m.global_batch = 3;  // m = 3, m % p = 1
  BP_ASSERT_OK_AND_ASSIGN(const Analysed a, Analyse(m));
  const IterationFigures& f = a.iteration.figures;
  EXPECT_EQ(a.iteration.schedule, "interleaved_1f1b");
  EXPECT_EQ(a.iteration.step.blocks_per_chunk, 2);
  BP_EXPECT_DOUBLE_EXACT(f.extra_interleaving_bubbles, 1);
  BP_EXPECT_DOUBLE_EQ(f.bubble_time, (1 + 1) * f.chunk_time);
  m.global_batch = 4;
  BP_ASSERT_OK_AND_ASSIGN(const Analysed even, Analyse(m));
  BP_EXPECT_DOUBLE_EQ(even.iteration.figures.bubble_time,
                      even.iteration.figures.chunk_time);
}

// blocks % p != 0 with an explicit uneven layout: blocks per stage rounded
// up, the bubble shortened by the missing blocks.
TEST(AnalyzeIteration, UnevenLayoutShortensTheBubble) {
  TestMapping m;
  m.p = 3;
  m.blocks = 8;  // 3 blocks on the first stages, R = 1
  BP_ASSERT_OK_AND_ASSIGN(const Analysed a, Analyse(m));
  const IterationFigures& f = a.iteration.figures;
  EXPECT_EQ(a.iteration.step.blocks_per_stage, 3);
  EXPECT_EQ(a.iteration.step.bubble_reduction_blocks, 1);
  EXPECT_GT(f.bubble_reduction_time, 0);
  BP_EXPECT_DOUBLE_EQ(f.bubble_time,
                      2 * f.chunk_time - f.bubble_reduction_time);
}

TEST(AnalyzeIteration, ForwardOnlyInferenceHasNoBackward) {
  TestMapping m;
  m.training = false;
  m.p = 2;
  BP_ASSERT_OK_AND_ASSIGN(const Analysed a, Analyse(m));
  const IterationFigures& f = a.iteration.figures;
  EXPECT_EQ(a.iteration.schedule, "forward_only");
  BP_EXPECT_DOUBLE_EXACT(f.bw_time, 0);
  BP_EXPECT_DOUBLE_EXACT(f.optim_step_time, 0);
  BP_EXPECT_DOUBLE_EXACT(f.dp_comm_exposed_time, 0);
  BP_EXPECT_DOUBLE_EXACT(a.memory.figures.optimizer_space, 0);
  EXPECT_FALSE(a.memory.figures.checkpoint_min_defined);
}

TEST(AnalyzeIteration, DataParallelTrafficAndSharding) {
  TestMapping m;
  m.d = 4;
  BP_ASSERT_OK_AND_ASSIGN(const Analysed plain, Analyse(m));
  EXPECT_GT(plain.iteration.figures.dp_comm_link_time, 0);
  BP_EXPECT_DOUBLE_EXACT(plain.iteration.figures.dp_comm_link_time,
                         plain.iteration.figures.dp_comm_exposed_time);
  m.optimizer_sharding = true;
  BP_ASSERT_OK_AND_ASSIGN(const Analysed sharded, Analyse(m));
  // RS + AG on InfiniBand (scalars 1, offsets 0) cost exactly twice the
  // all-reduce (MODEL.md §4.8).
  BP_EXPECT_NEAR(sharded.iteration.figures.block_dp_time,
                 2 * plain.iteration.figures.block_dp_time, 1e-15);
  EXPECT_LT(sharded.memory.figures.optimizer_space,
            plain.memory.figures.optimizer_space);
  m.data_overlap = true;
  BP_ASSERT_OK_AND_ASSIGN(const Analysed overlapped, Analyse(m));
  BP_EXPECT_DOUBLE_EXACT(overlapped.iteration.figures.dp_comm_link_time,
                         sharded.iteration.figures.dp_comm_link_time);
}

TEST(AnalyzeMemory, ReportsCapacityViolationNamingTheField) {
  TestMapping m;
  m.hidden = 8192;
  m.feedforward = 32768;
  m.heads = 64;
  m.head_size = 128;
  m.blocks = 64;
  m.seq = 2048;
  BP_ASSERT_OK_AND_ASSIGN(const Analysed a, Analyse(m));
  ASSERT_EQ(a.memory.violations.size(), 1u);
  EXPECT_NE(a.memory.violations[0].message.find("system.mem1.GiB (80)"),
            std::string::npos)
      << a.memory.violations[0].message;
  EXPECT_EQ(a.memory.violations[0].field, "system.mem1.GiB");
  EXPECT_NE(a.memory.violations[0].message.find("proc_mem_tier1_cap_req"),
            std::string::npos);
}

// Every figure of ForEachIterationFigure, ForEachScheduleTerm and
// ForEachMemoryFigure has a lineage row with a formula whose names resolve,
// each among the row's sources, and the analyses print it.
void ExpectFormulaOf(FormulaScope scope, const char* figure,
                     const std::vector<FigureLineage>& lineage,
                     const FormulaValues& values) {
  const FigureFormula* row = FindFormula(scope, figure);
  ASSERT_NE(row, nullptr) << figure;
  EXPECT_EQ(FormulaProblems(scope, *row), std::vector<std::string>()) << figure;
  for (const FormulaName& name : NamesOf(row->formula)) {
    if (name.function) continue;
    EXPECT_TRUE(ValueOf(scope, name.name, values).has_value())
        << figure << ": " << name.name;
  }
  // The substituted formula keeps only functions, numbers and operators.
  const std::string substituted = SubstituteValues(scope, row->formula, values);
  for (const FormulaName& name : NamesOf(substituted)) {
    EXPECT_TRUE(name.function) << figure << ": " << substituted;
  }
  int rows = 0;
  for (const FigureLineage& f : lineage) {
    if (f.figure != figure) continue;
    ++rows;
    EXPECT_EQ(f.formula, row->formula);
    EXPECT_LE(f.lineage.sources.size(), SourcesOf(*row).size());
    for (const std::string& source : f.lineage.sources) {
      EXPECT_EQ(source.find('$'), std::string::npos)
          << figure << ": " << source;
    }
  }
  EXPECT_EQ(rows, 1) << figure;
}

// The lineage of the derived values names only values of BP_DERIVED_VALUES.
TEST(DerivedLineage, NamesDerivedValues) {
  std::set<std::string> names;
  ForEachDerivedValue(DerivedValues{}, [&](const char* name, const auto&) {
    names.insert(name);
  });
  for (const FigureLineage& f : DerivedLineage()) {
    EXPECT_EQ(names.count(f.figure), 1u) << f.figure;
  }
}

TEST(Lineage, EveryIterationAndMemoryFigureHasAFormulaAndSources) {
  for (bool training : {true, false}) {
    TestMapping m;
    m.p = 2;
    m.training = training;
    BP_ASSERT_OK_AND_ASSIGN(const Analysed a, Analyse(m));
    const FormulaValues values =
        FormulaValuesOf(a.plan, a.iteration, a.memory);
    int figures = 0;
    auto iteration = [&](const char* name, double) {
      ++figures;
      ExpectFormulaOf(FormulaScope::kIteration, name, a.iteration.lineage,
                      values);
    };
    ForEachIterationFigure(a.iteration.figures, iteration);
    ForEachScheduleTerm(a.iteration.figures, iteration);
    // Plus one lineage line per per-rank figure (checked in
    // PrintsEveryFigureWithItsFormula).
    EXPECT_EQ(a.iteration.lineage.size(),
              static_cast<size_t>(figures) + a.iteration.rank_figures.size());
    EXPECT_EQ(static_cast<int>(IterationFormulas().size()), figures);
    figures = 0;
    auto memory = [&](const char* name, double) {
      ++figures;
      ExpectFormulaOf(FormulaScope::kMemory, name, a.memory.lineage, values);
    };
    ForEachMemoryFigure(a.memory.figures, memory);
    ForEachMemoryTerm(a.memory.figures, memory);
    EXPECT_EQ(static_cast<int>(a.memory.lineage.size()), figures);
    EXPECT_EQ(static_cast<int>(MemoryFormulas().size()), figures);
  }
}

TEST(Lineage, FormulaProblemsNamesUnknownNamesAndMissingSources) {
  const FigureFormula bad = {"chunk_time",
                             "chunk_fw_time + no_such_term + "
                             "nope(p)",
                             {"iteration:chunk_fw_time"}};
  EXPECT_EQ(FormulaProblems(FormulaScope::kIteration, bad),
            (std::vector<std::string>{"chunk_time: unknown name no_such_term",
                                      "chunk_time: unknown function nope",
                                      "chunk_time: p needs the source "
                                      "spec:parallelism.pipeline.degree"}));
  const FigureFormula self = {
      "total_time", "total_time", {"iteration:total_time"}};
  EXPECT_EQ(FormulaProblems(FormulaScope::kIteration, self).size(), 1u);
}

TEST(Lineage, SubstitutesValuesForNames) {
  TestMapping m;
  m.p = 2;
  BP_ASSERT_OK_AND_ASSIGN(const Analysed a, Analyse(m));
  const FormulaValues values =
      FormulaValuesOf(a.plan, a.iteration, a.memory);
  const IterationFigures& it = a.iteration.figures;
  const StepShape& s = a.iteration.step;
  EXPECT_EQ(SubstituteValues(
                FormulaScope::kIteration,
                FindFormula(FormulaScope::kIteration, "bubble_time")->formula,
                values),
            "0 ? simulated_bubble(2, 1, " + std::to_string(s.m) + ", " +
                FormatDouble(it.chunk_fw_time) + ", " +
                FormatDouble(it.chunk_bw_time) + ", " +
                std::to_string(s.blocks_per_chunk) + " * " +
                FormatDouble(a.plan.block.block_wgrad_time) + ", 0) : " +
                FormatDouble(it.bubble_chunks) + " * " +
                FormatDouble(it.chunk_time) + " - " +
                FormatDouble(it.bubble_reduction_time));
  EXPECT_EQ(SubstituteValues(FormulaScope::kIteration,
                             "max(p, block.useful_flops) * 2", values),
            "max(2, " + FormatDouble(a.plan.block.useful_flops) + ") * 2");
}

// Evaluates a formula (the grammar of lineage.h: numbers, names, + - * / %,
// unary - and !, comparisons, && ||, ?:, parentheses, max/min/rate); nullopt
// when it calls a function that needs the system (p2p_time, dp_time, ...).
class FormulaEvaluator {
 public:
  FormulaEvaluator(FormulaScope scope, const std::string& text,
                   const FormulaValues& values)
      : scope_(scope), text_(text), values_(values) {}

  std::optional<double> Evaluate() {
    const double value = Ternary();
    Skip();
    if (pos_ != text_.size()) failed_ = true;
    if (failed_) return std::nullopt;
    return value;
  }

 private:
  void Skip() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
  }
  bool Eat(const std::string& token) {
    Skip();
    if (text_.compare(pos_, token.size(), token) != 0) return false;
    // "!" is not "!=", "<" not "<=".
    if ((token == "!" || token == "<" || token == ">") &&
        pos_ + 1 < text_.size() && text_[pos_ + 1] == '=') {
      return false;
    }
    pos_ += token.size();
    return true;
  }
  double Ternary() {
    const double condition = Or();
    if (!Eat("?")) return condition;
    // As in C++, only the branch taken must evaluate: the other may call a
    // function this evaluator does not know (simulated_bubble, ...).
    const bool failed_before = failed_;
    failed_ = false;
    const double a = Ternary();
    const bool a_failed = failed_;
    const bool colon = Eat(":");
    failed_ = false;
    const double b = Ternary();
    const bool b_failed = failed_;
    failed_ = failed_before || !colon || (condition != 0 ? a_failed : b_failed);
    return condition != 0 ? a : b;
  }
  double Or() {
    double v = And();
    while (Eat("||")) v = (And() != 0 || v != 0) ? 1 : 0;
    return v;
  }
  double And() {
    double v = Compare();
    while (Eat("&&")) v = (Compare() != 0 && v != 0) ? 1 : 0;
    return v;
  }
  double Compare() {
    const double a = Sum();
    if (Eat("==")) return a == Sum() ? 1 : 0;
    if (Eat("!=")) return a != Sum() ? 1 : 0;
    if (Eat(">=")) return a >= Sum() ? 1 : 0;
    if (Eat("<=")) return a <= Sum() ? 1 : 0;
    if (Eat(">")) return a > Sum() ? 1 : 0;
    if (Eat("<")) return a < Sum() ? 1 : 0;
    return a;
  }
  double Sum() {
    double v = Product();
    for (;;) {
      if (Eat("+")) {
        v += Product();
      } else if (Eat("-")) {
        v -= Product();
      } else {
        return v;
      }
    }
  }
  double Product() {
    double v = Unary();
    for (;;) {
      if (Eat("*")) {
        v *= Unary();
      } else if (Eat("/")) {
        v /= Unary();
      } else if (Eat("%")) {
        v = std::fmod(v, Unary());
      } else {
        return v;
      }
    }
  }
  double Unary() {
    if (Eat("-")) return -Unary();
    if (Eat("!")) return Unary() == 0 ? 1 : 0;
    return Primary();
  }
  double Primary() {
    Skip();
    if (Eat("(")) {
      const double v = Ternary();
      if (!Eat(")")) failed_ = true;
      return v;
    }
    const size_t start = pos_;
    if (pos_ < text_.size() &&
        std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      size_t used = 0;
      const double v = std::stod(text_.substr(pos_), &used);
      pos_ += used;
      return v;
    }
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) ||
            text_[pos_] == '_' || text_[pos_] == '.')) {
      ++pos_;
    }
    const std::string name = text_.substr(start, pos_ - start);
    if (name.empty()) {
      failed_ = true;
      pos_ = text_.size();
      return 0;
    }
    if (Eat("(")) {
      std::vector<double> args;
      if (!Eat(")")) {
        do {
          args.push_back(Ternary());
        } while (Eat(","));
        if (!Eat(")")) failed_ = true;
      }
      if (name == "max" && args.size() == 2) return std::max(args[0], args[1]);
      if (name == "min" && args.size() == 2) return std::min(args[0], args[1]);
      if (name == "rate" && args.size() == 2) {
        return args[1] > 0 ? args[0] / args[1] : 0;
      }
      failed_ = true;  // a function of the system: not evaluated here
      return 0;
    }
    const std::optional<double> value = ValueOf(scope_, name, values_);
    if (!value) failed_ = true;
    return value.value_or(0);
  }

  FormulaScope scope_;
  std::string text_;
  const FormulaValues& values_;
  size_t pos_ = 0;
  bool failed_ = false;
};

// Every formula that needs no system function evaluates, from the values of
// its names, to its figure's value: the table describes figures.cc.
TEST(Lineage, FormulasEvaluateToTheirFigures) {
  std::vector<TestMapping> mappings;
  TestMapping base;
  base.p = 2;
  mappings.push_back(base);
  TestMapping interleaved = base;
  interleaved.p = 4;
  interleaved.v = 2;
  interleaved.global_batch = 6;
  mappings.push_back(interleaved);
  TestMapping full = base;
  full.recompute = RecomputePolicy::kFull;
  full.d = 2;
  full.global_batch = 16;
  full.offload.weights = true;
  full.offload.activations = true;
  full.offload.optimizer = true;
  mappings.push_back(full);
  TestMapping dp = base;
  dp.d = 2;
  dp.global_batch = 16;
  dp.data_overlap = true;
  dp.optimizer_sharding = true;
  mappings.push_back(dp);
  TestMapping inference = base;
  inference.training = false;
  mappings.push_back(inference);
  // The simulated schedules: their bubble and in-flight rows call the
  // scheduler (not evaluated here); every other row must still hold.
  TestMapping gpipe = base;
  gpipe.schedule = GPipe{};
  mappings.push_back(gpipe);
  TestMapping dualpipe = base;
  dualpipe.schedule = DualPipeV{};
  mappings.push_back(dualpipe);
  TestMapping zero_bubble = base;
  zero_bubble.schedule = ZeroBubbleH1{};
  mappings.push_back(zero_bubble);
  TestMapping twin = dp;  // dualpipe: two stages per rank, m = 8 >= 2p
  twin.data_overlap = false;
  twin.recompute = RecomputePolicy::kFull;
  twin.schedule = DualPipe{};
  mappings.push_back(twin);
  int evaluated = 0;
  for (const TestMapping& m : mappings) {
    BP_ASSERT_OK_AND_ASSIGN(const Analysed a, Analyse(m));
    const FormulaValues values =
        FormulaValuesOf(a.plan, a.iteration, a.memory);
    auto check = [&](FormulaScope scope, const char* name, double value) {
      const FigureFormula* row = FindFormula(scope, name);
      ASSERT_NE(row, nullptr) << name;
      const std::optional<double> got =
          FormulaEvaluator(scope, row->formula, values).Evaluate();
      if (!got) return;
      ++evaluated;
      EXPECT_NEAR(*got, value, 1e-9 * std::max(1.0, std::fabs(value)))
          << name << " = " << row->formula << " = "
          << SubstituteValues(scope, row->formula, values);
    };
    auto iteration = [&](const char* name, double value) {
      check(FormulaScope::kIteration, name, value);
    };
    ForEachIterationFigure(a.iteration.figures, iteration);
    ForEachScheduleTerm(a.iteration.figures, iteration);
    ForEachMemoryFigure(a.memory.figures, [&](const char* name, double value) {
      check(FormulaScope::kMemory, name, value);
    });
  }
  // Most formulas need no system function.
  EXPECT_GT(evaluated, 6 * 40);
}

// GPipe re-proves 1F1B's bubble, (p - 1) chunk times, but keeps all m
// microbatches in flight; DualPipeV holds two chunks per stage.
TEST(AnalyzeIteration, SimulatedSchedulesBubbleAndInFlight) {
  TestMapping one_f_one_b;
  one_f_one_b.p = 2;
  TestMapping gpipe = one_f_one_b;
  gpipe.schedule = GPipe{};
  BP_ASSERT_OK_AND_ASSIGN(const Analysed a, Analyse(one_f_one_b));
  BP_ASSERT_OK_AND_ASSIGN(const Analysed g, Analyse(gpipe));
  const IterationFigures& af = a.iteration.figures;
  const IterationFigures& gf = g.iteration.figures;
  EXPECT_TRUE(g.iteration.step.simulated_schedule.has_value());
  BP_EXPECT_NEAR(gf.bubble_time, af.bubble_time, 1e-12);
  BP_EXPECT_NEAR(gf.total_time, af.total_time, 1e-12);
  EXPECT_EQ(gf.extra_interleaving_bubbles, 0);
  EXPECT_EQ(gf.peak_inflight_microbatches,
            static_cast<double>(g.iteration.step.m));
  EXPECT_EQ(af.peak_inflight_microbatches, 2);  // min(m, p)
  EXPECT_GT(gf.chunk_bw_weight_time, 0);
  BP_EXPECT_NEAR(gf.chunk_bw_input_time + gf.chunk_bw_weight_time,
                 gf.chunk_bw_time, 1e-18);
  // act_space = working + storage * (blocks_per_stage * in_flight - 1).
  const BlockFigures& b = g.plan.block;
  const double bpp = static_cast<double>(g.iteration.step.blocks_per_stage);
  const double m = static_cast<double>(g.iteration.step.m);
  BP_EXPECT_NEAR(g.memory.figures.act_space,
                 b.block_act_working_space +
                     b.block_act_storage_space * (bpp * m - 1),
                 1e-12);
  BP_EXPECT_NEAR(a.memory.figures.act_space,
                 b.block_act_working_space +
                     b.block_act_storage_space * (bpp * 2 - 1),
                 1e-12);

  TestMapping dualpipe = one_f_one_b;
  dualpipe.schedule = DualPipeV{};
  BP_ASSERT_OK_AND_ASSIGN(const Analysed d, Analyse(dualpipe));
  EXPECT_EQ(d.iteration.step.v, 2);
  EXPECT_EQ(d.iteration.step.blocks_per_chunk, 2);
  EXPECT_GT(d.iteration.figures.bubble_time, 0);
  EXPECT_TRUE(std::isfinite(d.memory.figures.act_space));
}

// DualPipeV's F&B hides each chunk's exposed communication (TP, pipeline
// sends) under the other microbatch's compute: chunk_fb_time is less than
// F + B, the step is the simulated timeline's makespan (the pipeline terms
// less fb_overlap_saving_time plus the bubble) and shorter than the same
// order run without the overlap; the other schedules overlap nothing.
TEST(AnalyzeIteration, DualPipeVOverlapsForwardAndBackward) {
  // The test model with t = 2 is bound by its TP communication; with t = 1
  // and larger layers by its compute.
  TestMapping comm_bound;
  comm_bound.t = 2;
  comm_bound.p = 2;
  comm_bound.schedule = DualPipeV{};
  TestMapping compute_bound = comm_bound;
  compute_bound.t = 1;
  compute_bound.hidden = 1024;
  compute_bound.feedforward = 4096;
  compute_bound.heads = 16;
  compute_bound.head_size = 64;
  compute_bound.seq = 2048;
  for (const TestMapping& mapping : {comm_bound, compute_bound}) {
    SCOPED_TRACE(mapping.t == 2 ? "communication-bound" : "compute-bound");
    BP_ASSERT_OK_AND_ASSIGN(const Analysed d, Analyse(mapping));
    const IterationFigures& f = d.iteration.figures;
    const BlockFigures& b = d.plan.block;
    const StepShape& step = d.iteration.step;
    const double serial =
        f.chunk_fw_time + f.chunk_bw_input_time + f.chunk_bw_weight_time;
    const double base = static_cast<double>(step.blocks_per_chunk) - 1;
    const double comm =
        base * (b.baseblock_fw_tp_time_exposed +
                b.baseblock_recomm_time_exposed +
                b.baseblock_agrad_tp_time_exposed) +
        b.edgeblock_fw_tp_time_exposed + b.edgeblock_recomm_time_exposed +
        b.edgeblock_agrad_tp_time_exposed + f.chunk_fw_pp_time +
        f.chunk_bw_pp_time;
    ASSERT_GT(comm, 0);
    if (mapping.t == 2) {
      ASSERT_GT(comm, serial - comm);
      BP_EXPECT_NEAR(f.chunk_fb_time, comm, 1e-15);
    } else {
      ASSERT_LT(comm, serial - comm);
      BP_EXPECT_NEAR(f.chunk_fb_time, serial - comm, 1e-15);
    }
    EXPECT_LT(f.chunk_fb_time, serial);
    EXPECT_GT(f.fb_overlap_saving_time, 0);

    // The step's pipeline part is the simulated timeline's makespan.
    const ChunkDurations durations = ChunkDurationsOf(b, step, f);
    EXPECT_EQ(durations.overlapped_forward_backward, f.chunk_fb_time);
    BP_ASSERT_OK_AND_ASSIGN(
        const PipelineScheduleIR ir,
        BuildSchedule(ScheduleKind::kDualPipeV, step.p, step.v, step.m));
    BP_ASSERT_OK_AND_ASSIGN(const SimulationResult sim,
                            Simulate(ir, {durations}));
    const double pipeline = f.fw_time + f.bw_time + f.recompute_time +
                            f.recomm_exposed_time + f.tp_comm_exposed_time +
                            f.pp_comm_exposed_time +
                            f.fw_offload_exposed_time +
                            f.bw_offload_exposed_time;
    EXPECT_NEAR(pipeline - f.fb_overlap_saving_time + f.bubble_time,
                sim.makespan, 1e-12 * sim.makespan);
    // The same order without the overlap takes longer by the saving and
    // the bubble's difference.
    ChunkDurations serial_durations = durations;
    serial_durations.overlapped_forward_backward = -1;
    BP_ASSERT_OK_AND_ASSIGN(const SimulationResult no_overlap,
                            Simulate(ir, {serial_durations}));
    EXPECT_LT(sim.makespan, no_overlap.makespan);
    EXPECT_NEAR(no_overlap.makespan - sim.makespan,
                f.fb_overlap_saving_time + (no_overlap.bubble - f.bubble_time),
                1e-12 * sim.makespan);
  }

  TestMapping zero_bubble = comm_bound;
  zero_bubble.schedule = ZeroBubbleH1{};
  BP_ASSERT_OK_AND_ASSIGN(const Analysed z, Analyse(zero_bubble));
  EXPECT_EQ(z.iteration.figures.chunk_fb_time, 0);
  EXPECT_EQ(z.iteration.figures.fb_overlap_saving_time, 0);
}

// ZB-H1 keeps 1F1B's in-flight microbatches and activation memory; its
// bubble, at the mapping's chunk times, is (p - 1) max(F + B - W, F, B)
// against 1F1B's (p - 1)(F + B + W), and the step shortens by the
// difference.
TEST(AnalyzeIteration, ZeroBubbleH1AgainstOneForwardOneBackward) {
  TestMapping one_f_one_b;
  one_f_one_b.p = 4;
  one_f_one_b.global_batch = 8;
  TestMapping zero_bubble = one_f_one_b;
  zero_bubble.schedule = ZeroBubbleH1{};
  BP_ASSERT_OK_AND_ASSIGN(const Analysed a, Analyse(one_f_one_b));
  BP_ASSERT_OK_AND_ASSIGN(const Analysed z, Analyse(zero_bubble));
  const IterationFigures& af = a.iteration.figures;
  const IterationFigures& zf = z.iteration.figures;
  ASSERT_TRUE(z.iteration.step.simulated_schedule.has_value());
  const double p = 4;
  const double f = zf.chunk_fw_time, b = zf.chunk_bw_input_time,
               w = zf.chunk_bw_weight_time;
  ASSERT_GT(w, 0);
  BP_EXPECT_NEAR(zf.bubble_time, (p - 1) * std::max({f + b - w, f, b}),
                 1e-12);
  EXPECT_LT(zf.bubble_time, af.bubble_time);
  BP_EXPECT_NEAR(af.total_time - zf.total_time,
                 af.bubble_time - zf.bubble_time, 1e-12);
  EXPECT_EQ(zf.peak_inflight_microbatches, af.peak_inflight_microbatches);
  EXPECT_EQ(z.memory.figures.act_space, a.memory.figures.act_space);
  EXPECT_EQ(z.memory.figures.proc_mem_tier1_cap_req,
            a.memory.figures.proc_mem_tier1_cap_req);
}

// ZB-H2 fills ZB-H1's bubble with more warm-up forwards: at most its
// bubble, and up to 2p - 1 microbatches in flight (the unit-time order's
// peak), more activation memory than 1F1B's.
TEST(AnalyzeIteration, ZeroBubbleH2AgainstZeroBubbleH1) {
  TestMapping h1;
  h1.p = 4;
  h1.global_batch = 8;
  h1.schedule = ZeroBubbleH1{};
  TestMapping h2 = h1;
  h2.schedule = ZeroBubbleH2{};
  BP_ASSERT_OK_AND_ASSIGN(const Analysed a, Analyse(h1));
  BP_ASSERT_OK_AND_ASSIGN(const Analysed z, Analyse(h2));
  const IterationFigures& zf = z.iteration.figures;
  ASSERT_TRUE(z.iteration.step.simulated_schedule.has_value());
  EXPECT_GE(zf.bubble_time, 3 * zf.chunk_fw_time * (1 - 1e-12));
  EXPECT_LE(zf.bubble_time, a.iteration.figures.bubble_time * (1 + 1e-12));
  EXPECT_EQ(zf.peak_inflight_microbatches, 7);  // 2p - 1
  EXPECT_GT(z.memory.figures.act_space, a.memory.figures.act_space);
}

// ZB-V holds two chunks per stage in a V, ordered for the mapping's F, B
// and W times: 1F1B's in-flight microbatches and activation memory, and a
// bubble between one iteration's least, (p - 1) F, and interleaved 1F1B's
// at the same chunks.
TEST(AnalyzeIteration, ZeroBubbleVAgainstInterleaved) {
  TestMapping interleaved;
  interleaved.p = 4;
  interleaved.global_batch = 8;
  interleaved.schedule = InterleavedOneForwardOneBackward{2};
  TestMapping one_f_one_b = interleaved;
  one_f_one_b.schedule = OneForwardOneBackward{};
  TestMapping zero_bubble = interleaved;
  zero_bubble.schedule = ZeroBubbleV{};
  BP_ASSERT_OK_AND_ASSIGN(const Analysed i, Analyse(interleaved));
  BP_ASSERT_OK_AND_ASSIGN(const Analysed o, Analyse(one_f_one_b));
  BP_ASSERT_OK_AND_ASSIGN(const Analysed z, Analyse(zero_bubble));
  const IterationFigures& zf = z.iteration.figures;
  ASSERT_TRUE(z.iteration.step.simulated_schedule.has_value());
  EXPECT_EQ(z.iteration.step.v, 2);
  const double p = 4;
  EXPECT_GE(zf.bubble_time, (p - 1) * zf.chunk_fw_time * (1 - 1e-12));
  EXPECT_LT(zf.bubble_time, i.iteration.figures.bubble_time);
  EXPECT_EQ(zf.peak_inflight_microbatches,
            o.iteration.figures.peak_inflight_microbatches);
  EXPECT_EQ(z.memory.figures.act_space, o.memory.figures.act_space);
}

// The checker's rules of the simulated schedules: training with a pipeline,
// an even layout, and the constructor's shape rules on the spec's fields.
// DualPipe: rank s holds stage s of one model copy and stage p - 1 - s of
// the other. Each microbatch passes one of them, so the compute is 1F1B's;
// the rank's state, its optimizer step and its DP reduction are of both
// stages, its activations p + 1 stages' (the DeepSeek-V3 report's PP + 1),
// and it sums its gradients with its twin's over the pipeline tier.
TEST(AnalyzeIteration, DualPipeHoldsTwoStagesPerRank) {
  TestMapping one_f_one_b;
  one_f_one_b.p = 4;
  one_f_one_b.d = 2;
  one_f_one_b.global_batch = 32;  // m = 16
  one_f_one_b.recompute = RecomputePolicy::kFull;
  TestMapping dualpipe = one_f_one_b;
  dualpipe.schedule = DualPipe{};
  BP_ASSERT_OK_AND_ASSIGN(const Analysed a, Analyse(one_f_one_b));
  BP_ASSERT_OK_AND_ASSIGN(const Analysed d, Analyse(dualpipe));
  const StepShape& step = d.iteration.step;
  EXPECT_EQ(d.program.derived.stages_per_rank, 2);
  EXPECT_EQ(a.program.derived.stages_per_rank, 1);
  EXPECT_EQ(step.stages_per_rank, 2);
  EXPECT_EQ(step.v, 1);
  EXPECT_EQ(step.blocks_per_chunk, step.blocks_per_stage);
  const IterationFigures& af = a.iteration.figures;
  const IterationFigures& df = d.iteration.figures;
  EXPECT_EQ(df.fw_time, af.fw_time);
  EXPECT_EQ(df.bw_time, af.bw_time);
  EXPECT_EQ(df.recompute_time, af.recompute_time);
  EXPECT_EQ(df.chunk_time, af.chunk_time);
  BP_EXPECT_NEAR(df.optim_step_time, 2 * af.optim_step_time, 1e-15);
  BP_EXPECT_NEAR(df.dp_comm_exposed_time, 2 * af.dp_comm_exposed_time, 1e-15);
  EXPECT_GT(af.dp_comm_exposed_time, 0);
  const BlockFigures& b = d.plan.block;
  const double bpp = static_cast<double>(step.blocks_per_stage);
  EXPECT_EQ(af.twin_stage_sync_time, 0);
  EXPECT_EQ(df.twin_stage_sync_time,
            CollectiveTime(*step.pipeline_net, CollectiveOp::kAllReduce,
                           2 * bpp * b.block_weight_grad_space_no_sharding,
                           2));
  EXPECT_GT(df.twin_stage_sync_time, 0);
  EXPECT_GT(df.fb_overlap_saving_time, 0);
  const MemoryFigures& am = a.memory.figures;
  const MemoryFigures& dm = d.memory.figures;
  BP_EXPECT_NEAR(dm.weight_space, 2 * am.weight_space, 1e-15);
  BP_EXPECT_NEAR(dm.optimizer_space, 2 * am.optimizer_space, 1e-15);
  BP_EXPECT_NEAR(dm.weight_grad_space,
                 b.block_weight_grad_space_no_sharding +
                     b.block_weight_grad_space * (2 * bpp - 1),
                 1e-15);
  // (p + 1) / 2 in units of the rank's two stages: p + 1 stages.
  EXPECT_EQ(df.peak_inflight_microbatches, 2.5);
  BP_EXPECT_NEAR(dm.act_checkpoint_size,
                 5 * bpp * b.block_act_checkpoint_size, 1e-15);
}

// DualPipe's end ranks each hold the first stage of one copy and the last
// of the other: the embedding and the output layer, each run for the m / 2
// microbatches of one direction, reduced over DP, summed with the twin's;
// a tied table is held once (no copy to synchronise on its own).
TEST(AnalyzeIteration, DualPipeEndRanksHoldTheEmbeddingAndTheHead) {
  TestMapping mapping;
  mapping.p = 4;
  mapping.d = 2;
  mapping.global_batch = 32;  // m = 16
  mapping.schedule = DualPipe{};
  BP_ASSERT_OK_AND_ASSIGN(const Analysed d, Analyse(mapping));
  const StepShape& step = d.iteration.step;
  StageExtras x;
  x.first.block_fw_time = 1e-3;
  x.first.block_agrad_time = 2e-3;
  x.first.block_optim_time = 1e-4;
  x.first.block_weight_space = 1e6;
  x.first.block_weight_grad_space = 2e6;
  x.first.block_weight_grad_space_no_sharding = 2e6;
  x.first.block_optimizer_space = 6e6;
  x.last = x.first;
  x.last.block_fw_time = 3e-3;
  x.last.block_wgrad_time = 4e-3;
  x.last.block_weight_grad_space_no_sharding = 3e6;
  IterationFigures it;
  ComputeIteration(d.plan.block, x, step, it);
  const double first = 1e-3 + 2e-3;
  const double last = 3e-3 + 2e-3 + 4e-3;
  BP_EXPECT_NEAR(it.first_stage_extra_time,
                 16.0 / 2 * (first + last) + 2 * 1e-4, 1e-15);
  EXPECT_EQ(it.last_stage_extra_time, it.first_stage_extra_time);
  EXPECT_EQ(it.stage_imbalance_time, it.first_stage_extra_time);
  EXPECT_EQ(it.embedding_sync_time, 0);
  BP_EXPECT_NEAR(
      it.stage_extra_dp_time,
      2 * CollectiveTime(*step.data_net, CollectiveOp::kAllReduce, 1e6, 2),
      1e-15);
  const double bpp = static_cast<double>(step.blocks_per_stage);
  EXPECT_EQ(it.twin_stage_sync_time,
            CollectiveTime(
                *step.pipeline_net, CollectiveOp::kAllReduce,
                2 * bpp * d.plan.block.block_weight_grad_space_no_sharding +
                    2e6 + 3e6,
                2));
  MemoryFigures memory;
  ComputeMemory(d.plan.block, x, step, memory);
  const double blocks = memory.weight_space + memory.weight_grad_space +
                        memory.optimizer_space;
  BP_EXPECT_NEAR(memory.first_stage_weight_and_optimizer_bytes,
                 blocks + 2 * (1e6 + 2e6 + 6e6), 1e-15);
  EXPECT_EQ(memory.last_stage_weight_and_optimizer_bytes,
            memory.first_stage_weight_and_optimizer_bytes);

  // A tied table: 1F1B's last stage keeps a copy, a dualpipe end rank
  // holds the one table both of its ends read.
  TransformerModel model = d.program.model();
  model.vocabulary.tied = true;
  DerivedValues dv = d.program.derived;
  dv.padded_vocabulary = 128;
  EXPECT_FALSE(MakeStepShape(dv, model, d.program.system(), d.program.batch(),
                             d.program.options())
                   .embedding_copy);
  dv.stages_per_rank = 1;
  EXPECT_TRUE(MakeStepShape(dv, model, d.program.system(), d.program.batch(),
                            d.program.options())
                  .embedding_copy);
}

TEST(AnalyzeIteration, SimulatedScheduleRules) {
  TestMapping dualpipe;
  dualpipe.p = 4;
  dualpipe.global_batch = 4;  // m = 4 < 2p
  dualpipe.schedule = DualPipeV{};
  const absl::StatusOr<TypedProgram> short_batch = TestProgram(dualpipe);
  ASSERT_FALSE(short_batch.ok());
  EXPECT_THAT(std::string(short_batch.status().message()),
              ::testing::HasSubstr(
                  "parallelism.pipeline.schedule dualpipe_v: m (4) must be at "
                  "least 2p (8)"));
  TestMapping twin;
  twin.p = 3;
  twin.d = 2;
  twin.blocks = 12;
  twin.global_batch = 10;  // m = 5
  twin.data_overlap = true;
  twin.schedule = DualPipe{};
  const absl::StatusOr<TypedProgram> twin_rules = TestProgram(twin);
  ASSERT_FALSE(twin_rules.ok());
  for (const char* rule :
       {"p (3) must be even for schedule dualpipe",
        "m (5) must be even for schedule dualpipe",
        "m (5) must be at least 2p (6)",
        "parallelism.data.overlap cannot be combined with "
        "parallelism.pipeline.schedule dualpipe"}) {
    EXPECT_THAT(std::string(twin_rules.status().message()),
                ::testing::HasSubstr(rule));
  }
  TestMapping inference;
  inference.p = 2;
  inference.training = false;
  inference.schedule = GPipe{};
  const absl::StatusOr<TypedProgram> wrong_kind = TestProgram(inference);
  ASSERT_FALSE(wrong_kind.ok());
  EXPECT_THAT(std::string(wrong_kind.status().message()),
              ::testing::HasSubstr("gpipe is a training schedule"));
  TestMapping single;
  single.schedule = GPipe{};
  const absl::StatusOr<TypedProgram> no_pipeline = TestProgram(single);
  ASSERT_FALSE(no_pipeline.ok());
  EXPECT_THAT(std::string(no_pipeline.status().message()),
              ::testing::HasSubstr("gpipe requires parallelism.pipeline.degree "
                                   "> 1"));
}

TEST(AnalyzeIteration, PrintsEveryFigureWithItsFormula) {
  TestMapping m;
  m.p = 2;
  BP_ASSERT_OK_AND_ASSIGN(const Analysed a, Analyse(m));
  const std::string text = ToText(a.iteration);
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "blueprinting.iteration_analysis/2");
  EXPECT_NE(text.find("lineage bubble_time = simulated_schedule ? "
                      "simulated_bubble(p, v, m, chunk_fw_time, "
                      "chunk_bw_time, blocks_per_chunk * block_wgrad_time, "
                      "chunk_fb_time) : bubble_chunks * chunk_time - bubble_reduction_time "
                      "pass=AnalyzeIteration from ["),
            std::string::npos);
  const std::string memory = ToText(a.memory);
  EXPECT_EQ(memory.substr(0, memory.find('\n')),
            "blueprinting.memory_analysis/2");
  EXPECT_NE(memory.find("lineage weight_space = block_weight_space * "
                        "rank_blocks pass=AnalyzeMemory from "
                        "[block:block_weight_space,derived:blocks_per_stage,"
                        "derived:stages_per_rank]"),
            std::string::npos);
  EXPECT_NE(text.find("\nbubble_fraction="), std::string::npos);
  EXPECT_NE(text.find("lineage gemm_flops_per_rank = blocks_per_stage * "
                      "microbatches * sum over the block's GEMM tasks of (fw "
                      "+ agrad + wgrad) flops + microbatches (dualpipe: "
                      "half) * the same over stage 0's own GEMM tasks "
                      "(output layer when p = 1 or dualpipe) "
                      "pass=AnalyzeIteration"),
            std::string::npos);
  // Every per-rank figure has its formula and sources too.
  EXPECT_EQ(a.iteration.rank_figures.size(), 27u);
  for (const NamedFigure& rank : a.iteration.rank_figures) {
    bool found = false;
    for (const FigureLineage& f : a.iteration.lineage) {
      if (f.figure != rank.name) continue;
      found = true;
      EXPECT_FALSE(f.formula.empty()) << f.figure;
      EXPECT_FALSE(f.lineage.sources.empty()) << f.figure;
    }
    EXPECT_TRUE(found) << rank.name;
  }
  double value = -1;
  EXPECT_TRUE(FindIterationFigure(a.iteration, "critical_path_base_forward",
                                  &value));
  BP_EXPECT_DOUBLE_EXACT(value, a.plan.critical_path[0].forward);
  EXPECT_FALSE(FindIterationFigure(a.iteration, "no_such_figure", &value));
}

// Correction fp32_gradient_reduction: with bfloat16 under Megatron-LM's
// precision, the DP gradient collectives move the float32 main gradients
// (twice the bf16 weights' bytes), the weights' all-gathers stay in bf16;
// with float16, or the correction off, the gradients move in the datatype.
TEST(AnalyzeIteration, Fp32GradientReductionCorrection) {
  Corrections fp32_grads;
  fp32_grads.Set(Correction::kFp32GradientReduction, true);
  for (DataType datatype : {DataType::kBFloat16, DataType::kFloat16}) {
    for (bool sharded : {false, true}) {
      TestMapping mapping;
      mapping.d = 4;
      mapping.optimizer_sharding = sharded;
      MappingSpec spec = TestSpec(mapping);
      auto& training = std::get<TransformerTrainingMappingSpec>(spec);
      training.options.datatype = datatype;
      training.options.precision = PrecisionAccounting::kMegatronMixed;
      // The test system's bfloat16 rates: its float16 ones.
      for (auto* engine : {&training.system.matrix, &training.system.vector}) {
        engine->rates[DataType::kBFloat16] = engine->rates[DataType::kFloat16];
      }
      BP_ASSERT_OK_AND_ASSIGN(const Analysed off,
                              AnalyseProgram(CheckSpec(spec)));
      BP_ASSERT_OK_AND_ASSIGN(const Analysed on,
                              AnalyseProgram(CheckSpec(spec), fp32_grads));
      const std::string what = absl::StrCat(
          datatype == DataType::kBFloat16 ? "bf16" : "fp16",
          sharded ? " sharded" : "");
      const IterationFigures& a = off.iteration.figures;
      const IterationFigures& b = on.iteration.figures;
      ASSERT_GT(a.block_dp_size, 0) << what;
      EXPECT_EQ(a.block_dp_grad_size, a.block_dp_size) << what;
      const bool applies = datatype == DataType::kBFloat16;
      EXPECT_EQ(b.block_dp_size, a.block_dp_size) << what;
      BP_EXPECT_DOUBLE_EXACT(b.block_dp_grad_size,
                             applies ? 2 * a.block_dp_size : a.block_dp_size);
      BP_EXPECT_DOUBLE_EXACT(on.plan.block.block_weight_grad_space_no_sharding,
                             2 * a.block_dp_size);
      if (applies) {
        EXPECT_GT(b.block_dp_time, a.block_dp_time) << what;
        EXPECT_GT(b.total_time, a.total_time) << what;
      } else {
        EXPECT_EQ(b.block_dp_time, a.block_dp_time) << what;
        EXPECT_EQ(b.total_time, a.total_time) << what;
      }
      double grads = 0, gathers = 0;
      ASSERT_TRUE(FindIterationFigure(
          on.iteration,
          sharded ? "dp_reduce_scatter_bytes" : "dp_all_reduce_bytes", &grads));
      ASSERT_TRUE(FindIterationFigure(on.iteration, "dp_all_gather_bytes",
                                      &gathers));
      const double blocks =
          static_cast<double>(on.iteration.step.blocks_per_stage);
      BP_EXPECT_DOUBLE_EXACT(grads, blocks * b.block_dp_grad_size);
      BP_EXPECT_DOUBLE_EXACT(gathers, sharded ? blocks * b.block_dp_size : 0);
    }
  }
}

// options.grad_reduce_datatype overrides the profile: bfloat16 keeps the
// reduction in the weights' bytes under the correction (Megatron-LM's
// --grad-reduce-in-bf16), float32 moves the float32 gradients without it
// (--accumulate-allreduce-grads-in-fp32), in either precision accounting.
TEST(AnalyzeIteration, GradReduceDatatypeOverridesTheProfile) {
  Corrections fp32_grads;
  fp32_grads.Set(Correction::kFp32GradientReduction, true);
  for (PrecisionAccounting precision :
       {PrecisionAccounting::kMegatronMixed, PrecisionAccounting::kCalculon}) {
    TestMapping mapping;
    mapping.d = 4;
    MappingSpec spec = TestSpec(mapping);
    auto& training = std::get<TransformerTrainingMappingSpec>(spec);
    training.options.datatype = DataType::kBFloat16;
    training.options.precision = precision;
    for (auto* engine : {&training.system.matrix, &training.system.vector}) {
      engine->rates[DataType::kBFloat16] = engine->rates[DataType::kFloat16];
    }
    BP_ASSERT_OK_AND_ASSIGN(const Analysed plain,
                            AnalyseProgram(CheckSpec(spec)));
    const double weights = plain.iteration.figures.block_dp_size;
    ASSERT_GT(weights, 0);
    EXPECT_EQ(plain.iteration.figures.block_dp_grad_size, weights);
    training.options.grad_reduce_datatype = DataType::kBFloat16;
    BP_ASSERT_OK_AND_ASSIGN(const Analysed bf16,
                            AnalyseProgram(CheckSpec(spec), fp32_grads));
    EXPECT_EQ(bf16.iteration.figures.block_dp_grad_size, weights);
    BP_EXPECT_DOUBLE_EXACT(bf16.iteration.figures.total_time,
                           plain.iteration.figures.total_time);
    training.options.grad_reduce_datatype = DataType::kFloat32;
    BP_ASSERT_OK_AND_ASSIGN(const Analysed fp32,
                            AnalyseProgram(CheckSpec(spec)));
    BP_EXPECT_DOUBLE_EXACT(fp32.iteration.figures.block_dp_grad_size,
                           2 * weights);
    EXPECT_GT(fp32.iteration.figures.block_dp_time,
              plain.iteration.figures.block_dp_time);
  }
}

// The gradients are reduced in their own datatype, not the weights': with
// FP8 weights (Megatron-LM's --fp8-param-gather) and --grad-reduce-in-bf16
// the reduction moves two bytes per element, the weights' all-gather one.
TEST(AnalyzeIteration, GradReduceDatatypeIsNotTheWeights) {
  TestMapping mapping;
  mapping.d = 4;
  mapping.optimizer_sharding = true;
  MappingSpec spec = TestSpec(mapping);
  auto& training = std::get<TransformerTrainingMappingSpec>(spec);
  training.options.datatype = DataType::kBFloat16;
  training.options.precision = PrecisionAccounting::kMegatronMixed;
  training.options.gemm_datatype = DataType::kFloat8;
  training.options.weight_datatype = DataType::kFloat8;
  for (DataType d : {DataType::kBFloat16, DataType::kFloat8}) {
    for (auto* engine : {&training.system.matrix, &training.system.vector}) {
      engine->rates[d] = engine->rates[DataType::kFloat16];
    }
  }
  training.options.grad_reduce_datatype = DataType::kBFloat16;
  BP_ASSERT_OK_AND_ASSIGN(const Analysed bf16, AnalyseProgram(CheckSpec(spec)));
  const IterationFigures& f = bf16.iteration.figures;
  ASSERT_GT(f.block_dp_size, 0);
  BP_EXPECT_DOUBLE_EXACT(f.block_dp_grad_size, 2 * f.block_dp_size);
  BP_EXPECT_DOUBLE_EXACT(
      f.block_dp_grad_size,
      bf16.plan.block.block_weight_grad_space_no_sharding / 2);
}

// Correction scheduled_in_flight: the memory analysis holds the command
// order's in-flight microbatches (1f1b min(m, p); interleaved Megatron-LM's
// warm-up plus one, InterleavedFirstStagePeakChunks / v), equal to
// Calculon's factor when p | m >= p and different otherwise; the times do
// not change.
TEST(AnalyzeMemory, ScheduledInFlightCorrection) {
  Corrections scheduled;
  scheduled.Set(Correction::kScheduledInFlight, true);
  struct Case {
    int64_t p, v, m;
  };
  for (const Case& c : {Case{4, 2, 8}, Case{4, 2, 6}, Case{4, 2, 2},
                        Case{4, 1, 2}, Case{4, 1, 8}, Case{1, 1, 4}}) {
    TestMapping mapping;
    mapping.p = c.p;
    mapping.v = c.v;
    mapping.global_batch = c.m;
    BP_ASSERT_OK_AND_ASSIGN(const Analysed calculon, Analyse(mapping));
    BP_ASSERT_OK_AND_ASSIGN(const Analysed refined,
                            Analyse(mapping, scheduled));
    const double p = static_cast<double>(c.p), v = static_cast<double>(c.v);
    const double m = static_cast<double>(c.m);
    const double in_flight =
        c.p == 1 ? 1
        : c.v > 1
            ? static_cast<double>(InterleavedFirstStagePeakChunks(c.p, c.v, c.m)) / v
            : std::min(m, p);
    const double factor =
        std::min(m, p) * (c.v > 1 ? 1 + (p - 1) / (v * p) : 1);
    const std::string what = absl::StrCat("p ", c.p, " v ", c.v, " m ", c.m);
    EXPECT_EQ(refined.iteration.figures.peak_inflight_microbatches, in_flight)
        << what;
    BP_EXPECT_DOUBLE_EQ(calculon.iteration.figures.peak_inflight_microbatches,
                        factor);
    const BlockFigures& b = refined.plan.block;
    const double bpp =
        static_cast<double>(refined.iteration.step.blocks_per_stage);
    BP_EXPECT_NEAR(refined.memory.figures.act_space,
                   b.block_act_working_space +
                       b.block_act_storage_space * (bpp * in_flight - 1),
                   1e-12);
    EXPECT_EQ(refined.iteration.figures.total_time,
              calculon.iteration.figures.total_time)
        << what;
  }
  // Where they differ: p | m >= p agrees with Calculon; 6 of 6 microbatches
  // (Megatron-LM's group of 6) against 5.5; 1 against 2.75 for m < p.
  TestMapping leftover;
  leftover.p = 4;
  leftover.v = 2;
  leftover.global_batch = 6;
  BP_ASSERT_OK_AND_ASSIGN(const Analysed a, Analyse(leftover, scheduled));
  EXPECT_EQ(a.iteration.figures.peak_inflight_microbatches, 6);
}

// ComputeMemory assigns every figure whatever the figures held before (the
// search reuses one scratch): into figures full of NaN, the same as into
// fresh ones, with and without training, recomputation, offload and the
// last stage's copy of a tied table, with first and last stage extras (the
// search's call).
TEST(AnalyzeMemory, EveryFigureAssigned) {
  TestMapping mapping;
  mapping.p = 2;
  mapping.d = 2;
  BP_ASSERT_OK_AND_ASSIGN(const Analysed a, Analyse(mapping));
  StageExtras extras;
  extras.first.block_weight_space = 1e6;
  extras.first.block_act_working_space = 2e6;
  extras.last.block_weight_space = 3e6;
  extras.last.block_optimizer_space = 4e6;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Every combination of the four switches, one bit each.
  for (int variant = 0; variant < 16; ++variant) {
    StepShape step = a.iteration.step;
    step.training = (variant & 1) != 0;
    step.recompute =
        (variant & 2) != 0 ? RecomputePolicy::kFull : RecomputePolicy::kNone;
    step.offload.weights = step.offload.activations = step.offload.optimizer =
        (variant & 4) != 0;
    step.embedding_copy = (variant & 8) != 0;
    MemoryFigures fresh;
    ComputeMemory(a.plan.block, extras, step, fresh);
    MemoryFigures dirty;
#define BP_POISON(name, ...) dirty.name = nan;
    BP_MEMORY_FIGURES(BP_POISON)
    BP_MEMORY_TERMS(BP_POISON)
#undef BP_POISON
    dirty.checkpoint_min_defined = !fresh.checkpoint_min_defined;
    dirty.tier1_capacity = dirty.tier2_capacity = nan;
    ComputeMemory(a.plan.block, extras, step, dirty);
#define BP_EXPECT_SAME(name, ...)                                   \
  EXPECT_EQ(absl::StrCat(dirty.name), absl::StrCat(fresh.name)) \
      << #name << " variant=" << variant;
    BP_MEMORY_FIGURES(BP_EXPECT_SAME)
    BP_MEMORY_TERMS(BP_EXPECT_SAME)
    BP_EXPECT_SAME(tier1_capacity)
    BP_EXPECT_SAME(tier2_capacity)
    BP_EXPECT_SAME(checkpoint_min_defined)
#undef BP_EXPECT_SAME
  }
}

// StateTier1Bytes is ComputeMemory's tier-1 requirement without its
// activation terms: at most the requirement, and equal to it when the
// activations are 0, with every offload, recomputation, training and
// precision; StateExceedsTier1 is then MemoryTier1Fits's answer.
TEST(AnalyzeMemory, StateTier1BytesIsTheRequirementWithoutActivations) {
  const auto state_of = [](const BlockFigures& b) {
    return MemoryStateOf(b, StageExtras()).block;
  };
  TestMapping mapping;
  mapping.p = 2;
  mapping.d = 2;
  BP_ASSERT_OK_AND_ASSIGN(const Analysed a, Analyse(mapping));
  BlockFigures no_activations = a.plan.block;
  no_activations.block_act_working_space = 0;
  no_activations.block_act_storage_space = 0;
  no_activations.block_act_checkpoint_size = 0;
  no_activations.block_act_grad_space = 0;
  ASSERT_GT(a.plan.block.block_act_working_space, 0);
  for (int variant = 0; variant < 32; ++variant) {
    StepShape step = a.iteration.step;
    step.training = (variant & 1) != 0;
    step.recompute =
        (variant & 2) != 0 ? RecomputePolicy::kFull : RecomputePolicy::kNone;
    step.offload.weights = (variant & 4) != 0;
    step.offload.optimizer = (variant & 8) != 0;
    step.offload.activations = step.offload.weights;
    step.precision = (variant & 16) != 0 ? PrecisionAccounting::kMegatronMixed
                                         : PrecisionAccounting::kCalculon;
    MemoryFigures with, without;
    ComputeMemory(a.plan.block, step, with);
    ComputeMemory(no_activations, step, without);
    const double state = StateTier1Bytes(state_of(a.plan.block), step);
    EXPECT_GT(state, 0) << "variant=" << variant;
    EXPECT_LT(state, with.proc_mem_tier1_cap_req) << "variant=" << variant;
    EXPECT_EQ(StateTier1Bytes(state_of(no_activations), step),
              without.proc_mem_tier1_cap_req)
        << "variant=" << variant;
    EXPECT_EQ(StateExceedsTier1(state_of(no_activations), step),
              !MemoryTier1Fits(without))
        << "variant=" << variant;
    // A tier 1 the state alone is over.
    MemoryTier small = *step.mem1;
    small.gib = state / kGiB / 2;
    step.mem1 = &small;
    ComputeMemory(no_activations, step, without);
    EXPECT_TRUE(StateExceedsTier1(state_of(no_activations), step)) << variant;
    EXPECT_FALSE(MemoryTier1Fits(without)) << variant;
  }
}

// The search bounds a block from the figures it keeps beside the block's
// tiers (BoundFiguresOf): the same bound, bit for bit, on every kind of
// shape (analytic with and without interleaving and a bubble reduction,
// simulated, and DualPipe's overlapped F&B), for a block whose every
// figure is distinct, so that a figure BoundFiguresOf drops changes it.
TEST(StepTimeLowerBound, BoundFiguresGiveTheBlocksBound) {
  BlockFigures block;
  double value = 0;
#define BP_SET_FIGURE(name, ...) block.name = (value += 1.25) * 1e-3;
  BP_BLOCK_FIGURES(BP_SET_FIGURE)
#undef BP_SET_FIGURE
  const BoundFigures bound = BoundFiguresOf(block);
  const struct {
    int64_t p, v, m, bpp, reduction, stages_per_rank;
    std::optional<ScheduleKind> schedule;
  } shapes[] = {{1, 1, 4, 8, 0, 1, std::nullopt},
                {4, 2, 6, 4, 0, 1, std::nullopt},
                {8, 1, 3, 3, 1, 1, std::nullopt},
                {8, 2, 16, 4, 1, 1, std::nullopt},
                {4, 1, 8, 2, 0, 1, ScheduleKind::kZbH1},
                {4, 1, 8, 2, 0, 1, ScheduleKind::kGPipe},
                {4, 2, 8, 2, 0, 1, ScheduleKind::kZbV},
                {4, 1, 8, 2, 0, 2, ScheduleKind::kDualPipe},
                {4, 2, 8, 2, 0, 1, ScheduleKind::kDualPipeV}};
  for (const auto& shape : shapes) {
    StepShape s;
    s.p = shape.p;
    s.v = shape.v;
    s.m = shape.m;
    s.blocks_per_stage = shape.bpp;
    s.blocks_per_chunk = shape.bpp / shape.v;
    s.bubble_reduction_blocks = shape.reduction;
    s.stages_per_rank = shape.stages_per_rank;
    s.simulated_schedule = shape.schedule;
    const double want = StepTimeLowerBound(block, s);
    EXPECT_GT(want, 0);
    EXPECT_EQ(StepTimeLowerBound(bound, s), want)
        << "p=" << s.p << " v=" << s.v << " m=" << s.m << " schedule="
        << (shape.schedule ? std::string(ScheduleKindName(*shape.schedule))
                           : std::string("analytic"));
  }
}

}  // namespace
}  // namespace blueprint
