// SPDX-License-Identifier: Apache-2.0
// splitzip: lossless compression of LLM KV caches (SplitZip exponent coding).
// C++ API. Caller-owned buffers, 64-bit sizes, no exceptions.
// Byte format: core/FORMAT.md. C API: splitzip.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "splitzip/export.h"

SZ_PUBLIC_BEGIN
namespace splitzip {

inline constexpr uint32_t kFormatVersion = 3;     // newest version decoders read; encoders write frame_version()
inline constexpr uint32_t kMinFormatVersion = 1;  // oldest version decoders read
inline constexpr uint32_t kHeaderSize = 64;
inline constexpr uint32_t kDefaultChunkLog2 = 10;
inline constexpr uint32_t kMinChunkLog2 = 6;
inline constexpr uint32_t kMaxChunkLog2 = 15;
inline constexpr uint64_t kMaxElems = uint64_t{1} << 56;

// fp8_e4m3 = OCP FP8 E4M3 ("fn": no infinities, NaN = S.1111.111), the FP8
// KV format of vLLM and SGLang; it has its own coded layout (FORMAT.md 4.7).
enum class Dtype : uint8_t { bf16 = 1, fp16 = 2, fp32 = 3, fp8_e5m2 = 4, fp8_e4m3 = 5 };

// Stable numbering: values never change meaning; new ones are appended.
enum class Status : int32_t {
  ok = 0,
  invalid_argument = 1,
  dst_too_small = 2,
  truncated = 3,
  bad_magic = 4,
  unsupported_version = 5,
  header_corrupt = 6,
  bad_dtype = 7,
  reserved_bits = 8,
  bad_chunk_size = 9,
  bad_header = 10,
  bad_codebook = 11,
  size_mismatch = 12,
  limit_exceeded = 13,
  bad_padding = 14,
  bad_escape_counts = 15,
  bad_escape_position = 16,
  bad_escape_value = 17,
  bad_code = 18,
  checksum_mismatch = 19,
  unknown_backend = 20,
  backend_unavailable = 21,
  unsupported_memory = 22,
  io_error = 23,
  out_of_memory = 24,
  device_error = 25,
  internal_error = 26,
  // Backend -> frame layer only: escapes exceed the budget, store instead.
  // Never returned by the public API.
  escape_overflow = 27,
  // The chosen backend does not implement the frame's (or the requested)
  // coding mode (FORMAT.md 4.1 byte 49); another backend may.
  unsupported_mode = 28,
  // The requested (dtype, mode) pair has no format; every pair of format
  // v3 has one, so no call returns it now (the value stays reserved).
  undefined_mode = 29,
  // The frame names a capacity table set (FORMAT.md 4.9) the decoder was
  // not given.
  missing_tables = 30,
};

const char* status_name(Status s);     // "BAD_MAGIC"
const char* status_message(Status s);  // one sentence for humans

const char* dtype_name(Dtype d);  // "bf16", "fp16", "fp32", "fp8_e5m2", "fp8_e4m3"
bool parse_dtype(const char* name, Dtype* out);  // accepts the names above only ("fp8" is not one)
uint32_t dtype_bytes(Dtype d);                   // 0 for an invalid dtype
bool dtype_valid(Dtype d);

// Where a buffer lives. Dispatch uses it to pick a backend.
enum class MemoryKind : uint8_t { unknown = 0, host = 1, device = 2, managed = 3 };
const char* memory_kind_name(MemoryKind k);
// Host unless CUDA is built, a device exists and the runtime says otherwise.
MemoryKind memory_kind_of(const void* p);

struct Codebook {
  Dtype dtype = Dtype::bf16;
  uint8_t count = 0;         // entries in use, 1..16
  uint8_t entries[16] = {};  // exponent values; code c -> entries[c]
};

// Checks FORMAT.md rule 9 on a codebook.
Status validate_codebook(const Codebook& cb);

// Exponent histogram, summed over any number of buffers.
class Histogram {
 public:
  explicit Histogram(Dtype dtype);
  void add(const void* data, uint64_t n_elems);
  void add_counts(const uint64_t counts[256]);
  // Top-16 by count, ties by smaller exponent (FORMAT.md section 3).
  Codebook codebook() const;
  uint64_t count(uint32_t exponent) const { return counts_[exponent & 255]; }
  uint64_t total() const { return total_; }
  Dtype dtype() const { return dtype_; }

 private:
  Dtype dtype_;
  uint64_t counts_[256] = {};
  uint64_t total_ = 0;
};

// Calibration over many buffers: one codebook from their pooled histogram.
Status calibrate(Dtype dtype, const void* const* buffers, const uint64_t* n_elems,
                 size_t n_buffers, Codebook* out);

inline constexpr uint32_t kCodebookFileSize = 32;
Status codebook_serialize(const Codebook& cb, uint8_t out[kCodebookFileSize]);
Status codebook_deserialize(const void* src, uint64_t size, Codebook* out);
Status codebook_save(const Codebook& cb, const char* path);
Status codebook_load(const char* path, Codebook* out);

// Capacity table set (FORMAT.md 4.9, 13): calibrated Huffman code lengths
// that capacity frames share instead of carrying their own tables, as a
// codebook is for the fast mode (or a dictionary for zstd). A frame names
// its set by id; the decoder must be given that set (MISSING_TABLES
// otherwise). Cheap to copy: copies share one immutable parsed set.
struct CapTables;  // core/capacity/tables.h
class TableSet {
 public:
  TableSet() = default;  // empty: holds no set
  bool empty() const { return t_ == nullptr; }
  uint64_t id() const;            // the id frames name; 0 when empty
  Dtype dtype() const;            // bf16 when empty
  uint32_t table_count() const;   // tables in the set; 0 when empty
  uint64_t serialized_size() const;  // bytes of the set file; 0 when empty
  // The set file's bytes (FORMAT.md 13) into dst; *written = their count.
  Status to_bytes(void* dst, uint64_t capacity, uint64_t* written) const;
  // Parses and validates a set file's bytes (the whole of src).
  static Status from_bytes(const void* src, uint64_t size, TableSet* out);
  Status save(const char* path) const;                 // never leaves a partial file
  static Status load(const char* path, TableSet* out);
  const CapTables* tables() const { return t_.get(); }  // for the codec layer

 private:
  friend Status calibrate_tables(Dtype, const void* const*, const uint64_t*, size_t, TableSet*, uint32_t);
  std::shared_ptr<const CapTables> t_;
};

// One table set from sample buffers of one dtype (held-out KV of the model
// the frames will hold), each buffer as a frame's elements would be (its
// element i codes with table i mod table_count). table_count: a power of 2
// in 1..32; 0 = kDefaultTableCount (FORMAT.md 13.1). 1: pages decode at 4-7x
// the speed of 32 tables, which add 0.7% (smollm2) to 2.8% (head_dim 8) of
// ratio (docs/DESIGN.md 7a).
inline constexpr uint32_t kDefaultTableCount = 1;
Status calibrate_tables(Dtype dtype, const void* const* buffers, const uint64_t* n_elems,
                        size_t n_buffers, TableSet* out, uint32_t table_count = 0);

// Exponent coding (FORMAT.md 4.1 byte 49): fast = the 4-bit codebook code
// (ratio <= 4/3, fastest); capacity = per-block Huffman-coded exponents
// (FORMAT.md 4.6, higher ratio). Recorded in each frame: decoders need no flag.
enum class Mode : uint8_t { fast = 0, capacity = 1 };

// Tensor descriptor (FORMAT.md 4.8): what the values are, so a frame
// round-trips shape, dtype, name and the source container's header without a
// side channel. Written after the payload of a frame (flag TENSOR); read
// with read_tensor_desc() without decoding. name and container point into
// caller memory (compress) or into the frame (read_tensor_desc).
inline constexpr uint32_t kMaxTensorRank = 8;
enum class TensorOrigin : uint8_t { unspecified = 0, numpy = 1, torch = 2 };
enum class ContainerKind : uint8_t { none = 0, npy = 1, safetensors = 2 };
struct TensorDesc {
  Dtype dtype = Dtype::bf16;
  uint32_t rank = 0;                   // 0..8
  uint64_t dims[kMaxTensorRank] = {};  // C order
  uint64_t total_elems = 0;            // product of dims; a stream of frames may split them
  TensorOrigin origin = TensorOrigin::unspecified;
  const char* name = nullptr;          // UTF-8, name_size bytes (no terminator needed)
  uint32_t name_size = 0;              // <= 65535
  ContainerKind container = ContainerKind::none;
  const uint8_t* container_header = nullptr;  // the .npy header / safetensors JSON header, verbatim
  uint32_t container_size = 0;         // <= 2^24
};

// Bytes the descriptor adds to a frame; 0 when it is invalid.
uint64_t tensor_desc_size(const TensorDesc& t);

struct CompressOptions {
  const Codebook* codebook = nullptr;  // null: dynamic top-16 of this buffer
  uint32_t chunk_log2 = kDefaultChunkLog2;
  bool checksum = true;           // v2 block checksum (XXH3-64 per 64 KiB, FORMAT.md 4.5); false: opt out
  const TensorDesc* tensor = nullptr;  // non-null: record it in the frame (FORMAT.md 4.8)
  const char* backend = nullptr;  // null: $SPLITZIP_BACKEND, else dispatch
  int threads = 0;                // 0: backend default (all cores for big buffers)
  Mode mode = Mode::fast;         // capacity: codebook and chunk_log2 are not used
  // Capacity mode only: code with this calibrated set (the frame names its
  // id and carries no tables); null: each block its own tables.
  const TableSet* tables = nullptr;
};

struct DecompressOptions {
  const char* backend = nullptr;
  int threads = 0;
  uint64_t max_output_bytes = 0;  // 0: bounded by dst_capacity only
  bool verify_checksum = true;    // verify the content checksum when the frame carries one
  // The table sets frames may name (an array of n_tables); a frame naming
  // another set fails with MISSING_TABLES, never wrong data.
  const TableSet* tables = nullptr;
  size_t n_tables = 0;
};

struct Result {
  Status status = Status::ok;
  uint64_t size = 0;              // bytes written to dst
  const char* backend = nullptr;  // name of the backend that ran
  // CHECKSUM_MISMATCH on a v2 frame: index of the first checksum block
  // (2^16 original bytes each) whose check failed; all ones when unknown.
  uint64_t corrupt_block = ~uint64_t{0};
  bool ok() const { return status == Status::ok; }
};

// Exact worst-case frame size (FORMAT.md section 5); with a tensor
// descriptor add tensor_desc_size().
uint64_t compress_bound(Dtype dtype, uint64_t n_elems);

// One frame from n_elems values. Never writes more than compress_bound bytes
// and never past dst_capacity.
Result compress(Dtype dtype, const void* src, uint64_t n_elems, void* dst,
                uint64_t dst_capacity, const CompressOptions& opts = {});

// Decodes the frame at the start of src (src_size may extend past it).
Result decompress(const void* src, uint64_t src_size, void* dst, uint64_t dst_capacity,
                  const DecompressOptions& opts = {});

// Decodes every frame of a stream of back-to-back frames (FORMAT.md 7).
Result decompress_frames(const void* src, uint64_t src_size, void* dst,
                         uint64_t dst_capacity, const DecompressOptions& opts = {});

// Batched pages (paged KV caches: vLLM / SGLang blocks), one codebook or
// table set for all of them (the options'). Each item is an independent frame, exactly the bytes compress() / decompress() write for
// it alone: pages are evicted and fetched one by one, so a page must decode
// without its neighbours. Threads run across items (opts.threads: 0 = the
// backend default, all cores once the batch is large), each item on one
// thread. results[i] is item i's outcome; the call returns ok when every
// item succeeded, else the status of the first item (lowest index) that
// failed, and invalid_argument (no item touched) for null arrays.
// DecompressOptions::max_output_bytes bounds each item. An item's tensor
// descriptor (else CompressOptions::tensor, for every item) is recorded as
// compress() records it; dst_capacity must then also hold
// tensor_desc_size() bytes.
struct CompressItem {
  const void* src = nullptr;  // n_elems values of the batch's dtype
  uint64_t n_elems = 0;
  void* dst = nullptr;        // the item's frame; compress_bound(dtype, n_elems) is always enough
  uint64_t dst_capacity = 0;
  const TensorDesc* tensor = nullptr;  // FORMAT.md 4.8; null: CompressOptions::tensor
  // The item's capacity table set (pages of several layers in one call,
  // each with its layer's set); null: CompressOptions::tables.
  const TableSet* tables = nullptr;
};
struct DecompressItem {
  const void* src = nullptr;  // one frame at src (src_size may extend past it)
  uint64_t src_size = 0;
  void* dst = nullptr;
  uint64_t dst_capacity = 0;
};
Status compress_batch(Dtype dtype, const CompressItem* items, size_t count, Result* results,
                      const CompressOptions& opts = {});
Status decompress_batch(const DecompressItem* items, size_t count, Result* results,
                        const DecompressOptions& opts = {});

struct FrameInfo {
  uint32_t version = 0;
  Dtype dtype = Dtype::bf16;
  bool stored = false;
  bool has_checksum = false;
  uint32_t chunk_log2 = 0;
  uint64_t n_elems = 0;
  uint64_t escape_count = 0;
  uint64_t frame_size = 0;
  uint64_t decoded_size = 0;  // n_elems * dtype_bytes
  uint64_t content_checksum = 0;
  uint32_t checksum_block_log2 = 0;  // v2 with checksum: log2 of the checksum block bytes
  uint64_t checksum_blocks = 0;      // v2 with checksum: entries of the block-check stream
  Mode mode = Mode::fast;            // v2 byte 49; stored frames are fast (0)
  Codebook codebook;
  bool has_tensor = false;           // v2 flag TENSOR: a tensor descriptor (FORMAT.md 4.8)
  bool has_tables = false;           // v3 flag TABLES: the frame names a capacity table set (FORMAT.md 4.9)
  uint64_t tables_id = 0;            // that set's id; 0 without TABLES
};

// The tensor descriptor of the frame at src (rules 1-11 on its header, then
// the descriptor's own checks) without decoding the values. ok and
// *present = false when the frame has none. Pointers in *out point into src.
Status read_tensor_desc(const void* src, uint64_t src_size, TensorDesc* out, bool* present);

// Reads and validates the header (rules 1-11) without decoding.
Status frame_info(const void* src, uint64_t src_size, FrameInfo* out);

// Rules 1-10 on the 64 header bytes at src alone: lets a reader that streams
// learn frame_size before it has the rest of the frame.
Status frame_header_info(const void* src, FrameInfo* out);

// One frame of a stream, as the iterator yields it.
struct FrameView {
  const uint8_t* data = nullptr;  // frame start; null once the stream has ended
  uint64_t size = 0;              // frame_size
  uint64_t offset = 0;            // from the stream start
  FrameInfo info;
};

// Walks a stream of back-to-back frames in host memory (FORMAT.md 7),
// checking each header (rules 1-11) when it reaches it. An empty stream
// (0 bytes) has no frames. Every entry point that reads streams uses it.
class FrameIterator {
 public:
  FrameIterator(const void* src, uint64_t size) : src_(static_cast<const uint8_t*>(src)), size_(size) {}
  // ok and view->data set: the next frame. ok and view->data null: the end.
  // Any other status: the frame at offset() is bad; the walk stops there.
  Status next(FrameView* view);
  uint64_t offset() const { return pos_; }

 private:
  const uint8_t* src_;
  uint64_t size_;
  uint64_t pos_ = 0;
  Status failed_ = Status::ok;
};

// XXH64, seed 0, as used by format v1.
uint64_t xxh64(const void* data, uint64_t size, uint64_t seed = 0);
// XXH3-64, seed 0, as used by format v2 (header check, block checksums).
uint64_t xxh3_64(const void* data, uint64_t size);

// Names of the registered backends, in registry order, and whether each can run.
size_t backend_count();
const char* backend_name(size_t index);
bool backend_available(const char* name);

// Why a backend cannot run here ("no CUDA driver ...", "not compiled into
// this build"), or null when it is available. Static string.
const char* backend_unavailable_reason(const char* name);

// Version of the loaded library ("0.1.0"; SZ_VERSION_STRING in
// <splitzip/version.h> is the one
// compiled against) and its ABI version (libsplitzip.so.<abi>).
const char* version();
uint32_t abi_version();

}  // namespace splitzip
SZ_PUBLIC_END
