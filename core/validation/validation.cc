#include "core/validation/validation.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/adapters/calculon.h"
#include "core/adapters/megatron.h"
#include "core/base/field_errors.h"
#include "core/base/format.h"
#include "core/base/json.h"
#include "core/base/json_reader.h"
#include "core/pipeline/pipeline.h"
#include "core/presets/presets.h"
#include "core/spec/check.h"

namespace blueprint {
namespace {

using Json = nlohmann::json;

constexpr char kCorpusFormat[] = "blueprinting.validation_corpus/1";
constexpr char kBaselineFormat[] = "blueprinting.validation_baseline/3";

// Spellings of the corpus's enums; each table lists every value once.
template <typename Enum>
struct Named {
  Enum value;
  const char* name;
};

constexpr Named<MeasuredMetric> kMetricRows[] = {
    {MeasuredMetric::kIterationSeconds, "iteration_s"},
    {MeasuredMetric::kTokensPerSecPerGpu, "tokens_per_sec_per_gpu"},
    {MeasuredMetric::kTflopsPerGpu, "tflops_per_gpu"},
    {MeasuredMetric::kMfu, "mfu"},
};

constexpr Named<FlopDefinition> kFlopRows[] = {
    {FlopDefinition::kMegatronModel, "megatron_model"},
    {FlopDefinition::kNarayananEq3, "narayanan_eq3"},
    {FlopDefinition::kHardware, "hardware"},
};

template <typename Enum, size_t N>
std::optional<Enum> ParseNamed(const Named<Enum> (&rows)[N],
                               const std::string& s) {
  for (const Named<Enum>& row : rows) {
    if (s == row.name) return row.value;
  }
  return std::nullopt;
}

template <typename Enum, size_t N>
const char* NameOf(const Named<Enum> (&rows)[N], Enum value) {
  for (const Named<Enum>& row : rows) {
    if (row.value == value) return row.name;
  }
  return "";
}

template <typename Enum, size_t N>
std::vector<std::string> ChoicesOf(const Named<Enum> (&rows)[N]) {
  std::vector<std::string> out;
  for (const Named<Enum>& row : rows) out.push_back(row.name);
  return out;
}

std::optional<MeasuredMetric> ParseMetric(const std::string& s) {
  return ParseNamed(kMetricRows, s);
}

std::optional<FlopDefinition> ParseFlops(const std::string& s) {
  return ParseNamed(kFlopRows, s);
}

// Reads one row; the corpus's other members (citation, notes, mapping, ...)
// are documentation and are not read.
void ReadRow(const Json& value, const std::string& path,
             std::vector<FieldError>* errors, ValidationRow* row) {
  JsonObjectReader reader(value, path, errors);
  if (!reader.is_object()) return;
  reader.ReadString("id", &row->id);
  reader.ReadString("source_key", &row->source_key);
  row->summary_source = row->source_key;
  if (value.contains("summary_source")) {
    const std::string path = reader.PathOf("summary_source");
    if (JsonToString(value["summary_source"], path, errors,
                     &row->summary_source) &&
        row->summary_source.empty()) {
      errors->push_back({path, absl::StrCat(path, ": expected a non-empty key"),
                         ErrorCode::kInvalidValue});
    }
  }
  reader.ReadString("group", &row->group);
  reader.ReadString("model", &row->model);
  reader.ReadString("system", &row->system);
  if (reader.ReadInt("gpus", &row->gpus) && row->gpus <= 0) {
    errors->push_back({reader.PathOf("gpus"),
                       absl::StrCat(reader.PathOf("gpus"),
                                    ": expected a positive integer, got ",
                                    row->gpus),
                       ErrorCode::kOutOfRange});
  }
  reader.ReadEnum("measured_metric", &ParseMetric, ChoicesOf(kMetricRows),
                  &row->metric);
  if (reader.ReadDouble("measured_value", &row->measured) &&
      !(row->measured > 0)) {
    errors->push_back(
        {reader.PathOf("measured_value"),
         absl::StrCat(reader.PathOf("measured_value"),
                      ": expected a positive number, got ",
                      FormatDouble(row->measured)),
         ErrorCode::kOutOfRange});
  }
  reader.ReadEnum("flop_definition", &ParseFlops, ChoicesOf(kFlopRows), &row->flops);
  const Json& object = value;
  if (object.contains("skip")) {
    JsonToString(object["skip"], reader.PathOf("skip"), errors, &row->skip);
    if (row->skip.empty()) {
      errors->push_back({reader.PathOf("skip"),
                         absl::StrCat(reader.PathOf("skip"),
                                      ": a skipped row needs its reason"),
                         ErrorCode::kInvalidValue});
    }
    return;
  }
  if (object.contains("mapping_assumed")) {
    JsonToBool(object["mapping_assumed"], reader.PathOf("mapping_assumed"),
               errors, &row->mapping_assumed);
  }
  if (object.contains("uneven_stages")) {
    JsonToBool(object["uneven_stages"], reader.PathOf("uneven_stages"), errors,
               &row->uneven_stages);
  }
  if (object.contains("attention_kernel")) {
    std::string kernel;
    const std::string path = reader.PathOf("attention_kernel");
    if (JsonToString(object["attention_kernel"], path, errors, &kernel)) {
      if (kernel == "unfused") {
        row->unfused_attention = true;
      } else if (kernel != "flash") {
        errors->push_back(UnknownChoiceError(path, {"flash", "unfused"},
                                             object["attention_kernel"]));
      }
    }
  }
  const Json* args = reader.Member("megatron_args");
  if (args == nullptr) return;
  if (!args->is_array()) {
    errors->push_back({reader.PathOf("megatron_args"),
                       absl::StrCat(reader.PathOf("megatron_args"),
                                    ": expected an array, got ",
                                    JsonTypeName(*args)),
                       ErrorCode::kWrongType});
    return;
  }
  for (size_t i = 0; i < args->size(); ++i) {
    std::string arg;
    if (JsonToString((*args)[i],
                     ElementPath(reader.PathOf("megatron_args"), i), errors,
                     &arg)) {
      row->megatron_args.push_back(std::move(arg));
    }
  }
}

// Narayanan et al. 2021 Eq. 3 (with full recompute; 72 instead of 96
// without): the FLOPs those sources divide by the step time.
double NarayananEq3Flops(const TransformerTrainingMappingSpec& spec) {
  const double b = static_cast<double>(spec.batch.global_batch_size);
  const double s = static_cast<double>(spec.model.seq_size);
  const double l = static_cast<double>(spec.model.num_blocks);
  const double h = static_cast<double>(spec.model.hidden);
  const double v = static_cast<double>(spec.model.vocabulary.size);
  const double coefficient =
      spec.parallelism.recompute == RecomputePolicy::kFull ? 96 : 72;
  return coefficient * b * s * l * h * h *
         (1 + s / (6 * h) + v / (16 * l * h));
}

std::string JoinErrors(const absl::Status& status) {
  std::string out;
  for (const FieldError& error : FieldErrorsOf(status)) {
    absl::StrAppend(&out, out.empty() ? "" : "; ", error.message);
  }
  return out;
}

// Predicts one usable row, or says why it cannot be.
void PredictRow(const ValidationRow& row, ModelProfile profile,
                const std::vector<Correction>& without, RowResult* result) {
  const char* system_text = FindPreset(PresetKind::kSystem, row.system);
  if (system_text == nullptr) {
    result->reason = absl::StrCat("no system preset \"", row.system, "\"");
    return;
  }
  absl::StatusOr<System> system = FromCalculonSystem(system_text);
  if (!system.ok()) {
    result->reason = absl::StrCat("system preset: ", JoinErrors(system.status()));
    return;
  }
  std::vector<std::string> notes;
  absl::StatusOr<MappingSpec> spec =
      FromMegatronArgs(row.megatron_args, *system, &notes);
  if (!spec.ok()) {
    result->reason = absl::StrCat("import: ", JoinErrors(spec.status()));
    return;
  }
  auto* training = std::get_if<TransformerTrainingMappingSpec>(&*spec);
  if (training == nullptr) {
    result->reason = "import: not a training spec";
    return;
  }
  training->options.profile = profile;
  if (row.uneven_stages) {
    training->parallelism.pipeline.stage_layout = StageLayout::kUneven;
  }
  if (training->system.name.empty()) training->system.name = row.system;
  absl::StatusOr<TypedProgram> program = CheckSpec(*spec);
  if (!program.ok()) {
    result->reason = absl::StrCat("check: ", JoinErrors(program.status()));
    return;
  }
  for (Correction c : without) program->corrections.Set(c, false);
  if (row.unfused_attention) {
    program->corrections.Set(Correction::kFlashAttention, false);
    program->corrections.Set(Correction::kCausalAttention, false);
  }
  absl::StatusOr<PipelineResult> run = RunPipeline(*program);
  if (!run.ok()) {
    result->reason = absl::StrCat("internal error: ", JoinErrors(run.status()));
    return;
  }
  const double time = run->iteration.figures.total_time;
  if (!(time > 0) || !std::isfinite(time)) {
    result->reason = "the model predicts no step time";
    return;
  }
  result->predicted_time = time;
  result->over_capacity = !run->memory.violations.empty();
  const double gpus = static_cast<double>(row.gpus);
  switch (row.metric) {
    case MeasuredMetric::kIterationSeconds:
      result->predicted = time;
      break;
    case MeasuredMetric::kTokensPerSecPerGpu:
      result->predicted =
          static_cast<double>(training->batch.global_batch_size) *
          static_cast<double>(training->model.seq_size) / (time * gpus);
      break;
    case MeasuredMetric::kTflopsPerGpu: {
      double flops = 0;
      switch (row.flops) {
        case FlopDefinition::kMegatronModel:
          flops = run->iteration.figures.model_flops_per_iteration;
          break;
        case FlopDefinition::kNarayananEq3:
          flops = NarayananEq3Flops(*training);
          break;
        case FlopDefinition::kHardware:
          result->reason =
              "TFLOP/s of an unstated FLOP definition cannot be converted";
          return;
      }
      result->predicted = flops / (time * gpus) / 1e12;
      break;
    }
    case MeasuredMetric::kMfu: {
      const auto peak = training->system.matrix.rates.find(DataType::kBFloat16);
      if (peak == training->system.matrix.rates.end()) {
        result->reason = "MFU: the system has no bfloat16 peak";
        return;
      }
      result->predicted = run->iteration.figures.model_flops_per_iteration /
                          (time * gpus * peak->second.tflops * 1e12);
      break;
    }
  }
  result->error = (result->predicted - row.measured) / row.measured;
  const double tokens = static_cast<double>(training->batch.global_batch_size) *
                        static_cast<double>(training->model.seq_size);
  result->predicted_throughput = tokens / (time * gpus);
  result->measured_throughput =
      row.metric == MeasuredMetric::kIterationSeconds
          ? tokens / (row.measured * gpus)
          : result->predicted_throughput * row.measured / result->predicted;
  result->predicted_ok = true;
}

void Add(const RowResult& r, ErrorSummary* summary) {
  const double abs_error = std::fabs(r.error);
  summary->rows += 1;
  summary->mean_abs_error += abs_error;  // a sum until Finish
  if (summary->rows == 1 || abs_error > summary->max_abs_error) {
    summary->max_abs_error = abs_error;
    summary->max_row = r.row->id;
  }
}

void Finish(ErrorSummary* summary) {
  if (summary->rows > 0) {
    summary->mean_abs_error /= static_cast<double>(summary->rows);
  }
}

std::string Percent(double fraction) {
  return absl::StrFormat("%+.2f%%", fraction * 100);
}

std::string SummaryText(const ErrorSummary& s) {
  return absl::StrCat("rows=", s.rows,
                      " mean_abs_error=", FormatDouble(s.mean_abs_error),
                      " (", absl::StrFormat("%.2f%%", s.mean_abs_error * 100),
                      ") max_abs_error=", FormatDouble(s.max_abs_error), " (",
                      absl::StrFormat("%.2f%%", s.max_abs_error * 100),
                      s.max_row.empty() ? "" : " at ", s.max_row, ")");
}

Json SummaryJson(const ErrorSummary& s) {
  Json out = Json::object();
  out["rows"] = s.rows;
  out["mean_abs_error"] = s.mean_abs_error;
  out["max_abs_error"] = s.max_abs_error;
  out["max_row"] = s.max_row;
  return out;
}

// What makes two rows one run (RepeatedRun).
std::string RunKey(const ValidationRow& row) {
  return absl::StrCat(row.model, "\x1f", row.system, "\x1f", row.gpus, "\x1f",
                      MeasuredMetricName(row.metric), "\x1f",
                      FlopDefinitionName(row.flops), "\x1f", row.uneven_stages,
                      "\x1f", row.unfused_attention, "\x1f",
                      absl::StrJoin(row.megatron_args, "\x1f"));
}

// min over P of sum |P / m - 1|: reached at one of the measured values.
double FloorAbsErrorSum(const std::vector<double>& measured) {
  double best = 0;
  for (size_t i = 0; i < measured.size(); ++i) {
    double sum = 0;
    for (double m : measured) sum += std::fabs(measured[i] / m - 1);
    if (i == 0 || sum < best) best = sum;
  }
  return best;
}

void RepeatedRunTerms(ValidationReport* report) {
  std::map<std::string, std::vector<const RowResult*>> runs;
  std::vector<std::string> order;  // the keys by their first row
  for (const RowResult& r : report->rows) {
    if (!r.predicted_ok) continue;
    const std::string key = RunKey(*r.row);
    std::vector<const RowResult*>& rows = runs[key];
    if (rows.empty()) order.push_back(key);
    rows.push_back(&r);
  }
  // Over the rows the error summaries count.
  for (const auto& [group, summary] : report->by_group) {
    report->floor_by_group[group].rows = summary.rows;
  }
  report->floor_overall.rows = report->overall.rows;
  for (const std::string& key : order) {
    const std::vector<const RowResult*>& rows = runs[key];
    if (rows.size() < 2) continue;
    RepeatedRun run;
    run.group = rows.front()->row->group;
    std::vector<double> measured;
    for (const RowResult* r : rows) {
      run.ids.push_back(r->row->id);
      measured.push_back(r->row->measured);
    }
    run.measured_min = *std::min_element(measured.begin(), measured.end());
    run.measured_max = *std::max_element(measured.begin(), measured.end());
    run.floor_abs_error_sum = FloorAbsErrorSum(measured);
    report->floor_by_group[run.group].floor_mean_abs_error +=
        run.floor_abs_error_sum;
    report->floor_overall.floor_mean_abs_error += run.floor_abs_error_sum;
    report->repeated_runs.push_back(std::move(run));
  }
  auto finish = [](ErrorFloor* floor) {
    if (floor->rows > 0) {
      floor->floor_mean_abs_error /= static_cast<double>(floor->rows);
    }
  };
  for (auto& [group, floor] : report->floor_by_group) finish(&floor);
  finish(&report->floor_overall);
}

// One ranked set as it is gathered: per distinct mapping (RunKey) the sum
// and count of its measured throughputs and its predicted throughput.
struct RankedMappings {
  Ranking ranking;
  std::vector<std::string> run_keys;  // by first row
  std::map<std::string, std::vector<double>> measured;  // run key ->
  std::map<std::string, double> predicted;              // run key ->
};

double Mean(const std::vector<double>& values) {
  double sum = 0;
  for (double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

void AddRanking(const Ranking& r, RankingSummary* summary) {
  if (summary->rankings == 0 || r.tau < summary->min_tau) {
    summary->min_tau = r.tau;
    summary->min_ranking =
        absl::StrCat(r.source_key, "/", r.model, "/", r.system);
  }
  summary->rankings += 1;
  summary->mean_tau += r.tau;  // a sum until the end
  if (r.tau >= kRankingGoal) summary->at_goal += 1;
}

void RankingTerms(ValidationReport* report) {
  std::map<std::string, RankedMappings> sets;
  std::vector<std::string> order;  // the sets by their first row
  for (const RowResult& r : report->rows) {
    if (!r.predicted_ok) continue;
    const ValidationRow& row = *r.row;
    const std::string key =
        absl::StrCat(row.source_key, "\x1f", row.model, "\x1f", row.system);
    RankedMappings& set = sets[key];
    if (set.ranking.ids.empty()) {
      order.push_back(key);
      set.ranking.source_key = row.source_key;
      set.ranking.model = row.model;
      set.ranking.system = row.system;
    }
    set.ranking.ids.push_back(row.id);
    set.ranking.mapping_assumed |= row.mapping_assumed;
    const std::string run = RunKey(row);
    std::vector<double>& measured = set.measured[run];
    if (measured.empty()) set.run_keys.push_back(run);
    measured.push_back(r.measured_throughput);
    set.predicted[run] = r.predicted_throughput;
  }
  for (const std::string& key : order) {
    RankedMappings& set = sets[key];
    if (static_cast<int64_t>(set.run_keys.size()) < kMinRankedMappings) continue;
    std::vector<double> measured;
    std::vector<double> predicted;
    for (const std::string& run : set.run_keys) {
      measured.push_back(Mean(set.measured[run]));
      predicted.push_back(set.predicted[run]);
    }
    set.ranking.mappings = static_cast<int64_t>(set.run_keys.size());
    set.ranking.tau = KendallTauB(measured, predicted);
    AddRanking(set.ranking, set.ranking.mapping_assumed
                                ? &report->rankings_assumed
                                : &report->rankings_printed);
    report->rankings.push_back(std::move(set.ranking));
  }
  for (RankingSummary* s :
       {&report->rankings_printed, &report->rankings_assumed}) {
    if (s->rankings > 0) s->mean_tau /= static_cast<double>(s->rankings);
  }
}

std::string RankingSummaryText(const RankingSummary& s) {
  return absl::StrCat("rankings=", s.rankings,
                      " mean_tau=", FormatDouble(s.mean_tau),
                      " min_tau=", FormatDouble(s.min_tau),
                      s.min_ranking.empty() ? "" : " (at ", s.min_ranking,
                      s.min_ranking.empty() ? "" : ")",
                      " at_goal=", s.at_goal);
}

// A JSON object of a map keyed by name, each value made by `to_json` (in
// the map's key order: the output never depends on hash order).
template <typename Map, typename ToJson>
Json ObjectOf(const Map& map, ToJson to_json) {
  Json out = Json::object();
  for (const auto& [key, value] : map) out[key] = to_json(value);
  return out;
}

Json RankingSummaryJson(const RankingSummary& s) {
  Json out = Json::object();
  out["rankings"] = s.rankings;
  out["mean_tau"] = s.mean_tau;
  out["min_tau"] = s.min_tau;
  out["min_ranking"] = s.min_ranking;
  out["at_goal"] = s.at_goal;
  return out;
}

std::string FloorText(const ErrorFloor& f) {
  return absl::StrCat("rows=", f.rows, " floor_mean_abs_error=",
                      FormatDouble(f.floor_mean_abs_error), " (",
                      absl::StrFormat("%.2f%%", f.floor_mean_abs_error * 100),
                      ")");
}

Json FloorJson(const ErrorFloor& f) {
  Json out = Json::object();
  out["rows"] = f.rows;
  out["floor_mean_abs_error"] = f.floor_mean_abs_error;
  return out;
}

}  // namespace

const char* MeasuredMetricName(MeasuredMetric metric) {
  return NameOf(kMetricRows, metric);
}

double KendallTauB(const std::vector<double>& x, const std::vector<double>& y) {
  const size_t n = std::min(x.size(), y.size());
  double concordant_minus_discordant = 0;
  double pairs = 0;
  double ties_x = 0;
  double ties_y = 0;
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = i + 1; j < n; ++j) {
      pairs += 1;
      const double dx = x[j] - x[i];
      const double dy = y[j] - y[i];
      if (dx == 0) ties_x += 1;
      if (dy == 0) ties_y += 1;
      if (dx != 0 && dy != 0) {
        concordant_minus_discordant += (dx > 0) == (dy > 0) ? 1 : -1;
      }
    }
  }
  const double denominator = (pairs - ties_x) * (pairs - ties_y);
  if (!(denominator > 0)) return 0;
  // std::sqrt is correctly rounded (IEEE 754): identical in both targets.
  return concordant_minus_discordant / std::sqrt(denominator);
}

const char* FlopDefinitionName(FlopDefinition flops) {
  return NameOf(kFlopRows, flops);
}

absl::StatusOr<std::vector<ValidationRow>> ParseCorpus(
    const std::string& text) {
  absl::StatusOr<Json> doc = ParseJson(text);
  if (!doc.ok()) return doc.status();
  std::vector<FieldError> errors;
  JsonObjectReader top(*doc, "", &errors);
  std::string format;
  if (top.ReadString("format", &format) && format != kCorpusFormat) {
    errors.push_back({"format",
                      absl::StrCat("format: expected \"", kCorpusFormat,
                                   "\", got \"", format, "\""),
                      ErrorCode::kUnknownChoice});
  }
  std::vector<ValidationRow> rows;
  if (const Json* list = top.Member("rows")) {
    if (!list->is_array()) {
      errors.push_back({"rows",
                        absl::StrCat("rows: expected an array, got ",
                                     JsonTypeName(*list)),
                        ErrorCode::kWrongType});
    } else {
      rows.resize(list->size());
      for (size_t i = 0; i < list->size(); ++i) {
        ReadRow((*list)[i], ElementPath("rows", i), &errors, &rows[i]);
      }
    }
  }
  if (!errors.empty()) return InvalidInputError(errors);
  return rows;
}

ValidationReport Validate(const std::vector<ValidationRow>& rows,
                          ModelProfile profile,
                          const std::vector<Correction>& without) {
  ValidationReport report;
  report.profile = profile;
  report.without = without;
  report.rows.reserve(rows.size());
  for (const ValidationRow& row : rows) {
    RowResult result;
    result.row = &row;
    if (!row.skip.empty()) {
      result.reason = row.skip;
    } else {
      PredictRow(row, profile, without, &result);
    }
    if (result.predicted_ok) {
      Add(result, &report.by_source[row.summary_source]);
      Add(result, &report.by_group[row.group]);
      Add(result, &report.overall);
    } else {
      report.skipped += 1;
    }
    report.rows.push_back(std::move(result));
  }
  for (auto& [key, summary] : report.by_source) Finish(&summary);
  for (auto& [key, summary] : report.by_group) Finish(&summary);
  Finish(&report.overall);
  RepeatedRunTerms(&report);
  RankingTerms(&report);
  return report;
}

std::string ValidationText(const ValidationReport& report) {
  std::string out = absl::StrCat("blueprinting.validation/2 profile=",
                                 ModelProfileName(report.profile));
  for (Correction c : report.without) {
    absl::StrAppend(&out, " without=", CorrectionName(c));
  }
  absl::StrAppend(&out, "\n");
  for (const RowResult& r : report.rows) {
    const ValidationRow& row = *r.row;
    if (!r.predicted_ok) continue;
    absl::StrAppend(&out, "row ", row.id, " ", row.source_key, " ", row.group,
                    " ", row.system, " ", row.model, " ",
                    MeasuredMetricName(row.metric),
                    " measured=", FormatDouble(row.measured),
                    " predicted=", FormatDouble(r.predicted),
                    " error=", Percent(r.error),
                    r.over_capacity ? " over_capacity" : "", "\n");
  }
  for (const RowResult& r : report.rows) {
    if (r.predicted_ok) continue;
    absl::StrAppend(&out, "skipped ", r.row->id, " ", r.row->source_key, " ",
                    r.row->group, ": ", r.reason, "\n");
  }
  for (const auto& [key, summary] : report.by_source) {
    absl::StrAppend(&out, "source ", key, " ", SummaryText(summary), "\n");
  }
  for (const auto& [key, summary] : report.by_group) {
    absl::StrAppend(&out, "group ", key, " ", SummaryText(summary), "\n");
  }
  absl::StrAppend(&out, "overall ", SummaryText(report.overall),
                  " skipped=", report.skipped, "\n");
  for (const RepeatedRun& run : report.repeated_runs) {
    absl::StrAppend(&out, "repeated ", absl::StrJoin(run.ids, ","), " ",
                    run.group, " measured=", FormatDouble(run.measured_min),
                    "..", FormatDouble(run.measured_max),
                    " floor_abs_error_sum=",
                    FormatDouble(run.floor_abs_error_sum), "\n");
  }
  for (const auto& [group, floor] : report.floor_by_group) {
    absl::StrAppend(&out, "floor group ", group, " ", FloorText(floor), "\n");
  }
  absl::StrAppend(&out, "floor overall ", FloorText(report.floor_overall),
                  "\n");
  for (const Ranking& r : report.rankings) {
    absl::StrAppend(&out, "ranking ", r.source_key, " ", r.model, " ",
                    r.system, " mappings=", r.mappings,
                    " tau=", FormatDouble(r.tau),
                    r.mapping_assumed ? " mapping_assumed" : "",
                    " ids=", absl::StrJoin(r.ids, ","), "\n");
  }
  absl::StrAppend(&out, "rankings printed ",
                  RankingSummaryText(report.rankings_printed), "\n",
                  "rankings assumed ",
                  RankingSummaryText(report.rankings_assumed), "\n");
  return out;
}

Json ValidationJson(const ValidationReport& report) {
  Json out = Json::object();
  out["format"] = "blueprinting.validation/2";
  out["profile"] = ModelProfileName(report.profile);
  Json without = Json::array();
  for (Correction c : report.without) without.push_back(CorrectionName(c));
  out["without"] = std::move(without);
  Json rows = Json::array();
  Json skipped = Json::array();
  for (const RowResult& r : report.rows) {
    const ValidationRow& row = *r.row;
    Json item = Json::object();
    item["id"] = row.id;
    item["source_key"] = row.source_key;
    item["summary_source"] = row.summary_source;
    item["group"] = row.group;
    if (!r.predicted_ok) {
      item["reason"] = r.reason;
      skipped.push_back(std::move(item));
      continue;
    }
    item["system"] = row.system;
    item["model"] = row.model;
    item["gpus"] = row.gpus;
    item["metric"] = MeasuredMetricName(row.metric);
    item["flop_definition"] = FlopDefinitionName(row.flops);
    item["measured"] = row.measured;
    item["predicted"] = r.predicted;
    item["error"] = r.error;
    item["predicted_step_time"] = r.predicted_time;
    item["over_capacity"] = r.over_capacity;
    rows.push_back(std::move(item));
  }
  out["rows"] = std::move(rows);
  out["skipped"] = std::move(skipped);
  out["by_source"] = ObjectOf(report.by_source, SummaryJson);
  out["by_group"] = ObjectOf(report.by_group, SummaryJson);
  out["overall"] = SummaryJson(report.overall);
  out["skipped_count"] = report.skipped;
  Json repeated = Json::array();
  for (const RepeatedRun& run : report.repeated_runs) {
    Json item = Json::object();
    item["ids"] = run.ids;
    item["group"] = run.group;
    item["measured_min"] = run.measured_min;
    item["measured_max"] = run.measured_max;
    item["floor_abs_error_sum"] = run.floor_abs_error_sum;
    repeated.push_back(std::move(item));
  }
  out["repeated_runs"] = std::move(repeated);
  out["floor_by_group"] = ObjectOf(report.floor_by_group, FloorJson);
  out["floor_overall"] = FloorJson(report.floor_overall);
  Json rankings = Json::array();
  for (const Ranking& r : report.rankings) {
    Json item = Json::object();
    item["source_key"] = r.source_key;
    item["model"] = r.model;
    item["system"] = r.system;
    item["ids"] = r.ids;
    item["mappings"] = r.mappings;
    item["tau"] = r.tau;
    item["mapping_assumed"] = r.mapping_assumed;
    rankings.push_back(std::move(item));
  }
  out["rankings"] = std::move(rankings);
  out["rankings_printed"] = RankingSummaryJson(report.rankings_printed);
  out["rankings_assumed"] = RankingSummaryJson(report.rankings_assumed);
  return out;
}

namespace {

// The two summaries the gate holds: per group and per source.
struct BaselineSection {
  const char* key;  // "groups"
  const char* what;  // "group"
  std::map<std::string, ErrorSummary> ValidationReport::*summaries;
};
constexpr BaselineSection kBaselineSections[] = {
    {"groups", "group", &ValidationReport::by_group},
    {"sources", "source", &ValidationReport::by_source},
};

// The regressions of one recorded section against `now`, appended to
// `regressions`; a malformed entry appends to `errors`.
void SectionRegressions(const Json& recorded_section, const std::string& path,
                        const std::string& label,
                        const std::map<std::string, ErrorSummary>& now_by_key,
                        std::vector<std::string>* regressions,
                        std::vector<FieldError>* errors) {
  for (const auto& [key, recorded] : recorded_section.items()) {
    JsonObjectReader reader(recorded, MemberPath(path, key), errors);
    int64_t rows = 0;
    double mean = 0;
    if (!reader.ReadInt("rows", &rows) ||
        !reader.ReadDouble("mean_abs_error", &mean)) {
      continue;
    }
    reader.RejectUnknownKeys();
    const std::string name = absl::StrCat(label, " ", key);
    const auto found = now_by_key.find(key);
    if (found == now_by_key.end()) {
      regressions->push_back(
          absl::StrCat(name, ": no row predicted, ", rows, " recorded"));
      continue;
    }
    const ErrorSummary& now = found->second;
    if (now.rows < rows) {
      regressions->push_back(absl::StrCat(name, ": ", now.rows,
                                          " rows predicted, ", rows,
                                          " recorded"));
    }
    // The figures are deterministic (the same bits natively and in wasm);
    // the slack only absorbs the printed value's round trip.
    if (now.mean_abs_error > mean * (1 + 1e-12)) {
      regressions->push_back(absl::StrCat(
          name, ": mean |error| ", FormatDouble(now.mean_abs_error),
          " is worse than the recorded ", FormatDouble(mean)));
    }
  }
}

// The ranking gate: fewer ranked sets with printed mappings, or a lower
// mean tau over them, than recorded.
void RankingRegressions(const Json& recorded, const std::string& path,
                        const std::string& label, const RankingSummary& now,
                        std::vector<std::string>* regressions,
                        std::vector<FieldError>* errors) {
  JsonObjectReader reader(recorded, path, errors);
  int64_t rankings = 0;
  double mean_tau = 0;
  if (!reader.ReadInt("rankings", &rankings) ||
      !reader.ReadDouble("mean_tau", &mean_tau)) {
    return;
  }
  reader.RejectUnknownKeys();
  if (now.rankings < rankings) {
    regressions->push_back(absl::StrCat(label, ": ", now.rankings,
                                        " ranked sets, ", rankings,
                                        " recorded"));
  }
  // As for the errors, the slack only absorbs the printed round trip.
  if (now.mean_tau < mean_tau - 1e-12) {
    regressions->push_back(absl::StrCat(
        label, ": mean tau ", FormatDouble(now.mean_tau),
        " is below the recorded ", FormatDouble(mean_tau)));
  }
}

}  // namespace

std::string BaselineText(const ValidationReport& calculon,
                         const ValidationReport& refined) {
  Json out = Json::object();
  out["format"] = kBaselineFormat;
  for (const ValidationReport* report : {&calculon, &refined}) {
    Json profile = Json::object();
    for (const BaselineSection& section : kBaselineSections) {
      Json entries = Json::object();
      for (const auto& [key, summary] : report->*section.summaries) {
        Json entry = Json::object();
        entry["rows"] = summary.rows;
        entry["mean_abs_error"] = summary.mean_abs_error;
        entries[key] = std::move(entry);
      }
      profile[section.key] = std::move(entries);
    }
    Json rankings = Json::object();
    rankings["rankings"] = report->rankings_printed.rankings;
    rankings["mean_tau"] = report->rankings_printed.mean_tau;
    profile["rankings"] = std::move(rankings);
    out[ModelProfileName(report->profile)] = std::move(profile);
  }
  return CanonicalJson(out) + "\n";
}

absl::StatusOr<std::vector<std::string>> BaselineRegressions(
    const std::string& baseline_json, const ValidationReport& report) {
  absl::StatusOr<Json> doc = ParseJson(baseline_json);
  if (!doc.ok()) return doc.status();
  std::vector<FieldError> errors;
  JsonObjectReader top(*doc, "", &errors);
  std::string format;
  if (top.ReadString("format", &format) && format != kBaselineFormat) {
    errors.push_back({"format",
                      absl::StrCat("format: expected \"", kBaselineFormat,
                                   "\", got \"", format, "\""),
                      ErrorCode::kUnknownChoice});
  }
  const std::string profile = ModelProfileName(report.profile);
  std::vector<std::string> regressions;
  const Json* recorded = top.Member(profile);
  if (recorded != nullptr && !recorded->is_object()) {
    errors.push_back({profile,
                      absl::StrCat(profile, ": expected an object, got ",
                                   JsonTypeName(*recorded)),
                      ErrorCode::kWrongType});
  } else if (recorded != nullptr) {
    JsonObjectReader sections(*recorded, profile, &errors);
    for (const BaselineSection& section : kBaselineSections) {
      const Json* entries = sections.Member(section.key);
      const std::string path = MemberPath(profile, section.key);
      if (entries == nullptr) continue;  // Member recorded it missing
      if (!entries->is_object()) {
        errors.push_back({path,
                          absl::StrCat(path, ": expected an object, got ",
                                       JsonTypeName(*entries)),
                          ErrorCode::kWrongType});
      } else {
        SectionRegressions(*entries, path,
                           absl::StrCat(profile, " ", section.what),
                           report.*section.summaries, &regressions, &errors);
      }
    }
    if (const Json* rankings = sections.Member("rankings")) {
      RankingRegressions(*rankings, MemberPath(profile, "rankings"),
                         absl::StrCat(profile, " rankings"),
                         report.rankings_printed, &regressions, &errors);
    }
    sections.RejectUnknownKeys();
  }
  if (!errors.empty()) return InvalidInputError(errors);
  return regressions;
}

}  // namespace blueprint
