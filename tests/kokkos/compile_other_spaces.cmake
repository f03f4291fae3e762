# SPDX-License-Identifier: Apache-2.0
# Compiles the Kokkos backend, unchanged, against the OpenMP or the CUDA
# execution space of the installed Kokkos 3.x headers (cmake -P). Debian's
# Kokkos is built for Serial only, so the generated configuration headers are
# overlaid with ones that enable SPACE; the backend-specific Kokkos headers are
# all installed. This is a compile check (no library to link or run against).
#
# Args: SPACE (OpenMP|Cuda), KOKKOS_INCLUDE, SOURCE_DIR, WORK_DIR, CXX,
#       OPENMP_FLAGS (OpenMP), NVCC (Cuda).
cmake_minimum_required(VERSION 3.20)

string(TOUPPER "${SPACE}" up)
set(overlay "${WORK_DIR}/${SPACE}/include")
file(REMOVE_RECURSE "${WORK_DIR}/${SPACE}")
file(MAKE_DIRECTORY "${overlay}")

file(READ "${KOKKOS_INCLUDE}/KokkosCore_config.h" cfg)
string(REPLACE "/* #undef KOKKOS_ENABLE_${up} */" "#define KOKKOS_ENABLE_${up}" cfg "${cfg}")
if(up STREQUAL "CUDA")
  string(REPLACE "/* #undef KOKKOS_ENABLE_CUDA_LAMBDA */" "#define KOKKOS_ENABLE_CUDA_LAMBDA" cfg "${cfg}")
  string(REPLACE "/* #undef KOKKOS_ENABLE_CUDA_CONSTEXPR */" "#define KOKKOS_ENABLE_CUDA_CONSTEXPR" cfg "${cfg}")
endif()
if(NOT cfg MATCHES "#define KOKKOS_ENABLE_${up}\n")
  message(FATAL_ERROR "cannot enable ${up} in ${KOKKOS_INCLUDE}/KokkosCore_config.h")
endif()
file(WRITE "${overlay}/KokkosCore_config.h" "${cfg}")
file(WRITE "${overlay}/KokkosCore_Config_DeclareBackend.hpp"
  "#ifndef KOKKOS_DECLARE_HPP_\n#define KOKKOS_DECLARE_HPP_\n"
  "#include <decl/Kokkos_Declare_${up}.hpp>\n#include <decl/Kokkos_Declare_SERIAL.hpp>\n#endif\n")
file(WRITE "${overlay}/KokkosCore_Config_FwdBackend.hpp"
  "#ifndef KOKKOS_FWD_HPP_\n#define KOKKOS_FWD_HPP_\n"
  "#include <fwd/Kokkos_Fwd_${up}.hpp>\n#include <fwd/Kokkos_Fwd_SERIAL.hpp>\n#endif\n")
if(up STREQUAL "CUDA")
  file(WRITE "${overlay}/KokkosCore_Config_SetupBackend.hpp"
    "#ifndef KOKKOS_SETUP_HPP_\n#define KOKKOS_SETUP_HPP_\n#include <setup/Kokkos_Setup_Cuda.hpp>\n#endif\n")
endif()

# The default execution space must really be the one under test.
file(WRITE "${WORK_DIR}/${SPACE}/space_check.cpp"
  "#include <Kokkos_Core.hpp>\n#include <type_traits>\n"
  "static_assert(std::is_same<Kokkos::DefaultExecutionSpace, Kokkos::${SPACE}>::value, \"default space\");\n"
  "int main() { return 0; }\n")

set(srcs "${SOURCE_DIR}/backends/kokkos/kokkos_backend.cpp" "${SOURCE_DIR}/backends/kokkos/kokkos_runtime.cpp"
         "${WORK_DIR}/${SPACE}/space_check.cpp")
set(incs -I${overlay} -isystem ${KOKKOS_INCLUDE} -I${SOURCE_DIR} -I${SOURCE_DIR}/include)
foreach(src IN LISTS srcs)
  get_filename_component(stem "${src}" NAME_WE)
  set(obj "${WORK_DIR}/${SPACE}/${stem}.o")
  if(up STREQUAL "CUDA")
    # Kokkos 3.4's CUDA half type does not build with CUDA 12+ headers;
    # declaring a pre-Pascal arch makes Kokkos use its float fallback for
    # half_t, which splitzip does not use.
    set(cmd "${NVCC}" -x cu -std=c++17 -O2 -arch=sm_90 --extended-lambda --expt-relaxed-constexpr
            -DKOKKOS_ARCH_MAXWELL50 ${incs} -c "${src}" -o "${obj}")
  else()
    separate_arguments(omp UNIX_COMMAND "${OPENMP_FLAGS}")
    set(cmd "${CXX}" -std=c++17 -O2 ${omp} -Wall -Wextra -Wshadow -Wconversion -Wno-sign-conversion -Werror
            ${incs} -c "${src}" -o "${obj}")
  endif()
  execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "compiling ${src} for Kokkos::${SPACE} failed:\n${cmd}\n${out}\n${err}")
  endif()
  if(err MATCHES "warning")
    message(FATAL_ERROR "warnings compiling ${src} for Kokkos::${SPACE}:\n${err}")
  endif()
endforeach()

# Every kernel must have been instantiated for the space under test.
execute_process(COMMAND nm -C "${WORK_DIR}/${SPACE}/kokkos_backend.o" OUTPUT_VARIABLE syms RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nm failed on kokkos_backend.o")
endif()
foreach(k WriteOctets WriteEscapes CheckPadding ReadCounts DecodeOctets CheckEscapes PatchEscapes
          CountExponents BlockHashes ZeroGaps CheckGaps VerifyChecksum)
  if(NOT syms MATCHES "splitzip::kokkos_impl::${k}<[^\n]*Kokkos::${SPACE}")
    message(FATAL_ERROR "kernel ${k} not instantiated for Kokkos::${SPACE}")
  endif()
endforeach()
message(STATUS "kokkos backend compiles for Kokkos::${SPACE}")
