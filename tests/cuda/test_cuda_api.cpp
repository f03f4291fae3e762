// SPDX-License-Identifier: Apache-2.0
// The stream-ordered API (splitzip_cuda.hpp) on a GPU: single and batched
// compress/decompress against the reference, on-device header validation,
// calibration, checksums, a large buffer, and CUDA-graph capture.
#include <algorithm>
#include <cstring>
#include <vector>

#include "tests/cuda/gpu_test_util.h"
#include "tests/support/compare.h"
#include "tests/support/synthetic.h"
#include "tests/support/test_data.h"

namespace splitzip::test {
namespace {

const Dtype kDtypes[] = {Dtype::bf16, Dtype::fp16, Dtype::fp32, Dtype::fp8_e5m2};

Codebook top16(Dtype d, const std::vector<uint8_t>& data, uint64_t n) {
  Histogram h(d);
  h.add(data.data(), n);
  Codebook cb = h.codebook();
  if (cb.count == 0) cb.count = 1, cb.entries[0] = 1;
  return cb;
}

std::vector<uint8_t> reference_frame(Dtype d, const void* src, uint64_t n, const Codebook& cb, uint32_t cl,
                                     bool checksum) {
  std::vector<uint8_t> f(compress_bound(d, n));
  CompressOptions o;
  o.backend = "reference";
  o.codebook = &cb;
  o.chunk_log2 = cl;
  o.checksum = checksum;
  const Result r = compress(d, src, n, f.data(), f.size(), o);
  EXPECT_EQ(r.status, Status::ok);
  f.resize(r.size);
  return f;
}

Status reference_decode(const std::vector<uint8_t>& frame, uint64_t size, uint64_t cap, std::vector<uint8_t>* out) {
  out->assign(cap, 0);
  DecompressOptions o;
  o.backend = "reference";
  return decompress(frame.data(), size, out->data(), cap, o).status;
}

// One async compress + decompress round trip on device buffers at the given
// byte offsets (unaligned paths), checked against the reference.
::testing::AssertionResult async_round_trip(Dtype d, const std::vector<uint8_t>& data, uint64_t n,
                                            const Codebook& cb, uint32_t cl, bool checksum, uint32_t off,
                                            cudaStream_t stream) {
  const uint64_t bytes = n * dtype_bytes(d);
  const uint64_t bound = compress_bound(d, n);
  DeviceBuffer src(bytes + off), dst(bound + off), out(bytes + off), res(64);
  src.upload(data.data(), bytes, off);
  dst.fill(0xEE);
  DeviceBuffer ws(cuda::compress_workspace_size(d, n));
  cuda::EncodeConfig cfg;
  cfg.dtype = d;
  cfg.chunk_log2 = cl;
  cfg.checksum = checksum;
  auto* d_size = reinterpret_cast<uint64_t*>(res.get());
  auto* d_status = reinterpret_cast<Status*>(res.get() + 8);
  Status s = cuda::compress_async(src.get() + off, n, dst.get() + off, bound, cb, cfg, d_size, d_status, ws.get(),
                                  ws.size(), stream);
  if (s != Status::ok) return ::testing::AssertionFailure() << "compress_async: " << status_name(s);
  cudaStreamSynchronize(stream);
  const auto size = download_value<uint64_t>(d_size);
  const auto st = download_value<Status>(d_status);
  if (st != Status::ok) return ::testing::AssertionFailure() << "device status " << status_name(st);
  const auto got = dst.download(size, off);
  const auto want = reference_frame(d, data.data(), n, cb, cl, checksum);
  auto eq = bytes_equal(got, want);
  if (!eq) return ::testing::AssertionFailure() << "frame: " << eq.message();

  DeviceBuffer dws(cuda::decompress_workspace_size(bytes));
  cuda::DecodeConfig dc;
  s = cuda::decompress_async(dst.get() + off, size, out.get() + off, bytes, dc, d_size, d_status, dws.get(),
                             dws.size(), stream);
  if (s != Status::ok) return ::testing::AssertionFailure() << "decompress_async: " << status_name(s);
  cudaStreamSynchronize(stream);
  if (download_value<Status>(d_status) != Status::ok)
    return ::testing::AssertionFailure() << "decode status " << status_name(download_value<Status>(d_status));
  if (download_value<uint64_t>(d_size) != bytes) return ::testing::AssertionFailure() << "decoded size";
  const auto back = out.download(bytes, off);
  auto eq2 = bytes_equal(back.data(), bytes, data.data(), bytes);
  if (!eq2) return ::testing::AssertionFailure() << "decoded: " << eq2.message();
  if (cudaGetLastError() != cudaSuccess) return ::testing::AssertionFailure() << "CUDA error";
  return ::testing::AssertionSuccess();
}

TEST(CudaApi, RoundTripEveryDtypeSizeAndAlignment) {
  SZ_REQUIRE_GPU();
  cudaStream_t stream;
  SZ_CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (Dtype d : kDtypes) {
    synth::Params p;
    p.escape_rate = 0.02;
    const auto data = synth::generate(synth::Generator::heavy_tail, d, 300001, 1, p);
    for (uint64_t n : {uint64_t{0}, uint64_t{1}, uint64_t{17}, uint64_t{32768}, uint64_t{32769}, uint64_t{300001}}) {
      const Codebook cb = top16(d, data, n);
      for (uint32_t off : {0u, 2u})
        EXPECT_TRUE(async_round_trip(d, data, n, cb, 10, false, off, stream)) << dtype_name(d) << " n " << n << " +" << off;
    }
    EXPECT_TRUE(async_round_trip(d, data, 300001, synth::body_codebook(d), 15, true, 0, stream)) << "checksum";
    const auto bits = synth::generate(synth::Generator::random_bits, d, 50000, 2);  // stored fallback
    EXPECT_TRUE(async_round_trip(d, bits, 50000, top16(d, bits, 50000), 10, true, 0, stream)) << "stored";
  }
  cudaStreamDestroy(stream);
}

TEST(CudaApi, HostSideArgumentErrors) {
  SZ_REQUIRE_GPU();
  DeviceBuffer src(1024), dst(2048), ws(cuda::compress_workspace_size(Dtype::bf16, 512)), res(16);
  const Codebook cb = synth::body_codebook(Dtype::bf16);
  cuda::EncodeConfig cfg;
  auto* sz = reinterpret_cast<uint64_t*>(res.get());
  auto* st = reinterpret_cast<Status*>(res.get() + 8);
  EXPECT_EQ(cuda::compress_async(src.get(), 512, dst.get(), 10, cb, cfg, sz, st, ws.get(), ws.size(), 0),
            Status::dst_too_small);
  EXPECT_EQ(cuda::compress_async(src.get(), 512, dst.get(), 2048, cb, cfg, sz, st, ws.get(), 10, 0),
            Status::invalid_argument);
  Codebook bad = cb;
  bad.entries[1] = bad.entries[0];
  EXPECT_EQ(cuda::compress_async(src.get(), 512, dst.get(), 2048, bad, cfg, sz, st, ws.get(), ws.size(), 0),
            Status::bad_codebook);
  cfg.chunk_log2 = 5;
  EXPECT_EQ(cuda::compress_async(src.get(), 512, dst.get(), 2048, cb, cfg, sz, st, ws.get(), ws.size(), 0),
            Status::invalid_argument);
}

// Header and payload corruptions decoded by decompress_async: same status
// as the reference (rules 1-19 on the device), no CUDA error.
TEST(CudaApi, CorruptFramesOnDevice) {
  SZ_REQUIRE_GPU();
  uint64_t checked = 0;
  for (Dtype d : kDtypes) {
    synth::Params p;
    p.escape_rate = 0.03;
    const uint64_t n = 2000;
    const auto data = synth::generate(synth::Generator::heavy_tail, d, n, 9, p);
    const auto frame = reference_frame(d, data.data(), n, synth::body_codebook(d), 6, true);
    const uint64_t bytes = n * dtype_bytes(d);
    DeviceBuffer df(frame.size()), out(bytes), ws(cuda::decompress_workspace_size(bytes)), res(16);
    auto* sz = reinterpret_cast<uint64_t*>(res.get());
    auto* st = reinterpret_cast<Status*>(res.get() + 8);
    for (uint64_t pos = 0; pos < frame.size(); pos += (pos < 64 ? 1 : 5)) {
      for (uint64_t size : {frame.size(), pos + 1}) {
        std::vector<uint8_t> bad = frame;
        bad[pos] ^= static_cast<uint8_t>(0x81u >> (pos % 5));
        ASSERT_TRUE(df.upload(bad.data(), bad.size()));
        // Fresh poison for every case: no output, size or status can be a
        // leftover of the previous case.
        ASSERT_TRUE(out.fill(0xCD));
        ASSERT_TRUE(res.fill(0xEE));
        ASSERT_EQ(cuda::decompress_async(df.get(), size, out.get(), bytes, {}, sz, st, ws.get(), ws.size(), 0),
                  Status::ok);
        SZ_CUDA_OK(cudaDeviceSynchronize());
        std::vector<uint8_t> want;
        const Status sr = reference_decode(bad, size, bytes, &want);
        ASSERT_EQ(download_value<Status>(st), sr) << dtype_name(d) << " byte " << pos << " size " << size;
        if (sr == Status::ok) {
          const auto got = out.download(bytes);
          EXPECT_TRUE(bytes_equal(got, want));
        }
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 500u);
}

// Per-layer K/V buffers in one launch, each with its own codebook; bad items
// fail alone; then all frames (plus a mixed-dtype frame) decoded in one batch.
TEST(CudaApi, BatchedCompressAndDecompress) {
  SZ_REQUIRE_GPU();
  const auto files = bf16_data_files();
  std::vector<std::vector<uint8_t>> inputs;
  std::vector<Codebook> cbs;
  for (const auto& f : files) {
    bool ok = false;
    inputs.push_back(load_data_file(f, &ok));
    ASSERT_TRUE(ok) << f;
    cbs.push_back(top16(Dtype::bf16, inputs.back(), inputs.back().size() / 2));
  }
  const size_t count = inputs.size() + 1;  // + one bad item
  std::vector<DeviceBuffer> srcs, dsts;
  std::vector<cuda::CompressItem> items(count);
  uint64_t total = 0;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const uint64_t n = inputs[k].size() / 2;
    srcs.emplace_back(inputs[k].size());
    dsts.emplace_back(compress_bound(Dtype::bf16, n));
    ASSERT_TRUE(srcs.back().upload(inputs[k].data(), inputs[k].size()));
    items[k] = {srcs.back().get(), dsts.back().get(), n, compress_bound(Dtype::bf16, n), static_cast<uint32_t>(k), 0};
    total += n;
  }
  items[count - 1] = {srcs[0].get(), dsts[0].get(), 100, 100, 99, 0};  // codebook index out of range
  DeviceBuffer ditems(count * sizeof(cuda::CompressItem)), dcbs(cbs.size() * sizeof(Codebook));
  ASSERT_TRUE(ditems.upload(items.data(), count * sizeof(cuda::CompressItem)));
  ASSERT_TRUE(dcbs.upload(cbs.data(), cbs.size() * sizeof(Codebook)));
  DeviceBuffer sizes(count * 8), statuses(count * 4);
  DeviceBuffer ws(cuda::compress_workspace_size(Dtype::bf16, total + 100, count));
  cuda::EncodeConfig cfg;
  ASSERT_EQ(cuda::compress_batch_async(reinterpret_cast<cuda::CompressItem*>(ditems.get()), count, total + 100,
                                       reinterpret_cast<Codebook*>(dcbs.get()), static_cast<uint32_t>(cbs.size()),
                                       cfg, reinterpret_cast<uint64_t*>(sizes.get()),
                                       reinterpret_cast<Status*>(statuses.get()), ws.get(), ws.size(), 0),
            Status::ok);
  SZ_CUDA_OK(cudaDeviceSynchronize());
  std::vector<uint64_t> hs(count);
  std::vector<Status> hst(count);
  SZ_CUDA_OK(cudaMemcpy(hs.data(), sizes.get(), count * 8, cudaMemcpyDeviceToHost));
  SZ_CUDA_OK(cudaMemcpy(hst.data(), statuses.get(), count * 4, cudaMemcpyDeviceToHost));
  EXPECT_EQ(hst[count - 1], Status::bad_codebook);
  std::vector<cuda::DecompressItem> ditems_h;
  std::vector<DeviceBuffer> outs;
  uint64_t out_total = 0;
  for (size_t k = 0; k < inputs.size(); ++k) {
    ASSERT_EQ(hst[k], Status::ok) << files[k];
    const auto want = reference_frame(Dtype::bf16, inputs[k].data(), inputs[k].size() / 2, cbs[k], 10, false);
    EXPECT_TRUE(bytes_equal(dsts[k].download(hs[k]), want)) << files[k];
    outs.emplace_back(inputs[k].size());
    ditems_h.push_back({dsts[k].get(), hs[k], outs.back().get(), inputs[k].size()});
    out_total += inputs[k].size();
  }
  // A fp32 frame in the same decode batch (dtype-major tiles).
  const auto f32 = real_inputs(Dtype::fp32).front();
  const auto f32_frame = reference_frame(Dtype::fp32, f32.bytes.data(), f32.n, top16(Dtype::fp32, f32.bytes, f32.n), 10, true);
  DeviceBuffer f32_src(f32_frame.size());
  ASSERT_TRUE(f32_src.upload(f32_frame.data(), f32_frame.size()));
  outs.emplace_back(f32.bytes.size());
  ditems_h.push_back({f32_src.get(), f32_frame.size(), outs.back().get(), f32.bytes.size()});
  out_total += f32.bytes.size();
  const size_t dcount = ditems_h.size();
  DeviceBuffer dd(dcount * sizeof(cuda::DecompressItem)), dsz(dcount * 8), dst_(dcount * 4);
  ASSERT_TRUE(dd.upload(ditems_h.data(), dcount * sizeof(cuda::DecompressItem)));
  DeviceBuffer dws(cuda::decompress_workspace_size(out_total, dcount));
  ASSERT_EQ(cuda::decompress_batch_async(reinterpret_cast<cuda::DecompressItem*>(dd.get()), dcount, out_total, {},
                                         reinterpret_cast<uint64_t*>(dsz.get()), reinterpret_cast<Status*>(dst_.get()),
                                         dws.get(), dws.size(), 0),
            Status::ok);
  SZ_CUDA_OK(cudaDeviceSynchronize());
  std::vector<Status> dst_h(dcount);
  SZ_CUDA_OK(cudaMemcpy(dst_h.data(), dst_.get(), dcount * 4, cudaMemcpyDeviceToHost));
  for (size_t k = 0; k < dcount; ++k) {
    ASSERT_EQ(dst_h[k], Status::ok) << k;
    const std::vector<uint8_t>& want = k < inputs.size() ? inputs[k] : f32.bytes;
    EXPECT_TRUE(bytes_equal(outs[k].download(want.size()), want)) << k;
  }
}

// A batch of N buffers (per layer / per page sizes, 64 KiB - 4 MiB, every
// form) gives the same frames, sizes and statuses as N single calls.
TEST(CudaApi, BatchEqualsSingleCalls) {
  SZ_REQUIRE_GPU();
  for (Dtype d : kDtypes) {
    std::vector<uint64_t> ns = {32768, 65536 / dtype_bytes(d), 1000003, (4u << 20) / dtype_bytes(d), 17, 0, 50000};
    std::vector<std::vector<uint8_t>> inputs;
    std::vector<Codebook> cbs;
    uint64_t total = 0;
    for (size_t k = 0; k < ns.size(); ++k) {
      synth::Params p;
      p.escape_rate = 0.01;
      const auto g = k == 6 ? synth::Generator::random_bits : synth::Generator::heavy_tail;  // last: stored
      inputs.push_back(ns[k] ? synth::generate(g, d, ns[k], 100 + k, p) : std::vector<uint8_t>{});
      cbs.push_back(top16(d, inputs.back(), ns[k]));
      total += ns[k];
    }
    const size_t count = ns.size();
    std::vector<DeviceBuffer> srcs, dsts, singles;
    std::vector<cuda::CompressItem> items(count);
    for (size_t k = 0; k < count; ++k) {
      srcs.emplace_back(inputs[k].size());
      ASSERT_TRUE(srcs.back().upload(inputs[k].data(), inputs[k].size()));
      dsts.emplace_back(compress_bound(d, ns[k]));
      singles.emplace_back(compress_bound(d, ns[k]));
      ASSERT_TRUE(dsts.back().fill(0xEE));
      ASSERT_TRUE(singles.back().fill(0xDD));
      items[k] = {srcs[k].get(), dsts[k].get(), ns[k], compress_bound(d, ns[k]), static_cast<uint32_t>(k), 0};
    }
    for (bool checksum : {false, true}) {
      cuda::EncodeConfig cfg;
      cfg.dtype = d;
      cfg.checksum = checksum;
      DeviceBuffer ditems(count * sizeof(cuda::CompressItem)), dcbs(count * sizeof(Codebook)), res(count * 16 + 16);
      ASSERT_TRUE(ditems.upload(items.data(), count * sizeof(cuda::CompressItem)));
      ASSERT_TRUE(dcbs.upload(cbs.data(), count * sizeof(Codebook)));
      DeviceBuffer ws(cuda::compress_workspace_size(d, total, count));
      auto* sizes = reinterpret_cast<uint64_t*>(res.get());
      auto* stats = reinterpret_cast<Status*>(res.get() + 8 * count);
      ASSERT_EQ(cuda::compress_batch_async(reinterpret_cast<cuda::CompressItem*>(ditems.get()), count, total,
                                           reinterpret_cast<Codebook*>(dcbs.get()), static_cast<uint32_t>(count), cfg,
                                           sizes, stats, ws.get(), ws.size(), 0),
                Status::ok);
      SZ_CUDA_OK(cudaDeviceSynchronize());
      std::vector<uint64_t> bs(count);
      std::vector<Status> bst(count);
      SZ_CUDA_OK(cudaMemcpy(bs.data(), sizes, count * 8, cudaMemcpyDeviceToHost));
      SZ_CUDA_OK(cudaMemcpy(bst.data(), stats, count * sizeof(Status), cudaMemcpyDeviceToHost));
      for (size_t k = 0; k < count; ++k) {
        DeviceBuffer sws(cuda::compress_workspace_size(d, ns[k])), sres(16);
        ASSERT_EQ(cuda::compress_async(srcs[k].get(), ns[k], singles[k].get(), compress_bound(d, ns[k]), cbs[k], cfg,
                                       reinterpret_cast<uint64_t*>(sres.get()),
                                       reinterpret_cast<Status*>(sres.get() + 8), sws.get(), sws.size(), 0),
                  Status::ok);
        SZ_CUDA_OK(cudaDeviceSynchronize());
        const auto ssize = download_value<uint64_t>(sres.get());
        EXPECT_EQ(download_value<Status>(sres.get() + 8), bst[k]) << dtype_name(d) << " item " << k;
        ASSERT_EQ(ssize, bs[k]) << dtype_name(d) << " item " << k;
        EXPECT_TRUE(bytes_equal(dsts[k].download(bs[k]), singles[k].download(ssize))) << dtype_name(d) << " item " << k;
        EXPECT_TRUE(bytes_equal(dsts[k].download(bs[k]), reference_frame(d, inputs[k].data(), ns[k], cbs[k], 10, checksum)))
            << dtype_name(d) << " item " << k;
      }
    }
  }
}

TEST(CudaApi, DeviceCalibrationMatchesHost) {
  SZ_REQUIRE_GPU();
  for (Dtype d : kDtypes) {
    const auto in = real_inputs(d).front();
    DeviceBuffer src(in.bytes.size()), counts(256 * 8), cb(sizeof(Codebook));
    ASSERT_TRUE(src.upload(in.bytes.data(), in.bytes.size()));
    SZ_CUDA_OK(cudaMemset(counts.get(), 0, 256 * 8));
    auto* c = reinterpret_cast<uint64_t*>(counts.get());
    // Two halves accumulate into one histogram.
    const uint64_t half = in.n / 2;
    ASSERT_EQ(cuda::histogram_async(d, src.get(), half, c, 0), Status::ok);
    ASSERT_EQ(cuda::histogram_async(d, src.get() + half * dtype_bytes(d), in.n - half, c, 0), Status::ok);
    ASSERT_EQ(cuda::codebook_from_histogram_async(d, c, reinterpret_cast<Codebook*>(cb.get()), 0), Status::ok);
    SZ_CUDA_OK(cudaDeviceSynchronize());
    std::vector<uint64_t> hc(256);
    SZ_CUDA_OK(cudaMemcpy(hc.data(), c, 256 * 8, cudaMemcpyDeviceToHost));
    Histogram h(d);
    h.add(in.bytes.data(), in.n);
    for (int e = 0; e < 256; ++e) EXPECT_EQ(hc[e], h.count(e)) << e;
    const Codebook got = download_value<Codebook>(cb.get());
    const Codebook ref = h.codebook();
    EXPECT_EQ(got.count, ref.count);
    EXPECT_EQ(std::memcmp(got.entries, ref.entries, 16), 0);
  }
}

// A buffer well past the L2 and many tiles of look-back: 2^27 + 12345 bf16.
TEST(CudaApi, LargeBuffer) {
  SZ_REQUIRE_GPU();
  const uint64_t n = (uint64_t{1} << 27) + 12345;
  const auto data = synth::generate(synth::Generator::gaussian_kv, Dtype::bf16, n, 31);
  ASSERT_EQ(data.size(), n * 2);
  EXPECT_TRUE(async_round_trip(Dtype::bf16, data, n, top16(Dtype::bf16, data, n), 10, false, 0, 0));
}

// compress_async + decompress_async captured once, replayed on new inputs.
// The fused encode kernel resets its own ticket and tile states (setup
// phase, then a grid barrier): a workspace full of garbage, or left by the
// previous call of another dtype, size or checksum setting, gives the
// reference's frames, coded and stored fallback, multi-tile.
TEST(CudaApi, FusedEncodeNeedsNoWorkspaceInit) {
  SZ_REQUIRE_GPU();
  cudaStream_t stream;
  SZ_CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const uint64_t n = 5 * 32768 + 123;
  uint64_t ws_bytes = 0;
  for (Dtype d : kDtypes) ws_bytes = std::max(ws_bytes, cuda::compress_workspace_size(d, n));
  DeviceBuffer ws(ws_bytes), src(n * 4), dst(compress_bound(Dtype::fp32, n)), res(64);
  auto* d_size = reinterpret_cast<uint64_t*>(res.get());
  auto* d_status = reinterpret_cast<Status*>(res.get() + 8);
  int frames = 0;
  for (uint8_t garbage : {uint8_t{0xFF}, uint8_t{0x00}, uint8_t{0x5A}}) {
    ws.fill(garbage);  // once: later calls find the previous call's leftovers
    for (Dtype d : kDtypes) {
      for (synth::Generator g : {synth::Generator::heavy_tail, synth::Generator::random_bits}) {
        synth::Params p;
        p.escape_rate = 0.02;
        const auto data = synth::generate(g, d, n, 7 + frames, p);
        src.upload(data.data(), data.size(), 0);
        for (bool checksum : {false, true}) {
          cuda::EncodeConfig cfg;
          cfg.dtype = d;
          cfg.checksum = checksum;
          const Codebook cb = synth::body_codebook(d);
          ASSERT_EQ(cuda::compress_async(src.get(), n, dst.get(), compress_bound(d, n), cb, cfg, d_size, d_status,
                                         ws.get(), ws.size(), stream),
                    Status::ok);
          SZ_CUDA_OK(cudaStreamSynchronize(stream));
          ASSERT_EQ(download_value<Status>(d_status), Status::ok);
          const auto got = dst.download(download_value<uint64_t>(d_size), 0);
          EXPECT_TRUE(bytes_equal(got, reference_frame(d, data.data(), n, cb, kDefaultChunkLog2, checksum)))
              << dtype_name(d) << " garbage " << int(garbage) << " checksum " << checksum;
          ++frames;
        }
      }
    }
  }
  EXPECT_EQ(frames, 48);
  cudaStreamDestroy(stream);
}

TEST(CudaApi, GraphCaptureAndReplay) {
  SZ_REQUIRE_GPU();
  const Dtype d = Dtype::bf16;
  const uint64_t n = 1000003;
  const uint64_t bytes = n * 2, bound = compress_bound(d, n);
  DeviceBuffer src(bytes), frame(bound), out(bytes), res(32);
  DeviceBuffer ews(cuda::compress_workspace_size(d, n)), dws(cuda::decompress_workspace_size(bytes));
  const Codebook cb = synth::body_codebook(d);
  auto* esz = reinterpret_cast<uint64_t*>(res.get());
  auto* est = reinterpret_cast<Status*>(res.get() + 8);
  auto* dsz = reinterpret_cast<uint64_t*>(res.get() + 16);
  auto* dstat = reinterpret_cast<Status*>(res.get() + 24);
  ASSERT_EQ(cuda::warm_up(), Status::ok);
  cudaStream_t s;
  SZ_CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraph_t graph;
  SZ_CUDA_OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  cuda::EncodeConfig cfg;
  const Status a = cuda::compress_async(src.get(), n, frame.get(), bound, cb, cfg, esz, est, ews.get(), ews.size(), s);
  const Status b = cuda::decompress_async(frame.get(), bound, out.get(), bytes, {}, dsz, dstat, dws.get(), dws.size(), s);
  SZ_CUDA_OK(cudaStreamEndCapture(s, &graph));
  ASSERT_EQ(a, Status::ok);
  ASSERT_EQ(b, Status::ok);
  cudaGraphExec_t exec;
  SZ_CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
  for (uint64_t round = 0; round < 3; ++round) {
    synth::Params p;
    // Round 2: ~20% escapes, above bf16's ~1/6 budget: the stored fallback.
    p.escape_rate = 0.001 + 0.1 * static_cast<double>(round);
    const auto data = synth::generate(synth::Generator::heavy_tail, d, n, 50 + round, p);
    ASSERT_TRUE(src.upload(data.data(), bytes));
    SZ_CUDA_OK(cudaGraphLaunch(exec, s));
    SZ_CUDA_OK(cudaStreamSynchronize(s));
    ASSERT_EQ(download_value<Status>(est), Status::ok) << round;
    ASSERT_EQ(download_value<Status>(dstat), Status::ok) << round;
    const auto want = reference_frame(d, data.data(), n, cb, 10, false);
    EXPECT_TRUE(bytes_equal(frame.download(download_value<uint64_t>(esz)), want)) << round;
    EXPECT_TRUE(bytes_equal(out.download(bytes), data)) << round;
  }
  // 100 replays on one input: every frame and every output byte-identical
  // (hashes compared; outputs re-poisoned before each replay).
  const auto data = synth::generate(synth::Generator::heavy_tail, d, n, 77);
  ASSERT_TRUE(src.upload(data.data(), bytes));
  const auto want = reference_frame(d, data.data(), n, cb, 10, false);
  const uint64_t want_frame = xxh3_64(want.data(), want.size()), want_out = xxh3_64(data.data(), bytes);
  for (int replay = 0; replay < 100; ++replay) {
    SZ_CUDA_OK(cudaMemsetAsync(frame.get(), 0xA5, bound, s));
    SZ_CUDA_OK(cudaMemsetAsync(out.get(), 0x5A, bytes, s));
    SZ_CUDA_OK(cudaMemsetAsync(res.get(), 0xFF, 32, s));
    SZ_CUDA_OK(cudaGraphLaunch(exec, s));
    SZ_CUDA_OK(cudaStreamSynchronize(s));
    ASSERT_EQ(download_value<Status>(est), Status::ok) << replay;
    ASSERT_EQ(download_value<Status>(dstat), Status::ok) << replay;
    ASSERT_EQ(download_value<uint64_t>(esz), want.size()) << replay;
    const auto f = frame.download(want.size());
    ASSERT_EQ(xxh3_64(f.data(), f.size()), want_frame) << "replay " << replay;
    const auto o = out.download(bytes);
    ASSERT_EQ(xxh3_64(o.data(), o.size()), want_out) << "replay " << replay;
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(s);
}

// Small sizes through every kernel path, for compute-sanitizer (memcheck,
// racecheck: slow per byte): every dtype coded / stored / checksum,
// unaligned, a batch, the dynamic top-16, one corrupt frame per dtype.
TEST(CudaSanitize, SmallEveryPath) {
  SZ_REQUIRE_GPU();
  for (Dtype d : kDtypes) {
    synth::Params p;
    p.escape_rate = 0.02;
    const auto data = synth::generate(synth::Generator::heavy_tail, d, 70001, 3, p);
    for (uint64_t n : {uint64_t{0}, uint64_t{17}, uint64_t{70001}}) {
      const Codebook cb = top16(d, data, n);
      EXPECT_TRUE(async_round_trip(d, data, n, cb, 6, n % 2 == 1, n == 17 ? 2 : 0, 0)) << dtype_name(d) << " " << n;
    }
    const auto bits = synth::generate(synth::Generator::random_bits, d, 40000, 4);
    EXPECT_TRUE(async_round_trip(d, bits, 40000, top16(d, bits, 40000), 10, true, 0, 0)) << "stored";
    CompressOptions o;
    o.backend = "cuda";
    DeviceBuffer src(data.size());
    ASSERT_TRUE(src.upload(data.data(), data.size()));
    const uint64_t bound = compress_bound(d, 70001);
    DeviceBuffer frame(bound);
    const Result r = compress(d, src.get(), 70001, frame.get(), bound, o);  // dynamic top-16 on the device
    ASSERT_EQ(r.status, Status::ok);
    auto bad = frame.download(r.size);
    bad[r.size / 2] ^= 0x24;
    std::vector<uint8_t> want;
    const Status sr = reference_decode(bad, bad.size(), data.size(), &want);
    ASSERT_TRUE(frame.upload(bad.data(), bad.size()));
    DecompressOptions dopt;
    dopt.backend = "cuda";
    DeviceBuffer out(data.size());
    EXPECT_EQ(decompress(frame.get(), bad.size(), out.get(), data.size(), dopt).status, sr) << dtype_name(d);
  }
}

// More than 2^31 elements of bf16 (4.3 GB, 65537 checksum blocks, a short
// last block) through the async API with the v2 checksum: the GPU frame's
// XXH3 equals the CPU reference frame's, and the decoded output's XXH3
// equals the input's. Run by scripts/gpu_check.sh step 7 (CudaHuge.*).
TEST(CudaHuge, Bf16Over2Pow31ElementsMatchesCpuByHash) {
  SZ_REQUIRE_GPU();
  const Dtype d = Dtype::bf16;
  const uint64_t n = (uint64_t{1} << 31) + 12345, bytes = n * 2;
  std::vector<uint8_t> input(bytes);
  {
    synth::Params p;
    p.escape_rate = 0.01;
    const auto pattern = synth::generate(synth::Generator::heavy_tail, d, uint64_t{1} << 24, 6, p);
    for (uint64_t off = 0; off < bytes; off += pattern.size())
      std::memcpy(input.data() + off, pattern.data(), std::min<uint64_t>(pattern.size(), bytes - off));
    for (uint64_t i = 0; i < bytes; i += 65521) input[i] ^= static_cast<uint8_t>(i >> 16);  // blocks differ
  }
  const Codebook cb = top16(d, input, uint64_t{1} << 24);
  const uint64_t bound = compress_bound(d, n);
  std::vector<uint8_t> want(bound);
  CompressOptions o;
  o.backend = "reference";
  o.codebook = &cb;
  o.checksum = true;
  const Result rr = compress(d, input.data(), n, want.data(), want.size(), o);
  ASSERT_EQ(rr.status, Status::ok);
  const uint64_t want_hash = xxh3_64(want.data(), rr.size), in_hash = xxh3_64(input.data(), bytes);
  want = {};
  uint64_t got_size = 0, got_hash = 0;
  {
    DeviceBuffer src(bytes), frame(bound), res(16);
    ASSERT_TRUE(src.upload(input.data(), bytes));
    DeviceBuffer ws(cuda::compress_workspace_size(d, n));
    cuda::EncodeConfig cfg;
    cfg.checksum = true;
    ASSERT_EQ(cuda::compress_async(src.get(), n, frame.get(), bound, cb, cfg, reinterpret_cast<uint64_t*>(res.get()),
                                   reinterpret_cast<Status*>(res.get() + 8), ws.get(), ws.size(), 0),
              Status::ok);
    SZ_CUDA_OK(cudaDeviceSynchronize());
    ASSERT_EQ(download_value<Status>(res.get() + 8), Status::ok);
    got_size = download_value<uint64_t>(res.get());
    ASSERT_EQ(got_size, rr.size);
    {
      const auto f = frame.download(got_size);
      got_hash = xxh3_64(f.data(), f.size());
    }
    EXPECT_EQ(got_hash, want_hash) << "GPU frame differs from the CPU reference's";
    // Decode on the device into the (reused) source buffer, poisoned first.
    ASSERT_TRUE(src.fill(0xCD));
    DeviceBuffer dws(cuda::decompress_workspace_size(bytes));
    ASSERT_EQ(cuda::decompress_async(frame.get(), got_size, src.get(), bytes, {}, reinterpret_cast<uint64_t*>(res.get()),
                                     reinterpret_cast<Status*>(res.get() + 8), dws.get(), dws.size(), 0),
              Status::ok);
    SZ_CUDA_OK(cudaDeviceSynchronize());
    ASSERT_EQ(download_value<Status>(res.get() + 8), Status::ok);
    ASSERT_EQ(download_value<uint64_t>(res.get()), bytes);
    const auto back = src.download(bytes);
    EXPECT_EQ(xxh3_64(back.data(), bytes), in_hash) << "decoded bytes differ from the input";
  }
}

}  // namespace
}  // namespace splitzip::test
