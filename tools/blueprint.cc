// blueprint: the command-line interface of Blueprinting (DESIGN.md
// "Interfaces"). It reads files, calls the string-to-string commands of
// core/api/commands.h and prints: the output on stdout, one "error: ..." line
// per problem on stderr. Exit codes (core/api/commands.h kExit*): 0 ok, 1
// usage error, 2 invalid input or an unusable input or output (a file that is
// not a regular file or is over kMaxInputBytes, a failed write), 3 internal
// error (a bug).
//
// Hostile use: every input is a regular file read up to the limit (a FIFO or
// /dev/zero is refused, never waited on); every byte written to stdout is
// checked in one place (Stdout), so that a full disk or a closed stdout is an
// error, never a success; --dump-ir writes only inside its directory and
// replaces its files whole (see DumpStages).
//
// Subcommands live in one table (kSubcommands); adding one is adding a row.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "core/api/analysis_commands.h"
#include "core/api/commands.h"
#include "core/api/metadata.h"
#include "core/api/search_command.h"
#include "core/api/serving_commands.h"
#include "core/api/validate_command.h"
#include "core/base/input_limits.h"
#include "core/base/parse_int.h"
#include "core/base/quote.h"
#include "core/presets/presets.h"
#include "core/validation/corpus.h"

namespace blueprint {
namespace {

using Args = std::vector<std::string>;

std::string ErrnoText(int error) { return std::strerror(error); }

// Closes a file descriptor when it goes out of scope (errors ignored: only
// for descriptors that were read, or that failed already).
class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;
  ~FdCloser() {
    if (fd_ >= 0) close(fd_);
  }

 private:
  int fd_;
};

// Reads a whole input file, or explains why it cannot. The file is opened
// without blocking (a FIFO with no writer must not hang the CLI), must be a
// regular file (not a FIFO, a device such as /dev/zero, or a directory), and
// is read up to kMaxInputBytes + 1 bytes only: a larger file, or one that
// grows while it is read, is refused with InputTooLargeMessage.
std::optional<std::string> ReadFile(const std::string& path,
                                    std::string* error) {
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    *error = absl::StrCat("cannot read ", path, ": ", ErrnoText(errno));
    return std::nullopt;
  }
  FdCloser closer(fd);
  struct stat info;
  if (fstat(fd, &info) != 0) {
    *error = absl::StrCat("cannot read ", path, ": ", ErrnoText(errno));
    return std::nullopt;
  }
  if (!S_ISREG(info.st_mode)) {
    *error = absl::StrCat(path, ": not a regular file");
    return std::nullopt;
  }
  if (info.st_size < 0 ||
      static_cast<unsigned long long>(info.st_size) > kMaxInputBytes) {
    *error = InputTooLargeMessage(path);
    return std::nullopt;
  }
  const int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    *error = absl::StrCat("cannot read ", path, ": ", ErrnoText(errno));
    return std::nullopt;
  }
  constexpr size_t kReadLimit = kMaxInputBytes + 1;
  std::string contents;
  contents.reserve(static_cast<size_t>(info.st_size));
  char buffer[1 << 16];
  while (contents.size() < kReadLimit) {
    const size_t want = std::min(sizeof(buffer), kReadLimit - contents.size());
    const ssize_t n = read(fd, buffer, want);
    if (n < 0) {
      if (errno == EINTR) continue;
      *error = absl::StrCat("cannot read ", path, ": ", ErrnoText(errno));
      return std::nullopt;
    }
    if (n == 0) break;
    contents.append(buffer, static_cast<size_t>(n));
  }
  if (contents.size() > kMaxInputBytes) {
    *error = InputTooLargeMessage(path);
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
// synopsis (a usage error); a result with kExitUsage is a usage error with
// its own reason (see UsageResult).
using Runner = std::optional<CommandResult> (*)(const Args& args);

// A usage error with a specific reason (printed with the usage text), for a
// runner whose arguments fit the synopsis but break one of its rules.
CommandResult UsageResult(const std::string& reason) {
  CommandResult result;
  result.exit_code = kExitUsage;
  result.AddError(reason);
  return result;
}

// Reads an input that may name a preset (core/presets/presets.h, e.g.
// `--system h100_sxm_80g`): a preset's name gives its text, anything else is
// a file path (a file named like a preset is ./NAME). On failure returns the
// result to print instead, listing the presets when `arg` could have been
// meant as one.
std::optional<CommandResult> ReadInputOrPreset(const std::string& arg,
                                               PresetKind kind,
                                               std::string* text) {
  if (const char* preset = FindPreset(kind, arg)) {
    *text = preset;
    return std::nullopt;
  }
  std::string error;
  std::optional<std::string> contents = ReadFile(arg, &error);
  if (contents) {
    *text = *std::move(contents);
    return std::nullopt;
  }
  if (arg.find('/') == std::string::npos) {
    absl::StrAppend(&error, " (nor a preset: ", PresetDirectory(kind), " ",
                    absl::StrJoin(PresetNames(kind), ", "), ")");
  }
  CommandResult result;
  result.exit_code = kExitInvalidInput;
  result.AddError(error);
  return result;
}

std::optional<CommandResult> RunImportCalculon(const Args& args) {
  if (args.size() != 3) return std::nullopt;
  std::vector<std::string> files;
  if (std::optional<CommandResult> failed = ReadFiles(args, &files)) {
    return failed;
  }
  return ImportCalculon(files[0], files[1], files[2]);
}

// An import on a system, with or without a Hugging Face config: `import
// megatron`'s, `import vllm`'s and `import sglang`'s runner.
using SystemImporter = CommandResult (*)(const std::string& system_json,
                                         const std::vector<std::string>& args,
                                         const std::string* hf_config_json);

std::optional<CommandResult> RunImportOnSystem(const Args& args,
                                               SystemImporter import) {
  // --system SYS [--hf-config CONFIG] -- ARGS...: the two options in either
  // order, each also as --option=VALUE; SYS and CONFIG are files or presets.
  struct Option {
    std::string name;
    std::optional<std::string> value;
  };
  Option system{"--system", std::nullopt};
  Option config{"--hf-config", std::nullopt};
  size_t next = 0;
  while (next < args.size() && args[next] != "--") {
    Option* option = nullptr;
    std::string value;
    for (Option* candidate : {&system, &config}) {
      const std::string with_value = candidate->name + "=";
      if (args[next] == candidate->name && next + 1 < args.size()) {
        option = candidate;
        value = args[next + 1];
        next += 2;
      } else if (args[next].rfind(with_value, 0) == 0) {
        option = candidate;
        value = args[next].substr(with_value.size());
        next += 1;
      }
      if (option != nullptr) break;
    }
    if (option == nullptr || value.empty()) return std::nullopt;
    if (option->value) return UsageResult(option->name + " given twice");
    option->value = value;
  }
  if (!system.value || next >= args.size()) return std::nullopt;
  std::string system_text, config_text;
  if (std::optional<CommandResult> failed =
          ReadInputOrPreset(*system.value, PresetKind::kSystem, &system_text)) {
    return failed;
  }
  if (config.value) {
    if (std::optional<CommandResult> failed = ReadInputOrPreset(
            *config.value, PresetKind::kModel, &config_text)) {
      return failed;
    }
  }
  return import(system_text, Args(args.begin() + next + 1, args.end()),
                config.value ? &config_text : nullptr);
}

std::optional<CommandResult> RunImportMegatron(const Args& args) {
  return RunImportOnSystem(args, &ImportMegatron);
}

std::optional<CommandResult> RunImportVllm(const Args& args) {
  return RunImportOnSystem(args, &ImportVllm);
}

std::optional<CommandResult> RunImportSglang(const Args& args) {
  return RunImportOnSystem(args, &ImportSglang);
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

// Writes all of `text` to `fd`, or returns the errno of the failure.
int WriteAll(int fd, absl::string_view text) {
  while (!text.empty()) {
    const ssize_t n = write(fd, text.data(), text.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return EIO;
    text.remove_prefix(static_cast<size_t>(n));
  }
  return 0;
}

// One stage's file in the dump directory: written under `temporary`, then
// renamed to `final_name` (both relative to the directory).
struct DumpFile {
  std::string temporary;
  std::string final_name;
};

// Writes one stage text per file, DIR/<stage>.txt, and only inside `dir`:
//  * `dir` is created if missing (one level, mode 0755); an existing
//    non-directory is an error;
//  * every stage is written to a fresh temporary in `dir`, created with
//    O_CREAT|O_EXCL|O_NOFOLLOW (never an existing file or a planted
//    symlink), with every write and close checked;
//  * only once all were written are they renamed onto their final names, so
//    a planted DIR/report.txt symlink is replaced, never followed, and a
//    failure leaves no partial set (the temporaries are removed). A final
//    name that is a directory is refused before any rename; only a rename
//    failing for another reason (or a race) can leave the set half-replaced.
// Every error names the path and the system's reason.
absl::Status DumpStages(const std::string& dir,
                        const std::vector<StageText>& stages) {
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot create directory ", dir, ": ", ErrnoText(errno)));
  }
  const int dir_fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot use ", dir, " as the dump directory: ", ErrnoText(errno)));
  }
  FdCloser dir_closer(dir_fd);
  const auto in_dir = [&dir](const std::string& name) {
    return absl::StrCat(dir, "/", name);
  };

  std::vector<DumpFile> files;
  // Removes every temporary still there; returns `error` for convenience.
  const auto fail = [&](absl::Status error) -> absl::Status {
    for (const DumpFile& file : files) {
      unlinkat(dir_fd, file.temporary.c_str(), 0);
    }
    return error;
  };
  for (const StageText& stage : stages) {
    // Stage names come from core/report; a name that is not a plain file
    // name would write outside `dir`, which is a bug, not an input problem.
    if (stage.stage.empty() || stage.stage[0] == '.' ||
        stage.stage.find('/') != std::string::npos) {
      return fail(absl::InternalError(absl::StrCat(
          "stage name \"", stage.stage, "\" is not a plain file name")));
    }
    DumpFile file;
    file.final_name = absl::StrCat(stage.stage, ".txt");
    int fd = -1;
    for (int attempt = 0; fd < 0; ++attempt) {
      file.temporary = absl::StrCat(".", file.final_name, ".tmp-",
                                    static_cast<long>(getpid()), "-", attempt);
      fd = openat(dir_fd, file.temporary.c_str(),
                  O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
      if (fd < 0 && (errno != EEXIST || attempt >= 100)) {
        return fail(absl::InvalidArgumentError(absl::StrCat(
            "cannot create ", in_dir(file.temporary), ": ", ErrnoText(errno))));
      }
    }
    files.push_back(file);
    const int write_error = WriteAll(fd, stage.text);
    if (write_error != 0) {
      close(fd);
      return fail(absl::InvalidArgumentError(
          absl::StrCat("cannot write ", in_dir(file.temporary), ": ",
                       ErrnoText(write_error))));
    }
    if (close(fd) != 0) {
      return fail(absl::InvalidArgumentError(absl::StrCat(
          "cannot write ", in_dir(file.temporary), ": ", ErrnoText(errno))));
    }
  }
  // A final name that is a directory cannot be replaced: refuse before any
  // rename rather than leave a partial set.
  for (const DumpFile& file : files) {
    struct stat info;
    if (fstatat(dir_fd, file.final_name.c_str(), &info, AT_SYMLINK_NOFOLLOW) ==
            0 &&
        S_ISDIR(info.st_mode)) {
      return fail(absl::InvalidArgumentError(
          absl::StrCat("cannot replace ", in_dir(file.final_name), ": ",
                       ErrnoText(EISDIR))));
    }
  }
  for (size_t i = 0; i < files.size(); ++i) {
    if (renameat(dir_fd, files[i].temporary.c_str(), dir_fd,
                 files[i].final_name.c_str()) != 0) {
      const absl::Status error = absl::InvalidArgumentError(
          absl::StrCat("cannot rename ", in_dir(files[i].temporary), " to ",
                       in_dir(files[i].final_name), ": ", ErrnoText(errno)));
      files.erase(files.begin(), files.begin() + i);  // renamed already
      return fail(error);
    }
  }
  return absl::OkStatus();
}

std::optional<CommandResult> RunAnalyze(const Args& args) {
  // SPEC.json [--dump-ir DIR]
  if (args.size() == 1) return WithSpec(args, &Analyze);
  if (args.size() != 3 || args[1] != "--dump-ir") return std::nullopt;
  if (args[2].empty()) {
    return UsageResult("--dump-ir needs a directory name, not \"\"");
  }
  std::vector<std::string> files;
  if (std::optional<CommandResult> failed = ReadFiles({args[0]}, &files)) {
    return failed;
  }
  std::vector<StageText> stages;
  CommandResult result = AnalyzeStages(files[0], &stages);
  if (!stages.empty()) {
    if (const absl::Status dumped = DumpStages(args[2], stages); !dumped.ok()) {
      // The one status -> exit code mapping (an internal error is a bug).
      CommandResult failure = FailureResult(dumped);
      if (result.exit_code == kExitOk || failure.exit_code == kExitInternal) {
        result.exit_code = failure.exit_code;
      }
      for (FieldError& e : failure.errors) result.errors.push_back(e);
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

std::optional<CommandResult> RunSchedule(const Args& args) {
  // SPEC.json [--json], --json before or after the spec.
  Args positional;
  bool json = false;
  for (const std::string& arg : args) {
    if (arg != "--json") {
      positional.push_back(arg);
    } else if (json) {
      return UsageResult("--json given twice");
    } else {
      json = true;
    }
  }
  if (positional.size() != 1) return std::nullopt;
  std::vector<std::string> files;
  if (std::optional<CommandResult> failed = ReadFiles(positional, &files)) {
    return failed;
  }
  return ScheduleTimeline(files[0], json);
}

std::optional<CommandResult> RunExplain(const Args& args) {
  // SPEC.json FIGURE [--depth N], --depth anywhere after the command.
  Args positional;
  std::optional<int64_t> depth;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] != "--depth") {
      positional.push_back(args[i]);
      continue;
    }
    if (depth.has_value()) {
      CommandResult result = UsageResult("--depth given twice");
      result.errors[0].field = "--depth";
      return result;
    }
    if (i + 1 == args.size()) {
      CommandResult result = UsageResult("--depth needs a value");
      result.errors[0].field = "--depth";
      return result;
    }
    const std::string& value = args[++i];
    depth =
        value == "0" ? std::optional<int64_t>(0) : ParsePositiveInteger(value);
    if (!depth.has_value()) {
      CommandResult result = UsageResult(absl::StrCat(
          "--depth: expected an integer >= 0 (", kPositiveIntegerSpelling,
          "), got ", QuoteExcerpt(value)));
      result.errors[0].field = "--depth";
      return result;
    }
  }
  if (positional.size() != 2) return std::nullopt;
  std::vector<std::string> files;
  if (std::optional<CommandResult> failed =
          ReadFiles({positional[0]}, &files)) {
    return failed;
  }
  return Explain(files[0], positional[1], depth);
}

std::optional<CommandResult> RunValidate(const Args& args) {
  // [--profile calculon|refined] [--json] [--corpus FILE], in any order.
  Args rest;
  std::string corpus_path;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] != "--corpus") {
      rest.push_back(args[i]);
      continue;
    }
    if (!corpus_path.empty()) return UsageResult("--corpus given twice");
    if (i + 1 == args.size() || args[i + 1].empty()) {
      return UsageResult("--corpus needs a file name");
    }
    corpus_path = args[++i];
  }
  if (corpus_path.empty()) return Validate(ValidationCorpusText(), rest);
  std::vector<std::string> files;
  if (std::optional<CommandResult> failed = ReadFiles({corpus_path}, &files)) {
    return failed;
  }
  return Validate(files[0], rest);
}

// search --serving --system SYS --hf-config CONFIG plus the serving search
// flags, in any order (`args` without --serving). SYS and CONFIG are files
// or presets; when one cannot be read, its error is reported with every
// problem of the flags.
std::optional<CommandResult> RunServingSearch(const Args& args) {
  struct Input {
    const char* flag;
    PresetKind kind;
    std::optional<std::string> path;
    std::string text;
  };
  Input inputs[] = {{"--system", PresetKind::kSystem, std::nullopt, ""},
                    {"--hf-config", PresetKind::kModel, std::nullopt, ""}};
  for (size_t i = 0; i < args.size(); ++i) {
    for (Input& input : inputs) {
      const std::string with_value = absl::StrCat(input.flag, "=");
      if (args[i] == input.flag && i + 1 < args.size()) {
        input.path = args[i + 1];
      } else if (args[i].rfind(with_value, 0) == 0) {
        input.path = args[i].substr(with_value.size());
      }
    }
  }
  std::vector<FieldError> unreadable;
  for (Input& input : inputs) {
    if (!input.path || input.path->empty()) return std::nullopt;
    if (std::optional<CommandResult> failed =
            ReadInputOrPreset(*input.path, input.kind, &input.text)) {
      for (FieldError& e : failed->errors) {
        e.message = absl::StrCat(input.flag, ": ", e.message);
        unreadable.push_back(std::move(e));
      }
    }
  }
  if (unreadable.empty()) return ServeSearch(inputs[0].text, inputs[1].text, args);
  CommandResult result = ServeSearchFlagErrors(args);
  result.exit_code = kExitInvalidInput;
  unreadable.insert(unreadable.end(), result.errors.begin(),
                    result.errors.end());
  result.errors = std::move(unreadable);
  return result;
}

std::optional<CommandResult> RunSearch(const Args& args) {
  // --serving anywhere selects the serving search.
  const auto serving = std::find(args.begin(), args.end(), "--serving");
  if (serving != args.end()) {
    Args rest(args.begin(), serving);
    rest.insert(rest.end(), serving + 1, args.end());
    return RunServingSearch(rest);
  }
  // --app APP --system SYS plus the search flags, in any order.
  std::string app_path, system_path;
  for (size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == "--app") app_path = args[i + 1];
    if (args[i] == "--system") system_path = args[i + 1];
  }
  if (app_path.empty() || system_path.empty()) return std::nullopt;
  std::vector<std::string> files;
  if (std::optional<CommandResult> failed = ReadFiles({app_path}, &files)) {
    return failed;
  }
  files.emplace_back();
  if (std::optional<CommandResult> failed =
          ReadInputOrPreset(system_path, PresetKind::kSystem, &files[1])) {
    return failed;
  }
  // A progress line on a terminal's stderr once a search has run for a
  // second, rewritten when the whole percentage changes (a log file would
  // only collect the rewrites).
  const auto start = std::chrono::steady_clock::now();
  const bool terminal = isatty(STDERR_FILENO) != 0;
  bool shown = false;
  int last_percent = -1;
  ProgressFn progress = [&](double fraction) {
    if (!terminal) return;
    const auto elapsed = std::chrono::steady_clock::now() - start;
    if (elapsed < std::chrono::seconds(1)) return;
    const int percent = static_cast<int>(fraction * 100);
    if (percent == last_percent) return;
    last_percent = percent;
    shown = true;
    std::fprintf(stderr, "\rsearching: %3d%%", percent);
    std::fflush(stderr);
  };
  CommandResult result = Search(files[0], files[1], args, progress);
  if (shown) std::fprintf(stderr, "\rsearching: done\n");
  return result;
}

// serve explain SPEC.json FIGURE.
std::optional<CommandResult> RunServeExplain(const Args& args) {
  if (args.size() != 2) return std::nullopt;
  std::vector<std::string> files;
  if (std::optional<CommandResult> failed = ReadFiles({args[0]}, &files)) {
    return failed;
  }
  return ServeExplain(files[0], args[1]);
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
       "--system SYS.json [--hf-config CONFIG.json] -- MEGATRON-FLAGS...",
       "Megatron-LM flags on a Calculon system -> canonical spec JSON; "
       "--hf-config: the model of a Hugging Face config.json, a flag given "
       "overriding it",
       &RunImportMegatron},
      {{"import", "vllm"},
       "--system SYS.json --hf-config CONFIG.json -- VLLM-FLAGS...",
       "a `vllm serve` command line and its benchmark's load "
       "(--random-input-len, --random-output-len, --max-concurrency) on a "
       "system and a Hugging Face config -> canonical serving spec JSON; every "
       "flag modelled, ignored with a note, or an error (core/serving/"
       "README.md)",
       &RunImportVllm},
      {{"import", "sglang"},
       "--system SYS.json --hf-config CONFIG.json -- SGLANG-FLAGS...",
       "a `python -m sglang.launch_server` line and its bench_serving load "
       "(--dataset-name random, --random-input-len, --random-output-len, "
       "--random-range-ratio 1, --max-concurrency) on a system and a Hugging "
       "Face config -> canonical serving spec JSON; every flag modelled, "
       "ignored with a note, or an error (core/serving/README.md)",
       &RunImportSglang},
      {{"check"},
       "SPEC.json",
       "every violated rule of a spec, or the spec with its derived values",
       [](const Args& args) { return WithSpec(args, &Check); }},
      {{"canonical"},
       "SPEC.json",
       "the spec in canonical form, every default spelled out, without "
       "judging the rules (errors: the document's syntax, keys, types and "
       "names)",
       [](const Args& args) { return WithSpec(args, &Canonical); }},
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
       "SPEC.json FIGURE [--depth N]",
       "the formula of one report figure with its values, then its lineage "
       "back to spec and system; --depth N stops the tree N levels down",
       &RunExplain},
      {{"serve"},
       "SPEC.json",
       "the serving analysis of a serving spec "
       "(blueprinting.serving_spec/1, core/serving/README.md): KV cache per "
       "token and rank, memory left for it and max_concurrency, prefill and "
       "decode step times, ttft, tpot, requests and tokens per second, each "
       "figure with its formula and lineage",
       [](const Args& args) { return WithSpec(args, &Serve); }},
      {{"serve", "check"},
       "SPEC.json",
       "every violated rule of a serving spec, or the serving spec in "
       "canonical form (presets expanded, every field spelled out)",
       [](const Args& args) { return WithSpec(args, &ServeCheck); }},
      {{"serve", "explain"},
       "SPEC.json FIGURE",
       "one serving figure's value and formula, then its sources down to "
       "the spec's and the system's values",
       &RunServeExplain},
      {{"schedule"},
       "SPEC.json [--json]",
       "the concrete pipeline schedule of the spec, simulated: every "
       "command of every stage (F, B, W, P2P) with its start and end, "
       "per-stage busy and idle time, peak live microbatches, the simulated "
       "bubble beside the analytic one; --json as JSON",
       &RunSchedule},
      {{"search"},
       // The search flags' own table (core/search/search_flags.h).
       SearchSynopsis(),
       "every valid mapping of Calculon's search space, best first; APP is "
       "Calculon's application JSON or a spec/2 or spec/3 model object (GQA, "
       "gated MLP, vocabulary; mixture of experts: expert parallelism is "
       "searched too); --max-context adds context parallelism up to N, "
       "--sharding all every ZeRO stage, --schedules all the simulated "
       "schedules gpipe, zb_h1, zb_h2, dualpipe (even p, no DP overlap), "
       "dualpipe_v and zb_v beside 1f1b and interleaved_1f1b (even stages); "
       "--stage-layouts megatron also every p that does not divide the "
       "blocks, with Megatron-LM's first and last stages of their own block "
       "counts and the middle ones even (explicit stage layouts, 1f1b and "
       "interleaved_1f1b), all also with uneven "
       "stages (blocks per stage rounded up, 1f1b and interleaved_1f1b); "
       "--threads N runs N workers (default: one per "
       "core; the result is the same); --profile refined ranks every mapping "
       "by the refined profile's model (options.profile); --recipes all also "
       "every low-precision recipe the system runs (FP8; MXFP8 and NVFP4 "
       "with a float4 rate), or a list; with experts --expert-dispatchers "
       "all also deep_ep and hybrid_ep (ep > 1), or a list, and "
       "--expert-overlap all also the EP overlap with delay_wgrad where the "
       "checker allows it; --specs adds each "
       "mapping's canonical spec to the JSON",
       &RunSearch},
      {{"search", "--serving"},
       // The serving search flags' own table
       // (core/serving/serving_search_flags.h).
       ServeSearchSynopsis(),
       "every serving mapping of CONFIG's model on N GPUs of SYS (model and "
       "system files or presets): one shared pool (tensor, pipeline, expert, "
       "attention data degrees and replicas) or prefill and decode pools "
       "splitting the GPUs, each at every concurrency "
       "attention_data x pipeline x 2^k per (decode) replica its KV cache "
       "holds, judged by the serving checker and ranked by "
       "output_tokens_per_second_per_gpu among those with ttft <= "
       "--max-ttft and tpot <= --max-tpot; --json adds each mapping's "
       "figures and canonical serving spec (core/serving/README.md)",
       &RunServingSearch},
      {{"validate"},
       "[--profile calculon|refined] [--without CORRECTION]... [--json] "
       "[--corpus CORPUS.json]",
       "predicted vs measured for every published run of the corpus "
       "(tests/validation/corpus.json, built in): error per row, mean and "
       "max |error| per source, group and overall, skipped rows with "
       "reasons; --without turns one of the refined profile's corrections "
       "off",
       &RunValidate},
      {{"presets"},
       "(no arguments)",
       "the shipped presets as JSON: Hugging Face config.json files (models) "
       "and Calculon systems, by the name --hf-config and --system accept",
       [](const Args& args) -> std::optional<CommandResult> {
         if (!args.empty()) return std::nullopt;
         return Presets();
       }},
      {{"metadata"},
       "(no arguments)",
       "enums, report figures (unit, group, meaning) and spec fields as JSON",
       [](const Args& args) -> std::optional<CommandResult> {
         if (!args.empty()) return std::nullopt;
         return Metadata();
       }},
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
                  "inputs: regular files of at most 16 MiB (not a FIFO, a "
                  "device or a directory); --system and --hf-config also take "
                  "a preset's name (blueprint presets)\n"
                  "exit status: 0 ok, 1 usage error, 2 invalid input or an "
                  "unusable input or output file (one \"error: ...\" line per "
                  "problem on stderr), 3 internal error (a bug)\n");
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

// Standard output, the only way anything reaches it: every write is checked
// and Close() flushes and closes it, so that a failed write (a full disk, a
// closed stdout) is reported once, by main, and never exits 0.
class Stdout {
 public:
  void Write(absl::string_view text) {
    if (text.empty()) return;
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size()) {
      Fail(errno);
    }
  }

  // Flushes and closes stdout; returns the errno of the first failure since
  // the start, or 0 when every byte was written.
  int Close() {
    if (std::fflush(stdout) != 0) Fail(errno);
    if (std::ferror(stdout) != 0) Fail(EIO);  // an error whose errno is gone
    if (std::fclose(stdout) != 0) Fail(errno);
    return error_;
  }

 private:
  void Fail(int error) {
    if (error_ == 0) error_ = error != 0 ? error : EIO;
  }

  int error_ = 0;
};

void PrintError(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stderr);
}

int UsageError(const std::string& message) {
  PrintError(absl::StrCat("error: ", message, "\n", UsageText()));
  return kExitUsage;
}

int Run(const Args& args, Stdout& out) {
  if (args.size() == 1 &&
      (args[0] == "help" || args[0] == "--help" || args[0] == "-h")) {
    out.Write(UsageText());
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
  if (result->exit_code == kExitUsage) {
    std::string message;
    for (const FieldError& error : result->errors) {
      absl::StrAppend(&message,
                      message.empty() ? "" : "\nerror: ", error.message);
    }
    return UsageError(message);
  }
  out.Write(result->output);
  for (const std::string& note : result->notes) {
    PrintError(absl::StrCat("note: ", note, "\n"));
  }
  for (const FieldError& error : result->errors) {
    PrintError(absl::StrCat("error: ", error.message, "\n"));
  }
  return result->exit_code;
}

// Keeps descriptors 0, 1 and 2 taken: when the CLI is started with one of
// them closed (`>&-`), the next open() would get it, and output meant for
// stdout could land in a --dump-ir file. A closed one is reopened on
// /dev/null in the direction that makes using it fail (stdout and stderr
// read-only), so a write to a closed stdout still fails with EBADF.
void ReserveStandardDescriptors() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    const int opened =
        open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);  // inherited
    if (opened >= 0 && opened != fd) close(opened);
  }
}

}  // namespace
}  // namespace blueprint

int main(int argc, char** argv) {
  blueprint::ReserveStandardDescriptors();
  blueprint::Stdout out;
  int exit_code = blueprint::Run(blueprint::Args(argv + 1, argv + argc), out);
  if (const int error = out.Close(); error != 0) {
    blueprint::PrintError(absl::StrCat(
        "error: cannot write standard output: ", std::strerror(error), "\n"));
    exit_code = std::max(exit_code, blueprint::kExitInvalidInput);
  }
  return exit_code;
}
