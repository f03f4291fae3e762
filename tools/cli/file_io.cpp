// SPDX-License-Identifier: Apache-2.0
#include "tools/cli/file_io.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "tools/cli/errors.h"

namespace szcli {

namespace {

std::string errno_text() { return std::strerror(errno); }

// ---- signal-time cleanup ---------------------------------------------------
// Fixed slots so the handler touches no heap: it only reads a path and
// calls unlink(), which is async-signal-safe.
constexpr int kSlots = 8;
constexpr size_t kPathMax = 4096;
char g_tmp_paths[kSlots][kPathMax];
volatile sig_atomic_t g_tmp_used[kSlots];

void on_signal(int sig) {
  for (int i = 0; i < kSlots; ++i)
    if (g_tmp_used[i]) unlink(g_tmp_paths[i]);
  signal(sig, SIG_DFL);
  raise(sig);
}

int register_tmp(const std::string& path) {
  if (path.size() >= kPathMax) return -1;
  for (int i = 0; i < kSlots; ++i) {
    if (!g_tmp_used[i]) {
      std::memcpy(g_tmp_paths[i], path.c_str(), path.size() + 1);
      g_tmp_used[i] = 1;
      return i;
    }
  }
  return -1;
}

void unregister_tmp(int slot) {
  if (slot >= 0) g_tmp_used[slot] = 0;
}

std::string dir_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string base_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

void install_signal_cleanup() {
  static bool done = false;
  if (done) return;
  done = true;
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
}

bool path_exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

bool is_regular_file(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  if (stat(a.c_str(), &sa) != 0 || stat(b.c_str(), &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

uint64_t read_full(int fd, uint8_t* dst, uint64_t want, const std::string& what) {
  uint64_t got = 0;
  while (got < want) {
    const uint64_t chunk = std::min<uint64_t>(want - got, uint64_t{1} << 30);
    const ssize_t r = ::read(fd, dst + got, chunk);
    if (r < 0) {
      if (errno == EINTR) continue;
      fail(kExitIo, what + ": read failed: " + errno_text());
    }
    if (r == 0) break;
    got += static_cast<uint64_t>(r);
  }
  return got;
}

// ---- InputBytes -------------------------------------------------------------

InputBytes::~InputBytes() { release(); }

InputBytes::InputBytes(InputBytes&& o) noexcept { *this = std::move(o); }

InputBytes& InputBytes::operator=(InputBytes&& o) noexcept {
  if (this != &o) {
    release();
    path_ = std::move(o.path_);
    data_ = o.data_;
    size_ = o.size_;
    map_ = o.map_;
    heap_ = std::move(o.heap_);
    o.data_ = nullptr;
    o.size_ = 0;
    o.map_ = nullptr;
  }
  return *this;
}

void InputBytes::release() {
  if (map_) munmap(map_, size_);
  map_ = nullptr;
  data_ = nullptr;
  size_ = 0;
  heap_.reset();
}

InputBytes InputBytes::open(const std::string& path) {
  InputBytes in;
  in.path_ = path;
  int fd = 0;
  if (path != "-") {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) fail(kExitIo, path + ": cannot open: " + errno_text());
    struct stat st;
    if (fstat(fd, &st) != 0) {
      const std::string e = errno_text();
      ::close(fd);
      fail(kExitIo, path + ": cannot stat: " + e);
    }
    if (S_ISDIR(st.st_mode)) {
      ::close(fd);
      fail(kExitIo, path + ": is a directory");
    }
    if (S_ISREG(st.st_mode) && st.st_size > 0) {
      void* m = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
      if (m != MAP_FAILED) {
        ::close(fd);
        madvise(m, static_cast<size_t>(st.st_size), MADV_SEQUENTIAL);
        in.map_ = m;
        in.data_ = static_cast<const uint8_t*>(m);
        in.size_ = static_cast<uint64_t>(st.st_size);
        return in;
      }
    }
  }
  // Pipes, stdin and unmappable files: read everything, doubling the buffer.
  uint64_t cap = 1 << 20, size = 0;
  std::unique_ptr<uint8_t[]> buf(new uint8_t[cap]);
  while (true) {
    if (size == cap) {
      const uint64_t ncap = cap * 2;
      std::unique_ptr<uint8_t[]> nb(new uint8_t[ncap]);
      std::memcpy(nb.get(), buf.get(), size);
      buf = std::move(nb);
      cap = ncap;
    }
    uint64_t got = 0;
    try {
      got = read_full(fd, buf.get() + size, cap - size, path == "-" ? "stdin" : path);
    } catch (...) {
      if (fd != 0) ::close(fd);
      throw;
    }
    size += got;
    if (size < cap) break;
  }
  if (fd != 0) ::close(fd);
  in.heap_ = std::move(buf);
  in.data_ = in.heap_.get();
  in.size_ = size;
  return in;
}

// ---- AtomicOutput -----------------------------------------------------------

// ---- InputFd ----------------------------------------------------------------

InputFd::InputFd(const std::string& path) : what_(path == "-" ? std::string("stdin") : path) {
  if (path == "-") {
    fd_ = 0;
  } else {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) fail(kExitIo, path + ": cannot open: " + errno_text());
    own_ = true;
  }
  struct stat st;
  if (fstat(fd_, &st) != 0) fail(kExitIo, what_ + ": cannot stat: " + errno_text());
  if (S_ISDIR(st.st_mode)) fail(kExitIo, what_ + ": is a directory");
  if (S_ISREG(st.st_mode)) {
    const off_t pos = lseek(fd_, 0, SEEK_CUR);
    if (pos >= 0 && pos <= st.st_size) {
      regular_ = true;
      start_ = static_cast<uint64_t>(pos);
      size_ = static_cast<uint64_t>(st.st_size - pos);
      posix_fadvise(fd_, pos, 0, POSIX_FADV_SEQUENTIAL);
    }
  }
}

InputFd::~InputFd() {
  if (own_ && fd_ >= 0) ::close(fd_);
}

uint64_t InputFd::read(uint8_t* dst, uint64_t want) { return read_full(fd_, dst, want, what_); }

void InputFd::restrict_to(uint64_t offset, uint64_t size) {
  if (!regular_) fail(kExitInternal, what_ + ": not a regular file");
  if (lseek(fd_, static_cast<off_t>(offset), SEEK_SET) < 0) fail(kExitIo, what_ + ": cannot seek: " + errno_text());
  start_ = offset;
  size_ = size;
}

uint64_t InputFd::read_at(uint8_t* dst, uint64_t want, uint64_t off) const {
  uint64_t got = 0;
  while (got < want) {
    const uint64_t chunk = std::min<uint64_t>(want - got, uint64_t{1} << 30);
    const ssize_t r = ::pread(fd_, dst + got, chunk, static_cast<off_t>(start_ + off + got));
    if (r < 0) {
      if (errno == EINTR) continue;
      fail(kExitIo, what_ + ": read failed: " + errno_text());
    }
    if (r == 0) break;
    got += static_cast<uint64_t>(r);
  }
  return got;
}

FileMeta file_meta(const std::string& path) {
  FileMeta m;
  struct stat st;
  if (path == "-" || stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return m;
  m.valid = true;
  m.mode = st.st_mode & 0777;
  m.uid = st.st_uid;
  m.gid = st.st_gid;
  m.atime = st.st_atim;
  m.mtime = st.st_mtim;
  return m;
}

AtomicOutput::AtomicOutput(const std::string& path, bool force, bool sync, const FileMeta& like)
    : path_(path), force_(force), sync_(sync), like_(like) {
  // A file size limit (ulimit -f) must be a write error (EFBIG, exit 2,
  // temp removed), not a SIGXFSZ that kills the process mid-write.
  signal(SIGXFSZ, SIG_IGN);
  if (path == "-") {
    fd_ = 1;
    return;
  }
  struct stat st;
  if (stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) fail(kExitIo, path + ": output is a directory");
    if (!S_ISREG(st.st_mode)) {
      // /dev/null, a FIFO, a tty: nothing to replace atomically (renaming
      // over a device node would destroy it); write straight into it.
      fd_ = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd_ < 0) fail(kExitIo, path + ": cannot open for writing: " + errno_text());
      direct_ = true;
      return;
    }
    if (!force) fail(kExitIo, path + ": output exists (use -f to overwrite)");
  }
  install_signal_cleanup();
  std::string tmpl = dir_of(path) + "/." + base_of(path) + ".splitzip-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  // Block the cleanup signals between creating and registering the temp, so
  // no signal can leave it behind.
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  sigaddset(&block, SIGHUP);
  sigprocmask(SIG_BLOCK, &block, &old);
  fd_ = mkostemp(buf.data(), O_CLOEXEC);
  const int saved = errno;
  if (fd_ >= 0) {
    tmp_ = buf.data();
    slot_ = register_tmp(tmp_);
  }
  sigprocmask(SIG_SETMASK, &old, nullptr);
  if (fd_ < 0) {
    errno = saved;
    fail(kExitIo, path + ": cannot create temporary file in " + dir_of(path) + ": " + errno_text());
  }
  if (like_.valid) {
    // Until commit() the temp is owner-only and never wider than the input:
    // a 0600 input never has a world-readable copy, even for a moment.
    if (fchmod(fd_, like_.mode & 0700) != 0)
      fail(kExitIo, path + ": cannot set permissions: " + errno_text());
    return;
  }
  // mkstemp makes 0600; give the file the usual 0666 & ~umask.
  const mode_t mask = umask(0);
  umask(mask);
  fchmod(fd_, 0666 & ~mask);
}

namespace {

// Owner and group first (chown may clear mode bits), then the mode, then
// the times (after the last write). Owner and group are best effort, as in
// zstd; the mode is not: a file we cannot narrow must not take the name.
void apply_meta(int fd, const FileMeta& m, const std::string& path) {
  mode_t mode = m.mode;
  if (fchown(fd, m.uid, m.gid) != 0 && fchown(fd, static_cast<uid_t>(-1), m.gid) != 0) {
    struct stat st;
    // Group bits would grant the input's access to another group.
    if (fstat(fd, &st) != 0 || st.st_gid != m.gid) mode &= ~static_cast<mode_t>(070);
  }
  if (fchmod(fd, mode) != 0) fail(kExitIo, path + ": cannot set permissions: " + errno_text());
  const timespec times[2] = {m.atime, m.mtime};
  if (futimens(fd, times) != 0) fail(kExitIo, path + ": cannot set times: " + errno_text());
}

}  // namespace

AtomicOutput::~AtomicOutput() {
  if (is_stdout()) return;
  if (direct_) {
    if (fd_ >= 0) ::close(fd_);
    return;
  }
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !tmp_.empty()) unlink(tmp_.c_str());
  unregister_tmp(slot_);
}

void AtomicOutput::write(const void* data, uint64_t size) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  uint64_t done = 0;
  while (done < size) {
    const uint64_t chunk = std::min<uint64_t>(size - done, uint64_t{1} << 30);
    const ssize_t w = ::write(fd_, p + done, chunk);
    if (w < 0) {
      if (errno == EINTR) continue;
      fail(kExitIo, (is_stdout() ? std::string("stdout") : path_) + ": write failed: " + errno_text());
    }
    done += static_cast<uint64_t>(w);
  }
  written_ += size;
}

void AtomicOutput::write_at(const void* data, uint64_t size, uint64_t offset) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  uint64_t done = 0;
  while (done < size) {
    const uint64_t chunk = std::min<uint64_t>(size - done, uint64_t{1} << 30);
    const ssize_t w = ::pwrite(fd_, p + done, chunk, static_cast<off_t>(offset + done));
    if (w < 0) {
      if (errno == EINTR) continue;
      fail(kExitIo, path_ + ": write failed: " + errno_text());
    }
    done += static_cast<uint64_t>(w);
  }
}

void AtomicOutput::commit() {
  if (is_stdout()) return;
  if (direct_) {
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) fail(kExitIo, path_ + ": close failed: " + errno_text());
    return;
  }
  if (like_.valid) apply_meta(fd_, like_, path_);
  if (sync_ && fsync(fd_) != 0) fail(kExitIo, path_ + ": fsync failed: " + errno_text());
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail(kExitIo, path_ + ": close failed: " + errno_text());
  if (force_) {
    if (rename(tmp_.c_str(), path_.c_str()) != 0) fail(kExitIo, path_ + ": rename failed: " + errno_text());
  } else {
    // link() refuses to replace, closing the race between the existence
    // check and now; filesystems without hard links fall back to a check.
    if (link(tmp_.c_str(), path_.c_str()) == 0) {
      unlink(tmp_.c_str());
    } else if (errno == EEXIST) {
      fail(kExitIo, path_ + ": output exists (use -f to overwrite)");
    } else {
      if (path_exists(path_)) fail(kExitIo, path_ + ": output exists (use -f to overwrite)");
      if (rename(tmp_.c_str(), path_.c_str()) != 0) fail(kExitIo, path_ + ": rename failed: " + errno_text());
    }
  }
  committed_ = true;
  if (!sync_) return;
  // Make the rename itself durable.
  const int dfd = ::open(dir_of(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    fsync(dfd);
    ::close(dfd);
  }
}

}  // namespace szcli
