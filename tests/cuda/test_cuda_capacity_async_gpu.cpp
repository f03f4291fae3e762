// SPDX-License-Identifier: Apache-2.0
// Capacity mode (FORMAT.md 4.6) through the stream-ordered API on a GPU:
// compress_async / compress_batch_async with EncodeConfig::mode = capacity
// give the reference's frames, decompress_async / decompress_batch_async
// decode mode-1 frames (mixed with mode-0 ones) with no flag, malformed
// mode-1 frames give the reference's statuses, and a captured graph
// replays it. Workspaces are poisoned (no initialisation is promised).
// Skips without a device; scripts/gpu_check.sh reports these as a row.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "core/reference.h"
#include "tests/cuda/gpu_test_util.h"
#include "tests/support/backend_check.h"
#include "tests/support/compare.h"
#include "tests/support/synthetic.h"
#include "tests/support/test_data.h"

namespace splitzip::test {
namespace {

const Dtype kCapDtypes[] = {Dtype::bf16, Dtype::fp16, Dtype::fp32, Dtype::fp8_e5m2};

cuda::EncodeConfig cap_cfg(Dtype d, bool checksum) {
  cuda::EncodeConfig c;
  c.dtype = d;
  c.checksum = checksum;
  c.mode = Mode::capacity;
  return c;
}

TEST(CudaCapacityAsync, SingleCallsEqualReferenceAndRoundTrip) {
  SZ_REQUIRE_GPU();
  cudaStream_t s;
  SZ_CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  DeviceBuffer res(32);
  auto* esz = reinterpret_cast<uint64_t*>(res.get());
  auto* est = reinterpret_cast<Status*>(res.get() + 8);
  auto* dsz = reinterpret_cast<uint64_t*>(res.get() + 16);
  auto* dst_ = reinterpret_cast<Status*>(res.get() + 24);
  for (Dtype d : kCapDtypes)
    for (uint64_t n : {uint64_t{0}, uint64_t{1}, uint64_t{1000}, uint64_t{65535}, uint64_t{65536}, uint64_t{65537},
                       uint64_t{3 * 65536 + 123}})
      for (bool ck : {false, true}) {
        SCOPED_TRACE(std::string(dtype_name(d)) + " n " + std::to_string(n) + " ck " + std::to_string(ck));
        const auto in = synth::generate(n % 3 ? synth::Generator::gaussian_kv : synth::Generator::random_bits, d, n,
                                        40 + n, {});
        const uint64_t bytes = in.size(), bound = compress_bound(d, n);
        DeviceBuffer src(bytes), frame(bound), out(bytes);
        DeviceBuffer ews(cuda::compress_workspace_size(d, n)), dws(cuda::decompress_workspace_size(bytes));
        ASSERT_TRUE(src.upload(in.data(), bytes));
        ASSERT_TRUE(ews.fill(0xA5) && dws.fill(0x5A) && frame.fill(0xCD) && res.fill(0xFF));
        const Codebook unused{};
        ASSERT_EQ(cuda::compress_async(src.get(), n, frame.get(), bound, unused, cap_cfg(d, ck), esz, est, ews.get(),
                                       ews.size(), s),
                  Status::ok);
        ASSERT_EQ(cuda::decompress_async(frame.get(), bound, out.get(), bytes, {}, dsz, dst_, dws.get(), dws.size(), s),
                  Status::ok);
        SZ_CUDA_OK(cudaStreamSynchronize(s));
        ASSERT_EQ(download_value<Status>(est), Status::ok);
        const auto want = reference_frame(d, in, Mode::capacity, ck);
        ASSERT_EQ(download_value<uint64_t>(esz), want.size());
        EXPECT_TRUE(bytes_equal(frame.download(want.size()), want));
        ASSERT_EQ(download_value<Status>(dst_), Status::ok);
        EXPECT_EQ(download_value<uint64_t>(dsz), bytes);
        EXPECT_TRUE(bytes_equal(out.download(bytes), in));
      }
  cudaStreamDestroy(s);
}

// A batch encode in capacity mode, then a batch decode of its frames mixed
// with mode-0 frames of every dtype (fp8_e4m3 included).
TEST(CudaCapacityAsync, BatchesMixingModes) {
  SZ_REQUIRE_GPU();
  struct Buf {
    Dtype d;
    std::vector<uint8_t> in;
    std::vector<uint8_t> frame;  // reference frame
    Mode mode;
  };
  std::vector<Buf> bufs;
  for (Dtype d : kCapDtypes)
    for (uint64_t n : {uint64_t{1}, uint64_t{65536}, uint64_t{200001}}) {
      const auto in = synth::generate(synth::Generator::gaussian_kv, d, n, 7 + n, {});
      bufs.push_back({d, in, reference_frame(d, in, Mode::capacity, n % 2 == 0), Mode::capacity});
    }
  // Capacity-mode batch per dtype: frames equal the reference's.
  for (Dtype d : kCapDtypes) {
    std::vector<const Buf*> mine;
    for (const Buf& b : bufs)
      if (b.d == d) mine.push_back(&b);
    const uint64_t count = mine.size();
    uint64_t total = 0;
    std::vector<DeviceBuffer> srcs, dsts;
    std::vector<cuda::CompressItem> items(count);
    for (uint64_t i = 0; i < count; ++i) {
      const uint64_t n = mine[i]->in.size() / dtype_bytes(d);
      srcs.emplace_back(mine[i]->in.size());
      dsts.emplace_back(compress_bound(d, n));
      ASSERT_TRUE(srcs.back().upload(mine[i]->in.data(), mine[i]->in.size()));
      items[i] = {srcs.back().get(), dsts.back().get(), n, compress_bound(d, n), 0, 0};
      total += n;
    }
    DeviceBuffer ditems(count * sizeof(cuda::CompressItem)), res(count * 16);
    DeviceBuffer ws(cuda::compress_workspace_size(d, total, count));
    ASSERT_TRUE(ditems.upload(items.data(), ditems.size()) && ws.fill(0xA5));
    for (bool ck : {false, true}) {
      ASSERT_EQ(cuda::compress_batch_async(reinterpret_cast<cuda::CompressItem*>(ditems.get()), count, total, nullptr, 0,
                                           cap_cfg(d, ck), reinterpret_cast<uint64_t*>(res.get()),
                                           reinterpret_cast<Status*>(res.get() + 8 * count), ws.get(), ws.size(),
                                           cudaStreamPerThread),
                Status::ok);
      SZ_CUDA_OK(cudaStreamSynchronize(cudaStreamPerThread));
      const auto sizes = res.download(8 * count);
      const auto sts = res.download(4 * count, 8 * count);
      for (uint64_t i = 0; i < count; ++i) {
        Status st;
        uint64_t sz;
        std::memcpy(&st, &sts[4 * i], 4);
        std::memcpy(&sz, &sizes[8 * i], 8);
        ASSERT_EQ(st, Status::ok) << dtype_name(d) << " item " << i;
        const auto want = reference_frame(d, mine[i]->in, Mode::capacity, ck);
        ASSERT_EQ(sz, want.size());
        EXPECT_TRUE(bytes_equal(dsts[i].download(sz), want)) << dtype_name(d) << " item " << i << " ck " << ck;
      }
    }
  }
  // Mode-0 frames join the decode batch.
  for (Dtype d : {Dtype::bf16, Dtype::fp8_e4m3, Dtype::fp32}) {
    const auto in = synth::generate(synth::Generator::gaussian_kv, d, 100003, 3, {});
    bufs.push_back({d, in, reference_frame(d, in, Mode::fast, true), Mode::fast});
  }
  const uint64_t count = bufs.size();
  std::vector<DeviceBuffer> frames, outs;
  std::vector<cuda::DecompressItem> items(count);
  uint64_t total = 0;
  for (uint64_t i = 0; i < count; ++i) {
    frames.emplace_back(bufs[i].frame.size());
    outs.emplace_back(bufs[i].in.size());
    ASSERT_TRUE(frames.back().upload(bufs[i].frame.data(), bufs[i].frame.size()));
    items[i] = {frames.back().get(), bufs[i].frame.size(), outs.back().get(), bufs[i].in.size()};
    total += bufs[i].in.size();
  }
  DeviceBuffer ditems(count * sizeof(cuda::DecompressItem)), res(count * 16);
  DeviceBuffer ws(cuda::decompress_workspace_size(total, count));
  ASSERT_TRUE(ditems.upload(items.data(), ditems.size()) && ws.fill(0x5A));
  ASSERT_EQ(cuda::decompress_batch_async(reinterpret_cast<cuda::DecompressItem*>(ditems.get()), count, total, {},
                                         reinterpret_cast<uint64_t*>(res.get()),
                                         reinterpret_cast<Status*>(res.get() + 8 * count), ws.get(), ws.size(),
                                         cudaStreamPerThread),
            Status::ok);
  SZ_CUDA_OK(cudaStreamSynchronize(cudaStreamPerThread));
  const auto sizes = res.download(8 * count);
  const auto sts = res.download(4 * count, 8 * count);
  for (uint64_t i = 0; i < count; ++i) {
    Status st;
    uint64_t sz;
    std::memcpy(&st, &sts[4 * i], 4);
    std::memcpy(&sz, &sizes[8 * i], 8);
    EXPECT_EQ(st, Status::ok) << i << " " << dtype_name(bufs[i].d);
    EXPECT_EQ(sz, bufs[i].in.size()) << i;
    EXPECT_TRUE(bytes_equal(outs[i].download(bufs[i].in.size()), bufs[i].in)) << i;
  }
}

// Each golden error vector of the capacity mode between two good frames:
// the reference's status, the good frames decoded.
TEST(CudaCapacityAsync, GoldenErrorVectorsInBatches) {
  SZ_REQUIRE_GPU();
  const std::string dir = golden_dir() + "/../golden-errors/capacity";
  bool ok = false;
  const auto list = read_file(dir + "/LIST", &ok);
  ASSERT_TRUE(ok);
  const auto good_in = synth::generate(synth::Generator::gaussian_kv, Dtype::bf16, 70000, 4, {});
  const auto good = reference_frame(Dtype::bf16, good_in, Mode::capacity, true);
  std::istringstream is(std::string(list.begin(), list.end()));
  std::string name;
  while (is >> name) {
    SCOPED_TRACE(name);
    const auto bin = read_file(dir + "/" + name + ".bin", &ok);
    ASSERT_TRUE(ok);
    const auto ex = read_file(dir + "/" + name + ".expect", &ok);
    ASSERT_TRUE(ok);
    const std::string text(ex.begin(), ex.end());
    const auto at = text.find("status = ");
    ASSERT_NE(at, std::string::npos);
    const std::string want = text.substr(at + 9, text.find('\n', at) - at - 9);
    const uint64_t cap = 1 << 20;
    DeviceBuffer f0(good.size()), f1(bin.size() + 1), f2(good.size()), o0(good_in.size()), o1(cap), o2(good_in.size());
    ASSERT_TRUE(f0.upload(good.data(), good.size()) && f1.upload(bin.data(), bin.size()) &&
                f2.upload(good.data(), good.size()));
    const cuda::DecompressItem items[3] = {{f0.get(), good.size(), o0.get(), good_in.size()},
                                           {f1.get(), bin.size(), o1.get(), cap},
                                           {f2.get(), good.size(), o2.get(), good_in.size()}};
    const uint64_t total = 2 * good_in.size() + cap;
    DeviceBuffer ditems(sizeof items), res(48), ws(cuda::decompress_workspace_size(total, 3));
    ASSERT_TRUE(ditems.upload(items, sizeof items));
    ASSERT_EQ(cuda::decompress_batch_async(reinterpret_cast<cuda::DecompressItem*>(ditems.get()), 3, total, {},
                                           reinterpret_cast<uint64_t*>(res.get()),
                                           reinterpret_cast<Status*>(res.get() + 24), ws.get(), ws.size(),
                                           cudaStreamPerThread),
              Status::ok);
    SZ_CUDA_OK(cudaStreamSynchronize(cudaStreamPerThread));
    const auto sts = res.download(12, 24);
    Status st[3];
    std::memcpy(st, sts.data(), 12);
    EXPECT_EQ(status_name(st[1]), want);
    EXPECT_EQ(st[0], Status::ok);
    EXPECT_EQ(st[2], Status::ok);
    EXPECT_TRUE(bytes_equal(o2.download(good_in.size()), good_in));
  }
}

// Capacity encode + decode captured into a graph and replayed on new
// inputs: no host synchronisation inside the calls.
TEST(CudaCapacityAsync, GraphCaptureAndReplay) {
  SZ_REQUIRE_GPU();
  const Dtype d = Dtype::bf16;
  const uint64_t n = 300007, bytes = n * 2, bound = compress_bound(d, n);
  DeviceBuffer src(bytes), frame(bound), out(bytes), res(32);
  DeviceBuffer ews(cuda::compress_workspace_size(d, n)), dws(cuda::decompress_workspace_size(bytes));
  auto* esz = reinterpret_cast<uint64_t*>(res.get());
  auto* est = reinterpret_cast<Status*>(res.get() + 8);
  auto* dsz = reinterpret_cast<uint64_t*>(res.get() + 16);
  auto* dstat = reinterpret_cast<Status*>(res.get() + 24);
  ASSERT_EQ(cuda::warm_up(), Status::ok);
  cudaStream_t s;
  SZ_CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraph_t graph;
  SZ_CUDA_OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  const Status a = cuda::compress_async(src.get(), n, frame.get(), bound, Codebook{}, cap_cfg(d, true), esz, est,
                                        ews.get(), ews.size(), s);
  const Status b = cuda::decompress_async(frame.get(), bound, out.get(), bytes, {}, dsz, dstat, dws.get(), dws.size(), s);
  SZ_CUDA_OK(cudaStreamEndCapture(s, &graph));
  ASSERT_EQ(a, Status::ok);
  ASSERT_EQ(b, Status::ok);
  cudaGraphExec_t exec;
  SZ_CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
  for (uint64_t round = 0; round < 3; ++round) {
    // Round 2: random bits, the stored fallback.
    const auto g = round == 2 ? synth::Generator::random_bits : synth::Generator::gaussian_kv;
    const auto data = synth::generate(g, d, n, 60 + round, {});
    ASSERT_TRUE(src.upload(data.data(), bytes));
    SZ_CUDA_OK(cudaGraphLaunch(exec, s));
    SZ_CUDA_OK(cudaStreamSynchronize(s));
    ASSERT_EQ(download_value<Status>(est), Status::ok) << round;
    ASSERT_EQ(download_value<Status>(dstat), Status::ok) << round;
    const auto want = reference_frame(d, data, Mode::capacity, true);
    EXPECT_TRUE(bytes_equal(frame.download(download_value<uint64_t>(esz)), want)) << round;
    EXPECT_TRUE(bytes_equal(out.download(bytes), data)) << round;
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(s);
}

// Small sizes of the async capacity path for compute-sanitizer: single and
// batch encode, a mixed batch decode, one corrupt mode-1 frame.
TEST(CudaSanitize, CapacityAsyncSmall) {
  SZ_REQUIRE_GPU();
  for (Dtype d : kCapDtypes) {
    const uint64_t n = 70001, bytes = n * dtype_bytes(d), bound = compress_bound(d, n);
    const auto in = synth::generate(synth::Generator::gaussian_kv, d, n, 5, {});
    DeviceBuffer src(bytes), frame(bound), out(bytes), res(32);
    DeviceBuffer ews(cuda::compress_workspace_size(d, n)), dws(cuda::decompress_workspace_size(bytes));
    ASSERT_TRUE(src.upload(in.data(), bytes));
    auto* sz = reinterpret_cast<uint64_t*>(res.get());
    auto* st = reinterpret_cast<Status*>(res.get() + 8);
    ASSERT_EQ(cuda::compress_async(src.get(), n, frame.get(), bound, Codebook{}, cap_cfg(d, true), sz, st, ews.get(),
                                   ews.size(), cudaStreamPerThread),
              Status::ok);
    SZ_CUDA_OK(cudaStreamSynchronize(cudaStreamPerThread));
    ASSERT_EQ(download_value<Status>(st), Status::ok);
    const uint64_t fsize = download_value<uint64_t>(sz);
    ASSERT_EQ(cuda::decompress_async(frame.get(), fsize, out.get(), bytes, {}, sz, st, dws.get(), dws.size(),
                                     cudaStreamPerThread),
              Status::ok);
    SZ_CUDA_OK(cudaStreamSynchronize(cudaStreamPerThread));
    EXPECT_EQ(download_value<Status>(st), Status::ok);
    EXPECT_TRUE(bytes_equal(out.download(bytes), in));
    auto f = frame.download(fsize);
    f[fsize - 40] ^= 0x11;
    ASSERT_TRUE(frame.upload(f.data(), fsize));
    ASSERT_EQ(cuda::decompress_async(frame.get(), fsize, out.get(), bytes, {}, sz, st, dws.get(), dws.size(),
                                     cudaStreamPerThread),
              Status::ok);
    SZ_CUDA_OK(cudaStreamSynchronize(cudaStreamPerThread));
    std::vector<uint8_t> ro(bytes);
    DecompressArgs a;
    a.src = f.data();
    a.src_size = fsize;
    a.dst = ro.data();
    a.capacity = bytes;
    a.verify_checksum = true;
    EXPECT_EQ(download_value<Status>(st), reference_decompress(a).status) << dtype_name(d);
  }
}

// A throughput line of scripts/gpu_check.sh (step 3b): the async API on
// device buffers, device time by CUDA events around each call (no host
// sync inside), best of 5 after a warm-up, 64 Mi bf16 elements
// (Gaussian KV-like), checksum on. Prints; asserts only the round trip.
TEST(CudaCapacityBench, AsyncApiThroughput) {
  SZ_REQUIRE_GPU();
  const Dtype d = Dtype::bf16;
  const uint64_t n = uint64_t{1} << 26, bytes = n * 2, bound = compress_bound(d, n);
  const auto in = synth::generate(synth::Generator::gaussian_kv, d, n, 1, {});
  DeviceBuffer src(bytes), frame(bound), out(bytes), res(32);
  DeviceBuffer ews(cuda::compress_workspace_size(d, n)), dws(cuda::decompress_workspace_size(bytes));
  ASSERT_TRUE(src.upload(in.data(), bytes));
  auto* esz = reinterpret_cast<uint64_t*>(res.get());
  auto* est = reinterpret_cast<Status*>(res.get() + 8);
  auto* dsz = reinterpret_cast<uint64_t*>(res.get() + 16);
  auto* dstat = reinterpret_cast<Status*>(res.get() + 24);
  const Codebook cb = synth::body_codebook(d);
  cudaStream_t s;
  SZ_CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t e0, e1, e2;
  SZ_CUDA_OK(cudaEventCreate(&e0));
  SZ_CUDA_OK(cudaEventCreate(&e1));
  SZ_CUDA_OK(cudaEventCreate(&e2));
  for (Mode mode : {Mode::fast, Mode::capacity}) {
    cuda::EncodeConfig cfg;
    cfg.checksum = true;
    cfg.mode = mode;
    float enc = 1e30f, dec = 1e30f;
    uint64_t size = 0;
    for (int it = 0; it < 6; ++it) {  // the first is a warm-up
      SZ_CUDA_OK(cudaEventRecord(e0, s));
      ASSERT_EQ(cuda::compress_async(src.get(), n, frame.get(), bound, cb, cfg, esz, est, ews.get(), ews.size(), s),
                Status::ok);
      SZ_CUDA_OK(cudaEventRecord(e1, s));
      ASSERT_EQ(cuda::decompress_async(frame.get(), bound, out.get(), bytes, {}, dsz, dstat, dws.get(), dws.size(), s),
                Status::ok);
      SZ_CUDA_OK(cudaEventRecord(e2, s));
      SZ_CUDA_OK(cudaStreamSynchronize(s));
      ASSERT_EQ(download_value<Status>(est), Status::ok);
      ASSERT_EQ(download_value<Status>(dstat), Status::ok);
      size = download_value<uint64_t>(esz);
      if (it == 0) continue;
      float a = 0, b = 0;
      SZ_CUDA_OK(cudaEventElapsedTime(&a, e0, e1));
      SZ_CUDA_OK(cudaEventElapsedTime(&b, e1, e2));
      enc = std::min(enc, a);
      dec = std::min(dec, b);
    }
    EXPECT_TRUE(out.download(bytes) == in);
    std::printf("capacity_throughput mode=%s bf16 n=%llu ratio=%.4f encode=%.2f GB/s decode=%.2f GB/s (async API, device buffers, checksum, event timing)\n",
                mode == Mode::capacity ? "capacity" : "fast", static_cast<unsigned long long>(n),
                static_cast<double>(bytes) / static_cast<double>(size), bytes / (enc * 1e-3) / 1e9,
                bytes / (dec * 1e-3) / 1e9);
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  cudaEventDestroy(e2);
  cudaStreamDestroy(s);
}

}  // namespace
}  // namespace splitzip::test
