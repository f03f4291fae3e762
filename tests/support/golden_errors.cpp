// SPDX-License-Identifier: Apache-2.0
#include "tests/support/golden_errors.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "tests/support/test_data.h"

namespace splitzip::test {
namespace {

namespace fs = std::filesystem;

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  const auto e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

}  // namespace

std::string GoldenErrorVector::key(const std::string& k, const std::string& dflt) const {
  const auto it = keys.find(k);
  return it == keys.end() ? dflt : it->second;
}

std::string golden_errors_dir() { return golden_dir() + "/../golden-errors"; }

bool parse_status_name(const std::string& name, Status* out) {
  for (int32_t v = 0; v <= static_cast<int32_t>(Status::escape_overflow); ++v) {
    const auto s = static_cast<Status>(v);
    if (name == status_name(s)) {
      *out = s;
      return true;
    }
  }
  return false;
}

std::vector<GoldenErrorVector> golden_error_vectors(std::string* error) {
  std::vector<GoldenErrorVector> out;
  std::vector<fs::path> expects;
  const fs::path root(golden_errors_dir());
  if (!fs::is_directory(root)) {
    *error += "missing " + root.string() + "\n";
    return out;
  }
  for (const fs::path& e : fs::directory_iterator(root)) {
    if (e.extension() == ".expect" || e.extension() == ".bin")
      *error += e.filename().string() + ": vectors live in v1/, v2/, capacity/ or v3_fp8cap/\n";
  }
  for (const char* set : kGoldenErrorSets) {
    const fs::path d = root / set;
    if (!fs::is_directory(d)) {
      *error += std::string("missing ") + d.string() + "\n";
      continue;
    }
    for (const auto& e : fs::directory_iterator(d))
      if (e.path().extension() == ".expect") expects.push_back(e.path());
  }
  std::sort(expects.begin(), expects.end());
  for (const auto& p : expects) {
    GoldenErrorVector v;
    v.name = p.parent_path().filename().string() + "/" + p.stem().string();
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
    std::ifstream bin(p.parent_path() / (p.stem().string() + ".bin"), std::ios::binary);
    if (!bin) {
      *error += v.name + ": missing .bin\n";
      continue;
    }
    v.bytes.assign(std::istreambuf_iterator<char>(bin), std::istreambuf_iterator<char>());
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace splitzip::test
