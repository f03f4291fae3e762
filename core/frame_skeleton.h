/* SPDX-License-Identifier: Apache-2.0 */
// The whole-frame skeleton (FORMAT.md 4 and 9) that a backend fills with its
// kernels: plan (argument checks, sizes) -> codec_of() -> that codec's
// kernels -> the stored fallback -> the closing steps; and open (rules 1-14)
// -> codec_of() -> that codec's decoder (15-18) -> rule 19. The order of the
// rules lives here once; a backend supplies K, its kernel table:
//
//   compress
//     Status plan(const CompressArgs&, FramePlan*)       plan_frame, with the backend's memo
//     Status histogram(const CompressArgs&, const FramePlan&, uint64_t counts[256])   overwrites counts
//     Status encode(CodecTag<Codec::capacity>, const CompressArgs&, const FramePlan&, FrameHeader*)
//     Status encode(CodecTag<C>, const CompressArgs&, const FramePlan&, const Codebook&, uint64_t* escapes)
//                                                          for each codebook codec C (all but capacity)
//     Status store(const CompressArgs&, const FramePlan&)  the stored payload
//     Status finish(const CompressArgs&, const FramePlan&, FrameHeader*)  checks, gaps, header bytes;
//                                                          h->frame_size set on return
//   decompress
//     Status open(const DecompressArgs&, FrameHeader*)    rules 1-14
//     Status copy_stored(const DecompressArgs&, const FrameHeader&)
//     Status decode(CodecTag<C>, const DecompressArgs&, const FrameHeader&)   each codec C
//     Status verify(const DecompressArgs&, const FrameHeader&, uint64_t* corrupt_block)   rule 19
//
// Every codec is instantiated for every K, so a backend without kernels for
// a codec does not compile. Host-side control flow only; K's kernels may run
// anywhere.
#pragma once

#include <cstdint>

#include "core/codec.h"
#include "core/codec_args.h"
#include "core/frame_rules.h"
#include "core/header.h"

namespace splitzip {

template <class K>
FrameOutcome compress_with(K& k, const CompressArgs& a) {
  FrameOutcome out;
  FramePlan p;
  if ((out.status = k.plan(a, &p)) != Status::ok) return out;  // refuses Codec::invalid
  FrameHeader h = make_header(p.dtype_id, a.n, a.chunk_log2, a.checksum);
  Status s = Status::escape_overflow;
  visit_codec(codec_of(a.dtype, a.mode), [&](auto tag) {
    if constexpr (decltype(tag)::kCodec == Codec::capacity) {
      s = k.encode(tag, a, p, &h);  // FORMAT.md 4.6: no codebook, its own header fields
    } else if (p.budget != kNoEscapeBudget) {
      Codebook cb;
      if (a.codebook != nullptr) {
        cb = *a.codebook;
      } else {
        uint64_t counts[256];  // K::histogram overwrites it (no 2 KiB clear per page)
        if ((s = k.histogram(a, p, counts)) != Status::ok) return;
        cb.dtype = a.dtype;
        cb.count = static_cast<uint8_t>(top_codebook(counts, cb.entries, codebook_limit(p.dtype_id)));
      }
      uint64_t escapes = 0;
      s = k.encode(tag, a, p, cb, &escapes);
      if (s == Status::ok) set_coded_fields(&h, escapes, cb);
    }
  });
  if (s == Status::escape_overflow) {  // FORMAT.md 4.4: the stored frame
    if ((out.status = plan_stored(a, p, &h)) != Status::ok) return out;
    s = k.store(a, p);
  }
  if (s == Status::ok) s = k.finish(a, p, &h);
  if ((out.status = s) != Status::ok) return out;
  out.frame_size = h.frame_size;
  return out;
}

template <class K>
FrameOutcome decompress_with(K& k, const DecompressArgs& a) {
  FrameOutcome out;
  FrameHeader h;
  if ((out.status = k.open(a, &h)) != Status::ok) return out;  // rules 1-14; parse_header refuses Codec::invalid
  Status s = Status::ok;
  if (h.stored()) s = k.copy_stored(a, h);
  else visit_codec(codec_of(h.dtype, h.mode), [&](auto tag) { s = k.decode(tag, a, h); });  // 15-18
  if ((out.status = s) != Status::ok) return out;
  if (a.verify_checksum && h.has_checksum() && (out.status = k.verify(a, h, &out.corrupt_block)) != Status::ok)
    return out;  // rule 19
  out.frame_size = h.frame_size;
  out.decoded_size = h.decoded_bytes();
  return out;
}

}  // namespace splitzip
