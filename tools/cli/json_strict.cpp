// SPDX-License-Identifier: Apache-2.0
#include "tools/cli/json_strict.h"

#include <cstring>
#include <set>
#include <utility>
#include <vector>

namespace szcli {

namespace {

// Builds the tree in one SAX pass and enforces depth and key uniqueness as
// it goes, so a hostile header stops at the first deep level or repeated
// key. Keys are appended without ordered_map's linear lookup (uniqueness is
// already checked here), which keeps headers with 100k tensors linear.
class StrictDom : public nlohmann::json_sax<Json> {
 public:
  explicit StrictDom(Json* root) : root_(root) {}
  std::string error;

  bool null() override { return put(Json(nullptr)) != nullptr; }
  bool boolean(bool v) override { return put(Json(v)) != nullptr; }
  bool number_integer(number_integer_t v) override { return put(Json(v)) != nullptr; }
  bool number_unsigned(number_unsigned_t v) override { return put(Json(v)) != nullptr; }
  bool number_float(number_float_t v, const string_t&) override { return put(Json(v)) != nullptr; }
  bool string(string_t& v) override { return put(Json(std::move(v))) != nullptr; }
  bool binary(binary_t&) override { return stop("binary values are not JSON"); }
  bool start_object(std::size_t) override {
    if (!deeper()) return false;
    open_.push_back(put(Json::object()));
    keys_.emplace_back();
    return true;
  }
  bool key(string_t& k) override {
    if (!keys_.back().insert(k).second) return stop("duplicate key \"" + k + "\"");
    auto& members = static_cast<Json::object_t::Container&>(open_.back()->get_ref<Json::object_t&>());
    members.emplace_back(k, Json());
    slot_ = &members.back().second;
    return true;
  }
  bool end_object() override {
    open_.pop_back();
    keys_.pop_back();
    return true;
  }
  bool start_array(std::size_t) override {
    if (!deeper()) return false;
    open_.push_back(put(Json::array()));
    keys_.emplace_back();  // arrays hold no keys; one entry keeps the depth count
    return true;
  }
  bool end_array() override {
    open_.pop_back();
    keys_.pop_back();
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& ex) override {
    return stop(std::string(ex.what()) + " (byte " + std::to_string(position) + ")");
  }

 private:
  // Places v where the parser is (the root, the next array element or the
  // value of the last key) and returns where it went.
  Json* put(Json&& v) {
    if (open_.empty()) {
      *root_ = std::move(v);
      return root_;
    }
    Json* top = open_.back();
    if (top->is_array()) {
      auto& a = top->get_ref<Json::array_t&>();
      a.push_back(std::move(v));
      return &a.back();
    }
    *slot_ = std::move(v);
    return slot_;
  }
  bool deeper() {
    return keys_.size() >= static_cast<size_t>(kJsonMaxDepth)
               ? stop("nesting too deep (more than " + std::to_string(kJsonMaxDepth) + " levels)")
               : true;
  }
  bool stop(const std::string& why) {
    if (error.empty()) error = why;
    return false;
  }
  Json* root_;
  Json* slot_ = nullptr;
  std::vector<Json*> open_;
  std::vector<std::set<std::string>> keys_;
};

}  // namespace

bool parse_json_strict(const char* text, uint64_t size, Json* out, std::string* error) {
  // nlohmann stops at a NUL byte as at the end of the text; RFC 8259 allows
  // none outside strings and none raw inside them.
  if (const void* nul = std::memchr(text, 0, size)) {
    *error = "NUL byte at byte " + std::to_string(static_cast<const char*>(nul) - text) +
             " (JSON text allows none; safetensors pads its header with spaces)";
    return false;
  }
  Json tree;
  StrictDom sax(&tree);
  if (!Json::sax_parse(text, text + size, &sax) || !sax.error.empty()) {
    *error = sax.error.empty() ? "invalid JSON" : sax.error;
    return false;
  }
  *out = std::move(tree);
  return true;
}

bool json_u64(const Json& v, uint64_t* out) {
  if (!v.is_number_unsigned()) return false;
  *out = v.get<uint64_t>();
  return true;
}

std::string json_text(const Json& v) { return v.dump(-1, ' ', false, Json::error_handler_t::replace); }

}  // namespace szcli
