// SPDX-License-Identifier: Apache-2.0
#include "tests/conformance/targets.h"

#include <cstring>

#include "backends/registry.h"
#include "core/codec.h"
#include "core/frame_rules.h"
#include "core/header.h"
#include "tests/cuda/capacity_emulator.h"
#include "tests/cuda/kernel_emulator.h"

namespace splitzip::conformance {
namespace {

// The CUDA backend's kernels, run on the CPU by the kernel emulators
// (tests/cuda/kernel_emulator.h, capacity_emulator.h), in the sequences of
// compress_async (per codec, through codec_of as cuda/codec_table.h) and
// decompress_async (both decoders: the mode is read on the device). The
// dynamic top-16 is computed on the host with core's top_codebook, which
// the device's codebook kernel runs (cuda/calibrate.cu). Table sets
// (FORMAT.md 4.9) reach the kernels as the backend passes them: the set
// to encode with, and for a host frame the set its header names (or none).
class CudaEmulatorTarget final : public Backend {
 public:
  const char* name() const override { return "cuda-emulator"; }
  bool available() const override { return true; }
  bool accepts(MemoryKind k) const override { return k == MemoryKind::host; }

  FrameOutcome compress_frame(const CompressArgs& a) const override {
    FrameOutcome out;
    if ((out.status = check_compress_args(a)) != Status::ok) return out;
    test::EmuResult r;
    r.status = Status::invalid_argument;
    visit_codec(codec_of(a.dtype, a.mode), [&](auto tag) {
      if constexpr (decltype(tag)::kCodec == Codec::capacity) {
        r = test::emulate_capacity_compress(a.dtype, a.src, a.n, a.dst, a.capacity, a.chunk_log2, a.checksum, false,
                                            a.tables);
      } else {
        const Codebook cb = a.codebook != nullptr ? *a.codebook : dynamic_codebook(a);
        r = test::emulate_compress(a.dtype, a.src, a.n, a.dst, a.capacity, cb, a.chunk_log2, a.checksum);
      }
    });
    out.status = r.status;
    if (r.status == Status::ok) out.frame_size = r.size;
    return out;
  }

  FrameOutcome decompress_frame(const DecompressArgs& a) const override {
    FrameOutcome out;
    if ((out.status = check_decompress_args(a)) != Status::ok) return out;
    // The backend's pick (cuda_backend.cu): the set the header names.
    const CapTables* set = nullptr;
    FrameHeader hh;
    if (a.n_tables > 0 && parse_header(static_cast<const uint8_t*>(a.src), a.src_size, &hh) == Status::ok &&
        hh.has_tables())
      set = cap_tables_find(a.tables, a.n_tables, hh.tables_id(), hh.dtype);
    test::EmuDecodeItem it;
    it.src = a.src;
    it.src_size = a.src_size;
    it.dst = a.dst;
    it.dst_capacity = a.dst == nullptr ? 0 : a.capacity;
    const test::EmuResult r =
        test::emulate_decompress_batch_async({it}, it.dst_capacity, a.max_output, a.verify_checksum, false, set).front();
    out.status = r.status;
    out.corrupt_block = r.corrupt_block;
    if (r.status != Status::ok) return out;
    // The device returns the bytes the frame consumed: its header's frame_size.
    FrameHeader h;
    if ((out.status = parse_header(static_cast<const uint8_t*>(a.src), a.src_size, &h)) != Status::ok) return out;
    out.frame_size = h.frame_size;
    out.decoded_size = r.size;
    return out;
  }

 private:
  static Codebook dynamic_codebook(const CompressArgs& a) {
    uint64_t counts[256] = {};
    visit_dtype(a.dtype, [&](auto t) {
      using T = decltype(t);
      const auto* p = static_cast<const uint8_t*>(a.src);
      for (uint64_t i = 0; i < a.n; ++i) {
        typename T::Bits v;
        std::memcpy(&v, p + i * T::kBytes, T::kBytes);
        ++counts[T::exponent(v)];
      }
    });
    Codebook cb;
    cb.dtype = a.dtype;
    cb.count = static_cast<uint8_t>(top_codebook(counts, cb.entries, codebook_limit(static_cast<uint32_t>(a.dtype))));
    return cb;
  }
};

}  // namespace

const std::vector<Target>& targets() {
  static const CudaEmulatorTarget emulator;
  static const std::vector<Target> t = [] {
    std::vector<Target> v;
    for (size_t i = 0; i < registry_size(); ++i) {
      const Backend* b = registry_at(i);
      if (b->available() && b->accepts(MemoryKind::host)) v.push_back({b->name(), b});
    }
    v.push_back({emulator.name(), &emulator});
    return v;
  }();
  return t;
}

// Every pair core's codec_of() takes, codec by codec: a new codec or dtype
// joins every test here.
std::vector<CodecDtype> codec_dtypes() {
  std::vector<CodecDtype> v;
  for (uint32_t c = 0; c < kCodecCount; ++c)
    for (uint32_t id = 1; id <= kDtypeCount; ++id)
      if (codec_takes(static_cast<Codec>(c), id))
        v.push_back({static_cast<Mode>(mode_of(static_cast<Codec>(c))), static_cast<Dtype>(id)});
  return v;
}

size_t registry_target_count() {
  size_t n = 0;
  for (size_t i = 0; i < registry_size(); ++i)
    if (registry_at(i)->available() && registry_at(i)->accepts(MemoryKind::host)) ++n;
  return n;
}

}  // namespace splitzip::conformance
