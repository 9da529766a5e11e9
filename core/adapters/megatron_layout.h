// File: megatron_layout.h
//
// Megatron-LM's five pipeline-layout flags as an explicit stage layout
// (PipelineParallel::stage_blocks): --pipeline-model-parallel-layout (a
// layout string), --decoder-first-pipeline-num-layers /
// --decoder-last-pipeline-num-layers (uneven first and last stages) and
// --account-for-embedding-in-pipeline-split /
// --account-for-loss-in-pipeline-split (the embedding and the loss counted
// as layers), with Megatron-LM's semantics and rules. Pure: no flag parsing.
//
// Example:
//   absl::StatusOr<std::vector<LayoutStage>> stages =
//       ParsePipelineLayout("Et*3|(tt|)*29,m|L");  // 32 stages
#ifndef BLUEPRINTING_CORE_ADAPTERS_MEGATRON_LAYOUT_H_
#define BLUEPRINTING_CORE_ADAPTERS_MEGATRON_LAYOUT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/base/field_errors.h"

namespace blueprint {

// The bounds that keep parsing a hostile layout cheap: the string as given
// and once unrolled (a DeepSeek-V3 layout unrolls to a few hundred
// characters).
inline constexpr size_t kMaxLayoutLength = 4096;
inline constexpr size_t kMaxUnrolledLayoutLength = 65536;

// One stage of a layout: how many of each layer type it holds.
struct LayoutStage {
  int64_t embedding = 0; // 'E'
  int64_t decoder = 0;   // 't'
  int64_t mtp = 0;       // 'm'
  int64_t loss = 0;      // 'L'
};

// ParsePipelineLayout: Megatron-LM's grammar
// (pipeline_parallel_layer_layout.py PipelineParallelLayerLayout.
// parse_str_to_list): commas are cosmetic; "(X)*N" repeats X (no nested
// parentheses) and then "c*N" repeats one character; '|' separates stages;
// every other character is one of E, t, m, L. Stages in model order.
// InvalidArgument naming the problem when it does not parse or exceeds the
// bounds.
absl::StatusOr<std::vector<LayoutStage>>
ParsePipelineLayout(absl::string_view layout);

// The flags that shape the layout, as given.
struct PipelineLayoutFlags {
  int64_t num_layers = 0;     // --num-layers
  int64_t mtp_layers = 0;     // --mtp-num-layers
  int64_t pipeline = 1;       // --pipeline-model-parallel-size
  int64_t virtual_stages = 1; // from the virtual-stage flags (1: none)
  // --num-layers-per-virtual-pipeline-stage, which Megatron-LM applies to
  // the layers with the embedding and loss counted.
  std::optional<int64_t> layers_per_virtual_stage;
  bool virtual_given = false;   // any virtual-stage flag
  std::optional<int64_t> first; // --decoder-first-pipeline-num-layers
  std::optional<int64_t> last;  // --decoder-last-pipeline-num-layers
  bool account_embedding = false;
  bool account_loss = false;
  std::optional<std::string> layout; // --pipeline-model-parallel-layout
};

// What the flags make of the pipeline: the blocks of each (virtual) stage
// (empty when no layout flag is given: the even split) and the virtual
// stages per rank; every violation of Megatron-LM's rules, naming the flag.
struct PipelineLayout {
  std::vector<int64_t> stage_blocks;
  int64_t virtual_stages = 1;
  std::vector<FieldError> errors;
  std::vector<std::string> notes;
};
PipelineLayout PipelineLayoutOf(const PipelineLayoutFlags &flags);

} // namespace blueprint

#endif // BLUEPRINTING_CORE_ADAPTERS_MEGATRON_LAYOUT_H_
