// SPDX-License-Identifier: Apache-2.0
#include "tools/cli/tensor_input.h"

#include <cstdint>
#include <cstring>

#include "tools/cli/errors.h"

namespace szcli {

using splitzip::Dtype;

const char* dtype_extension(Dtype d) {
  switch (d) {
    case Dtype::bf16: return ".bf16";
    case Dtype::fp16: return ".f16";
    case Dtype::fp32: return ".f32";
    case Dtype::fp8_e5m2: return ".e5m2";
    case Dtype::fp8_e4m3: return ".e4m3";
  }
  return ".raw";
}

double predicted_ratio(Dtype d, double e) {
  // Residual byte part + 3-bit part + a 4-bit code + 3 bytes per escape.
  double per = 0;
  switch (d) {
    case Dtype::bf16: per = 1.0; break;
    case Dtype::fp16: per = 1.0 + 3.0 / 8.0; break;
    case Dtype::fp32: per = 3.0; break;
    case Dtype::fp8_e5m2: per = 3.0 / 8.0; break;
    // FORMAT.md 4.7: a 4-bit residual, a 3-bit code, a 4-bit side-stream
    // exponent per escape.
    case Dtype::fp8_e4m3: return 1.0 / (0.5 + 3.0 / 8.0 + 0.5 * e);
  }
  return splitzip::dtype_bytes(d) / (per + 0.5 + 3.0 * e);
}

bool TensorInput::payload_in_file(uint64_t* offset) const {
  if (!bytes_.mapped() || bytes_.is_stdin()) return false;
  *offset = payload_off_;
  return true;
}

TensorInput TensorInput::load(const std::string& path, const InputOptions& opt, bool align) {
  TensorInput t;
  if (opt.format.empty()) {
    t.format_ = path == "-" ? InputFormat::raw : format_from_extension(path);
  } else if (!parse_format(opt.format, &t.format_)) {
    fail(kExitUsage, "unknown --format '" + opt.format + "' (use raw, npy or safetensors)");
  }
  if (!opt.tensor.empty() && t.format_ != InputFormat::safetensors)
    fail(kExitUsage, path + ": --tensor applies to .safetensors input only");

  Dtype raw_dtype = Dtype::bf16;
  if (t.format_ == InputFormat::raw) {
    if (opt.hint.given) raw_dtype = opt.hint.dtype;
    else if (!dtype_from_extension(path, &raw_dtype))
      fail(kExitUsage, path + ": cannot infer the dtype of a raw file from its name; pass --dtype "
                              "(bf16, fp16, fp32, fp8_e5m2, fp8_e4m3) or use a .bf16/.f16/.f32/.e5m2/.e4m3 name");
  }

  t.bytes_ = InputBytes::open(path);
  std::string err;
  bool ok = false;
  switch (t.format_) {
    case InputFormat::raw: ok = parse_raw(t.bytes_.data(), t.bytes_.size(), raw_dtype, &t.view_, &err); break;
    case InputFormat::npy: ok = parse_npy(t.bytes_.data(), t.bytes_.size(), opt.hint, &t.view_, &err); break;
    case InputFormat::safetensors:
      ok = parse_safetensors(t.bytes_.data(), t.bytes_.size(), opt.tensor, opt.hint, &t.view_, &err, opt.whole_file);
      break;
  }
  if (!ok) fail(kExitInvalid, (path == "-" ? std::string("stdin") : path) + ": " + err);

  // Container payloads can sit at any offset; give the codec naturally
  // aligned elements.
  if (t.view_.bytes) t.payload_off_ = static_cast<uint64_t>(t.view_.data - t.bytes_.data());
  const uint32_t w = splitzip::dtype_bytes(t.view_.dtype);
  if (align && t.view_.bytes && reinterpret_cast<uintptr_t>(t.view_.data) % w != 0) {
    t.aligned_.reset(new uint8_t[t.view_.bytes]);
    std::memcpy(t.aligned_.get(), t.view_.data, t.view_.bytes);
    t.view_.data = t.aligned_.get();
  }
  return t;
}

}  // namespace szcli
