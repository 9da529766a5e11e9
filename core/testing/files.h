// ReadFile for tests: the whole file at `path` (relative to the runfiles
// root, where tests run natively and under node alike), "" if it cannot be
// read (the caller's expectation on the text then fails).
#ifndef BLUEPRINTING_CORE_TESTING_FILES_H_
#define BLUEPRINTING_CORE_TESTING_FILES_H_

#include <fstream>
#include <optional>
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

// MarkedSection: the lines of the file at `path` between the lines
// "<!-- begin NAME -->" and "<!-- end NAME -->" (a generated part of a
// document, which a test compares with its generator), or nullopt when a
// marker is missing or the end comes first.
inline std::optional<std::string> MarkedSection(const std::string& path,
                                                const std::string& name) {
  const std::string text = ReadFile(path);
  const std::string begin_marker = "<!-- begin " + name + " -->\n";
  const size_t begin = text.find(begin_marker);
  const size_t end = text.find("<!-- end " + name + " -->\n");
  if (begin == std::string::npos || end == std::string::npos || end < begin) {
    return std::nullopt;
  }
  const size_t start = begin + begin_marker.size();
  return text.substr(start, end - start);
}

}  // namespace test_files
}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_TESTING_FILES_H_
