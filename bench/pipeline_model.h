/* SPDX-License-Identifier: Apache-2.0 */
// The paper's Appendix B pipeline model of a transfer stream
// (transfer/stream.h): what a frame-pipelined handoff should take for given
// codec and link rates. Header-only, so the transfer example and the tests
// use it without building bench/.
//
// Three stages per frame: encode (raw bytes at G_enc), link (coded bytes at
// B, plus a fixed per-frame latency), decode (raw bytes at G_dec). With n
// frames in a pipeline the total is the fill (one frame through every stage)
// plus n-1 times the slowest stage; for large n the steady-state rate is set
// by the slowest stage alone. The codec is hidden while the link stage is
// the slowest, i.e. B <= B_hide = min(G_enc, G_dec) / ratio.
#pragma once

#include <algorithm>
#include <cstdint>

#include "splitzip/splitzip.hpp"

namespace splitzip::stream {

struct PipelineParams {
  double enc_Bps = 0;        // G_enc, raw bytes per second
  double dec_Bps = 0;        // G_dec, raw bytes per second
  double link_Bps = 0;       // B, bytes per second on the wire
  double ratio = 1;          // raw bytes / coded bytes
  double frame_latency_s = 0;  // fixed cost per transfer (both raw and coded)
};

enum class Stage : uint8_t { encode = 0, link = 1, decode = 2 };

inline const char* stage_name(Stage s) {
  switch (s) {
    case Stage::encode: return "encode";
    case Stage::link: return "link";
    case Stage::decode: return "decode";
  }
  return "?";
}

struct PipelinePrediction {
  double raw_s = 0;         // payload sent uncompressed in the same frames
  double compressed_s = 0;  // pipelined encode + link + decode
  double steady_stage_s = 0;  // per-frame time of the slowest stage
  Stage bottleneck = Stage::link;
  double b_hide_Bps = 0;    // min(G_enc, G_dec) / ratio
  double speedup = 0;       // raw_s / compressed_s
  double ideal_speedup = 0; // the ratio: the speedup when the link dominates
};

// invalid_argument unless all rates and the ratio are positive, n_frames > 0
// and the latency is non-negative.
inline Status predict(const PipelineParams& p, uint64_t payload_bytes, uint64_t n_frames,
                      PipelinePrediction* out) {
  if (!out || !(p.enc_Bps > 0) || !(p.dec_Bps > 0) || !(p.link_Bps > 0) || !(p.ratio > 0) ||
      !(p.frame_latency_s >= 0) || n_frames == 0)
    return Status::invalid_argument;
  const double frame = static_cast<double>(payload_bytes) / static_cast<double>(n_frames);
  const double n = static_cast<double>(n_frames);
  const double t_enc = frame / p.enc_Bps;
  const double t_link = frame / p.ratio / p.link_Bps + p.frame_latency_s;
  const double t_dec = frame / p.dec_Bps;
  PipelinePrediction r;
  r.raw_s = n * (frame / p.link_Bps + p.frame_latency_s);
  r.steady_stage_s = std::max({t_enc, t_link, t_dec});
  r.bottleneck = r.steady_stage_s == t_link  ? Stage::link
                 : r.steady_stage_s == t_enc ? Stage::encode
                                             : Stage::decode;
  r.compressed_s = t_enc + t_link + t_dec + (n - 1) * r.steady_stage_s;
  r.b_hide_Bps = std::min(p.enc_Bps, p.dec_Bps) / p.ratio;
  r.speedup = r.raw_s / r.compressed_s;
  r.ideal_speedup = p.ratio;
  *out = r;
  return Status::ok;
}

}  // namespace splitzip::stream
