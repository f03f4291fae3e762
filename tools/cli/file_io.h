/* SPDX-License-Identifier: Apache-2.0 */
// File input (mmap, or read for stdin and special files) and crash-safe
// output: a temp file in the target directory, fsync, then rename; the temp
// is removed on error and on SIGINT/SIGTERM/SIGHUP; SIGXFSZ is ignored, so a
// file size limit is a write error (EFBIG).
#pragma once

#include <sys/types.h>
#include <time.h>

#include <cstdint>
#include <memory>
#include <string>

namespace szcli {

// What an output inherits from its input, as zstd does: permission bits,
// times, and owner and group where the process may set them.
struct FileMeta {
  bool valid = false;  // false: stdin or not a regular file (nothing to copy)
  mode_t mode = 0;     // permission bits only (0777)
  uid_t uid = 0;
  gid_t gid = 0;
  timespec atime{}, mtime{};
};
// The metadata of a regular file at path; valid = false otherwise.
FileMeta file_meta(const std::string& path);

// Bytes of a whole input. Regular files are memory-mapped; stdin ("-") and
// files that cannot be mapped are read into memory.
class InputBytes {
 public:
  InputBytes() = default;
  ~InputBytes();
  InputBytes(const InputBytes&) = delete;
  InputBytes& operator=(const InputBytes&) = delete;
  InputBytes(InputBytes&& o) noexcept;
  InputBytes& operator=(InputBytes&& o) noexcept;

  // Throws CliError(kExitIo) when the file cannot be opened or read.
  static InputBytes open(const std::string& path);

  const uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }
  bool is_stdin() const { return path_ == "-"; }
  // True when data() is a mapping of the file (not a copy in memory).
  bool mapped() const { return map_ != nullptr; }

 private:
  void release();
  std::string path_;
  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
  void* map_ = nullptr;  // non-null when mmapped
  std::unique_ptr<uint8_t[]> heap_;
};

// Reads up to `want` bytes from fd, retrying short reads; returns bytes read
// (less than want only at end of file). Throws CliError(kExitIo) on error.
uint64_t read_full(int fd, uint8_t* dst, uint64_t want, const std::string& what);

// An input read sequentially with read(): a file, a FIFO or stdin ("-").
// Nothing is mapped, so memory stays at the caller's buffers.
class InputFd {
 public:
  // Throws CliError(kExitIo) when the file cannot be opened or is a directory.
  explicit InputFd(const std::string& path);
  ~InputFd();
  InputFd(const InputFd&) = delete;
  InputFd& operator=(const InputFd&) = delete;

  int fd() const { return fd_; }
  bool regular() const { return regular_; }
  // Regular files: bytes from the current position to the end; else 0.
  uint64_t size() const { return size_; }
  // Regular files: the starting position (stdin may be a file opened mid-way).
  uint64_t start() const { return start_; }
  // Reads up to want bytes (short only at the end); throws on error.
  uint64_t read(uint8_t* dst, uint64_t want);
  // Regular files: reads up to want bytes at offset `off` from start(),
  // without moving the file position (safe from several threads at once).
  uint64_t read_at(uint8_t* dst, uint64_t want, uint64_t off) const;
  const std::string& what() const { return what_; }
  // Regular files: limits the input to `size` bytes at absolute file offset
  // `offset` (a container's payload), and moves the file position there.
  void restrict_to(uint64_t offset, uint64_t size);

 private:
  int fd_ = -1;
  bool own_ = false;
  bool regular_ = false;
  uint64_t size_ = 0, start_ = 0;
  std::string what_;
};

// An output file that appears under its final name only when complete.
class AtomicOutput {
 public:
  // path "-" writes to stdout, an existing device or FIFO is written in
  // place. Otherwise refuses an existing file unless force (CliError
  // kExitIo) and creates a temp file next to it. sync: fsync the file and
  // its directory in commit() (so the output survives a power loss).
  // like: when valid, the temp file is created with no permission beyond
  // like's owner bits, and commit() gives it like's owner and group (where
  // allowed), permission bits and times before it takes its name. Group
  // bits are dropped when the group could not be set.
  AtomicOutput(const std::string& path, bool force, bool sync = true, const FileMeta& like = FileMeta());
  ~AtomicOutput();  // removes the temp file unless commit() succeeded
  AtomicOutput(const AtomicOutput&) = delete;
  AtomicOutput& operator=(const AtomicOutput&) = delete;

  void write(const void* data, uint64_t size);
  // True when the output is a temp file, so write_at() may be used (from
  // several threads at once, on disjoint ranges) instead of write().
  bool positional() const { return !is_stdout() && !direct_; }
  void write_at(const void* data, uint64_t size, uint64_t offset);
  // After write_at(): the output's total size, for written().
  void set_written(uint64_t size) { written_ = size; }
  // fsync (when sync) + rename (no replace without force). Throws on failure.
  void commit();
  const std::string& path() const { return path_; }
  bool is_stdout() const { return path_ == "-"; }
  uint64_t written() const { return written_; }

 private:
  std::string path_, tmp_;
  bool force_ = false;
  bool sync_ = true;
  int fd_ = -1;
  int slot_ = -1;  // signal-cleanup registration
  bool committed_ = false;
  bool direct_ = false;  // existing non-regular target (device, FIFO): written in place
  FileMeta like_;
  uint64_t written_ = 0;
};

// True when a and b name the same existing file (same device and inode).
bool same_file(const std::string& a, const std::string& b);
bool path_exists(const std::string& path);
bool is_regular_file(const std::string& path);

// Installs the SIGINT/SIGTERM/SIGHUP handler that unlinks registered temp
// files and then dies by the same signal. Idempotent.
void install_signal_cleanup();

}  // namespace szcli
