// SPDX-License-Identifier: Apache-2.0
#include "tools/cli/tensor_formats.h"

#include <algorithm>
#include <cstring>

#include "tools/cli/json_strict.h"

namespace szcli {

using splitzip::Dtype;

namespace {

bool ends_with(const std::string& s, const char* suffix) {
  const size_t n = std::strlen(suffix);
  if (s.size() < n) return false;
  for (size_t i = 0; i < n; ++i) {
    char c = s[s.size() - n + i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
    if (c != suffix[i]) return false;
  }
  return true;
}

uint64_t le64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// a * b into *out; false on overflow.
bool mul_u64(uint64_t a, uint64_t b, uint64_t* out) {
  if (a != 0 && b > UINT64_MAX / a) return false;
  *out = a * b;
  return true;
}

bool fill_view(Dtype dtype, const uint8_t* data, uint64_t n_elems, std::string what, TensorView* out,
               std::string* error) {
  if (n_elems > splitzip::kMaxElems) {
    *error = "tensor has " + std::to_string(n_elems) + " elements, more than the format's 2^56";
    return false;
  }
  out->dtype = dtype;
  out->data = data;
  out->n_elems = n_elems;
  out->bytes = n_elems * splitzip::dtype_bytes(dtype);
  out->what = std::move(what);
  return true;
}

// ---- .npy header: a Python dict literal ------------------------------------

struct NpyHeader {
  std::string descr;
  bool descr_is_string = false;
  bool fortran_order = false;
  std::vector<uint64_t> shape;
};

class PyLiteral {
 public:
  PyLiteral(const char* p, uint64_t n) : p_(p), n_(n) {}

  bool parse(NpyHeader* h, std::string* error) {
    bool have_descr = false, have_order = false, have_shape = false;
    ws();
    if (!eat('{')) return bad(error, "header is not a dict");
    while (true) {
      ws();
      if (eat('}')) break;
      std::string key;
      if (!str(&key)) return bad(error, "expected a quoted key");
      ws();
      if (!eat(':')) return bad(error, "expected ':'");
      ws();
      if (key == "descr") {
        if (have_descr) return bad(error, "duplicate key 'descr'");
        have_descr = true;
        if (i_ < n_ && (p_[i_] == '[' || p_[i_] == '(')) {
          return bad(error, "structured dtypes are not supported");
        }
        if (!str(&h->descr)) return bad(error, "'descr' is not a string");
        h->descr_is_string = true;
      } else if (key == "fortran_order") {
        if (have_order) return bad(error, "duplicate key 'fortran_order'");
        have_order = true;
        if (word("True")) h->fortran_order = true;
        else if (word("False")) h->fortran_order = false;
        else return bad(error, "'fortran_order' is not True or False");
      } else if (key == "shape") {
        if (have_shape) return bad(error, "duplicate key 'shape'");
        have_shape = true;
        if (!tuple(&h->shape)) return bad(error, "'shape' is not a tuple of integers");
      } else {
        return bad(error, "unexpected key '" + key + "'");
      }
      ws();
      if (eat(',')) continue;
      ws();
      if (eat('}')) break;
      return bad(error, "expected ',' or '}'");
    }
    // numpy pads the header with spaces and ends it with a newline.
    while (i_ < n_ && (p_[i_] == ' ' || p_[i_] == '\n' || p_[i_] == '\r' || p_[i_] == '\t')) ++i_;
    if (i_ != n_) return bad(error, "unexpected bytes after the header dict");
    if (!have_descr || !have_order || !have_shape)
      return bad(error, "header lacks one of 'descr', 'fortran_order', 'shape'");
    return true;
  }

 private:
  bool bad(std::string* error, const std::string& msg) {
    *error = "bad .npy header: " + msg + " (header byte " + std::to_string(i_) + ")";
    return false;
  }
  void ws() {
    while (i_ < n_ && (p_[i_] == ' ' || p_[i_] == '\t' || p_[i_] == '\n' || p_[i_] == '\r')) ++i_;
  }
  bool eat(char c) {
    if (i_ < n_ && p_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool word(const char* w) {
    const uint64_t len = std::strlen(w);
    if (n_ - i_ < len || std::memcmp(p_ + i_, w, len) != 0) return false;
    i_ += len;
    return true;
  }
  bool str(std::string* out) {
    if (i_ >= n_ || (p_[i_] != '\'' && p_[i_] != '"')) return false;
    const char q = p_[i_++];
    out->clear();
    while (i_ < n_ && p_[i_] != q) {
      if (p_[i_] == '\\' || p_[i_] == '\n') return false;  // numpy never writes escapes
      out->push_back(p_[i_++]);
    }
    return eat(q);
  }
  bool integer(uint64_t* out) {
    const uint64_t start = i_;
    uint64_t v = 0;
    while (i_ < n_ && p_[i_] >= '0' && p_[i_] <= '9') {
      const uint64_t d = static_cast<uint64_t>(p_[i_] - '0');
      if (v > (UINT64_MAX - d) / 10) return false;
      v = v * 10 + d;
      ++i_;
    }
    if (i_ == start) return false;
    eat('L');  // Python 2 long suffix in old files
    *out = v;
    return true;
  }
  bool tuple(std::vector<uint64_t>* out) {
    if (!eat('(')) return false;
    out->clear();
    while (true) {
      ws();
      if (eat(')')) return true;
      uint64_t v = 0;
      if (!integer(&v)) return false;
      out->push_back(v);
      ws();
      if (eat(',')) continue;
      ws();
      return eat(')');
    }
  }

  const char* p_;
  uint64_t n_;
  uint64_t i_ = 0;
};

// Maps an .npy descr to a dtype, using the --dtype hint where the descr
// only gives a width (raw uint16 or void patterns).
bool npy_dtype(const std::string& descr, DtypeHint hint, Dtype* out, std::string* error) {
  auto need = [&](uint32_t width, bool has_default, Dtype deflt) {
    if (hint.given) {
      if (splitzip::dtype_bytes(hint.dtype) != width) {
        *error = std::string(".npy descr '") + descr + "' has " + std::to_string(width) +
                 "-byte elements but --dtype " + splitzip::dtype_name(hint.dtype) + " has " +
                 std::to_string(splitzip::dtype_bytes(hint.dtype));
        return false;
      }
      *out = hint.dtype;
      return true;
    }
    if (!has_default) {
      *error = std::string(".npy descr '") + descr + "' holds raw bit patterns; say which dtype with --dtype";
      return false;
    }
    *out = deflt;
    return true;
  };
  auto exact = [&](Dtype d) {
    if (hint.given && hint.dtype != d) {
      *error = std::string(".npy descr '") + descr + "' is " + splitzip::dtype_name(d) + " but --dtype " +
               splitzip::dtype_name(hint.dtype) + " was given";
      return false;
    }
    *out = d;
    return true;
  };
  if (descr == "<f2") return exact(Dtype::fp16);
  if (descr == "<f4") return exact(Dtype::fp32);
  if (descr == "bfloat16") return exact(Dtype::bf16);
  if (descr == "float8_e5m2") return exact(Dtype::fp8_e5m2);
  if (descr == "float8_e4m3fn") return exact(Dtype::fp8_e4m3);
  // ml_dtypes' bfloat16 saves as '<V2'; fp16 would have been '<f2'.
  if (descr == "<V2" || descr == "|V2") return need(2, true, Dtype::bf16);
  if (descr == "<u2" || descr == "<i2") return need(2, false, Dtype::bf16);
  if (descr == "<u4" || descr == "<i4") return need(4, false, Dtype::fp32);
  // numpy + ml_dtypes: float8_e5m2 saves as '<f1' (no numpy float has one
  // byte), float8_e4m3fn (vLLM's and SGLang's fp8 KV) as '<V1', as do the
  // rarer fp8 kinds; any byte pattern round-trips, so '<V1' reads as
  // fp8_e4m3 unless --dtype says otherwise.
  if (descr == "<f1" || descr == "|f1") return exact(Dtype::fp8_e5m2);
  if (descr == "|V1" || descr == "<V1") return need(1, true, Dtype::fp8_e4m3);
  if (descr == "|u1" || descr == "|i1") return need(1, false, Dtype::fp8_e5m2);
  if (!descr.empty() && descr[0] == '>') {
    *error = ".npy descr '" + descr + "' is big-endian; splitzip reads little-endian data";
    return false;
  }
  *error = ".npy descr '" + descr + "' is not supported (use '<f2', '<f4', bfloat16, or ml_dtypes float8_e4m3fn ('<V1') or float8_e5m2 ('<f1') data)";
  return false;
}

std::string shape_text(const std::vector<uint64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

// ---- safetensors ------------------------------------------------------------

// Element width of every safetensors dtype we know, so all entries can be
// size-checked; 0 for names we do not know (their offsets are still checked).
uint32_t st_width(const std::string& d) {
  if (d == "BOOL" || d == "U8" || d == "I8" || d == "F8_E5M2" || d == "F8_E4M3" || d == "F8_E8M0")
    return 1;
  if (d == "U16" || d == "I16" || d == "F16" || d == "BF16") return 2;
  if (d == "U32" || d == "I32" || d == "F32") return 4;
  if (d == "U64" || d == "I64" || d == "F64") return 8;
  return 0;
}

bool st_dtype(const std::string& d, Dtype* out) {
  if (d == "BF16") *out = Dtype::bf16;
  else if (d == "F16") *out = Dtype::fp16;
  else if (d == "F32") *out = Dtype::fp32;
  else if (d == "F8_E5M2") *out = Dtype::fp8_e5m2;
  else if (d == "F8_E4M3") *out = Dtype::fp8_e4m3;
  else return false;
  return true;
}

struct StEntry {
  std::string name, dtype;
  std::vector<uint64_t> shape;
  uint64_t begin = 0, end = 0;
};

}  // namespace

bool dtype_from_extension(const std::string& path, Dtype* out) {
  if (ends_with(path, ".bf16")) *out = Dtype::bf16;
  else if (ends_with(path, ".f16") || ends_with(path, ".fp16")) *out = Dtype::fp16;
  else if (ends_with(path, ".f32") || ends_with(path, ".fp32")) *out = Dtype::fp32;
  else if (ends_with(path, ".e5m2")) *out = Dtype::fp8_e5m2;
  else if (ends_with(path, ".e4m3")) *out = Dtype::fp8_e4m3;
  else return false;
  return true;
}

InputFormat format_from_extension(const std::string& path) {
  if (ends_with(path, ".npy")) return InputFormat::npy;
  if (ends_with(path, ".safetensors")) return InputFormat::safetensors;
  return InputFormat::raw;
}

const char* format_name(InputFormat f) {
  switch (f) {
    case InputFormat::raw: return "raw";
    case InputFormat::npy: return "npy";
    case InputFormat::safetensors: return "safetensors";
  }
  return "?";
}

bool parse_format(const std::string& name, InputFormat* out) {
  if (name == "raw") *out = InputFormat::raw;
  else if (name == "npy") *out = InputFormat::npy;
  else if (name == "safetensors") *out = InputFormat::safetensors;
  else return false;
  return true;
}

bool parse_raw(const uint8_t* p, uint64_t size, Dtype dtype, TensorView* out, std::string* error) {
  const uint32_t w = splitzip::dtype_bytes(dtype);
  if (w == 0) {
    *error = "invalid dtype";
    return false;
  }
  if (size % w != 0) {
    *error = "size " + std::to_string(size) + " bytes is not a multiple of " + std::to_string(w) +
             " (" + splitzip::dtype_name(dtype) + " elements)";
    return false;
  }
  return fill_view(dtype, p, size / w, std::string("raw ") + splitzip::dtype_name(dtype), out, error);
}

bool parse_npy(const uint8_t* p, uint64_t size, DtypeHint hint, TensorView* out, std::string* error) {
  static const uint8_t kNpyMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  if (size < 10 || std::memcmp(p, kNpyMagic, 6) != 0) {
    *error = "not a .npy file (missing \\x93NUMPY magic)";
    return false;
  }
  const uint8_t major = p[6];
  uint64_t header_len = 0, header_start = 0;
  if (major == 1) {
    header_len = p[8] | (uint64_t{p[9]} << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12) {
      *error = "truncated .npy header";
      return false;
    }
    header_len = p[8] | (uint64_t{p[9]} << 8) | (uint64_t{p[10]} << 16) | (uint64_t{p[11]} << 24);
    header_start = 12;
  } else {
    *error = ".npy format version " + std::to_string(major) + "." + std::to_string(p[7]) + " is not supported";
    return false;
  }
  if (header_len > size - header_start) {
    *error = ".npy header length " + std::to_string(header_len) + " runs past the end of the file";
    return false;
  }
  NpyHeader h;
  if (!PyLiteral(reinterpret_cast<const char*>(p + header_start), header_len).parse(&h, error)) return false;
  Dtype dtype;
  if (!npy_dtype(h.descr, hint, &dtype, error)) return false;
  uint64_t n = 1;
  for (uint64_t d : h.shape) {
    if (!mul_u64(n, d, &n)) {
      *error = ".npy shape " + shape_text(h.shape) + " overflows";
      return false;
    }
  }
  uint64_t want = 0;
  const uint64_t data_off = header_start + header_len;
  if (!mul_u64(n, splitzip::dtype_bytes(dtype), &want) || want != size - data_off) {
    *error = ".npy shape " + shape_text(h.shape) + " of '" + h.descr + "' needs " +
             (want || n == 0 ? std::to_string(want) : std::string("too many")) + " data bytes, file has " +
             std::to_string(size - data_off);
    return false;
  }
  // Element order (C or Fortran) does not matter for a lossless byte codec.
  out->header_off = 0;
  out->header_size = data_off;
  out->shape = h.shape;
  out->fortran_order = h.fortran_order;
  return fill_view(dtype, p + data_off, n, "npy '" + h.descr + "' shape " + shape_text(h.shape), out, error);
}

bool parse_safetensors(const uint8_t* p, uint64_t size, const std::string& tensor, DtypeHint hint,
                       TensorView* out, std::string* error, bool whole) {
  // The safetensors reference implementation caps headers at 100 MB.
  constexpr uint64_t kMaxHeader = 100000000;
  if (size < 8) {
    *error = "not a .safetensors file (shorter than its 8-byte header length)";
    return false;
  }
  const uint64_t hlen = le64(p);
  if (hlen > kMaxHeader || hlen > size - 8) {
    *error = ".safetensors header length " + std::to_string(hlen) + " is larger than the file or the 100 MB limit";
    return false;
  }
  if (hlen < 2 || p[8] != '{') {
    *error = ".safetensors header is not a JSON object";
    return false;
  }
  Json root;
  std::string jerr;
  if (!parse_json_strict(reinterpret_cast<const char*>(p + 8), hlen, &root, &jerr)) {
    *error = ".safetensors header: " + jerr;
    return false;
  }
  if (!root.is_object()) {
    *error = ".safetensors header is not a JSON object";
    return false;
  }
  const uint64_t data_size = size - 8 - hlen;
  std::vector<StEntry> entries;
  for (const auto& m : root.items()) {
    if (m.key() == "__metadata__") {
      if (!m.value().is_object()) {
        *error = ".safetensors __metadata__ is not an object";
        return false;
      }
      for (const auto& kv : m.value().items())
        if (!kv.value().is_string()) {
          *error = ".safetensors __metadata__ value for '" + kv.key() + "' is not a string";
          return false;
        }
      continue;
    }
    const Json& t = m.value();
    const std::string where = ".safetensors tensor '" + m.key() + "': ";
    if (!t.is_object() || t.size() != 3) {
      *error = where + "entry must be an object with dtype, shape and data_offsets";
      return false;
    }
    const auto dt = t.find("dtype");
    const auto sh = t.find("shape");
    const auto off = t.find("data_offsets");
    if (dt == t.end() || sh == t.end() || off == t.end() || !dt->is_string() || !sh->is_array() ||
        !off->is_array() || off->size() != 2) {
      *error = where + "entry must be an object with dtype, shape and data_offsets";
      return false;
    }
    StEntry e;
    e.name = m.key();
    e.dtype = dt->get<std::string>();
    for (const auto& d : *sh) {
      uint64_t v = 0;
      if (!json_u64(d, &v)) {
        *error = where + "shape holds a value that is not a non-negative integer";
        return false;
      }
      e.shape.push_back(v);
    }
    if (!json_u64((*off)[0], &e.begin) || !json_u64((*off)[1], &e.end) || e.begin > e.end ||
        e.end > data_size) {
      *error = where + "data_offsets are not a valid range inside the file's " + std::to_string(data_size) +
               " data bytes";
      return false;
    }
    const uint32_t w = st_width(e.dtype);
    if (w) {
      uint64_t n = 1, bytes = 0;
      bool ok = true;
      for (uint64_t d : e.shape) ok = ok && mul_u64(n, d, &n);
      ok = ok && mul_u64(n, w, &bytes);
      if (!ok || bytes != e.end - e.begin) {
        *error = where + "shape " + shape_text(e.shape) + " of " + e.dtype + " does not match its " +
                 std::to_string(e.end - e.begin) + " data bytes";
        return false;
      }
    }
    entries.push_back(std::move(e));
  }
  // Like the reference loader: tensors tile the data area without gaps or overlap.
  std::vector<const StEntry*> order;
  for (const auto& e : entries) order.push_back(&e);
  std::sort(order.begin(), order.end(), [](const StEntry* a, const StEntry* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  uint64_t at = 0;
  for (const StEntry* e : order) {
    if (e->begin != at) {
      *error = ".safetensors tensor '" + e->name + "' starts at data byte " + std::to_string(e->begin) +
               ", expected " + std::to_string(at) + " (gap or overlap)";
      return false;
    }
    at = e->end;
  }
  if (at != data_size) {
    *error = ".safetensors tensors cover " + std::to_string(at) + " of " + std::to_string(data_size) +
             " data bytes";
    return false;
  }

  if (tensor.empty() && whole) {
    if (hint.given) {
      *error = "--dtype applies to one tensor (--tensor NAME); a whole .safetensors file keeps each tensor's dtype";
      return false;
    }
    for (const StEntry* e : order) {
      if (e->begin == e->end) continue;  // an empty tensor holds no bytes
      TensorView::Part part;
      part.name = e->name;
      if (!st_dtype(e->dtype, &part.dtype)) part.dtype = Dtype::fp8_e5m2;
      part.begin = e->begin;
      part.end = e->end;
      if ((part.end - part.begin) % splitzip::dtype_bytes(part.dtype) != 0) {
        *error = ".safetensors tensor '" + e->name + "' of " + e->dtype + " has " +
                 std::to_string(part.end - part.begin) + " data bytes, not whole elements";
        return false;
      }
      out->parts.push_back(part);
    }
    out->whole_file = true;
    out->name.clear();
    out->header_off = 8;
    out->header_size = hlen;
    out->dtype = out->parts.empty() ? Dtype::bf16 : out->parts[0].dtype;
    out->data = p + 8 + hlen;
    out->bytes = data_size;
    out->n_elems = 0;
    out->what = "safetensors file, " + std::to_string(entries.size()) + " tensor(s)";
    return true;
  }
  const StEntry* pick = nullptr;
  if (!tensor.empty()) {
    for (const auto& e : entries)
      if (e.name == tensor) pick = &e;
  } else if (entries.size() == 1) {
    pick = &entries[0];
  }
  if (!pick) {
    std::string names;
    for (size_t i = 0; i < entries.size() && i < 8; ++i) names += (i ? ", " : "") + entries[i].name;
    if (entries.size() > 8) names += ", ...";
    if (entries.empty()) *error = ".safetensors file holds no tensors";
    else if (tensor.empty())
      *error = ".safetensors file holds " + std::to_string(entries.size()) +
               " tensors; pick one with --tensor NAME (" + names + ")";
    else *error = ".safetensors file has no tensor '" + tensor + "' (it has: " + names + ")";
    return false;
  }
  Dtype dtype;
  if (!st_dtype(pick->dtype, &dtype)) {
    *error = ".safetensors tensor '" + pick->name + "' has dtype " + pick->dtype +
             "; splitzip takes BF16, F16, F32, F8_E4M3 and F8_E5M2";
    return false;
  }
  if (hint.given && hint.dtype != dtype) {
    *error = ".safetensors tensor '" + pick->name + "' is " + pick->dtype + " but --dtype " +
             splitzip::dtype_name(hint.dtype) + " was given";
    return false;
  }
  out->name = pick->name;
  return fill_view(dtype, p + 8 + hlen + pick->begin, (pick->end - pick->begin) / splitzip::dtype_bytes(dtype),
                   "safetensors '" + pick->name + "' " + pick->dtype + " shape " + shape_text(pick->shape), out,
                   error);
}

}  // namespace szcli
