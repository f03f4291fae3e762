# SPDX-License-Identifier: Apache-2.0
function(splitzip_warnings target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wshadow -Wconversion -Wno-sign-conversion>
      # A dtype or codec switch missing an enumerator does not build (core/codec.h).
      $<$<COMPILE_LANGUAGE:CXX>:-Werror=switch>)
  endif()
endfunction()
