# SPDX-License-Identifier: Apache-2.0
# The man page, splitzip(1), generated at build time by help2man from the
# CLI's own --help and each command's --help (tools/man/help-all.sh), plus
# docs/splitzip.h2m for the sections help text does not carry. One source:
# the CLI. tests/cli/check_options.py fails when --help, docs/CLI.md and the
# man page disagree on the options. Installed to share/man/man1.
set(SPLITZIP_MAN AUTO CACHE STRING "Generate the man page with help2man (AUTO/ON/OFF)")
if(NOT TARGET splitzip_cli OR SPLITZIP_MAN STREQUAL "OFF")
  return()
endif()
find_program(SPLITZIP_HELP2MAN help2man)
if(NOT SPLITZIP_HELP2MAN)
  if(SPLITZIP_MAN STREQUAL "ON")
    message(FATAL_ERROR "SPLITZIP_MAN=ON but help2man was not found (Debian: apt-get install help2man)")
  endif()
  message(STATUS "SPLITZIP_MAN=AUTO: help2man not found, man page not built")
  return()
endif()

set(SPLITZIP_MAN_PAGE ${PROJECT_BINARY_DIR}/man/splitzip.1)
add_custom_command(OUTPUT ${SPLITZIP_MAN_PAGE}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/man
  COMMAND ${CMAKE_COMMAND} -E env SPLITZIP_CLI=$<TARGET_FILE:splitzip_cli>
          ${SPLITZIP_HELP2MAN} --no-info --section=1
          "--name=lossless compression of LLM KV caches (SplitZip)"
          --include=${PROJECT_SOURCE_DIR}/docs/splitzip.h2m
          --output=${SPLITZIP_MAN_PAGE}
          ${PROJECT_SOURCE_DIR}/tools/man/help-all.sh
  DEPENDS splitzip_cli ${PROJECT_SOURCE_DIR}/tools/man/help-all.sh ${PROJECT_SOURCE_DIR}/docs/splitzip.h2m
  COMMENT "help2man: splitzip.1"
  VERBATIM)
add_custom_target(splitzip_man ALL DEPENDS ${SPLITZIP_MAN_PAGE})
