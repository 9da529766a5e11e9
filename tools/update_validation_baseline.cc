// bazel run //tools:update_validation_baseline: rewrites
// tests/validation/baseline.json, the mean |error| per profile and group that
// the regression gate (//tests/validation:regression_test) holds, from the
// built-in corpus. Run it deliberately, after a change that improves the
// model (or adds rows), and commit the file with the change; never from a
// test.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

#include "core/validation/corpus.h"
#include "core/validation/validation.h"

int main() {
  const char* workspace = std::getenv("BUILD_WORKSPACE_DIRECTORY");
  if (workspace == nullptr) {
    std::cerr << "error: run with `bazel run //tools:update_validation_baseline`"
              << " (BUILD_WORKSPACE_DIRECTORY is not set)\n";
    return 1;
  }
  absl::StatusOr<std::vector<blueprint::ValidationRow>> rows =
      blueprint::ParseCorpus(blueprint::ValidationCorpusText());
  if (!rows.ok()) {
    std::cerr << "error: " << rows.status().message() << "\n";
    return 2;
  }
  const blueprint::ValidationReport calculon =
      blueprint::Validate(*rows, blueprint::ModelProfile::kCalculon);
  const blueprint::ValidationReport refined =
      blueprint::Validate(*rows, blueprint::ModelProfile::kRefined);
  const std::string text = blueprint::BaselineText(calculon, refined);
  const std::string path =
      std::string(workspace) + "/tests/validation/baseline.json";
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) {
    std::cerr << "error: cannot write " << path << "\n";
    return 2;
  }
  std::cout << path << ":\n" << text;
  return 0;
}
