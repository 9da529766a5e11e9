// `blueprint validate` as a pure function on strings (see commands.h): the
// measured-run corpus (core/validation) predicted under one profile.
#ifndef BLUEPRINTING_CORE_API_VALIDATE_COMMAND_H_
#define BLUEPRINTING_CORE_API_VALIDATE_COMMAND_H_

#include <string>
#include <vector>

#include "core/api/commands.h"

namespace blueprint {

// `args`: [--profile calculon|refined] [--without CORRECTION]... [--json] in
// any order (--without: a correction of core/spec/corrections.h turned off,
// only with --profile refined);
// a repeated or unknown flag, or a profile that is not one of the two, exits
// 1 (usage) naming it. `corpus_json` is the corpus document (the embedded
// tests/validation/corpus.json unless the CLI's --corpus FILE gave another).
// Output: core/validation's text report, or its canonical JSON with --json.
// A malformed corpus exits 2 with one error per problem.
CommandResult Validate(const std::string& corpus_json,
                       const std::vector<std::string>& args);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_API_VALIDATE_COMMAND_H_
