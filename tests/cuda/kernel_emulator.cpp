// SPDX-License-Identifier: Apache-2.0
#include "tests/cuda/kernel_emulator.h"

#include <algorithm>
#include <memory>
#include <numeric>
#include <type_traits>

#include "core/frame_rules.h"
#include "cuda/block_hash.h"
#include "cuda/decode_logic.h"
#include "cuda/e4m3_logic.h"
#include "cuda/encode_logic.h"
#include "cuda/plan.h"

namespace splitzip::test {
namespace {

using namespace cuda_detail;

template <class F>
void for_threads(F&& f) {
  for (uint32_t t = 0; t < kThreads; ++t) f(t);
}

// The block scan of the kernels (block_excl_scan): exclusive prefix over
// thread indices.
std::vector<uint32_t> exclusive_scan(const std::vector<uint32_t>& v) {
  std::vector<uint32_t> out(v.size());
  uint32_t run = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    out[i] = run;
    run += v[i];
  }
  return out;
}

template <class F>
void with_dtype(uint32_t dtype_id, F&& f) {
  switch (dtype_id) {
    case 1: f(Bf16Traits{}); break;
    case 2: f(Fp16Traits{}); break;
    case 3: f(Fp32Traits{}); break;
    case 5: f(Fp8E4M3Traits{}); break;
    default: f(Fp8E5M2Traits{}); break;
  }
}

std::vector<uint64_t> tile_order(uint64_t total, bool reverse) {
  std::vector<uint64_t> order(total);
  std::iota(order.begin(), order.end(), uint64_t{0});
  if (reverse) std::reverse(order.begin(), order.end());
  return order;
}

// cta_block_hashes for tile `local` of a buffer: the checksum blocks whose
// first byte lies in the tile, each hashed step by step (the CTA's split).
void emu_tile_hashes(const uint8_t* data, uint64_t bytes, uint64_t local, uint32_t elem_bytes, uint64_t* hashes) {
  const uint64_t b0 = (local << kTileLog2) * elem_bytes;
  const uint64_t b1 = std::min(b0 + kTileElems * elem_bytes, bytes);
  uint64_t first, end;
  tile_check_blocks(b0, b1, &first, &end);
  for (uint64_t b = first; b < end; ++b)
    hashes[b] = xxh3_by_lanes(data + (b << kChecksumBlockLog2), check_block_len(bytes, b));
}

// ---------------------------------------------------------------- encode

struct EncRun {
  std::vector<EncPlan> plans;
  std::vector<EncTally> tally;
  std::vector<uint8_t> stage;
  std::vector<uint64_t> hashes;
  std::vector<EmuResult> out;  // the kernel's sizes[] / statuses[]
  uint64_t total_tiles = 0;
  uint64_t total_units = 0;
};

// Setup phase of enc_fused_kernel (CTA 0): plans, prefixes of tiles,
// staging, hashes and copy units; buffers without tiles finalized here.
EncRun enc_setup(const std::vector<EncItem>& items, const std::vector<bool>& index_ok, uint32_t dtype_id,
                 uint32_t chunk_log2, uint32_t flags, const WorkspaceLayout& lay) {
  EncRun run;
  run.plans.resize(items.size());
  run.tally.assign(items.size(), EncTally{});
  run.out.assign(items.size(), EmuResult{Status::invalid_argument, 0xDEAD, kNoBlock});  // must be written
  run.stage.assign(lay.stage_bytes, 0xA5);  // poison: every byte used must be written
  run.hashes.assign(lay.hashes_bound, 0xA5A5A5A5A5A5A5A5ull);
  uint64_t tile_carry = 0, stage_carry = 0, hash_carry = 0, unit_carry = 0;
  for (size_t b = 0; b < items.size(); ++b) {
    EncPlan& p = run.plans[b];
    plan_encode(items[b], dtype_id, chunk_log2, flags, &p);
    if (!index_ok[b]) {
      p.status = static_cast<int32_t>(Status::bad_codebook);
      p.tiles = 0;
    }
    const uint64_t stage = stage_need(p);
    const uint64_t units = enc_units_bound(p);
    p.tile_begin = tile_carry;
    p.stage_off = stage_carry;
    p.hash_off = hash_carry;
    p.units_begin = unit_carry;
    tile_carry += p.tiles;
    stage_carry += stage;
    hash_carry += p.n_checks;
    unit_carry += units;
    if (p.tile_begin + p.tiles > lay.tiles_bound || p.stage_off + stage > lay.stage_bytes ||
        p.hash_off + p.n_checks > lay.hashes_bound) {
      p.status = static_cast<int32_t>(Status::invalid_argument);
      p.tiles = 0;
    }
    if (p.tiles == 0)
      enc_finalize_buffer(p, run.tally[b],
                          dev::xxh3_64(reinterpret_cast<const uint8_t*>(run.hashes.data() + p.hash_off), 8 * p.n_checks),
                          &run.out[b].size, &run.out[b].status);
  }
  run.total_tiles = std::min(tile_carry, lay.tiles_bound);
  run.total_units = unit_carry;
  return run;
}

// find_plan(): last plan with tile_begin <= tile.
template <class Plan>
size_t find_plan_host(const std::vector<Plan>& plans, uint64_t tile) {
  size_t lo = 0, hi = plans.size();
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    if (plans[mid].tile_begin <= tile) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

// enc_tile's dense half, batches of enc_groups_in_flight<T>() groups: all
// loads of a batch, then all transforms (the kernel's order).
template <class T>
void enc_tile_dense(EncPlan& plan, uint64_t local, EncShared& sh) {
  const uint64_t tile_first = local << kTileLog2;
  for_threads([&](uint32_t t) { enc_build_tables(plan, t, sh); });
  if constexpr (std::is_same_v<T, Fp8E4M3Traits>) {
    for (uint32_t r = 0; r < kRounds; ++r)
      for_threads([&](uint32_t t) { e4m3_enc_group(plan, tile_first, r * kThreads + t, sh); });
  } else {
    constexpr uint32_t kInFlight = enc_groups_in_flight<T>();
    for (uint32_t r = 0; r < kRounds; r += kInFlight)
      for_threads([&](uint32_t t) {
        EncIn<T> in[kInFlight];
        for (uint32_t k = 0; k < kInFlight; ++k) enc_load<T>(plan, tile_first, (r + k) * kThreads + t, in[k]);
        for (uint32_t k = 0; k < kInFlight; ++k) enc_transform<T>(plan, (r + k) * kThreads + t, in[k], sh);
      });
  }
  std::vector<uint32_t> sums(kThreads);
  for_threads([&](uint32_t t) { sums[t] = enc_rake_sum(t, sh); });
  const std::vector<uint32_t> ex = exclusive_scan(sums);
  for_threads([&](uint32_t t) { enc_rake_write(t, ex[t], sh); });
}

// enc_tile_done's finalize for buffer b (its last tile just finished):
// frame checksum over the block hashes (the CTA split), decision, header,
// stream 7.
void enc_finalize_last(EncRun& run, size_t b) {
  const EncPlan& p = run.plans[b];
  uint64_t checksum = 0;
  if (p.flags & kPlanChecksum)
    checksum = xxh3_by_lanes(reinterpret_cast<const uint8_t*>(run.hashes.data() + p.hash_off), 8 * p.n_checks);
  enc_finalize_buffer(p, run.tally[b], checksum, &run.out[b].size, &run.out[b].status);
  if ((p.flags & kPlanChecksum) && run.out[b].status == Status::ok)  // no frame, no stream 7
    for_threads([&](uint32_t t) {
      for (uint64_t k = t; k < p.n_checks; k += kThreads)
        write_block_checks(p.dst + run.tally[b].check_off + 4 * k, run.hashes.data() + p.hash_off + k, 1);
    });
}

// Main phase: every tile's dense pass and block hashes (any order), the
// look-back, then every tile's scatter and its done count, in the same
// order; the tile completing a buffer finalizes it. The plans are never
// written here (only the tallies), as in the kernel.
void enc_main(EncRun& run, bool reverse) {
  const uint64_t total = run.total_tiles;
  const EncRun& frozen = run;
  std::vector<std::unique_ptr<EncShared>> shared(total);
  std::vector<uint64_t> agg(total, 0);
  for (uint64_t tile : tile_order(total, reverse)) {
    const size_t b = find_plan_host(frozen.plans, tile);
    EncPlan plan = frozen.plans[b];
    const uint64_t local = tile - plan.tile_begin;
    if (local >= plan.tiles) continue;
    if (plan.flags & kPlanDense) {
      shared[tile] = std::make_unique<EncShared>();
      with_dtype(plan.dtype, [&](auto tr) { enc_tile_dense<decltype(tr)>(plan, local, *shared[tile]); });
      agg[tile] = enc_tile_total(*shared[tile]);
    }
  }
  // Look-back: escapes of the buffer's earlier tiles; the last tile (by
  // index) writes E to the tally.
  std::vector<uint64_t> excl(total, 0);
  for (size_t b = 0; b < frozen.plans.size(); ++b) {
    const EncPlan& plan = frozen.plans[b];
    uint64_t run_sum = 0;
    if (!(plan.flags & kPlanDense) || plan.tiles == 0) continue;
    for (uint64_t k = 0; k < plan.tiles; ++k) {
      excl[plan.tile_begin + k] = run_sum;
      run_sum += agg[plan.tile_begin + k];
    }
    run.tally[b].escapes = run_sum;
  }
  for (uint64_t tile : tile_order(total, reverse)) {
    const size_t b = find_plan_host(frozen.plans, tile);
    const EncPlan& plan = frozen.plans[b];
    const uint64_t local = tile - plan.tile_begin;
    if (local >= plan.tiles) continue;
    const uint64_t tile_first = local << kTileLog2;
    if (shared[tile] && plan.dtype == kDtypeE4M3) {  // no positions, no stream 4
      for (uint32_t r = 0; r < kRounds; ++r)
        for_threads([&](uint32_t t) {
          e4m3_enc_scatter(plan, r * kThreads + t, excl[tile], *shared[tile], run.stage.data());
        });
    } else if (shared[tile]) {
      for (uint32_t r = 0; r < kRounds; ++r)
        for_threads([&](uint32_t t) {
          enc_scatter(plan, tile_first, r * kThreads + t, excl[tile], *shared[tile], run.stage.data());
        });
      for_threads([&](uint32_t t) { enc_chunk_counts(plan, tile_first, t, *shared[tile]); });
    }
    if (plan.flags & kPlanChecksum)
      emu_tile_hashes(plan.src, plan.n * geometry_of(plan.dtype).bytes, local, geometry_of(plan.dtype).bytes,
                      run.hashes.data() + plan.hash_off);
    if (++run.tally[b].done == plan.tiles) enc_finalize_last(run, b);
  }
}

// Copy phase (after the second grid barrier): units reserved per buffer by
// the setup phase, those past the buffer's actual copy skipped.
void enc_copy_phase(EncRun& run) {
  for (uint64_t u = 0; u < run.total_units; ++u) {
    size_t lo = 0, hi = run.plans.size();
    while (lo < hi) {
      const size_t mid = (lo + hi) / 2;
      if (run.plans[mid].units_begin <= u) lo = mid + 1;
      else hi = mid;
    }
    const EncPlan& p = run.plans[lo - 1];
    const EncTally& t = run.tally[lo - 1];
    const uint64_t unit = u - p.units_begin;
    if (t.copy_kind == kCopyNone || unit * kCopyUnitBytes >= t.copy_bytes) continue;
    const uint8_t* from;
    uint8_t* to;
    enc_copy_ends(p, t, run.stage.data(), &from, &to);
    for_threads([&](uint32_t th) { enc_copy_any(t, from, to, unit, th, kThreads); });
  }
}

EncItem to_item(const EmuEncodeItem& it) {
  EncItem e{};
  e.src = static_cast<const uint8_t*>(it.src);
  e.dst = static_cast<uint8_t*>(it.dst);
  e.n = it.n;
  e.capacity = it.capacity;
  e.cb = it.codebook.entries;
  e.cb_count = it.codebook.count;
  e.cb_dtype = static_cast<uint32_t>(it.codebook.dtype);
  return e;
}

// ---------------------------------------------------------------- decode

struct DecRun {
  std::vector<DecPlan> plans;
  std::vector<DecTally> tally;
  std::vector<uint64_t> hashes;
  uint64_t total_tiles = 0;
};

// dec_setup_kernel: rules 1-13, hash and tile prefixes in frame order.
DecRun dec_setup(const std::vector<DecItem>& items, uint64_t max_output, bool verify, const WorkspaceLayout& lay) {
  DecRun run;
  run.plans.resize(items.size());
  run.tally.assign(items.size(), DecTally{0, kNoError, 0});
  uint64_t hash_carry = 0, tile_carry = 0;
  for (size_t b = 0; b < items.size(); ++b) {
    DecPlan& p = run.plans[b];
    plan_decode(items[b], max_output ? max_output : kNoBlock, verify, &p);
    const bool live = p.status == static_cast<int32_t>(Status::ok);
    const uint64_t checks = live ? p.n_checks : 0;
    if (!live) p.tiles = 0;
    p.hash_off = hash_carry;
    p.tile_begin = tile_carry;
    hash_carry += checks;
    tile_carry += p.tiles;
    if (p.hash_off + checks > lay.hashes_bound || p.tile_begin + p.tiles > lay.tiles_bound) {
      p.status = static_cast<int32_t>(Status::invalid_argument);
      p.tiles = 0;
    }
  }
  run.total_tiles = std::min(tile_carry, lay.tiles_bound);
  return run;
}

struct DecTileState {
  DecShared sh;
  uint32_t agg = 0;
  bool counts_bad = false;
};

// dec_tile_e4m3's first half: marker counts per group, block scan.
void dec_tile_count_e4m3(const DecPlan& plan, uint64_t local, DecTileState& st, int32_t& err) {
  const uint64_t tile_first = local << kTileLog2;
  for_threads([&](uint32_t t) { e4m3_dec_build(plan, t, st.sh); });
  std::vector<uint32_t> sums(kThreads);
  std::vector<int32_t> errs(kThreads, kNoError);
  for_threads([&](uint32_t t) { sums[t] = e4m3_dec_rake_count(plan, tile_first, t, st.sh, errs[t]); });
  const std::vector<uint32_t> ex = exclusive_scan(sums);
  for_threads([&](uint32_t t) { e4m3_dec_rake_write(t, ex[t], st.sh); });
  st.agg = e4m3_dec_tile_total(st.sh);
  for (int32_t e : errs) err = std::min(err, e);
}

// dec_tile_e4m3's second half, after the look-back.
void dec_tile_decode_e4m3(const DecPlan& plan, uint64_t local, uint64_t excl, const DecTileState& st, int32_t& err) {
  const uint64_t tile_first = local << kTileLog2;
  const uint64_t E = plan.h.escape_count;
  if (!(excl <= E && st.agg <= E - excl)) {
    note_error(err, Status::bad_escape_counts);
    return;
  }
  std::vector<int32_t> errs(kThreads, kNoError);
  for (uint32_t r = 0; r < kRounds; ++r)
    for_threads([&](uint32_t t) { e4m3_dec_group(plan, tile_first, r * kThreads + t, excl, st.sh, errs[t]); });
  for (int32_t e : errs) err = std::min(err, e);
}

template <class T>
void dec_tile_dense_nibble(const DecPlan& plan, uint64_t local, DecTileState& st, int32_t& err) {
  const uint64_t tile_first = local << kTileLog2;
  for_threads([&](uint32_t t) { dec_build_pairs(plan, t, st.sh); });
  std::vector<uint32_t> sums(kThreads);
  std::vector<int32_t> errs(kThreads, kNoError);
  for_threads([&](uint32_t t) { sums[t] = dec_counts_sum(plan, tile_first, t, st.sh, errs[t]); });
  const std::vector<uint32_t> ex = exclusive_scan(sums);
  for_threads([&](uint32_t t) { dec_counts_write(t, ex[t], st.sh); });
  for (int32_t e : errs) st.counts_bad |= e != kNoError;
  st.agg = dec_tile_total(st.sh);
  constexpr uint32_t kInFlight = dec_groups_in_flight<T>();  // dec_tile's batches: loads, then stores
  for (uint32_t r = 0; r < kRounds; r += kInFlight)
    for_threads([&](uint32_t t) {
      DecIn<T> in[kInFlight];
      for (uint32_t k = 0; k < kInFlight; ++k) dec_load<T>(plan, tile_first, (r + k) * kThreads + t, in[k]);
      for (uint32_t k = 0; k < kInFlight; ++k) dec_store<T>(plan, (r + k) * kThreads + t, in[k], st.sh, errs[t]);
    });
  for (int32_t e : errs) err = std::min(err, e);
}

template <class T>
void dec_tile_patch_nibble(const DecPlan& plan, uint64_t local, uint64_t excl, const DecTileState& st, int32_t& err) {
  const uint64_t tile_first = local << kTileLog2;
  const uint64_t E = plan.h.escape_count;
  const bool patch = !st.counts_bad && excl <= E && st.agg <= E - excl;
  if (!patch) {
    if (!st.counts_bad) note_error(err, Status::bad_escape_counts);
    return;
  }
  std::vector<int32_t> errs(kThreads, kNoError);
  for_threads([&](uint32_t t) {
    for (uint32_t j = t; j < st.agg; j += kThreads) dec_patch<T>(plan, tile_first, j, excl, st.sh, errs[t]);
  });
  for (int32_t e : errs) err = std::min(err, e);
}

// The kernel's per-dtype tile steps (dec_tile / dec_tile_e4m3).
template <class T>
void dec_tile_dense(const DecPlan& plan, uint64_t local, DecTileState& st, int32_t& err) {
  if constexpr (std::is_same_v<T, Fp8E4M3Traits>) dec_tile_count_e4m3(plan, local, st, err);
  else dec_tile_dense_nibble<T>(plan, local, st, err);
}
template <class T>
void dec_tile_patch(const DecPlan& plan, uint64_t local, uint64_t excl, const DecTileState& st, int32_t& err) {
  if constexpr (std::is_same_v<T, Fp8E4M3Traits>) dec_tile_decode_e4m3(plan, local, excl, st, err);
  else dec_tile_patch_nibble<T>(plan, local, excl, st, err);
}

void dec_main(DecRun& run, bool reverse) {
  const uint64_t total = run.total_tiles;
  std::vector<std::unique_ptr<DecTileState>> state(total);
  const DecRun& frozen = run;  // plans are read-only while the main kernel runs
  for (uint64_t tile : tile_order(total, reverse)) {
    const size_t b = find_plan_host(frozen.plans, tile);
    const DecPlan& plan = frozen.plans[b];
    const uint64_t local = tile - plan.tile_begin;
    if (local >= plan.tiles) continue;
    if (plan.flags & kPlanStored) {
      for_threads([&](uint32_t t) { dec_stored_copy(plan, local << kTileLog2, t, kThreads); });
      continue;
    }
    state[tile] = std::make_unique<DecTileState>();
    int32_t err = kNoError;
    with_dtype(plan.h.dtype, [&](auto tr) { dec_tile_dense<decltype(tr)>(plan, local, *state[tile], err); });
    run.tally[b].err = std::min(run.tally[b].err, err);
  }
  // Look-back per frame, then the patch of every tile.
  for (size_t b = 0; b < frozen.plans.size(); ++b) {
    const DecPlan& plan = frozen.plans[b];
    if (plan.tiles == 0 || (plan.flags & kPlanStored)) continue;
    uint64_t excl = 0;
    for (uint64_t k = 0; k < plan.tiles; ++k) {
      const DecTileState& st = *state[plan.tile_begin + k];
      int32_t err = kNoError;
      with_dtype(plan.h.dtype, [&](auto tr) { dec_tile_patch<decltype(tr)>(plan, k, excl, st, err); });
      run.tally[b].err = std::min(run.tally[b].err, err);
      excl += st.agg;
    }
    run.tally[b].escapes_seen = excl;
  }
}

DecItem to_item(const EmuDecodeItem& it) {
  DecItem d{};
  d.src = static_cast<const uint8_t*>(it.src);
  d.src_size = it.src_size;
  d.dst = static_cast<uint8_t*>(it.dst);
  d.dst_capacity = it.dst_capacity;
  return d;
}

}  // namespace

std::vector<EmuResult> emulate_compress_batch(Dtype dtype, const std::vector<EmuEncodeItem>& items,
                                              uint64_t total_elems, uint32_t chunk_log2, bool checksum,
                                              bool reverse_tiles) {
  const auto id = static_cast<uint32_t>(dtype);
  const WorkspaceLayout lay = encode_workspace(id, total_elems, items.size());
  std::vector<EncItem> enc(items.size());
  std::vector<bool> ok(items.size(), true);
  for (size_t b = 0; b < items.size(); ++b) enc[b] = to_item(items[b]);
  EncRun run = enc_setup(enc, ok, id, chunk_log2, checksum ? kPlanChecksum : 0, lay);
  enc_main(run, reverse_tiles);
  enc_copy_phase(run);
  return run.out;
}

EmuResult emulate_compress(Dtype dtype, const void* src, uint64_t n, void* dst, uint64_t capacity,
                           const Codebook& cb, uint32_t chunk_log2, bool checksum) {
  EmuEncodeItem it;
  it.src = src;
  it.dst = dst;
  it.n = n;
  it.capacity = capacity;
  it.codebook = cb;
  return emulate_compress_batch(dtype, {it}, n, chunk_log2, checksum).front();
}

std::vector<EmuResult> emulate_decompress_batch(const std::vector<EmuDecodeItem>& items,
                                                uint64_t total_dst_bytes, uint64_t max_output_bytes,
                                                bool verify, bool reverse_tiles) {
  const WorkspaceLayout lay = decode_workspace(total_dst_bytes, items.size());
  std::vector<DecItem> dec(items.size());
  for (size_t b = 0; b < items.size(); ++b) dec[b] = to_item(items[b]);
  DecRun run = dec_setup(dec, max_output_bytes, verify, lay);
  dec_main(run, reverse_tiles);
  std::vector<EmuResult> out(items.size());
  // Block hashes of the output (main kernel per tile, or dec_hash_kernel).
  run.hashes.assign(lay.hashes_bound, 0xA5A5A5A5A5A5A5A5ull);
  for (DecPlan& p : run.plans) {
    if (p.status != static_cast<int32_t>(Status::ok) || p.n_checks == 0) continue;
    const uint32_t eb = geometry_of(p.h.dtype).bytes;
    for (uint64_t local = 0; local < p.tiles; ++local)
      emu_tile_hashes(p.dst, p.out_bytes, local, eb, run.hashes.data() + p.hash_off);
  }
  for (size_t b = 0; b < items.size(); ++b) {
    run.plans[b].escapes_seen = run.tally[b].escapes_seen;
    run.plans[b].err = run.tally[b].err;
    dec_finalize(run.plans[b], &out[b].size, &out[b].status);
  }
  for (size_t b = 0; b < items.size(); ++b) {
    DecPlan& p = run.plans[b];
    out[b].corrupt_block = kNoBlock;
    if (p.status != static_cast<int32_t>(Status::ok) || !(p.flags & kPlanVerify)) continue;
    bool bad;
    if (p.h.version == 1) {
      bad = dev::xxh64(p.dst, p.out_bytes) != p.h.content_checksum;
    } else {
      // dec_finalize_kernel: first block whose check differs, then the frame
      // checksum over the block hashes (computed step by step).
      const uint64_t* hashes = run.hashes.data() + p.hash_off;
      const uint8_t* checks = p.src + (p.h.stored() ? stored_check_off(p.h.dtype, p.h.n_elems) : p.L.check_off);
      uint64_t first_bad = kNoBlock;
      for (uint64_t k = 0; k < p.n_checks && first_bad == kNoBlock; ++k)
        if (load_le32(checks + 4 * k) != static_cast<uint32_t>(hashes[k])) first_bad = k;
      const uint64_t c = xxh3_by_lanes(reinterpret_cast<const uint8_t*>(hashes), 8 * p.n_checks);
      bad = first_bad != kNoBlock || c != p.h.content_checksum;
      out[b].corrupt_block = first_bad;
    }
    if (bad) {
      out[b].status = Status::checksum_mismatch;
      out[b].size = 0;
    }
  }
  return out;
}

EmuResult emulate_decompress(const void* src, uint64_t src_size, void* dst, uint64_t dst_capacity, bool verify,
                             uint64_t max_output_bytes) {
  EmuDecodeItem it;
  it.src = src;
  it.src_size = src_size;
  it.dst = dst;
  it.dst_capacity = dst == nullptr ? 0 : dst_capacity;
  return emulate_decompress_batch({it}, it.dst_capacity, max_output_bytes, verify).front();
}

}  // namespace splitzip::test
