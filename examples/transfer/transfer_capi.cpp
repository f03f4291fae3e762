// SPDX-License-Identifier: Apache-2.0
// C entry points for the transfer example (loaded from Python with ctypes).
// Thin wrappers: every call returns a splitzip status number (0 = ok); ctypes
// releases the GIL around them, so the encoder/decoder threads and the
// transport run in parallel with the Python control loop.
#include <cstdint>
#include <cstring>
#include <new>
#include <vector>

#include "bench/pipeline_model.h"
#include "tests/support/synthetic.h"
#include "transfer/stream.h"

using namespace splitzip;
using namespace splitzip::stream;

namespace {
int st(Status s) { return static_cast<int>(s); }

// The registry's own (static) copy of a backend name, so the options can keep
// the pointer; null for null or "" (dispatch picks).
bool backend_ref(const char* name, const char** out) {
  *out = nullptr;
  if (!name || !*name) return true;
  for (size_t i = 0; i < backend_count(); ++i)
    if (std::strcmp(backend_name(i), name) == 0) {
      *out = backend_name(i);
      return true;
    }
  return false;
}
}  // namespace

extern "C" {

// ---- encoder (prefill side) ----
// out: index, slot, data address, size, raw_bytes, out_offset.
void* sztx_encoder_new(int dtype, const void* const* ptrs, const uint64_t* elems, uint64_t n,
                       uint64_t frame_elems, uint32_t slots, int threads, int checksum,
                       const char* backend) {
  if (n && (!ptrs || !elems)) return nullptr;
  const char* be = nullptr;
  if (!backend_ref(backend, &be)) return nullptr;
  std::vector<Tensor> t(n);
  for (uint64_t i = 0; i < n; ++i) t[i] = {ptrs[i], elems[i]};
  CompressOptions o;
  o.threads = threads;
  o.checksum = checksum != 0;
  o.backend = be;
  return new (std::nothrow) StreamEncoder(static_cast<Dtype>(dtype), std::move(t), frame_elems,
                                          slots, o);
}
int sztx_encoder_start(void* e) { return st(static_cast<StreamEncoder*>(e)->start()); }
int sztx_encoder_next(void* e, uint64_t out[6], int* done) {
  EncodedFrame f;
  bool d = false;
  Status s = static_cast<StreamEncoder*>(e)->next(&f, &d);
  *done = d ? 1 : 0;
  out[0] = f.index;
  out[1] = f.slot;
  out[2] = reinterpret_cast<uintptr_t>(f.data);
  out[3] = f.size;
  out[4] = f.raw_bytes;
  out[5] = f.out_offset;
  return st(s);
}
void sztx_encoder_release(void* e, uint32_t slot) { static_cast<StreamEncoder*>(e)->release(slot); }
uint64_t sztx_encoder_frames(void* e) { return static_cast<StreamEncoder*>(e)->plan().size(); }
uint64_t sztx_encoder_slot_capacity(void* e) {
  return static_cast<StreamEncoder*>(e)->slot_capacity();
}
void* sztx_encoder_ring(void* e) { return static_cast<StreamEncoder*>(e)->ring_data(); }
uint64_t sztx_encoder_ring_bytes(void* e) { return static_cast<StreamEncoder*>(e)->ring_bytes(); }
// out: frames, raw_bytes, coded_bytes, busy seconds.
void sztx_encoder_stats(void* e, double out[4]) {
  StageStats s = static_cast<StreamEncoder*>(e)->stats();
  out[0] = double(s.frames);
  out[1] = double(s.raw_bytes);
  out[2] = double(s.coded_bytes);
  out[3] = s.busy_s;
}
void sztx_encoder_free(void* e) { delete static_cast<StreamEncoder*>(e); }

// ---- decoder (decode side) ----
void* sztx_decoder_new(void* dst, uint64_t dst_size, uint32_t slots, uint64_t slot_capacity,
                       int threads, const char* backend) {
  const char* be = nullptr;
  if (!backend_ref(backend, &be)) return nullptr;
  DecompressOptions o;
  o.backend = be;
  o.threads = threads;
  return new (std::nothrow) StreamDecoder(dst, dst_size, slots, slot_capacity, o);
}
int sztx_decoder_start(void* d) { return st(static_cast<StreamDecoder*>(d)->start()); }
int sztx_decoder_acquire(void* d, uint32_t* slot) {
  return st(static_cast<StreamDecoder*>(d)->acquire(slot));
}
int sztx_decoder_submit(void* d, uint32_t slot, uint64_t size, uint64_t offset, uint64_t expect) {
  return st(static_cast<StreamDecoder*>(d)->submit(slot, size, offset, expect));
}
int sztx_decoder_finish(void* d) { return st(static_cast<StreamDecoder*>(d)->finish()); }
void* sztx_decoder_ring(void* d) { return static_cast<StreamDecoder*>(d)->ring_data(); }
uint64_t sztx_decoder_ring_bytes(void* d) { return static_cast<StreamDecoder*>(d)->ring_bytes(); }
void sztx_decoder_stats(void* d, double out[4]) {
  StageStats s = static_cast<StreamDecoder*>(d)->stats();
  out[0] = double(s.frames);
  out[1] = double(s.raw_bytes);
  out[2] = double(s.coded_bytes);
  out[3] = s.busy_s;
}
void sztx_decoder_stop(void* d) { static_cast<StreamDecoder*>(d)->stop(); }
void sztx_decoder_free(void* d) { delete static_cast<StreamDecoder*>(d); }

// ---- model, data, names ----
// out: raw_s, compressed_s, steady_stage_s, bottleneck, b_hide_Bps, speedup, ideal_speedup.
int sztx_predict(double enc_Bps, double dec_Bps, double link_Bps, double ratio, double latency_s,
                 uint64_t payload, uint64_t n_frames, double out[7]) {
  PipelinePrediction r;
  Status s = predict({enc_Bps, dec_Bps, link_Bps, ratio, latency_s}, payload, n_frames, &r);
  if (s != Status::ok) return st(s);
  out[0] = r.raw_s;
  out[1] = r.compressed_s;
  out[2] = r.steady_stage_s;
  out[3] = double(static_cast<int>(r.bottleneck));
  out[4] = r.b_hide_Bps;
  out[5] = r.speedup;
  out[6] = r.ideal_speedup;
  return 0;
}
// Deterministic synthetic KV (tests/support/synthetic.h): elements [first, first+count).
int sztx_synth(const char* generator, int dtype, uint64_t n, uint64_t seed, uint64_t first,
               uint64_t count, void* dst) {
  synth::Generator g;
  if (!generator || !synth::parse_generator(generator, &g)) return st(Status::invalid_argument);
  return st(synth::generate_range(g, static_cast<Dtype>(dtype), n, seed, {}, first, count, dst));
}
// Walks a received stream of back-to-back frames (FORMAT.md 7) with the
// library's FrameIterator, checking every header (rules 1-11) without
// decoding. out: frames, decoded bytes. An empty stream has 0 frames.
int sztx_stream_scan(const void* p, uint64_t size, uint64_t out[2]) {
  if (!out) return st(Status::invalid_argument);
  out[0] = out[1] = 0;
  FrameIterator it(p, size);
  FrameView v;
  Status s;
  while ((s = it.next(&v)) == Status::ok && v.data != nullptr) {
    out[0] += 1;
    out[1] += v.info.decoded_size;
  }
  return st(s);
}
const char* sztx_status_name(int s) { return status_name(static_cast<Status>(s)); }
uint64_t sztx_xxh64(const void* p, uint64_t n) { return xxh64(p, n, 0); }

}  // extern "C"

extern "C" {
// Receive-slot size for frames of at most frame_elems elements (the
// encoder's slot size: compress_bound rounded up to 64 bytes); 0 if invalid.
uint64_t sztx_slot_capacity(int dtype, uint64_t frame_elems) {
  const uint64_t b = compress_bound(static_cast<Dtype>(dtype), frame_elems);
  return b ? (b + 63) & ~uint64_t{63} : 0;
}
}  // extern "C"
