// SPDX-License-Identifier: Apache-2.0
// GPU-produced frames committed under tests/golden/gpu, verified byte for
// byte against the CPU reference encoder on every run (no GPU needed).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "tests/cuda/golden_manifest.h"
#include "tests/cuda/kernel_emulator.h"
#include "tests/support/test_data.h"

namespace splitzip::test {
namespace {

namespace fs = std::filesystem;

TEST(GpuGolden, CommittedFramesMatchCpuReference) {
  const std::string dir = golden_dir() + "/gpu";
  uint64_t verified = 0;
  std::vector<std::string> failures;
  if (!verify_gpu_golden(dir, &verified, &failures)) {
    GTEST_SKIP() << "0 GPU frames verified: " << dir
                 << "/MANIFEST.txt does not exist yet (scripts/gpu_check.sh writes it on a GPU machine; "
                    "see tests/golden/gpu/README.md)";
  }
  for (const std::string& f : failures) ADD_FAILURE() << f;
  ASSERT_TRUE(failures.empty());
  RecordProperty("gpu_frames_verified", static_cast<int>(verified));
  std::cout << "[ GPU golden ] " << verified << " GPU-produced frames verified against the CPU reference\n";
  if (verified == 0) GTEST_SKIP() << "0 GPU frames verified: MANIFEST.txt lists no frames";
}

// The case list covers every dtype x form (coded / stored) x checksum
// (off / on), and every dtype x size class (empty, a partial 16-element
// group, within one 32768-element tile, several tiles), so the GPU golden
// frames pin every path of the kernels. The form of each case is the CPU
// reference's (the GPU must produce the same frame).
TEST(GpuGolden, ManifestCoversEveryDtypeModeAndSizeClass) {
  const Dtype dtypes[] = {Dtype::bf16, Dtype::fp16, Dtype::fp32, Dtype::fp8_e5m2, Dtype::fp8_e4m3};
  auto size_class = [](uint64_t n) -> std::string {
    if (n == 0) return "empty";
    if (n < 16) return "partial-group";
    if (n <= 32768) return "one-tile";
    return "multi-tile";
  };
  std::set<std::string> have;
  for (GpuGoldenCase c : gpu_golden_cases()) {
    std::string err;
    const std::vector<uint8_t> input = gpu_golden_input(c, &err);
    ASSERT_EQ(input.size(), c.n * dtype_bytes(c.dtype)) << err;
    ASSERT_TRUE(resolve_codebook(&c, input, &err)) << err;
    std::vector<uint8_t> frame(compress_bound(c.dtype, c.n));
    CompressOptions o;
    o.backend = "reference";
    o.codebook = &c.codebook;
    o.chunk_log2 = c.chunk_log2;
    o.checksum = c.checksum;
    const Result r = compress(c.dtype, input.data(), c.n, frame.data(), frame.size(), o);
    ASSERT_EQ(r.status, Status::ok) << c.name;
    FrameInfo info;
    ASSERT_EQ(frame_info(frame.data(), r.size, &info), Status::ok) << c.name;
    const std::string d = dtype_name(c.dtype);
    have.insert(d + (info.stored ? " stored" : " coded") + (c.checksum ? " checksum" : " plain"));
    have.insert(d + " " + size_class(c.n));
  }
  std::vector<std::string> missing;
  for (Dtype dt : dtypes) {
    const std::string d = dtype_name(dt);
    for (const char* form : {" coded", " stored"})
      for (const char* ck : {" plain", " checksum"})
        if (!have.count(d + form + ck)) missing.push_back(d + form + ck);
    for (const char* sc : {"empty", "partial-group", "one-tile", "multi-tile"})
      if (!have.count(d + " " + sc)) missing.push_back(d + " " + sc);
  }
  std::string list;
  for (const auto& m : missing) list += "\n  " + m;
  EXPECT_TRUE(missing.empty()) << "gpu_golden_cases() misses:" << list;
}

// The verifier itself, on frames the kernels' logic produces on the CPU:
// accepts matching frames, names a changed byte, rejects bad manifests.
TEST(GpuGolden, VerifierAcceptsEmulatedFramesAndCatchesChanges) {
  const fs::path dir = fs::temp_directory_path() / ("splitzip_gpu_golden_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string manifest = "# emulated frames\n";
  std::vector<std::string> files;
  uint64_t written = 0;
  for (GpuGoldenCase c : gpu_golden_cases()) {
    if (c.n > 70000) continue;
    std::string err;
    const std::vector<uint8_t> input = gpu_golden_input(c, &err);
    ASSERT_EQ(input.size(), c.n * dtype_bytes(c.dtype)) << err;
    ASSERT_TRUE(resolve_codebook(&c, input, &err)) << err;
    std::vector<uint8_t> frame(compress_bound(c.dtype, c.n));
    const EmuResult r = emulate_compress(c.dtype, input.data(), c.n, frame.data(), frame.size(), c.codebook,
                                         c.chunk_log2, c.checksum);
    ASSERT_EQ(r.status, Status::ok) << c.name;
    frame.resize(r.size);
    ASSERT_TRUE(write_file((dir / c.frame_file).string(), frame));
    manifest += manifest_line(c) + "\n";
    files.push_back(c.frame_file);
    ++written;
  }
  ASSERT_GT(written, 20u);
  ASSERT_TRUE(write_file((dir / "MANIFEST.txt").string(), std::vector<uint8_t>(manifest.begin(), manifest.end())));

  uint64_t verified = 0;
  std::vector<std::string> failures;
  ASSERT_TRUE(verify_gpu_golden(dir.string(), &verified, &failures));
  for (const auto& f : failures) ADD_FAILURE() << f;
  EXPECT_EQ(verified, written);

  // One changed byte in one frame: that frame fails, the others still pass.
  bool ok = false;
  std::vector<uint8_t> f = read_file((dir / files[3]).string(), &ok);
  ASSERT_TRUE(ok);
  f[f.size() / 2] ^= 0x10;
  ASSERT_TRUE(write_file((dir / files[3]).string(), f));
  ASSERT_TRUE(verify_gpu_golden(dir.string(), &verified, &failures));
  EXPECT_EQ(verified, written - 1);
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_NE(failures[0].find(files[3].substr(0, files[3].size() - 4)), std::string::npos) << failures[0];

  const std::string bad = "x bf16 notanumber 10 0 00:1 data:a@0 x.szf\n";
  ASSERT_TRUE(write_file((dir / "MANIFEST.txt").string(), std::vector<uint8_t>(bad.begin(), bad.end())));
  ASSERT_TRUE(verify_gpu_golden(dir.string(), &verified, &failures));
  EXPECT_EQ(verified, 0u);
  EXPECT_EQ(failures.size(), 1u);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace splitzip::test
