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
#include "core/frame_skeleton.h"
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

// Kokkos's kernel table (core/frame_skeleton.h) for one frame into a.dst.
template <class ExecSpace>
struct KokkosEncode {
  const ExecSpace& space;
  Status plan(const CompressArgs& a, FramePlan* p) { return plan_frame(a, p); }
  Status histogram(const CompressArgs& a, const FramePlan&, uint64_t counts[256]) {
    return kokkos_impl::histogram(space, a.dtype, a.src, a.n, counts);
  }
  Status encode(CodecTag<Codec::capacity>, const CompressArgs& a, const FramePlan& p, FrameHeader* h) {
    Status s = Status::invalid_argument;  // FORMAT.md 4.6, with a.tables 4.9
    visit_codec_dtype<Codec::capacity>(static_cast<uint32_t>(a.dtype),
                                       [&](auto t) { s = capacity_encode<decltype(t)>(space, a, p.n_checks, h); });
    return s;
  }
  Status encode(CodecTag<Codec::e4m3>, const CompressArgs& a, const FramePlan& p, const Codebook& cb,
                uint64_t* escapes) {  // FORMAT.md 4.7
    return e4m3_encode(space, static_cast<const uint8_t*>(a.src), a.n, cb, p.budget, p.n_checks,
                       static_cast<uint8_t*>(a.dst), escapes);
  }
  Status encode(CodecTag<Codec::nibble>, const CompressArgs& a, const FramePlan& p, const Codebook& cb,
                uint64_t* escapes) {
    Status s = Status::invalid_argument;
    visit_codec_dtype<Codec::nibble>(static_cast<uint32_t>(a.dtype), [&](auto t) {
      s = encode_streams<decltype(t)>(space, static_cast<const uint8_t*>(a.src), a.n, a.chunk_log2, cb, p.budget,
                                      p.n_checks, static_cast<uint8_t*>(a.dst), escapes);
    });
    return s;
  }
  Status store(const CompressArgs& a, const FramePlan& p) {
    Kokkos::deep_copy(space, Bytes<ExecSpace>(static_cast<uint8_t*>(a.dst) + 64, p.bytes),
                      ConstBytes<ExecSpace>(static_cast<const uint8_t*>(a.src), p.bytes));
    return Status::ok;
  }
  Status finish(const CompressArgs& a, const FramePlan& p, FrameHeader* hp) {
    FrameHeader& h = *hp;
    auto* f = static_cast<uint8_t*>(a.dst);
    h.frame_size = frame_size_of(h);
    const Bytes<ExecSpace> frame(f, h.frame_size);
    if (a.checksum) {
      const U64s<ExecSpace> hashes = block_hashes(space, static_cast<const uint8_t*>(a.src), p.bytes, f,
                                                  h.frame_size, check_off_of(h));
      const auto host = Kokkos::create_mirror_view(hashes);
      Kokkos::deep_copy(space, host, hashes);
      space.fence();
      h.content_checksum = combine_block_hashes(host.data(), p.n_checks);
    }
    ZeroGaps<ExecSpace> zero{frame, {}, 0};
    zero.count = frame_gaps(h, zero.gaps);
    Kokkos::parallel_for("splitzip::kokkos::zero_gaps", Range<ExecSpace>(space, 0, 1), zero);
    uint8_t hb[64];
    write_header(h, hb);
    Kokkos::deep_copy(space, Bytes<ExecSpace>(f, 64), HostConstBytes(hb, 64));
    space.fence();
    return Status::ok;
  }
};

// One frame (FORMAT.md 4) into a.dst, as reference_compress.
template <class ExecSpace>
FrameOutcome compress_frame(const ExecSpace& space, const CompressArgs& a) {
  KokkosEncode<ExecSpace> k{space};
  return compress_with(k, a);
}

// Kokkos's kernel table (core/frame_skeleton.h) for the frame at a.src.
template <class ExecSpace>
struct KokkosDecode {
  const ExecSpace& space;
  static const uint8_t* frame(const DecompressArgs& a) { return static_cast<const uint8_t*>(a.src); }
  static uint8_t* out(const DecompressArgs& a) { return static_cast<uint8_t*>(a.dst); }
  Status open(const DecompressArgs& a, FrameHeader* h) {
    Status s = check_decompress_args(a);
    if (s != Status::ok) return s;
    uint8_t hb[64] = {};
    const uint64_t head = a.src_size < 64 ? a.src_size : 64;
    Kokkos::deep_copy(space, HostBytes(hb, head), ConstBytes<ExecSpace>(frame(a), head));
    space.fence();
    if ((s = open_frame(a, hb, h)) != Status::ok) return s;  // rules 1-13
    uint32_t mask = 0;
    Kokkos::parallel_reduce("splitzip::kokkos::check_gaps", Range<ExecSpace>(space, 0, 1),
                            CheckGaps<ExecSpace>{ConstBytes<ExecSpace>(frame(a), h->frame_size), *h},
                            Kokkos::BOr<uint32_t>(mask));
    return mask != 0 ? Status::bad_padding : Status::ok;  // rule 14 outside the streams
  }
  Status copy_stored(const DecompressArgs& a, const FrameHeader& h) {
    const uint64_t bytes = h.decoded_bytes();
    Kokkos::deep_copy(space, Bytes<ExecSpace>(out(a), bytes), ConstBytes<ExecSpace>(frame(a) + 64, bytes));
    return Status::ok;
  }
  Status decode(CodecTag<Codec::capacity>, const DecompressArgs& a, const FrameHeader& h) {
    const CapTables* set = nullptr;  // FORMAT.md 4.9, check 0
    Status s = cap_frame_set(a.tables, a.n_tables, h.has_tables(), h.tables_id(), h.dtype, &set);
    if (s != Status::ok) return s;
    s = Status::invalid_argument;  // FORMAT.md 4.6
    visit_codec_dtype<Codec::capacity>(
        h.dtype, [&](auto t) { s = capacity_decode<decltype(t)>(space, h, frame(a), out(a), set); });
    return s;
  }
  Status decode(CodecTag<Codec::e4m3>, const DecompressArgs& a, const FrameHeader& h) {
    return e4m3_decode(space, h, frame(a), out(a));  // FORMAT.md 4.7
  }
  Status decode(CodecTag<Codec::nibble>, const DecompressArgs& a, const FrameHeader& h) {
    Status s = Status::invalid_argument;
    visit_codec_dtype<Codec::nibble>(h.dtype,
                                     [&](auto t) { s = decode_streams<decltype(t)>(space, h, frame(a), out(a)); });
    return s;
  }
  Status verify(const DecompressArgs& a, const FrameHeader& h, uint64_t* corrupt_block) {
    const uint64_t bytes = h.decoded_bytes();
    const U64s<ExecSpace> hashes = h.version == 1 ? U64s<ExecSpace>("splitzip::block_hashes", 0)
                                                  : block_hashes(space, out(a), bytes, nullptr, 0, 0);
    U64s<ExecSpace> result("splitzip::verify_result", 2);
    Kokkos::parallel_for("splitzip::kokkos::verify_checksum", Range<ExecSpace>(space, 0, 1),
                         VerifyChecksum<ExecSpace>{ConstBytes<ExecSpace>(frame(a), h.frame_size),
                                                   ConstBytes<ExecSpace>(out(a), bytes), hashes, result, h});
    const auto host = Kokkos::create_mirror_view(result);
    Kokkos::deep_copy(space, host, result);
    space.fence();
    *corrupt_block = host(1);
    return static_cast<Status>(host(0));
  }
};

// The frame at a.src, rules 1-19 (the lowest failing rule of a single fault,
// as reference_decompress), v1 and v2.
template <class ExecSpace>
FrameOutcome decompress_frame(const ExecSpace& space, const DecompressArgs& a) {
  KokkosDecode<ExecSpace> k{space};
  FrameOutcome out = decompress_with(k, a);
  space.fence();
  return out;
}

}  // namespace kokkos_impl
}  // namespace splitzip
