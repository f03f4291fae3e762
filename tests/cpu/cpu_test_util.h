/* SPDX-License-Identifier: Apache-2.0 */
// Shared pieces of the CPU backend tests: per-target parameterisation and
// input builders.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cpu/cpu_targets.h"
#include "splitzip/splitzip.hpp"
#include "tests/support/synthetic.h"

namespace splitzip::cpu_test {

inline const Dtype kDtypes[] = {Dtype::bf16, Dtype::fp16, Dtype::fp32, Dtype::fp8_e5m2};
inline const int kThreads[] = {1, 2, 3, 7};

// A test fixture parameterised by Highway target: forces it for the test's
// duration and checks that dispatch really uses it.
class PerTarget : public ::testing::TestWithParam<int64_t> {
 protected:
  void SetUp() override {
    cpu::force_target(GetParam());
    ASSERT_EQ(cpu::active_target(), GetParam()) << cpu::target_name(GetParam());
  }
  void TearDown() override { cpu::force_target(0); }
};

inline std::string target_param_name(const ::testing::TestParamInfo<int64_t>& info) {
  std::string s = cpu::target_name(info.param);
  for (char& c : s)
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

// A codebook with the first k entries of the synthetic body: data then has
// many escapes and codes < k only (k < 16 exercises rule 18).
inline Codebook body_prefix(Dtype d, uint8_t k) {
  Codebook cb = synth::body_codebook(d);
  for (uint32_t i = k; i < 16; ++i) cb.entries[i] = 0;
  cb.count = k;
  return cb;
}

}  // namespace splitzip::cpu_test

#define SPLITZIP_INSTANTIATE_PER_TARGET(Suite)                                                 \
  INSTANTIATE_TEST_SUITE_P(Targets, Suite, ::testing::ValuesIn(splitzip::cpu::runnable_targets()), \
                           splitzip::cpu_test::target_param_name)
