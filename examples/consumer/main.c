/* SPDX-License-Identifier: Apache-2.0 */
/* C consumer: the same round trip through the C API. */
#include <splitzip/splitzip.h>
#include <splitzip/version.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
  const uint64_t n = 65536;
  uint16_t* src = malloc(n * 2);
  uint16_t* out = malloc(n * 2);
  const uint64_t bound = sz_compress_bound(SZ_BF16, n);
  uint8_t* frame = malloc(bound);
  sz_result c = {0, NULL}, d = {0, NULL};
  sz_status s;
  uint64_t i;
  int rc = 1;
  if (src == NULL || out == NULL || frame == NULL) goto done;

  /* KV-like values: small magnitudes around zero, from a xorshift generator
   * (no libm, so the program links with the splitzip flags alone). */
  {
    uint32_t x = 2463534242u;
    for (i = 0; i < n; ++i) {
      float v;
      uint32_t bits;
      x ^= x << 13;
      x ^= x >> 17;
      x ^= x << 5;
      v = ((float)(x & 0xffffu) / 65536.0f - 0.5f) * (0.05f + 0.45f * (float)(i % 97) / 97.0f);
      memcpy(&bits, &v, 4);
      src[i] = (uint16_t)(bits >> 16); /* bf16 = top half of float32 */
    }
  }

  s = sz_compress(SZ_BF16, src, n, frame, bound, NULL, &c);
  if (s != SZ_OK) {
    fprintf(stderr, "sz_compress: %s\n", sz_status_name(s));
    goto done;
  }
  s = sz_decompress(frame, c.size, out, n * 2, NULL, &d);
  if (s != SZ_OK || d.size != n * 2 || memcmp(src, out, n * 2) != 0) {
    fprintf(stderr, "round trip failed: %s\n", sz_status_name(s));
    goto done;
  }
  printf("c: %llu -> %llu bytes, ratio %.3f, backend %s, round trip ok\n", (unsigned long long)(n * 2),
         (unsigned long long)c.size, (double)(n * 2) / (double)c.size, c.backend ? c.backend : "?");
  printf("c: splitzip %s (compiled against %s), backends compiled in:", sz_version(), SZ_VERSION_STRING);
  for (i = 0; i < sz_backend_count(); ++i)
    printf(" %s%s", sz_backend_name(i), sz_backend_available(sz_backend_name(i)) ? "" : "(unavailable)");
  printf("\n");
  for (i = 0; i < sz_backend_count(); ++i) {
    const char* why = sz_backend_unavailable_reason(sz_backend_name(i));
    if (why != NULL) printf("c: %s unavailable: %s\n", sz_backend_name(i), why);
  }
  rc = 0;
done:
  free(src);
  free(out);
  free(frame);
  return rc;
}
