// Test-only fixtures of the Megatron-LM adapter's tests (megatron_*_test.cc):
// the systems they import onto, a small model every test adds flags to, and
// a command line's spec, errors, error fields and codes, and notes.
#ifndef BLUEPRINTING_CORE_ADAPTERS_MEGATRON_TEST_UTIL_H_
#define BLUEPRINTING_CORE_ADAPTERS_MEGATRON_TEST_UTIL_H_

#include <string>
#include <vector>

#include "core/base/field_errors.h"
#include "core/spec/spec.h"

namespace blueprint {
namespace megatron_test {

// Where the shared Calculon cases and systems are (fuzz seeds).
inline constexpr char kSeeds[] = "core/adapters/fuzz_seeds/";

// A model many tests add flags to (t = p = d = 1).
inline constexpr char kModel[] =
    "--num-layers 24 --hidden-size 1024 --num-attention-heads 16 "
    "--seq-length 1024 --micro-batch-size 2 --vocab-size 50257 "
    "--max-position-embeddings 1024 ";

// The spec Calculon's adapter makes of a shared oracle case.
MappingSpec CalculonCase(const std::string& name);

// Calculon's a100_80g system.
System A100();

// Calculon's h100_80g_nvl8 with bfloat16 rates equal to its float16 ones (as
// on an H100), so that a --bf16 run checks.
System H100WithBfloat16();

// The words of `command_line`, split at spaces.
std::vector<std::string> Args(const std::string& command_line);

// The words of a .flags file (core/adapters/testdata/megatron/): one per
// line, '#' lines are comments.
std::vector<std::string> FlagsFile(const std::string& name);

// The error lines of `command_line` on A100() (none when it imports).
std::vector<std::string> Errors(const std::string& command_line);

// The notes of `command_line` (whether or not it has errors).
std::vector<std::string> Notes(const std::string& command_line);

// The training spec of `command_line`, which must import.
TransformerTrainingMappingSpec Import(const std::string& command_line);

// The field of each error of `command_line`, in order.
std::vector<std::string> Fields(const std::string& command_line);

// The code of each error of `command_line`, in order.
std::vector<ErrorCode> Codes(const std::string& command_line);

}  // namespace megatron_test
}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_ADAPTERS_MEGATRON_TEST_UTIL_H_
