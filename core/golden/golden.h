// The regression corpus' unit: a golden case is a folder of input files; its
// outputs are the canonical text of every stage (or the pinned error text of
// a rejected input), each pinned by a SHA-256 digest in golden/MANIFEST.
// Pure functions on strings, so the native test, the updater and the wasm
// build compute exactly the same bytes.
//
// Inputs, by file name:
//   spec.json                      the canonical spec (core/spec/README.md)
//   app.json + exe.json + sys.json Calculon's application/execution/system
//   megatron.txt + sys.json        Megatron-LM flags, whitespace separated
//   serving.json                   a serving spec (core/serving): stages
//                                  "serving_spec" (canonical) and "serving"
//                                  (the analysis with its lineage)
#ifndef BLUEPRINTING_CORE_GOLDEN_GOLDEN_H_
#define BLUEPRINTING_CORE_GOLDEN_GOLDEN_H_

#include <map>
#include <string>
#include <vector>

#include "core/report/report.h"

namespace blueprint {

using CaseFiles = std::map<std::string, std::string>;

// The stages of one case, in a fixed order. A rejected input yields one
// stage, "errors"; an input that is valid but over memory capacity yields
// every stage and an "errors" stage last.
std::vector<StageText> EvaluateCase(const CaseFiles& files);

// The input file names EvaluateCase reads, in reading order.
const std::vector<std::string>& CaseInputNames();

// "<case> <stage> <sha256>\n" per stage.
std::string ManifestLines(const std::string& case_name,
                          const std::vector<StageText>& stages);

// A unified-style line diff of two texts (for mismatch reports): lines only
// in `want` start with '-', only in `got` with '+', with 2 lines of context.
std::string LineDiff(const std::string& want, const std::string& got);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_GOLDEN_GOLDEN_H_
