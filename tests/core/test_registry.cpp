// SPDX-License-Identifier: Apache-2.0
// The registry list is the single source: the C and C++ listings, the
// unavailable reasons and automatic dispatch all read its entries.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "backends/registry.h"
#include "splitzip/splitzip.h"
#include "splitzip/splitzip.hpp"

namespace splitzip {
namespace {

class UnsetBackendEnv {
 public:
  UnsetBackendEnv() {
    const char* v = std::getenv("SPLITZIP_BACKEND");
    had_ = v != nullptr;
    if (had_) old_ = v;
    unsetenv("SPLITZIP_BACKEND");
  }
  ~UnsetBackendEnv() {
    if (had_) setenv("SPLITZIP_BACKEND", old_.c_str(), 1);
  }

 private:
  bool had_ = false;
  std::string old_;
};

TEST(RegistryList, ListingsAndReasonsComeFromTheEntries) {
  ASSERT_GE(registry_size(), 1u);
  EXPECT_EQ(backend_count(), registry_size());
  EXPECT_EQ(sz_backend_count(), registry_size());
  for (size_t i = 0; i < registry_size(); ++i) {
    const RegistryEntry& e = registry_entry(i);
    ASSERT_NE(e.backend, nullptr) << i;
    const char* name = e.backend->name();
    EXPECT_EQ(registry_at(i), e.backend) << name;
    EXPECT_STREQ(backend_name(i), name);
    EXPECT_STREQ(sz_backend_name(i), name);
    EXPECT_EQ(find_backend(name), e.backend) << name;
    EXPECT_EQ(backend_available(name), e.backend->available()) << name;
    EXPECT_EQ(sz_backend_available(name) == 1, e.backend->available()) << name;
    const char* why = backend_unavailable_reason(name);
    EXPECT_EQ(sz_backend_unavailable_reason(name), why) << name;
    const std::string own = e.backend->unavailable_reason();
    if (e.backend->available()) {
      EXPECT_EQ(why, nullptr) << name;
      EXPECT_EQ(own, "") << name;
    } else {
      ASSERT_NE(why, nullptr) << name;
      EXPECT_NE(std::string(why), "") << name;
      if (!own.empty()) EXPECT_EQ(std::string(why), own) << name;
    }
  }
  EXPECT_EQ(backend_name(registry_size()), nullptr);
  EXPECT_STREQ(backend_unavailable_reason("bogus"), "not compiled into this build");
}

// The preference order, per memory kind, of this build's backends: the GPU
// for device and managed memory, then cpu, then reference; kokkos only when
// named.
std::vector<std::string> expected_order(MemoryKind kind) {
  std::vector<std::string> order;
#ifdef SPLITZIP_HAVE_CUDA
  if (kind == MemoryKind::device || kind == MemoryKind::managed) order.emplace_back("cuda");
#endif
  if (kind == MemoryKind::device) return order;
#ifdef SPLITZIP_HAVE_CPU
  order.emplace_back("cpu");
#endif
  order.emplace_back("reference");
  return order;
}

TEST(RegistryList, PreferenceOrderIsTheDocumentedOne) {
  for (MemoryKind kind : {MemoryKind::host, MemoryKind::device, MemoryKind::managed}) {
    std::vector<const RegistryEntry*> picks;
    for (size_t i = 0; i < registry_size(); ++i)
      if (registry_entry(i).auto_memory & memory_bit(kind)) picks.push_back(&registry_entry(i));
    std::stable_sort(picks.begin(), picks.end(),
                     [](const RegistryEntry* a, const RegistryEntry* b) { return a->preference < b->preference; });
    std::vector<std::string> names;
    for (size_t i = 0; i < picks.size(); ++i) {
      names.emplace_back(picks[i]->backend->name());
      if (i > 0) EXPECT_LT(picks[i - 1]->preference, picks[i]->preference) << "ties leave the order to the list";
    }
    EXPECT_EQ(names, expected_order(kind)) << memory_kind_name(kind);
  }
}

// Automatic dispatch picks, for each memory kind, the first backend of the
// preference order that can run here and take the memory.
TEST(RegistryList, DispatchFollowsThePreferenceOrder) {
  UnsetBackendEnv env;
  for (MemoryKind kind : {MemoryKind::unknown, MemoryKind::host, MemoryKind::device, MemoryKind::managed}) {
    const MemoryKind as = kind == MemoryKind::unknown ? MemoryKind::host : kind;
    const Backend* want = nullptr;
    for (const std::string& name : expected_order(as)) {
      const Backend* b = find_backend(name.c_str());
      ASSERT_NE(b, nullptr) << name;
      if (b->available() && b->accepts(as)) {
        want = b;
        break;
      }
    }
    DispatchRequest req;
    req.memory = kind;
    const Backend* got = nullptr;
    const Status s = select_backend(req, &got);
    if (want == nullptr) {
      EXPECT_EQ(s, Status::unsupported_memory) << memory_kind_name(kind);
    } else {
      ASSERT_EQ(s, Status::ok) << memory_kind_name(kind);
      EXPECT_EQ(got, want) << memory_kind_name(kind) << ": " << got->name() << " instead of " << want->name();
    }
  }
}

// Every backend the list offers a memory kind automatically can take it.
TEST(RegistryList, AutomaticKindsAreAccepted) {
  for (size_t i = 0; i < registry_size(); ++i) {
    const RegistryEntry& e = registry_entry(i);
    for (MemoryKind kind : {MemoryKind::host, MemoryKind::device, MemoryKind::managed})
      if (e.auto_memory & memory_bit(kind))
        EXPECT_TRUE(e.backend->accepts(kind)) << e.backend->name() << " " << memory_kind_name(kind);
    EXPECT_EQ(e.auto_memory & memory_bit(MemoryKind::unknown), 0u) << "unknown memory is dispatched as host";
  }
}

}  // namespace
}  // namespace splitzip
