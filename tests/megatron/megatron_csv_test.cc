// Every row of tests/megatron/dense.csv and moe.csv imports, checks, pads its
// vocabulary as Megatron-LM does and gives Megatron-LM's parameters and model
// FLOPs through the whole analysis (README.md).
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "core/adapters/calculon.h"
#include "core/adapters/megatron.h"
#include "core/pipeline/pipeline.h"
#include "core/spec/check.h"
#include "core/spec/program.h"
#include "core/spec/spec.h"
#include "core/taskir/task_ir.h"
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

double Relative(double got, double want) {
  return std::fabs(got - want) / std::fabs(want);
}

// The checked program of a row's command line, whose columns that restate
// it (tp, pp, ep, world, gbs, mbs, seq) and padded vocabulary agree with it;
// nullopt (and a failure) when it does not import or check.
std::optional<TypedProgram> ImportRow(
    const std::map<std::string, std::string>& row, const System& system) {
  absl::StatusOr<MappingSpec> spec =
      FromMegatronArgs(Words(Cell(row, "flags")), system);
  EXPECT_TRUE(spec.ok()) << spec.status();
  if (!spec.ok()) return std::nullopt;
  absl::StatusOr<TypedProgram> program = CheckSpec(*spec);
  EXPECT_TRUE(program.ok()) << program.status();
  if (!program.ok()) return std::nullopt;
  int64_t padded = 0;
  EXPECT_TRUE(absl::SimpleAtoi(Cell(row, "padded_vocab"), &padded));
  EXPECT_EQ(program->derived.padded_vocabulary, padded);
  const auto& s = std::get<TransformerTrainingMappingSpec>(*spec);
  EXPECT_EQ(std::to_string(s.parallelism.tensor.degree), Cell(row, "tp"));
  EXPECT_EQ(std::to_string(s.parallelism.pipeline.degree), Cell(row, "pp"));
  EXPECT_EQ(std::to_string(s.batch.global_batch_size), Cell(row, "gbs"));
  EXPECT_EQ(std::to_string(s.batch.microbatch_size), Cell(row, "mbs"));
  EXPECT_EQ(std::to_string(s.model.seq_size), Cell(row, "seq"));
  EXPECT_EQ(std::to_string(program->derived.world_size), Cell(row, "world"));
  if (row.count("ep") > 0) {
    EXPECT_EQ(std::to_string(program->derived.expert), Cell(row, "ep"));
  }
  return *std::move(program);
}

// Megatron-LM's parameters (total and active) and model FLOPs, within 1e-12.
void ExpectMegatronsCounts(const std::map<std::string, std::string>& row,
                           double total, double active, double flops) {
  EXPECT_LE(Relative(total, Number(row, "parameters_total")), 1e-12) << total;
  EXPECT_LE(Relative(active, Number(row, "parameters_active")), 1e-12)
      << active;
  EXPECT_LE(Relative(flops, Number(row, "model_flops_per_iteration")), 1e-12)
      << flops;
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
    const std::optional<TypedProgram> program = ImportRow(row, system);
    ASSERT_TRUE(program.has_value());
    absl::StatusOr<PipelineResult> result = RunPipeline(*program);
    ASSERT_TRUE(result.ok()) << result.status();
    const IterationFigures& it = result->iteration.figures;
    ExpectMegatronsCounts(row, it.parameters_total, it.parameters_active,
                          it.model_flops_per_iteration);
    EXPECT_LE(Relative(result->memory.figures.weight_and_optimizer_bytes,
                       Number(row, "weight_optimizer_bytes_most_loaded")),
              1e-3)
        << result->memory.figures.weight_and_optimizer_bytes;
  }
}

// Every MoE row (Mixtral, Qwen3-MoE, DeepSeek-V2-Lite and V3: routed and
// shared experts, top-k routing, dense-then-MoE layer patterns, latent
// attention, multi-token prediction, expert parallelism) imports, checks and
// runs through the whole analysis, with Megatron-LM's parameters and model
// FLOPs within 1e-12.
TEST(MegatronCsv, MoeRowsImportCheckAndMatchMegatronsAccounting) {
  const System system = H100();
  const auto rows = ReadCsv("tests/megatron/moe.csv");
  EXPECT_EQ(rows.size(), 30u);
  for (const auto& row : rows) {
    SCOPED_TRACE(Cell(row, "id"));
    const std::optional<TypedProgram> program = ImportRow(row, system);
    ASSERT_TRUE(program.has_value());
    ASSERT_TRUE(program->model().moe.has_value());
    absl::StatusOr<PipelineResult> result = RunPipeline(*program);
    ASSERT_TRUE(result.ok()) << result.status();
    const IterationFigures& it = result->iteration.figures;
    ExpectMegatronsCounts(row, it.parameters_total, it.parameters_active,
                          it.model_flops_per_iteration);
  }
}

// The weights, gradients and optimizer state of the MTP blocks' own layers
// besides their transformer block: the 2h -> h projection and the two
// norms of each (tasks MtpN_Projection, MtpN_Norms). Megatron-LM's
// compute_weight_and_optimizer_memory leaves them out (it counts an MTP
// block as one transformer layer), although MultiTokenPredictionLayer has
// them: at t = 1 the projection is 0.1-0.2% of DeepSeek-V3's rank.
double MtpOwnLayerBytes(const PipelineResult& result) {
  double bytes = 0;
  for (const Task& task : result.tasks.tasks) {
    if (!absl::StartsWith(task.name, "Mtp") ||
        !(absl::EndsWith(task.name, "_Projection") ||
          absl::EndsWith(task.name, "_Norms"))) {
      continue;
    }
    bytes += task.footprint.weight + task.footprint.weight_grad_sharded +
             task.footprint.optimizer;
  }
  return bytes;
}

// Megatron-LM's weight + optimizer bytes of the most loaded rank, whose
// expert parameters are sharded over the expert-parallel ranks and their
// optimizer state over the expert data-parallel ranks, within the dense
// rows' tolerance once the MTP layers it leaves out are set aside (a named
// term: MtpOwnLayerBytes, 0 without MTP).
TEST(MegatronCsv, MoeRowsMatchMegatronsWeightAndOptimizerBytes) {
  const System system = H100();
  int with_mtp = 0;
  for (const auto& row : ReadCsv("tests/megatron/moe.csv")) {
    SCOPED_TRACE(Cell(row, "id"));
    const std::optional<TypedProgram> program = ImportRow(row, system);
    ASSERT_TRUE(program.has_value());
    absl::StatusOr<PipelineResult> result = RunPipeline(*program);
    ASSERT_TRUE(result.ok()) << result.status();
    const double mtp = MtpOwnLayerBytes(*result);
    EXPECT_EQ(mtp > 0, program->model().mtp_layers > 0);
    with_mtp += mtp > 0 ? 1 : 0;
    const double bytes = result->memory.figures.weight_and_optimizer_bytes;
    EXPECT_LE(Relative(bytes - mtp,
                       Number(row, "weight_optimizer_bytes_most_loaded")),
              1e-3)
        << bytes << " - " << mtp;
  }
  EXPECT_GT(with_mtp, 0);
}

}  // namespace
}  // namespace blueprint
