// SPDX-License-Identifier: Apache-2.0
#include "tests/support/backend_check.h"

#include <vector>

#include "tests/support/compare.h"
#include "tests/support/golden_cases.h"

namespace splitzip::test {

::testing::AssertionResult matches_reference(const char* backend, Dtype dtype, const void* src,
                                             uint64_t n, const CompressOptions& opts) {
  const uint64_t bound = compress_bound(dtype, n);
  std::vector<uint8_t> a(bound), b(bound);
  CompressOptions oa = opts, ob = opts;
  oa.backend = backend;
  ob.backend = "reference";
  const Result ra = compress(dtype, src, n, a.data(), a.size(), oa);
  const Result rb = compress(dtype, src, n, b.data(), b.size(), ob);
  if (ra.status != Status::ok)
    return ::testing::AssertionFailure() << backend << " compress: " << status_name(ra.status);
  if (rb.status != Status::ok)
    return ::testing::AssertionFailure() << "reference compress: " << status_name(rb.status);
  a.resize(ra.size);
  b.resize(rb.size);
  auto same = bytes_equal(a, b);
  if (!same) return ::testing::AssertionFailure() << backend << " frame differs from reference: " << same.message();

  const uint64_t bytes = n * dtype_bytes(dtype);
  std::vector<uint8_t> out(bytes);
  DecompressOptions d;
  for (const char* dec : {backend, "reference"}) {
    d.backend = dec;
    const std::vector<uint8_t>& frame = dec == backend ? b : a;  // cross decode
    const Result r = decompress(frame.data(), frame.size(), out.data(), out.size(), d);
    if (r.status != Status::ok)
      return ::testing::AssertionFailure() << dec << " decompress: " << status_name(r.status);
    auto eq = bytes_equal(out.data(), r.size, src, bytes);
    if (!eq) return ::testing::AssertionFailure() << dec << " decoded bytes differ: " << eq.message();
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult golden_cases_match(const char* backend) {
  std::string err;
  const auto cases = golden_cases(&err);
  if (cases.empty()) return ::testing::AssertionFailure() << "no golden cases: " << err;
  bool ok = false;
  const auto frames = golden_frames(&ok);
  if (!ok) return ::testing::AssertionFailure() << "cannot read golden frames.txt";
  for (const auto& c : cases) {
    const GoldenFrame* expected = nullptr;
    for (const auto& f : frames)
      if (f.name == c.name) expected = &f;
    if (expected == nullptr) return ::testing::AssertionFailure() << "no committed frame for case " << c.name;
    const auto input = golden_input(c);
    Codebook cb;
    CompressOptions o = golden_options(c, &cb);
    auto m = matches_reference(backend, c.dtype, input.data(), c.n, o);
    if (!m) return ::testing::AssertionFailure() << "case " << c.name << ": " << m.message();
    std::vector<uint8_t> frame(compress_bound(c.dtype, c.n));
    o.backend = backend;
    const Result r = compress(c.dtype, input.data(), c.n, frame.data(), frame.size(), o);
    if (r.status != Status::ok) return ::testing::AssertionFailure() << "case " << c.name << ": compress failed";
    if (r.size != expected->size || xxh64(frame.data(), r.size) != expected->hash)
      return ::testing::AssertionFailure() << "case " << c.name << ": frame size " << r.size
                                           << " / hash differ from frames.txt (size " << expected->size << ")";
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult same_decode_result(const char* backend, const void* frame, uint64_t size,
                                              uint64_t dst_capacity) {
  std::vector<uint8_t> a(dst_capacity), b(dst_capacity);
  DecompressOptions oa, ob;
  oa.backend = backend;
  ob.backend = "reference";
  const Result ra = decompress(frame, size, a.data(), a.size(), oa);
  const Result rb = decompress(frame, size, b.data(), b.size(), ob);
  if (ra.status != rb.status)
    return ::testing::AssertionFailure() << backend << " says " << status_name(ra.status) << ", reference says "
                                         << status_name(rb.status);
  if (ra.status == Status::ok) {
    auto eq = bytes_equal(a.data(), ra.size, b.data(), rb.size);
    if (!eq) return ::testing::AssertionFailure() << "decoded output differs: " << eq.message();
  }
  return ::testing::AssertionSuccess();
}

}  // namespace splitzip::test
