# SPDX-License-Identifier: Apache-2.0
# libsplitzip.so.<ABI>: the static `splitzip` archive linked whole into a
# shared library. Everything is compiled with hidden visibility; the public
# headers mark the API default (SZ_PUBLIC_BEGIN/END) and cmake/splitzip.map
# exports only sz_* and splitzip::*. The shared library carries its own
# dependencies (NEEDED: libhwy, libgomp, Kokkos, the C++ runtime; the CUDA
# runtime is linked in statically), so a consumer links it with the C linker
# and nothing else: `cc main.c $(pkg-config --cflags --libs splitzip)`.
if(NOT SPLITZIP_BUILD_SHARED)
  return()
endif()

set(_sz_stub ${PROJECT_BINARY_DIR}/splitzip_shared.c)
if(NOT EXISTS ${_sz_stub})
  file(WRITE ${_sz_stub}
       "/* libsplitzip.so is libsplitzip.a linked whole (cmake/SplitzipLibrary.cmake). */\n"
       "typedef int splitzip_shared_translation_unit;\n")
endif()
add_library(splitzip_shared SHARED ${_sz_stub})
add_library(splitzip::shared ALIAS splitzip_shared)
set_target_properties(splitzip_shared PROPERTIES
  OUTPUT_NAME splitzip
  VERSION ${PROJECT_VERSION}
  SOVERSION ${SPLITZIP_ABI_VERSION}
  LINKER_LANGUAGE CXX
  LINK_DEPENDS ${PROJECT_SOURCE_DIR}/cmake/splitzip.map)
target_link_libraries(splitzip_shared PRIVATE "$<LINK_LIBRARY:WHOLE_ARCHIVE,splitzip>")
target_link_options(splitzip_shared PRIVATE
  "LINKER:--version-script=${PROJECT_SOURCE_DIR}/cmake/splitzip.map" "LINKER:--as-needed")
if(NOT SPLITZIP_SANITIZE)
  # Sanitizer runtimes are linked into executables, not shared libraries.
  target_link_options(splitzip_shared PRIVATE "LINKER:--no-undefined")
endif()
target_include_directories(splitzip_shared PUBLIC
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>
  $<INSTALL_INTERFACE:include>)
