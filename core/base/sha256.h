// SHA-256 (FIPS 180-4) of a byte string, in pure integer arithmetic so the
// native and wasm builds agree by construction. Digest = SHA-256 of a
// canonical text.
#ifndef BLUEPRINTING_CORE_BASE_SHA256_H_
#define BLUEPRINTING_CORE_BASE_SHA256_H_

#include <array>
#include <cstdint>
#include <string>

namespace blueprint {

// The 32-byte digest of `data`.
std::array<uint8_t, 32> Sha256(const std::string& data);

// The digest as 64 lowercase hex characters.
std::string Sha256Hex(const std::string& data);

}  // namespace blueprint

#endif  // BLUEPRINTING_CORE_BASE_SHA256_H_
