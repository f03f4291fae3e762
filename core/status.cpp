// SPDX-License-Identifier: Apache-2.0
// Status names and messages. The numbering lives in splitzip.hpp; this file
// only gives each value a stable name and one sentence for humans.
#include "splitzip/splitzip.hpp"

namespace splitzip {

const char* status_name(Status s) {
  switch (s) {
    case Status::ok: return "OK";
    case Status::invalid_argument: return "INVALID_ARGUMENT";
    case Status::dst_too_small: return "DST_TOO_SMALL";
    case Status::truncated: return "TRUNCATED";
    case Status::bad_magic: return "BAD_MAGIC";
    case Status::unsupported_version: return "UNSUPPORTED_VERSION";
    case Status::header_corrupt: return "HEADER_CORRUPT";
    case Status::bad_dtype: return "BAD_DTYPE";
    case Status::reserved_bits: return "RESERVED_BITS";
    case Status::bad_chunk_size: return "BAD_CHUNK_SIZE";
    case Status::bad_header: return "BAD_HEADER";
    case Status::bad_codebook: return "BAD_CODEBOOK";
    case Status::size_mismatch: return "SIZE_MISMATCH";
    case Status::limit_exceeded: return "LIMIT_EXCEEDED";
    case Status::bad_padding: return "BAD_PADDING";
    case Status::bad_escape_counts: return "BAD_ESCAPE_COUNTS";
    case Status::bad_escape_position: return "BAD_ESCAPE_POSITION";
    case Status::bad_escape_value: return "BAD_ESCAPE_VALUE";
    case Status::bad_code: return "BAD_CODE";
    case Status::checksum_mismatch: return "CHECKSUM_MISMATCH";
    case Status::unknown_backend: return "UNKNOWN_BACKEND";
    case Status::backend_unavailable: return "BACKEND_UNAVAILABLE";
    case Status::unsupported_memory: return "UNSUPPORTED_MEMORY";
    case Status::io_error: return "IO_ERROR";
    case Status::out_of_memory: return "OUT_OF_MEMORY";
    case Status::device_error: return "DEVICE_ERROR";
    case Status::internal_error: return "INTERNAL_ERROR";
    case Status::escape_overflow: return "ESCAPE_OVERFLOW";
    case Status::unsupported_mode: return "UNSUPPORTED_MODE";
    case Status::undefined_mode: return "UNDEFINED_MODE";
    case Status::missing_tables: return "MISSING_TABLES";
  }
  return "UNKNOWN_STATUS";
}

const char* status_message(Status s) {
  switch (s) {
    case Status::ok: return "success";
    case Status::invalid_argument: return "invalid argument (null pointer, bad dtype, chunk size or element count)";
    case Status::dst_too_small: return "destination buffer is too small";
    case Status::truncated: return "input is truncated: fewer bytes than the frame needs";
    case Status::bad_magic: return "not a splitzip frame (bad magic)";
    case Status::unsupported_version: return "unsupported splitzip format version";
    case Status::header_corrupt: return "frame header is corrupt (header check mismatch)";
    case Status::bad_dtype: return "unknown or reserved dtype";
    case Status::reserved_bits: return "reserved flag bits or bytes are set";
    case Status::bad_chunk_size: return "chunk size out of range (chunk_log2 must be 6..15)";
    case Status::bad_header: return "inconsistent header fields (element count, escape count or stored-mode fields)";
    case Status::bad_codebook: return "invalid codebook (count, duplicates, range or padding)";
    case Status::size_mismatch: return "frame size does not match the header fields";
    case Status::limit_exceeded: return "decoded size exceeds the configured output limit";
    case Status::bad_padding: return "non-zero padding bits or bytes";
    case Status::bad_escape_counts: return "per-chunk escape counts are inconsistent";
    case Status::bad_escape_position: return "escape positions are out of order or past the chunk end";
    case Status::bad_escape_value: return "escape slot or escape exponent is invalid";
    case Status::bad_code:
      return "invalid exponent code (a code past the codebook, or a coded block whose index, stream sizes "
             "or code stream do not add up)";
    case Status::checksum_mismatch: return "content checksum mismatch: decoded data is corrupt";
    case Status::unknown_backend: return "unknown backend name";
    case Status::backend_unavailable: return "backend is compiled in but not available on this machine";
    case Status::unsupported_memory: return "backend cannot access this kind of memory";
    case Status::io_error: return "I/O error";
    case Status::out_of_memory: return "out of memory";
    case Status::device_error: return "device (GPU) error";
    case Status::internal_error: return "internal error";
    case Status::escape_overflow: return "escape budget exceeded (internal: frame is stored instead)";
    case Status::unsupported_mode: return "this backend does not implement the coding mode (use the cpu or reference backend)";
    case Status::undefined_mode:
      return "dtype fp8_e4m3 x mode capacity is not defined (no capacity format for fp8_e4m3 yet): "
             "compress fp8_e4m3 in the fast mode";
    case Status::missing_tables:
      return "the frame names a capacity table set the decoder was not given (pass the set it was compressed "
             "with)";
  }
  return "unknown status";
}

}  // namespace splitzip
