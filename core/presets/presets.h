// The presets shipped with Blueprinting (presets/ at the repository root),
// embedded in every binary at build time: Hugging Face config.json files of
// published models (presets/models/, for `import megatron --hf-config`) and
// Calculon system files (presets/systems/). Where the CLI takes one of these
// files it also takes a preset's name; `blueprint presets` and the wasm
// module's presets() list them all (core/api/commands.h).
//
// Example:
//   const char* system = FindPreset(PresetKind::kSystem, "h100_sxm_80g");
//   // the text of presets/systems/h100_sxm_80g.json, or nullptr
#ifndef BLUEPRINTING_CORE_PRESETS_PRESETS_H_
#define BLUEPRINTING_CORE_PRESETS_PRESETS_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace blueprint {

enum class PresetKind {
  kModel,   // presets/models/NAME.json: a Hugging Face config.json
  kSystem,  // presets/systems/NAME.json: a Calculon system file
};

// "models" or "systems": the preset directory, and the key of
// `blueprint presets`' JSON.
const char* PresetDirectory(PresetKind kind);

// FindPreset: the text of the preset `name` (its file name without .json),
// or nullptr when there is none.
const char* FindPreset(PresetKind kind, absl::string_view name);

// PresetNames: the names of every preset of `kind`, sorted.
std::vector<std::string> PresetNames(PresetKind kind);

//----- The generated table (presets_data.cc)
//-----------------------------------

struct PresetFile {
  const char* directory;  // "models", "systems"
  const char* name;       // the file name without .json
  const char* text;       // the file's bytes
};

extern const PresetFile kPresetFiles[];
extern const int kPresetFileCount;

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_PRESETS_PRESETS_H_
