# SPDX-License-Identifier: Apache-2.0
# Install rules, the exported CMake package (find_package(splitzip) ->
# splitzip::splitzip, the shared library; COMPONENTS static ->
# splitzip::splitzip_static; COMPONENTS cuda -> splitzip::cuda), the
# pkg-config file, the man page and the licence. Included last by the top-level
# CMakeLists.txt, when every backend has added itself to `splitzip`, so the
# dependencies written into the package are the ones this build really has.
# Off by default when splitzip is a subproject (e.g. python/ embeds it).
option(SPLITZIP_INSTALL "Install rules, CMake package and pkg-config file" ${PROJECT_IS_TOP_LEVEL})
if(NOT SPLITZIP_INSTALL)
  return()
endif()

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(SPLITZIP_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/splitzip" CACHE STRING
    "Where splitzipConfig.cmake is installed (relative to the prefix)")
set(SPLITZIP_INSTALL_PKGCONFIGDIR "${CMAKE_INSTALL_LIBDIR}/pkgconfig" CACHE STRING
    "Where splitzip.pc is installed (relative to the prefix)")

# Walks what `splitzip` links. Sets in the caller:
#   _sz_local    this project's targets that must join the export set
#   _sz_imported imported targets (each needs a find_dependency)
#   _sz_linkargs linker arguments for pkg-config, dependencies flattened
function(_splitzip_link_closure root)
  set(local "")
  set(imported "")
  set(args "")
  set(seen "")
  get_target_property(todo ${root} LINK_LIBRARIES)
  get_target_property(more ${root} INTERFACE_LINK_LIBRARIES)
  list(APPEND todo ${more})
  while(todo)
    list(POP_FRONT todo item)
    # "::@(dir)" / "::@" mark links made from another directory.
    if(NOT item OR item MATCHES "-NOTFOUND$" OR item MATCHES "^::@")
      continue()
    endif()
    # $<LINK_ONLY:x> is still linked; other generator expressions are left
    # to CMake's export and are not flattened for pkg-config.
    string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" item "${item}")
    string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" item "${item}")
    if(item MATCHES "^\\$<")
      continue()
    endif()
    if(TARGET ${item})
      get_target_property(real ${item} ALIASED_TARGET)
      if(real)
        set(item ${real})
      endif()
      if(item IN_LIST seen OR item STREQUAL root)
        continue()
      endif()
      list(APPEND seen ${item})
      get_target_property(is_imported ${item} IMPORTED)
      get_target_property(type ${item} TYPE)
      if(is_imported)
        list(APPEND imported ${item})
        if(NOT type STREQUAL "INTERFACE_LIBRARY")
          string(TOUPPER "${CMAKE_BUILD_TYPE}" cfg)
          get_target_property(loc ${item} IMPORTED_LOCATION_${cfg})
          if(NOT loc)
            get_target_property(loc ${item} IMPORTED_LOCATION)
          endif()
          if(NOT loc)
            get_target_property(cfgs ${item} IMPORTED_CONFIGURATIONS)
            if(cfgs)
              list(GET cfgs 0 c0)
              get_target_property(loc ${item} IMPORTED_LOCATION_${c0})
            endif()
          endif()
          if(loc)
            list(APPEND args "${loc}")
          endif()
        endif()
      else()
        list(APPEND local ${item})
        get_target_property(ll ${item} LINK_LIBRARIES)
        if(ll)
          list(APPEND todo ${ll})
        endif()
      endif()
      get_target_property(ill ${item} INTERFACE_LINK_LIBRARIES)
      if(ill)
        list(APPEND todo ${ill})
      endif()
    elseif(item MATCHES "^-")
      list(APPEND args "${item}")
    elseif(IS_ABSOLUTE "${item}")
      list(APPEND args "${item}")
    elseif(item MATCHES "::")
      message(WARNING "splitzip links ${item}, which is not a target here; left out of splitzip.pc")
    else()
      list(APPEND args "-l${item}")
    endif()
  endwhile()
  list(REMOVE_ITEM local ${root})
  set(_sz_local "${local}" PARENT_SCOPE)
  set(_sz_imported "${imported}" PARENT_SCOPE)
  set(_sz_linkargs "${args}" PARENT_SCOPE)
endfunction()

_splitzip_link_closure(splitzip)

# pkg-config link arguments: libraries as -L/-l where the file name allows it
# (the compiler's implicit directories need no -L).
set(_sz_pc_libs "")
foreach(a IN LISTS _sz_linkargs)
  if(IS_ABSOLUTE "${a}")
    get_filename_component(dir "${a}" DIRECTORY)
    get_filename_component(file "${a}" NAME)
    if(file MATCHES "^lib(.+)\\.(so|a|dylib)(\\.[0-9.]+)?$")
      set(name "${CMAKE_MATCH_1}")
      if(NOT dir IN_LIST CMAKE_CXX_IMPLICIT_LINK_DIRECTORIES AND NOT dir IN_LIST CMAKE_C_IMPLICIT_LINK_DIRECTORIES)
        list(APPEND _sz_pc_libs "-L${dir}")
      endif()
      list(APPEND _sz_pc_libs "-l${name}")
    else()
      list(APPEND _sz_pc_libs "${a}")
    endif()
  else()
    list(APPEND _sz_pc_libs "${a}")
  endif()
endforeach()
# A C program linking the static library needs the C++ runtime.
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang" AND NOT APPLE)
  list(APPEND _sz_pc_libs "-lstdc++" "-lm")
endif()
list(REMOVE_DUPLICATES _sz_pc_libs)
string(REPLACE ";" " " SPLITZIP_PC_LIBS_PRIVATE "${_sz_pc_libs}")

# find_dependency lines for splitzipConfig.cmake, one per package behind the
# imported targets `splitzip` links.
set(SPLITZIP_CONFIG_DEPENDENCIES "")
set(_sz_packages "")
foreach(t IN LISTS _sz_imported)
  if(t MATCHES "^hwy::")
    set(p hwy)
  elseif(t MATCHES "^OpenMP::")
    set(p OpenMP)
  elseif(t MATCHES "^CUDA::")
    set(p CUDAToolkit)
  elseif(t STREQUAL "splitzip::kokkos")
    set(p SplitzipKokkos)
  elseif(t MATCHES "^Kokkos::" AND NOT "splitzip::kokkos" IN_LIST _sz_imported)
    set(p Kokkos)  # linked directly; through splitzip::kokkos it is SplitzipKokkos' job
  elseif(t MATCHES "^Threads::")
    set(p Threads)
  else()
    continue()  # imported by one of the packages above (Kokkos::kokkoscore, ...)
  endif()
  if(NOT p IN_LIST _sz_packages)
    list(APPEND _sz_packages ${p})
  endif()
endforeach()
foreach(p IN LISTS _sz_packages)
  if(p STREQUAL "OpenMP")
    string(APPEND SPLITZIP_CONFIG_DEPENDENCIES "  find_dependency(OpenMP COMPONENTS CXX)\n")
  elseif(p STREQUAL "CUDAToolkit")
    # Only the static archive needs the toolkit (libcudart_static.a);
    # libsplitzip.so carries the static CUDA runtime inside.
    if(CUDAToolkit_BIN_DIR)
      get_filename_component(_sz_cuda_root "${CUDAToolkit_BIN_DIR}" DIRECTORY)
      string(APPEND SPLITZIP_CONFIG_DEPENDENCIES
             "  if(NOT DEFINED CUDAToolkit_ROOT AND EXISTS \"${_sz_cuda_root}\")\n"
             "    set(CUDAToolkit_ROOT \"${_sz_cuda_root}\")\n  endif()\n")
    endif()
    string(APPEND SPLITZIP_CONFIG_DEPENDENCIES "  find_dependency(CUDAToolkit)\n")
  elseif(p STREQUAL "SplitzipKokkos")
    # The installed FindSplitzipKokkos.cmake repeats the build's search,
    # Debian workaround included; the build's Kokkos package is a hint.
    if(SplitzipKokkos_SOURCE STREQUAL "config" AND Kokkos_DIR)
      string(APPEND SPLITZIP_CONFIG_DEPENDENCIES
             "  if(NOT DEFINED Kokkos_DIR)\n    set(Kokkos_DIR \"${Kokkos_DIR}\")\n  endif()\n")
    elseif(SplitzipKokkos_SOURCE STREQUAL "direct")
      # Built against headers + library found directly (e.g. Debian's, whose
      # package config is broken): find the same way, without loading that
      # package config into the consumer.
      string(APPEND SPLITZIP_CONFIG_DEPENDENCIES
             "  if(NOT DEFINED SPLITZIP_KOKKOS_USE_CONFIG)\n    set(SPLITZIP_KOKKOS_USE_CONFIG OFF)\n  endif()\n")
    endif()
    string(APPEND SPLITZIP_CONFIG_DEPENDENCIES
           "  list(PREPEND CMAKE_MODULE_PATH \"\${CMAKE_CURRENT_LIST_DIR}\")\n"
           "  find_dependency(SplitzipKokkos)\n"
           "  list(POP_FRONT CMAKE_MODULE_PATH)\n")
  else()
    string(APPEND SPLITZIP_CONFIG_DEPENDENCIES "  find_dependency(${p})\n")
  endif()
endforeach()

if(TARGET splitzip_shared)
  set(SPLITZIP_SHARED TRUE)
else()
  set(SPLITZIP_SHARED FALSE)
endif()
string(STRIP "reference${SPLITZIP_ENABLED_BACKENDS}" _sz_backends)
string(REPLACE " " ";" SPLITZIP_PACKAGE_BACKENDS "${_sz_backends}")
if(SPLITZIP_CUDA_ON AND CUDAToolkit_INCLUDE_DIRS)
  set(SPLITZIP_PACKAGE_CUDA_INCLUDE "${CUDAToolkit_INCLUDE_DIRS}")
else()
  set(SPLITZIP_PACKAGE_CUDA_INCLUDE "")
endif()

# Targets and headers. The shared library is the package's splitzip::splitzip
# (its own export set: no dependencies to find); the static archive is
# splitzip::splitzip_static, in a second export set loaded on request.
if(SPLITZIP_SHARED)
  set_target_properties(splitzip_shared PROPERTIES EXPORT_NAME splitzip)
  install(TARGETS splitzip_shared
    EXPORT splitzipTargets
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} NAMELINK_COMPONENT Unspecified
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
    INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(EXPORT splitzipTargets NAMESPACE splitzip:: DESTINATION ${SPLITZIP_INSTALL_CMAKEDIR}
    FILE splitzipTargets.cmake)
endif()
set_target_properties(splitzip PROPERTIES EXPORT_NAME splitzip_static)
install(TARGETS splitzip ${_sz_local}
  EXPORT splitzipStaticTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  OBJECTS DESTINATION ${CMAKE_INSTALL_LIBDIR}/splitzip-objects
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT splitzipStaticTargets NAMESPACE splitzip:: DESTINATION ${SPLITZIP_INSTALL_CMAKEDIR}
  FILE splitzipStaticTargets.cmake)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/splitzip
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h" PATTERN "*.hpp")
install(FILES ${PROJECT_BINARY_DIR}/include/splitzip/version.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/splitzip)

# CMake package.
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/splitzipConfig.cmake.in
  ${PROJECT_BINARY_DIR}/package/splitzipConfig.cmake
  INSTALL_DESTINATION ${SPLITZIP_INSTALL_CMAKEDIR})
# 0.x: minor versions may change the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/package/splitzipConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
set(_sz_cmake_files ${PROJECT_BINARY_DIR}/package/splitzipConfig.cmake
                    ${PROJECT_BINARY_DIR}/package/splitzipConfigVersion.cmake)
if("SplitzipKokkos" IN_LIST _sz_packages)
  list(APPEND _sz_cmake_files ${PROJECT_SOURCE_DIR}/cmake/FindSplitzipKokkos.cmake)
endif()
install(FILES ${_sz_cmake_files} DESTINATION ${SPLITZIP_INSTALL_CMAKEDIR})

# pkg-config, relocatable: prefix is found from the .pc file's own place.
if(IS_ABSOLUTE "${SPLITZIP_INSTALL_PKGCONFIGDIR}")
  set(SPLITZIP_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH _sz_up "/root/${SPLITZIP_INSTALL_PKGCONFIGDIR}" "/root")
  string(REGEX REPLACE "/$" "" _sz_up "${_sz_up}")
  set(SPLITZIP_PC_PREFIX "\${pcfiledir}/${_sz_up}")
endif()
foreach(_sz_dir LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${_sz_dir}}")
    set(SPLITZIP_PC_${_sz_dir} "${CMAKE_INSTALL_${_sz_dir}}")
  else()
    set(SPLITZIP_PC_${_sz_dir} "\${prefix}/${CMAKE_INSTALL_${_sz_dir}}")
  endif()
endforeach()
configure_file(${PROJECT_SOURCE_DIR}/cmake/splitzip.pc.in ${PROJECT_BINARY_DIR}/package/splitzip.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/package/splitzip.pc DESTINATION ${SPLITZIP_INSTALL_PKGCONFIGDIR})

# Licence, and the man page when the CLI is built (cmake/SplitzipMan.cmake).
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/splitzip)
if(TARGET splitzip_man)
  install(FILES ${SPLITZIP_MAN_PAGE} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endif()

message(STATUS "splitzip package: shared=${SPLITZIP_SHARED}; static archive depends on ${_sz_packages}; "
               "pkg-config private libs: ${SPLITZIP_PC_LIBS_PRIVATE}")
