// blueprint: the command-line interface of Blueprinting (DESIGN.md
// "Interfaces"). It reads files, calls the string-to-string commands of
// core/api/commands.h and prints: the output on stdout, one "error: ..." line
// per problem on stderr. Exit codes: 0 ok, 1 usage error, 2 invalid input.
//
// Subcommands live in one table (kSubcommands); adding one is adding a row.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <sys/stat.h>

#include <chrono>

#include "absl/strings/str_cat.h"
#include "core/api/analysis_commands.h"
#include "core/api/commands.h"
#include "core/api/search_command.h"

namespace blueprint {
namespace {

using Args = std::vector<std::string>;

// Reads a whole file, or explains why it cannot.
std::optional<std::string> ReadFile(const std::string& path,
                                    std::string* error) {
  FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    *error = absl::StrCat("cannot read ", path, ": ", std::strerror(errno));
    return std::nullopt;
  }
  std::string contents;
  char buffer[1 << 16];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), file)) > 0) {
    contents.append(buffer, n);
  }
  const bool failed = std::ferror(file) != 0;
  const int read_errno = errno;
  std::fclose(file);
  if (failed) {
    *error =
        absl::StrCat("cannot read ", path, ": ", std::strerror(read_errno));
    return std::nullopt;
  }
  return contents;
}

// Reads every path in order; on the first failure returns the result to
// print instead.
std::optional<CommandResult> ReadFiles(const Args& paths,
                                       std::vector<std::string>* contents) {
  for (const std::string& path : paths) {
    std::string error;
    std::optional<std::string> text = ReadFile(path, &error);
    if (!text) {
      CommandResult result;
      result.exit_code = kExitInvalidInput;
      result.AddError(error);
      return result;
    }
    contents->push_back(*std::move(text));
  }
  return std::nullopt;
}

// A subcommand's runner: std::nullopt means its arguments do not fit its
// synopsis (a usage error).
using Runner = std::optional<CommandResult> (*)(const Args& args);

std::optional<CommandResult> RunImportCalculon(const Args& args) {
  if (args.size() != 3) return std::nullopt;
  std::vector<std::string> files;
  if (std::optional<CommandResult> failed = ReadFiles(args, &files)) {
    return failed;
  }
  return ImportCalculon(files[0], files[1], files[2]);
}

std::optional<CommandResult> RunImportMegatron(const Args& args) {
  // --system SYS.json -- ARGS...   (or --system=SYS.json -- ARGS...)
  std::string system_path;
  size_t next = 0;
  const std::string kSystemEq = "--system=";
  if (args.size() >= 1 && args[0].rfind(kSystemEq, 0) == 0) {
    system_path = args[0].substr(kSystemEq.size());
    next = 1;
  } else if (args.size() >= 2 && args[0] == "--system") {
    system_path = args[1];
    next = 2;
  } else {
    return std::nullopt;
  }
  if (system_path.empty() || next >= args.size() || args[next] != "--") {
    return std::nullopt;
  }
  std::vector<std::string> files;
  if (std::optional<CommandResult> failed = ReadFiles({system_path}, &files)) {
    return failed;
  }
  return ImportMegatron(files[0], Args(args.begin() + next + 1, args.end()));
}

std::optional<CommandResult> RunCheck(const Args& args) {
  if (args.size() != 1) return std::nullopt;
  std::vector<std::string> files;
  if (std::optional<CommandResult> failed = ReadFiles(args, &files)) {
    return failed;
  }
  return Check(files[0]);
}

// Reads the one spec file `args` must name.
std::optional<CommandResult> WithSpec(
    const Args& args, CommandResult (*command)(const std::string&)) {
  if (args.size() != 1) return std::nullopt;
  std::vector<std::string> files;
  if (std::optional<CommandResult> failed = ReadFiles(args, &files)) {
    return failed;
  }
  return command(files[0]);
}

// Writes one stage text per file into `dir` (created if missing).
std::optional<std::string> DumpStages(const std::string& dir,
                                      const std::vector<StageText>& stages) {
  mkdir(dir.c_str(), 0755);
  for (const StageText& stage : stages) {
    const std::string path = absl::StrCat(dir, "/", stage.stage, ".txt");
    FILE* file = std::fopen(path.c_str(), "wb");
    if (file == nullptr) {
      return absl::StrCat("cannot write ", path, ": ", std::strerror(errno));
    }
    std::fwrite(stage.text.data(), 1, stage.text.size(), file);
    if (std::fclose(file) != 0) {
      return absl::StrCat("cannot write ", path, ": ", std::strerror(errno));
    }
  }
  return std::nullopt;
}

std::optional<CommandResult> RunAnalyze(const Args& args) {
  // SPEC.json [--dump-ir DIR]
  if (args.size() == 1) return WithSpec(args, &Analyze);
  if (args.size() != 3 || args[1] != "--dump-ir") return std::nullopt;
  std::vector<std::string> files;
  if (std::optional<CommandResult> failed = ReadFiles({args[0]}, &files)) {
    return failed;
  }
  std::vector<StageText> stages;
  CommandResult result = AnalyzeStages(files[0], &stages);
  if (!stages.empty()) {
    if (std::optional<std::string> error = DumpStages(args[2], stages)) {
      result.exit_code = kExitInvalidInput;
      result.AddError(*error);
    }
  }
  return result;
}

std::optional<CommandResult> RunCalculon(const Args& args) {
  if (args.size() != 3) return std::nullopt;
  std::vector<std::string> files;
  if (std::optional<CommandResult> failed = ReadFiles(args, &files)) {
    return failed;
  }
  return Calculon(files[0], files[1], files[2]);
}

std::optional<CommandResult> RunDigest(const Args& args) {
  return WithSpec(args, &Digest);
}

std::optional<CommandResult> RunExplain(const Args& args) {
  if (args.size() != 2) return std::nullopt;
  std::vector<std::string> files;
  if (std::optional<CommandResult> failed = ReadFiles({args[0]}, &files)) {
    return failed;
  }
  return Explain(files[0], args[1]);
}

std::optional<CommandResult> RunSearch(const Args& args) {
  // --app APP --system SYS plus the search flags, in any order.
  std::string app_path, system_path;
  for (size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == "--app") app_path = args[i + 1];
    if (args[i] == "--system") system_path = args[i + 1];
  }
  if (app_path.empty() || system_path.empty()) return std::nullopt;
  std::vector<std::string> files;
  if (std::optional<CommandResult> failed =
          ReadFiles({app_path, system_path}, &files)) {
    return failed;
  }
  // A progress line on stderr once a search has run for a second.
  const auto start = std::chrono::steady_clock::now();
  bool shown = false;
  ProgressFn progress = [&](double fraction) {
    const auto elapsed = std::chrono::steady_clock::now() - start;
    if (elapsed < std::chrono::seconds(1)) return;
    shown = true;
    std::fprintf(stderr, "\rsearching: %3d%%", static_cast<int>(fraction * 100));
    std::fflush(stderr);
  };
  CommandResult result = Search(files[0], files[1], args, progress);
  if (shown) std::fprintf(stderr, "\rsearching: done\n");
  return result;
}

struct Subcommand {
  std::vector<std::string> words;  // e.g. {"import", "calculon"}
  const char* synopsis;            // the arguments after the words
  const char* summary;
  Runner run;
};

const std::vector<Subcommand>& Subcommands() {
  static const auto* subcommands = new std::vector<Subcommand>{
      {{"import", "calculon"},
       "APP.json EXE.json SYS.json",
       "Calculon's application, execution and system JSON -> canonical spec "
       "JSON",
       &RunImportCalculon},
      {{"import", "megatron"},
       "--system SYS.json -- MEGATRON-FLAGS...",
       "Megatron-LM flags on a Calculon system -> canonical spec JSON",
       &RunImportMegatron},
      {{"check"},
       "SPEC.json",
       "every violated rule of a spec, or the spec with its derived values",
       &RunCheck},
      {{"analyze"},
       "SPEC.json [--dump-ir DIR]",
       "the report JSON; --dump-ir writes every stage's canonical text to DIR",
       &RunAnalyze},
      {{"calculon"},
       "APP.json EXE.json SYS.json",
       "Calculon's stats JSON for Calculon's own inputs",
       &RunCalculon},
      {{"digest"},
       "SPEC.json",
       "\"<stage> <sha256>\" per stage of the pipeline",
       &RunDigest},
      {{"explain"},
       "SPEC.json FIGURE",
       "the lineage chain of one report figure back to spec and system",
       &RunExplain},
      {{"search"},
       "--app APP.json --system SYS.json --procs N --max-batch B --datatype D "
       "[--top K] [--mbs-break] [--no-tp-overlap] [--no-dp-overlap] "
       "[--fused-activation true|false|all] [--exhaustive] [--json]",
       "every valid mapping of Calculon's search space, best first",
       &RunSearch},
  };
  return *subcommands;
}

std::string UsageText() {
  std::string text = "usage:\n";
  for (const Subcommand& sub : Subcommands()) {
    absl::StrAppend(&text, "  blueprint");
    for (const std::string& word : sub.words) absl::StrAppend(&text, " ", word);
    absl::StrAppend(&text, " ", sub.synopsis, "\n      ", sub.summary, "\n");
  }
  absl::StrAppend(&text,
                  "exit status: 0 ok, 1 usage error, 2 invalid input (one "
                  "\"error: ...\" line per problem on stderr)\n");
  return text;
}

// The subcommand whose words start `args` (longest match), if any.
const Subcommand* Find(const Args& args) {
  const Subcommand* best = nullptr;
  for (const Subcommand& sub : Subcommands()) {
    if (sub.words.size() > args.size()) continue;
    if (!std::equal(sub.words.begin(), sub.words.end(), args.begin())) continue;
    if (best == nullptr || sub.words.size() > best->words.size()) best = &sub;
  }
  return best;
}

void Print(const std::string& text, FILE* stream) {
  std::fwrite(text.data(), 1, text.size(), stream);
}

int UsageError(const std::string& message) {
  Print(absl::StrCat("error: ", message, "\n", UsageText()), stderr);
  return kExitUsage;
}

int Run(const Args& args) {
  if (args.size() == 1 &&
      (args[0] == "help" || args[0] == "--help" || args[0] == "-h")) {
    Print(UsageText(), stdout);
    return kExitOk;
  }
  const Subcommand* sub = Find(args);
  if (sub == nullptr) {
    if (args.empty()) return UsageError("no command given");
    if (args[0] == "import") {
      return UsageError(
          args.size() == 1
              ? std::string("import needs a source")
              : absl::StrCat("unknown command \"import ", args[1], "\""));
    }
    return UsageError(absl::StrCat("unknown command \"", args[0], "\""));
  }
  const Args rest(args.begin() + sub->words.size(), args.end());
  std::optional<CommandResult> result = sub->run(rest);
  if (!result) {
    std::string command = "blueprint";
    for (const std::string& word : sub->words) {
      absl::StrAppend(&command, " ", word);
    }
    return UsageError(absl::StrCat("wrong arguments; expected: ", command, " ",
                                   sub->synopsis));
  }
  Print(result->output, stdout);
  for (const FieldError& error : result->errors) {
    Print(absl::StrCat("error: ", error.message, "\n"), stderr);
  }
  std::fflush(stdout);
  return result->exit_code;
}

}  // namespace
}  // namespace blueprint

int main(int argc, char** argv) {
  return blueprint::Run(blueprint::Args(argv + 1, argv + argc));
}
