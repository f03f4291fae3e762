// SPDX-License-Identifier: Apache-2.0
// The C API: the C99 self-test plus checks of the C/C++ mapping.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/synthetic.h"
#include "splitzip/splitzip.h"
#include "splitzip/splitzip.hpp"

extern "C" int splitzip_c_api_selftest(void);

namespace splitzip {
namespace {

TEST(CApi, C99SelfTest) { EXPECT_EQ(splitzip_c_api_selftest(), 0) << "failing line in c_api_check.c"; }

TEST(CApi, StatusNumbersMatchCpp) {
  for (int i = 0; i <= 26; ++i)
    EXPECT_STREQ(sz_status_name(static_cast<sz_status>(i)), status_name(static_cast<Status>(i)));
  EXPECT_EQ(SZ_CHECKSUM_MISMATCH, static_cast<int>(Status::checksum_mismatch));
  EXPECT_EQ(SZ_UNSUPPORTED_MEMORY, static_cast<int>(Status::unsupported_memory));
}

TEST(CApi, SameBytesAsCpp) {
  const uint64_t n = 20000;
  for (Dtype d : {Dtype::bf16, Dtype::fp16, Dtype::fp32, Dtype::fp8_e5m2}) {
    const auto in = synth::generate(synth::Generator::gaussian_kv, d, n, 3);
    std::vector<uint8_t> a(compress_bound(d, n)), b(a.size());
    const Result r = compress(d, in.data(), n, a.data(), a.size());
    sz_result cr{};
    ASSERT_EQ(sz_compress(static_cast<sz_dtype>(d), in.data(), n, b.data(), b.size(), nullptr, &cr), SZ_OK);
    ASSERT_EQ(cr.size, r.size);
    EXPECT_EQ(std::memcmp(a.data(), b.data(), r.size), 0);
    EXPECT_STREQ(cr.backend, r.backend);
  }
}

TEST(CApi, NullOutputsAndFiles) {
  EXPECT_EQ(sz_frame_info_read(nullptr, 0, nullptr), SZ_INVALID_ARGUMENT);
  EXPECT_EQ(sz_calibrate(SZ_BF16, nullptr, nullptr, 0, nullptr), SZ_INVALID_ARGUMENT);
  EXPECT_EQ(sz_validate_codebook(nullptr), SZ_INVALID_ARGUMENT);
  EXPECT_EQ(sz_codebook_load(nullptr, nullptr), SZ_INVALID_ARGUMENT);
  EXPECT_EQ(sz_compress(SZ_BF16, nullptr, 0, nullptr, 0, nullptr, nullptr), SZ_INVALID_ARGUMENT);
  sz_codebook cb{};
  cb.dtype = SZ_FP16;
  cb.count = 2;
  cb.entries[0] = 15;
  cb.entries[1] = 14;
  const std::string path = ::testing::TempDir() + "/splitzip_c_api.szcb";
  ASSERT_EQ(sz_codebook_save(&cb, path.c_str()), SZ_OK);
  sz_codebook back{};
  ASSERT_EQ(sz_codebook_load(path.c_str(), &back), SZ_OK);
  EXPECT_EQ(back.dtype, SZ_FP16);
  EXPECT_EQ(back.count, 2);
  EXPECT_EQ(back.entries[1], 14);
  // The C++ loader reads the same file.
  Codebook cpp;
  ASSERT_EQ(codebook_load(path.c_str(), &cpp), Status::ok);
  EXPECT_EQ(cpp.dtype, Dtype::fp16);
  std::remove(path.c_str());
  EXPECT_EQ(sz_codebook_load(path.c_str(), &back), SZ_IO_ERROR);
}

}  // namespace
}  // namespace splitzip
