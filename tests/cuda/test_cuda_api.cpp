// SPDX-License-Identifier: Apache-2.0
// The stream-ordered API (splitzip_cuda.hpp) on a GPU: single and batched
// compress/decompress against the reference, on-device header validation,
// calibration, checksums, a large buffer, and CUDA-graph capture.
#include <cstring>
#include <vector>

#include "core/synthetic.h"
#include "tests/cuda/gpu_test_util.h"
#include "tests/support/compare.h"
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
  cudaMemcpy(hs.data(), sizes.get(), count * 8, cudaMemcpyDeviceToHost);
  cudaMemcpy(hst.data(), statuses.get(), count * 4, cudaMemcpyDeviceToHost);
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
  cudaMemcpy(dst_h.data(), dst_.get(), dcount * 4, cudaMemcpyDeviceToHost);
  for (size_t k = 0; k < dcount; ++k) {
    ASSERT_EQ(dst_h[k], Status::ok) << k;
    const std::vector<uint8_t>& want = k < inputs.size() ? inputs[k] : f32.bytes;
    EXPECT_TRUE(bytes_equal(outs[k].download(want.size()), want)) << k;
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
    cudaMemcpy(hc.data(), c, 256 * 8, cudaMemcpyDeviceToHost);
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
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(s);
}

}  // namespace
}  // namespace splitzip::test
