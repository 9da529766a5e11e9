// File: demo.h
// -----------------------------------------------------------------------------
// A deterministic figure that the first wasm module and page show, so that the
// native build, node and the browser can be compared before the real report
// exists. Built natively by :digest_demo and into the module by :blueprinting.
#ifndef WASM_DEMO_H_
#define WASM_DEMO_H_

#include <string>

namespace blueprinting {

// DigestDemo()
//
// Returns "pmath-fnv1a64 <16 hex digits>": FNV-1a over the bits of pm_exp,
// pm_log, pm_pow, pm_sin and pm_tanh on a fixed sweep of inputs. Identical
// wherever //core/pmath is (native, node, every browser).
std::string DigestDemo();

}  // namespace blueprinting

#endif  // WASM_DEMO_H_
