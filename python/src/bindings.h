/* SPDX-License-Identifier: Apache-2.0 */
// Registration functions, one per binding file.
#pragma once

#include <nanobind/nanobind.h>

namespace splitzip_py {

void bind_codebook(nanobind::module_& m);
void bind_codec(nanobind::module_& m);

}  // namespace splitzip_py
