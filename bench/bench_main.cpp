// SPDX-License-Identifier: Apache-2.0
// splitzip_bench_cpu: Google Benchmark harness for the host backends and
// their peers. Harness flags are described by --help; every other flag goes
// to Google Benchmark (--benchmark_filter, --benchmark_out, ...).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "bench/bench_config.h"
#include "bench/bench_inputs.h"
#include "bench/bench_register.h"

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0) splitzip_bench::print_usage();
  }
  splitzip_bench::Config cfg;
  std::string error;
  if (!splitzip_bench::parse_config(&argc, argv, &cfg, &error)) {
    std::fprintf(stderr, "splitzip_bench_cpu: %s\n", error.c_str());
    splitzip_bench::print_usage();
    return 2;
  }
  std::vector<std::string> backends = splitzip_bench::selected_backends(cfg);
  std::vector<splitzip_bench::InputSpec> inputs = splitzip_bench::list_inputs(cfg);
  // Grouped by input so each big buffer is faulted in once and all methods
  // run on it back to back.
  for (const splitzip_bench::InputSpec& in : inputs) {
    if (cfg.peers) splitzip_bench::register_peers(cfg, in);
    splitzip_bench::register_splitzip(cfg, backends, in);
  }
  benchmark::AddCustomContext("splitzip_build_type", SPLITZIP_BENCH_BUILD_TYPE);
  benchmark::AddCustomContext("splitzip_compiler", SPLITZIP_BENCH_COMPILER);
  benchmark::AddCustomContext("splitzip_all_threads", std::to_string(cfg.all_threads));
  std::string names;
  for (const std::string& b : backends) names += (names.empty() ? "" : ",") + b;
  benchmark::AddCustomContext("splitzip_backends", names);

  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
