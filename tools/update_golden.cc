// bazel run //tools:update_golden — recomputes every golden case under
// golden/cases/ and rewrites its stage texts (golden/cases/<case>/out/) and
// golden/MANIFEST, printing which digests changed. Never run from bazel test:
// it writes into the source tree (BUILD_WORKSPACE_DIRECTORY).
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "core/golden/golden.h"

namespace {

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::stringstream text;
  text << in.rdbuf();
  *out = text.str();
  return true;
}

bool WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  return static_cast<bool>(out);
}

std::vector<std::string> ListDirs(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      struct stat st;
      if (name[0] != '.' && stat((dir + "/" + name).c_str(), &st) == 0 &&
          S_ISDIR(st.st_mode)) {
        names.push_back(name);
      }
    }
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

int main() {
  const char* workspace = std::getenv("BUILD_WORKSPACE_DIRECTORY");
  if (workspace == nullptr) {
    std::fprintf(stderr,
                 "error: run me with `bazel run //tools:update_golden`\n");
    return 1;
  }
  const std::string golden = std::string(workspace) + "/golden";
  std::map<std::string, std::string> old_digests;  // "case stage" -> sha
  std::string manifest_text;
  if (ReadFile(golden + "/MANIFEST", &manifest_text)) {
    for (absl::string_view line : absl::StrSplit(manifest_text, '\n')) {
      std::vector<std::string> f = absl::StrSplit(line, ' ');
      if (f.size() == 3) old_digests[f[0] + " " + f[1]] = f[2];
    }
  }
  std::string manifest;
  int changed = 0, cases = 0;
  for (const std::string& name : ListDirs(golden + "/cases")) {
    const std::string dir = golden + "/cases/" + name;
    blueprint::CaseFiles files;
    for (const std::string& input : blueprint::CaseInputNames()) {
      std::string text;
      if (ReadFile(dir + "/" + input, &text)) files[input] = text;
    }
    const std::vector<blueprint::StageText> stages =
        blueprint::EvaluateCase(files);
    mkdir((dir + "/out").c_str(), 0755);
    for (const std::string& stale : std::vector<std::string>{
             "spec", "task_ir", "plan_ir", "iteration", "memory", "report",
             "errors"}) {
      std::remove((dir + "/out/" + stale + ".txt").c_str());
    }
    for (const blueprint::StageText& stage : stages) {
      if (!WriteFile(dir + "/out/" + stage.stage + ".txt", stage.text)) {
        std::fprintf(stderr, "error: cannot write %s/out/%s.txt\n",
                     dir.c_str(), stage.stage.c_str());
        return 1;
      }
    }
    const std::string lines = blueprint::ManifestLines(name, stages);
    for (absl::string_view line : absl::StrSplit(lines, '\n')) {
      std::vector<std::string> f = absl::StrSplit(line, ' ');
      if (f.size() != 3) continue;
      auto it = old_digests.find(f[0] + " " + f[1]);
      if (it == old_digests.end() || it->second != f[2]) {
        std::printf("%s %s %s -> %s\n",
                    it == old_digests.end() ? "new" : "changed",
                    (f[0] + " " + f[1]).c_str(),
                    it == old_digests.end() ? "-" : it->second.substr(0, 12).c_str(),
                    f[2].substr(0, 12).c_str());
        ++changed;
      }
      if (it != old_digests.end()) old_digests.erase(it);
    }
    manifest += lines;
    ++cases;
  }
  for (const auto& [key, digest] : old_digests) {
    std::printf("removed %s %s\n", key.c_str(), digest.substr(0, 12).c_str());
    ++changed;
  }
  if (!WriteFile(golden + "/MANIFEST", manifest)) {
    std::fprintf(stderr, "error: cannot write %s/MANIFEST\n", golden.c_str());
    return 1;
  }
  std::printf("%d cases, %d digests changed\n", cases, changed);
  return 0;
}
