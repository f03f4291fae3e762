// SPDX-License-Identifier: Apache-2.0
// Golden vectors: every case's frame must match the committed size and
// xxh64 byte for byte, and the committed .sz files must decode to the
// generated input and re-encode to themselves. Regenerate (after an
// intentional format change only) with SPLITZIP_REGEN_GOLDEN=1; see
// tests/golden/README.md.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "backends/registry.h"
#include "splitzip/splitzip.hpp"
#include "tests/support/backend_check.h"
#include "tests/support/compare.h"
#include "tests/support/golden_cases.h"
#include "tests/support/test_data.h"

namespace splitzip {
namespace {

// Cases small enough to commit as .sz files.
constexpr uint64_t kMaxCommittedFrame = 8192;

bool regen() {
  const char* v = std::getenv("SPLITZIP_REGEN_GOLDEN");
  return v != nullptr && std::string(v) == "1";
}

std::vector<uint8_t> encode_case(const test::GoldenCase& c) {
  const auto input = test::golden_input(c);
  Codebook cb;
  CompressOptions o = test::golden_options(c, &cb);
  o.backend = "reference";
  std::vector<uint8_t> frame(compress_bound(c.dtype, c.n));
  const Result r = compress(c.dtype, input.data(), c.n, frame.data(), frame.size(), o);
  EXPECT_EQ(r.status, Status::ok) << c.name;
  frame.resize(r.size);
  return frame;
}

TEST(Golden, CasesParse) {
  std::string err;
  const auto cases = test::golden_cases(&err);
  ASSERT_FALSE(cases.empty()) << err;
  EXPECT_GE(cases.size(), 30u);
  for (size_t i = 0; i < cases.size(); ++i)
    for (size_t j = i + 1; j < cases.size(); ++j) EXPECT_NE(cases[i].name, cases[j].name);
}

TEST(Golden, FramesMatchCommittedBytes) {
  std::string err;
  const auto cases = test::golden_cases(&err);
  ASSERT_FALSE(cases.empty()) << err;
  if (regen()) {
    std::vector<test::GoldenFrame> frames;
    for (const auto& c : cases) {
      const auto f = encode_case(c);
      frames.push_back({c.name, f.size(), xxh64(f.data(), f.size())});
      if (f.size() <= kMaxCommittedFrame) {
        ASSERT_TRUE(test::write_file(test::golden_sz_path(c.name), f));
      }
    }
    const std::string text = test::format_golden_frames(frames);
    ASSERT_TRUE(test::write_file(test::golden_dir() + "/frames.txt", {text.begin(), text.end()}));
    GTEST_SKIP() << "regenerated " << frames.size() << " golden frames in " << test::golden_dir();
  }
  bool ok = false;
  const auto frames = test::golden_frames(&ok);
  ASSERT_TRUE(ok) << "cannot read " << test::golden_dir() << "/frames.txt";
  ASSERT_EQ(frames.size(), cases.size()) << "frames.txt and cases.txt disagree; regenerate?";
  for (size_t i = 0; i < cases.size(); ++i) {
    ASSERT_EQ(frames[i].name, cases[i].name);
    const auto f = encode_case(cases[i]);
    EXPECT_EQ(f.size(), frames[i].size) << cases[i].name;
    EXPECT_EQ(xxh64(f.data(), f.size()), frames[i].hash) << cases[i].name;
  }
}

TEST(Golden, CommittedSzFilesDecodeAndReencode) {
  if (regen()) GTEST_SKIP();
  const auto cases = test::golden_cases();
  int found = 0;
  for (const auto& c : cases) {
    bool ok = false;
    const auto file = test::read_file(test::golden_sz_path(c.name), &ok);
    if (!ok) continue;
    ++found;
    SCOPED_TRACE(c.name);
    const auto input = test::golden_input(c);
    FrameInfo info;
    ASSERT_EQ(frame_info(file.data(), file.size(), &info), Status::ok);
    EXPECT_EQ(info.n_elems, c.n);
    EXPECT_EQ(info.dtype, c.dtype);
    EXPECT_EQ(info.frame_size, file.size());
    std::vector<uint8_t> out(input.size());
    const Result r = decompress(file.data(), file.size(), out.data(), out.size());
    ASSERT_EQ(r.status, Status::ok) << status_name(r.status);
    EXPECT_TRUE(test::bytes_equal(out, input));
    EXPECT_TRUE(test::bytes_equal(encode_case(c), file));
  }
  EXPECT_GE(found, 5) << "expected committed .sz files in " << test::golden_dir() << "/sz";
}

// Every backend compiled into this build, byte for byte against the
// reference and the committed frames.
TEST(Golden, EveryAvailableBackendMatches) {
  if (regen()) GTEST_SKIP();
  for (size_t i = 0; i < backend_count(); ++i) {
    const char* name = backend_name(i);
    if (!backend_available(name) || !find_backend(name)->accepts(MemoryKind::host)) continue;
    EXPECT_TRUE(test::golden_cases_match(name)) << name;
  }
}

}  // namespace
}  // namespace splitzip
