/* SPDX-License-Identifier: Apache-2.0 */
// Registration functions, one per binding file.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <string>
#include <vector>

#include "splitzip/splitzip.hpp"

namespace splitzip_py {

void bind_codebook(nanobind::module_& m);
void bind_tables(nanobind::module_& m);
void bind_codec(nanobind::module_& m);

// tables= of the decode calls: None, one TableSet or a sequence of them
// (TypeError otherwise).
std::vector<splitzip::TableSet> table_sets(nanobind::handle obj);
// For MISSING_TABLES on the frames at src: which frame names which set, and
// what to pass; empty when no frame names a set missing from `given`.
std::string missing_tables_hint(const void* src, uint64_t size, const std::vector<splitzip::TableSet>& given);
std::string tables_id_hex(uint64_t id);

}  // namespace splitzip_py
