// The native half of the splitzip Python package (splitzip._core).
#include <nanobind/nanobind.h>

#include "bindings.h"
#include "status_error.h"

NB_MODULE(_core, m) {
  m.doc() = "splitzip native bindings; use the splitzip package, not this module.";
  splitzip_py::register_status_translator();
  splitzip_py::bind_codebook(m);
  splitzip_py::bind_codec(m);
}
