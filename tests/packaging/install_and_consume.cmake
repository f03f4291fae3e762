# SPDX-License-Identifier: Apache-2.0
# Driver for the packaging tests (cmake -P). MODE:
#   install       cmake --install BUILD_DIR into WORK_DIR/prefix, check the
#                 layout (shared library + SONAME link, static archive,
#                 package, .pc, man page, licence); `man splitzip` renders
#   cmake         examples/consumer as a C-only project (project(x C)),
#                 find_package(splitzip) -> the shared library; runs it
#   cmake_static  examples/consumer with COMPONENTS static (C and C++)
#   pkgconfig     cc main.c $(pkg-config --cflags --libs splitzip), no
#                 --static, and the same for main.cpp; runs them
cmake_minimum_required(VERSION 3.20)

set(prefix "${WORK_DIR}/prefix")

function(run_checked what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${ARGN}\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
  set(last_error "${err}" PARENT_SCOPE)
endfunction()

# A consumer binary must round-trip and report a ratio above 1 (the sample
# data compresses; a stored frame would give a ratio below 1).
function(check_consumer exe)
  run_checked("running ${exe}" "${exe}")
  message(STATUS "${last_output}")
  if(NOT last_output MATCHES "ratio ([0-9]+\\.[0-9]+), backend ([a-z]+), round trip ok")
    message(FATAL_ERROR "${exe}: unexpected output: ${last_output}")
  endif()
  if(CMAKE_MATCH_1 LESS_EQUAL 1.0)
    message(FATAL_ERROR "${exe}: ratio ${CMAKE_MATCH_1} is not above 1")
  endif()
  # The C consumer prints sz_version() and SZ_VERSION_STRING: both the build's.
  if(last_output MATCHES "c: splitzip ([^ ]+) \\(compiled against ([^)]+)\\)")
    if(NOT CMAKE_MATCH_1 STREQUAL VERSION OR NOT CMAKE_MATCH_2 STREQUAL VERSION)
      message(FATAL_ERROR "${exe}: sz_version() ${CMAKE_MATCH_1}, header ${CMAKE_MATCH_2}, build ${VERSION}")
    endif()
  elseif(exe MATCHES "consumer_c$")
    message(FATAL_ERROR "${exe} did not print sz_version()")
  endif()
endfunction()

# A consumer of the shared library: NEEDED names libsplitzip.so.<ABI>.
function(check_links_shared exe)
  execute_process(COMMAND readelf -d "${exe}" OUTPUT_VARIABLE out RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "\\[libsplitzip\\.so\\.${ABI}\\]")
    message(FATAL_ERROR "${exe} does not link libsplitzip.so.${ABI}:\n${out}")
  endif()
endfunction()

set(san_flags "")
if(SANITIZE)
  set(san_flags "-fsanitize=${SANITIZE}")
endif()

# Consumers linked to libsplitzip.so without an rpath (pkg-config) find it here.
file(GLOB_RECURSE _sz_so "${prefix}/*libsplitzip.so.*")
if(_sz_so)
  list(GET _sz_so 0 _sz_so)
  get_filename_component(_sz_libdir "${_sz_so}" DIRECTORY)
  set(ENV{LD_LIBRARY_PATH} "${_sz_libdir}")
endif()

if(MODE STREQUAL "install")
  file(REMOVE_RECURSE "${prefix}")
  run_checked("cmake --install" "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${prefix}")
  foreach(f include/splitzip/splitzip.h include/splitzip/splitzip.hpp)
    if(NOT EXISTS "${prefix}/${f}")
      message(FATAL_ERROR "not installed: ${f}")
    endif()
  endforeach()
  file(GLOB_RECURSE libs "${prefix}/*libsplitzip.a" "${prefix}/*libsplitzip.so")
  file(GLOB_RECURSE shared "${prefix}/*libsplitzip.so.${ABI}")
  file(GLOB_RECURSE static "${prefix}/*libsplitzip.a")
  file(GLOB_RECURSE man "${prefix}/*splitzip.1")
  file(GLOB_RECURSE licence "${prefix}/*LICENSE")
  foreach(v shared static man licence)
    if(NOT ${v})
      message(FATAL_ERROR "installed tree lacks ${v}")
    endif()
  endforeach()
  if(NOT EXISTS "${prefix}/include/splitzip/version.h")
    message(FATAL_ERROR "not installed: include/splitzip/version.h")
  endif()
  # `man splitzip` must find and render the installed page.
  find_program(MAN_PROGRAM man)
  if(NOT MAN_PROGRAM)
    message(FATAL_ERROR "man not found (Debian: man-db); cannot check the man page")
  endif()
  get_filename_component(mandir "${man}" DIRECTORY)
  get_filename_component(mandir "${mandir}" DIRECTORY)
  execute_process(COMMAND "${CMAKE_COMMAND}" -E env MANPAGER=cat PAGER=cat MANWIDTH=100
                          "${MAN_PROGRAM}" -M "${mandir}" splitzip
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "SYNOPSIS|Usage|usage" OR NOT out MATCHES "compress")
    message(FATAL_ERROR "man -M ${mandir} splitzip failed (${rc}):\n${out}\n${err}")
  endif()
  file(GLOB_RECURSE configs "${prefix}/*/splitzipConfig.cmake")
  file(GLOB_RECURSE versions "${prefix}/*/splitzipConfigVersion.cmake")
  file(GLOB_RECURSE pcs "${prefix}/*/splitzip.pc")
  foreach(v libs configs versions pcs)
    if(NOT ${v})
      message(FATAL_ERROR "installed tree lacks ${v}")
    endif()
  endforeach()
  # Public headers must stand alone: nothing from the source tree's core/,
  # backends/ or transfer/.
  file(GLOB headers "${prefix}/include/splitzip/*")
  foreach(h IN LISTS headers)
    file(STRINGS "${h}" bad REGEX "#include \"(core|backends|transfer)/")
    if(bad)
      message(FATAL_ERROR "${h} includes a private header: ${bad}")
    endif()
  endforeach()
  message(STATUS "installed to ${prefix}: ${libs}")

elseif(MODE STREQUAL "cmake" OR MODE STREQUAL "cmake_static")
  set(bdir "${WORK_DIR}/consumer-${MODE}")
  file(REMOVE_RECURSE "${bdir}")
  if(MODE STREQUAL "cmake")
    set(mode_args -DSPLITZIP_CONSUMER_C_ONLY=ON)
  else()
    set(mode_args -DSPLITZIP_CONSUMER_STATIC=ON "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
                  "-DCMAKE_CXX_FLAGS=${san_flags}")
  endif()
  run_checked("configuring examples/consumer" "${CMAKE_COMMAND}" -S "${SOURCE_DIR}/examples/consumer" -B "${bdir}"
    -G "${GENERATOR}" "-DCMAKE_PREFIX_PATH=${prefix}" "-DCMAKE_C_COMPILER=${C_COMPILER}"
    "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}" ${mode_args}
    "-DCMAKE_C_FLAGS=${san_flags}" "-DCMAKE_EXE_LINKER_FLAGS=${san_flags}"
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
  message(STATUS "${last_output}")
  # The package must load cleanly into a consumer (no warnings from it or
  # from the dependencies it finds).
  if(last_error MATCHES "CMake Warning")
    message(FATAL_ERROR "configuring the consumer gave warnings:\n${last_error}")
  endif()
  # It must have found this prefix, not some other splitzip on the machine.
  if(NOT last_output MATCHES "from ${prefix}/")
    message(FATAL_ERROR "consumer did not find the package under ${prefix}")
  endif()
  if(MODE STREQUAL "cmake")
    # C only: the package must not have needed a C++ compiler.
    if(NOT last_output MATCHES "languages: C\n" OR EXISTS "${bdir}/CMakeFiles/${CMAKE_VERSION}/CMakeCXXCompiler.cmake")
      message(FATAL_ERROR "the C-only consumer enabled more than C:\n${last_output}")
    endif()
  endif()
  run_checked("building examples/consumer" "${CMAKE_COMMAND}" --build "${bdir}")
  if(MODE STREQUAL "cmake")
    check_links_shared("${bdir}/consumer_c")
  endif()
  check_consumer("${bdir}/consumer_c")
  if(MODE STREQUAL "cmake_static")
    check_consumer("${bdir}/consumer_cpp")
  endif()

elseif(MODE STREQUAL "pkgconfig")
  if(NOT PKG_CONFIG)
    message(FATAL_ERROR "pkg-config not found (Debian: pkg-config)")
  endif()
  file(GLOB_RECURSE pcs "${prefix}/*/splitzip.pc")
  list(GET pcs 0 pc)
  get_filename_component(pcdir "${pc}" DIRECTORY)
  set(ENV{PKG_CONFIG_PATH} "${pcdir}")
  run_checked("pkg-config --modversion" "${PKG_CONFIG}" --modversion splitzip)
  string(STRIP "${last_output}" v)
  if(NOT v STREQUAL VERSION)
    message(FATAL_ERROR "splitzip.pc says version '${v}', the build is ${VERSION}")
  endif()
  # Plain --libs: the shared library carries its own dependencies.
  run_checked("pkg-config --cflags --libs" "${PKG_CONFIG}" --cflags --libs splitzip)
  if(last_output MATCHES "cuda|hwy|gomp|kokkos|stdc")
    message(FATAL_ERROR "pkg-config --libs asks for more than splitzip: ${last_output}")
  endif()
  string(STRIP "${last_output}" flags)
  message(STATUS "pkg-config flags: ${flags}")
  separate_arguments(flags UNIX_COMMAND "${flags}")
  set(bdir "${WORK_DIR}/consumer-pkgconfig")
  file(REMOVE_RECURSE "${bdir}")
  file(MAKE_DIRECTORY "${bdir}")
  separate_arguments(san UNIX_COMMAND "${san_flags}")
  run_checked("cc main.c" "${C_COMPILER}" -std=c99 ${san} "${SOURCE_DIR}/examples/consumer/main.c"
    -o "${bdir}/consumer_c" ${flags})
  check_links_shared("${bdir}/consumer_c")
  check_consumer("${bdir}/consumer_c")
  run_checked("c++ main.cpp" "${CXX_COMPILER}" -std=c++17 ${san} "${SOURCE_DIR}/examples/consumer/main.cpp"
    -o "${bdir}/consumer_cpp" ${flags})
  check_consumer("${bdir}/consumer_cpp")

else()
  message(FATAL_ERROR "unknown MODE '${MODE}'")
endif()
