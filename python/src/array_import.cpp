// SPDX-License-Identifier: Apache-2.0
#include "array_import.h"

#include <limits>

#include "status_error.h"

namespace splitzip_py {

using splitzip::Dtype;
using splitzip::Status;

namespace {

// DLPack dtype codes (dlpack.h DLDataTypeCode); numeric so that any nanobind
// version with DLPack 1.x capsules works.
constexpr uint8_t kInt = 0, kUInt = 1, kFloat = 2, kBfloat = 4, kBool = 6, kFloat8E5M2 = 12;

const char* device_name(int32_t type) {
  switch (type) {
    case kDLCPU: return "cpu";
    case kDLCUDA: return "cuda";
    case kDLCUDAHost: return "cuda_host";
    case 4: return "opencl";
    case 7: return "vulkan";
    case 8: return "metal";
    case 10: return "rocm";
    case 11: return "rocm_host";
    case kDLCUDAManaged: return "cuda_managed";
    case 14: return "oneapi";
    default: return "unknown";
  }
}

void check_device(const ArrayRef& a, const char* what) {
  if (a.host_readable()) return;
  if (a.device_type == kDLCUDA) {
    if (!splitzip::backend_available("cuda"))
      throw StatusError(Status::backend_unavailable,
                        std::string(what) + " is on CUDA device " + std::to_string(a.device_id) +
                            " but this splitzip build has no usable CUDA backend (rebuild with "
                            "SPLITZIP_CUDA=ON on a machine with a GPU, or copy it to the host)");
    return;
  }
  throw StatusError(Status::unsupported_memory,
                    std::string(what) + " lives on a '" + device_name(a.device_type) +
                        "' device; splitzip reads host and CUDA memory only");
}

template <typename Arr>
void fill(ArrayRef& r, const Arr& arr, const char* what) {
  const nb::dlpack::dtype dt = arr.dtype();
  r.dt = dt;
  r.device_type = arr.device_type();
  r.device_id = arr.device_id();
  if (dt.lanes != 1 || dt.bits == 0 || dt.bits % 8 != 0)
    throw StatusError(Status::invalid_argument,
                      std::string(what) + " has element type " + describe(dt) +
                          ", which is not a whole number of bytes");
  // Element counts and contiguity, with overflow checks (shapes are int64).
  uint64_t count = 1;
  bool overflow = false;
  for (size_t i = 0; i < arr.ndim(); ++i) {
    const int64_t extent = arr.shape(i);
    if (extent < 0) overflow = true;
    const uint64_t e = static_cast<uint64_t>(extent);
    if (e != 0 && count > std::numeric_limits<uint64_t>::max() / e) overflow = true;
    count *= e;
  }
  const uint64_t item = dt.bits / 8u;
  if (overflow || (count != 0 && count > std::numeric_limits<uint64_t>::max() / item))
    throw StatusError(Status::invalid_argument, std::string(what) + " has an impossible shape");
  if (count > 1) {
    int64_t expect = 1;
    for (size_t i = arr.ndim(); i-- > 0;) {
      if (arr.shape(i) != 1 && arr.stride(i) != expect)
        throw StatusError(Status::invalid_argument,
                          std::string(what) + " is not C-contiguous; make a contiguous copy "
                                              "first (numpy.ascontiguousarray, .contiguous())");
      expect *= arr.shape(i);
    }
  }
  r.nbytes = count * item;
  r.data = const_cast<void*>(static_cast<const void*>(arr.data()));
  check_device(r, what);
}

}  // namespace

std::string describe(const nb::dlpack::dtype& dt) {
  std::string base;
  switch (dt.code) {
    case kInt: base = "int"; break;
    case kUInt: base = "uint"; break;
    case kFloat: base = "float"; break;
    case kBfloat: base = "bfloat"; break;
    case kBool: base = "bool"; break;
    case 7: return "float8_e3m4";
    case 8: return "float8_e4m3";
    case 9: return "float8_e4m3b11fnuz";
    case 10: return "float8_e4m3fn";
    case 11: return "float8_e4m3fnuz";
    case kFloat8E5M2: return "float8_e5m2";
    case 13: return "float8_e5m2fnuz";
    case 14: return "float8_e8m0fnu";
    case 15: return "float6_e2m3fn";
    case 16: return "float6_e3m2fn";
    case 17: return "float4_e2m1fn";
    default: base = "dlpack_code" + std::to_string(dt.code) + "_"; break;
  }
  std::string s = base + std::to_string(dt.bits);
  if (dt.lanes != 1) s += "x" + std::to_string(dt.lanes);
  return s;
}

ArrayRef import_array(nb::handle obj, bool writable, const char* what) {
  ArrayRef r;
  if (writable) {
    if (nb::try_cast(obj, r.rw, false)) {
      fill(r, r.rw, what);
      return r;
    }
    nb::ndarray<nb::ro> probe;
    if (nb::try_cast(obj, probe, false))
      throw StatusError(Status::invalid_argument, std::string(what) + " is read-only");
  } else if (nb::try_cast(obj, r.ro, false)) {
    fill(r, r.ro, what);
    return r;
  }
  std::string tname = nb::type_name(obj.type()).c_str();
  throw nb::type_error((std::string(what) + ": expected a buffer-protocol object or a DLPack "
                        "producer (__dlpack__), got " + tname).c_str());
}

std::optional<Dtype> natural_dtype(const nb::dlpack::dtype& dt) {
  if (dt.lanes != 1) return std::nullopt;
  if (dt.code == kFloat && dt.bits == 16) return Dtype::fp16;
  if (dt.code == kFloat && dt.bits == 32) return Dtype::fp32;
  if (dt.code == kBfloat && dt.bits == 16) return Dtype::bf16;
  if (dt.code == kFloat8E5M2 && dt.bits == 8) return Dtype::fp8_e5m2;
  if (dt.code == 10 && dt.bits == 8) return Dtype::fp8_e4m3;  // DLPack kDLFloat8_e4m3fn
  return std::nullopt;
}

bool storage_compatible(const nb::dlpack::dtype& dt, Dtype d) {
  if (auto nat = natural_dtype(dt)) return *nat == d;
  if (dt.lanes != 1 || (dt.code != kInt && dt.code != kUInt)) return false;
  return dt.bits == 8 || dt.bits == 8 * splitzip::dtype_bytes(d);
}

Dtype parse_dtype_name(const std::string& name) {
  Dtype d;
  if (!splitzip::parse_dtype(name.c_str(), &d))
    throw StatusError(Status::invalid_argument,
                      "unknown dtype '" + name + "' (expected bf16, fp16, fp32, fp8_e5m2 or fp8_e4m3; \"fp8\" is ambiguous: say fp8_e4m3 or fp8_e5m2)");
  return d;
}

Dtype resolve_dtype(const ArrayRef& a, const std::optional<std::string>& name, const char* what) {
  const auto nat = natural_dtype(a.dt);
  if (name) {
    const Dtype d = parse_dtype_name(*name);
    if (!storage_compatible(a.dt, d))
      throw StatusError(Status::invalid_argument,
                        std::string(what) + " holds " + describe(a.dt) + " elements, which cannot " +
                            "be read as dtype '" + *name + "'");
    return d;
  }
  if (nat) return *nat;
  if (a.dt.code != kInt && a.dt.code != kUInt)
    throw StatusError(Status::invalid_argument,
                      std::string(what) + " holds " + describe(a.dt) +
                          " elements; splitzip compresses bf16, fp16, fp32, fp8_e5m2 and fp8_e4m3");
  throw StatusError(Status::invalid_argument,
                    std::string(what) + " holds " + describe(a.dt) +
                        " elements (raw storage); pass dtype= (bf16, fp16, fp32, fp8_e5m2 or fp8_e4m3) to say how to read it");
}

uint64_t element_count(const ArrayRef& a, Dtype d, const char* what) {
  const uint64_t b = splitzip::dtype_bytes(d);
  if (a.nbytes % b != 0)
    throw StatusError(Status::invalid_argument,
                      std::string(what) + " has " + std::to_string(a.nbytes) +
                          " bytes, not a whole number of " + splitzip::dtype_name(d) + " values");
  const uint64_t n = a.nbytes / b;
  if (n > splitzip::kMaxElems)
    throw StatusError(Status::invalid_argument, std::string(what) + " has more than 2^56 elements");
  return n;
}

}  // namespace splitzip_py
