// SPDX-License-Identifier: Apache-2.0
#include "status_error.h"

namespace nb = nanobind;

namespace splitzip_py {

void raise_status(splitzip::Status s, const std::string& context) {
  std::string msg = splitzip::status_message(s);
  if (!context.empty()) msg += " (" + context + ")";
  throw StatusError(s, msg);
}

void register_status_translator() {
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const StatusError& e) {
      // The exception class lives in Python so that pure-Python code raises
      // the same type; it is looked up when needed, never at import time.
      try {
        nb::object cls = nb::module_::import_("splitzip_kv._errors").attr("SplitzipError");
        nb::object inst = cls(splitzip::status_name(e.status), e.what(),
                              static_cast<int>(e.status));
        PyErr_SetObject(cls.ptr(), inst.ptr());
      } catch (nb::python_error& pe) {
        pe.restore();
      }
    }
  });
}

}  // namespace splitzip_py
