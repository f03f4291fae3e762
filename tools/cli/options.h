/* SPDX-License-Identifier: Apache-2.0 */
// Command-line options of the splitzip commands, parsed with CLI11: --name
// VALUE, --name=VALUE, -x VALUE, -xVALUE, bundled short flags (-fk), "--" to
// end options, "-" as a positional. The help text stays the command's own
// (one source for --help, docs/CLI.md and the man page).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "splitzip/splitzip.hpp"

namespace CLI {
class App;
}

namespace szcli {

struct OptSpec {
  const char* name;   // long name without dashes
  char short_name;    // 0: none
  bool takes_value;
};

// Pseudo-option of commands that take zstd's compression levels (`-1` ..
// `-22`, also bundled as `-19f`, `--fast[=N]`, `--ultra`): values("level")
// are those words as given. Commands without it refuse them by name, so a
// level is never read as a file name.
constexpr const char* kLevelOption = "level";

class Args {
 public:
  // Parses argv[first..argc). Throws CliError(kExitUsage) on unknown options
  // or a missing value; an option that splitzip knows elsewhere (say -c in
  // inspect) is named as not taken by this command. `command` names the
  // subcommand in messages.
  Args(const char* command, std::vector<OptSpec> specs, int argc, char** argv, int first);
  ~Args();
  Args(const Args&) = delete;
  Args& operator=(const Args&) = delete;

  bool has(const char* name) const;
  // Last value given for an option, or null.
  const std::string* value(const char* name) const;
  // Every value given for an option, in order.
  std::vector<std::string> values(const char* name) const;
  const std::vector<std::string>& positional() const { return positional_; }

  // Typed getters; each throws CliError(kExitUsage) with a clear message.
  uint64_t u64(const char* name, uint64_t fallback) const;
  double seconds(const char* name, double fallback) const;
  // Accepts K/M/G/T (and KiB/MiB/GiB/TiB, binary) suffixes.
  uint64_t size(const char* name, uint64_t fallback) const;
  bool dtype(splitzip::Dtype* out) const;  // false when --dtype absent

 private:
  const OptSpec* spec(const char* name) const;

  const char* command_;
  std::vector<OptSpec> specs_;
  std::unique_ptr<CLI::App> app_;
  std::vector<std::vector<std::string>> given_;  // per spec: its values ("" per flag use)
  std::vector<std::string> positional_;
};

// Parses "64G", "1048576", "512MiB". False on junk or overflow.
bool parse_size(const std::string& text, uint64_t* out);
bool parse_u64(const std::string& text, uint64_t* out);

// Parses --dtype's text (aliases included) for `command`'s messages; throws
// CliError(kExitUsage) for "fp8" (ambiguous) and unknown names.
splitzip::Dtype parse_dtype_option(const char* command, const std::string& text);

}  // namespace szcli
