// SPDX-License-Identifier: Apache-2.0
// compress / decompress / frame inspection / calibration entry points.
// The Python layer (splitzip/_api.py) normalises arguments; these functions
// validate everything again, since they are reachable directly.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "array_import.h"
#include "bindings.h"
#include "status_error.h"

namespace nb = nanobind;
using splitzip::Codebook;
using splitzip::Dtype;
using splitzip::Status;

namespace splitzip_py {

namespace {

using OptStr = std::optional<std::string>;

nb::object backend_str(const char* name) {
  return name ? nb::object(nb::str(name)) : nb::none();
}

void check_chunk(uint32_t chunk_log2) {
  if (chunk_log2 < splitzip::kMinChunkLog2 || chunk_log2 > splitzip::kMaxChunkLog2)
    raise_status(Status::bad_chunk_size, "chunk_log2=" + std::to_string(chunk_log2));
}

// Source and destination must not share bytes: the codecs read and write
// them concurrently.
constexpr const char* kOverlap = "out= overlaps the source buffer";

bool overlaps(const void* a, uint64_t an, const void* b, uint64_t bn) {
  const auto a0 = reinterpret_cast<uintptr_t>(a), b0 = reinterpret_cast<uintptr_t>(b);
  return an && bn && a0 < b0 + bn && b0 < a0 + an;
}

// A table set codes data of its dtype in the capacity mode (what, index:
// the item an error names, e.g. "page" 3; null: the call's set). The name
// is built only for an error: a batch checks a set per page.
void check_set(const splitzip::TableSet* t, Dtype d, int mode, const char* what = nullptr, size_t index = 0) {
  const auto where = [&] { return what ? std::string(what) + " " + std::to_string(index) + ": " : std::string(); };
  if (t->dtype() != d)
    raise_status(Status::invalid_argument, where() + "table set is for " + splitzip::dtype_name(t->dtype()) +
                                               ", data is " + splitzip::dtype_name(d));
  if (mode != static_cast<int>(splitzip::Mode::capacity))
    raise_status(Status::invalid_argument,
                 where() + "a table set codes the capacity mode: mode='capacity' (or leave mode unset)");
}

// A set per item (pages of several layers in one call): None or a
// sequence of count entries, each a TableSet (of dtype d, capacity mode)
// or None (the call's set). Pointers stay valid while the caller's
// sequence lives.
std::vector<const splitzip::TableSet*> item_sets(nb::handle seq, size_t count, Dtype d, int mode,
                                                 const char* what) {
  std::vector<const splitzip::TableSet*> out;
  if (seq.is_none()) return out;
  out.reserve(count);
  for (nb::handle h : seq) {
    const splitzip::TableSet* t = nullptr;
    if (!h.is_none()) {
      if (!nb::try_cast<const splitzip::TableSet*>(h, t) || t == nullptr)
        raise_status(Status::invalid_argument, std::string(what) + " " + std::to_string(out.size()) +
                                                   ": a table set must be a TableSet or None");
      check_set(t, d, mode, what, out.size());
    }
    out.push_back(t);
  }
  if (out.size() != count)
    raise_status(Status::invalid_argument, std::to_string(count) + " " + what + "s but " +
                                               std::to_string(out.size()) + " table sets");
  return out;
}

void check_disjoint(const ArrayRef& a, const ArrayRef& o) {
  if (overlaps(a.data, a.nbytes, o.data, o.nbytes)) raise_status(Status::invalid_argument, kOverlap);
}

splitzip::CompressOptions compress_options(const Codebook* cb, Dtype d, uint32_t chunk_log2,
                                           bool checksum, const OptStr& backend, int threads,
                                           int mode, const splitzip::TableSet* tables = nullptr) {
  check_chunk(chunk_log2);
  if (mode != static_cast<int>(splitzip::Mode::fast) && mode != static_cast<int>(splitzip::Mode::capacity))
    raise_status(Status::invalid_argument, "mode must be 'fast' or 'capacity'");
  if (cb && cb->dtype != d)
    raise_status(Status::invalid_argument, std::string("codebook is for ") +
                                               splitzip::dtype_name(cb->dtype) + ", data is " +
                                               splitzip::dtype_name(d));
  if (tables) check_set(tables, d, mode);
  splitzip::CompressOptions o;
  o.tables = tables;
  o.codebook = cb;
  o.chunk_log2 = chunk_log2;
  o.checksum = checksum;
  o.backend = backend ? backend->c_str() : nullptr;
  o.threads = threads;
  o.mode = static_cast<splitzip::Mode>(mode);
  return o;
}

nb::dict info_dict(const splitzip::FrameInfo& fi, uint64_t offset) {
  nb::dict d;
  d["offset"] = offset;
  d["version"] = fi.version;
  d["dtype"] = splitzip::dtype_name(fi.dtype);
  d["stored"] = fi.stored;
  d["checksum"] = fi.has_checksum;
  d["chunk_log2"] = fi.chunk_log2;
  d["n_elems"] = fi.n_elems;
  // A capacity frame's header keeps its coded exponent bytes where a fast
  // frame keeps its escape count (FORMAT.md 4.6).
  const bool capacity = !fi.stored && fi.mode == splitzip::Mode::capacity;
  d["mode"] = capacity ? "capacity" : "fast";
  d["escape_count"] = capacity ? nb::none() : nb::object(nb::int_(fi.escape_count));
  d["exponent_bytes"] = capacity ? nb::object(nb::int_(fi.escape_count)) : nb::none();
  d["frame_size"] = fi.frame_size;
  d["decoded_size"] = fi.decoded_size;
  d["content_checksum"] = fi.content_checksum;
  // Format v2 with CHECKSUM: blocks of 2^log2 original bytes, one check each.
  d["checksum_block_log2"] = fi.checksum_block_log2;
  d["checksum_block_size"] = fi.checksum_block_log2 != 0 && fi.checksum_block_log2 < 64
                                 ? nb::object(nb::int_(uint64_t{1} << fi.checksum_block_log2))
                                 : nb::none();
  d["checksum_blocks"] = fi.checksum_blocks;
  d["codebook"] = fi.stored || capacity ? nb::none() : nb::cast(fi.codebook);
  d["tensor"] = fi.has_tensor;
  d["tables_id"] = fi.has_tables ? nb::object(nb::int_(fi.tables_id)) : nb::none();
  return d;
}

splitzip::FrameInfo read_info(const ArrayRef& a, uint64_t offset) {
  if (offset > a.nbytes)
    raise_status(Status::invalid_argument, "offset " + std::to_string(offset) + " is past the end");
  splitzip::FrameInfo fi;
  const auto* base = static_cast<const uint8_t*>(a.data) + offset;
  check(splitzip::frame_info(base, a.nbytes - offset, &fi),
        "frame at offset " + std::to_string(offset));
  return fi;
}

ArrayRef host_source(nb::handle obj, const char* what) {
  ArrayRef a = import_array(obj, false, what);
  if (!a.host_readable())
    raise_status(Status::unsupported_memory,
                 std::string(what) + " must be in host memory here; device frames are inspected "
                                     "through header_info()");
  return a;
}

// The tensor descriptor (FORMAT.md 4.8) from (shape, origin, name) or None.
// name_store keeps the name's bytes alive while the descriptor is used.
bool tensor_from(nb::handle spec, Dtype d, uint64_t n, splitzip::TensorDesc* t, std::string* name_store) {
  if (spec.is_none()) return false;
  nb::tuple tup = nb::cast<nb::tuple>(spec);
  if (tup.size() != 3) raise_status(Status::invalid_argument, "tensor spec is (shape, origin, name)");
  nb::sequence shape = nb::cast<nb::sequence>(tup[0]);
  const size_t rank = nb::len(shape);
  if (rank > splitzip::kMaxTensorRank)
    raise_status(Status::invalid_argument, "shape has rank " + std::to_string(rank) + ", the format records at most 8");
  t->dtype = d;
  t->rank = static_cast<uint32_t>(rank);
  uint64_t total = 1;
  for (size_t i = 0; i < rank; ++i) {
    const long long v = nb::cast<long long>(shape[i]);
    if (v < 0) raise_status(Status::invalid_argument, "shape has a negative dimension");
    t->dims[i] = static_cast<uint64_t>(v);
    total = t->dims[i] != 0 && total > splitzip::kMaxElems / t->dims[i] ? splitzip::kMaxElems + 1 : total * t->dims[i];
  }
  if (total != n)
    raise_status(Status::invalid_argument, "shape holds " + std::to_string(total) + " elements, the array " +
                                               std::to_string(n));
  t->total_elems = total;
  const int origin = nb::cast<int>(tup[1]);
  if (origin < 0 || origin > 2) raise_status(Status::invalid_argument, "tensor origin must be 0, 1 or 2");
  t->origin = static_cast<splitzip::TensorOrigin>(origin);
  if (!tup[2].is_none()) {
    *name_store = nb::cast<std::string>(tup[2]);
    if (name_store->size() > 0xFFFF) raise_status(Status::invalid_argument, "name longer than 65535 bytes");
    t->name = name_store->data();
    t->name_size = static_cast<uint32_t>(name_store->size());
  }
  return true;
}

nb::object tensor_desc_py(nb::handle src, uint64_t offset) {
  ArrayRef a = host_source(src, "frame");
  if (offset > a.nbytes) raise_status(Status::invalid_argument, "offset " + std::to_string(offset) + " is past the end");
  splitzip::TensorDesc t;
  bool present = false;
  check(splitzip::read_tensor_desc(static_cast<const uint8_t*>(a.data) + offset, a.nbytes - offset, &t, &present),
        "tensor descriptor of the frame at offset " + std::to_string(offset));
  if (!present) return nb::none();
  nb::dict d;
  d["dtype"] = splitzip::dtype_name(t.dtype);
  nb::list shape;
  for (uint32_t i = 0; i < t.rank; ++i) shape.append(t.dims[i]);
  d["shape"] = nb::tuple(shape);
  d["total_elems"] = t.total_elems;
  d["origin"] = static_cast<int>(t.origin);
  d["name"] = t.name_size ? nb::object(nb::str(t.name, t.name_size)) : nb::none();
  d["container"] = static_cast<int>(t.container);
  d["container_header"] = t.container_size
                              ? nb::object(nb::bytes(reinterpret_cast<const char*>(t.container_header), t.container_size))
                              : nb::none();
  return d;
}

// Frame bytes objects. A frame is written into a bytes object of the
// compress_bound() size, then cut to the frame. Cutting a large one with
// realloc leaves malloc a smaller free block than the next call's bound, so
// the next frame lands in a fresh mapping whose every page faults on first
// write: 0.3x of compress_into() on 22 MiB (docs/PYTHON.md). A large frame
// keeps its allocation instead: its length is set in place and the tail's
// whole pages go back to the kernel, so the unused bound holds no memory.
constexpr uint64_t kKeepAllocation = uint64_t{128} << 10;  // glibc's default mmap threshold

// A batch's frames (or outputs) are many blocks below malloc's mmap
// threshold, so they come from the heap. When the caller drops them, glibc
// gives the heap's free top back to the kernel past M_TRIM_THRESHOLD (128
// KiB until the process frees a large mmapped block), and the next batch
// faults every page it writes again: 32 KiB capacity pages with sets encoded
// at 17 us a page instead of 10 (docs/PYTHON.md). glibc raises both
// thresholds when a process frees an mmapped block (to its size, and twice
// that), as any process that frees a large array does; this frees one of
// the batch's size (at most glibc's 32 MiB cap), once per larger size, so a
// batch's heap stays mapped for the next. glibc only; others unchanged.
constexpr uint64_t kHeapKeepMax = uint64_t{32} << 20;  // glibc's cap on the raised mmap threshold
void keep_heap_for_batches(uint64_t bytes) {
#if defined(__GLIBC__)
  static std::atomic<uint64_t> raised{0};
  bytes = std::min(bytes, kHeapKeepMax);
  if (bytes <= kKeepAllocation || bytes <= raised.load(std::memory_order_relaxed)) return;
  raised.store(bytes, std::memory_order_relaxed);
  auto* p = static_cast<volatile char*>(std::malloc(bytes));
  if (p == nullptr) return;
  p[0] = 0;  // a use: the pair is not optimized away
  std::free(const_cast<char*>(p));
#else
  (void)bytes;
#endif
}

nb::object new_frame_bytes(uint64_t bound) {
  PyObject* b = PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(bound));
  if (!b) throw nb::python_error();
  return nb::steal(b);
}

nb::object finish_frame_bytes(nb::object holder, uint64_t size, uint64_t bound) {
  if (bound < kKeepAllocation) {
    // Shrinking a fresh bytes object reallocates in place; no copy of the frame.
    PyObject* p = holder.release().ptr();
    if (_PyBytes_Resize(&p, static_cast<Py_ssize_t>(size)) != 0) throw nb::python_error();
    return nb::steal(p);
  }
  char* data = PyBytes_AS_STRING(holder.ptr());
  Py_SET_SIZE(reinterpret_cast<PyVarObject*>(holder.ptr()), static_cast<Py_ssize_t>(size));
  data[size] = '\0';
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto lo = (reinterpret_cast<uintptr_t>(data) + size + 1 + page - 1) & ~(page - 1);
  const auto hi = (reinterpret_cast<uintptr_t>(data) + bound) & ~(page - 1);
  // Advice only: where it fails, the tail stays resident, the frame is intact.
  if (hi > lo) (void)madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_DONTNEED);
  return holder;
}

// compress() into a new bytes object: allocate the bound, shrink in place.
nb::tuple compress_to_bytes(nb::handle src, const OptStr& dtype, const Codebook* cb,
                            uint32_t chunk_log2, bool checksum, const OptStr& backend,
                            int threads, int mode, nb::handle tensor, const splitzip::TableSet* tables) {
  ArrayRef a = import_array(src, false, "array");
  if (!a.host_readable())
    raise_status(Status::unsupported_memory,
                 "a device array compresses into a device buffer: use compress_into()");
  const Dtype d = resolve_dtype(a, dtype, "array");
  const uint64_t n = element_count(a, d, "array");
  auto opts = compress_options(cb, d, chunk_log2, checksum, backend, threads, mode, tables);
  splitzip::TensorDesc td;
  std::string name_store;
  if (tensor_from(tensor, d, n, &td, &name_store)) opts.tensor = &td;
  const uint64_t bound = splitzip::compress_bound(d, n) + (opts.tensor ? splitzip::tensor_desc_size(td) : 0);
  nb::object holder = new_frame_bytes(bound);
  splitzip::Result r;
  {
    nb::gil_scoped_release unlocked;
    r = splitzip::compress(d, a.data, n, PyBytes_AS_STRING(holder.ptr()), bound, opts);
  }
  check(r.status, "compress");
  return nb::make_tuple(finish_frame_bytes(std::move(holder), r.size, bound), backend_str(r.backend));
}

nb::tuple compress_into(nb::handle src, nb::handle dst, const OptStr& dtype, const Codebook* cb,
                        uint32_t chunk_log2, bool checksum, const OptStr& backend, int threads,
                        int mode, const splitzip::TableSet* tables) {
  ArrayRef a = import_array(src, false, "array");
  ArrayRef o = import_array(dst, true, "out");
  const Dtype d = resolve_dtype(a, dtype, "array");
  const uint64_t n = element_count(a, d, "array");
  const auto opts = compress_options(cb, d, chunk_log2, checksum, backend, threads, mode, tables);
  check_disjoint(a, o);
  splitzip::Result r;
  {
    nb::gil_scoped_release unlocked;
    r = splitzip::compress(d, a.data, n, o.data, o.nbytes, opts);
  }
  check(r.status, "compress into a " + std::to_string(o.nbytes) + "-byte buffer, bound " +
                      std::to_string(splitzip::compress_bound(d, n)));
  return nb::make_tuple(r.size, backend_str(r.backend));
}

// expect: the frames' dtype ("bf16", ...), "mixed" when they differ (the
// destination must then be a raw byte buffer), or "none" for a stream of no
// frames (any destination). multi: decode a frame stream.
nb::tuple decompress_into(nb::handle src, nb::handle dst, const std::string& expect, bool multi,
                          const OptStr& backend, int threads, uint64_t max_output_bytes,
                          bool verify_checksum, nb::handle tables) {
  const std::vector<splitzip::TableSet> sets = table_sets(tables);
  ArrayRef a = import_array(src, false, "frame");
  ArrayRef o = import_array(dst, true, "out");
  if (expect == "none") {
    if (!multi) raise_status(Status::invalid_argument, "a single frame always has a dtype");
  } else if (expect == "mixed") {
    if (!(o.dt.lanes == 1 && o.dt.bits == 8 && (o.dt.code == 0 || o.dt.code == 1)))
      raise_status(Status::invalid_argument,
                   "frames of different dtypes decode only into a raw uint8 buffer, out= is " +
                       describe(o.dt));
  } else if (!storage_compatible(o.dt, parse_dtype_name(expect))) {
    raise_status(Status::invalid_argument,
                 "out= has element type " + describe(o.dt) + ", which cannot hold the frame dtype " + expect);
  }
  check_disjoint(a, o);
  splitzip::DecompressOptions opts;
  opts.backend = backend ? backend->c_str() : nullptr;
  opts.threads = threads;
  opts.max_output_bytes = max_output_bytes;
  opts.verify_checksum = verify_checksum;
  opts.tables = sets.data();
  opts.n_tables = sets.size();
  splitzip::Result r;
  {
    nb::gil_scoped_release unlocked;
    r = multi ? splitzip::decompress_frames(a.data, a.nbytes, o.data, o.nbytes, opts)
              : splitzip::decompress(a.data, a.nbytes, o.data, o.nbytes, opts);
  }
  if (r.status == Status::missing_tables) raise_status(r.status, missing_tables_hint(a.data, a.nbytes, sets));
  check(r, "decompress into a " + std::to_string(o.nbytes) + "-byte buffer");
  return nb::make_tuple(r.size, backend_str(r.backend));
}

// Rows of a stacked array (pages along axis 0): (base, rows, bytes per row).
struct Rows {
  uint8_t* base = nullptr;
  uint64_t count = 0, bytes = 0;
};
Rows rows_of(const ArrayRef& a, const char* what) {
  const size_t nd = a.rw.is_valid() ? a.rw.ndim() : a.ro.ndim();
  if (nd < 2) raise_status(Status::invalid_argument, std::string(what) + " stacks pages along axis 0: it needs 2+ dimensions");
  Rows r;
  r.base = static_cast<uint8_t*>(a.data);
  r.count = a.rw.is_valid() ? a.rw.shape(0) : a.ro.shape(0);
  r.bytes = r.count ? a.nbytes / r.count : 0;
  return r;
}

// A frame source: a bytes object without the buffer protocol's import
// (it cost as much as a 4 KiB page's decode), anything else through it.
std::pair<const void*, uint64_t> frame_ref(nb::handle f, std::vector<ArrayRef>& keep) {
  if (PyBytes_CheckExact(f.ptr()))
    return {PyBytes_AS_STRING(f.ptr()), static_cast<uint64_t>(PyBytes_GET_SIZE(f.ptr()))};
  keep.push_back(host_source(f, "frame"));
  return {keep.back().data, keep.back().nbytes};
}

// Batched pages: one frame per page, threads across them, the GIL
// released once. arrays: a sequence of pages, or with stacked one array
// whose rows (axis 0) are the pages. specs: None, one tensor spec for every
// page (stacked), or per page its spec or None, so each frame is the one
// compress() writes for that page. Returns a list of bytes; the first
// failing page raises with its index.
nb::list compress_batch_py(nb::handle arrays, const OptStr& dtype, const Codebook* cb, uint32_t chunk_log2,
                           bool checksum, const OptStr& backend, int threads, int mode, nb::handle specs,
                           bool stacked, const splitzip::TableSet* tables, nb::handle page_tables) {
  std::vector<ArrayRef> refs;
  Rows rows;
  if (stacked) {
    refs.push_back(host_source(arrays, "pages"));
    rows = rows_of(refs[0], "pages");
  } else {
    for (nb::handle item : arrays) refs.push_back(host_source(item, "page"));
  }
  const size_t count = stacked ? rows.count : refs.size();
  nb::list out;
  if (count == 0) return out;
  std::vector<nb::handle> spec;
  if (!specs.is_none() && !stacked)
    for (nb::handle sp : specs) spec.push_back(sp);
  if (!spec.empty() && spec.size() != count)
    raise_status(Status::invalid_argument, std::to_string(count) + " pages but " +
                                               std::to_string(spec.size()) + " tensor specs");
  const Dtype d = resolve_dtype(refs[0], dtype, "page");
  const OptStr name(splitzip::dtype_name(d));
  auto opts = compress_options(cb, d, chunk_log2, checksum, backend, threads, mode, tables);
  const std::vector<const splitzip::TableSet*> per_page = item_sets(page_tables, count, d, mode, "page");
  std::vector<splitzip::CompressItem> items(count);
  std::vector<nb::object> holders(count);
  std::vector<splitzip::TensorDesc> tds(spec.empty() ? 1 : count);
  std::vector<std::string> names(tds.size());
  const uint64_t row_elems = stacked ? element_count(refs[0], d, "pages") / rows.count : 0;
  uint64_t shared_desc = 0;
  if (stacked && tensor_from(specs, d, row_elems, &tds[0], &names[0])) {
    opts.tensor = &tds[0];
    shared_desc = splitzip::tensor_desc_size(tds[0]);
  }
  for (size_t i = 0; i < count; ++i) {
    const void* src;
    uint64_t n;
    if (stacked) {
      src = rows.base + i * rows.bytes;
      n = row_elems;
    } else {
      resolve_dtype(refs[i], name, "page");
      src = refs[i].data;
      n = element_count(refs[i], d, "page");
    }
    uint64_t bound = splitzip::compress_bound(d, n) + shared_desc;
    const splitzip::TensorDesc* t = nullptr;
    if (!spec.empty() && tensor_from(spec[i], d, n, &tds[i], &names[i])) {
      t = &tds[i];
      bound += splitzip::tensor_desc_size(tds[i]);
    }
    if (i == 0)  // pages of one size: the batch's bytes
      keep_heap_for_batches(bound > kHeapKeepMax / count ? kHeapKeepMax : bound * count);
    holders[i] = new_frame_bytes(bound);
    items[i] = {src, n, PyBytes_AS_STRING(holders[i].ptr()), bound, t};
    if (!per_page.empty()) items[i].tables = per_page[i];
  }
  std::vector<splitzip::Result> res(count);
  {
    nb::gil_scoped_release unlocked;
    splitzip::compress_batch(d, items.data(), items.size(), res.data(), opts);
  }
  for (size_t i = 0; i < res.size(); ++i)
    if (!res[i].ok()) check(res[i], "compress_batch page " + std::to_string(i));
  for (size_t i = 0; i < res.size(); ++i)
    out.append(finish_frame_bytes(std::move(holders[i]), res[i].size, items[i].dst_capacity));
  return out;
}

// What decompress_batch() allocates per frame: (dtype name, elements,
// recorded shape or None, recorded origin), without a dict per frame.
nb::list batch_outputs(nb::handle frames) {
  nb::list out;
  size_t i = 0;
  std::vector<ArrayRef> keep;
  uint64_t bytes = 0;
  for (nb::handle f : frames) {
    const auto [data, size] = frame_ref(f, keep);
    splitzip::FrameInfo fi;
    const Status st = splitzip::frame_info(data, size, &fi);
    if (st != Status::ok) check(st, "decompress_batch frame " + std::to_string(i));
    bytes = std::min(kHeapKeepMax, bytes + std::min(fi.decoded_size, kHeapKeepMax));
    nb::object shape = nb::none();
    int origin = 0;
    if (fi.has_tensor) {
      splitzip::TensorDesc t;
      bool present = false;
      check(splitzip::read_tensor_desc(data, size, &t, &present),
            "tensor descriptor of decompress_batch frame " + std::to_string(i));
      if (present && t.total_elems == fi.n_elems && t.dtype == fi.dtype) {
        nb::list dims;
        for (uint32_t k = 0; k < t.rank; ++k) dims.append(t.dims[k]);
        shape = nb::tuple(dims);
        origin = static_cast<int>(t.origin);
      }
    }
    out.append(nb::make_tuple(splitzip::dtype_name(fi.dtype), fi.n_elems, shape, origin));
    ++i;
  }
  keep_heap_for_batches(bytes);  // the outputs decompress_batch() allocates next
  return out;
}

// The distinct dtype names of frames, sorted: what decompress_batch() into
// rows needs of batch_outputs(), without a tuple per frame.
nb::list batch_dtypes(nb::handle frames) {
  std::vector<ArrayRef> keep;
  std::vector<bool> seen;
  size_t i = 0;
  for (nb::handle f : frames) {
    const auto [data, size] = frame_ref(f, keep);
    splitzip::FrameInfo fi;
    const Status st = splitzip::frame_info(data, size, &fi);
    if (st != Status::ok) check(st, "decompress_batch frame " + std::to_string(i));
    const size_t d = static_cast<size_t>(fi.dtype);
    if (d >= seen.size()) seen.resize(d + 1);
    seen[d] = true;
    ++i;
  }
  std::vector<std::string> names;
  for (size_t d = 0; d < seen.size(); ++d)
    if (seen[d]) names.push_back(splitzip::dtype_name(static_cast<splitzip::Dtype>(d)));
  std::sort(names.begin(), names.end());
  nb::list out;
  for (const std::string& n : names) out.append(nb::str(n.c_str()));
  return out;
}

// frames[i] (one frame each) into outs[i] (validated by _api.py), or with
// stacked into row i of the one array outs; returns the bytes written per
// item.
nb::list decompress_batch_py(nb::handle frames, nb::handle outs, const OptStr& backend, int threads,
                             uint64_t max_output_bytes, bool verify_checksum, bool stacked, nb::handle tables) {
  const std::vector<splitzip::TableSet> sets = table_sets(tables);
  std::vector<ArrayRef> keep, dst;
  std::vector<std::pair<const void*, uint64_t>> src;
  for (nb::handle f : frames) src.push_back(frame_ref(f, keep));
  Rows rows;
  if (stacked) {
    dst.push_back(import_array(outs, true, "outs"));
    rows = rows_of(dst[0], "outs");
  } else {
    for (nb::handle o : outs) dst.push_back(import_array(o, true, "out"));
  }
  const size_t count = stacked ? rows.count : dst.size();
  if (src.size() != count)
    raise_status(Status::invalid_argument, std::to_string(src.size()) + " frames but " +
                                               std::to_string(count) + " outputs");
  std::vector<splitzip::DecompressItem> items(src.size());
  for (size_t i = 0; i < src.size(); ++i) {
    const ArrayRef& o = dst[stacked ? 0 : i];
    if (!o.host_readable())
      raise_status(Status::unsupported_memory, "out " + std::to_string(i) + " must be in host memory");
    void* p = stacked ? static_cast<void*>(rows.base + i * rows.bytes) : o.data;
    const uint64_t cap = stacked ? rows.bytes : o.nbytes;
    if (overlaps(src[i].first, src[i].second, p, cap)) raise_status(Status::invalid_argument, kOverlap);
    items[i] = {src[i].first, src[i].second, p, cap};
  }
  splitzip::DecompressOptions opts;
  opts.backend = backend ? backend->c_str() : nullptr;
  opts.threads = threads;
  opts.max_output_bytes = max_output_bytes;
  opts.verify_checksum = verify_checksum;
  opts.tables = sets.data();
  opts.n_tables = sets.size();
  std::vector<splitzip::Result> res(items.size());
  {
    nb::gil_scoped_release unlocked;
    splitzip::decompress_batch(items.data(), items.size(), res.data(), opts);
  }
  nb::list sizes;
  for (size_t i = 0; i < res.size(); ++i) {
    if (res[i].status == Status::missing_tables)
      raise_status(res[i].status, "decompress_batch frame " + std::to_string(i) + ": " +
                                      missing_tables_hint(items[i].src, items[i].src_size, sets));
    if (!res[i].ok()) check(res[i], "decompress_batch frame " + std::to_string(i));
    sizes.append(res[i].size);
  }
  return sizes;
}

// The frames of one offload chunk (python/splitzip_kv/offload/chunk.py)
// into their destinations in one call, with the checks decode_into made per
// part in Python, in its order: the frame header, its size against the span,
// the checksum flag, dtype and element count, the destination (dest_errors[i]:
// the caller's message, or None), then the frame, its checksum verified.
// Why: at a 32 KiB page those Python steps took three times as long as the
// codec. Returns None, or (part, status name or None, message) for the first
// part refused, which the caller turns into ChunkError.
nb::object decode_chunk_parts(nb::handle value, nb::handle spans, nb::handle dests, nb::handle dest_errors,
                              const std::string& name, uint64_t elems, const OptStr& backend, int threads,
                              nb::handle tables) {
  const std::vector<splitzip::TableSet> sets = table_sets(tables);
  const ArrayRef v = host_source(value, "value");
  const Dtype want = parse_dtype_name(name);
  std::vector<std::pair<uint64_t, uint64_t>> sp;
  for (nb::handle t : spans) sp.emplace_back(nb::cast<uint64_t>(t[0]), nb::cast<uint64_t>(t[1]));
  std::vector<nb::handle> errs;
  for (nb::handle e : dest_errors) errs.push_back(e);
  std::vector<nb::handle> outs;
  for (nb::handle o : dests) outs.push_back(o);
  if (sp.size() != outs.size() || errs.size() != outs.size())
    raise_status(Status::invalid_argument, std::to_string(sp.size()) + " spans, " + std::to_string(outs.size()) +
                                               " destinations, " + std::to_string(errs.size()) + " checks");
  splitzip::DecompressOptions opts;
  opts.backend = backend ? backend->c_str() : nullptr;
  opts.threads = threads;
  opts.verify_checksum = true;
  opts.tables = sets.data();
  opts.n_tables = sets.size();
  const auto* base = static_cast<const uint8_t*>(v.data);
  const nb::object no_status = nb::none();
  for (size_t i = 0; i < sp.size(); ++i) {
    const auto [off, size] = sp[i];
    if (off > v.nbytes || size > v.nbytes - off)
      raise_status(Status::invalid_argument, "part " + std::to_string(i) + " lies past the value");
    const uint8_t* f = base + off;
    splitzip::FrameInfo fi;
    const Status st = splitzip::frame_info(f, size, &fi);
    if (st != Status::ok) return nb::make_tuple(i, splitzip::status_name(st), status_text(st, "frame at offset 0"));
    if (fi.frame_size != size)
      return nb::make_tuple(i, no_status,
                            "frame is " + std::to_string(fi.frame_size) + " bytes, span " + std::to_string(size));
    if (!fi.has_checksum) return nb::make_tuple(i, no_status, "frame has no content checksum");
    if (fi.dtype != want || fi.n_elems != elems)
      return nb::make_tuple(i, no_status,
                            "frame holds " + std::to_string(fi.n_elems) + " " + splitzip::dtype_name(fi.dtype) +
                                ", expected " + std::to_string(elems) + " " + name);
    if (!errs[i].is_none()) return nb::make_tuple(i, no_status, errs[i]);
    const ArrayRef o = import_array(outs[i], true, "out");
    if (!o.host_readable())
      raise_status(Status::unsupported_memory, "destination " + std::to_string(i) + " must be in host memory");
    if (overlaps(f, size, o.data, o.nbytes))
      return nb::make_tuple(i, splitzip::status_name(Status::invalid_argument),
                            status_text(Status::invalid_argument, kOverlap));
    splitzip::Result r;
    {
      nb::gil_scoped_release unlocked;
      r = splitzip::decompress(f, size, o.data, o.nbytes, opts);
    }
    if (r.status == Status::missing_tables)
      return nb::make_tuple(i, splitzip::status_name(r.status),
                            status_text(r.status, missing_tables_hint(f, size, sets)));
    if (!r.ok())
      return nb::make_tuple(i, splitzip::status_name(r.status),
                            status_text(r.status, "decompress into a " + std::to_string(o.nbytes) + "-byte buffer",
                                        r.corrupt_block));
  }
  return nb::none();
}

// Offload chunks (python/splitzip_kv/offload/chunk.py) in groups: the
// parts of every chunk coded, or checked and decoded, in one call with the
// GIL released once, so that Python spends no time per part. Parts are
// slices of one host buffer (a paged KV cache, a tensor's rows) at the
// byte offsets part_offsets[chunk * parts + part].
namespace chunkfmt {
constexpr uint8_t kMagic[4] = {'S', 'Z', 'K', 'C'};
constexpr uint8_t kVersion = 1;
constexpr uint64_t kFixed = 24;
uint64_t header_size(uint64_t parts) { return ((kFixed + 4 * parts + 7) & ~uint64_t{7}) + 8; }
uint64_t rd64(const uint8_t* p) { uint64_t v; std::memcpy(&v, p, 8); return v; }  // little-endian hosts only
uint32_t rd32(const uint8_t* p) { uint32_t v; std::memcpy(&v, p, 4); return v; }
uint16_t rd16(const uint8_t* p) { uint16_t v; std::memcpy(&v, p, 2); return v; }
}  // namespace chunkfmt

// uint64 entries of a host buffer (a numpy uint64 / int64 array), or of a
// short list of ints (a one-chunk call: no array to build in Python).
std::pair<const uint64_t*, size_t> u64_array(nb::handle obj, const char* what, std::vector<uint64_t>& store) {
  if (PyList_CheckExact(obj.ptr())) {
    store.clear();
    for (nb::handle v : obj) store.push_back(nb::cast<uint64_t>(v));
    return {store.data(), store.size()};
  }
  const ArrayRef a = host_source(obj, what);
  if (a.dt.bits != 64 || a.dt.lanes != 1 || (a.dt.code != 0 && a.dt.code != 1))
    raise_status(Status::invalid_argument, std::string(what) + " must be a uint64 array");
  return {static_cast<const uint64_t*>(a.data), a.nbytes / 8};
}

// Spans [offsets[i], + len) must not share bytes: the codec writes them
// from several threads.
void check_spans_disjoint(const uint64_t* offsets, size_t count, uint64_t len, const char* what) {
  std::vector<uint64_t> sorted(offsets, offsets + count);
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 1; i < sorted.size(); ++i)
    if (sorted[i] - sorted[i - 1] < len)
      raise_status(Status::invalid_argument, std::string(what) + " overlap (offsets " +
                                                 std::to_string(sorted[i - 1]) + " and " +
                                                 std::to_string(sorted[i]) + ", " + std::to_string(len) +
                                                 " bytes each)");
}

void check_elems(uint64_t elems) {
  if (elems > splitzip::kMaxElems) raise_status(Status::invalid_argument, "more than 2^56 elements per part");
}

std::vector<uint64_t> key_hashes(nb::handle keys) {
  std::vector<uint64_t> out;
  for (nb::handle k : keys) {
    Py_ssize_t len = 0;
    const char* u = PyUnicode_AsUTF8AndSize(k.ptr(), &len);
    if (!u) throw nb::python_error();
    out.push_back(splitzip::xxh64(u, static_cast<uint64_t>(len), 0));
  }
  return out;
}

// Writes chunk c (keys[c], parts from src) at out + out_offsets[c]; each
// chunk has chunk_bound() bytes there. Returns (sizes, errors): the value
// size per chunk (0 for a failed chunk) and (chunk, message) per failure.
nb::tuple encode_chunks(nb::handle out, nb::handle out_offsets, nb::handle keys, nb::handle src,
                        nb::handle part_offsets, uint32_t parts, uint64_t elems, const std::string& dtype,
                        uint32_t dtype_id, const Codebook* cb, const OptStr& backend, int threads, int mode,
                        const splitzip::TableSet* tables, nb::handle part_tables) {
  const ArrayRef o = import_array(out, true, "out");
  const ArrayRef a = host_source(src, "source");
  if (!o.host_readable()) raise_status(Status::unsupported_memory, "out must be in host memory");
  check_disjoint(a, o);
  const Dtype d = parse_dtype_name(dtype);
  const auto opts = compress_options(cb, d, splitzip::kDefaultChunkLog2, true, backend, threads, mode, tables);
  std::vector<uint64_t> st1;
  const auto [offs, n] = u64_array(out_offsets, "out_offsets", st1);
  std::vector<uint64_t> st2;
  const auto [poffs, np_] = u64_array(part_offsets, "part_offsets", st2);
  const std::vector<uint64_t> khash = key_hashes(keys);
  if (parts == 0 || parts > 0xFFFF) raise_status(Status::invalid_argument, "a chunk has 1..65535 parts");
  check_elems(elems);
  if (khash.size() != n || np_ != n * parts)
    raise_status(Status::invalid_argument, std::to_string(n) + " chunks, " + std::to_string(khash.size()) +
                                               " keys, " + std::to_string(np_) + " part offsets");
  // A set per part of every chunk (chunk c's part j: entry c * parts + j).
  const std::vector<const splitzip::TableSet*> per_part = item_sets(part_tables, n * parts, d, mode, "part");
  const uint64_t part_bytes = elems * splitzip::dtype_bytes(d);
  const uint64_t pbound = splitzip::compress_bound(d, elems);
  const uint64_t h = chunkfmt::header_size(parts);
  const uint64_t cbound = h + parts * pbound;
  for (size_t c = 0; c < n; ++c) {
    if (offs[c] > o.nbytes || o.nbytes - offs[c] < cbound)
      raise_status(Status::dst_too_small, "chunk " + std::to_string(c) + " has no room for its bound");
    for (uint32_t j = 0; j < parts; ++j)
      if (poffs[c * parts + j] > a.nbytes || a.nbytes - poffs[c * parts + j] < part_bytes)
        raise_status(Status::invalid_argument, "part offset past the source");
  }
  check_spans_disjoint(offs, n, cbound, "chunk places in out");
  auto* ob = static_cast<uint8_t*>(o.data);
  const auto* sb = static_cast<const uint8_t*>(a.data);
  std::vector<uint64_t> pos(n, h), sizes(n * parts, 0);
  std::vector<std::pair<size_t, std::string>> errors;
  {
    nb::gil_scoped_release unlocked;
    std::vector<Status> failed(n, Status::ok);
    std::vector<uint32_t> failed_part(n, 0);
    std::vector<splitzip::CompressItem> items;
    std::vector<size_t> who;
    std::vector<splitzip::Result> res;
    // Part j of every chunk in one batch: its place follows part j-1's frame.
    for (uint32_t j = 0; j < parts; ++j) {
      items.clear();
      who.clear();
      for (size_t c = 0; c < n; ++c) {
        if (failed[c] != Status::ok) continue;
        items.push_back({sb + poffs[c * parts + j], elems, ob + offs[c] + pos[c], pbound, nullptr});
        if (!per_part.empty()) items.back().tables = per_part[c * parts + j];
        who.push_back(c);
      }
      res.assign(items.size(), splitzip::Result{});
      if (items.size() == 1) {  // one chunk (a serde record): threads inside the frame
        splitzip::CompressOptions one = opts;
        if (items[0].tables != nullptr) one.tables = items[0].tables;
        res[0] = splitzip::compress(d, items[0].src, elems, items[0].dst, pbound, one);
      } else if (!items.empty()) {
        splitzip::compress_batch(d, items.data(), items.size(), res.data(), opts);
      }
      for (size_t k = 0; k < who.size(); ++k) {
        const size_t c = who[k];
        if (!res[k].ok()) {
          failed[c] = res[k].status;
          failed_part[c] = j;
          continue;
        }
        sizes[c * parts + j] = res[k].size;
        pos[c] += res[k].size;
      }
    }
    for (size_t c = 0; c < n; ++c) {
      if (failed[c] != Status::ok) {
        errors.emplace_back(c, "part " + std::to_string(failed_part[c]) + ": " +
                                   splitzip::status_name(failed[c]) + ": " + status_text(failed[c]));
        pos[c] = 0;
        continue;
      }
      uint8_t* hb = ob + offs[c];
      std::memset(hb, 0, h);
      std::memcpy(hb, chunkfmt::kMagic, 4);
      hb[4] = chunkfmt::kVersion;
      hb[5] = static_cast<uint8_t>(dtype_id);
      const uint16_t p16 = static_cast<uint16_t>(parts);
      std::memcpy(hb + 6, &p16, 2);
      std::memcpy(hb + 8, &khash[c], 8);
      std::memcpy(hb + 16, &elems, 8);
      for (uint32_t j = 0; j < parts; ++j) {
        const uint32_t s32 = static_cast<uint32_t>(sizes[c * parts + j]);
        std::memcpy(hb + chunkfmt::kFixed + 4 * j, &s32, 4);
      }
      const uint64_t hsum = splitzip::xxh64(hb, h - 8, 0);
      std::memcpy(hb + h - 8, &hsum, 8);
    }
  }
  nb::list sz;
  for (size_t c = 0; c < n; ++c) sz.append(pos[c]);
  nb::list errs;
  for (auto& [c, m] : errors) errs.append(nb::make_tuple(c, m));
  return nb::make_tuple(sz, errs);
}

// Checks and decodes chunk values: value c is buf[value_offsets[c], +
// value_sizes[c]) for keys[c] (exact: the value ends with its last frame;
// else bytes may follow), its parts go to dst + part_offsets[c * parts + j].
// Returns per chunk None or the reason it was refused (the ChunkError
// reason chunk.parse / decode_into give, in their order of checks).
nb::list decode_chunks(nb::handle buf, nb::handle value_offsets, nb::handle value_sizes, nb::handle keys,
                       nb::handle dst, nb::handle part_offsets, uint32_t parts, uint64_t elems,
                       const std::string& dtype, uint32_t dtype_id, bool exact, const OptStr& backend,
                       int threads, nb::handle tables) {
  const std::vector<splitzip::TableSet> sets = table_sets(tables);
  const ArrayRef v = host_source(buf, "value");
  const ArrayRef o = import_array(dst, true, "destination");
  if (!o.host_readable()) raise_status(Status::unsupported_memory, "destination must be in host memory");
  check_disjoint(v, o);
  const Dtype d = parse_dtype_name(dtype);
  std::vector<uint64_t> st3;
  const auto [voffs, n] = u64_array(value_offsets, "value_offsets", st3);
  std::vector<uint64_t> st4;
  const auto [vsizes, nv] = u64_array(value_sizes, "value_sizes", st4);
  std::vector<uint64_t> st5;
  const auto [poffs, np_] = u64_array(part_offsets, "part_offsets", st5);
  const std::vector<uint64_t> khash = key_hashes(keys);
  if (nv != n || khash.size() != n || np_ != n * parts)
    raise_status(Status::invalid_argument, "value, key and part offset counts disagree");
  check_elems(elems);
  const uint64_t part_bytes = elems * splitzip::dtype_bytes(d);
  check_spans_disjoint(poffs, np_, part_bytes, "destination parts");
  for (size_t c = 0; c < n; ++c) {
    if (voffs[c] > v.nbytes || v.nbytes - voffs[c] < vsizes[c])
      raise_status(Status::invalid_argument, "value " + std::to_string(c) + " lies past the buffer");
    for (uint32_t j = 0; j < parts; ++j)
      if (poffs[c * parts + j] > o.nbytes || o.nbytes - poffs[c * parts + j] < part_bytes)
        raise_status(Status::invalid_argument, "part offset past the destination");
  }
  splitzip::DecompressOptions opts;
  opts.backend = backend ? backend->c_str() : nullptr;
  opts.threads = threads;
  opts.verify_checksum = true;
  opts.tables = sets.data();
  opts.n_tables = sets.size();
  const auto* vb = static_cast<const uint8_t*>(v.data);
  auto* db = static_cast<uint8_t*>(o.data);
  std::vector<std::string> why(n);
  std::vector<char> bad(n, 0);
  {
    nb::gil_scoped_release unlocked;
    std::vector<splitzip::DecompressItem> items;
    std::vector<std::pair<size_t, uint32_t>> who;
    items.reserve(n * parts);
    const auto refuse = [&](size_t c, std::string m) { bad[c] = 1; why[c] = std::move(m); };
    for (size_t c = 0; c < n; ++c) {
      const uint8_t* p = vb + voffs[c];
      const uint64_t size = vsizes[c];
      if (size < chunkfmt::kFixed) {
        refuse(c, "value of " + std::to_string(size) + " bytes is shorter than a chunk header");
        continue;
      }
      if (std::memcmp(p, chunkfmt::kMagic, 4) != 0) { refuse(c, "bad magic (not a splitzip chunk)"); continue; }
      if (p[4] != chunkfmt::kVersion) { refuse(c, "unsupported chunk version " + std::to_string(p[4])); continue; }
      const uint64_t np = chunkfmt::rd16(p + 6);
      if (np == 0) { refuse(c, "chunk header has no parts"); continue; }
      const uint64_t h = chunkfmt::header_size(np);
      if (size < h) { refuse(c, "truncated chunk header"); continue; }
      if (chunkfmt::rd64(p + h - 8) != splitzip::xxh64(p, h - 8, 0)) {
        refuse(c, "chunk header checksum mismatch");
        continue;
      }
      if (chunkfmt::rd64(p + 8) != khash[c]) { refuse(c, "value belongs to another key"); continue; }
      if (p[5] != dtype_id) {
        refuse(c, "dtype id " + std::to_string(p[5]) + ", expected " + dtype);
        continue;
      }
      if (np != parts) {
        refuse(c, std::to_string(np) + " parts, expected " + std::to_string(parts));
        continue;
      }
      const uint64_t e = chunkfmt::rd64(p + 16);
      if (e != elems) {
        refuse(c, std::to_string(e) + " elements per part, expected " + std::to_string(elems));
        continue;
      }
      uint64_t total = h;
      for (uint32_t j = 0; j < parts; ++j) total += chunkfmt::rd32(p + chunkfmt::kFixed + 4 * j);
      if (exact ? total != size : total > size) {
        refuse(c, "frame sizes add up to " + std::to_string(total) + " bytes, value has " + std::to_string(size));
        continue;
      }
      uint64_t off = h;
      const size_t first = items.size();
      for (uint32_t j = 0; j < parts && !bad[c]; ++j) {
        const uint64_t fs = chunkfmt::rd32(p + chunkfmt::kFixed + 4 * j);
        const std::string part = "part " + std::to_string(j) + ": ";
        splitzip::FrameInfo fi;
        const Status st = splitzip::frame_info(p + off, fs, &fi);
        if (st != Status::ok) {
          refuse(c, part + splitzip::status_name(st) + ": " + status_text(st, "frame at offset 0"));
        } else if (fi.frame_size != fs) {
          refuse(c, part + "frame is " + std::to_string(fi.frame_size) + " bytes, span " + std::to_string(fs));
        } else if (!fi.has_checksum) {
          refuse(c, part + "frame has no content checksum");
        } else if (fi.dtype != d || fi.n_elems != elems) {
          refuse(c, part + "frame holds " + std::to_string(fi.n_elems) + " " + splitzip::dtype_name(fi.dtype) +
                        ", expected " + std::to_string(elems) + " " + dtype);
        } else {
          items.push_back({p + off, fs, db + poffs[c * parts + j], part_bytes});
          who.emplace_back(c, j);
        }
        off += fs;
      }
      if (bad[c]) {
        items.resize(first);
        who.resize(first);
      }
    }
    std::vector<splitzip::Result> res(items.size());
    if (items.size() == 1) {
      res[0] = splitzip::decompress(items[0].src, items[0].src_size, items[0].dst, items[0].dst_capacity, opts);
    } else if (!items.empty()) {
      splitzip::decompress_batch(items.data(), items.size(), res.data(), opts);
    }
    for (size_t k = 0; k < items.size(); ++k) {
      const auto [c, j] = who[k];
      if (res[k].ok() || bad[c]) continue;  // the first failing part of a chunk names it
      const std::string ctx = res[k].status == Status::missing_tables
                                  ? missing_tables_hint(items[k].src, items[k].src_size, sets)
                                  : "decompress into a " + std::to_string(part_bytes) + "-byte buffer";
      refuse(c, "part " + std::to_string(j) + ": " + splitzip::status_name(res[k].status) + ": " +
                    status_text(res[k].status, ctx, res[k].corrupt_block));
    }
  }
  nb::list out;
  for (size_t c = 0; c < n; ++c) out.append(bad[c] ? nb::object(nb::str(why[c].c_str())) : nb::none());
  return out;
}

// memmove of spans within one host buffer, for the offload store's tails
// (a numpy slice assignment per chunk cost more than its decode's Python).
void copy_spans(nb::handle buf, nb::handle dst_offsets, nb::handle src_offsets, nb::handle lengths) {
  const ArrayRef b = import_array(buf, true, "buffer");
  if (!b.host_readable()) raise_status(Status::unsupported_memory, "buffer must be in host memory");
  std::vector<uint64_t> st6;
  const auto [dst, n] = u64_array(dst_offsets, "dst_offsets", st6);
  std::vector<uint64_t> st7;
  const auto [src, ns] = u64_array(src_offsets, "src_offsets", st7);
  std::vector<uint64_t> st8;
  const auto [len, nl] = u64_array(lengths, "lengths", st8);
  if (ns != n || nl != n) raise_status(Status::invalid_argument, "offset and length counts disagree");
  for (size_t i = 0; i < n; ++i)
    if (dst[i] > b.nbytes || src[i] > b.nbytes || len[i] > b.nbytes - dst[i] || len[i] > b.nbytes - src[i])
      raise_status(Status::invalid_argument, "span " + std::to_string(i) + " lies past the buffer");
  auto* p = static_cast<uint8_t*>(b.data);
  for (size_t i = 0; i < n; ++i) std::memmove(p + dst[i], p + src[i], len[i]);
}

nb::dict frame_info_py(nb::handle src, uint64_t offset) {
  ArrayRef a = host_source(src, "frame");
  return info_dict(read_info(a, offset), offset);
}

// Iterator over the frames of a stream in host memory (FORMAT.md 7): the
// library's FrameIterator, which checks each header (rules 1-11) when it
// reaches it. Yields frame_info() dicts with their offset; an empty stream
// yields nothing. Holds the buffer's export alive while it walks.
class FrameIter {
 public:
  explicit FrameIter(nb::handle src)
      : src_(host_source(src, "frame")),
        it_(src_.data, src_.nbytes) {}

  nb::dict next() {
    if (done_) throw nb::stop_iteration();
    splitzip::FrameView v;
    const Status s = it_.next(&v);
    if (s != Status::ok) {
      done_ = true;
      raise_status(s, "frame " + std::to_string(index_) + " at offset " + std::to_string(it_.offset()));
    }
    if (v.data == nullptr) {
      done_ = true;
      throw nb::stop_iteration();
    }
    ++index_;
    return info_dict(v.info, v.offset);
  }

 private:
  ArrayRef src_;
  splitzip::FrameIterator it_;
  uint64_t index_ = 0;
  bool done_ = false;
};

// What decompress() needs of a host stream of frames: (frames, dtype name of
// all of them, or "none" for no frames, or "mixed"; decoded bytes; elements;
// whether the first frame records a tensor). The same header checks and
// error contexts as FrameIter, without a dict per frame, which cost more
// than decoding a 32 KiB page.
nb::tuple scan_frames(nb::handle src) {
  const ArrayRef a = host_source(src, "frame");
  splitzip::FrameIterator it(a.data, a.nbytes);
  uint64_t count = 0, decoded = 0, elems = 0;
  bool first_tensor = false, mixed = false;
  Dtype dtype = Dtype::bf16;
  for (;;) {
    splitzip::FrameView v;
    const Status st = it.next(&v);
    if (st != Status::ok)
      raise_status(st, "frame " + std::to_string(count) + " at offset " + std::to_string(it.offset()));
    if (v.data == nullptr) break;
    if (count == 0) {
      dtype = v.info.dtype;
      first_tensor = v.info.has_tensor;
    } else {
      mixed |= v.info.dtype != dtype;
    }
    decoded += v.info.decoded_size;
    elems += v.info.n_elems;
    ++count;
  }
  const char* expect = count == 0 ? "none" : mixed ? "mixed" : splitzip::dtype_name(dtype);
  return nb::make_tuple(count, expect, decoded, elems, first_tensor);
}

// For frames in device memory: the caller copies the 64 header bytes to the
// host and says how many bytes the buffer holds from the frame start. Rules
// 1-11 look at the header and that size only.
nb::dict header_info_py(nb::bytes header, uint64_t available, uint64_t offset) {
  if (header.size() < splitzip::kHeaderSize || available < splitzip::kHeaderSize)
    raise_status(Status::truncated, "frame at offset " + std::to_string(offset));
  uint8_t h[splitzip::kHeaderSize];
  std::memcpy(h, header.c_str(), sizeof h);
  splitzip::FrameInfo fi;
  check(splitzip::frame_info(h, available, &fi), "frame at offset " + std::to_string(offset));
  return info_dict(fi, offset);
}

Codebook calibrate_py(nb::handle arrays, const OptStr& dtype) {
  std::vector<ArrayRef> refs;
  for (nb::handle item : arrays) refs.push_back(host_source(item, "calibration array"));
  if (refs.empty()) raise_status(Status::invalid_argument, "calibrate() needs at least one array");
  // The first array fixes the dtype; the others must hold the same values.
  const Dtype d = resolve_dtype(refs[0], dtype, "calibration array");
  const OptStr name(splitzip::dtype_name(d));
  std::vector<const void*> ptrs;
  std::vector<uint64_t> counts;
  for (const auto& r : refs) {
    resolve_dtype(r, name, "calibration array");
    ptrs.push_back(r.data);
    counts.push_back(element_count(r, d, "calibration array"));
  }
  Codebook cb;
  Status s;
  {
    nb::gil_scoped_release unlocked;
    s = splitzip::calibrate(d, ptrs.data(), counts.data(), ptrs.size(), &cb);
  }
  check(s, "calibrate");
  return cb;
}

splitzip::TableSet calibrate_tables_py(nb::handle arrays, const OptStr& dtype, uint32_t table_count) {
  std::vector<ArrayRef> refs;
  for (nb::handle item : arrays) refs.push_back(host_source(item, "calibration array"));
  if (refs.empty()) raise_status(Status::invalid_argument, "calibrate() needs at least one array");
  const Dtype d = resolve_dtype(refs[0], dtype, "calibration array");
  const OptStr name(splitzip::dtype_name(d));
  std::vector<const void*> ptrs;
  std::vector<uint64_t> counts;
  for (const auto& r : refs) {
    resolve_dtype(r, name, "calibration array");
    ptrs.push_back(r.data);
    counts.push_back(element_count(r, d, "calibration array"));
  }
  splitzip::TableSet t;
  Status s;
  {
    nb::gil_scoped_release unlocked;
    s = splitzip::calibrate_tables(d, ptrs.data(), counts.data(), ptrs.size(), &t, table_count);
  }
  check(s, std::string("calibrate(mode='capacity') on ") + splitzip::dtype_name(d));
  return t;
}

}  // namespace

void bind_codec(nb::module_& m) {
  m.attr("FORMAT_VERSION") = splitzip::kFormatVersion;
  m.attr("MIN_FORMAT_VERSION") = splitzip::kMinFormatVersion;
  m.attr("HEADER_SIZE") = splitzip::kHeaderSize;
  m.attr("DEFAULT_CHUNK_LOG2") = splitzip::kDefaultChunkLog2;
  m.attr("MIN_CHUNK_LOG2") = splitzip::kMinChunkLog2;
  m.attr("MAX_CHUNK_LOG2") = splitzip::kMaxChunkLog2;
  m.attr("MAX_ELEMS") = splitzip::kMaxElems;

  m.def("dtype_bytes", [](const std::string& name) { return splitzip::dtype_bytes(parse_dtype_name(name)); });
  m.def("compress_bound", [](const std::string& dtype, uint64_t n) {
    if (n > splitzip::kMaxElems) raise_status(Status::invalid_argument, "more than 2^56 elements");
    return splitzip::compress_bound(parse_dtype_name(dtype), n);
  });
  m.def("compress", &compress_to_bytes, nb::arg("array"), nb::arg("dtype").none(),
        nb::arg("codebook").none(), nb::arg("chunk_log2"), nb::arg("checksum"),
        nb::arg("backend").none(), nb::arg("threads"), nb::arg("mode"), nb::arg("tensor").none() = nb::none(),
        nb::arg("tables").none() = nb::none());
  m.def("compress_into", &compress_into, nb::arg("array"), nb::arg("out"), nb::arg("dtype").none(),
        nb::arg("codebook").none(), nb::arg("chunk_log2"), nb::arg("checksum"),
        nb::arg("backend").none(), nb::arg("threads"), nb::arg("mode"), nb::arg("tables").none() = nb::none());
  m.def("tensor_desc", &tensor_desc_py, nb::arg("frame"), nb::arg("offset") = 0);
  m.def("tensor_desc_size", [](const std::string& dtype, nb::handle spec) {
    const Dtype d = parse_dtype_name(dtype);
    splitzip::TensorDesc td;
    std::string name_store;
    nb::tuple tup = nb::cast<nb::tuple>(spec);
    uint64_t n = 1;
    for (nb::handle v : nb::cast<nb::sequence>(tup[0])) n *= nb::cast<uint64_t>(v);
    return tensor_from(spec, d, n, &td, &name_store) ? splitzip::tensor_desc_size(td) : uint64_t{0};
  });
  m.def("decompress_into", &decompress_into, nb::arg("frame"), nb::arg("out"), nb::arg("expect"),
        nb::arg("multi"), nb::arg("backend").none(), nb::arg("threads"),
        nb::arg("max_output_bytes"), nb::arg("verify_checksum"), nb::arg("tables").none() = nb::none());
  m.def("compress_batch", &compress_batch_py, nb::arg("arrays"), nb::arg("dtype").none(),
        nb::arg("codebook").none(), nb::arg("chunk_log2"), nb::arg("checksum"),
        nb::arg("backend").none(), nb::arg("threads"), nb::arg("mode"), nb::arg("specs").none() = nb::none(),
        nb::arg("stacked") = false, nb::arg("tables").none() = nb::none(),
        nb::arg("page_tables").none() = nb::none());
  m.def("batch_outputs", &batch_outputs, nb::arg("frames"));
  m.def("batch_dtypes", &batch_dtypes, nb::arg("frames"));
  m.def("decompress_batch", &decompress_batch_py, nb::arg("frames"), nb::arg("outs"),
        nb::arg("backend").none(), nb::arg("threads"), nb::arg("max_output_bytes"),
        nb::arg("verify_checksum"), nb::arg("stacked") = false, nb::arg("tables").none() = nb::none());
  m.def("encode_chunks", &encode_chunks, nb::arg("out"), nb::arg("out_offsets"), nb::arg("keys"), nb::arg("src"),
        nb::arg("part_offsets"), nb::arg("parts"), nb::arg("elems"), nb::arg("dtype"), nb::arg("dtype_id"),
        nb::arg("codebook").none(), nb::arg("backend").none(), nb::arg("threads"), nb::arg("mode"),
        nb::arg("tables").none() = nb::none(),
        nb::arg("part_tables").none() = nb::none());
  m.def("decode_chunks", &decode_chunks, nb::arg("buf"), nb::arg("value_offsets"), nb::arg("value_sizes"),
        nb::arg("keys"), nb::arg("dst"), nb::arg("part_offsets"), nb::arg("parts"), nb::arg("elems"),
        nb::arg("dtype"), nb::arg("dtype_id"), nb::arg("exact"), nb::arg("backend").none(), nb::arg("threads"),
        nb::arg("tables").none() = nb::none());
  m.def("copy_spans", &copy_spans, nb::arg("buf"), nb::arg("dst_offsets"), nb::arg("src_offsets"),
        nb::arg("lengths"));
  m.def("frame_info", &frame_info_py, nb::arg("frame"), nb::arg("offset") = 0);
  m.def("decode_chunk_parts", &decode_chunk_parts, nb::arg("value"), nb::arg("spans"), nb::arg("dests"),
        nb::arg("dest_errors"), nb::arg("dtype"), nb::arg("elems"), nb::arg("backend").none(), nb::arg("threads"),
        nb::arg("tables").none() = nb::none());
  nb::class_<FrameIter>(m, "FrameIter")
      .def(nb::init<nb::handle>(), nb::arg("frames"))
      .def("__iter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__next__", &FrameIter::next);
  m.def("scan_frames", &scan_frames, nb::arg("frames"));
  m.def("header_info", &header_info_py, nb::arg("header"), nb::arg("available"),
        nb::arg("offset") = 0);
  m.def("calibrate", &calibrate_py, nb::arg("arrays"), nb::arg("dtype").none());
  m.def("calibrate_tables", &calibrate_tables_py, nb::arg("arrays"), nb::arg("dtype").none(),
        nb::arg("table_count") = 0);
  m.def("backends", [] {
    nb::list out;
    for (size_t i = 0; i < splitzip::backend_count(); ++i) {
      const char* name = splitzip::backend_name(i);
      out.append(nb::make_tuple(name, splitzip::backend_available(name)));
    }
    return out;
  });
  m.def("backend_available", [](const std::string& name) { return splitzip::backend_available(name.c_str()); });
  m.def("xxh64", [](nb::handle data, uint64_t seed) {
    ArrayRef a = host_source(data, "data");
    return splitzip::xxh64(a.data, a.nbytes, seed);
  }, nb::arg("data"), nb::arg("seed") = 0);
  m.def("xxh3_64", [](nb::handle data) {
    ArrayRef a = host_source(data, "data");
    return splitzip::xxh3_64(a.data, a.nbytes);
  }, nb::arg("data"));
  m.def("status_name", [](int code) { return splitzip::status_name(static_cast<Status>(code)); });
}

}  // namespace splitzip_py
