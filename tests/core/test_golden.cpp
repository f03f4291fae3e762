// SPDX-License-Identifier: Apache-2.0
// Golden vectors (tests/golden/README.md).
//
// v2 (tests/golden/v2): what encoders write now. Every target's encode
// output against the committed bytes at several thread counts is the
// conformance suite's (tests/conformance, ConformanceGolden); here the
// committed .sz files decode on every backend. The case list must cover every dtype x {coded,
// stored} x checksum {on, off} x size class {0, 1, small, multi-chunk,
// multi-block} the format allows (ManifestCoverage).
//
// v1 (tests/golden/v1): frames of format v1, kept as committed. Every
// backend must still decode each to the same bytes. The larger v1 frames are
// committed as size + xxh64 only; they are rebuilt from the v2 frame of the
// same case (same streams, v1 header, no block checks), checked against the
// committed hash, then decoded.
//
// Regenerate v2 (after an intentional format change only) with
// SPLITZIP_REGEN_GOLDEN=1; v1 is never regenerated.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "backends/registry.h"
#include "core/header.h"
#include "splitzip/splitzip.hpp"
#include "tests/support/backend_check.h"
#include "tests/support/compare.h"
#include "tests/support/golden_cases.h"
#include "tests/support/test_data.h"

namespace splitzip {
namespace {

using test::kGoldenV1;
using test::kGoldenV2;

// v2 frames up to this size are committed whole (sz/NAME.sz).
constexpr uint64_t kMaxCommittedFrame = 16384;

bool regen() {
  const char* v = std::getenv("SPLITZIP_REGEN_GOLDEN");
  return v != nullptr && std::string(v) == "1";
}

std::vector<const char*> host_backends() {
  std::vector<const char*> out;
  for (size_t i = 0; i < backend_count(); ++i) {
    const char* name = backend_name(i);
    if (backend_available(name) && find_backend(name)->accepts(MemoryKind::host)) out.push_back(name);
  }
  return out;
}

std::vector<uint8_t> encode_case(const test::GoldenCase& c, const char* backend = "reference") {
  const auto input = test::golden_input(c);
  Codebook cb;
  CompressOptions o = test::golden_options(c, &cb);
  o.backend = backend;
  std::vector<uint8_t> frame(compress_bound(c.dtype, c.n));
  const Result r = compress(c.dtype, input.data(), c.n, frame.data(), frame.size(), o);
  EXPECT_EQ(r.status, Status::ok) << c.name;
  frame.resize(r.size);
  return frame;
}

// Decodes `frame` on every host backend and requires `input` back.
void decodes_everywhere(const std::vector<uint8_t>& frame, const std::vector<uint8_t>& input) {
  for (const char* be : host_backends()) {
    std::vector<uint8_t> out(input.size() + 1, 0xA5);
    DecompressOptions d;
    d.backend = be;
    const Result r = decompress(frame.data(), frame.size(), out.data(), input.size(), d);
    ASSERT_EQ(r.status, Status::ok) << be << ": " << status_name(r.status);
    EXPECT_EQ(r.size, input.size()) << be;
    EXPECT_EQ(out[input.size()], 0xA5) << be << " wrote past the output";
    out.resize(input.size());
    EXPECT_TRUE(test::bytes_equal(out, input)) << be;
  }
}

TEST(Golden, CasesParse) {
  for (const char* set : {kGoldenV1, kGoldenV2}) {
    std::string err;
    const auto cases = test::golden_cases(&err, set);
    ASSERT_FALSE(cases.empty()) << set << ": " << err;
    EXPECT_GE(cases.size(), 30u) << set;
    std::set<std::string> names;
    for (const auto& c : cases) EXPECT_TRUE(names.insert(c.name).second) << set << " duplicate " << c.name;
    bool ok = false;
    const auto frames = test::golden_frames(&ok, set);
    if (regen() && std::string(set) == kGoldenV2) continue;
    ASSERT_TRUE(ok) << set << "/frames.txt";
    ASSERT_EQ(frames.size(), cases.size()) << set << ": frames.txt and cases.txt disagree";
    for (size_t i = 0; i < cases.size(); ++i) EXPECT_EQ(frames[i].name, cases[i].name) << set;
  }
  // Every v1 case is also a v2 case (same inputs, frames of each version).
  std::set<std::string> v2;
  for (const auto& c : test::golden_cases(nullptr, kGoldenV2)) v2.insert(c.name);
  for (const auto& c : test::golden_cases(nullptr, kGoldenV1)) EXPECT_TRUE(v2.count(c.name)) << c.name;
}

// The generator of the committed v2 files (reference backend); a no-op
// unless SPLITZIP_REGEN_GOLDEN=1.
TEST(Golden, RegenerateV2) {
  if (!regen()) GTEST_SKIP() << "set SPLITZIP_REGEN_GOLDEN=1 to rewrite tests/golden/v2";
  std::string err;
  const auto cases = test::golden_cases(&err, kGoldenV2);
  ASSERT_FALSE(cases.empty()) << err;
  std::vector<test::GoldenFrame> frames;
  for (const auto& c : cases) {
    const auto f = encode_case(c);
    frames.push_back({c.name, f.size(), xxh64(f.data(), f.size())});
    if (f.size() <= kMaxCommittedFrame) {
      ASSERT_TRUE(test::write_file(test::golden_sz_path(c.name, kGoldenV2), f));
    }
  }
  const std::string text = test::format_golden_frames(frames, kGoldenV2);
  ASSERT_TRUE(test::write_file(test::golden_set_dir(kGoldenV2) + "/frames.txt", {text.begin(), text.end()}));
  std::printf("regenerated %zu golden frames in %s\n", frames.size(), test::golden_set_dir(kGoldenV2).c_str());
}

TEST(Golden, CommittedV2SzFilesDecodeOnEveryBackend) {
  if (regen()) GTEST_SKIP();
  const auto cases = test::golden_cases(nullptr, kGoldenV2);
  int found = 0;
  for (const auto& c : cases) {
    bool ok = false;
    const auto file = test::read_file(test::golden_sz_path(c.name, kGoldenV2), &ok);
    if (!ok) continue;
    ++found;
    SCOPED_TRACE(c.name);
    FrameInfo info;
    ASSERT_EQ(frame_info(file.data(), file.size(), &info), Status::ok);
    EXPECT_EQ(info.version, 2u);
    EXPECT_EQ(info.n_elems, c.n);
    EXPECT_EQ(info.dtype, c.dtype);
    EXPECT_EQ(info.has_checksum, c.checksum);
    EXPECT_EQ(info.frame_size, file.size());
    decodes_everywhere(file, test::golden_input(c));
  }
  EXPECT_GE(found, 40) << "expected committed .sz files in " << test::golden_set_dir(kGoldenV2) << "/sz";
}

TEST(Golden, CommittedV1SzFilesDecodeOnEveryBackend) {
  const auto cases = test::golden_cases(nullptr, kGoldenV1);
  bool ok = false;
  const auto frames = test::golden_frames(&ok, kGoldenV1);
  ASSERT_TRUE(ok);
  int found = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& c = cases[i];
    const auto file = test::read_file(test::golden_sz_path(c.name, kGoldenV1), &ok);
    if (!ok) continue;
    ++found;
    SCOPED_TRACE(c.name);
    // The committed bytes are the ones frames.txt pins.
    EXPECT_EQ(file.size(), frames[i].size);
    EXPECT_EQ(xxh64(file.data(), file.size()), frames[i].hash);
    FrameInfo info;
    ASSERT_EQ(frame_info(file.data(), file.size(), &info), Status::ok);
    EXPECT_EQ(info.version, 1u);
    EXPECT_EQ(info.checksum_blocks, 0u);
    EXPECT_EQ(info.checksum_block_log2, 0u);
    decodes_everywhere(file, test::golden_input(c));
  }
  EXPECT_EQ(found, 18) << "the 18 committed v1 frames in " << test::golden_set_dir(kGoldenV1) << "/sz";
}

// The v1 frame of a case from its v2 frame: the same streams 1-6 (or stored
// bytes) at the same offsets, no stream 7, a v1 header (XXH64 check, XXH64
// content checksum of the whole input, bytes 49-51 zero). The stored/coded
// choice is the same in both versions: stream 7 adds the same bytes to both
// sizes of rule 4.4.
std::vector<uint8_t> to_v1(const std::vector<uint8_t>& v2, const std::vector<uint8_t>& input) {
  FrameHeader h;
  EXPECT_EQ(parse_header(v2.data(), v2.size(), &h), Status::ok);
  h.version = 1;
  h.block_log2 = 0;
  h.mode = 0;
  h.frame_size = frame_size_of(h);  // n_checks() is 0 for v1
  h.content_checksum = h.has_checksum() ? xxh64(input.data(), input.size()) : 0;
  std::vector<uint8_t> v1(v2.begin(), v2.begin() + static_cast<std::ptrdiff_t>(h.frame_size));
  write_header(h, v1.data());
  return v1;
}

TEST(Golden, EveryV1FrameDecodesOnEveryBackend) {
  if (regen()) GTEST_SKIP();
  const auto cases = test::golden_cases(nullptr, kGoldenV1);
  bool ok = false;
  const auto frames = test::golden_frames(&ok, kGoldenV1);
  ASSERT_TRUE(ok);
  ASSERT_EQ(frames.size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& c = cases[i];
    SCOPED_TRACE(c.name);
    const auto input = test::golden_input(c);
    const auto v1 = to_v1(encode_case(c), input);
    // Exactly the committed v1 frame...
    ASSERT_EQ(v1.size(), frames[i].size);
    ASSERT_EQ(xxh64(v1.data(), v1.size()), frames[i].hash);
    // ...which every backend decodes to the input.
    decodes_everywhere(v1, input);
  }
}

// Size classes of the coverage grid.
const char* size_class(const test::GoldenCase& c) {
  const uint64_t bytes = c.n * dtype_bytes(c.dtype);
  if (c.n == 0) return "0";
  if (c.n == 1) return "1";
  if (bytes > kChecksumBlockBytes) return "multi-block";
  if (c.n > (uint64_t{1} << c.chunk_log2)) return "multi-chunk";
  return "small";
}

// Every dtype x {coded, stored} x checksum {on, off} x size class {0, 1,
// small, multi-chunk, multi-block} has a v2 case, except where the format
// itself rules coded out (no escape budget at any chunk size: n = 0, 1).
TEST(Golden, ManifestCoverage) {
  if (regen()) GTEST_SKIP();
  const auto cases = test::golden_cases(nullptr, kGoldenV2);
  bool ok = false;
  const auto frames = test::golden_frames(&ok, kGoldenV2);
  ASSERT_TRUE(ok);
  ASSERT_EQ(frames.size(), cases.size());
  std::map<std::string, uint64_t> present;  // key -> an n of that class
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& c = cases[i];
    // Coded or stored: from the committed frame size (the two sizes differ).
    const uint64_t checks = c.checksum ? checksum_blocks(c.n * dtype_bytes(c.dtype)) : 0;
    const uint64_t stored = stored_frame_size(static_cast<uint32_t>(c.dtype), c.n, checks);
    const bool is_stored = frames[i].size == stored;
    if (!is_stored) {
      ASSERT_LT(frames[i].size, stored) << c.name;
    }
    const std::string key = std::string(dtype_name(c.dtype)) + " " + (is_stored ? "stored" : "coded") + " " +
                            (c.checksum ? "checksum" : "no-checksum") + " " + size_class(c);
    present[key] = c.n;
  }
  int required = 0;
  for (Dtype d : {Dtype::bf16, Dtype::fp16, Dtype::fp32, Dtype::fp8_e5m2}) {
    for (const char* cls : {"0", "1", "small", "multi-chunk", "multi-block"}) {
      for (const char* kind : {"coded", "stored"}) {
        for (const char* ck : {"checksum", "no-checksum"}) {
          const std::string key = std::string(dtype_name(d)) + " " + kind + " " + ck + " " + cls;
          const std::string cls_s = cls;
          if (std::string(kind) == "coded" && (cls_s == "0" || cls_s == "1")) {
            const uint64_t n = cls_s == "0" ? 0 : 1;
            bool possible = false;
            for (uint32_t cl = kMinChunkLog2; cl <= kMaxChunkLog2; ++cl)
              for (uint64_t checks : {uint64_t{0}, checksum_blocks(n * dtype_bytes(d))})
                possible |= escape_budget(static_cast<uint32_t>(d), n, cl, ~uint64_t{0}, checks) != kNoEscapeBudget;
            ASSERT_FALSE(possible) << key << " is possible: add a case";
            continue;
          }
          ++required;
          EXPECT_TRUE(present.count(key)) << "no golden case for " << key;
        }
      }
    }
  }
  EXPECT_EQ(required, 4 * (2 + 2 + 4 + 4 + 4));
}

}  // namespace
}  // namespace splitzip
