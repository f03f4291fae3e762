/* SPDX-License-Identifier: Apache-2.0 */
/* Symbol visibility for the public API. splitzip is compiled with hidden
 * visibility; the declarations between SZ_PUBLIC_BEGIN and SZ_PUBLIC_END in
 * the public headers are the only ones exported from libsplitzip.so (also
 * enforced by the linker version script cmake/splitzip.map). */
#ifndef SPLITZIP_EXPORT_H
#define SPLITZIP_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define SZ_PUBLIC_BEGIN _Pragma("GCC visibility push(default)")
#define SZ_PUBLIC_END _Pragma("GCC visibility pop")
#else
#define SZ_PUBLIC_BEGIN
#define SZ_PUBLIC_END
#endif

#endif /* SPLITZIP_EXPORT_H */
