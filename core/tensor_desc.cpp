// SPDX-License-Identifier: Apache-2.0
// Tensor descriptor section (FORMAT.md 4.8).
#include "core/tensor_desc.h"

#include <cstring>

#include "core/hash.h"
#include "core/header.h"
#include "core/le_bytes.h"

namespace splitzip {
namespace {

constexpr uint8_t kMagic[4] = {0x53, 0x5A, 0x54, 0x44};  // "SZTD"
constexpr uint64_t kCheckOff = 8;
constexpr uint32_t kMaxName = 0xFFFF;
constexpr uint32_t kMaxContainer = 1u << 24;

uint32_t section_check(const uint8_t* s, uint64_t size) {
  // XXH3-64 of the section with its check field zeroed; the fixed part is
  // copied so the caller's bytes stay untouched.
  uint8_t head[kTensorFixedBytes];
  std::memcpy(head, s, kTensorFixedBytes);
  std::memset(head + kCheckOff, 0, 4);
  XXH3_state_t* st = XXH3_createState();
  if (st == nullptr) return 0;
  XXH3_64bits_reset(st);
  XXH3_64bits_update(st, head, kTensorFixedBytes);
  XXH3_64bits_update(st, s + kTensorFixedBytes, static_cast<size_t>(size - kTensorFixedBytes));
  const uint64_t h = XXH3_64bits_digest(st);
  XXH3_freeState(st);
  return static_cast<uint32_t>(h);
}

bool dims_product(const uint64_t* dims, uint32_t rank, uint64_t* out) {
  uint64_t p = 1;
  for (uint32_t i = 0; i < rank; ++i) {
    if (dims[i] != 0 && p > kMaxElems / dims[i]) return false;
    p *= dims[i];
  }
  *out = p;
  return p <= kMaxElems;
}

}  // namespace

uint64_t tensor_desc_size(const TensorDesc& t) {
  uint64_t product = 0;
  if (!dtype_valid(t.dtype) || t.rank > kMaxTensorRank || t.name_size > kMaxName ||
      t.container_size > kMaxContainer || (t.name == nullptr && t.name_size > 0) ||
      (t.container_header == nullptr && t.container_size > 0) ||
      static_cast<uint8_t>(t.origin) > 2 || static_cast<uint8_t>(t.container) > 2 ||
      (t.container == ContainerKind::none && t.container_size > 0) ||
      !dims_product(t.dims, t.rank, &product) || product != t.total_elems)
    return 0;
  return align16(kTensorFixedBytes + 8u * t.rank + t.name_size + t.container_size);
}

Status attach_tensor_desc(uint8_t* frame, uint64_t frame_size, uint64_t capacity, const TensorDesc& t,
                          uint64_t* new_size) {
  const uint64_t size = tensor_desc_size(t);
  FrameHeader h;
  Status s = parse_header(frame, frame_size, &h);
  if (s != Status::ok) return s;
  if (size == 0 || static_cast<uint32_t>(t.dtype) != h.dtype || t.total_elems < h.n_elems)
    return Status::invalid_argument;
  if (frame_size + size > capacity) return Status::dst_too_small;
  uint8_t* p = frame + frame_size;
  std::memset(p, 0, size);
  std::memcpy(p, kMagic, 4);
  store_le32(p + 4, static_cast<uint32_t>(size));
  p[12] = static_cast<uint8_t>(t.dtype);
  p[13] = static_cast<uint8_t>(t.rank);
  p[14] = static_cast<uint8_t>(t.origin);
  p[15] = static_cast<uint8_t>(t.container);
  store_le64(p + 16, t.total_elems);
  store_le16(p + 24, t.name_size);
  store_le32(p + 28, t.container_size);
  uint64_t off = kTensorFixedBytes;
  for (uint32_t i = 0; i < t.rank; ++i, off += 8) store_le64(p + off, t.dims[i]);
  if (t.name_size) std::memcpy(p + off, t.name, t.name_size);
  off += t.name_size;
  if (t.container_size) std::memcpy(p + off, t.container_header, t.container_size);
  store_le32(p + kCheckOff, section_check(p, size));
  h.flags |= kFlagTensor;
  h.frame_size = frame_size + size;
  write_header(h, frame);
  *new_size = h.frame_size;
  return Status::ok;
}

Status read_tensor_desc(const void* src, uint64_t src_size, TensorDesc* out, bool* present) {
  if (src == nullptr || out == nullptr || present == nullptr) return Status::invalid_argument;
  const auto* f = static_cast<const uint8_t*>(src);
  FrameHeader h;
  Status s = parse_header(f, src_size, &h);  // rules 1-11
  if (s != Status::ok) return s;
  *present = false;
  if (!h.has_tensor()) return Status::ok;
  const uint64_t payload = frame_size_of(h);
  const uint8_t* p = f + payload;
  const uint64_t size = h.frame_size - payload;
  // Section checks (FORMAT.md 4.8), in order.
  if (std::memcmp(p, kMagic, 4) != 0 || load_le32(p + 4) != size) return Status::bad_header;
  if (load_le32(p + kCheckOff) != section_check(p, size)) return Status::header_corrupt;
  TensorDesc t;
  t.dtype = static_cast<Dtype>(p[12]);
  t.rank = p[13];
  t.origin = static_cast<TensorOrigin>(p[14]);
  t.container = static_cast<ContainerKind>(p[15]);
  t.total_elems = load_le64(p + 16);
  t.name_size = load_le16(p + 24);
  t.container_size = load_le32(p + 28);
  if (p[12] != h.dtype || t.rank > kMaxTensorRank || p[14] > 2 || p[15] > 2 || load_le16(p + 26) != 0 ||
      t.total_elems < h.n_elems)
    return Status::bad_header;
  const uint64_t used = kTensorFixedBytes + 8u * t.rank + t.name_size + uint64_t{t.container_size};
  if (align16(used) != size) return Status::bad_header;
  if (!bytes_zero(p + used, size - used)) return Status::bad_padding;
  uint64_t off = kTensorFixedBytes;
  for (uint32_t i = 0; i < t.rank; ++i, off += 8) t.dims[i] = load_le64(p + off);
  uint64_t product = 0;
  if (!dims_product(t.dims, t.rank, &product) || product != t.total_elems) return Status::bad_header;
  t.name = t.name_size ? reinterpret_cast<const char*>(p + off) : nullptr;
  off += t.name_size;
  t.container_header = t.container_size ? p + off : nullptr;
  if (t.container == ContainerKind::none && t.container_size > 0) return Status::bad_header;
  *out = t;
  *present = true;
  return Status::ok;
}

}  // namespace splitzip
