// SPDX-License-Identifier: Apache-2.0
// splitzip.TableSet: a calibrated capacity table set (FORMAT.md 4.9, 13),
// its set file form and pickling through that form.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <cstdio>
#include <string>
#include <vector>

#include "bindings.h"
#include "status_error.h"

namespace nb = nanobind;
using splitzip::Status;
using splitzip::TableSet;

namespace splitzip_py {

namespace {

nb::bytes set_bytes(const TableSet& t) {
  std::vector<uint8_t> buf(t.serialized_size());
  uint64_t n = 0;
  check(t.to_bytes(buf.data(), buf.size(), &n), "serializing table set");
  return nb::bytes(reinterpret_cast<const char*>(buf.data()), n);
}

TableSet set_from_bytes(nb::handle data) {
  Py_buffer view;
  if (PyObject_GetBuffer(data.ptr(), &view, PyBUF_SIMPLE) != 0) throw nb::python_error();
  TableSet t;
  const Status s = TableSet::from_bytes(view.buf, static_cast<uint64_t>(view.len), &t);
  PyBuffer_Release(&view);
  check(s, "reading table set bytes");
  return t;
}

std::string fspath(nb::handle path) {
  nb::object p = nb::module_::import_("os").attr("fsdecode")(path);
  return nb::cast<std::string>(p);
}

}  // namespace

std::string tables_id_hex(uint64_t id) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(id));
  return hex;
}

std::vector<TableSet> table_sets(nb::handle obj) {
  std::vector<TableSet> out;
  if (obj.is_none()) return out;
  TableSet one;
  if (nb::try_cast(obj, one)) {
    out.push_back(one);
    return out;
  }
  if (!PySequence_Check(obj.ptr()) || PyBytes_Check(obj.ptr()) || PyUnicode_Check(obj.ptr()))
    throw nb::type_error("tables must be a splitzip_kv.TableSet, a sequence of them, or None");
  for (nb::handle item : obj) {
    TableSet t;
    if (!nb::try_cast(item, t))
      throw nb::type_error("tables must be a splitzip_kv.TableSet, a sequence of them, or None");
    out.push_back(t);
  }
  return out;
}

std::string missing_tables_hint(const void* src, uint64_t size, const std::vector<TableSet>& given) {
  splitzip::FrameIterator it(src, size);
  splitzip::FrameView v;
  while (it.next(&v) == Status::ok && v.data != nullptr) {
    if (!v.info.has_tables) continue;
    bool have = false;
    for (const TableSet& t : given) have |= t.id() == v.info.tables_id;
    if (!have)
      return "the frame at offset " + std::to_string(v.offset) + " names table set " +
             tables_id_hex(v.info.tables_id) + ", which was not given: pass tables= the TableSet it was "
             "compressed with (TableSet.load(path), or the one calibrate(mode='capacity') returned)";
  }
  return {};
}

void bind_tables(nb::module_& m) {
  nb::class_<TableSet>(m, "TableSet",
                       "Calibrated capacity tables (FORMAT.md 4.9): capacity frames coded with a set name it by "
                       "id instead of carrying tables; decoding them needs the same set.")
      .def_prop_ro("id", &TableSet::id, "The 64-bit id frames name (frame_info()['tables_id']).")
      .def_prop_ro("dtype", [](const TableSet& t) { return std::string(splitzip::dtype_name(t.dtype())); })
      .def_prop_ro("table_count", &TableSet::table_count)
      .def("to_bytes", &set_bytes, "The set file's bytes (FORMAT.md 13).")
      .def_static("from_bytes", &set_from_bytes, nb::arg("data"), "Parses and validates a set file's bytes.")
      .def("save",
           [](const TableSet& t, nb::handle path) {
             const std::string p = fspath(path);
             check(t.save(p.c_str()), p);
           },
           nb::arg("path"), "Writes the set file (.szct).")
      .def_static("load",
                  [](nb::handle path) {
                    const std::string p = fspath(path);
                    TableSet t;
                    check(TableSet::load(p.c_str(), &t), p + ": not a valid table set file");
                    return t;
                  },
                  nb::arg("path"), "Reads and validates a set file.")
      .def("__eq__",
           [](const TableSet& a, nb::handle other) {
             TableSet b;
             if (!nb::try_cast(other, b)) return false;
             return a.id() == b.id() && set_bytes(a).equal(set_bytes(b));
           })
      .def("__hash__", [](const TableSet& t) { return nb::hash(nb::int_(t.id())); })
      .def("__repr__",
           [](const TableSet& t) {
             return "TableSet(id=0x" + tables_id_hex(t.id()) + ", dtype='" + splitzip::dtype_name(t.dtype()) +
                    "', table_count=" + std::to_string(t.table_count()) + ")";
           })
      .def("__getstate__", &set_bytes)
      .def("__setstate__", [](TableSet* self, nb::bytes b) { new (self) TableSet(set_from_bytes(b)); });
}

}  // namespace splitzip_py
