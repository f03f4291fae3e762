/* SPDX-License-Identifier: Apache-2.0 */
// Benchmark registration. Names (parsed by bench/scripts/report.py):
//   BM_<Op>/<backend>/<dtype>/<bytes>/<input>/threads:<n>   splitzip, Op in
//       Encode, Decode, EncodeChecksum, DecodeChecksum, EncodeDynamic
//   BM_Memcpy/<bytes>/<input>/threads:<n>
//   BM_<Peer>_Compress|Decompress/<dtype>/<bytes>/<input>/threads:<n>
// Throughput is bytes of uncompressed input per second of wall time;
// counters: ratio (uncompressed / compressed), escape_rate, threads.
#pragma once

#include <string>
#include <vector>

#include "bench/bench_config.h"
#include "bench/bench_inputs.h"

namespace splitzip_bench {

// Every available splitzip backend the configuration selects, registry order.
std::vector<std::string> selected_backends(const Config& cfg);

void register_splitzip(const Config& cfg, const std::vector<std::string>& backends,
                       const InputSpec& in);
void register_peers(const Config& cfg, const InputSpec& in);

std::string bench_suffix(const InputSpec& in, int threads);  // "<bytes>/<input>/threads:<n>"

}  // namespace splitzip_bench
