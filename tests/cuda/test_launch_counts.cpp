// SPDX-License-Identifier: Apache-2.0
// Launches, copies and host synchronisations per call of the CUDA backend's
// real host code (api.cu, encode.cu, decode.cu, calibrate.cu,
// cuda_backend.cu), run on the CPU against the recording runtime of
// tests/cuda/mock_cudart.cpp. Kernels do not execute, so frame contents and
// device statuses are not checked here (the GPU suites do that); what is
// checked is the shape of every call: how many launches, which streams, how
// many host syncs, and that a call refused on the host enqueues nothing.
// The bounds asserted here are the ones cuda/README.md states.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "splitzip/splitzip.hpp"
#include "splitzip/splitzip_cuda.hpp"
#include "tests/cuda/mock_cudart.h"

namespace splitzip::test {
namespace {

using mock::OpKind;

struct Dev {
  explicit Dev(uint64_t bytes) : p(static_cast<uint8_t*>(mock::device_alloc(bytes))), n(bytes) {}
  ~Dev() { mock::device_free(p); }
  Dev(const Dev&) = delete;
  Dev& operator=(const Dev&) = delete;
  uint8_t* p;
  uint64_t n;
};

const cudaStream_t kStream = reinterpret_cast<cudaStream_t>(uintptr_t{0x5150});

uint64_t launches_named(const char* part) {
  uint64_t n = 0;
  for (const auto& o : mock::ops()) n += o.kind == OpKind::launch && o.name.find(part) != std::string::npos;
  return n;
}

std::string describe() {
  std::string s;
  for (const auto& o : mock::ops()) {
    static const char* kinds[] = {"launch", "h2d", "d2h", "d2d", "memset", "alloc", "free", "sync"};
    s += std::string(kinds[static_cast<int>(o.kind)]) + (o.name.empty() ? "" : " " + o.name) + "\n";
  }
  return s;
}

// Every async entry point: launches only, on the caller's stream, no host
// synchronisation, no allocation, no copy.
void expect_async_only(uint64_t launches) {
  EXPECT_EQ(mock::count(OpKind::launch), launches) << describe();
  EXPECT_EQ(mock::count(OpKind::sync), 0u) << describe();
  EXPECT_EQ(mock::count(OpKind::alloc), 0u);
  EXPECT_EQ(mock::count(OpKind::memcpy_h2d) + mock::count(OpKind::memcpy_d2h) + mock::count(OpKind::memcpy_d2d), 0u);
  EXPECT_EQ(mock::ops_not_on(kStream), 0u) << describe();
}

Codebook body_bf16() {
  Codebook cb;
  cb.dtype = Dtype::bf16;
  cb.count = 16;
  for (int i = 0; i < 16; ++i) cb.entries[i] = static_cast<uint8_t>(112 + i);
  return cb;
}

uint64_t cooperative_launches() {
  uint64_t n = 0;
  for (const auto& o : mock::ops()) n += o.kind == OpKind::launch && o.cooperative;
  return n;
}

// Encode is one cooperative launch (enc_fused_kernel: setup, main with the
// per-buffer finalize by the buffer's last CTA, copy), checksum or not.
TEST(LaunchCounts, AsyncCompressIsOneLaunchNoSync) {
  const uint64_t n = 1 << 20;
  Dev src(n * 2), dst(compress_bound(Dtype::bf16, n)), ws(cuda::compress_workspace_size(Dtype::bf16, n)), res(64);
  for (bool checksum : {false, true}) {
    mock::reset();
    cuda::EncodeConfig cfg;
    cfg.checksum = checksum;
    ASSERT_EQ(cuda::compress_async(src.p, n, dst.p, dst.n, body_bf16(), cfg, reinterpret_cast<uint64_t*>(res.p),
                                   reinterpret_cast<Status*>(res.p + 8), ws.p, ws.n, kStream),
              Status::ok);
    expect_async_only(1);
    EXPECT_EQ(launches_named("enc_fused_kernel"), 1u);
    EXPECT_EQ(cooperative_launches(), 1u);
    // Cooperative grid: every CTA resident at once (132 SMs x 4 at most);
    // 2^20 bf16 elements = 32 tiles.
    for (const auto& o : mock::ops())
      if (o.name.find("enc_fused_kernel") != std::string::npos) {
        EXPECT_LE(o.grid, 132u * 4u);
        EXPECT_EQ(o.grid, 33u);  // tiles_bound = 2^20 / 2^15 + 1
        EXPECT_EQ(o.block, 256u);
      }
  }
  // A large buffer: the grid stops at the resident bound.
  const uint64_t big = uint64_t{1} << 26;
  Dev bsrc(16), bdst(16), bws(cuda::compress_workspace_size(Dtype::bf16, big));
  mock::reset();
  ASSERT_EQ(cuda::compress_async(bsrc.p, big, bdst.p, compress_bound(Dtype::bf16, big), body_bf16(), {},
                                 reinterpret_cast<uint64_t*>(res.p), reinterpret_cast<Status*>(res.p + 8), bws.p,
                                 bws.n, kStream),
            Status::ok);
  expect_async_only(1);
  for (const auto& o : mock::ops()) EXPECT_EQ(o.grid, 132u * 4u);
  // Every dtype: one launch of its own instantiation.
  for (Dtype d : {Dtype::fp16, Dtype::fp32, Dtype::fp8_e5m2}) {
    Codebook cb;
    cb.dtype = d;
    cb.count = 1;
    cb.entries[0] = 1;
    Dev ddst(compress_bound(d, n));
    mock::reset();
    cuda::EncodeConfig cfg;
    cfg.dtype = d;
    ASSERT_EQ(cuda::compress_async(src.p, n / 2, ddst.p, ddst.n, cb, cfg, reinterpret_cast<uint64_t*>(res.p),
                                   reinterpret_cast<Status*>(res.p + 8), ws.p, ws.n, kStream),
              Status::ok)
        << dtype_name(d);
    expect_async_only(1);
    EXPECT_EQ(cooperative_launches(), 1u);
  }
}

TEST(LaunchCounts, AsyncBatchCompressIsOneLaunchForAnyCount) {
  for (uint64_t count : {1u, 7u, 300u}) {
    const uint64_t per = 4096;
    Dev items(count * sizeof(cuda::CompressItem)), cbs(sizeof(Codebook)), res(count * 16);
    Dev ws(cuda::compress_workspace_size(Dtype::bf16, per * count, count));
    mock::reset();
    cuda::EncodeConfig cfg;
    ASSERT_EQ(cuda::compress_batch_async(reinterpret_cast<cuda::CompressItem*>(items.p), count, per * count,
                                         reinterpret_cast<Codebook*>(cbs.p), 1, cfg,
                                         reinterpret_cast<uint64_t*>(res.p), reinterpret_cast<Status*>(res.p + 8 * count),
                                         ws.p, ws.n, kStream),
              Status::ok);
    expect_async_only(1);
    EXPECT_EQ(cooperative_launches(), 1u);
  }
}

TEST(LaunchCounts, AsyncDecodeIsOneKernelForEveryDtype) {
  const uint64_t bytes = 1 << 22;
  Dev frame(bytes), out(bytes), ws(cuda::decompress_workspace_size(bytes)), res(64);
  for (bool verify : {false, true}) {
    mock::reset();
    cuda::DecodeConfig dc;
    dc.verify_checksum = verify;
    ASSERT_EQ(cuda::decompress_async(frame.p, bytes, out.p, bytes, dc, reinterpret_cast<uint64_t*>(res.p),
                                     reinterpret_cast<Status*>(res.p + 8), ws.p, ws.n, kStream),
              Status::ok);
    // Mode 0: setup, main (one kernel, dtype from the header), [block
    // hashes], finalize; then capacity mode (the frame's mode is known only
    // on the device): setup, index, blocks, [hashes], final.
    expect_async_only(verify ? 9 : 7);
    EXPECT_EQ(launches_named("dec_main_kernel"), 1u);
    EXPECT_EQ(launches_named("cap_dec_"), verify ? 5u : 4u);
  }
  // fast_frames_only: the mode-0 kernels alone.
  for (bool verify : {false, true}) {
    mock::reset();
    cuda::DecodeConfig dc;
    dc.verify_checksum = verify;
    dc.fast_frames_only = true;
    ASSERT_EQ(cuda::decompress_async(frame.p, bytes, out.p, bytes, dc, reinterpret_cast<uint64_t*>(res.p),
                                     reinterpret_cast<Status*>(res.p + 8), ws.p, ws.n, kStream),
              Status::ok);
    expect_async_only(verify ? 4 : 3);
    EXPECT_EQ(launches_named("dec_main_kernel"), 1u);
    EXPECT_EQ(launches_named("cap_dec_"), 0u);
  }
  // A batch of frames of mixed dtypes: still one main kernel.
  const uint64_t count = 5;
  Dev items(count * sizeof(cuda::DecompressItem)), bres(count * 16), bws(cuda::decompress_workspace_size(bytes, count));
  mock::reset();
  ASSERT_EQ(cuda::decompress_batch_async(reinterpret_cast<cuda::DecompressItem*>(items.p), count, bytes, {},
                                         reinterpret_cast<uint64_t*>(bres.p), reinterpret_cast<Status*>(bres.p + 8 * count),
                                         bws.p, bws.n, kStream),
            Status::ok);
  expect_async_only(9);
  EXPECT_EQ(launches_named("dec_main_kernel"), 1u);
  EXPECT_EQ(launches_named("cap_dec_"), 5u);
  // Frames are spread over CTAs: one per frame in index and final, one warp
  // per exponent block (2^22 / 2^16 + 5 at most) in blocks.
  for (const auto& o : mock::ops()) {
    if (o.name.find("cap_dec_index") != std::string::npos || o.name.find("cap_dec_final") != std::string::npos)
      EXPECT_EQ(o.grid, count);
    if (o.name.find("cap_dec_blocks") != std::string::npos) EXPECT_EQ(o.grid, 64u + count);
  }
}

// Capacity-mode encode through the async API: setup, count, plan, write, no
// cooperative launch, nothing but launches on the caller's stream; the
// codebook is not used (a batch needs no codebook array).
TEST(LaunchCounts, AsyncCapacityCompressIsFourLaunchesNoSync) {
  const uint64_t n = 200000;
  Dev src(n * 4), dst(compress_bound(Dtype::fp32, n)), res(64);
  for (Dtype d : {Dtype::bf16, Dtype::fp16, Dtype::fp32, Dtype::fp8_e5m2}) {
    for (bool checksum : {false, true}) {
      Dev ws(cuda::compress_workspace_size(d, n));
      cuda::EncodeConfig cfg;
      cfg.dtype = d;
      cfg.checksum = checksum;
      cfg.mode = Mode::capacity;
      Codebook unused;  // not validated in capacity mode
      mock::reset();
      ASSERT_EQ(cuda::compress_async(src.p, n, dst.p, compress_bound(d, n), unused, cfg,
                                     reinterpret_cast<uint64_t*>(res.p), reinterpret_cast<Status*>(res.p + 8), ws.p,
                                     ws.n, kStream),
                Status::ok)
          << dtype_name(d);
      expect_async_only(4);
      EXPECT_EQ(launches_named("cap_setup_kernel"), 1u);
      EXPECT_EQ(launches_named("cap_count_kernel"), 1u);
      EXPECT_EQ(launches_named("cap_plan_kernel"), 1u);
      EXPECT_EQ(launches_named("cap_write_kernel"), 1u);
      EXPECT_EQ(cooperative_launches(), 0u);
      for (const auto& o : mock::ops())  // a CTA per exponent block: 200000 / 2^16 + 1
        if (o.name.find("cap_count") != std::string::npos || o.name.find("cap_write") != std::string::npos)
          EXPECT_EQ(o.grid, 4u);
    }
  }
  for (uint64_t count : {1u, 7u, 300u}) {
    const uint64_t per = 4096;
    Dev items(count * sizeof(cuda::CompressItem)), bres(count * 16);
    cuda::EncodeConfig cfg;
    cfg.mode = Mode::capacity;
    Dev ws(cuda::compress_workspace_size(Dtype::bf16, per * count, count));
    mock::reset();
    ASSERT_EQ(cuda::compress_batch_async(reinterpret_cast<cuda::CompressItem*>(items.p), count, per * count, nullptr,
                                         0, cfg, reinterpret_cast<uint64_t*>(bres.p),
                                         reinterpret_cast<Status*>(bres.p + 8 * count), ws.p, ws.n, kStream),
              Status::ok);
    expect_async_only(4);
    for (const auto& o : mock::ops())
      if (o.name.find("cap_plan") != std::string::npos) EXPECT_EQ(o.grid, count);  // a CTA per buffer
  }
}

TEST(LaunchCounts, DeviceCalibrationIsTwoLaunches) {
  const uint64_t n = 1 << 20;
  Dev src(n * 2), counts(256 * 8), cb(sizeof(Codebook));
  mock::reset();
  ASSERT_EQ(cuda::histogram_async(Dtype::bf16, src.p, n, reinterpret_cast<uint64_t*>(counts.p), kStream), Status::ok);
  ASSERT_EQ(cuda::codebook_from_histogram_async(Dtype::bf16, reinterpret_cast<uint64_t*>(counts.p),
                                                reinterpret_cast<Codebook*>(cb.p), kStream),
            Status::ok);
  expect_async_only(2);
  // The top-16 selection runs one thread per exponent.
  for (const auto& o : mock::ops())
    if (o.name.find("codebook_kernel") != std::string::npos) EXPECT_EQ(o.block, 256u);
}

// A refused call enqueues nothing: argument errors, a too-small workspace,
// and an error already pending on the thread (left for its owner).
TEST(LaunchCounts, RefusedCallsEnqueueNothing) {
  const uint64_t n = 4096;
  Dev src(n * 2), dst(compress_bound(Dtype::bf16, n)),
      ws(std::max(cuda::compress_workspace_size(Dtype::bf16, n), cuda::decompress_workspace_size(n * 2))), res(64);
  auto* sz = reinterpret_cast<uint64_t*>(res.p);
  auto* st = reinterpret_cast<Status*>(res.p + 8);
  cuda::EncodeConfig cfg;
  mock::reset();
  EXPECT_EQ(cuda::compress_async(src.p, n, dst.p, 10, body_bf16(), cfg, sz, st, ws.p, ws.n, kStream),
            Status::dst_too_small);
  EXPECT_EQ(cuda::compress_async(src.p, n, dst.p, dst.n, body_bf16(), cfg, sz, st, ws.p, 16, kStream),
            Status::invalid_argument);
  Codebook bad = body_bf16();
  bad.entries[1] = bad.entries[0];
  EXPECT_EQ(cuda::compress_async(src.p, n, dst.p, dst.n, bad, cfg, sz, st, ws.p, ws.n, kStream), Status::bad_codebook);
  EXPECT_EQ(cuda::decompress_async(dst.p, dst.n, src.p, n * 2, {}, sz, st, ws.p, 16, kStream),
            Status::invalid_argument);
  // The mode-0 decoder's workspace alone is too small: the capacity
  // kernels' follows it.
  EXPECT_LT(cuda::decompress_workspace_size(n * 2) / 2, cuda::decompress_workspace_size(n * 2));
  // Capacity mode: the dst bound and the workspace as in the fast mode, no
  // unknown mode (fp8_e4m3 is taken: FORMAT.md 4.6.7).
  cuda::EncodeConfig cap = cfg;
  cap.mode = Mode::capacity;
  EXPECT_EQ(cuda::compress_async(src.p, n, dst.p, 10, bad, cap, sz, st, ws.p, ws.n, kStream), Status::dst_too_small);
  EXPECT_EQ(cuda::compress_async(src.p, n, dst.p, dst.n, bad, cap, sz, st, ws.p, 16, kStream),
            Status::invalid_argument);
  cuda::EncodeConfig odd = cfg;
  odd.mode = static_cast<Mode>(7);
  EXPECT_EQ(cuda::compress_async(src.p, n, dst.p, dst.n, body_bf16(), odd, sz, st, ws.p, ws.n, kStream),
            Status::invalid_argument);
  // The fast mode still needs its codebooks.
  EXPECT_EQ(cuda::compress_batch_async(reinterpret_cast<cuda::CompressItem*>(src.p), 1, n, nullptr, 0, cfg, sz, st,
                                       ws.p, ws.n, kStream),
            Status::invalid_argument);
  EXPECT_EQ(mock::ops().size(), 0u) << describe();
  // A batch larger than a grid can index is refused before the launch.
  EXPECT_EQ(cuda::compress_batch_async(reinterpret_cast<cuda::CompressItem*>(src.p), uint64_t{1} << 31, n,
                                       reinterpret_cast<Codebook*>(src.p), 1, cfg, sz, st, ws.p, ws.n, kStream),
            Status::invalid_argument);
  EXPECT_EQ(mock::ops().size(), 0u) << describe();
  mock::set_pending_error(cudaErrorLaunchFailure);
  EXPECT_EQ(cuda::compress_async(src.p, n, dst.p, dst.n, body_bf16(), cfg, sz, st, ws.p, ws.n, kStream),
            Status::device_error);
  EXPECT_EQ(cuda::decompress_async(dst.p, dst.n, src.p, n * 2, {}, sz, st, ws.p, ws.n, kStream),
            Status::device_error);
  EXPECT_EQ(cuda::compress_async(src.p, n, dst.p, dst.n, body_bf16(), cap, sz, st, ws.p, ws.n, kStream),
            Status::device_error);
  EXPECT_EQ(cuda::histogram_async(Dtype::bf16, src.p, n, sz, kStream), Status::device_error);
  EXPECT_EQ(mock::ops().size(), 0u) << describe();
  EXPECT_EQ(cudaGetLastError(), cudaErrorLaunchFailure);  // still the caller's to read
  mock::reset();
}

// The synchronous Backend: everything on the caller's stream
// (cuda::set_backend_stream), exactly the host syncs cuda/README.md states.
struct BackendCase {
  bool src_dev, dst_dev;
};

TEST(LaunchCounts, BackendCompressOnCallersStreamOneSync) {
  cuda::ScopedBackendStream scope(kStream);
  const uint64_t n = 100000;
  std::vector<uint8_t> host_src(n * 2, 0x3F), host_dst(compress_bound(Dtype::bf16, n));
  Dev dsrc(n * 2), ddst(compress_bound(Dtype::bf16, n));
  const Codebook cb = body_bf16();
  for (BackendCase c : {BackendCase{true, true}, BackendCase{false, false}, BackendCase{true, false}}) {
    for (bool dynamic : {false, true}) {
      CompressOptions o;
      o.backend = "cuda";
      o.codebook = dynamic ? nullptr : &cb;
      mock::reset();
      compress(Dtype::bf16, c.src_dev ? static_cast<const void*>(dsrc.p) : host_src.data(), n,
               c.dst_dev ? static_cast<void*>(ddst.p) : host_dst.data(), ddst.n, o);
      SCOPED_TRACE(describe());
      // encode 1 (+ histogram and codebook for the dynamic top-16).
      EXPECT_EQ(mock::count(OpKind::launch), dynamic ? 3u : 1u);
      EXPECT_EQ(cooperative_launches(), 1u);
      EXPECT_EQ(mock::count(OpKind::sync), 1u);
      EXPECT_EQ(mock::count(OpKind::memcpy_h2d), c.src_dev ? 0u : 1u);
      EXPECT_EQ(mock::ops_not_on(kStream), 0u);
    }
  }
}

TEST(LaunchCounts, BackendDecompressSyncsPerCall) {
  cuda::ScopedBackendStream scope(kStream);
  // A stored bf16 frame header is enough for the host-side sizing paths;
  // the kernels are not run, so its body does not matter.
  const uint64_t n = 5000;
  std::vector<uint8_t> input(n * 2, 0x11), frame(compress_bound(Dtype::bf16, n));
  CompressOptions ro;
  ro.backend = "reference";
  const Result r = compress(Dtype::bf16, input.data(), n, frame.data(), frame.size(), ro);
  ASSERT_EQ(r.status, Status::ok);
  Dev dframe(r.size), dout(n * 2);
  std::memcpy(dframe.p, frame.data(), r.size);
  std::vector<uint8_t> hout(n * 2);
  struct Want {
    BackendCase c;
    uint64_t syncs;
  };
  for (Want w : {Want{{true, true}, 1}, Want{{false, true}, 1}, Want{{false, false}, 1}, Want{{true, false}, 2}}) {
    DecompressOptions o;
    o.backend = "cuda";
    mock::reset();
    decompress(w.c.src_dev ? static_cast<const void*>(dframe.p) : frame.data(), r.size,
               w.c.dst_dev ? static_cast<void*>(dout.p) : hout.data(), n * 2, o);
    SCOPED_TRACE(describe());
    // verify on: setup, main, hash, finalize. Device to device the host has
    // not read the header, so the capacity decoder's five follow (they leave
    // a frame that is not mode 1 alone): more launches, no more syncs.
    const bool both = w.c.src_dev && w.c.dst_dev;
    EXPECT_EQ(mock::count(OpKind::launch), both ? 9u : 4u);
    EXPECT_EQ(launches_named("cap_dec_"), both ? 5u : 0u);
    EXPECT_EQ(mock::count(OpKind::sync), w.syncs) << w.c.src_dev << w.c.dst_dev;
    EXPECT_EQ(mock::ops_not_on(kStream), 0u);
  }
}

// Capacity mode (cuda/capacity_encode.cu, capacity_decode.cu): encode is
// setup, count, plan and write; decode is setup, index, blocks, [hash],
// final. Host syncs
// as mode 0: one per call, plus the header read of a device frame decoded
// to host memory.
TEST(LaunchCounts, BackendCapacityCompressFourLaunchesOneSync) {
  cuda::ScopedBackendStream scope(kStream);
  const uint64_t n = 200000;
  std::vector<uint8_t> host_src(n * 2, 0x3F), host_dst(compress_bound(Dtype::bf16, n));
  Dev dsrc(n * 2), ddst(compress_bound(Dtype::bf16, n));
  for (BackendCase c : {BackendCase{true, true}, BackendCase{false, false}, BackendCase{true, false}}) {
    for (bool checksum : {false, true}) {
      CompressOptions o;
      o.backend = "cuda";
      o.mode = Mode::capacity;
      o.checksum = checksum;
      mock::reset();
      compress(Dtype::bf16, c.src_dev ? static_cast<const void*>(dsrc.p) : host_src.data(), n,
               c.dst_dev ? static_cast<void*>(ddst.p) : host_dst.data(), ddst.n, o);
      SCOPED_TRACE(describe());
      EXPECT_EQ(mock::count(OpKind::launch), 4u);
      EXPECT_EQ(launches_named("cap_setup_kernel"), 1u);
      EXPECT_EQ(launches_named("cap_count_kernel"), 1u);
      EXPECT_EQ(launches_named("cap_plan_kernel"), 1u);
      EXPECT_EQ(launches_named("cap_write_kernel"), 1u);
      EXPECT_EQ(cooperative_launches(), 0u);
      EXPECT_EQ(mock::count(OpKind::sync), 1u);
      EXPECT_EQ(mock::count(OpKind::memcpy_h2d), c.src_dev ? 0u : 1u);
      EXPECT_EQ(mock::ops_not_on(kStream), 0u);
      // A CTA per exponent block of 2^16 elements (4 blocks here).
      for (const auto& op : mock::ops())
        if (op.kind == OpKind::launch && (op.name.find("cap_count") != std::string::npos ||
                                          op.name.find("cap_write") != std::string::npos))
          EXPECT_EQ(op.grid, 4u);
    }
  }
}

TEST(LaunchCounts, BackendCapacityDecompressSyncsPerCall) {
  cuda::ScopedBackendStream scope(kStream);
  const uint64_t n = 70000;
  std::vector<uint8_t> input(n * 2);
  for (uint64_t i = 0; i < n; ++i) input[2 * i + 1] = static_cast<uint8_t>(0x3C + (i % 3));  // a few exponents: mode 1
  std::vector<uint8_t> frame(compress_bound(Dtype::bf16, n));
  CompressOptions ro;
  ro.backend = "reference";
  ro.mode = Mode::capacity;
  const Result r = compress(Dtype::bf16, input.data(), n, frame.data(), frame.size(), ro);
  ASSERT_EQ(r.status, Status::ok);
  ASSERT_EQ(frame[49], 1u);
  Dev dframe(r.size), dout(n * 2);
  std::memcpy(dframe.p, frame.data(), r.size);
  std::vector<uint8_t> hout(n * 2);
  struct Want {
    BackendCase c;
    uint64_t syncs, launches;
  };
  // Host src or dst: the host read the header, only the capacity decoder
  // runs (setup, index, blocks, hash, final); device to device: both.
  for (Want w : {Want{{true, true}, 1, 9}, Want{{false, true}, 1, 5}, Want{{false, false}, 1, 5},
                 Want{{true, false}, 2, 5}}) {
    DecompressOptions o;
    o.backend = "cuda";
    mock::reset();
    decompress(w.c.src_dev ? static_cast<const void*>(dframe.p) : frame.data(), r.size,
               w.c.dst_dev ? static_cast<void*>(dout.p) : hout.data(), n * 2, o);
    SCOPED_TRACE(describe());
    EXPECT_EQ(mock::count(OpKind::launch), w.launches);
    EXPECT_EQ(launches_named("cap_dec_"), 5u);
    EXPECT_EQ(mock::count(OpKind::sync), w.syncs) << w.c.src_dev << w.c.dst_dev;
    EXPECT_EQ(mock::ops_not_on(kStream), 0u);
    // One warp per exponent block; the grid is sized from the destination
    // bytes before the header is read (2^16 bytes per block, fp8's count).
    for (const auto& op : mock::ops())
      if (op.kind == OpKind::launch && op.name.find("cap_dec_blocks") != std::string::npos) {
        EXPECT_EQ(op.grid, 3u);
        EXPECT_EQ(op.block, 32u);
      }
  }
}

// Table sets (FORMAT.md 4.9): the set is one more host-to-device copy
// (its tables; the setup kernel builds the codes or decode tables), no more
// launches or host syncs. A device-to-device decode given several sets
// reads the header to pick one: one more sync.
TEST(LaunchCounts, BackendTableSetsAddACopyNotALaunchOrSync) {
  cuda::ScopedBackendStream scope(kStream);
  const uint64_t n = 70000;
  std::vector<uint8_t> input(n * 2);
  for (uint64_t i = 0; i < n; ++i) input[2 * i + 1] = static_cast<uint8_t>(0x3C + (i % 3));
  TableSet set, other;
  const void* bufs[1] = {input.data()};
  const uint64_t ns[1] = {n};
  ASSERT_EQ(calibrate_tables(Dtype::bf16, bufs, ns, 1, &set, 4), Status::ok);
  const uint64_t few[1] = {64};
  ASSERT_EQ(calibrate_tables(Dtype::bf16, bufs, few, 1, &other, 2), Status::ok);
  Dev dsrc(n * 2), ddst(compress_bound(Dtype::bf16, n));
  for (bool with_set : {false, true}) {
    CompressOptions o;
    o.backend = "cuda";
    o.mode = Mode::capacity;
    o.tables = with_set ? &set : nullptr;
    mock::reset();
    compress(Dtype::bf16, dsrc.p, n, ddst.p, ddst.n, o);
    SCOPED_TRACE(describe());
    EXPECT_EQ(mock::count(OpKind::launch), 4u);
    EXPECT_EQ(mock::count(OpKind::sync), 1u);
    EXPECT_EQ(mock::count(OpKind::memcpy_h2d), with_set ? 1u : 0u);
    EXPECT_EQ(mock::ops_not_on(kStream), 0u);
  }
  std::vector<uint8_t> frame(compress_bound(Dtype::bf16, n));
  CompressOptions ro;
  ro.backend = "reference";
  ro.mode = Mode::capacity;
  ro.tables = &set;
  const Result r = compress(Dtype::bf16, input.data(), n, frame.data(), frame.size(), ro);
  ASSERT_EQ(r.status, Status::ok);
  ASSERT_EQ(frame[6] & 8u, 8u);  // TABLES
  Dev dframe(r.size), dout(n * 2);
  std::memcpy(dframe.p, frame.data(), r.size);
  std::vector<uint8_t> hout(n * 2);
  const TableSet both[2] = {other, set};
  struct Want {
    bool src_dev, dst_dev;
    size_t n_sets;
    uint64_t syncs, launches, h2d;
  };
  for (Want w : {Want{true, true, 1, 1, 9, 1}, Want{true, true, 2, 2, 9, 1}, Want{false, true, 2, 1, 5, 2},
                 Want{true, false, 1, 2, 5, 1}}) {
    DecompressOptions o;
    o.backend = "cuda";
    o.tables = w.n_sets == 1 ? &set : both;
    o.n_tables = w.n_sets;
    mock::reset();
    decompress(w.src_dev ? static_cast<const void*>(dframe.p) : frame.data(), r.size,
               w.dst_dev ? static_cast<void*>(dout.p) : hout.data(), n * 2, o);
    SCOPED_TRACE(describe());
    EXPECT_EQ(mock::count(OpKind::launch), w.launches);
    EXPECT_EQ(mock::count(OpKind::sync), w.syncs) << w.src_dev << w.dst_dev << w.n_sets;
    EXPECT_EQ(mock::count(OpKind::memcpy_h2d), w.h2d) << w.src_dev << w.dst_dev << w.n_sets;
    EXPECT_EQ(mock::ops_not_on(kStream), 0u);
  }
}

}  // namespace
}  // namespace splitzip::test
