// SPDX-License-Identifier: Apache-2.0
// splitzip.Codebook: the 16-entry exponent codebook, its .szcb file form
// (FORMAT.md section 10) and pickling through that form.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <vector>

#include "array_import.h"
#include "bindings.h"
#include "status_error.h"

namespace nb = nanobind;
using splitzip::Codebook;
using splitzip::Status;

namespace splitzip_py {

namespace {

// Python ints of any size: one outside 0..255 (beyond 64 bits too) is a
// SplitzipError naming the argument, not nanobind's bare TypeError.
Codebook make_codebook(const std::string& dtype, const std::vector<nb::int_>& entries) {
  Codebook cb;
  cb.dtype = parse_dtype_name(dtype);
  if (entries.empty() || entries.size() > 16)
    raise_status(Status::bad_codebook, "a codebook holds 1..16 entries, got " +
                                           std::to_string(entries.size()));
  for (size_t i = 0; i < entries.size(); ++i) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(entries[i].ptr(), &overflow);
    if (v == -1 && PyErr_Occurred()) throw nb::python_error();
    if (overflow != 0 || v < 0 || v > 255)
      raise_status(Status::bad_codebook, "entries[" + std::to_string(i) + "] = " +
                                             nb::cast<std::string>(nb::str(entries[i])) +
                                             " is not an exponent value (0..255)");
    cb.entries[i] = static_cast<uint8_t>(v);
  }
  cb.count = static_cast<uint8_t>(entries.size());
  check(splitzip::validate_codebook(cb), "codebook entries");
  return cb;
}

nb::bytes to_bytes(const Codebook& cb) {
  uint8_t buf[splitzip::kCodebookFileSize];
  check(splitzip::codebook_serialize(cb, buf), "serializing codebook");
  return nb::bytes(reinterpret_cast<const char*>(buf), sizeof buf);
}

Codebook from_bytes(nb::bytes b) {
  Codebook cb;
  check(splitzip::codebook_deserialize(b.c_str(), b.size(), &cb), "reading codebook bytes");
  return cb;
}

std::string fspath(nb::handle path) {
  // os.fspath accepts str and os.PathLike; bytes paths are decoded by Python.
  nb::object p = nb::module_::import_("os").attr("fsdecode")(path);
  return nb::cast<std::string>(p);
}

}  // namespace

void bind_codebook(nb::module_& m) {
  nb::class_<Codebook>(m, "Codebook",
                       "Exponent codebook: up to 16 exponent values, code c stands for entries[c].")
      .def("__init__",
           [](Codebook* self, const std::string& dtype, const std::vector<nb::int_>& entries) {
             new (self) Codebook(make_codebook(dtype, entries));
           },
           nb::arg("dtype"), nb::arg("entries"))
      .def_prop_ro("dtype", [](const Codebook& cb) { return std::string(splitzip::dtype_name(cb.dtype)); })
      .def_prop_ro("count", [](const Codebook& cb) { return static_cast<int>(cb.count); })
      .def_prop_ro("entries",
                   [](const Codebook& cb) {
                     nb::list out;
                     for (uint32_t i = 0; i < cb.count; ++i) out.append(static_cast<int>(cb.entries[i]));
                     return nb::tuple(out);
                   })
      .def("to_bytes", &to_bytes, "The 32-byte .szcb form (FORMAT.md section 10).")
      .def_static("from_bytes", &from_bytes, nb::arg("data"))
      .def("save",
           [](const Codebook& cb, nb::handle path) {
             const std::string p = fspath(path);
             check(splitzip::codebook_save(cb, p.c_str()), p);
           },
           nb::arg("path"), "Writes the codebook as a .szcb file.")
      .def_static("load",
                  [](nb::handle path) {
                    const std::string p = fspath(path);
                    Codebook cb;
                    check(splitzip::codebook_load(p.c_str(), &cb), p);
                    return cb;
                  },
                  nb::arg("path"), "Reads and validates a .szcb file.")
      .def("__eq__",
           [](const Codebook& a, nb::handle other) {
             Codebook b;
             if (!nb::try_cast(other, b)) return false;
             if (a.dtype != b.dtype || a.count != b.count) return false;
             for (uint32_t i = 0; i < a.count; ++i)
               if (a.entries[i] != b.entries[i]) return false;
             return true;
           })
      .def("__hash__",
           [](const Codebook& cb) {
             std::string key(1, static_cast<char>(cb.dtype));
             key.append(reinterpret_cast<const char*>(cb.entries), cb.count);
             return nb::hash(nb::bytes(key.data(), key.size()));
           })
      .def("__repr__",
           [](const Codebook& cb) {
             std::string s = "Codebook(dtype='" + std::string(splitzip::dtype_name(cb.dtype)) +
                             "', entries=[";
             for (uint32_t i = 0; i < cb.count; ++i) {
               if (i) s += ", ";
               s += std::to_string(cb.entries[i]);
             }
             return s + "])";
           })
      .def("__getstate__", &to_bytes)
      .def("__setstate__",
           [](Codebook* self, nb::bytes b) { new (self) Codebook(from_bytes(b)); });
}

}  // namespace splitzip_py
