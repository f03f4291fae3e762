// SPDX-License-Identifier: Apache-2.0
// Byte-for-byte checks of a backend against the reference oracle, through
// the whole-frame Backend interface (compress_frame / decompress_frame) and
// reference_compress / reference_decompress.
#include "tests/support/backend_check.h"

#include <string>
#include <vector>

#include "backends/registry.h"
#include "core/reference.h"
#include "tests/support/compare.h"
#include "tests/support/golden_cases.h"
#include "tests/support/test_data.h"

namespace splitzip::test {

namespace {

CompressArgs compress_args(Dtype dtype, const void* src, uint64_t n, const CompressOptions& opts) {
  CompressArgs a;
  a.dtype = dtype;
  a.src = src;
  a.n = n;
  a.codebook = opts.codebook;
  a.chunk_log2 = opts.chunk_log2;
  a.checksum = opts.checksum;
  a.threads = opts.threads;
  a.mode = opts.mode;
  return a;
}

const char* name_of(Status s) { return status_name(s); }

// The frame of `a` (dst/capacity set by the caller) or a failure.
::testing::AssertionResult encode_with(const Backend* be, CompressArgs a, std::vector<uint8_t>* frame) {
  a.dst = frame->data();
  a.capacity = frame->size();
  const FrameOutcome o = be == nullptr ? reference_compress(a) : be->compress_frame(a);
  const char* who = be == nullptr ? "reference" : be->name();
  if (o.status != Status::ok) return ::testing::AssertionFailure() << who << " compress_frame: " << name_of(o.status);
  if (o.frame_size > frame->size())
    return ::testing::AssertionFailure() << who << " reports frame_size " << o.frame_size << " over capacity";
  frame->resize(o.frame_size);
  return ::testing::AssertionSuccess();
}

}  // namespace

std::vector<uint8_t> reference_frame(Dtype d, const std::vector<uint8_t>& in, Mode mode, bool checksum) {
  CompressOptions o;
  o.checksum = checksum;
  o.mode = mode;
  std::vector<uint8_t> out(compress_bound(d, in.size() / dtype_bytes(d)));
  const ::testing::AssertionResult r =
      encode_with(nullptr, compress_args(d, in.data(), in.size() / dtype_bytes(d), o), &out);
  EXPECT_TRUE(r);
  if (!r) out.clear();
  return out;
}

::testing::AssertionResult matches_reference(const char* backend, Dtype dtype, const void* src, uint64_t n,
                                             const CompressOptions& opts) {
  const Backend* be = find_backend(backend);
  if (be == nullptr) return ::testing::AssertionFailure() << "backend " << backend << " is not compiled in";
  if (!be->available()) return ::testing::AssertionFailure() << "backend " << backend << " is not available";
  const CompressArgs args = compress_args(dtype, src, n, opts);
  std::vector<uint8_t> a(compress_bound(dtype, n)), b(a.size());
  auto ea = encode_with(be, args, &a);
  if (!ea) return ea;
  auto eb = encode_with(nullptr, args, &b);
  if (!eb) return eb;
  auto same = bytes_equal(a, b);
  if (!same) return ::testing::AssertionFailure() << backend << " frame differs from reference: " << same.message();
  // Capacity exactly the frame size gives the same frame.
  std::vector<uint8_t> tight(b.size());
  auto et = encode_with(be, args, &tight);
  if (!et) return ::testing::AssertionFailure() << "at capacity = frame size: " << et.message();
  same = bytes_equal(tight, b);
  if (!same) return ::testing::AssertionFailure() << backend << " frame at tight capacity differs: " << same.message();

  // Cross decode: the backend reads the reference's frame and vice versa.
  const uint64_t bytes = n * dtype_bytes(dtype);
  for (const bool by_backend : {true, false}) {
    const std::vector<uint8_t>& frame = by_backend ? b : a;
    std::vector<uint8_t> out(bytes + 1, 0xA5);  // one guard byte past the output
    DecompressArgs d;
    d.src = frame.data();
    d.src_size = frame.size();
    d.dst = out.data();
    d.capacity = bytes;
    d.threads = opts.threads;
    const FrameOutcome o = by_backend ? be->decompress_frame(d) : reference_decompress(d);
    const char* who = by_backend ? backend : "reference";
    if (o.status != Status::ok)
      return ::testing::AssertionFailure() << who << " decompress_frame: " << name_of(o.status);
    if (o.decoded_size != bytes || o.frame_size != frame.size())
      return ::testing::AssertionFailure() << who << " decoded " << o.decoded_size << " bytes from "
                                           << o.frame_size << ", expected " << bytes << " from " << frame.size();
    if (out[bytes] != 0xA5) return ::testing::AssertionFailure() << who << " wrote past capacity";
    auto eq = bytes_equal(out.data(), bytes, src, bytes);
    if (!eq) return ::testing::AssertionFailure() << who << " decoded bytes differ: " << eq.message();
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult golden_cases_match(const char* backend) {
  const Backend* be = find_backend(backend);
  if (be == nullptr) return ::testing::AssertionFailure() << "backend " << backend << " is not compiled in";
  std::string err;
  const auto cases = golden_cases(&err, kGoldenV2);
  if (cases.empty()) return ::testing::AssertionFailure() << "no golden cases: " << err;
  bool ok = false;
  const auto frames = golden_frames(&ok, kGoldenV2);
  if (!ok) return ::testing::AssertionFailure() << "cannot read golden frames.txt";
  for (const auto& c : cases) {
    const GoldenFrame* expected = nullptr;
    for (const auto& f : frames)
      if (f.name == c.name) expected = &f;
    if (expected == nullptr) return ::testing::AssertionFailure() << "no committed frame for case " << c.name;
    const auto input = golden_input(c);
    Codebook cb;
    const CompressOptions o = golden_options(c, &cb);
    // The backend's own frame against the COMMITTED bytes: whole when the
    // .sz file is committed, else size and xxh64 from frames.txt.
    std::vector<uint8_t> frame(compress_bound(c.dtype, c.n));
    auto e = encode_with(be, compress_args(c.dtype, input.data(), c.n, o), &frame);
    if (!e) return ::testing::AssertionFailure() << "case " << c.name << ": " << e.message();
    bool have_sz = false;
    const auto committed = read_file(golden_sz_path(c.name, kGoldenV2), &have_sz);
    if (have_sz) {
      auto eq = bytes_equal(frame, committed);
      if (!eq)
        return ::testing::AssertionFailure() << "case " << c.name << ": " << backend << " frame differs from "
                                             << golden_sz_path(c.name) << ": " << eq.message();
    }
    if (frame.size() != expected->size || xxh64(frame.data(), frame.size()) != expected->hash)
      return ::testing::AssertionFailure() << "case " << c.name << ": " << backend << " frame size "
                                           << frame.size() << " / hash differ from frames.txt (size "
                                           << expected->size << ")";
    auto m = matches_reference(backend, c.dtype, input.data(), c.n, o);
    if (!m) return ::testing::AssertionFailure() << "case " << c.name << ": " << m.message();
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult same_decode_result(const char* backend, const void* frame, uint64_t size,
                                              uint64_t dst_capacity) {
  const Backend* be = find_backend(backend);
  if (be == nullptr) return ::testing::AssertionFailure() << "backend " << backend << " is not compiled in";
  std::vector<uint8_t> a(dst_capacity), b(dst_capacity);
  DecompressArgs d;
  d.src = frame;
  d.src_size = size;
  d.capacity = dst_capacity;
  d.dst = a.data();
  const FrameOutcome oa = be->decompress_frame(d);
  d.dst = b.data();
  const FrameOutcome ob = reference_decompress(d);
  if (oa.status != ob.status)
    return ::testing::AssertionFailure() << backend << " says " << name_of(oa.status) << ", reference says "
                                         << name_of(ob.status);
  if (oa.corrupt_block != ob.corrupt_block)
    return ::testing::AssertionFailure() << backend << " corrupt_block " << oa.corrupt_block << ", reference "
                                         << ob.corrupt_block;
  if (oa.status == Status::ok) {
    if (oa.frame_size != ob.frame_size)
      return ::testing::AssertionFailure() << "frame_size " << oa.frame_size << " vs " << ob.frame_size;
    auto eq = bytes_equal(a.data(), oa.decoded_size, b.data(), ob.decoded_size);
    if (!eq) return ::testing::AssertionFailure() << "decoded output differs: " << eq.message();
  }
  return ::testing::AssertionSuccess();
}

}  // namespace splitzip::test
