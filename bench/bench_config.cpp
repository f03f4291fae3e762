// SPDX-License-Identifier: Apache-2.0
#include "bench/bench_config.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace splitzip_bench {
namespace {

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    if (comma == std::string::npos) comma = s.size();
    if (comma > start) out.push_back(s.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

bool parse_u64(const std::string& s, uint64_t* out) {
  if (s.empty() || s[0] == '-') return false;
  errno = 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(s.c_str(), &end, 0);
  if (errno != 0 || end == s.c_str() || *end != '\0') return false;
  *out = static_cast<uint64_t>(v);
  return true;
}

bool parse_threads(const std::string& s, int all, std::vector<int>* out, std::string* error) {
  std::vector<int> t;
  for (const std::string& item : split_list(s)) {
    uint64_t v = 0;
    if (item == "all") {
      t.push_back(all);
    } else if (parse_u64(item, &v) && v >= 1 && v <= 4096) {
      t.push_back(static_cast<int>(v));
    } else {
      *error = "bad thread count '" + item + "' (want N >= 1 or 'all')";
      return false;
    }
  }
  if (t.empty()) {
    *error = "empty thread list";
    return false;
  }
  // "1,all" on a 1-core machine is one run, not two identical ones.
  std::vector<int> uniq;
  for (int v : t) {
    if (std::find(uniq.begin(), uniq.end(), v) == uniq.end()) uniq.push_back(v);
  }
  *out = uniq;
  return true;
}

// Value of --name=... at argv[i], or null.
const char* flag_value(const char* arg, const char* name) {
  size_t n = std::strlen(name);
  if (std::strncmp(arg, "--", 2) != 0 || std::strncmp(arg + 2, name, n) != 0) return nullptr;
  if (arg[2 + n] != '=') return nullptr;
  return arg + 3 + n;
}

}  // namespace

bool Config::want_input(const std::string& name) const {
  return inputs.empty() || std::find(inputs.begin(), inputs.end(), name) != inputs.end();
}

bool Config::want_backend(const std::string& name) const {
  return backends.empty() || std::find(backends.begin(), backends.end(), name) != backends.end();
}

bool parse_config(int* argc, char** argv, Config* cfg, std::string* error) {
  unsigned hc = std::thread::hardware_concurrency();
  cfg->all_threads = hc == 0 ? 1 : static_cast<int>(hc);
  cfg->data_dir = SPLITZIP_BENCH_DATA_DIR;

  // Environment first, flags override.
  std::string synth, synth_esc, inputs, backends, threads = "1,all", peers;
  if (const char* e = std::getenv("SPLITZIP_BENCH_DATA")) cfg->data_dir = e;
  if (const char* e = std::getenv("SPLITZIP_BENCH_SYNTH_ELEMS")) synth = e;
  if (const char* e = std::getenv("SPLITZIP_BENCH_SYNTH_ESC_ELEMS")) synth_esc = e;
  if (const char* e = std::getenv("SPLITZIP_BENCH_INPUTS")) inputs = e;
  if (const char* e = std::getenv("SPLITZIP_BENCH_BACKENDS")) backends = e;
  if (const char* e = std::getenv("SPLITZIP_BENCH_THREADS")) threads = e;
  if (const char* e = std::getenv("SPLITZIP_BENCH_PEERS")) peers = e;

  int kept = 1;
  for (int i = 1; i < *argc; ++i) {
    const char* a = argv[i];
    const char* v = nullptr;
    if ((v = flag_value(a, "data_dir"))) {
      cfg->data_dir = v;
    } else if ((v = flag_value(a, "synth_elems"))) {
      synth = v;
    } else if ((v = flag_value(a, "synth_esc_elems"))) {
      synth_esc = v;
    } else if ((v = flag_value(a, "inputs"))) {
      inputs = v;
    } else if ((v = flag_value(a, "backends"))) {
      backends = v;
    } else if ((v = flag_value(a, "threads"))) {
      threads = v;
    } else if ((v = flag_value(a, "peers"))) {
      peers = v;
    } else {
      argv[kept++] = argv[i];  // Google Benchmark's, or unknown: it reports those
    }
  }
  *argc = kept;

  if (!synth.empty() && !parse_u64(synth, &cfg->synth_elems)) {
    *error = "bad synth_elems '" + synth + "'";
    return false;
  }
  if (!synth_esc.empty() && !parse_u64(synth_esc, &cfg->synth_esc_elems)) {
    *error = "bad synth_esc_elems '" + synth_esc + "'";
    return false;
  }
  cfg->inputs = split_list(inputs);
  cfg->backends = split_list(backends);
  if (!parse_threads(threads, cfg->all_threads, &cfg->threads, error)) return false;
  if (!peers.empty()) {
    if (peers != "0" && peers != "1") {
      *error = "bad peers '" + peers + "' (want 0 or 1)";
      return false;
    }
    cfg->peers = peers == "1";
  }
  return true;
}

void print_usage() {
  std::fprintf(stderr,
               "splitzip_bench_cpu [harness flags] [Google Benchmark flags]\n"
               "  --data_dir=DIR       bundled KV sample (env SPLITZIP_BENCH_DATA)\n"
               "  --synth_elems=N      synthetic BF16 elements, default 268435456 (512 MB); 0: none\n"
               "                       (env SPLITZIP_BENCH_SYNTH_ELEMS)\n"
               "  --synth_esc_elems=N  synthetic BF16 elements with 1%% escapes, default 33554432\n"
               "                       (64 MB); 0: none (env SPLITZIP_BENCH_SYNTH_ESC_ELEMS)\n"
               "  --inputs=a,b         subset of kv_l1-4,kv_l0k,kv_l0v,kv_l2-f32,kv_l2-fp16,\n"
               "                       kv_l2-fp8,synth-esc1,synth\n"
               "                       (env SPLITZIP_BENCH_INPUTS)\n"
               "  --backends=a,b       splitzip backends, default every available one\n"
               "                       (env SPLITZIP_BENCH_BACKENDS)\n"
               "  --threads=1,all      thread counts (env SPLITZIP_BENCH_THREADS)\n"
               "  --peers=0|1          memcpy/zstd/lz4/blosc peers, default 1 (env SPLITZIP_BENCH_PEERS)\n");
}

}  // namespace splitzip_bench
