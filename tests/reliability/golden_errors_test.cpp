// SPDX-License-Identifier: Apache-2.0
// Replays tests/golden-errors/: each <name>.bin with its <name>.expect
// (format in tests/golden-errors/README.md) on default dispatch and on every
// available backend, and checks the expected status. The spec oracle must
// agree with each expectation, so a vector cannot drift from FORMAT.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "test_data.h"
#include "tests/fuzz/spec_oracle.h"

namespace szrel {
namespace {

namespace fs = std::filesystem;
using splitzip::Status;

struct Vector {
  std::string name;
  std::vector<uint8_t> bytes;
  std::map<std::string, std::string> keys;
};

bool parse_status(const std::string& name, Status* out) {
  for (int32_t v = 0; v <= static_cast<int32_t>(Status::escape_overflow); ++v) {
    const auto s = static_cast<Status>(v);
    if (name == splitzip::status_name(s)) {
      *out = s;
      return true;
    }
  }
  return false;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  const auto e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

std::vector<Vector> load_vectors(std::string* error) {
  std::vector<Vector> out;
  const fs::path dir(SPLITZIP_GOLDEN_ERRORS_DIR);
  std::vector<fs::path> expects;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".expect") expects.push_back(e.path());
  std::sort(expects.begin(), expects.end());
  for (const auto& p : expects) {
    Vector v;
    v.name = p.stem().string();
    std::ifstream in(p);
    std::string line;
    while (std::getline(in, line)) {
      line = trim(line);
      if (line.empty() || line[0] == '#') continue;
      const auto eq = line.find('=');
      if (eq == std::string::npos) {
        *error += v.name + ": bad line '" + line + "'\n";
        continue;
      }
      v.keys[trim(line.substr(0, eq))] = trim(line.substr(eq + 1));
    }
    std::ifstream bin(dir / (v.name + ".bin"), std::ios::binary);
    if (!bin) {
      *error += v.name + ": missing .bin\n";
      continue;
    }
    v.bytes.assign(std::istreambuf_iterator<char>(bin), std::istreambuf_iterator<char>());
    out.push_back(std::move(v));
  }
  return out;
}

std::string key(const Vector& v, const std::string& k, const std::string& dflt) {
  const auto it = v.keys.find(k);
  return it == v.keys.end() ? dflt : it->second;
}

TEST(ReliabilityGoldenErrors, EveryVectorGivesItsStatus) {
  std::string error;
  const std::vector<Vector> vectors = load_vectors(&error);
  ASSERT_EQ(error, "");
  ASSERT_FALSE(vectors.empty()) << "no vectors under " << SPLITZIP_GOLDEN_ERRORS_DIR;

  for (const Vector& v : vectors) {
    SCOPED_TRACE(v.name);
    Status want;
    ASSERT_TRUE(parse_status(key(v, "status", ""), &want)) << "status = " << key(v, "status", "");
    // Statuses a non-reference backend may give instead (multi-fault frames, FORMAT.md 9).
    std::vector<Status> also;
    std::istringstream alts(key(v, "also", ""));
    for (std::string a; alts >> a;) {
      Status s;
      ASSERT_TRUE(parse_status(a, &s)) << a;
      also.push_back(s);
    }
    const std::string api = key(v, "api", "decompress");
    splitzip::DecompressOptions o;
    o.max_output_bytes = std::stoull(key(v, "max_output_bytes", "0"));
    o.verify_checksum = key(v, "verify_checksum", "1") != "0";
    splitzip::FrameInfo fi;
    const bool header_ok = splitzip::frame_info(v.bytes.data(), v.bytes.size(), &fi) == Status::ok;
    const std::string cap_key = key(v, "dst_capacity", "decoded");
    uint64_t cap = cap_key == "decoded" ? (header_ok ? fi.decoded_size : 64) : std::stoull(cap_key);
    if (api == "decompress_frames" && cap_key == "decoded") cap = std::stoull(key(v, "stream_decoded", "0"));

    // The vector's expectation is the spec's.
    if (api != "decompress_frames") {
      szfuzz::SpecOptions so;
      so.dst_capacity = cap;
      so.max_output_bytes = o.max_output_bytes;
      so.verify_checksum = o.verify_checksum;
      const szfuzz::SpecVerdict sv = szfuzz::spec_check(v.bytes.data(), v.bytes.size(), so);
      const Status spec = api == "frame_info" ? (sv.header_ok ? Status::ok : sv.first()) : sv.first();
      EXPECT_EQ(spec, want) << "spec oracle disagrees with the .expect file";
    }

    std::vector<const char*> backends = {nullptr};
    const auto names = available_backends();
    for (const auto& b : names) backends.push_back(b.c_str());
    for (const char* b : backends) {
      SCOPED_TRACE(b ? b : "dispatch");
      Status got;
      std::vector<uint8_t> out(cap + 1);
      o.backend = b;
      if (api == "frame_info") {
        if (b != nullptr) continue;  // no backend involved
        got = splitzip::frame_info(v.bytes.data(), v.bytes.size(), &fi);
      } else if (api == "decompress_frames") {
        got = splitzip::decompress_frames(v.bytes.data(), v.bytes.size(), out.data(), cap, o).status;
      } else {
        ASSERT_EQ(api, "decompress");
        got = splitzip::decompress(v.bytes.data(), v.bytes.size(), out.data(), cap, o).status;
      }
      const bool is_ref = b != nullptr && std::string(b) == "reference";
      bool ok = got == want;
      if (!is_ref)
        for (Status a : also) ok |= got == a;
      EXPECT_TRUE(ok) << "got " << splitzip::status_name(got) << ", expected " << splitzip::status_name(want);
    }
  }
}

}  // namespace
}  // namespace szrel
