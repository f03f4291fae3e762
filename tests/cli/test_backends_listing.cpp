// SPDX-License-Identifier: Apache-2.0
// `splitzip backends` and `splitzip -V` print the registry list: every entry
// in registry order, available or not with the backend's own reason.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "backends/registry.h"
#include "splitzip/splitzip.hpp"

namespace splitzip {
namespace {

std::vector<std::string> run_lines(const std::string& args) {
  const std::string cmd = std::string("'") + SPLITZIP_CLI + "' " + args + " 2>&1";
  std::vector<std::string> lines;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return lines;
  std::string line;
  for (int c; (c = std::fgetc(p)) != EOF;) {
    if (c == '\n') {
      lines.push_back(line);
      line.clear();
    } else {
      line.push_back(static_cast<char>(c));
    }
  }
  if (!line.empty()) lines.push_back(line);
  EXPECT_EQ(pclose(p), 0) << cmd;
  return lines;
}

TEST(CliBackends, ListsEveryRegistryEntryInOrder) {
  const std::vector<std::string> lines = run_lines("backends");
  ASSERT_EQ(lines.size(), registry_size());
  for (size_t i = 0; i < registry_size(); ++i) {
    const Backend* b = registry_at(i);
    const std::string name = b->name();
    ASSERT_EQ(lines[i].compare(0, name.size() + 1, name + " "), 0) << lines[i];
    const std::string rest = lines[i].substr(lines[i].find_first_not_of(' ', name.size()));
    if (b->available())
      EXPECT_EQ(rest, "available") << name;
    else
      EXPECT_EQ(rest, std::string("not available: ") + backend_unavailable_reason(b->name())) << name;
  }
}

TEST(CliBackends, VersionNamesTheSameList) {
  std::string compiled = "backends compiled in:", available = "backends available:  ";
  for (size_t i = 0; i < registry_size(); ++i) {
    compiled += std::string(" ") + registry_at(i)->name();
    if (registry_at(i)->available()) available += std::string(" ") + registry_at(i)->name();
  }
  const std::vector<std::string> lines = run_lines("-V");
  bool saw_compiled = false, saw_available = false;
  for (const std::string& l : lines) {
    saw_compiled = saw_compiled || l == compiled;
    saw_available = saw_available || l == available;
  }
  EXPECT_TRUE(saw_compiled) << compiled;
  EXPECT_TRUE(saw_available) << available;
}

}  // namespace
}  // namespace splitzip
