// SPDX-License-Identifier: Apache-2.0
#include "status_error.h"

namespace nb = nanobind;

namespace splitzip_py {

std::string status_text(splitzip::Status s, const std::string& context, uint64_t corrupt_block) {
  std::string msg = splitzip::status_message(s);
  if (corrupt_block != kNoBlock)
    msg += ": checksum block " + std::to_string(corrupt_block) + " is the first corrupt one";
  if (!context.empty()) msg += " (" + context + ")";
  return msg;
}

void raise_status(splitzip::Status s, const std::string& context, uint64_t corrupt_block) {
  throw StatusError(s, status_text(s, context, corrupt_block), corrupt_block);
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
        nb::object block = e.corrupt_block == kNoBlock ? nb::object(nb::none()) : nb::object(nb::int_(e.corrupt_block));
        nb::object inst = cls(splitzip::status_name(e.status), e.what(),
                              static_cast<int>(e.status), block);
        PyErr_SetObject(cls.ptr(), inst.ptr());
      } catch (nb::python_error& pe) {
        pe.restore();
      }
    }
  });
}

}  // namespace splitzip_py
