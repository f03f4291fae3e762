// SPDX-License-Identifier: Apache-2.0
#include "tools/cli/json.h"

#include <cmath>
#include <cstdio>

namespace szcli {

const JsonValue* JsonValue::find(const std::string& key) const {
  for (const auto& m : members)
    if (m.first == key) return &m.second;
  return nullptr;
}

bool JsonValue::as_u64(uint64_t* out) const {
  if (kind != Kind::number || text.empty() || text.size() > 20) return false;
  if (text.size() > 1 && text[0] == '0') return false;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  *out = v;
  return true;
}

namespace {

constexpr int kMaxDepth = 64;

class Parser {
 public:
  Parser(const char* p, uint64_t n) : p_(p), n_(n) {}

  bool parse(JsonValue* out, std::string* error) {
    skip_ws();
    if (!value(out, 0)) return report(error);
    skip_ws();
    if (i_ != n_) {
      err_ = "unexpected data after the JSON value";
      return report(error);
    }
    return true;
  }

 private:
  bool report(std::string* error) {
    if (error) *error = err_ + " at byte " + std::to_string(i_);
    return false;
  }
  bool fail(const char* msg) {
    err_ = msg;
    return false;
  }
  void skip_ws() {
    while (i_ < n_ && (p_[i_] == ' ' || p_[i_] == '\t' || p_[i_] == '\n' || p_[i_] == '\r')) ++i_;
  }
  bool literal(const char* word) {
    uint64_t k = 0;
    for (; word[k]; ++k)
      if (i_ + k >= n_ || p_[i_ + k] != word[k]) return fail("invalid literal");
    i_ += k;
    return true;
  }

  bool value(JsonValue* out, int depth) {
    if (depth > kMaxDepth) return fail("nesting too deep");
    if (i_ >= n_) return fail("unexpected end of JSON");
    const char c = p_[i_];
    if (c == '{') return object(out, depth);
    if (c == '[') return array(out, depth);
    if (c == '"') {
      out->kind = JsonValue::Kind::string;
      return string(&out->text);
    }
    if (c == 't') {
      out->kind = JsonValue::Kind::boolean;
      out->boolean = true;
      return literal("true");
    }
    if (c == 'f') {
      out->kind = JsonValue::Kind::boolean;
      out->boolean = false;
      return literal("false");
    }
    if (c == 'n') {
      out->kind = JsonValue::Kind::null;
      return literal("null");
    }
    if (c == '-' || (c >= '0' && c <= '9')) return number(out);
    return fail("unexpected character");
  }

  bool digits() {
    const uint64_t start = i_;
    while (i_ < n_ && p_[i_] >= '0' && p_[i_] <= '9') ++i_;
    return i_ > start;
  }

  bool number(JsonValue* out) {
    const uint64_t start = i_;
    if (p_[i_] == '-') ++i_;
    if (i_ < n_ && p_[i_] == '0') {
      ++i_;
    } else if (!digits()) {
      return fail("invalid number");
    }
    if (i_ < n_ && p_[i_] == '.') {
      ++i_;
      if (!digits()) return fail("invalid number");
    }
    if (i_ < n_ && (p_[i_] == 'e' || p_[i_] == 'E')) {
      ++i_;
      if (i_ < n_ && (p_[i_] == '+' || p_[i_] == '-')) ++i_;
      if (!digits()) return fail("invalid number");
    }
    out->kind = JsonValue::Kind::number;
    out->text.assign(p_ + start, i_ - start);
    return true;
  }

  static void put_utf8(std::string* s, uint32_t cp) {
    if (cp < 0x80) {
      s->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      s->push_back(static_cast<char>(0xC0 | (cp >> 6)));
      s->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      s->push_back(static_cast<char>(0xE0 | (cp >> 12)));
      s->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      s->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      s->push_back(static_cast<char>(0xF0 | (cp >> 18)));
      s->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      s->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      s->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }

  bool hex4(uint32_t* out) {
    if (n_ - i_ < 4) return fail("truncated \\u escape");
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = p_[i_++];
      v <<= 4;
      if (c >= '0' && c <= '9') v |= static_cast<uint32_t>(c - '0');
      else if (c >= 'a' && c <= 'f') v |= static_cast<uint32_t>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') v |= static_cast<uint32_t>(c - 'A' + 10);
      else return fail("invalid \\u escape");
    }
    *out = v;
    return true;
  }

  bool string(std::string* out) {
    ++i_;  // opening quote
    out->clear();
    while (true) {
      if (i_ >= n_) return fail("unterminated string");
      const unsigned char c = static_cast<unsigned char>(p_[i_++]);
      if (c == '"') return true;
      if (c < 0x20) return fail("control character in string");
      if (c != '\\') {
        out->push_back(static_cast<char>(c));
        continue;
      }
      if (i_ >= n_) return fail("unterminated escape");
      const char e = p_[i_++];
      switch (e) {
        case '"': out->push_back('"'); break;
        case '\\': out->push_back('\\'); break;
        case '/': out->push_back('/'); break;
        case 'b': out->push_back('\b'); break;
        case 'f': out->push_back('\f'); break;
        case 'n': out->push_back('\n'); break;
        case 'r': out->push_back('\r'); break;
        case 't': out->push_back('\t'); break;
        case 'u': {
          uint32_t cp = 0;
          if (!hex4(&cp)) return false;
          if (cp >= 0xDC00 && cp <= 0xDFFF) return fail("lone low surrogate");
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            uint32_t lo = 0;
            if (n_ - i_ < 2 || p_[i_] != '\\' || p_[i_ + 1] != 'u') return fail("lone high surrogate");
            i_ += 2;
            if (!hex4(&lo)) return false;
            if (lo < 0xDC00 || lo > 0xDFFF) return fail("bad surrogate pair");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          put_utf8(out, cp);
          break;
        }
        default:
          return fail("invalid escape");
      }
    }
  }

  bool array(JsonValue* out, int depth) {
    out->kind = JsonValue::Kind::array;
    ++i_;
    skip_ws();
    if (i_ < n_ && p_[i_] == ']') {
      ++i_;
      return true;
    }
    while (true) {
      JsonValue v;
      skip_ws();
      if (!value(&v, depth + 1)) return false;
      out->items.push_back(std::move(v));
      skip_ws();
      if (i_ >= n_) return fail("unterminated array");
      if (p_[i_] == ',') {
        ++i_;
        continue;
      }
      if (p_[i_] == ']') {
        ++i_;
        return true;
      }
      return fail("expected ',' or ']'");
    }
  }

  bool object(JsonValue* out, int depth) {
    out->kind = JsonValue::Kind::object;
    ++i_;
    skip_ws();
    if (i_ < n_ && p_[i_] == '}') {
      ++i_;
      return true;
    }
    while (true) {
      skip_ws();
      if (i_ >= n_ || p_[i_] != '"') return fail("expected a string key");
      std::string k;
      if (!string(&k)) return false;
      if (out->find(k)) return fail("duplicate key");
      skip_ws();
      if (i_ >= n_ || p_[i_] != ':') return fail("expected ':'");
      ++i_;
      skip_ws();
      JsonValue v;
      if (!value(&v, depth + 1)) return false;
      out->members.emplace_back(std::move(k), std::move(v));
      skip_ws();
      if (i_ >= n_) return fail("unterminated object");
      if (p_[i_] == ',') {
        ++i_;
        continue;
      }
      if (p_[i_] == '}') {
        ++i_;
        return true;
      }
      return fail("expected ',' or '}'");
    }
  }

  const char* p_;
  uint64_t n_;
  uint64_t i_ = 0;
  std::string err_;
};

}  // namespace

bool json_parse(const char* text, uint64_t size, JsonValue* out, std::string* error) {
  *out = JsonValue{};
  return Parser(text, size).parse(out, error);
}

std::string json_escape(const std::string& s) {
  std::string o;
  o.reserve(s.size() + 2);
  for (unsigned char c : s) {
    switch (c) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\r': o += "\\r"; break;
      case '\t': o += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          o += buf;
        } else {
          o.push_back(static_cast<char>(c));
        }
    }
  }
  return o;
}

void JsonWriter::separate() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) out_.push_back(',');
    first_.back() = false;
  }
}

JsonWriter& JsonWriter::begin_object() {
  separate();
  out_.push_back('{');
  first_.push_back(true);
  return *this;
}
JsonWriter& JsonWriter::end_object() {
  out_.push_back('}');
  first_.pop_back();
  return *this;
}
JsonWriter& JsonWriter::begin_array() {
  separate();
  out_.push_back('[');
  first_.push_back(true);
  return *this;
}
JsonWriter& JsonWriter::end_array() {
  out_.push_back(']');
  first_.pop_back();
  return *this;
}
JsonWriter& JsonWriter::key(const std::string& k) {
  separate();
  out_ += "\"" + json_escape(k) + "\":";
  after_key_ = true;
  return *this;
}
JsonWriter& JsonWriter::value(const std::string& s) {
  separate();
  out_ += "\"" + json_escape(s) + "\"";
  return *this;
}
JsonWriter& JsonWriter::value(const char* s) { return s ? value(std::string(s)) : null(); }
JsonWriter& JsonWriter::value(uint64_t v) {
  separate();
  out_ += std::to_string(v);
  return *this;
}
JsonWriter& JsonWriter::value(int v) {
  separate();
  out_ += std::to_string(v);
  return *this;
}
JsonWriter& JsonWriter::value(double v) {
  if (!std::isfinite(v)) return null();
  separate();
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  out_ += buf;
  return *this;
}
JsonWriter& JsonWriter::value(bool v) {
  separate();
  out_ += v ? "true" : "false";
  return *this;
}
JsonWriter& JsonWriter::null() {
  separate();
  out_ += "null";
  return *this;
}

}  // namespace szcli
