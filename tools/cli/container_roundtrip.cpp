// SPDX-License-Identifier: Apache-2.0
#include "tools/cli/container_roundtrip.h"

#include <algorithm>

#include "tools/cli/errors.h"
#include "tools/cli/frames.h"
#include "tools/cli/json_strict.h"

namespace szcli {

using splitzip::Dtype;

std::vector<PlannedFrame> plan_frames(const TensorView& v, uint64_t (*frame_elems)(Dtype, uint64_t),
                                      uint64_t frame_size_option) {
  std::vector<PlannedFrame> plan;
  auto cut = [&](uint64_t begin, uint64_t end, Dtype d) {
    const uint64_t step = frame_elems(d, frame_size_option) * splitzip::dtype_bytes(d);
    for (uint64_t off = begin; off < end; off += std::min(step, end - off))
      plan.push_back({off, std::min(step, end - off), d});
  };
  if (v.whole_file) {
    for (const TensorView::Part& p : v.parts) cut(p.begin, p.end, p.dtype);
  } else {
    cut(0, v.bytes, v.dtype);
  }
  if (plan.empty()) plan.push_back({0, 0, v.dtype});
  return plan;
}

bool container_descriptor(const TensorView& v, InputFormat fmt, const uint8_t* header, const PlannedFrame& first,
                          splitzip::TensorDesc* out, const std::string& where) {
  const bool npy = fmt == InputFormat::npy;
  if (!npy && !(fmt == InputFormat::safetensors && v.whole_file)) return false;
  if (v.header_size > (uint64_t{1} << 24))
    fail(kExitInvalid, where + ": the container header is " + std::to_string(v.header_size) +
                           " bytes, more than a tensor descriptor holds (16 MiB); compress one tensor with --tensor");
  splitzip::TensorDesc t;
  t.dtype = first.dtype;
  if (npy && !v.shape.empty() && v.shape.size() <= splitzip::kMaxTensorRank) {
    // The values in file order: a Fortran-order array is the C-order
    // array of the reversed shape.
    t.rank = static_cast<uint32_t>(v.shape.size());
    for (uint32_t i = 0; i < t.rank; ++i) t.dims[i] = v.fortran_order ? v.shape[t.rank - 1 - i] : v.shape[i];
    t.total_elems = v.n_elems;
  } else if (npy && v.shape.empty()) {
    t.rank = 0;  // a 0-d array: one element
    t.total_elems = v.n_elems;
  } else {
    // Rank over 8, or a safetensors file: the first part as a flat run (the
    // container header says the rest).
    const uint64_t n = npy ? v.n_elems : first.bytes / splitzip::dtype_bytes(first.dtype);
    t.rank = 1;
    t.dims[0] = v.whole_file && !v.parts.empty() ? (v.parts[0].end - v.parts[0].begin) / splitzip::dtype_bytes(first.dtype) : n;
    t.total_elems = t.dims[0];
    if (v.whole_file && !v.parts.empty()) {
      t.name = v.parts[0].name.data();
      t.name_size = static_cast<uint32_t>(std::min<size_t>(v.parts[0].name.size(), 65535));
    }
  }
  t.origin = npy ? splitzip::TensorOrigin::numpy : splitzip::TensorOrigin::unspecified;
  t.container = npy ? splitzip::ContainerKind::npy : splitzip::ContainerKind::safetensors;
  t.container_header = header;
  t.container_size = static_cast<uint32_t>(v.header_size);
  *out = t;
  return true;
}

namespace {

[[noreturn]] void bad(const std::string& where, const std::string& msg) {
  fail(exit_code_for(splitzip::Status::bad_header), where + ": " + msg);
}

// Bytes of a safetensors data area, from its JSON header: the largest end
// of data_offsets (the tensors tile the area, as compress checked).
uint64_t safetensors_data_size(const uint8_t* json, uint64_t size, const std::string& where) {
  // Streams written before compress refused NUL-padded headers hold them
  // verbatim; the padding says nothing about the data size.
  while (size != 0 && json[size - 1] == 0) --size;
  Json root;
  std::string err;
  if (!parse_json_strict(reinterpret_cast<const char*>(json), size, &root, &err) || !root.is_object())
    bad(where, "the descriptor's safetensors header is not a JSON object (" + err + ")");
  uint64_t end = 0;
  for (const auto& m : root.items()) {
    if (m.key() == "__metadata__") continue;
    const Json& v = m.value();
    const auto off = v.is_object() ? v.find("data_offsets") : v.end();
    uint64_t b = 0, e = 0;
    if (!v.is_object() || off == v.end() || !off->is_array() || off->size() != 2 || !json_u64((*off)[0], &b) ||
        !json_u64((*off)[1], &e) || b > e)
      bad(where, "the descriptor's safetensors header has bad data_offsets for '" + m.key() + "'");
    end = std::max(end, e);
  }
  return end;
}

}  // namespace

std::string ContainerRestorer::next(const splitzip::FrameInfo& fi, const uint8_t* frame, uint64_t index,
                                    uint64_t offset, const std::string& what) {
  const std::string where = what + ": " + frame_where(static_cast<size_t>(index), offset);
  std::string prefix;
  if (fi.has_tensor) {
    splitzip::TensorDesc t;
    bool present = false;
    const splitzip::Status st = splitzip::read_tensor_desc(frame, fi.frame_size, &t, &present);
    if (st != splitzip::Status::ok)
      fail(exit_code_for(st), where + ": tensor descriptor: " + status_text(st));
    if (present && t.container != splitzip::ContainerKind::none) {
      if (left_ != 0)
        bad(where, "a new container starts " + std::to_string(left_) + " bytes before the end of the payload of the one at frame " +
                       std::to_string(start_index_));
      const uint8_t* h = t.container_header;
      if (t.container == splitzip::ContainerKind::npy) {
        prefix.assign(reinterpret_cast<const char*>(h), t.container_size);
        left_ = t.total_elems * splitzip::dtype_bytes(t.dtype);  // total <= 2^56, width <= 4
      } else {
        uint8_t len[8];
        for (int i = 0; i < 8; ++i) len[i] = static_cast<uint8_t>(uint64_t{t.container_size} >> (8 * i));
        prefix.assign(reinterpret_cast<const char*>(len), 8);
        prefix.append(reinterpret_cast<const char*>(h), t.container_size);
        left_ = safetensors_data_size(h, t.container_size, where);
      }
      start_index_ = index;
    } else if (present && left_ != 0) {
      bad(where, "a tensor descriptor inside the payload of the container at frame " + std::to_string(start_index_));
    }
  }
  if (left_ != 0) {
    if (fi.decoded_size > left_)
      bad(where, "the frame decodes " + std::to_string(fi.decoded_size - left_) +
                     " bytes past the end of the payload of the container at frame " + std::to_string(start_index_));
    left_ -= fi.decoded_size;
  }
  return prefix;
}

void ContainerRestorer::finish(const std::string& what) const {
  if (left_ != 0)
    fail(exit_code_for(splitzip::Status::truncated),
         what + ": the stream ends " + std::to_string(left_) + " bytes before the end of the payload of the container at frame " +
             std::to_string(start_index_) + ": " + status_text(splitzip::Status::truncated));
}

}  // namespace szcli
