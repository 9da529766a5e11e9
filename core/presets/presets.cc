#include "core/presets/presets.h"

#include <algorithm>
#include <string>
#include <vector>

namespace blueprint {

const char* PresetDirectory(PresetKind kind) {
  switch (kind) {
    case PresetKind::kModel:
      return "models";
    case PresetKind::kSystem:
      return "systems";
  }
  return "";
}

const char* FindPreset(PresetKind kind, absl::string_view name) {
  const absl::string_view directory = PresetDirectory(kind);
  for (int i = 0; i < kPresetFileCount; ++i) {
    const PresetFile& file = kPresetFiles[i];
    if (file.directory == directory && file.name == name) return file.text;
  }
  return nullptr;
}

std::vector<std::string> PresetNames(PresetKind kind) {
  const absl::string_view directory = PresetDirectory(kind);
  std::vector<std::string> names;
  for (int i = 0; i < kPresetFileCount; ++i) {
    if (kPresetFiles[i].directory == directory) {
      names.push_back(kPresetFiles[i].name);
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace blueprint
