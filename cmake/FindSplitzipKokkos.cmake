# SPDX-License-Identifier: Apache-2.0
# FindSplitzipKokkos: the Kokkos that splitzip's Kokkos backend builds against.
#
# Order:
#  1. A working Kokkos CMake package (find_package(Kokkos CONFIG)), e.g. a
#     user's own CUDA or OpenMP install found through Kokkos_ROOT/Kokkos_DIR or
#     CMAKE_PREFIX_PATH. "Working" means every include directory its targets
#     name exists.
#  2. Otherwise headers + library found directly. This is what Debian's
#     libtrilinos-kokkos-dev (Trilinos 13.2, Kokkos 3.4) needs: its
#     KokkosConfig.cmake gives Kokkos::kokkos the include path /usr/lib/include,
#     which does not exist, so linking Kokkos::kokkos fails at generate time.
#     Its headers are in /usr/include/trilinos, its library is
#     libtrilinos_kokkoscore.
#
# Options:  SPLITZIP_KOKKOS_USE_CONFIG (default ON): set OFF to skip step 1.
# Provides: imported target splitzip::kokkos, and
#   SplitzipKokkos_FOUND, SplitzipKokkos_VERSION, SplitzipKokkos_DEVICES
#   (e.g. "SERIAL;OPENMP"), SplitzipKokkos_SOURCE ("config" or "direct"),
#   SplitzipKokkos_INCLUDE_DIR and SplitzipKokkos_LIBRARY (direct only).
#
# Installed with splitzip's CMake package, so consumers of a static splitzip
# resolve splitzip::kokkos the same way.

include(FindPackageHandleStandardArgs)

# A plain variable set by the caller wins (splitzipConfig.cmake sets it OFF
# when the library was built against a directly found Kokkos).
if(NOT DEFINED SPLITZIP_KOKKOS_USE_CONFIG)
  set(SPLITZIP_KOKKOS_USE_CONFIG ON CACHE BOOL "Try find_package(Kokkos CONFIG) before the direct search")
endif()

# True when every include directory reachable from target `tgt` exists.
function(_splitzip_kokkos_includes_exist tgt out)
  set(ok TRUE)
  set(todo ${tgt})
  set(seen "")
  while(todo)
    list(POP_FRONT todo t)
    if(t IN_LIST seen OR NOT TARGET ${t})
      continue()
    endif()
    list(APPEND seen ${t})
    get_target_property(real ${t} ALIASED_TARGET)
    if(real)
      list(APPEND todo ${real})
      continue()
    endif()
    get_target_property(incs ${t} INTERFACE_INCLUDE_DIRECTORIES)
    foreach(d IN LISTS incs)
      if(d AND NOT d MATCHES "\\$<" AND NOT IS_DIRECTORY "${d}")
        set(ok FALSE)
        message(STATUS "Kokkos target ${t} names a missing include directory: ${d}")
      endif()
    endforeach()
    get_target_property(libs ${t} INTERFACE_LINK_LIBRARIES)
    foreach(l IN LISTS libs)
      string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" l "${l}")
      if(TARGET ${l})
        list(APPEND todo ${l})
      endif()
    endforeach()
  endwhile()
  set(${out} ${ok} PARENT_SCOPE)
endfunction()

# Backends enabled in a KokkosCore_config.h.
function(_splitzip_kokkos_devices header out)
  set(devices "")
  if(EXISTS "${header}")
    file(STRINGS "${header}" lines REGEX "^#define KOKKOS_ENABLE_(SERIAL|OPENMP|THREADS|CUDA|HIP|SYCL|HPX|OPENMPTARGET)$")
    foreach(l IN LISTS lines)
      string(REGEX REPLACE "^#define KOKKOS_ENABLE_" "" d "${l}")
      list(APPEND devices ${d})
    endforeach()
  endif()
  set(${out} "${devices}" PARENT_SCOPE)
endfunction()

if(NOT TARGET splitzip::kokkos)
  set(SplitzipKokkos_SOURCE "")

  if(SPLITZIP_KOKKOS_USE_CONFIG)
    find_package(Kokkos CONFIG QUIET)
    if(Kokkos_FOUND AND TARGET Kokkos::kokkos)
      _splitzip_kokkos_includes_exist(Kokkos::kokkos _sz_kokkos_ok)
      if(_sz_kokkos_ok)
        add_library(splitzip::kokkos INTERFACE IMPORTED)
        target_link_libraries(splitzip::kokkos INTERFACE Kokkos::kokkos)
        set(SplitzipKokkos_SOURCE "config")
        set(SplitzipKokkos_VERSION "${Kokkos_VERSION}")
        set(SplitzipKokkos_DEVICES "${Kokkos_DEVICES}")
      else()
        message(STATUS "Kokkos package at ${Kokkos_DIR} is unusable; searching headers and library directly")
      endif()
    endif()
  endif()

  if(NOT SplitzipKokkos_SOURCE)
    find_path(SplitzipKokkos_INCLUDE_DIR NAMES Kokkos_Core.hpp PATH_SUFFIXES trilinos kokkos
              DOC "Directory holding Kokkos_Core.hpp")
    find_library(SplitzipKokkos_LIBRARY NAMES kokkoscore trilinos_kokkoscore
                 DOC "The Kokkos core library")
    if(SplitzipKokkos_INCLUDE_DIR AND EXISTS "${SplitzipKokkos_INCLUDE_DIR}/KokkosCore_config.h")
      file(STRINGS "${SplitzipKokkos_INCLUDE_DIR}/KokkosCore_config.h" _sz_v REGEX "^#define KOKKOS_VERSION [0-9]+")
      if(_sz_v MATCHES "KOKKOS_VERSION ([0-9]+)")
        math(EXPR _sz_major "${CMAKE_MATCH_1} / 10000")
        math(EXPR _sz_minor "(${CMAKE_MATCH_1} / 100) % 100")
        math(EXPR _sz_patch "${CMAKE_MATCH_1} % 100")
        set(SplitzipKokkos_VERSION "${_sz_major}.${_sz_minor}.${_sz_patch}")
      endif()
      _splitzip_kokkos_devices("${SplitzipKokkos_INCLUDE_DIR}/KokkosCore_config.h" SplitzipKokkos_DEVICES)
    endif()
    mark_as_advanced(SplitzipKokkos_INCLUDE_DIR SplitzipKokkos_LIBRARY)
    if(SplitzipKokkos_INCLUDE_DIR AND SplitzipKokkos_LIBRARY)
      set(SplitzipKokkos_SOURCE "direct")
    endif()
  endif()
else()
  set(SplitzipKokkos_SOURCE "existing")
endif()

if(SplitzipKokkos_SOURCE STREQUAL "direct")
  find_package_handle_standard_args(SplitzipKokkos
    REQUIRED_VARS SplitzipKokkos_LIBRARY SplitzipKokkos_INCLUDE_DIR
    VERSION_VAR SplitzipKokkos_VERSION)
else()
  find_package_handle_standard_args(SplitzipKokkos
    REQUIRED_VARS SplitzipKokkos_SOURCE
    VERSION_VAR SplitzipKokkos_VERSION)
endif()

if(SplitzipKokkos_FOUND AND SplitzipKokkos_SOURCE STREQUAL "direct" AND NOT TARGET splitzip::kokkos)
  # A direct Kokkos with a device backend needs its compiler wrapper; say so
  # now rather than fail deep inside a compile.
  if(SplitzipKokkos_DEVICES MATCHES "CUDA|HIP|SYCL|OPENMPTARGET")
    message(WARNING "Kokkos at ${SplitzipKokkos_INCLUDE_DIR} enables ${SplitzipKokkos_DEVICES}; "
            "without its CMake package, compile with its compiler wrapper (e.g. nvcc_wrapper)")
  endif()
  add_library(splitzip::kokkos UNKNOWN IMPORTED)
  set_target_properties(splitzip::kokkos PROPERTIES
    IMPORTED_LOCATION "${SplitzipKokkos_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${SplitzipKokkos_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "${CMAKE_DL_LIBS}")
  if(SplitzipKokkos_DEVICES MATCHES "OPENMP")
    find_package(OpenMP QUIET COMPONENTS CXX)
    if(OpenMP_CXX_FOUND)
      set_property(TARGET splitzip::kokkos APPEND PROPERTY INTERFACE_LINK_LIBRARIES OpenMP::OpenMP_CXX)
    endif()
  endif()
endif()
