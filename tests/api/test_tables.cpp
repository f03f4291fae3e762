// SPDX-License-Identifier: Apache-2.0
// The public table-set surfaces (splitzip::TableSet, calibrate_tables, the
// options' tables, sz_tables_*): calibration on real KV, the set file round
// trip, frames that name the set and decode only with it (MISSING_TABLES
// otherwise), the batch calls with one set for every page, and the errors
// (wrong dtype, fast mode, empty or corrupt sets).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "splitzip/splitzip.h"
#include "splitzip/splitzip.hpp"

namespace splitzip {
namespace {

std::vector<uint8_t> read_file(const std::string& name) {
  std::ifstream f(std::string(SPLITZIP_DATA_DIR) + "/" + name, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

// Calibration data (layers 0-1) and data to compress (layer 3): a set is
// calibrated on other KV of the model than the frames it codes.
struct Kv {
  std::vector<uint8_t> cal0 = read_file("layer00_k.bf16"), cal1 = read_file("layer01_k.bf16");
  std::vector<uint8_t> data = read_file("layer03_k.bf16");
  uint64_t n() const { return data.size() / 2; }
};

TableSet calibrated(const Kv& kv, uint32_t count = 0) {
  const void* bufs[] = {kv.cal0.data(), kv.cal1.data()};
  const uint64_t ns[] = {kv.cal0.size() / 2, kv.cal1.size() / 2};
  TableSet t;
  EXPECT_EQ(calibrate_tables(Dtype::bf16, bufs, ns, 2, &t, count), Status::ok);
  return t;
}

std::vector<uint8_t> compress_with(const Kv& kv, const TableSet* t, uint64_t n, const uint8_t* src = nullptr) {
  CompressOptions o;
  o.mode = Mode::capacity;
  o.tables = t;
  std::vector<uint8_t> f(compress_bound(Dtype::bf16, n));
  const Result r = compress(Dtype::bf16, src ? src : kv.data.data(), n, f.data(), f.size(), o);
  EXPECT_EQ(r.status, Status::ok) << status_name(r.status);
  f.resize(r.size);
  return f;
}

TEST(TableSetApi, CalibrateAndBytesRoundTrip) {
  Kv kv;
  ASSERT_GT(kv.n(), 0u);
  const TableSet t = calibrated(kv);
  ASSERT_FALSE(t.empty());
  EXPECT_EQ(t.dtype(), Dtype::bf16);
  EXPECT_EQ(t.table_count(), kDefaultTableCount);
  EXPECT_NE(t.id(), 0u);
  std::vector<uint8_t> b(t.serialized_size());
  uint64_t w = 0;
  ASSERT_EQ(t.to_bytes(b.data(), b.size(), &w), Status::ok);
  EXPECT_EQ(w, b.size());
  EXPECT_EQ(t.to_bytes(b.data(), b.size() - 1, &w), Status::dst_too_small);
  TableSet back;
  ASSERT_EQ(TableSet::from_bytes(b.data(), b.size(), &back), Status::ok);
  EXPECT_EQ(back.id(), t.id());
  EXPECT_EQ(back.table_count(), t.table_count());
  // Deterministic: the same samples give the same set.
  EXPECT_EQ(calibrated(kv).id(), t.id());
  // Another table count is another set.
  const TableSet four = calibrated(kv, 4);
  EXPECT_EQ(four.table_count(), 4u);
  EXPECT_NE(four.id(), t.id());
}

TEST(TableSetApi, FileSaveLoad) {
  Kv kv;
  const TableSet t = calibrated(kv);
  const std::string path = ::testing::TempDir() + "tables_api_test.szct";
  ASSERT_EQ(t.save(path.c_str()), Status::ok);
  TableSet back;
  ASSERT_EQ(TableSet::load(path.c_str(), &back), Status::ok);
  EXPECT_EQ(back.id(), t.id());
  // A longer file is not a set file.
  {
    std::FILE* f = std::fopen(path.c_str(), "ab");
    ASSERT_NE(f, nullptr);
    std::fputc(0, f);
    std::fclose(f);
  }
  EXPECT_NE(TableSet::load(path.c_str(), &back), Status::ok);
  std::remove(path.c_str());
  EXPECT_EQ(TableSet::load(path.c_str(), &back), Status::io_error);
  EXPECT_EQ(TableSet().save(path.c_str()), Status::invalid_argument);
}

TEST(TableSetApi, CorruptSetBytesAreRefused) {
  Kv kv;
  const TableSet t = calibrated(kv);
  std::vector<uint8_t> b(t.serialized_size());
  uint64_t w = 0;
  ASSERT_EQ(t.to_bytes(b.data(), b.size(), &w), Status::ok);
  TableSet out;
  std::vector<uint8_t> bad = b;
  bad[20] ^= 1;  // a table byte: the id (a hash of the bytes) no longer matches
  EXPECT_EQ(TableSet::from_bytes(bad.data(), bad.size(), &out), Status::header_corrupt);
  bad = b;
  bad[0] = 'X';
  EXPECT_EQ(TableSet::from_bytes(bad.data(), bad.size(), &out), Status::bad_magic);
  EXPECT_EQ(TableSet::from_bytes(b.data(), 8, &out), Status::truncated);
  EXPECT_NE(TableSet::from_bytes(b.data(), b.size() - 1, &out), Status::ok);
  EXPECT_TRUE(out.empty());  // nothing assigned on failure
  EXPECT_EQ(TableSet::from_bytes(nullptr, 4, &out), Status::invalid_argument);
}

TEST(TableSetApi, FramesNameTheSetAndNeedIt) {
  Kv kv;
  const TableSet t = calibrated(kv);
  const uint64_t n = kv.n();
  const std::vector<uint8_t> f = compress_with(kv, &t, n);
  FrameInfo fi;
  ASSERT_EQ(frame_info(f.data(), f.size(), &fi), Status::ok);
  EXPECT_TRUE(fi.has_tables);
  EXPECT_EQ(fi.tables_id, t.id());
  EXPECT_EQ(fi.version, 3u);
  EXPECT_EQ(fi.mode, Mode::capacity);
  FrameInfo hi;  // the id is in the 64 header bytes
  ASSERT_EQ(frame_header_info(f.data(), &hi), Status::ok);
  EXPECT_EQ(hi.tables_id, t.id());

  std::vector<uint8_t> out(kv.data.size());
  DecompressOptions d;
  d.tables = &t;
  d.n_tables = 1;
  Result r = decompress(f.data(), f.size(), out.data(), out.size(), d);
  ASSERT_EQ(r.status, Status::ok) << status_name(r.status);
  EXPECT_EQ(out, kv.data);

  // Not given, or only another set: MISSING_TABLES, never wrong data.
  std::memset(out.data(), 0, out.size());
  r = decompress(f.data(), f.size(), out.data(), out.size());
  EXPECT_EQ(r.status, Status::missing_tables);
  const TableSet other = calibrated(kv, 2);
  d.tables = &other;
  EXPECT_EQ(decompress(f.data(), f.size(), out.data(), out.size(), d).status, Status::missing_tables);
  // One of several given sets.
  const TableSet both[] = {other, t};
  d.tables = both;
  d.n_tables = 2;
  r = decompress(f.data(), f.size(), out.data(), out.size(), d);
  ASSERT_EQ(r.status, Status::ok);
  EXPECT_EQ(out, kv.data);
  // A frame of the same data without the set is larger or equal and needs none.
  const std::vector<uint8_t> own = compress_with(kv, nullptr, n);
  FrameInfo oi;
  ASSERT_EQ(frame_info(own.data(), own.size(), &oi), Status::ok);
  EXPECT_FALSE(oi.has_tables);
  EXPECT_EQ(oi.version, 2u);
  EXPECT_EQ(decompress(own.data(), own.size(), out.data(), out.size()).status, Status::ok);
  // A stream of frames: decompress_frames takes the sets too.
  std::vector<uint8_t> two = f;
  two.insert(two.end(), own.begin(), own.end());
  std::vector<uint8_t> out2(2 * kv.data.size());
  d.tables = &t;
  d.n_tables = 1;
  ASSERT_EQ(decompress_frames(two.data(), two.size(), out2.data(), out2.size(), d).status, Status::ok);
  EXPECT_EQ(decompress_frames(two.data(), two.size(), out2.data(), out2.size()).status, Status::missing_tables);
}

TEST(TableSetApi, OptionErrors) {
  Kv kv;
  const TableSet t = calibrated(kv);
  std::vector<uint8_t> f(compress_bound(Dtype::fp16, kv.n()));
  CompressOptions o;
  o.tables = &t;  // mode fast: a set codes the capacity mode only
  EXPECT_EQ(compress(Dtype::bf16, kv.data.data(), kv.n(), f.data(), f.size(), o).status, Status::invalid_argument);
  o.mode = Mode::capacity;  // a bf16 set for fp16 data
  EXPECT_EQ(compress(Dtype::fp16, kv.data.data(), kv.n(), f.data(), f.size(), o).status, Status::bad_codebook);
  const TableSet empty;
  o.tables = &empty;
  EXPECT_EQ(compress(Dtype::bf16, kv.data.data(), kv.n(), f.data(), f.size(), o).status, Status::invalid_argument);
  DecompressOptions d;
  d.n_tables = 1;  // no array
  std::vector<uint8_t> out(kv.data.size());
  EXPECT_EQ(decompress(f.data(), f.size(), out.data(), out.size(), d).status, Status::invalid_argument);
  d.tables = &empty;
  EXPECT_EQ(decompress(f.data(), f.size(), out.data(), out.size(), d).status, Status::invalid_argument);
  TableSet none;
  const uint64_t zero = 0;
  const void* nothing[] = {kv.data.data()};
  EXPECT_EQ(calibrate_tables(Dtype::bf16, nothing, &zero, 1, &none), Status::invalid_argument);
  const uint64_t some = 1024;
  EXPECT_EQ(calibrate_tables(Dtype::bf16, nothing, &some, 1, &none, 3), Status::invalid_argument);
  EXPECT_EQ(calibrate_tables(Dtype::bf16, nothing, &some, 1, &none, 64), Status::invalid_argument);
  EXPECT_TRUE(none.empty());
  EXPECT_STREQ(status_name(Status::missing_tables), "MISSING_TABLES");
}

TEST(TableSetApi, BatchOneSetForEveryPage) {
  Kv kv;
  const TableSet t = calibrated(kv);
  const uint64_t page = 16384;  // 32 KiB of bf16
  const size_t count = kv.n() / page;
  ASSERT_GE(count, 2u);
  std::vector<std::vector<uint8_t>> frames(count, std::vector<uint8_t>(compress_bound(Dtype::bf16, page)));
  std::vector<CompressItem> items(count);
  for (size_t i = 0; i < count; ++i)
    items[i] = {kv.data.data() + i * page * 2, page, frames[i].data(), frames[i].size(), nullptr};
  std::vector<Result> res(count);
  CompressOptions o;
  o.mode = Mode::capacity;
  o.tables = &t;
  ASSERT_EQ(compress_batch(Dtype::bf16, items.data(), count, res.data(), o), Status::ok);
  for (size_t i = 0; i < count; ++i) {
    frames[i].resize(res[i].size);
    // Byte-identical to the single call on the page.
    EXPECT_EQ(frames[i], compress_with(kv, &t, page, kv.data.data() + i * page * 2)) << i;
  }
  std::vector<uint8_t> out(count * page * 2);
  std::vector<DecompressItem> ditems(count);
  for (size_t i = 0; i < count; ++i) ditems[i] = {frames[i].data(), frames[i].size(), out.data() + i * page * 2, page * 2};
  DecompressOptions d;
  d.tables = &t;
  d.n_tables = 1;
  ASSERT_EQ(decompress_batch(ditems.data(), count, res.data(), d), Status::ok);
  EXPECT_EQ(std::memcmp(out.data(), kv.data.data(), out.size()), 0);
  EXPECT_EQ(decompress_batch(ditems.data(), count, res.data()), Status::missing_tables);
  for (size_t i = 0; i < count; ++i) EXPECT_EQ(res[i].status, Status::missing_tables) << i;
  // A fast-mode batch with a set: every item refused, nothing written.
  o.mode = Mode::fast;
  EXPECT_EQ(compress_batch(Dtype::bf16, items.data(), count, res.data(), o), Status::invalid_argument);
}

// Pages of several layers in one call, each with its layer's set (what an
// offload store's put of a block does): item i codes with items[i].tables,
// items without one with the options' set; each frame is the bytes of a
// single call with that set. One bad item fails alone.
TEST(TableSetApi, BatchASetPerItem) {
  Kv kv;
  const TableSet a = calibrated(kv);
  TableSet b;
  {
    const void* bufs[] = {kv.cal1.data()};
    const uint64_t ns[] = {kv.cal1.size() / 2};
    ASSERT_EQ(calibrate_tables(Dtype::bf16, bufs, ns, 1, &b, 4), Status::ok);
  }
  ASSERT_NE(a.id(), b.id());
  TableSet other_dtype;
  {
    std::vector<uint8_t> h(kv.cal0.size());
    for (size_t i = 0; i + 1 < h.size(); i += 2) {  // the bf16 values as fp16 bit patterns: any fp16 data
      h[i] = kv.cal0[i];
      h[i + 1] = static_cast<uint8_t>(kv.cal0[i + 1] & 0xBF);
    }
    const void* bufs[] = {h.data()};
    const uint64_t ns[] = {h.size() / 2};
    ASSERT_EQ(calibrate_tables(Dtype::fp16, bufs, ns, 1, &other_dtype, 1), Status::ok);
  }
  const uint64_t page = 16384;
  const size_t count = kv.n() / page;
  ASSERT_GE(count, 4u);
  std::vector<std::vector<uint8_t>> frames(count, std::vector<uint8_t>(compress_bound(Dtype::bf16, page)));
  std::vector<CompressItem> items(count);
  const TableSet* item_set[3] = {&a, &b, nullptr};  // null: the options' set (b)
  for (size_t i = 0; i < count; ++i) {
    items[i] = {kv.data.data() + i * page * 2, page, frames[i].data(), frames[i].size(), nullptr};
    items[i].tables = item_set[i % 3];
  }
  CompressOptions o;
  o.mode = Mode::capacity;
  o.tables = &b;
  std::vector<Result> res(count);
  ASSERT_EQ(compress_batch(Dtype::bf16, items.data(), count, res.data(), o), Status::ok);
  for (size_t i = 0; i < count; ++i) {
    frames[i].resize(res[i].size);
    const TableSet* used = i % 3 == 0 ? &a : &b;
    EXPECT_EQ(frames[i], compress_with(kv, used, page, kv.data.data() + i * page * 2)) << i;
    FrameInfo fi;
    ASSERT_EQ(frame_info(frames[i].data(), frames[i].size(), &fi), Status::ok);
    EXPECT_EQ(fi.tables_id, used->id()) << i;
  }
  // Decoded in one call given both sets.
  std::vector<uint8_t> out(count * page * 2);
  std::vector<DecompressItem> ditems(count);
  for (size_t i = 0; i < count; ++i) ditems[i] = {frames[i].data(), frames[i].size(), out.data() + i * page * 2, page * 2};
  const TableSet both[] = {a, b};
  DecompressOptions d;
  d.tables = both;
  d.n_tables = 2;
  ASSERT_EQ(decompress_batch(ditems.data(), count, res.data(), d), Status::ok);
  EXPECT_EQ(std::memcmp(out.data(), kv.data.data(), out.size()), 0);
  // Without options' set, unset items get per-block tables.
  o.tables = nullptr;
  for (auto& f : frames) f.resize(compress_bound(Dtype::bf16, page));
  ASSERT_EQ(compress_batch(Dtype::bf16, items.data(), count, res.data(), o), Status::ok);
  for (size_t i = 0; i < count; ++i) {
    FrameInfo fi;
    ASSERT_EQ(frame_info(frames[i].data(), res[i].size, &fi), Status::ok);
    EXPECT_EQ(fi.has_tables, i % 3 != 2) << i;
  }
  // A set of another dtype fails its item only; an empty set too.
  const TableSet empty;
  items[1].tables = &other_dtype;
  items[2].tables = &empty;
  EXPECT_EQ(compress_batch(Dtype::bf16, items.data(), count, res.data(), o), Status::bad_codebook);
  EXPECT_EQ(res[0].status, Status::ok);
  EXPECT_EQ(res[1].status, Status::bad_codebook);
  EXPECT_EQ(res[2].status, Status::invalid_argument);
  EXPECT_EQ(res[3].status, Status::ok);
  // In fast mode an item's set is refused; items without one code.
  o.mode = Mode::fast;
  items[1].tables = nullptr;
  items[2].tables = nullptr;
  EXPECT_EQ(compress_batch(Dtype::bf16, items.data(), count, res.data(), o), Status::invalid_argument);
  EXPECT_EQ(res[0].status, Status::invalid_argument);
  EXPECT_EQ(res[1].status, Status::ok);
  EXPECT_EQ(res[2].status, Status::ok);
}

TEST(TableSetCApi, CalibrateCompressDecompress) {
  Kv kv;
  const void* bufs[] = {kv.cal0.data(), kv.cal1.data()};
  const uint64_t ns[] = {kv.cal0.size() / 2, kv.cal1.size() / 2};
  sz_tables* t = nullptr;
  ASSERT_EQ(sz_tables_calibrate(SZ_BF16, bufs, ns, 2, 0, &t), SZ_OK);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(sz_tables_dtype(t), SZ_BF16);
  EXPECT_EQ(sz_tables_count(t), kDefaultTableCount);
  EXPECT_EQ(sz_tables_id(t), calibrated(kv).id());  // the C++ set, the same bytes

  // Bytes into a caller buffer and back.
  std::vector<uint8_t> b(sz_tables_serialized_size(t));
  uint64_t w = 0;
  ASSERT_EQ(sz_tables_to_bytes(t, b.data(), b.size(), &w), SZ_OK);
  EXPECT_EQ(sz_tables_to_bytes(t, b.data(), 3, &w), SZ_DST_TOO_SMALL);
  EXPECT_EQ(w, 0u);
  sz_tables* t2 = nullptr;
  ASSERT_EQ(sz_tables_from_bytes(b.data(), b.size(), &t2), SZ_OK);
  EXPECT_EQ(sz_tables_id(t2), sz_tables_id(t));
  b[30] ^= 0x10;
  sz_tables* bad = reinterpret_cast<sz_tables*>(&b);  // must be overwritten with NULL
  EXPECT_EQ(sz_tables_from_bytes(b.data(), b.size(), &bad), SZ_HEADER_CORRUPT);
  EXPECT_EQ(bad, nullptr);

  const std::string path = ::testing::TempDir() + "tables_c_api_test.szct";
  ASSERT_EQ(sz_tables_save(t, path.c_str()), SZ_OK);
  sz_tables* t3 = nullptr;
  ASSERT_EQ(sz_tables_load(path.c_str(), &t3), SZ_OK);
  EXPECT_EQ(sz_tables_id(t3), sz_tables_id(t));
  std::remove(path.c_str());
  sz_tables* t4 = nullptr;
  EXPECT_EQ(sz_tables_load(path.c_str(), &t4), SZ_IO_ERROR);
  EXPECT_EQ(t4, nullptr);

  sz_compress_options co;
  std::memset(&co, 0, sizeof co);
  co.mode = SZ_MODE_CAPACITY;
  co.tables = t;
  std::vector<uint8_t> f(sz_compress_bound(SZ_BF16, kv.n()));
  sz_result r;
  ASSERT_EQ(sz_compress(SZ_BF16, kv.data.data(), kv.n(), f.data(), f.size(), &co, &r), SZ_OK);
  f.resize(r.size);
  sz_frame_info fi;
  ASSERT_EQ(sz_frame_info_read(f.data(), f.size(), &fi), SZ_OK);
  EXPECT_EQ(fi.has_tables, 1);
  EXPECT_EQ(fi.tables_id, sz_tables_id(t));

  std::vector<uint8_t> out(kv.data.size());
  EXPECT_EQ(sz_decompress(f.data(), f.size(), out.data(), out.size(), nullptr, &r), SZ_MISSING_TABLES);
  EXPECT_STREQ(sz_status_name(SZ_MISSING_TABLES), "MISSING_TABLES");
  sz_decompress_options dopt;
  std::memset(&dopt, 0, sizeof dopt);
  const sz_tables* sets[] = {t2, t3};
  dopt.tables = sets;
  dopt.n_tables = 2;
  ASSERT_EQ(sz_decompress(f.data(), f.size(), out.data(), out.size(), &dopt, &r), SZ_OK);
  EXPECT_EQ(out, kv.data);
  const sz_tables* holes[] = {nullptr};
  dopt.tables = holes;
  dopt.n_tables = 1;
  EXPECT_EQ(sz_decompress(f.data(), f.size(), out.data(), out.size(), &dopt, &r), SZ_INVALID_ARGUMENT);

  // The batch calls: one set for every item.
  sz_decompress_item di = {f.data(), f.size(), out.data(), out.size()};
  sz_status st = SZ_OK;
  dopt.tables = sets;
  EXPECT_EQ(sz_decompress_batch(&di, 1, &dopt, &st, nullptr), SZ_OK);
  dopt.n_tables = 0;
  EXPECT_EQ(sz_decompress_batch(&di, 1, &dopt, &st, nullptr), SZ_MISSING_TABLES);
  EXPECT_EQ(st, SZ_MISSING_TABLES);

  // A set per item: item 0 with t, item 1 with none (opts has none: per-block tables).
  {
    const uint64_t half = kv.n() / 2;
    std::vector<uint8_t> f0(sz_compress_bound(SZ_BF16, half)), f1(f0.size());
    sz_compress_item items[2] = {{kv.data.data(), half, f0.data(), f0.size()},
                                 {kv.data.data() + half * 2, half, f1.data(), f1.size()}};
    const sz_tables* per_item[2] = {t, nullptr};
    sz_status sts[2];
    sz_result rs[2];
    co.tables = nullptr;
    ASSERT_EQ(sz_compress_batch_tables(SZ_BF16, items, 2, per_item, &co, sts, rs), SZ_OK);
    sz_frame_info i0, i1;
    ASSERT_EQ(sz_frame_info_read(f0.data(), rs[0].size, &i0), SZ_OK);
    ASSERT_EQ(sz_frame_info_read(f1.data(), rs[1].size, &i1), SZ_OK);
    EXPECT_EQ(i0.has_tables, 1);
    EXPECT_EQ(i0.tables_id, sz_tables_id(t));
    EXPECT_EQ(i1.has_tables, 0);
    // NULL item_tables: sz_compress_batch.
    ASSERT_EQ(sz_compress_batch_tables(SZ_BF16, items, 2, nullptr, &co, sts, rs), SZ_OK);
    ASSERT_EQ(sz_frame_info_read(f0.data(), rs[0].size, &i0), SZ_OK);
    EXPECT_EQ(i0.has_tables, 0);
    co.tables = t;
  }

  // A set for the fast mode is refused.
  co.mode = SZ_MODE_FAST;
  EXPECT_EQ(sz_compress(SZ_BF16, kv.data.data(), kv.n(), f.data(), f.size(), &co, &r), SZ_INVALID_ARGUMENT);

  EXPECT_EQ(sz_tables_id(nullptr), 0u);
  EXPECT_EQ(sz_tables_serialized_size(nullptr), 0u);
  EXPECT_EQ(sz_tables_save(nullptr, path.c_str()), SZ_INVALID_ARGUMENT);
  sz_tables_free(nullptr);
  sz_tables_free(t);
  sz_tables_free(t2);
  sz_tables_free(t3);
}

}  // namespace
}  // namespace splitzip
