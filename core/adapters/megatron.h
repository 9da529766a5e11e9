// The Megatron-LM adapter: a Megatron-LM training command line to a training
// MappingSpec on a given system.
//
// Flags are Megatron-LM's names, written "--flag value" or "--flag=value". The
// adapter knows every flag of Megatron-LM (megatron_catalogue.h: each with
// argparse's arity and a class) and reads a command line as argparse does: a
// switch takes no value, a flag takes as many values as its nargs says, and a
// word is a value unless it starts with '-' (a negative number such as -1 or
// -.5 is a value). Then, by the flag's class:
//   * modelled: a row of one table, MegatronFlags(): its spelling, the kind
//     of value, the canonical spec field it sets, what holds without it and a
//     one-line description. Parsing, the errors for a malformed, repeated or
//     missing flag, the conversion to the spec and the adapter's
//     documentation (MegatronFlagsMarkdown(), the table in
//     core/adapters/README.md) all come from it;
//   * ignored (the learning rate, data files, logging, checkpointing, MoE
//     routing and dispatch details, ...): accepted, and listed once in a
//     note, by category;
//   * unmodelled (FP8, MoE latent projections, custom pipeline layouts,
//     ...): an error naming the flag and why, unless its value is
//     Megatron-LM's default (e.g. --wgrad-deferral-limit 0), which changes
//     nothing and is listed with the ignored ones.
// A flag Megatron-LM does not have, or a positional argument, is an error
// (suggesting the closest flag when one is close).
//
// Knobs Megatron-LM has no flag for take these documented defaults (the
// canonical spec, and so `blueprint check`, prints every one of them):
//   * options.precision megatron_mixed (Megatron-LM's mixed-precision
//     accounting of weights, gradients and optimizer state).
//   * options.profile refined: the corrections of core/spec/corrections.h
//     (fused flash attention, causal attention work), as Megatron-Core runs.
//   * --sequence-parallel with selective recompute redoes the sequence-parallel
//     all-gathers in the backward pass (all_gather_redo = true), as Korthikanti
//     et al. 2022 ("seqsel") and Calculon's validation do; otherwise false.
//   * parallelism.tensor.overlap none; options.attention multihead (grouped
//     query attention is model.kv_heads); options.fused_activation false; no
//     offload.
//   * network tiers: tensor on tier 0 (the fastest, e.g. NVLink); pipeline and
//     data on the system's last tier (e.g. InfiniBand); context on tier 0
//     when its t * cp ranks fit in it (and divide it if it must be filled),
//     as Megatron-LM's rank order puts them next to the tensor ranks,
//     otherwise on the last tier; the expert all-to-all likewise for its
//     ep * etp ranks. With one context- or expert-parallel rank their fields
//     keep the spec's defaults (ring exchange, tier 0).
//   * parallelism.pipeline.stage_layout even: Megatron-LM requires
//     num_layers % pipeline size == 0; the checker reports a remainder.
//   * model.name is empty.
// Without --vocab-size there is no vocabulary to model (model.vocabulary.size
// 0: no embedding, output layer or learned position embedding; a note says
// so), since Megatron-LM takes the vocabulary from the tokenizer's files.
//
// Notes: one line each, things the user should know that are not errors: the
// ignored flags, the missing vocabulary, a flag that has no effect on this
// mapping (--sequence-parallel with t = 1, --use-distributed-optimizer with
// one data-parallel rank, MoE flags without --num-experts, latent-attention
// sizes without --multi-latent-attention, --data-parallel-sharding-strategy
// without --use-megatron-fsdp, ...), a capacity factor read as Megatron-LM
// reads it (below 0: dropless; above experts / topk: that ratio).
//
// Errors are FieldErrors (core/base/field_errors.h), one line each: the field
// is the flag a problem concerns ("--tensor-model-parallel-size", also for an
// unknown flag as written), the spec path when a rule about the resulting
// spec fails (e.g. "model.attn_size" when its default does not divide), or ""
// for a stray positional argument. Their codes: kSyntax (a stray argument, a
// repeated flag, a missing or unexpected value), kUnknownField (an unknown
// flag), kMissingField (a required flag), kUnknownChoice, kWrongType or
// kOutOfRange (a bad value), kNotDivisible, kInconsistent (flags that
// contradict each other), kUnsupported (an option the model cannot express).
//
// Example:
//   std::vector<std::string> notes;
//   absl::StatusOr<MappingSpec> spec = FromMegatronArgs(
//       {"--num-layers", "96", "--hidden-size", "12288", ...}, system, &notes);
#ifndef BLUEPRINTING_CORE_ADAPTERS_MEGATRON_H_
#define BLUEPRINTING_CORE_ADAPTERS_MEGATRON_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/spec/spec.h"

namespace blueprint {

// FromMegatronArgs: the training spec that `args` (the flags only, without
// the program name) describe on `system`. The spec is not checked: run
// CheckSpec on it. kInvalidArgument (InvalidInputError) lists every problem
// of the command line, one per line, with its field (see above).
absl::StatusOr<MappingSpec> FromMegatronArgs(
    const std::vector<std::string>& args, const System& system);

// The same, appending the adapter's notes (one line each, see above) to
// `notes`, also when the command line has errors.
absl::StatusOr<MappingSpec> FromMegatronArgs(
    const std::vector<std::string>& args, const System& system,
    std::vector<std::string>* notes);

enum class MegatronFlagKind {
  kPositiveInteger,  // "--flag N", N as ParsePositiveInteger accepts it
  kCount,            // "--flag N", N as kPositiveInteger or "0"
  kNumber,           // "--flag X", X a finite decimal number (Python float)
  kChoice,           // "--flag WORD", WORD one of MegatronFlag::choices
  // "--flag WORD...": one or more of MegatronFlag::choices (argparse's
  // nargs='+', one per layer), all the same word.
  kChoicePerLayer,
  // "--flag WORD...": one or more of MegatronFlag::choices (argparse's
  // nargs='+'), distinct words in any order.
  kChoiceList,
  // "--flag k" (k a positive integer: block i matches iff i % k == 0) or
  // "--flag EXPR", a Python list of 0s and 1s (layer_pattern.h).
  kLayerPattern,
  kSwitch,  // "--flag" alone (argparse store_true)
  // "--flag TEXT": any one word, judged by the flag's rule (the pipeline
  // layout string, megatron_layout.h).
  kText,
};

// The `absent` of a flag that must be given.
inline constexpr char kMegatronRequired[] = "required";

// The value one flag has on a command line, or without it.
struct MegatronFlagValue {
  bool given = false;   // on the command line (a switch: on)
  int64_t integer = 0;  // kPositiveInteger: the number (or the default);
                        // kLayerPattern: k, or 0 for a list
  double number = 0;    // kNumber
  std::string choice;   // kChoice, kChoicePerLayer: one of the choices ("" when
                        // absent)
  std::string pattern;  // kLayerPattern: the list, one '0' or '1' per block;
                        // kText: the word as given; kChoiceList: the
                        // words, one space between
};

// One accepted flag.
struct MegatronFlag {
  std::string name;  // "--num-layers"
  MegatronFlagKind kind;
  std::vector<std::string> choices;  // kChoice, kChoicePerLayer, kChoiceList
  // The canonical spec path it sets ("parallelism.tensor.degree"); it starts
  // with the spec section the conversion fills it in: model, parallelism,
  // batch or options.
  std::string field;
  // Without the flag: kMegatronRequired (an error), a number that an integer
  // flag then takes ("1"), or (Markdown) what the adapter derives instead.
  std::string absent;
  std::string doc;  // one line of Markdown
  // Writes the value into the spec; called when the value is known (given,
  // a switch off, a choice absent, or an integer's numeric `absent`). nullptr
  // when a rule of FromMegatronArgs derives `field` from several flags.
  void (*set)(const MegatronFlagValue& value,
              TransformerTrainingMappingSpec* spec) = nullptr;
};

// MegatronFlags: the table of modelled flags, in documentation order. Two are
// not in Megatron-LM's catalogue: --world-size (torchrun's WORLD_SIZE) and
// --virtual-pipeline-model-parallel-size (older Megatron-LM's spelling of
// --num-virtual-stages-per-pipeline-rank).
const std::vector<MegatronFlag>& MegatronFlags();

// MegatronFlagNames: the names of MegatronFlags(), "--" included, in order.
const std::vector<std::string>& MegatronFlagNames();

// MegatronFlagsMarkdown: MegatronFlags() as the Markdown table that
// core/adapters/README.md shows (a header row, then one row per flag; every
// line ends in '\n').
std::string MegatronFlagsMarkdown();

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_ADAPTERS_MEGATRON_H_
