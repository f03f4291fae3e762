/* SPDX-License-Identifier: Apache-2.0 */
/* splitzip C API (C99). Mirrors splitzip.hpp: caller-owned buffers, 64-bit
 * sizes, status codes with the same numbers. Every options pointer may be
 * NULL (defaults); a zero-initialised options struct also means defaults.
 * Byte format: core/FORMAT.md. */
#ifndef SPLITZIP_SPLITZIP_H
#define SPLITZIP_SPLITZIP_H

#include <stddef.h>
#include <stdint.h>

#include "splitzip/export.h"

#ifdef __cplusplus
extern "C" {
#endif
SZ_PUBLIC_BEGIN

#define SZ_FORMAT_VERSION 3     /* newest version decoders read; encoders write 2 unless a frame needs 3 */
#define SZ_MIN_FORMAT_VERSION 1 /* oldest version decoders read */
#define SZ_HEADER_SIZE 64
#define SZ_DEFAULT_CHUNK_LOG2 10
#define SZ_MIN_CHUNK_LOG2 6
#define SZ_MAX_CHUNK_LOG2 15
#define SZ_CODEBOOK_FILE_SIZE 32
/* sz_compress_options.mode (FORMAT.md 4.1 byte 49, 4.6) */
#define SZ_MODE_FAST 0     /* 4-bit exponent codes (mode 0) */
#define SZ_MODE_CAPACITY 1 /* per-block Huffman-coded exponents (mode 1) */

/* Stable numbering, identical to splitzip::Status. */
typedef enum sz_status {
  SZ_OK = 0,
  SZ_INVALID_ARGUMENT = 1,
  SZ_DST_TOO_SMALL = 2,
  SZ_TRUNCATED = 3,
  SZ_BAD_MAGIC = 4,
  SZ_UNSUPPORTED_VERSION = 5,
  SZ_HEADER_CORRUPT = 6,
  SZ_BAD_DTYPE = 7,
  SZ_RESERVED_BITS = 8,
  SZ_BAD_CHUNK_SIZE = 9,
  SZ_BAD_HEADER = 10,
  SZ_BAD_CODEBOOK = 11,
  SZ_SIZE_MISMATCH = 12,
  SZ_LIMIT_EXCEEDED = 13,
  SZ_BAD_PADDING = 14,
  SZ_BAD_ESCAPE_COUNTS = 15,
  SZ_BAD_ESCAPE_POSITION = 16,
  SZ_BAD_ESCAPE_VALUE = 17,
  SZ_BAD_CODE = 18,
  SZ_CHECKSUM_MISMATCH = 19,
  SZ_UNKNOWN_BACKEND = 20,
  SZ_BACKEND_UNAVAILABLE = 21,
  SZ_UNSUPPORTED_MEMORY = 22,
  SZ_IO_ERROR = 23,
  SZ_OUT_OF_MEMORY = 24,
  SZ_DEVICE_ERROR = 25,
  SZ_INTERNAL_ERROR = 26,
  /* 27 is internal (escape overflow), never returned */
  SZ_UNSUPPORTED_MODE = 28,
  SZ_UNDEFINED_MODE = 29, /* the (dtype, mode) pair has no format (none since format v3) */
  SZ_MISSING_TABLES = 30  /* the frame names a capacity table set the decoder was not given */
} sz_status;

typedef enum sz_dtype { SZ_BF16 = 1, SZ_FP16 = 2, SZ_FP32 = 3, SZ_FP8_E5M2 = 4, SZ_FP8_E4M3 = 5 } sz_dtype;

/* A capacity table set (FORMAT.md 4.9, 13): calibrated Huffman code lengths
 * shared by many capacity frames, each of which names the set by id. An
 * opaque, immutable handle: made by sz_tables_calibrate / _from_bytes /
 * _load, released by sz_tables_free; one handle may serve any number of
 * calls at once. */
typedef struct sz_tables sz_tables;

typedef struct sz_codebook {
  int32_t dtype;       /* an sz_dtype value */
  uint8_t count;       /* entries in use, 1..16 */
  uint8_t entries[16]; /* code c -> entries[c]; unused entries 0 */
} sz_codebook;

/* Tensor descriptor (FORMAT.md 4.8), as splitzip::TensorDesc. */
#define SZ_MAX_TENSOR_RANK 8
typedef struct sz_tensor_desc {
  int32_t dtype;                    /* an sz_dtype value */
  uint32_t rank;                    /* 0..8 */
  uint64_t dims[SZ_MAX_TENSOR_RANK];
  uint64_t total_elems;             /* product of dims */
  int32_t origin;                   /* 0 unspecified, 1 numpy, 2 torch */
  const char* name;                 /* UTF-8, name_size bytes */
  uint32_t name_size;
  int32_t container;                /* 0 none, 1 .npy header, 2 safetensors JSON header */
  const uint8_t* container_header;  /* verbatim */
  uint32_t container_size;
} sz_tensor_desc;

typedef struct sz_compress_options {
  const sz_codebook* codebook; /* NULL: dynamic top-16 of this buffer */
  uint32_t chunk_log2;         /* 0: default (10) */
  int no_checksum;             /* non-zero: no block checksum (it is on by default, also with NULL options) */
  const char* backend;         /* NULL: $SPLITZIP_BACKEND, else dispatch */
  int threads;                 /* 0: backend default */
  int mode;                    /* SZ_MODE_FAST (0) or SZ_MODE_CAPACITY (1); recorded in the
                                  frame (byte 49), decoders need no flag */
  const sz_tensor_desc* tensor; /* non-NULL: record it in the frame (FORMAT.md 4.8) */
  const sz_tables* tables;      /* SZ_MODE_CAPACITY only: code with this calibrated set (the
                                   frame names its id); NULL: each block its own tables */
} sz_compress_options;

typedef struct sz_decompress_options {
  const char* backend;
  int threads;
  uint64_t max_output_bytes; /* 0: bounded by dst_capacity only */
  int skip_checksum;         /* non-zero: do not verify a stored checksum */
  const sz_tables* const* tables; /* n_tables sets frames may name; a frame naming another */
  size_t n_tables;                /* set fails with SZ_MISSING_TABLES */
} sz_decompress_options;

/* Output of the codec calls; may be NULL. */
#define SZ_NO_BLOCK UINT64_MAX

typedef struct sz_result {
  uint64_t size;       /* bytes written to dst */
  const char* backend; /* backend that ran (static string) or NULL */
  /* SZ_CHECKSUM_MISMATCH of a v2 frame: index of the first checksum block
   * (2^16 original bytes each) whose check failed; SZ_NO_BLOCK otherwise. */
  uint64_t corrupt_block;
} sz_result;

typedef struct sz_frame_info {
  uint32_t version;
  int32_t dtype;
  int stored;
  int has_checksum;
  uint32_t chunk_log2;
  uint64_t n_elems;
  uint64_t escape_count; /* mode SZ_MODE_FAST: escapes; SZ_MODE_CAPACITY: coded exponent bytes */
  uint64_t frame_size;
  uint64_t decoded_size;
  uint64_t content_checksum;
  uint32_t checksum_block_log2; /* v2 with checksum: log2 of the checksum block bytes, else 0 */
  uint64_t checksum_blocks;     /* v2 with checksum: entries of the block-check stream, else 0 */
  sz_codebook codebook;
  int has_tensor; /* flag TENSOR: the frame carries a tensor descriptor */
  /* SZ_MODE_FAST or SZ_MODE_CAPACITY (header byte 49; stored frames are
   * SZ_MODE_FAST). A capacity frame keeps the byte size of its coded
   * exponents in escape_count and has no codebook (FORMAT.md 4.6). */
  int mode;
  int has_tables;     /* flag TABLES (format v3): the frame names a capacity table set */
  uint64_t tables_id; /* its id (sz_tables_id), 0 when has_tables is 0 */
} sz_frame_info;

/* One frame of a stream, as the iterator yields it. */
typedef struct sz_frame_view {
  const uint8_t* data; /* frame start; NULL once the stream has ended */
  uint64_t size;       /* frame_size */
  uint64_t offset;     /* from the stream start */
  sz_frame_info info;
} sz_frame_view;

/* Walks a stream of back-to-back frames in host memory (FORMAT.md 7),
 * checking each header (rules 1-11) when it reaches it. A stream of zero
 * bytes has no frames. Fields are private: use the functions below. */
typedef struct sz_frame_iter {
  const uint8_t* src;
  uint64_t size;
  uint64_t pos;
  int32_t failed; /* sticky status once a frame was bad */
} sz_frame_iter;

const char* sz_status_name(sz_status s);
const char* sz_status_message(sz_status s);
const char* sz_dtype_name(sz_dtype d);
/* Returns 1 and sets *out on success, 0 for an unknown name. */
int sz_parse_dtype(const char* name, sz_dtype* out);
uint32_t sz_dtype_bytes(sz_dtype d); /* 0 for an invalid dtype */

/* Bytes a tensor descriptor adds to a frame (add it to sz_compress_bound); 0 if invalid. */
uint64_t sz_tensor_desc_size(const sz_tensor_desc* t);
/* The tensor descriptor of the frame at src without decoding; *present = 0
 * when it has none. Pointers in *out point into src. */
sz_status sz_read_tensor_desc(const void* src, uint64_t src_size, sz_tensor_desc* out, int* present);

/* Exact worst-case frame size; 0 for an invalid dtype or n over 2^56. */
uint64_t sz_compress_bound(sz_dtype dtype, uint64_t n_elems);

sz_status sz_compress(sz_dtype dtype, const void* src, uint64_t n_elems, void* dst,
                      uint64_t dst_capacity, const sz_compress_options* opts, sz_result* result);
sz_status sz_decompress(const void* src, uint64_t src_size, void* dst, uint64_t dst_capacity,
                        const sz_decompress_options* opts, sz_result* result);
sz_status sz_decompress_frames(const void* src, uint64_t src_size, void* dst,
                               uint64_t dst_capacity, const sz_decompress_options* opts,
                               sz_result* result);
/* Batched pages: one independent frame per item (the bytes sz_compress /
 * sz_decompress give for that item alone), threads across items. Item i's
 * status goes to statuses[i] and its outcome to results[i] (results may be
 * NULL). Returns SZ_OK when every item succeeded, else the status of the
 * first failing item; SZ_INVALID_ARGUMENT (nothing run) for NULL arrays.
 * opts->tensor, when set, is recorded in every item's frame (pages of one
 * shape); each dst_capacity must then hold sz_tensor_desc_size() more. */
typedef struct sz_compress_item {
  const void* src; /* n_elems values of the batch's dtype */
  uint64_t n_elems;
  void* dst;       /* sz_compress_bound(dtype, n_elems) bytes are always enough */
  uint64_t dst_capacity;
} sz_compress_item;
typedef struct sz_decompress_item {
  const void* src; /* one frame (src_size may extend past it) */
  uint64_t src_size;
  void* dst;
  uint64_t dst_capacity;
} sz_decompress_item;
sz_status sz_compress_batch(sz_dtype dtype, const sz_compress_item* items, size_t count,
                            const sz_compress_options* opts, sz_status* statuses, sz_result* results);
sz_status sz_decompress_batch(const sz_decompress_item* items, size_t count,
                              const sz_decompress_options* opts, sz_status* statuses,
                              sz_result* results);
/* sz_compress_batch with a capacity table set per item (pages of several
 * layers in one call, each coded with its layer's set): item_tables[i]
 * (may be NULL) codes item i, NULL entries take opts->tables. Needs
 * capacity mode wherever a set applies; a set of another dtype fails that
 * item with SZ_BAD_CODEBOOK. item_tables NULL: sz_compress_batch. */
sz_status sz_compress_batch_tables(sz_dtype dtype, const sz_compress_item* items, size_t count,
                                   const sz_tables* const* item_tables,
                                   const sz_compress_options* opts, sz_status* statuses,
                                   sz_result* results);
/* Reads and validates the header (rules 1-11) without decoding. */
sz_status sz_frame_info_read(const void* src, uint64_t src_size, sz_frame_info* out);
/* Rules 1-10 on the 64 header bytes at src alone (src must hold 64 bytes):
 * a streaming reader learns frame_size before it has the rest of the frame. */
sz_status sz_frame_header_info(const void* src, sz_frame_info* out);

/* it over size bytes at src (NULL allowed when size is 0). */
sz_status sz_frame_iter_init(sz_frame_iter* it, const void* src, uint64_t size);
/* SZ_OK and out->data set: the next frame. SZ_OK and out->data NULL: the
 * end. Any other status: the frame at sz_frame_iter_offset() is bad; every
 * later call returns the same status. */
sz_status sz_frame_iter_next(sz_frame_iter* it, sz_frame_view* out);
/* Offset of the next frame (or of the bad one) from the stream start. */
uint64_t sz_frame_iter_offset(const sz_frame_iter* it);

sz_status sz_calibrate(sz_dtype dtype, const void* const* buffers, const uint64_t* n_elems,
                       size_t n_buffers, sz_codebook* out);
sz_status sz_validate_codebook(const sz_codebook* cb);
sz_status sz_codebook_serialize(const sz_codebook* cb, uint8_t out[SZ_CODEBOOK_FILE_SIZE]);
sz_status sz_codebook_deserialize(const void* src, uint64_t size, sz_codebook* out);
sz_status sz_codebook_save(const sz_codebook* cb, const char* path);
sz_status sz_codebook_load(const char* path, sz_codebook* out);

/* Table sets. table_count 0: the default. Handles from these calls are
 * freed with sz_tables_free (NULL is fine). */
sz_status sz_tables_calibrate(sz_dtype dtype, const void* const* buffers, const uint64_t* n_elems,
                              size_t n_buffers, uint32_t table_count, sz_tables** out);
/* Parses and validates a set file's bytes (all size bytes of src). */
sz_status sz_tables_from_bytes(const void* src, uint64_t size, sz_tables** out);
sz_status sz_tables_load(const char* path, sz_tables** out);
sz_status sz_tables_save(const sz_tables* t, const char* path);
void sz_tables_free(sz_tables* t);
/* Bytes of the set file (0 for NULL), and the file into the caller's dst. */
uint64_t sz_tables_serialized_size(const sz_tables* t);
sz_status sz_tables_to_bytes(const sz_tables* t, void* dst, uint64_t capacity, uint64_t* written);
uint64_t sz_tables_id(const sz_tables* t);          /* what frames name; 0 for NULL */
int32_t sz_tables_dtype(const sz_tables* t);        /* an sz_dtype value; 0 for NULL */
uint32_t sz_tables_count(const sz_tables* t);       /* tables in the set; 0 for NULL */

/* XXH64 (format v1) and XXH3-64 seed 0 (format v2), from libxxhash. */
uint64_t sz_xxh64(const void* data, uint64_t size, uint64_t seed);
uint64_t sz_xxh3_64(const void* data, uint64_t size);

size_t sz_backend_count(void);
const char* sz_backend_name(size_t index); /* NULL past the end */
int sz_backend_available(const char* name);
/* Why a backend cannot run here ("no CUDA driver ...", "not compiled into this
 * build"), or NULL when it is available. Static string. */
const char* sz_backend_unavailable_reason(const char* name);

/* Version of the loaded library, e.g. "0.1.0" (SZ_VERSION_STRING is the one
 * compiled against, in <splitzip/version.h>), and its ABI version (the
 * SONAME's number). */
const char* sz_version(void);
uint32_t sz_abi_version(void);

SZ_PUBLIC_END
#ifdef __cplusplus
}
#endif

#endif /* SPLITZIP_SPLITZIP_H */
