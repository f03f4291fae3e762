// SPDX-License-Identifier: Apache-2.0
// Runs a fuzz target's LLVMFuzzerTestOneInput over files and directories
// without libFuzzer, so any compiler (and any sanitizer build) can replay the
// committed corpora and regression vectors under ctest.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace fs = std::filesystem;

static bool run_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "replay: cannot read %s\n", p.string().c_str());
    return false;
  }
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Exact-size heap copy, as libFuzzer gives it, so ASan sees over-reads.
  std::vector<uint8_t> exact(bytes);
  LLVMFuzzerTestOneInput(exact.data(), exact.size());
  return true;
}

int main(int argc, char** argv) {
  uint64_t files = 0;
  bool ok = true;
  for (int i = 1; i < argc; ++i) {
    const fs::path arg(argv[i]);
    if (fs::is_directory(arg)) {
      for (const auto& e : fs::recursive_directory_iterator(arg))
        if (e.is_regular_file() && e.path().filename().string()[0] != '.') {
          ok &= run_file(e.path());
          ++files;
        }
    } else {
      ok &= run_file(arg);
      ++files;
    }
  }
  std::printf("replayed %llu inputs\n", static_cast<unsigned long long>(files));
  // No inputs means a wrong path, not a pass.
  return ok && files > 0 ? 0 : 1;
}
