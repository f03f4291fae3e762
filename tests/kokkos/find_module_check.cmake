# SPDX-License-Identifier: Apache-2.0
# Checks cmake/FindSplitzipKokkos.cmake's choice (cmake -P): a tiny project
# finds Kokkos through it, links splitzip::kokkos and runs a reduction.
#   good    Kokkos_DIR = a well-formed Kokkos package  -> "config"
#   broken  Kokkos_DIR = Debian's broken package       -> "direct"
#   off     SPLITZIP_KOKKOS_USE_CONFIG=OFF             -> "direct"
# Args: SOURCE_DIR, WORK_DIR, GENERATOR, CXX, KOKKOS_INCLUDE, KOKKOS_LIBRARY,
#       BROKEN_DIR (directory of Debian's KokkosConfig.cmake; may be empty).
cmake_minimum_required(VERSION 3.20)

file(REMOVE_RECURSE "${WORK_DIR}")
set(proj "${WORK_DIR}/project")
file(MAKE_DIRECTORY "${proj}")
file(WRITE "${proj}/CMakeLists.txt" "
cmake_minimum_required(VERSION 3.20)
project(find_kokkos_check CXX)
set(CMAKE_CXX_STANDARD 17)
list(APPEND CMAKE_MODULE_PATH \"${SOURCE_DIR}/cmake\")
find_package(SplitzipKokkos REQUIRED)
message(STATUS \"SplitzipKokkos_SOURCE=\${SplitzipKokkos_SOURCE}\")
add_executable(reduce main.cpp)
target_link_libraries(reduce PRIVATE splitzip::kokkos)
")
file(WRITE "${proj}/main.cpp" "
#include <Kokkos_Core.hpp>
#include <cstdio>
int main() {
  Kokkos::initialize();
  long sum = 0;
  Kokkos::parallel_reduce(Kokkos::RangePolicy<>(0, 1000), KOKKOS_LAMBDA(int i, long& a) { a += i; }, sum);
  Kokkos::finalize();
  std::printf(\"sum=%ld\\n\", sum);
  return sum == 499500 ? 0 : 1;
}
")

# A well-formed package for the same Kokkos, as a proper install provides.
set(good "${WORK_DIR}/good-kokkos")
file(MAKE_DIRECTORY "${good}")
file(WRITE "${good}/KokkosConfig.cmake" "
set(Kokkos_VERSION 3.4.1)
set(Kokkos_DEVICES SERIAL)
if(NOT TARGET Kokkos::kokkos)
  add_library(Kokkos::kokkoscore UNKNOWN IMPORTED)
  set_target_properties(Kokkos::kokkoscore PROPERTIES
    IMPORTED_LOCATION \"${KOKKOS_LIBRARY}\"
    INTERFACE_INCLUDE_DIRECTORIES \"${KOKKOS_INCLUDE}\"
    INTERFACE_LINK_LIBRARIES dl)
  add_library(Kokkos::kokkos INTERFACE IMPORTED)
  set_target_properties(Kokkos::kokkos PROPERTIES INTERFACE_LINK_LIBRARIES Kokkos::kokkoscore)
endif()
")

function(check_case name want)
  set(bdir "${WORK_DIR}/build-${name}")
  execute_process(COMMAND "${CMAKE_COMMAND}" -S "${proj}" -B "${bdir}" -G "${GENERATOR}"
                          "-DCMAKE_CXX_COMPILER=${CXX}" ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${name}: configure failed:\n${out}\n${err}")
  endif()
  if(NOT out MATCHES "SplitzipKokkos_SOURCE=${want}\n")
    message(FATAL_ERROR "${name}: expected the ${want} route:\n${out}")
  endif()
  execute_process(COMMAND "${CMAKE_COMMAND}" --build "${bdir}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${name}: build failed:\n${out}\n${err}")
  endif()
  execute_process(COMMAND "${bdir}/reduce" RESULT_VARIABLE rc OUTPUT_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${name}: program failed (${rc}): ${out}")
  endif()
  message(STATUS "${name}: ${want} route, ${out}")
endfunction()

check_case(good config "-DKokkos_DIR=${good}")
if(BROKEN_DIR)
  check_case(broken direct "-DKokkos_DIR=${BROKEN_DIR}")
endif()
check_case(off direct "-DKokkos_DIR=${good}" -DSPLITZIP_KOKKOS_USE_CONFIG=OFF)
