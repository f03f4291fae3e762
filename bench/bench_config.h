/* SPDX-License-Identifier: Apache-2.0 */
// Harness options: which inputs, backends, thread counts and peers to run.
// Each comes from a --flag, else an environment variable, else a default, so
// a quick run is one flag away (e.g. --synth_elems=16777216).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace splitzip_bench {

struct Config {
  std::string data_dir;                   // --data_dir / SPLITZIP_BENCH_DATA
  uint64_t synth_elems = uint64_t{1} << 28;  // --synth_elems / SPLITZIP_BENCH_SYNTH_ELEMS; 0: none
  uint64_t synth_esc_elems = uint64_t{1} << 25;  // --synth_esc_elems / SPLITZIP_BENCH_SYNTH_ESC_ELEMS
  std::vector<std::string> inputs;        // --inputs / SPLITZIP_BENCH_INPUTS; empty: all
  std::vector<std::string> backends;      // --backends / SPLITZIP_BENCH_BACKENDS; empty: all available
  std::vector<int> threads;               // --threads / SPLITZIP_BENCH_THREADS, "1,all"
  bool peers = true;                      // --peers / SPLITZIP_BENCH_PEERS (0 or 1)
  int all_threads = 1;                    // what "all" means on this machine

  bool want_input(const std::string& name) const;
  bool want_backend(const std::string& name) const;
};

// Removes the harness's own --flags from argv (Google Benchmark rejects
// flags it does not know) and fills cfg. Returns false with a message in
// *error on a malformed value.
bool parse_config(int* argc, char** argv, Config* cfg, std::string* error);

void print_usage();

}  // namespace splitzip_bench
