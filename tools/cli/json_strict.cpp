// SPDX-License-Identifier: Apache-2.0
#include "tools/cli/json_strict.h"

#include <set>
#include <vector>

namespace szcli {

namespace {

// First pass: a SAX walk that enforces depth and key uniqueness before any
// DOM is built, so a hostile header cannot make a deep or ambiguous tree.
class StrictSax : public nlohmann::json_sax<Json> {
 public:
  std::string error;

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override {
    keys_.emplace_back();
    return deeper();
  }
  bool key(string_t& k) override {
    if (!keys_.back().insert(k).second) return stop("duplicate key \"" + k + "\"");
    return true;
  }
  bool end_object() override {
    keys_.pop_back();
    return true;
  }
  bool start_array(std::size_t) override {
    keys_.emplace_back();  // arrays hold no keys; one entry keeps the depth count
    return deeper();
  }
  bool end_array() override {
    keys_.pop_back();
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& ex) override {
    return stop(std::string(ex.what()) + " (byte " + std::to_string(position) + ")");
  }

 private:
  bool deeper() {
    return keys_.size() > static_cast<size_t>(kJsonMaxDepth)
               ? stop("nesting too deep (more than " + std::to_string(kJsonMaxDepth) + " levels)")
               : true;
  }
  bool stop(const std::string& why) {
    if (error.empty()) error = why;
    return false;
  }
  std::vector<std::set<std::string>> keys_;
};

}  // namespace

bool parse_json_strict(const char* text, uint64_t size, Json* out, std::string* error) {
  StrictSax sax;
  const char* end = text + size;
  if (!Json::sax_parse(text, end, &sax) || !sax.error.empty()) {
    *error = sax.error.empty() ? "invalid JSON" : sax.error;
    return false;
  }
  *out = Json::parse(text, end, nullptr, /*allow_exceptions=*/false);
  if (out->is_discarded()) {  // the SAX pass accepted it: cannot happen
    *error = "invalid JSON";
    return false;
  }
  return true;
}

bool json_u64(const Json& v, uint64_t* out) {
  if (!v.is_number_unsigned()) return false;
  *out = v.get<uint64_t>();
  return true;
}

std::string json_text(const Json& v) { return v.dump(-1, ' ', false, Json::error_handler_t::replace); }

}  // namespace szcli
