// SPDX-License-Identifier: Apache-2.0
// Writes the committed seed corpora: small valid frames of every dtype and
// mode, streams, frames with one hand-made fault per payload rule, slices of
// the bundled KV sample, the small golden .sz frames, and compress cases for
// the round-trip and differential targets.
//   fuzz_make_seeds <repo root>   (writes <root>/tests/fuzz/corpus/<target>/)
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/layout.h"
#include "splitzip/splitzip.hpp"

namespace {

namespace fs = std::filesystem;
using splitzip::Dtype;
using Bytes = std::vector<uint8_t>;

fs::path g_root;

void write(const std::string& target, const std::string& name, const Bytes& b) {
  const fs::path dir = g_root / "tests/fuzz/corpus" / target;
  fs::create_directories(dir);
  std::ofstream out(dir / name, std::ios::binary);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

Bytes read_file(const fs::path& p, uint64_t max_bytes) {
  std::ifstream in(p, std::ios::binary);
  Bytes b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (b.size() > max_bytes) b.resize(max_bytes);
  return b;
}

uint64_t g_x = 0x1234567;
uint32_t rnd() {
  g_x ^= g_x << 13;
  g_x ^= g_x >> 7;
  g_x ^= g_x << 17;
  return static_cast<uint32_t>(g_x >> 11);
}

// n values with exponents near `center` (a few escapes), per dtype.
Bytes values(Dtype d, uint64_t n, uint32_t center, uint32_t escape_per_mille) {
  const uint32_t bytes = splitzip::dtype_bytes(d);
  const bool five = d == Dtype::fp16 || d == Dtype::fp8_e5m2;
  Bytes b(n * bytes);
  for (uint64_t i = 0; i < n; ++i) {
    uint32_t e = center + rnd() % 6;
    if (rnd() % 1000 < escape_per_mille) e = rnd();
    e &= five ? 31u : 255u;
    const uint32_t m = rnd();
    uint32_t v = 0;
    switch (d) {
      case Dtype::bf16: v = (m & 0x807F) | (e << 7); break;
      case Dtype::fp16: v = (m & 0x83FF) | (e << 10); break;
      case Dtype::fp32: v = (m & 0x807FFFFFu) | (e << 23); break;
      case Dtype::fp8_e5m2: v = (m & 0x83) | (e << 2); break;
    }
    for (uint32_t k = 0; k < bytes; ++k) b[i * bytes + k] = static_cast<uint8_t>(v >> (8 * k));
  }
  return b;
}

Bytes compress(Dtype d, const Bytes& data, uint32_t chunk_log2, bool checksum,
               const splitzip::Codebook* cb = nullptr, splitzip::Mode mode = splitzip::Mode::fast) {
  const uint64_t n = data.size() / splitzip::dtype_bytes(d);
  Bytes f(splitzip::compress_bound(d, n));
  splitzip::CompressOptions o;
  o.chunk_log2 = chunk_log2;
  o.checksum = checksum;
  o.codebook = cb;
  o.mode = mode;
  const splitzip::Result r = splitzip::compress(d, data.empty() ? f.data() : data.data(), n, f.data(), f.size(), o);
  if (!r.ok()) {
    std::fprintf(stderr, "make_seeds: compress failed: %s\n", splitzip::status_name(r.status));
    std::exit(1);
  }
  f.resize(r.size);
  return f;
}

// Recomputes header_check after editing a header field.
void fix_check(Bytes& f) {
  Bytes h(f.begin(), f.begin() + 64);
  std::memset(h.data() + 52, 0, 4);
  // v1 headers: XXH64; v2: XXH3-64.
  const uint64_t c = f[4] == 1 ? splitzip::xxh64(h.data(), 64) : splitzip::xxh3_64(h.data(), 64);
  for (int i = 0; i < 4; ++i) f[52 + i] = static_cast<uint8_t>(c >> (8 * i));
}

// Compress case bytes (fuzz_common.h layout).
Bytes compress_case(uint8_t dtype, uint8_t chunk, uint8_t mode, uint8_t count, const uint8_t entries[16],
                    const Bytes& tail) {
  Bytes b = {static_cast<uint8_t>(dtype - 1), static_cast<uint8_t>(chunk - 6), mode, count};
  b.insert(b.end(), entries, entries + 16);
  b.insert(b.end(), tail.begin(), tail.end());
  return b;
}

void frame_seed(const std::string& name, const Bytes& f) {
  write("decompress", name, f);
  write("frame_info", name, f);
  Bytes diff = {0x03};  // frame mode, header checks repaired
  diff.insert(diff.end(), f.begin(), f.end());
  write("differential", name, diff);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <repo root>\n", argv[0]);
    return 2;
  }
  g_root = argv[1];
  const Dtype dtypes[] = {Dtype::bf16, Dtype::fp16, Dtype::fp32, Dtype::fp8_e5m2};
  const uint32_t centers[] = {120, 12, 122, 12};

  // Valid frames: coded (with and without checksum, small chunks so there
  // are several), stored, empty, single element.
  Bytes stream;
  for (int k = 0; k < 4; ++k) {
    const Dtype d = dtypes[k];
    const std::string dn = splitzip::dtype_name(d);
    const Bytes data = values(d, 300, centers[k], 40);
    const Bytes coded = compress(d, data, 6, false);
    frame_seed(dn + "_coded", coded);
    frame_seed(dn + "_coded_checksum", compress(d, data, 6, true));
    Bytes rnd_data(300 * splitzip::dtype_bytes(d));
    for (auto& x : rnd_data) x = static_cast<uint8_t>(rnd());
    frame_seed(dn + "_stored_checksum", compress(d, rnd_data, 10, true));
    frame_seed(dn + "_one", compress(d, values(d, 1, centers[k], 0), 10, false));
    stream.insert(stream.end(), coded.begin(), coded.end());
  }
  frame_seed("empty", compress(Dtype::bf16, {}, 10, false));
  frame_seed("stream_4_dtypes", stream);

  // One fault per payload rule, from a coded bf16 frame with escapes
  // (positions from FORMAT.md 4.2 via the layout helper).
  {
    const Bytes data = values(Dtype::bf16, 257, 120, 60);
    const Bytes f = compress(Dtype::bf16, data, 6, true);
    splitzip::FrameInfo fi;
    splitzip::frame_info(f.data(), f.size(), &fi);
    const splitzip::FrameLayout L =
        splitzip::coded_layout(1, fi.n_elems, fi.chunk_log2, fi.escape_count, fi.checksum_blocks);
    Bytes b = f;
    b[L.code_off + L.code_size - 1] |= 0x80;  // odd n: padding nibble
    frame_seed("fault_padding_nibble", b);
    b = f;
    b[f.size() - 1] = 1;  // gap after the last stream
    frame_seed("fault_padding_gap", b);
    b = f;
    b[L.count_off] = static_cast<uint8_t>(b[L.count_off] + 1);
    frame_seed("fault_escape_counts", b);
    if (fi.escape_count >= 2) {
      b = f;
      std::swap(b[L.pos_off], b[L.pos_off + 2]);
      std::swap(b[L.pos_off + 1], b[L.pos_off + 3]);
      frame_seed("fault_escape_order", b);
      b = f;
      b[L.exp_off] = b[32];  // an exponent that is in the codebook
      frame_seed("fault_escape_value", b);
    }
    b = f;
    b[L.code_off] = 0xFF;
    frame_seed("fault_code", b);
    b = f;
    b[L.res_off] ^= 1;
    frame_seed("fault_checksum", b);
    b = f;
    b[48] = 17;
    fix_check(b);
    frame_seed("fault_codebook_count", b);
    // v2: stream 7 (block checks), mode and block_log2.
    b = f;
    b[L.check_off] ^= 1;
    frame_seed("fault_block_check", b);
    b = f;
    b[L.check_off + L.check_size] = 1;  // gap after stream 7
    frame_seed("fault_block_check_gap", b);
    b = f;
    b[49] = 1;
    fix_check(b);
    frame_seed("fault_mode_1", b);
    b = f;
    b[50] = 15;
    fix_check(b);
    frame_seed("fault_block_log2_15", b);
  }

  // fp8_e4m3 in mode 1 (format v3, FORMAT.md 4.6.7): the whole byte coded,
  // and the same frame relabelled v2 (rule 8).
  {
    Bytes e(3000);
    for (size_t i = 0; i < e.size(); ++i) e[i] = static_cast<uint8_t>(0x30 + rnd() % 12 + (rnd() % 2) * 0x80);
    const Bytes f = compress(Dtype::fp8_e4m3, e, 10, true, nullptr, splitzip::Mode::capacity);
    frame_seed("fp8_e4m3_capacity_checksum", f);
    frame_seed("fp8_e4m3_capacity", compress(Dtype::fp8_e4m3, e, 10, false, nullptr, splitzip::Mode::capacity));
    Bytes b = f;
    b[4] = 2;
    fix_check(b);
    frame_seed("fault_fp8_e4m3_capacity_v2", b);
  }

  // Codebook files (FORMAT.md 10) for the frame_info target's second parser.
  for (int k = 0; k < 4; ++k) {
    splitzip::Codebook cb;
    cb.dtype = dtypes[k];
    cb.count = static_cast<uint8_t>(4 + 4 * k);
    for (uint8_t c = 0; c < cb.count; ++c) cb.entries[c] = static_cast<uint8_t>(centers[k] - 2 + c);
    Bytes file(splitzip::kCodebookFileSize);
    if (splitzip::codebook_serialize(cb, file.data()) == splitzip::Status::ok)
      write("frame_info", std::string("codebook_") + splitzip::dtype_name(dtypes[k]) + ".szcb", file);
  }

  // Slices of the real KV sample.
  const fs::path kv = g_root / "data/kv/stories260k";
  const Bytes k0 = read_file(kv / "layer00_k.bf16", 2 * 1024);
  const Bytes v2 = read_file(kv / "layer02_v.f32", 4 * 512);
  if (!k0.empty()) frame_seed("kv_layer00_k_bf16", compress(Dtype::bf16, k0, 8, true));
  if (!v2.empty()) frame_seed("kv_layer02_v_f32", compress(Dtype::fp32, v2, 7, false));

  // The smallest committed v2 golden frames (tests/golden/v2/sz), within the
  // corpus budget. (The v1 ones are kept as the committed v1_golden_* seeds.)
  const fs::path golden = g_root / "tests/golden/v2/sz";
  if (fs::is_directory(golden))
    for (const auto& e : fs::directory_iterator(golden))
      if (e.path().extension() == ".sz" && fs::file_size(e.path()) <= 2200)
        frame_seed("golden_" + e.path().stem().string(), read_file(e.path(), 2200));

  // Compress cases: raw data of each dtype, user codebooks, synthesized data.
  uint8_t entries[16];
  for (int k = 0; k < 4; ++k) {
    const Dtype d = dtypes[k];
    const std::string dn = splitzip::dtype_name(d);
    const auto id = static_cast<uint8_t>(k + 1);
    for (int c = 0; c < 16; ++c) entries[c] = static_cast<uint8_t>(centers[k] + c);
    const Bytes data = values(d, 200, centers[k], 30);
    const Bytes raw_dyn = compress_case(id, 6, 0x01, 5, entries, data);          // dynamic, checksum
    const Bytes raw_user = compress_case(id, 7, 0x02 | 0x10, 3, entries, data);  // user codebook, 1 thread
    Bytes synth_tail = {0x40, 0x9C, 0x00, 0x00, 20, 0x11, 0x22, 0x33, 0x44};     // n = 40000, rate 20/256
    const Bytes synth = compress_case(id, 10, 0x08 | 0x02, 12, entries, synth_tail);
    synth_tail[4] = 200;  // escape-heavy: stored
    const Bytes synth_heavy = compress_case(id, 15, 0x08, 16, entries, synth_tail);
    for (const auto& [name, b] : {std::pair<std::string, const Bytes&>{dn + "_raw_dynamic", raw_dyn},
                                  {dn + "_raw_user", raw_user},
                                  {dn + "_synth", synth},
                                  {dn + "_synth_escape_heavy", synth_heavy}}) {
      write("roundtrip", name, b);
      Bytes diff = {0x00};
      diff.insert(diff.end(), b.begin(), b.end());
      write("differential", name, diff);
    }
  }
  if (!k0.empty()) {
    for (int c = 0; c < 16; ++c) entries[c] = static_cast<uint8_t>(112 + c);
    const Bytes b = compress_case(1, 10, 0x01, 0, entries, k0);
    write("roundtrip", "kv_layer00_k_bf16", b);
    Bytes diff = {0x00};
    diff.insert(diff.end(), b.begin(), b.end());
    write("differential", "kv_layer00_k_bf16", diff);
  }
  return 0;
}
