// ReadFile for tests: the whole file at `path` (relative to the runfiles
// root, where tests run natively and under node alike), "" if it cannot be
// read (the caller's expectation on the text then fails).
#ifndef BLUEPRINTING_CORE_TESTING_FILES_H_
#define BLUEPRINTING_CORE_TESTING_FILES_H_

#include <fstream>
#include <sstream>
#include <string>

namespace blueprint {
namespace test_files {

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

}  // namespace test_files
}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_TESTING_FILES_H_
