// SPDX-License-Identifier: Apache-2.0
// The native half of the splitzip Python package (splitzip_kv._core).
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <optional>
#include <string>

#include "splitzip/splitzip.hpp"

#include "bindings.h"
#include "status_error.h"

NB_MODULE(_core, m) {
  m.doc() = "splitzip native bindings; use the splitzip_kv package, not this module.";
  m.def("version", [] { return std::string(splitzip::version()); },
        "Version of the splitzip library compiled into this extension.");
  m.def(
      "backend_unavailable_reason",
      [](const std::string& name) -> std::optional<std::string> {
        const char* r = splitzip::backend_unavailable_reason(name.c_str());
        if (r == nullptr) return std::nullopt;
        return std::string(r);
      },
      nanobind::arg("name"), "Why a backend cannot run here, or None when it can.");
  splitzip_py::register_status_translator();
  splitzip_py::bind_codebook(m);
  splitzip_py::bind_tables(m);
  splitzip_py::bind_codec(m);
}
