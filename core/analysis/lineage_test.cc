// The lineage of the iteration and memory figures (lineage.h): every figure
// has a formula whose names resolve among its sources, and each formula
// evaluates to its figure.
#include "core/analysis/analyze.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/analysis/analyze_test_util.h"
#include "core/analysis/figures.h"
#include "core/analysis/lineage.h"
#include "core/base/format.h"
#include "core/base/units.h"
#include "core/plan/hardware.h"
#include "core/plan/plan.h"
#include "core/schedule/schedule_ir.h"
#include "core/spec/check.h"
#include "core/testing/doubles.h"
#include "core/testing/programs.h"
#include "core/testing/status_matchers.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

using analyze_test::Analyse;
using analyze_test::AnalyseProgram;
using analyze_test::Analysed;
using test_programs::TestMapping;

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
    EXPECT_EQ(static_cast<int>(IterationFormulas(true).size()), figures);
    figures = 0;
    auto memory = [&](const char* name, double) {
      ++figures;
      ExpectFormulaOf(FormulaScope::kMemory, name, a.memory.lineage, values);
    };
    ForEachMemoryFigure(a.memory.figures, memory);
    ForEachMemoryTerm(a.memory.figures, memory);
    EXPECT_EQ(static_cast<int>(a.memory.lineage.size()), figures);
    EXPECT_EQ(static_cast<int>(MemoryFormulas().size()), figures);
    EXPECT_EQ(static_cast<int>(MemoryFormulas(true).size()), figures);
  }
}

// An explicit layout's rows (BP_LAYOUT_FORMULAS) replace theirs in the
// lineage of a spec with stage_blocks, each consistent, and only there.
TEST(Lineage, LayoutFormulasReplaceTheirRows) {
  TestMapping m;
  m.p = 4;
  MappingSpec spec = TestSpec(m);
  std::get<TransformerTrainingMappingSpec>(spec)
      .parallelism.pipeline.stage_blocks = {1, 3, 3, 1};
  BP_ASSERT_OK_AND_ASSIGN(const Analysed a, AnalyseProgram(CheckSpec(spec)));
  for (const FormulaScope scope :
       {FormulaScope::kIteration, FormulaScope::kMemory}) {
    ASSERT_FALSE(LayoutFormulas(scope).empty());
    for (const FigureFormula& row : LayoutFormulas(scope)) {
      EXPECT_EQ(FormulaProblems(scope, row), std::vector<std::string>())
          << row.figure;
      const FigureFormula* plain = FindFormula(scope, row.figure);
      const FigureFormula* layout = FindFormula(scope, row.figure, true);
      ASSERT_NE(plain, nullptr) << row.figure;
      ASSERT_NE(layout, nullptr) << row.figure;
      EXPECT_NE(std::string(plain->formula), row.formula);
      EXPECT_EQ(std::string(layout->formula), row.formula);
    }
    const std::vector<FigureLineage>& lineage =
        scope == FormulaScope::kIteration ? a.iteration.lineage
                                          : a.memory.lineage;
    int replaced = 0;
    for (const FigureLineage& f : lineage) {
      for (const FigureFormula& row : LayoutFormulas(scope)) {
        if (f.figure != row.figure) continue;
        ++replaced;
        EXPECT_EQ(f.formula, row.formula);
      }
    }
    EXPECT_EQ(replaced, static_cast<int>(LayoutFormulas(scope).size()));
  }
  // The end stages' rows read the layout.
  for (const FigureLineage& f : a.iteration.lineage) {
    if (f.figure != "stage_imbalance_time") continue;
    EXPECT_NE(std::find(f.lineage.sources.begin(), f.lineage.sources.end(),
                        "spec:parallelism.pipeline.stage_blocks"),
              f.lineage.sources.end());
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
      if (name == "layout_gap_time" && args.size() == 1) {
        return LayoutGapTime(args[0]);
      }
      failed_ = true;  // a function of the system: not evaluated here
      return 0;
    }
    const std::optional<double> value = ValueOf(scope_, name, values_);
    if (!value) failed_ = true;
    return value.value_or(0);
  }

  // layout_gap_time(n), as its FormulaFunctions row says.
  double LayoutGapTime(double n) {
    auto value = [&](const char* name) {
      const std::optional<double> v = ValueOf(scope_, name, values_);
      if (!v) failed_ = true;
      return v.value_or(0);
    };
    if (value("blocks_per_chunk") > 1) {
      return n * (value("baseblock_fw_time") + value("edgeblock_fw_time") +
                  value("baseblock_bw_time") + value("edgeblock_bw_time")) /
             2;
    }
    return n * (value("edgeblock_fw_time") + value("edgeblock_bw_time"));
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
  std::vector<MappingSpec> specs;
  for (const TestMapping& m : mappings) specs.push_back(TestSpec(m));
  // Explicit layouts (BP_LAYOUT_FORMULAS' rows) with a vocabulary: lighter
  // end stages, a heavy last stage, interleaved.
  TestMapping four = base;
  four.p = 4;
  for (const auto& [v, vocabulary, layout] :
       {std::tuple<int64_t, int64_t, std::vector<int64_t>>{
            1, 256, {1, 3, 3, 1}},
        {1, 32000, {2, 2, 3, 1}},
        {2, 32000, {1, 1, 1, 1, 1, 1, 1, 1}}}) {
    TestMapping mapping = four;
    mapping.v = v;
    MappingSpec spec = TestSpec(mapping);
    auto& training = std::get<TransformerTrainingMappingSpec>(spec);
    training.model.vocabulary.size = vocabulary;
    training.model.vocabulary.tied = v == 2;
    training.parallelism.pipeline.stage_blocks = layout;
    specs.push_back(spec);
  }
  int evaluated = 0;
  for (const MappingSpec& spec : specs) {
    BP_ASSERT_OK_AND_ASSIGN(const Analysed a,
                            AnalyseProgram(CheckSpec(spec)));
    const FormulaValues values =
        FormulaValuesOf(a.plan, a.iteration, a.memory);
    const bool layout = HasExplicitLayout(a.iteration.step);
    auto check = [&](FormulaScope scope, const char* name, double value) {
      const FigureFormula* row = FindFormula(scope, name, layout);
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
  EXPECT_GT(evaluated, 9 * 40);
}

}  // namespace
}  // namespace blueprint
