/* SPDX-License-Identifier: Apache-2.0 */
// Whole frames on a Kokkos execution space (backends/backend.h): the steps of
// core/reference_encode.cpp / reference_decode.cpp, with every rule taken from
// the format core (escape_budget, top16_codebook, layout_of, block hashes,
// write_block_checks, gaps, header) and the bulk work in Kokkos kernels.
// Mode 0 (fast) and mode 1 (capacity, kokkos_capacity.h) share the frame steps.
//
// Caller buffers live in ExecSpace::memory_space. Only the 64 header bytes,
// the 256 exponent counts and the block hashes (8 bytes per 64 KiB) cross to
// the host, through Kokkos::deep_copy, so the same code runs on host spaces
// (Serial, OpenMP) and device spaces (CUDA).
#pragma once

#include <cstring>

#include "backends/kokkos/kokkos_capacity.h"
#include "backends/kokkos/kokkos_decode.h"
#include "backends/kokkos/kokkos_e4m3.h"
#include "backends/kokkos/kokkos_encode.h"
#include "backends/kokkos/kokkos_histogram.h"
#include "backends/kokkos/kokkos_views.h"
#include "core/codec_args.h"
#include "core/frame_rules.h"
#include "core/header.h"
#include "core/reference.h"

namespace splitzip {
namespace kokkos_impl {

using HostBytes = Kokkos::View<uint8_t*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
using HostConstBytes = Kokkos::View<const uint8_t*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// v2 block hashes of `bytes` bytes: one index per 64 KiB block (core
// block_hash: libxxhash on hosts, xxh_device.h on devices). With a frame,
// also writes each block's check into stream 7 at check_off.
template <class ExecSpace>
struct BlockHashes {
  ConstBytes<ExecSpace> data;
  U64s<ExecSpace> hashes;
  uint64_t bytes;
  Bytes<ExecSpace> frame;  // empty: hashes only
  uint64_t check_off;

  KOKKOS_INLINE_FUNCTION void operator()(const Index b) const {
    const uint64_t hb = block_hash(data.data(), bytes, static_cast<uint64_t>(b));
    hashes(b) = hb;
    if (frame.data() != nullptr) write_block_checks(frame.data() + check_off + 4u * static_cast<uint64_t>(b), &hb, 1);
  }
};

// Zero gaps (rule 14) of a frame written in space memory; one index.
template <class ExecSpace>
struct ZeroGaps {
  Bytes<ExecSpace> frame;
  Gap gaps[7];
  int count;

  KOKKOS_INLINE_FUNCTION void operator()(const Index) const { zero_ranges(frame.data(), gaps, count); }
};

// Rule 14 outside the streams; one index.
template <class ExecSpace>
struct CheckGaps {
  ConstBytes<ExecSpace> frame;
  FrameHeader h;

  KOKKOS_INLINE_FUNCTION void operator()(const Index, uint32_t& mask) const {
    if (!frame_gaps_zero(frame.data(), h)) mask |= kBadPadding;
  }
};

// Rule 19: v1 XXH64 of the whole output, or v2 first differing block check
// (core verify_block_hashes). result = {status, corrupt block}; one index.
template <class ExecSpace>
struct VerifyChecksum {
  ConstBytes<ExecSpace> frame, out;
  U64s<ExecSpace> hashes, result;
  FrameHeader h;

  KOKKOS_INLINE_FUNCTION void operator()(const Index) const {
    uint64_t corrupt = kNoBlock;
    Status s = Status::ok;
    if (h.version == 1) {
      if (hash_xxh64(out.data(), h.decoded_bytes()) != h.content_checksum) s = Status::checksum_mismatch;
    } else {
      s = verify_block_hashes(h, frame.data(), hashes.data(), &corrupt);
    }
    result(0) = static_cast<uint64_t>(s);
    result(1) = corrupt;
  }
};

template <class ExecSpace>
U64s<ExecSpace> block_hashes(const ExecSpace& space, const uint8_t* data, uint64_t bytes, uint8_t* frame,
                             uint64_t frame_size, uint64_t check_off) {
  const uint64_t count = checksum_blocks(bytes);
  U64s<ExecSpace> hashes(Kokkos::view_alloc(Kokkos::WithoutInitializing, "splitzip::block_hashes"), count);
  Kokkos::parallel_for("splitzip::kokkos::block_hashes", Range<ExecSpace>(space, 0, static_cast<Index>(count)),
                       BlockHashes<ExecSpace>{ConstBytes<ExecSpace>(data, bytes), hashes, bytes,
                                              Bytes<ExecSpace>(frame, frame_size), check_off});
  return hashes;
}

// One frame (FORMAT.md 4) into a.dst, as reference_compress.
template <class ExecSpace>
FrameOutcome compress_frame(const ExecSpace& space, const CompressArgs& a) {
  FrameOutcome out;
  FramePlan p;
  if ((out.status = plan_frame(a, &p)) != Status::ok) return out;
  const uint32_t id = p.dtype_id;
  const auto* src = static_cast<const uint8_t*>(a.src);
  auto* f = static_cast<uint8_t*>(a.dst);
  const uint64_t bytes = p.bytes;
  const uint64_t n_checks = p.n_checks;
  const uint64_t budget = p.budget;
  FrameHeader h = make_header(id, a.n, a.chunk_log2, a.checksum);
  Status s = Status::escape_overflow;
  const Codec codec = codec_of(a.dtype, a.mode);  // plan_frame refused Codec::invalid
  if (codec == Codec::capacity) {  // FORMAT.md 4.6
    with_traits(a.dtype, [&](auto t) { s = capacity_encode<decltype(t)>(space, a, n_checks, &h); });
  } else if (budget != kNoEscapeBudget) {
    Codebook cb;
    if (a.codebook != nullptr) {
      cb = *a.codebook;
    } else {
      uint64_t counts[256];
      if ((s = histogram(space, a.dtype, src, a.n, counts)) != Status::ok) {
        out.status = s;
        return out;
      }
      cb.dtype = a.dtype;
      cb.count = static_cast<uint8_t>(top_codebook(counts, cb.entries, codebook_limit(id)));
    }
    uint64_t escapes = 0;
    if (codec == Codec::e4m3) {
      s = e4m3_encode(space, src, a.n, cb, budget, n_checks, f, &escapes);  // 4.7
    } else {
      with_traits(a.dtype, [&](auto t) {
        s = encode_streams<decltype(t)>(space, src, a.n, a.chunk_log2, cb, budget, n_checks, f, &escapes);
      });
    }
    if (s == Status::ok) set_coded_fields(&h, escapes, cb);
  }
  if (s == Status::escape_overflow) {
    if ((out.status = plan_stored(a, p, &h)) != Status::ok) return out;
    Kokkos::deep_copy(space, Bytes<ExecSpace>(f + 64, bytes), ConstBytes<ExecSpace>(src, bytes));
  } else if (s != Status::ok) {
    out.status = s;
    return out;
  }
  h.frame_size = frame_size_of(h);
  const Bytes<ExecSpace> frame(f, h.frame_size);
  if (a.checksum) {
    const U64s<ExecSpace> hashes = block_hashes(space, src, bytes, f, h.frame_size, check_off_of(h));
    const auto host = Kokkos::create_mirror_view(hashes);
    Kokkos::deep_copy(space, host, hashes);
    space.fence();
    h.content_checksum = combine_block_hashes(host.data(), n_checks);
  }
  ZeroGaps<ExecSpace> zero{frame, {}, 0};
  zero.count = frame_gaps(h, zero.gaps);
  Kokkos::parallel_for("splitzip::kokkos::zero_gaps", Range<ExecSpace>(space, 0, 1), zero);
  uint8_t hb[64];
  write_header(h, hb);
  Kokkos::deep_copy(space, Bytes<ExecSpace>(f, 64), HostConstBytes(hb, 64));
  space.fence();
  out.frame_size = h.frame_size;
  return out;
}

// The frame at a.src, rules 1-19 (the lowest failing rule of a single fault,
// as reference_decompress), v1 and v2.
template <class ExecSpace>
FrameOutcome decompress_frame(const ExecSpace& space, const DecompressArgs& a) {
  FrameOutcome out;
  if ((out.status = check_decompress_args(a)) != Status::ok) return out;
  const auto* f = static_cast<const uint8_t*>(a.src);
  uint8_t hb[64] = {};
  const uint64_t head = a.src_size < 64 ? a.src_size : 64;
  Kokkos::deep_copy(space, HostBytes(hb, head), ConstBytes<ExecSpace>(f, head));
  space.fence();
  auto* dst = static_cast<uint8_t*>(a.dst);
  FrameHeader h;
  if ((out.status = open_frame(a, hb, &h)) != Status::ok) return out;  // rules 1-13
  const ConstBytes<ExecSpace> frame(f, h.frame_size);
  uint32_t mask = 0;
  Kokkos::parallel_reduce("splitzip::kokkos::check_gaps", Range<ExecSpace>(space, 0, 1),
                          CheckGaps<ExecSpace>{frame, h}, Kokkos::BOr<uint32_t>(mask));
  if (mask != 0) {  // rule 14 outside the streams
    out.status = Status::bad_padding;
    return out;
  }
  const uint64_t bytes = h.decoded_bytes();
  if (h.stored()) {
    Kokkos::deep_copy(space, Bytes<ExecSpace>(dst, bytes), ConstBytes<ExecSpace>(f + 64, bytes));
  } else {
    Status s = Status::invalid_argument;
    const Codec codec = codec_of(h.dtype, h.mode);  // parse_header refused Codec::invalid
    if (codec == Codec::capacity) {  // FORMAT.md 4.6
      with_traits(static_cast<Dtype>(h.dtype), [&](auto t) { s = capacity_decode<decltype(t)>(space, h, f, dst); });
    } else if (codec == Codec::e4m3) {
      s = e4m3_decode(space, h, f, dst);  // FORMAT.md 4.7
    } else {
      with_traits(static_cast<Dtype>(h.dtype), [&](auto t) { s = decode_streams<decltype(t)>(space, h, f, dst); });
    }
    if (s != Status::ok) {
      out.status = s;
      return out;
    }
  }
  if (a.verify_checksum && h.has_checksum()) {  // rule 19
    const U64s<ExecSpace> hashes = h.version == 1 ? U64s<ExecSpace>("splitzip::block_hashes", 0)
                                                  : block_hashes(space, dst, bytes, nullptr, 0, 0);
    U64s<ExecSpace> result("splitzip::verify_result", 2);
    Kokkos::parallel_for("splitzip::kokkos::verify_checksum", Range<ExecSpace>(space, 0, 1),
                         VerifyChecksum<ExecSpace>{frame, ConstBytes<ExecSpace>(dst, bytes), hashes, result, h});
    const auto host = Kokkos::create_mirror_view(result);
    Kokkos::deep_copy(space, host, result);
    space.fence();
    out.status = static_cast<Status>(host(0));
    out.corrupt_block = host(1);
    if (out.status != Status::ok) return out;
  }
  space.fence();
  out.frame_size = h.frame_size;
  out.decoded_size = bytes;
  return out;
}

}  // namespace kokkos_impl
}  // namespace splitzip
