/* SPDX-License-Identifier: Apache-2.0 */
/* Dispatch overhead through the loaded library on a 64 KiB buffer.
 *
 * Built twice (bench/CMakeLists.txt): splitzip_bench_dispatch_shared calls
 * into libsplitzip.so.0 through the PLT, splitzip_bench_dispatch_static links
 * libsplitzip.a. Both time, per call, on the same 32768 bf16 values of real
 * KV (data/kv/stories260k/layer00_k.bf16, first 64 KiB):
 *   - sz_frame_info_read on a 64-byte header (the cheapest call that goes
 *     through the frame layer: the fixed cost of a call),
 *   - sz_compress and sz_decompress with the backend picked by dispatch, and
 *     forced to "reference" and "cpu",
 * and once, the first sz_backend_available("cuda") of the process (the
 * static CUDA runtime looking for a driver).
 * The difference between the two binaries is the cost of the shared library.
 *
 *   splitzip_bench_dispatch_shared [KV_FILE] [SECONDS_PER_ROW]
 */
#define _POSIX_C_SOURCE 199309L
#include <splitzip/splitzip.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef SPLITZIP_BENCH_DATA
#define SPLITZIP_BENCH_DATA "data/kv/stories260k/layer00_k.bf16"
#endif
#ifndef SPLITZIP_BENCH_LINK
#define SPLITZIP_BENCH_LINK "?"
#endif

enum { N = 32768 }; /* 64 KiB of bf16 */

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static uint16_t src[N], out[N];
static uint8_t frame[2 * N + 4096];
static uint64_t frame_size;

typedef int (*op_fn)(const char* backend);

static int op_info(const char* backend) {
  sz_frame_info info;
  (void)backend;
  return sz_frame_info_read(frame, frame_size, &info) == SZ_OK ? 0 : 1;
}
static int op_compress(const char* backend) {
  sz_compress_options o;
  sz_result r;
  memset(&o, 0, sizeof o);
  o.backend = backend;
  o.no_checksum = 1; /* the figures predate checksum-on defaults: keep them comparable */
  return sz_compress(SZ_BF16, src, N, frame, sizeof frame, &o, &r) == SZ_OK ? 0 : 1;
}
static int op_decompress(const char* backend) {
  sz_decompress_options o;
  sz_result r;
  memset(&o, 0, sizeof o);
  o.backend = backend;
  return sz_decompress(frame, frame_size, out, sizeof out, &o, &r) == SZ_OK ? 0 : 1;
}

/* Median over 7 runs of the mean time per call, in ns. */
static double time_op(op_fn f, const char* backend, double seconds) {
  double runs[7];
  int k, i, j;
  long iters = 1;
  for (;;) { /* calibrate: iterations that take seconds/7 */
    double t0 = now();
    long n;
    for (n = 0; n < iters; ++n)
      if (f(backend)) return -1;
    if (now() - t0 > seconds / 7 / 4) break;
    iters *= 2;
  }
  iters *= 4;
  for (k = 0; k < 7; ++k) {
    double t0 = now();
    long n;
    for (n = 0; n < iters; ++n) f(backend);
    runs[k] = (now() - t0) / (double)iters * 1e9;
  }
  for (i = 1; i < 7; ++i)
    for (j = i; j > 0 && runs[j] < runs[j - 1]; --j) {
      double t = runs[j];
      runs[j] = runs[j - 1];
      runs[j - 1] = t;
    }
  return runs[3];
}

int main(int argc, char** argv) {
  const char* path = argc > 1 && argv[1][0] ? argv[1] : SPLITZIP_BENCH_DATA;
  const double seconds = argc > 2 ? atof(argv[2]) : 2.0;
  const char* backends[] = {NULL, "reference", "cpu"};
  const char* names[] = {"dispatch", "reference", "cpu"};
  FILE* fp = fopen(path, "rb");
  sz_result r;
  double t0, first_cuda;
  int avail, b;
  if (fp == NULL || fread(src, 2, N, fp) != N) {
    fprintf(stderr, "cannot read %d bf16 values from %s\n", N, path);
    return 1;
  }
  fclose(fp);

  t0 = now();
  avail = sz_backend_available("cuda");
  first_cuda = (now() - t0) * 1e6;

  if (sz_compress(SZ_BF16, src, N, frame, sizeof frame, NULL, &r) != SZ_OK) return 1;
  frame_size = r.size;
  printf("splitzip %s, %s link, 64 KiB bf16 (%s), frame %llu bytes, dispatch picks %s\n", sz_version(),
         SPLITZIP_BENCH_LINK, path, (unsigned long long)frame_size, r.backend);
  printf("first sz_backend_available(\"cuda\") = %d: %.1f us (%s)\n", avail, first_cuda,
         avail ? "available" : sz_backend_unavailable_reason("cuda"));
  printf("%-32s %12.1f ns/call\n", "sz_frame_info_read (64 B header)", time_op(op_info, NULL, seconds));
  for (b = 0; b < 3; ++b) {
    char label[64];
    if (backends[b] != NULL && !sz_backend_available(backends[b])) continue;
    snprintf(label, sizeof label, "sz_compress   [%s]", names[b]);
    printf("%-32s %12.1f ns/call\n", label, time_op(op_compress, backends[b], seconds));
    snprintf(label, sizeof label, "sz_decompress [%s]", names[b]);
    printf("%-32s %12.1f ns/call\n", label, time_op(op_decompress, backends[b], seconds));
  }
  return 0;
}
