// SPDX-License-Identifier: Apache-2.0
// Many threads compressing and decompressing at once, sharing codebooks,
// inputs and frames (all const). Meant for TSan (scripts/sanitize.sh): the
// library's first use (backend availability, dispatch) happens inside the
// threads, not before them. Every thread's bytes must equal a sequential run.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "test_data.h"

namespace szrel {
namespace {

using splitzip::Codebook;
using splitzip::Dtype;
using splitzip::Status;

constexpr int kThreads = 8;
constexpr int kRounds = 2;
constexpr uint64_t kElems = 1u << 16;

struct Job {
  Dtype dtype;
  const std::vector<uint8_t>* data;
  const Codebook* codebook;  // shared by every thread; null: dynamic
  bool checksum;
  const char* backend;       // null: dispatch
  int threads;
};

struct Inputs {
  std::vector<uint8_t> bf16_k, bf16_v, fp32, fp16, fp8;
  Codebook cb_bf16, cb_fp32, cb_fp16, cb_fp8;
  std::vector<std::string> backends;  // every registered name, available or not
};

std::vector<uint8_t> head(const std::vector<uint8_t>& v, uint64_t bytes) {
  return std::vector<uint8_t>(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(std::min<uint64_t>(bytes, v.size())));
}

// Built before the threads start but without touching backends, so the
// first backend query happens concurrently.
Inputs& inputs() {
  static Inputs in = [] {
    Inputs x;
    x.bf16_k = head(load_sample("layer01_k.bf16"), 2 * kElems);
    x.bf16_v = head(load_sample("layer03_v.bf16"), 2 * kElems);
    x.fp32 = head(load_sample("layer02_k.f32"), 4 * kElems);
    x.fp16 = make_values(Dtype::fp16, kElems, 1, [](uint64_t, Rng& r) {
      const uint64_t v = r.next() % 100;
      return v < 90 ? 10 + static_cast<uint32_t>(v % 8) : static_cast<uint32_t>(v % 32);
    });
    x.fp8 = make_values(Dtype::fp8_e5m2, kElems, 2, [](uint64_t i, Rng& r) {
      return static_cast<uint32_t>((i / 4096) + r.next() % 12) % 32;
    });
    return x;
  }();
  return in;
}

// Shared codebooks: one calibration over both bf16 tensors, one per other
// dtype. Calibration and the registry's names touch no backend, so the first
// availability check and dispatch happen inside the threads.
std::vector<Job> build_jobs(Inputs& x) {
  const void* bufs[2] = {x.bf16_k.data(), x.bf16_v.data()};
  const uint64_t ns[2] = {x.bf16_k.size() / 2, x.bf16_v.size() / 2};
  EXPECT_EQ(splitzip::calibrate(Dtype::bf16, bufs, ns, 2, &x.cb_bf16), Status::ok);
  auto one = [](Dtype d, const std::vector<uint8_t>& v, Codebook* cb) {
    splitzip::Histogram h(d);
    h.add(v.data(), v.size() / splitzip::dtype_bytes(d));
    *cb = h.codebook();
  };
  one(Dtype::fp32, x.fp32, &x.cb_fp32);
  one(Dtype::fp16, x.fp16, &x.cb_fp16);
  one(Dtype::fp8_e5m2, x.fp8, &x.cb_fp8);

  x.backends.clear();
  for (size_t i = 0; i < splitzip::backend_count(); ++i) x.backends.emplace_back(splitzip::backend_name(i));
  std::vector<const char*> names = {nullptr};
  for (const auto& b : x.backends) names.push_back(b.c_str());
  std::vector<Job> jobs;
  for (const char* b : names) {
    // 0: backend default (one thread at this size); 3: an OpenMP team per call.
    for (int t : {1, 0, 3}) {
      jobs.push_back({Dtype::bf16, &x.bf16_k, &x.cb_bf16, true, b, t});
      jobs.push_back({Dtype::bf16, &x.bf16_v, &x.cb_bf16, false, b, t});
      jobs.push_back({Dtype::bf16, &x.bf16_k, nullptr, false, b, t});
      jobs.push_back({Dtype::fp32, &x.fp32, &x.cb_fp32, true, b, t});
      jobs.push_back({Dtype::fp16, &x.fp16, &x.cb_fp16, false, b, t});
      jobs.push_back({Dtype::fp8_e5m2, &x.fp8, &x.cb_fp8, true, b, t});
      jobs.push_back({Dtype::fp8_e5m2, &x.fp8, nullptr, true, b, t});
    }
  }
  return jobs;
}

// A forced backend that cannot run here answers the same in every thread.
bool unavailable(Status s) { return s == Status::backend_unavailable || s == Status::unsupported_memory; }

std::vector<uint8_t> compress_job(const Job& j, Status* s) {
  const uint64_t n = j.data->size() / splitzip::dtype_bytes(j.dtype);
  std::vector<uint8_t> out(splitzip::compress_bound(j.dtype, n));
  splitzip::CompressOptions o;
  o.codebook = j.codebook;
  o.checksum = j.checksum;
  o.backend = j.backend;
  o.threads = j.threads;
  const splitzip::Result r = splitzip::compress(j.dtype, j.data->data(), n, out.data(), out.size(), o);
  *s = r.status;
  out.resize(r.ok() ? r.size : 0);
  return out;
}

// A start line for all threads, so their first calls overlap.
class StartLine {
 public:
  explicit StartLine(int n) : waiting_(n) {}
  void arrive_and_wait() {
    std::unique_lock<std::mutex> lock(m_);
    if (--waiting_ == 0) cv_.notify_all();
    else cv_.wait(lock, [this] { return waiting_ == 0; });
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  int waiting_;
};

TEST(ReliabilityConcurrency, ThreadsShareCodebooksAndMatchSequential) {
  Inputs& x = inputs();
  ASSERT_FALSE(x.bf16_k.empty()) << "sample data missing under " << SPLITZIP_DATA_DIR;
  ASSERT_FALSE(x.fp32.empty());

  const std::vector<Job> jobs = build_jobs(x);
  const size_t n_jobs = jobs.size();
  std::vector<std::vector<std::vector<uint8_t>>> frames(kThreads);
  std::vector<std::vector<Status>> statuses(kThreads);
  std::vector<std::string> errors(kThreads);
  std::atomic<uint64_t> decoded{0};
  StartLine start(kThreads);

  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t) {
    pool.emplace_back([&, t] {
      start.arrive_and_wait();
      // Concurrent first use of the registry and of the static tables.
      for (size_t i = 0; i < splitzip::backend_count(); ++i) (void)splitzip::backend_available(splitzip::backend_name(i));
      (void)splitzip::status_name(Status::bad_code);
      frames[t].resize(n_jobs);
      statuses[t].assign(n_jobs, Status::internal_error);
      std::vector<uint8_t> back;
      for (int round = 0; round < kRounds; ++round) {
        for (size_t k = 0; k < n_jobs; ++k) {
          const size_t idx = (k + static_cast<size_t>(t) * 5) % n_jobs;  // different orders per thread
          const Job& j = jobs[idx];
          Status s;
          std::vector<uint8_t> f = compress_job(j, &s);
          statuses[t][idx] = s;
          if (s != Status::ok) {
            if (!unavailable(s)) errors[t] += std::string("compress ") + splitzip::status_name(s) + "\n";
            continue;
          }
          back.assign(j.data->size() + 1, 0);
          splitzip::DecompressOptions d;
          d.backend = j.backend;
          d.threads = j.threads;
          const splitzip::Result r = splitzip::decompress(f.data(), f.size(), back.data(), j.data->size(), d);
          if (!r.ok() || r.size != j.data->size() || std::memcmp(back.data(), j.data->data(), r.size) != 0)
            errors[t] += std::string("decompress ") + splitzip::status_name(r.status) + "\n";
          else decoded.fetch_add(r.size, std::memory_order_relaxed);
          if (round == 0) frames[t][idx] = std::move(f);
          else if (frames[t][idx] != f) errors[t] += "frame changed between rounds\n";
        }
      }
    });
  }
  for (auto& th : pool) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(errors[t], "") << "thread " << t;

  // Sequential reference run: every thread's frame must match it byte for byte.
  size_t compared = 0;
  for (size_t k = 0; k < n_jobs; ++k) {
    Status s;
    const std::vector<uint8_t> want = compress_job(jobs[k], &s);
    ASSERT_TRUE(s == Status::ok || unavailable(s)) << splitzip::status_name(s);
    compared += s == Status::ok;
    for (int t = 0; t < kThreads; ++t) {
      EXPECT_EQ(statuses[t][k], s) << "job " << k << " thread " << t;
      EXPECT_EQ(frames[t][k], want) << "job " << k << " thread " << t;
    }
  }
  EXPECT_GT(compared, 0u);
  EXPECT_GT(decoded.load(), 0u);
}

// One stream of frames decoded by every thread at once, plus frame_info.
TEST(ReliabilityConcurrency, SharedStreamDecodesEverywhere) {
  Inputs& x = inputs();
  ASSERT_FALSE(x.bf16_k.empty());
  std::vector<uint8_t> stream, expect;
  for (const auto* v : {&x.bf16_k, &x.bf16_v}) {
    const uint64_t n = v->size() / 2;
    std::vector<uint8_t> f(splitzip::compress_bound(Dtype::bf16, n));
    splitzip::CompressOptions o;
    o.checksum = true;
    const splitzip::Result r = splitzip::compress(Dtype::bf16, v->data(), n, f.data(), f.size(), o);
    ASSERT_TRUE(r.ok());
    stream.insert(stream.end(), f.begin(), f.begin() + static_cast<std::ptrdiff_t>(r.size));
    expect.insert(expect.end(), v->begin(), v->end());
  }
  std::atomic<int> bad{0};
  std::vector<std::thread> pool;
  StartLine start(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    pool.emplace_back([&, t] {
      start.arrive_and_wait();
      std::vector<uint8_t> out(expect.size());
      for (int round = 0; round < 3; ++round) {
        splitzip::DecompressOptions o;
        o.threads = (t + round) % 3;  // 0: backend default, 1 or 2 threads
        const splitzip::Result r = splitzip::decompress_frames(stream.data(), stream.size(), out.data(), out.size(), o);
        if (!r.ok() || out != expect) bad.fetch_add(1);
        splitzip::FrameInfo fi;
        if (splitzip::frame_info(stream.data(), stream.size(), &fi) != Status::ok || !fi.has_checksum) bad.fetch_add(1);
      }
    });
  }
  for (auto& th : pool) th.join();
  EXPECT_EQ(bad.load(), 0);
}

// Table sets (FORMAT.md 4.9) shared by threads that code and decode with
// more sets than the cpu decoder's set cache holds (48 MiB: 96 sets of 32
// tables), each in its own order: the cache's lookups, inserts and
// evictions race, and every frame must still be the sequential one and
// decode to its input.
TEST(ReliabilityConcurrency, ThreadsShareTableSetsPastTheDecodeCache) {
  Inputs& x = inputs();
  ASSERT_FALSE(x.bf16_k.empty()) << "sample data missing under " << SPLITZIP_DATA_DIR;
  constexpr int kSets = 100, kSetThreads = 4;
  constexpr uint64_t kSlice = 4096;  // elements per frame
  std::vector<splitzip::TableSet> sets(kSets);
  for (int i = 0; i < kSets; ++i) {
    const auto& src = i % 2 ? x.bf16_v : x.bf16_k;  // distinct samples (source, offset, length)
    const void* bufs[1] = {src.data() + 2 * kSlice * static_cast<uint64_t>((i / 2) % 8)};
    const uint64_t n[1] = {kSlice * static_cast<uint64_t>(1 + i / 16)};
    ASSERT_EQ(splitzip::calibrate_tables(Dtype::bf16, bufs, n, 1, &sets[i], i < 96 ? 32 : 1), Status::ok);
  }
  std::vector<uint64_t> ids;
  for (const auto& st : sets) ids.push_back(st.id());
  std::sort(ids.begin(), ids.end());
  ASSERT_GT(std::unique(ids.begin(), ids.end()) - ids.begin(), 90) << "too few distinct sets to pass the cache bound";
  auto input = [&](int i) { return (i % 2 ? x.bf16_v : x.bf16_k).data() + 2 * kSlice * static_cast<uint64_t>(i % 16); };
  auto code = [&](int i, std::vector<uint8_t>* f) {
    splitzip::CompressOptions o;
    o.mode = splitzip::Mode::capacity;
    o.tables = &sets[i];
    o.threads = 1;
    f->resize(splitzip::compress_bound(Dtype::bf16, kSlice));
    const splitzip::Result r = splitzip::compress(Dtype::bf16, input(i), kSlice, f->data(), f->size(), o);
    f->resize(r.ok() ? r.size : 0);
    return r.status;
  };
  std::vector<std::vector<uint8_t>> want(kSets);
  for (int i = 0; i < kSets; ++i) ASSERT_EQ(code(i, &want[i]), Status::ok);
  std::atomic<int> bad{0};
  StartLine start(kSetThreads);
  std::vector<std::thread> pool;
  for (int t = 0; t < kSetThreads; ++t) {
    pool.emplace_back([&, t] {
      start.arrive_and_wait();
      std::vector<uint8_t> f, back(2 * kSlice);
      for (int k = 0; k < 2 * kSets; ++k) {
        const int i = (k * (2 * t + 1) + 7 * t) % kSets;  // each thread its own order
        if (code(i, &f) != Status::ok || f != want[i]) bad.fetch_add(1);
        splitzip::DecompressOptions d;
        d.tables = sets.data();
        d.n_tables = sets.size();
        d.threads = 1;
        const splitzip::Result r = splitzip::decompress(want[i].data(), want[i].size(), back.data(), back.size(), d);
        if (!r.ok() || std::memcmp(back.data(), input(i), back.size()) != 0) bad.fetch_add(1);
      }
    });
  }
  for (auto& th : pool) th.join();
  EXPECT_EQ(bad.load(), 0);
}

}  // namespace
}  // namespace szrel
