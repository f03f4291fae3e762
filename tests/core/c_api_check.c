/* SPDX-License-Identifier: Apache-2.0 */
/* Exercises the C API from C99 code: proves splitzip.h is valid C and that
 * zero-initialised / NULL options mean defaults. Returns 0 or a failing
 * line number; test_c_api.cpp calls it. */
#include <stdlib.h>
#include <string.h>

#include "splitzip/splitzip.h"

#define CHECK(cond) \
  do {              \
    if (!(cond)) {  \
      rc = __LINE__; \
      goto done;    \
    }               \
  } while (0)

int splitzip_c_api_selftest(void) {
  int rc = 0;
  enum { N = 5000 };
  uint16_t* src = malloc(N * sizeof(uint16_t));
  uint16_t* out = malloc(N * sizeof(uint16_t));
  uint64_t cap = sz_compress_bound(SZ_BF16, N);
  uint8_t* frame = malloc(cap);
  sz_result res;
  sz_frame_info info;
  sz_compress_options copts;
  sz_decompress_options dopts;
  sz_codebook cb;
  const void* bufs[1];
  uint64_t ns[1];
  uint8_t cbfile[SZ_CODEBOOK_FILE_SIZE];
  sz_dtype d;
  size_t i;
  uint8_t* two = NULL;
  sz_frame_iter it;
  sz_frame_view view;
  uint64_t first_size;
  if (!src || !out || !frame) {
    rc = -1;
    goto done;
  }
  /* Values near 1.0: a handful of exponents. */
  for (i = 0; i < N; ++i) src[i] = (uint16_t)(0x3F00u + (i * 37u) % 0x200u);

  /* Stored size with the block checks of one 64 KiB block (16 bytes). */
  CHECK(cap == 64 + 10000 + 16);
  CHECK(sz_compress_bound((sz_dtype)9, 1) == 0);
  CHECK(sz_compress(SZ_BF16, src, N, frame, cap, NULL, &res) == SZ_OK);
  CHECK(res.size < cap && res.size % 16 == 0);
  CHECK(res.backend != NULL);
  CHECK(sz_frame_info_read(frame, res.size, &info) == SZ_OK);
  CHECK(info.n_elems == N && info.dtype == SZ_BF16 && !info.stored && info.frame_size == res.size);
  CHECK(info.codebook.count >= 1 && info.codebook.count <= 16);
  CHECK(sz_decompress(frame, res.size, out, N * 2, NULL, &res) == SZ_OK);
  CHECK(res.size == N * 2 && memcmp(src, out, N * 2) == 0);
  CHECK(sz_decompress_frames(frame, info.frame_size, out, N * 2, NULL, NULL) == SZ_OK);

  /* Zero-initialised options are the defaults; set a few fields. */
  memset(&copts, 0, sizeof copts);
  copts.no_checksum = 0; /* the default: checksum on */
  copts.chunk_log2 = 6;
  copts.backend = "reference";
  CHECK(sz_compress(SZ_BF16, src, N, frame, cap, &copts, &res) == SZ_OK);
  CHECK(sz_frame_info_read(frame, res.size, &info) == SZ_OK);
  CHECK(info.has_checksum && info.chunk_log2 == 6 && info.version == 2); /* no v3 feature: v2 */
  CHECK(info.checksum_block_log2 == 16 && info.checksum_blocks == 1);
  {
    /* One block: content_checksum = XXH3 of its hash as u64 little-endian. */
    uint64_t h = sz_xxh3_64(src, N * 2);
    uint8_t le[8];
    for (i = 0; i < 8; ++i) le[i] = (uint8_t)(h >> (8 * i));
    CHECK(info.content_checksum == sz_xxh3_64(le, 8));
  }
  memset(&dopts, 0, sizeof dopts);
  dopts.max_output_bytes = N * 2 - 1;
  CHECK(sz_decompress(frame, res.size, out, N * 2, &dopts, NULL) == SZ_LIMIT_EXCEEDED);
  dopts.max_output_bytes = 0;
  res.corrupt_block = 7;
  first_size = info.frame_size;
  CHECK(sz_decompress(frame, first_size, out, N * 2, &dopts, &res) == SZ_OK && res.corrupt_block == SZ_NO_BLOCK);
  /* Two frames back to back for the iterator: the checksummed one twice. */
  two = malloc(2 * first_size);
  CHECK(two != NULL);
  memcpy(two, frame, first_size);
  memcpy(two + first_size, frame, first_size);
  CHECK(sz_frame_iter_init(&it, two, 2 * first_size) == SZ_OK);
  CHECK(sz_frame_iter_next(&it, &view) == SZ_OK && view.data == two && view.offset == 0);
  CHECK(view.size == first_size && view.info.n_elems == N && view.info.checksum_blocks == 1);
  CHECK(sz_frame_iter_next(&it, &view) == SZ_OK && view.data == two + first_size && view.offset == first_size);
  CHECK(sz_frame_iter_next(&it, &view) == SZ_OK && view.data == NULL);
  CHECK(sz_frame_iter_offset(&it) == 2 * first_size);
  /* A partial second frame: TRUNCATED at its offset, and it stays so. */
  CHECK(sz_frame_iter_init(&it, two, 2 * first_size - 1) == SZ_OK);
  CHECK(sz_frame_iter_next(&it, &view) == SZ_OK && view.data == two);
  CHECK(sz_frame_iter_next(&it, &view) == SZ_TRUNCATED && view.data == NULL);
  CHECK(sz_frame_iter_offset(&it) == first_size);
  CHECK(sz_frame_iter_next(&it, &view) == SZ_TRUNCATED);
  /* The empty stream: zero frames, zero bytes. */
  CHECK(sz_frame_iter_init(&it, NULL, 0) == SZ_OK);
  CHECK(sz_frame_iter_next(&it, &view) == SZ_OK && view.data == NULL);
  CHECK(sz_frame_iter_init(&it, NULL, 5) == SZ_INVALID_ARGUMENT);
  CHECK(sz_decompress_frames(NULL, 0, NULL, 0, NULL, &res) == SZ_OK && res.size == 0);
  CHECK(sz_decompress_frames(two, 0, out, N * 2, NULL, &res) == SZ_OK && res.size == 0);
  CHECK(sz_decompress(two, 0, out, N * 2, NULL, NULL) == SZ_TRUNCATED);
  /* Header-only query: rules 1-10 on 64 bytes, frame_size before the rest. */
  memset(&info, 0, sizeof info);
  CHECK(sz_frame_header_info(two, &info) == SZ_OK && info.frame_size == first_size && info.n_elems == N);
  CHECK(sz_frame_header_info(NULL, &info) == SZ_INVALID_ARGUMENT);

  frame[64] ^= 1; /* residual bit of element 0: block 0's check catches it unless skipped */
  CHECK(sz_decompress(frame, first_size, out, N * 2, &dopts, &res) == SZ_CHECKSUM_MISMATCH);
  CHECK(res.corrupt_block == 0);
  dopts.skip_checksum = 1;
  CHECK(sz_decompress(frame, first_size, out, N * 2, &dopts, NULL) == SZ_OK);
  frame[0] = 0;
  CHECK(sz_decompress(frame, first_size, out, N * 2, NULL, NULL) == SZ_BAD_MAGIC);
  CHECK(sz_decompress(frame, 10, out, N * 2, NULL, NULL) == SZ_TRUNCATED);
  copts.backend = "bogus";
  CHECK(sz_compress(SZ_BF16, src, N, frame, cap, &copts, NULL) == SZ_UNKNOWN_BACKEND);
  copts.backend = NULL;
  copts.chunk_log2 = 16;
  CHECK(sz_compress(SZ_BF16, src, N, frame, cap, &copts, NULL) == SZ_INVALID_ARGUMENT);
  CHECK(sz_compress(SZ_BF16, NULL, N, frame, cap, NULL, NULL) == SZ_INVALID_ARGUMENT);
  CHECK(sz_compress(SZ_BF16, src, N, frame, 10, NULL, NULL) == SZ_DST_TOO_SMALL);

  /* Calibration and codebooks. */
  bufs[0] = src;
  ns[0] = N;
  CHECK(sz_calibrate(SZ_BF16, bufs, ns, 1, &cb) == SZ_OK);
  CHECK(cb.dtype == SZ_BF16 && cb.count >= 1 && sz_validate_codebook(&cb) == SZ_OK);
  CHECK(sz_codebook_serialize(&cb, cbfile) == SZ_OK);
  {
    sz_codebook back;
    CHECK(sz_codebook_deserialize(cbfile, sizeof cbfile, &back) == SZ_OK);
    CHECK(back.count == cb.count && memcmp(back.entries, cb.entries, 16) == 0);
    CHECK(sz_codebook_deserialize(cbfile, 31, &back) == SZ_TRUNCATED);
  }
  memset(&copts, 0, sizeof copts);
  copts.codebook = &cb;
  CHECK(sz_compress(SZ_BF16, src, N, frame, cap, &copts, &res) == SZ_OK);
  CHECK(sz_decompress(frame, res.size, out, N * 2, NULL, NULL) == SZ_OK && memcmp(src, out, N * 2) == 0);
  cb.dtype = SZ_FP16; /* codebook dtype must match the frame's */
  CHECK(sz_compress(SZ_BF16, src, N, frame, cap, &copts, NULL) == SZ_BAD_CODEBOOK);
  cb.dtype = 77;
  CHECK(sz_validate_codebook(&cb) == SZ_BAD_CODEBOOK);

  /* Names. */
  CHECK(strcmp(sz_status_name(SZ_BAD_PADDING), "BAD_PADDING") == 0);
  CHECK(strlen(sz_status_message(SZ_TRUNCATED)) > 0);
  CHECK(strcmp(sz_dtype_name(SZ_FP8_E5M2), "fp8_e5m2") == 0);
  CHECK(sz_parse_dtype("fp32", &d) == 1 && d == SZ_FP32);
  CHECK(sz_parse_dtype("fp64", &d) == 0);
  CHECK(sz_dtype_bytes(SZ_FP32) == 4 && sz_dtype_bytes((sz_dtype)0) == 0);
  CHECK(sz_backend_count() >= 1);
  CHECK(strcmp(sz_backend_name(0), "reference") == 0);
  CHECK(sz_backend_name(sz_backend_count()) == NULL);
  CHECK(sz_backend_available("reference") == 1 && sz_backend_available("bogus") == 0);
  CHECK(sz_xxh64("", 0, 0) == 0xEF46DB3751D8E999ull);
  CHECK(sz_xxh3_64("", 0) == 0x2D06800538D394C2ull);
  /* Table sets from C: a handle, its bytes into a caller buffer and back. */
  CHECK(strcmp(sz_status_name(SZ_MISSING_TABLES), "MISSING_TABLES") == 0);
  {
    sz_tables* t = NULL;
    sz_tables* back = NULL;
    uint8_t set[8192];
    uint64_t written = 0;
    bufs[0] = src;
    ns[0] = N;
    CHECK(sz_tables_calibrate(SZ_BF16, bufs, ns, 1, 4, &t) == SZ_OK && t != NULL);
    CHECK(sz_tables_count(t) == 4 && sz_tables_dtype(t) == SZ_BF16 && sz_tables_id(t) != 0);
    CHECK(sz_tables_serialized_size(t) <= sizeof set);
    CHECK(sz_tables_to_bytes(t, set, sizeof set, &written) == SZ_OK && written == sz_tables_serialized_size(t));
    CHECK(sz_tables_from_bytes(set, written, &back) == SZ_OK && sz_tables_id(back) == sz_tables_id(t));
    memset(&copts, 0, sizeof copts);
    copts.tables = t; /* fast mode (0): a set is refused */
    CHECK(sz_compress(SZ_BF16, src, N, frame, cap, &copts, &res) == SZ_INVALID_ARGUMENT);
    sz_tables_free(back);
    sz_tables_free(t);
    CHECK(sz_tables_calibrate(SZ_BF16, bufs, ns, 1, 3, &t) == SZ_INVALID_ARGUMENT && t == NULL);
  }
done:
  free(two);
  free(src);
  free(out);
  free(frame);
  return rc;
}
