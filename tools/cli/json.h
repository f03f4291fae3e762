/* SPDX-License-Identifier: Apache-2.0 */
// Minimal JSON: a strict parser (for safetensors headers) and a writer (for
// --json output). The parser bounds nesting depth and rejects anything RFC
// 8259 does not allow; numbers keep their text so u64 values stay exact.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace szcli {

struct JsonValue {
  enum class Kind { null, boolean, number, string, array, object };
  Kind kind = Kind::null;
  bool boolean = false;
  std::string text;  // number text or decoded string
  std::vector<JsonValue> items;
  std::vector<std::pair<std::string, JsonValue>> members;  // source order

  // Member by key or null. Duplicate keys are rejected by the parser.
  const JsonValue* find(const std::string& key) const;
  // True for an integer in [0, 2^64) written without sign, fraction or exponent.
  bool as_u64(uint64_t* out) const;
};

// Parses the whole text (surrounding whitespace allowed). On failure returns
// false and sets *error to a message with the byte offset.
bool json_parse(const char* text, uint64_t size, JsonValue* out, std::string* error);

// Streaming writer with automatic commas; output is compact one-line JSON.
class JsonWriter {
 public:
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(const std::string& k);
  JsonWriter& value(const std::string& s);
  JsonWriter& value(const char* s);
  JsonWriter& value(uint64_t v);
  JsonWriter& value(int v);
  JsonWriter& value(double v);  // non-finite values are written as null
  JsonWriter& value(bool v);
  JsonWriter& null();
  const std::string& str() const { return out_; }

 private:
  void separate();
  std::string out_;
  std::vector<bool> first_;  // per open container: no element written yet
  bool after_key_ = false;
};

std::string json_escape(const std::string& s);

}  // namespace szcli
