// SPDX-License-Identifier: Apache-2.0
// Status, dtype and memory-kind names: stable, distinct, parseable.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "splitzip/splitzip.hpp"

namespace splitzip {
namespace {

TEST(Names, StatusNumberingIsStable) {
  EXPECT_EQ(static_cast<int>(Status::ok), 0);
  EXPECT_EQ(static_cast<int>(Status::truncated), 3);
  EXPECT_EQ(static_cast<int>(Status::bad_padding), 14);
  EXPECT_EQ(static_cast<int>(Status::checksum_mismatch), 19);
  EXPECT_EQ(static_cast<int>(Status::unknown_backend), 20);
  EXPECT_EQ(static_cast<int>(Status::internal_error), 26);
  EXPECT_EQ(static_cast<int>(Status::escape_overflow), 27);
}

TEST(Names, EveryStatusHasDistinctNameAndMessage) {
  std::set<std::string> names, messages;
  for (int i = 0; i <= 27; ++i) {
    const auto s = static_cast<Status>(i);
    const std::string name = status_name(s), msg = status_message(s);
    EXPECT_NE(name, "UNKNOWN_STATUS") << i;
    EXPECT_FALSE(msg.empty());
    names.insert(name);
    messages.insert(msg);
  }
  EXPECT_EQ(names.size(), 28u);
  EXPECT_EQ(messages.size(), 28u);
  EXPECT_STREQ(status_name(Status::bad_magic), "BAD_MAGIC");
  EXPECT_STREQ(status_name(static_cast<Status>(99)), "UNKNOWN_STATUS");
}

TEST(Names, Dtypes) {
  const Dtype all[] = {Dtype::bf16, Dtype::fp16, Dtype::fp32, Dtype::fp8_e5m2, Dtype::fp8_e4m3};
  const uint32_t bytes[] = {2, 2, 4, 1, 1};
  for (int i = 0; i < 5; ++i) {
    Dtype d{};
    ASSERT_TRUE(parse_dtype(dtype_name(all[i]), &d));
    EXPECT_EQ(d, all[i]);
    EXPECT_TRUE(dtype_valid(all[i]));
    EXPECT_EQ(dtype_bytes(all[i]), bytes[i]);
  }
  Dtype d{};
  EXPECT_FALSE(parse_dtype("float16", &d));
  EXPECT_FALSE(parse_dtype("fp8", &d));  // ambiguous: fp8_e4m3 or fp8_e5m2
  EXPECT_FALSE(parse_dtype("", &d));
  EXPECT_FALSE(parse_dtype(nullptr, &d));
  EXPECT_FALSE(dtype_valid(static_cast<Dtype>(0)));
  EXPECT_FALSE(dtype_valid(static_cast<Dtype>(6)));
  EXPECT_EQ(dtype_bytes(static_cast<Dtype>(0)), 0u);
  EXPECT_STREQ(dtype_name(static_cast<Dtype>(9)), "invalid");
}

TEST(Names, MemoryKinds) {
  EXPECT_STREQ(memory_kind_name(MemoryKind::host), "host");
  EXPECT_STREQ(memory_kind_name(MemoryKind::device), "device");
  EXPECT_STREQ(memory_kind_name(MemoryKind::managed), "managed");
  EXPECT_STREQ(memory_kind_name(MemoryKind::unknown), "unknown");
#ifndef SPLITZIP_HAVE_CUDA
  int x = 0;
  EXPECT_EQ(memory_kind_of(&x), MemoryKind::host);
#endif
}

}  // namespace
}  // namespace splitzip
