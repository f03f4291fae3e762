// SPDX-License-Identifier: Apache-2.0
// Batched pages (compress_batch / decompress_batch, C++ and C): every item's
// frame is byte-identical to the single call on that item, for each backend
// and thread count; per-item statuses; the batch status is the first failure.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "tests/support/synthetic.h"
#ifdef SPLITZIP_HAVE_CPU
#include "cpu/cpu_targets.h"
#endif
#include "splitzip/splitzip.h"
#include "splitzip/splitzip.hpp"

namespace splitzip {
namespace {

// Pages of assorted sizes (0, 1, odd, several 64 KiB blocks) cut from one
// synthetic KV buffer, so each page has its own statistics.
struct Pages {
  Dtype dtype;
  std::vector<uint8_t> data;
  std::vector<uint64_t> off, n;  // element offset and count of each page
};

Pages make_pages(Dtype d, size_t count) {
  Pages p{d, {}, {}, {}};
  const uint64_t sizes[] = {8192, 0, 1, 8191, 100, 40000, 8192, 65};
  uint64_t total = 0;
  for (size_t i = 0; i < count; ++i) {
    p.off.push_back(total);
    p.n.push_back(sizes[i % 8]);
    total += sizes[i % 8];
  }
  synth::Params sp;
  sp.escape_rate = 0.002;
  p.data = synth::generate(synth::Generator::heavy_tail, d, total, 77, sp);
  return p;
}

// Host backends compiled into this build.
std::vector<const char*> host_backends() {
  std::vector<const char*> out;
  for (const char* b : {"cpu", "kokkos", "reference"})
    if (backend_available(b)) out.push_back(b);
  return out;
}

std::vector<std::vector<uint8_t>> single_frames(const Pages& p, const CompressOptions& o) {
  std::vector<std::vector<uint8_t>> out;
  const uint32_t eb = dtype_bytes(p.dtype);
  for (size_t i = 0; i < p.n.size(); ++i) {
    std::vector<uint8_t> f(compress_bound(p.dtype, p.n[i]));
    CompressOptions ref = o;
    ref.backend = "reference";
    const Result r = compress(p.dtype, p.data.data() + p.off[i] * eb, p.n[i], f.data(), f.size(), ref);
    EXPECT_TRUE(r.ok()) << status_name(r.status);
    f.resize(r.size);
    out.push_back(f);
  }
  return out;
}

void compress_matches_single_calls() {
  for (Dtype d : {Dtype::bf16, Dtype::fp16, Dtype::fp32, Dtype::fp8_e5m2}) {
    const Pages p = make_pages(d, 37);
    const uint32_t eb = dtype_bytes(d);
    const void* bufs[1] = {p.data.data()};
    const uint64_t ns[1] = {p.data.size() / eb};
    Codebook cb;
    ASSERT_EQ(calibrate(d, bufs, ns, 1, &cb), Status::ok);
    // Capacity mode too: its pages run inside the batch's parallel region
    // (each with one thread), so nothing in it may assume a team of its own.
    for (Mode mode : {Mode::fast, Mode::capacity})
    for (const Codebook* book : {static_cast<const Codebook*>(nullptr), static_cast<const Codebook*>(&cb)}) {
      if (mode == Mode::capacity && book) continue;  // the codebook is not used there
      for (bool checksum : {false, true}) {
        CompressOptions o;
        o.codebook = book;
        o.checksum = checksum;
        o.mode = mode;
        const auto want = single_frames(p, o);
        for (const char* backend : host_backends()) {
          for (int threads : {0, 1, 2, 3}) {
            SCOPED_TRACE(std::string(dtype_name(d)) + " " + backend + " threads " + std::to_string(threads) +
                         (book ? " calibrated" : " dynamic") + (checksum ? " checksum" : "") +
                         (mode == Mode::capacity ? " capacity" : " fast"));
            o.backend = backend;
            o.threads = threads;
            const size_t count = p.n.size();
            std::vector<std::vector<uint8_t>> frames(count);
            std::vector<CompressItem> items(count);
            for (size_t i = 0; i < count; ++i) {
              frames[i].assign(compress_bound(d, p.n[i]), 0xEE);
              items[i] = {p.data.data() + p.off[i] * eb, p.n[i], frames[i].data(), frames[i].size()};
            }
            std::vector<Result> res(count);
            ASSERT_EQ(compress_batch(d, items.data(), count, res.data(), o), Status::ok);
            for (size_t i = 0; i < count; ++i) {
              ASSERT_TRUE(res[i].ok()) << i;
              EXPECT_STREQ(res[i].backend, backend);
              ASSERT_EQ(res[i].size, want[i].size()) << i;
              ASSERT_EQ(0, std::memcmp(frames[i].data(), want[i].data(), want[i].size())) << "page " << i;
            }
            // And back, into one contiguous buffer page by page.
            std::vector<uint8_t> back(p.data.size(), 0xEE);
            std::vector<DecompressItem> ditems(count);
            for (size_t i = 0; i < count; ++i)
              ditems[i] = {frames[i].data(), res[i].size, back.data() + p.off[i] * eb, p.n[i] * eb};
            DecompressOptions dopt;
            dopt.backend = backend;
            dopt.threads = threads;
            std::vector<Result> dres(count);
            ASSERT_EQ(decompress_batch(ditems.data(), count, dres.data(), dopt), Status::ok);
            for (size_t i = 0; i < count; ++i) EXPECT_EQ(dres[i].size, p.n[i] * eb);
            EXPECT_EQ(back, p.data);
          }
        }
      }
    }
  }
}

TEST(Batch, CompressMatchesSingleCallsAndRoundTrips) { compress_matches_single_calls(); }

#ifdef SPLITZIP_HAVE_CPU
// A batch past the stream threshold writes its frames with non-temporal
// stores (the threshold lowered so a small batch takes that path).
TEST(Batch, StreamingBatchMatchesSingleCalls) {
  cpu::set_stream_min_bytes(1);
  compress_matches_single_calls();
  cpu::set_stream_min_bytes(0);
}
#endif

// Pages of one shape (one dtype and size, one codebook or each its own, no
// checksum: the usual KV batch) take the CPU backend's page path. Every page must come out as a
// single call writes it: odd sizes (zero gaps before stream 4), two kernel
// steps (40000 elements), a page past its escape budget (stored), a
// destination too small, frames 8 bytes apart (every other one not 16-byte
// aligned), with and without non-temporal stores.
void same_shape_pages_match() {
  for (Dtype d : {Dtype::bf16, Dtype::fp16, Dtype::fp32, Dtype::fp8_e5m2}) {
    for (uint64_t n : {8192u, 8191u, 1001u, 40000u}) {
      const size_t count = 9;
      const uint32_t eb = dtype_bytes(d);
      synth::Params sp;
      sp.escape_rate = 0.002;
      std::vector<uint8_t> data = synth::generate(synth::Generator::heavy_tail, d, n * count, 91, sp);
      uint32_t x = 12345;  // page 4: every exponent, so most are escapes
      for (uint64_t b = 4 * n * eb; b < 5 * n * eb; ++b) {
        x = x * 1103515245u + 12345u;
        data[b] = static_cast<uint8_t>(x >> 16);
      }
      const void* bufs[1] = {data.data()};
      const uint64_t ns[1] = {n * 4};  // pages 0-3: the codebook of the KV-like pages
      Codebook cb;
      ASSERT_EQ(calibrate(d, bufs, ns, 1, &cb), Status::ok);
      for (const Codebook* book : {static_cast<const Codebook*>(&cb), static_cast<const Codebook*>(nullptr)}) {
        const uint64_t bound = compress_bound(d, n);
        const uint64_t small = 40;  // page 6: too small for any frame
        CompressOptions ref;
        ref.backend = "reference";
        ref.codebook = book;
        ref.checksum = false;
        std::vector<Result> want(count);
        std::vector<std::vector<uint8_t>> want_frames(count);
        for (size_t i = 0; i < count; ++i) {
          want_frames[i].assign(bound, 0);
          want[i] = compress(d, data.data() + i * n * eb, n, want_frames[i].data(), i == 6 ? small : bound, ref);
        }
        ASSERT_EQ(want[6].status, Status::dst_too_small);
        FrameInfo info;
        ASSERT_EQ(frame_info(want_frames[4].data(), want[4].size, &info), Status::ok);
        ASSERT_TRUE(info.stored);  // the page path's fallback is taken
        ASSERT_EQ(frame_info(want_frames[0].data(), want[0].size, &info), Status::ok);
        ASSERT_FALSE(info.stored);
        for (int threads : {1, 2}) {
          for (uint64_t stream_min : {uint64_t{1}, uint64_t{0}}) {
#ifdef SPLITZIP_HAVE_CPU
            cpu::set_stream_min_bytes(stream_min);
#endif
            SCOPED_TRACE(std::string(dtype_name(d)) + " n " + std::to_string(n) + " threads " +
                         std::to_string(threads) + (stream_min ? " streamed" : "") +
                         (book ? " calibrated" : " dynamic"));
            const uint64_t stride = bound + 8;
            std::vector<uint8_t> packed(stride * count + 16, 0xEE);
            std::vector<CompressItem> items(count);
            for (size_t i = 0; i < count; ++i)
              items[i] = {data.data() + i * n * eb, n, packed.data() + i * stride, i == 6 ? small : bound};
            CompressOptions o = ref;
            o.backend = "cpu";
            o.threads = threads;
            std::vector<Result> res(count);
            EXPECT_EQ(compress_batch(d, items.data(), count, res.data(), o), Status::dst_too_small);
            for (size_t i = 0; i < count; ++i) {
              ASSERT_EQ(res[i].status, want[i].status) << "page " << i;
              if (!want[i].ok()) continue;
              ASSERT_EQ(res[i].size, want[i].size) << "page " << i;
              EXPECT_EQ(0, std::memcmp(packed.data() + i * stride, want_frames[i].data(), want[i].size))
                  << "page " << i;
            }
          }
        }
      }
#ifdef SPLITZIP_HAVE_CPU
      cpu::set_stream_min_bytes(0);
#endif
    }
  }
}

TEST(Batch, SameShapePagesMatchSingleCalls) { same_shape_pages_match(); }

TEST(Batch, PerItemErrors) {
  const Pages p = make_pages(Dtype::bf16, 8);
  const size_t count = p.n.size();
  std::vector<std::vector<uint8_t>> frames(count);
  std::vector<CompressItem> items(count);
  for (size_t i = 0; i < count; ++i) {
    frames[i].resize(compress_bound(Dtype::bf16, p.n[i]));
    items[i] = {p.data.data() + p.off[i] * 2, p.n[i], frames[i].data(), frames[i].size()};
  }
  items[3].dst_capacity = 10;      // too small for any frame
  items[5].src = nullptr;          // n > 0 without data
  for (const char* backend : host_backends()) {
    for (int threads : {1, 2}) {
      CompressOptions o;
      o.backend = backend;
      o.threads = threads;
      o.checksum = true;
      std::vector<Result> res(count);
      EXPECT_EQ(compress_batch(Dtype::bf16, items.data(), count, res.data(), o), Status::dst_too_small);
      for (size_t i = 0; i < count; ++i) {
        const Status want = i == 3 ? Status::dst_too_small : i == 5 ? Status::invalid_argument : Status::ok;
        EXPECT_EQ(res[i].status, want) << i;
        if (i != 3 && i != 5) EXPECT_GT(res[i].size, 0u);
      }
      // Decode: a corrupt page, a bad magic, a short destination; the others decode.
      std::vector<uint8_t> f2 = frames[2], f4 = frames[4];
      f2[64] ^= 1;  // a residual bit: the block check fails
      f4[0] = 0;
      std::vector<uint8_t> back(p.data.size());
      std::vector<DecompressItem> d(count);
      for (size_t i = 0; i < count; ++i)
        d[i] = {frames[i].data(), res[i].size, back.data() + p.off[i] * 2, p.n[i] * 2};
      d[2].src = f2.data();
      d[4].src = f4.data();
      d[3] = d[0];  // no frame of its own: decode page 0 again into page 0's place
      d[5] = d[0];
      d[6].dst_capacity = 1;
      DecompressOptions dopt;
      dopt.backend = backend;
      dopt.threads = threads;
      std::vector<Result> dres(count);
      EXPECT_EQ(decompress_batch(d.data(), count, dres.data(), dopt), Status::checksum_mismatch);
      EXPECT_EQ(dres[2].status, Status::checksum_mismatch);
      EXPECT_EQ(dres[2].corrupt_block, 0u);
      EXPECT_EQ(dres[4].status, Status::bad_magic);
      EXPECT_EQ(dres[6].status, Status::dst_too_small);
      for (size_t i : {0, 1, 7}) {
        EXPECT_EQ(dres[i].status, Status::ok) << i;
        EXPECT_EQ(0, std::memcmp(back.data() + p.off[i] * 2, p.data.data() + p.off[i] * 2, p.n[i] * 2));
      }
      // max_output_bytes bounds each item.
      dopt.max_output_bytes = 1000;
      std::vector<DecompressItem> two = {d[0], d[7]};  // 8192 and 65 elements
      std::vector<Result> r2(2);
      EXPECT_EQ(decompress_batch(two.data(), 2, r2.data(), dopt), Status::limit_exceeded);
      EXPECT_EQ(r2[0].status, Status::limit_exceeded);
      EXPECT_EQ(r2[1].status, Status::ok);
    }
  }
}

TEST(Batch, WholeBatchArguments) {
  Result r;
  CompressItem ci;
  DecompressItem di;
  EXPECT_EQ(compress_batch(Dtype::bf16, nullptr, 0, nullptr), Status::ok);
  EXPECT_EQ(decompress_batch(nullptr, 0, nullptr), Status::ok);
  EXPECT_EQ(compress_batch(Dtype::bf16, nullptr, 1, &r), Status::invalid_argument);
  EXPECT_EQ(compress_batch(Dtype::bf16, &ci, 1, nullptr), Status::invalid_argument);
  EXPECT_EQ(decompress_batch(nullptr, 1, &r), Status::invalid_argument);
  EXPECT_EQ(decompress_batch(&di, 1, nullptr), Status::invalid_argument);
  std::vector<uint16_t> x(100, 0x3F80);
  std::vector<uint8_t> f(compress_bound(Dtype::bf16, x.size()));
  CompressItem items[2] = {{x.data(), x.size(), f.data(), f.size()}, {x.data(), x.size(), f.data(), f.size()}};
  Result res[2];
  CompressOptions o;
  o.backend = "bogus";
  EXPECT_EQ(compress_batch(Dtype::bf16, items, 2, res, o), Status::unknown_backend);
  EXPECT_EQ(res[1].status, Status::unknown_backend);
  o.backend = nullptr;
  EXPECT_EQ(compress_batch(static_cast<Dtype>(9), items, 2, res, o), Status::invalid_argument);
  o.chunk_log2 = 16;
  EXPECT_EQ(compress_batch(Dtype::bf16, items, 2, res, o), Status::invalid_argument);
  Codebook wrong;
  wrong.dtype = Dtype::fp16;
  wrong.count = 1;
  o.chunk_log2 = kDefaultChunkLog2;
  o.codebook = &wrong;
  EXPECT_EQ(compress_batch(Dtype::bf16, items, 2, res, o), Status::bad_codebook);
  // The shared codebook is checked once per batch, but each item still
  // reports its own argument error ahead of it, as a single call would.
  items[1].src = nullptr;
  EXPECT_EQ(compress_batch(Dtype::bf16, items, 2, res, o), Status::bad_codebook);
  EXPECT_EQ(res[0].status, Status::bad_codebook);
  EXPECT_EQ(res[1].status, Status::invalid_argument);
  EXPECT_EQ(compress(Dtype::bf16, nullptr, x.size(), f.data(), f.size(), o).status, Status::invalid_argument);
}

TEST(Batch, CApi) {
  const Pages p = make_pages(Dtype::bf16, 16);
  const size_t count = p.n.size();
  std::vector<std::vector<uint8_t>> frames(count);
  std::vector<sz_compress_item> items(count);
  for (size_t i = 0; i < count; ++i) {
    frames[i].resize(sz_compress_bound(SZ_BF16, p.n[i]));
    items[i] = {p.data.data() + p.off[i] * 2, p.n[i], frames[i].data(), frames[i].size()};
  }
  CompressOptions cpp;
  cpp.checksum = true;
  const auto want = single_frames(p, cpp);
  sz_compress_options o;
  std::memset(&o, 0, sizeof o);
  o.no_checksum = 0;  // the default: checksum on
  o.threads = 2;
  std::vector<sz_status> st(count, SZ_INTERNAL_ERROR);
  std::vector<sz_result> res(count);
  ASSERT_EQ(sz_compress_batch(SZ_BF16, items.data(), count, &o, st.data(), res.data()), SZ_OK);
  for (size_t i = 0; i < count; ++i) {
    ASSERT_EQ(st[i], SZ_OK);
    ASSERT_EQ(res[i].size, want[i].size());
    EXPECT_EQ(0, std::memcmp(frames[i].data(), want[i].data(), want[i].size())) << i;
  }
  std::vector<uint8_t> back(p.data.size());
  std::vector<sz_decompress_item> d(count);
  for (size_t i = 0; i < count; ++i) d[i] = {frames[i].data(), res[i].size, back.data() + p.off[i] * 2, p.n[i] * 2};
  frames[8][64] ^= 1;  // page 8: 8192 elements
  ASSERT_EQ(sz_decompress_batch(d.data(), count, nullptr, st.data(), res.data()), SZ_CHECKSUM_MISMATCH);
  for (size_t i = 0; i < count; ++i) EXPECT_EQ(st[i], i == 8 ? SZ_CHECKSUM_MISMATCH : SZ_OK) << i;
  EXPECT_EQ(res[8].corrupt_block, 0u);
  EXPECT_EQ(res[0].size, p.n[0] * 2);
  EXPECT_EQ(0, std::memcmp(back.data(), p.data.data(), p.off[8] * 2));
  // Skipping the checksum, NULL outputs, and whole-call errors.
  sz_decompress_options dopt;
  std::memset(&dopt, 0, sizeof dopt);
  dopt.skip_checksum = 1;
  EXPECT_EQ(sz_decompress_batch(d.data(), count, &dopt, nullptr, nullptr), SZ_OK);
  EXPECT_EQ(sz_decompress_batch(nullptr, 3, nullptr, nullptr, nullptr), SZ_INVALID_ARGUMENT);
  EXPECT_EQ(sz_compress_batch(SZ_BF16, nullptr, 0, nullptr, nullptr, nullptr), SZ_OK);
  sz_codebook bad;
  std::memset(&bad, 0, sizeof bad);
  bad.dtype = 42;
  o.codebook = &bad;
  EXPECT_EQ(sz_compress_batch(SZ_BF16, items.data(), count, &o, st.data(), nullptr), SZ_BAD_CODEBOOK);
  EXPECT_EQ(st[count - 1], SZ_BAD_CODEBOOK);
}

// Tensor descriptors: an item's own (C++), else the batch's
// (CompressOptions::tensor, C opts->tensor), recorded as compress() records it.
TEST(Batch, TensorDescriptors) {
  const Pages p = make_pages(Dtype::bf16, 8);
  const size_t count = p.n.size();
  std::vector<TensorDesc> td(count);
  std::vector<std::vector<uint8_t>> frames(count);
  std::vector<CompressItem> items(count);
  for (size_t i = 0; i < count; ++i) {
    td[i].rank = 2;
    td[i].dims[0] = 1;
    td[i].dims[1] = p.n[i];
    td[i].total_elems = p.n[i];
    td[i].origin = TensorOrigin::numpy;
    frames[i].resize(compress_bound(Dtype::bf16, p.n[i]) + tensor_desc_size(td[i]));
    items[i] = {p.data.data() + p.off[i] * 2, p.n[i], frames[i].data(), frames[i].size(),
                i % 2 ? &td[i] : nullptr};
  }
  std::vector<Result> res(count);
  CompressOptions o;
  o.checksum = true;
  ASSERT_EQ(compress_batch(Dtype::bf16, items.data(), count, res.data(), o), Status::ok);
  for (size_t i = 0; i < count; ++i) {
    CompressOptions one = o;
    one.tensor = i % 2 ? &td[i] : nullptr;
    std::vector<uint8_t> want(frames[i].size());
    const Result r = compress(Dtype::bf16, items[i].src, p.n[i], want.data(), want.size(), one);
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(res[i].size, r.size) << i;
    EXPECT_EQ(0, std::memcmp(frames[i].data(), want.data(), r.size)) << i;
    FrameInfo fi;
    ASSERT_EQ(frame_info(frames[i].data(), res[i].size, &fi), Status::ok);
    EXPECT_EQ(fi.has_tensor, i % 2 == 1) << i;
  }
  // An item's descriptor of the wrong size fails that item alone.
  td[1].total_elems = p.n[1] - 1;
  td[1].dims[1] = p.n[1] - 1;
  EXPECT_EQ(compress_batch(Dtype::bf16, items.data(), count, res.data(), o), Status::invalid_argument);
  EXPECT_EQ(res[1].status, Status::invalid_argument);
  EXPECT_EQ(res[0].status, Status::ok);
  // C: one descriptor for the whole batch (pages of one shape).
  sz_tensor_desc ct;
  std::memset(&ct, 0, sizeof ct);
  ct.dtype = SZ_BF16;
  ct.rank = 2;
  ct.dims[0] = 2;
  ct.dims[1] = 4096;
  ct.total_elems = 8192;
  ct.origin = 1;
  std::vector<sz_compress_item> citems;
  std::vector<std::vector<uint8_t>> cframes;
  for (size_t i = 0; i < count; ++i)
    if (p.n[i] == 8192) cframes.emplace_back(sz_compress_bound(SZ_BF16, 8192) + sz_tensor_desc_size(&ct));
  size_t k = 0;
  for (size_t i = 0; i < count; ++i)
    if (p.n[i] == 8192) {
      citems.push_back({p.data.data() + p.off[i] * 2, 8192, cframes[k].data(), cframes[k].size()});
      ++k;
    }
  ASSERT_GE(citems.size(), 2u);
  sz_compress_options copt;
  std::memset(&copt, 0, sizeof copt);
  copt.tensor = &ct;
  std::vector<sz_status> st(citems.size());
  std::vector<sz_result> cres(citems.size());
  ASSERT_EQ(sz_compress_batch(SZ_BF16, citems.data(), citems.size(), &copt, st.data(), cres.data()), SZ_OK);
  for (size_t i = 0; i < citems.size(); ++i) {
    std::vector<uint8_t> want(cframes[i].size());
    sz_result r;
    ASSERT_EQ(sz_compress(SZ_BF16, citems[i].src, 8192, want.data(), want.size(), &copt, &r), SZ_OK);
    ASSERT_EQ(cres[i].size, r.size);
    EXPECT_EQ(0, std::memcmp(cframes[i].data(), want.data(), r.size)) << i;
    sz_tensor_desc back;
    int present = 0;
    ASSERT_EQ(sz_read_tensor_desc(cframes[i].data(), cres[i].size, &back, &present), SZ_OK);
    EXPECT_EQ(present, 1);
    EXPECT_EQ(back.dims[0], 2u);
  }
}

}  // namespace
}  // namespace splitzip
