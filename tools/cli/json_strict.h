/* SPDX-License-Identifier: Apache-2.0 */
// JSON for the CLI is nlohmann-json. Untrusted text (safetensors headers) is
// parsed through parse_json_strict, which adds what the format's reference
// loader needs on top of RFC 8259: a bound on nesting depth and no duplicate
// keys; a NUL byte anywhere is refused (nlohmann would stop at it). Objects
// keep source order (ordered_json).
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace szcli {

using Json = nlohmann::ordered_json;

constexpr int kJsonMaxDepth = 64;

// Parses the whole text (surrounding whitespace allowed). On failure returns
// false and sets *error to a message with the byte offset.
bool parse_json_strict(const char* text, uint64_t size, Json* out, std::string* error);

// True for an integer in [0, 2^64) written without sign, fraction or exponent
// (nlohmann keeps those as number_unsigned, exactly).
bool json_u64(const Json& v, uint64_t* out);

// Compact one-line text of v; bytes that are not UTF-8 (file names) are
// replaced with U+FFFD instead of failing.
std::string json_text(const Json& v);

}  // namespace szcli
