// Every row of tests/megatron/dense.csv imports, checks and pads its
// vocabulary as Megatron-LM does; every row of moe.csv fails with errors
// naming the mixture-of-experts flags it cannot model (README.md).
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "core/adapters/calculon.h"
#include "core/adapters/megatron.h"
#include "core/adapters/megatron_catalogue.h"
#include "core/pipeline/pipeline.h"
#include "core/spec/check.h"
#include "core/spec/program.h"
#include "core/spec/spec.h"
#include "core/testing/files.h"
#include "gtest/gtest.h"

namespace blueprint {
namespace {

using test_files::ReadFile;

// The rows of a CSV file without quoting (the cases have none; lines end in
// "\r\n"): column name -> value. The last column, `flags`, may hold anything
// but a line end.
std::vector<std::map<std::string, std::string>> ReadCsv(
    const std::string& path) {
  const std::string text = ReadFile(path);
  std::vector<std::string> lines;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    absl::ConsumeSuffix(&line, "\r");
    lines.emplace_back(line);
  }
  EXPECT_FALSE(lines.empty()) << path;
  if (lines.empty()) return {};
  const std::vector<std::string> header = absl::StrSplit(lines[0], ',');
  std::vector<std::map<std::string, std::string>> rows;
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::vector<std::string> cells = absl::StrSplit(
        lines[i], absl::MaxSplits(',', static_cast<int>(header.size()) - 1));
    EXPECT_EQ(cells.size(), header.size()) << path << ":" << i + 1;
    std::map<std::string, std::string> row;
    for (size_t j = 0; j < header.size() && j < cells.size(); ++j) {
      row[header[j]] = cells[j];
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

// Calculon's h100_80g_nvl8, the system the cases were computed for.
System H100() {
  const std::string seed =
      ReadFile("core/adapters/fuzz_seeds/system-h100_80g_nvl8");
  absl::StatusOr<System> system = FromCalculonSystem(seed.substr(1));
  EXPECT_TRUE(system.ok()) << system.status();
  return system.ok() ? *system : System{};
}

// The cell of `column` in `row` ("" and a failure when there is none).
std::string Cell(const std::map<std::string, std::string>& row,
                 const std::string& column) {
  const auto it = row.find(column);
  EXPECT_NE(it, row.end()) << column;
  return it == row.end() ? std::string() : it->second;
}

std::vector<std::string> Words(const std::string& flags) {
  return absl::StrSplit(flags, ' ', absl::SkipEmpty());
}

double Number(const std::map<std::string, std::string>& row,
              const std::string& column) {
  double value = 0;
  EXPECT_TRUE(absl::SimpleAtod(Cell(row, column), &value)) << column;
  return value;
}

// Every dense row imports, checks, pads its vocabulary as Megatron-LM does,
// and (the oracle) through the whole analysis (what `blueprint
// analyze` runs; a row over memory capacity still has its figures) gives
// Megatron-LM's parameters and model FLOPs within 1e-12 and its weight +
// optimizer bytes within 1e-3 (its estimate puts the final norm on the first
// stage; the model puts it on the last).
TEST(MegatronCsv, DenseRowsImportCheckAndMatchMegatronsAccounting) {
  const System system = H100();
  const auto rows = ReadCsv("tests/megatron/dense.csv");
  EXPECT_EQ(rows.size(), 30u);
  for (const auto& row : rows) {
    SCOPED_TRACE(Cell(row, "id"));
    absl::StatusOr<MappingSpec> spec =
        FromMegatronArgs(Words(Cell(row, "flags")), system);
    ASSERT_TRUE(spec.ok()) << spec.status();
    absl::StatusOr<TypedProgram> program = CheckSpec(*spec);
    ASSERT_TRUE(program.ok()) << program.status();
    int64_t padded = 0;
    ASSERT_TRUE(absl::SimpleAtoi(Cell(row, "padded_vocab"), &padded));
    EXPECT_EQ(program->derived.padded_vocabulary, padded);
    // The columns that restate the command line agree with the spec.
    const auto& s = std::get<TransformerTrainingMappingSpec>(*spec);
    EXPECT_EQ(std::to_string(s.parallelism.tensor.degree), Cell(row, "tp"));
    EXPECT_EQ(std::to_string(s.parallelism.pipeline.degree), Cell(row, "pp"));
    EXPECT_EQ(std::to_string(s.batch.global_batch_size), Cell(row, "gbs"));
    EXPECT_EQ(std::to_string(s.batch.microbatch_size), Cell(row, "mbs"));
    EXPECT_EQ(std::to_string(s.model.seq_size), Cell(row, "seq"));
    EXPECT_EQ(std::to_string(program->derived.world_size), Cell(row, "world"));
    absl::StatusOr<PipelineResult> result = RunPipeline(*program);
    ASSERT_TRUE(result.ok()) << result.status();
    const IterationFigures& it = result->iteration.figures;
    const auto relative = [](double got, double want) {
      return std::fabs(got - want) / std::fabs(want);
    };
    EXPECT_LE(relative(it.parameters_total, Number(row, "parameters_total")),
              1e-12)
        << it.parameters_total;
    EXPECT_LE(
        relative(it.parameters_active, Number(row, "parameters_active")),
        1e-12)
        << it.parameters_active;
    EXPECT_LE(relative(it.model_flops_per_iteration,
                       Number(row, "model_flops_per_iteration")),
              1e-12)
        << it.model_flops_per_iteration;
    EXPECT_LE(relative(result->memory.figures.weight_and_optimizer_bytes,
                       Number(row, "weight_optimizer_bytes_most_loaded")),
              1e-3)
        << result->memory.figures.weight_and_optimizer_bytes;
  }
}


TEST(MegatronCsv, MoeRowsFailNamingTheirUnmodelledFlags) {
  const System system = H100();
  const auto rows = ReadCsv("tests/megatron/moe.csv");
  EXPECT_EQ(rows.size(), 30u);
  for (const auto& row : rows) {
    SCOPED_TRACE(Cell(row, "id"));
    absl::StatusOr<MappingSpec> spec =
        FromMegatronArgs(Words(Cell(row, "flags")), system);
    ASSERT_FALSE(spec.ok());
    std::set<std::string> fields;
    constexpr char kPrefix[] = "unsupported Megatron-LM flag ";
    for (absl::string_view line :
         absl::StrSplit(spec.status().message(), '\n')) {
      // Every error is an unmodelled flag's: one line naming it and why.
      ASSERT_TRUE(absl::ConsumePrefix(&line, kPrefix)) << line;
      const std::string flag(line.substr(0, line.find_first_of(" :")));
      const MegatronCatalogueEntry* entry = FindMegatronCatalogueEntry(flag);
      ASSERT_NE(entry, nullptr) << line;
      EXPECT_EQ(entry->flag_class, MegatronFlagClass::kUnmodelled) << line;
      EXPECT_TRUE(absl::StrContains(line, entry->reason)) << line;
      fields.insert(flag);
    }
    EXPECT_EQ(fields.count("--num-experts"), 1u) << absl::StrJoin(fields, " ");
    EXPECT_EQ(fields.count("--moe-ffn-hidden-size"), 1u)
        << absl::StrJoin(fields, " ");
    EXPECT_TRUE(absl::StrContains(spec.status().message(),
                                  "--num-experts: mixture-of-experts layers "
                                  "are not modelled") ||
                absl::StrContains(spec.status().message(),
                                  "\": mixture-of-experts layers are not "
                                  "modelled"));
  }
}

}  // namespace
}  // namespace blueprint
