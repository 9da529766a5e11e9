// The one entry point that the libFuzzer target (adapters_fuzzer.cc) and the
// deterministic seed replay test (fuzz_seeds_replay_test.cc) both call, so
// that bazel test replays exactly what the fuzzer runs.
//
// An input is a mode byte followed by the mode's payload:
//   '0' (or any byte % 4 == 0)  a canonical spec JSON text
//   '1'                         Calculon app, exe and sys JSON, separated by
//                               NUL bytes (missing parts are empty)
//   '2'                         Megatron-LM arguments, one per line, imported
//                               on Calculon's a100_80g system
//   '3'                         a Calculon system JSON text
// Beyond "never crash", FuzzAdapters checks the round-trip invariants of
// every adapter that accepts the input and aborts with a message on stderr
// when one breaks:
//   * SpecToJson is a fixed point: print(parse(print(s))) == print(s);
//   * a checked spec exported to Calculon's files imports back to itself;
//   * a Calculon system printed and read back prints the same.
#ifndef BLUEPRINTING_CORE_ADAPTERS_FUZZ_ENTRY_H_
#define BLUEPRINTING_CORE_ADAPTERS_FUZZ_ENTRY_H_

#include <cstddef>
#include <cstdint>

namespace blueprint {

void FuzzAdapters(const uint8_t* data, size_t size);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_ADAPTERS_FUZZ_ENTRY_H_
