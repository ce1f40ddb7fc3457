# Settings for llmgate's own tests, examples and benchmarks only; nothing
# here reaches the llmgate::llmgate target that users link.

option(LLMGATE_NATIVE "Compile tests, examples and benchmarks with -march=native" ON)
set(LLMGATE_SANITIZE "" CACHE STRING
  "Sanitizers for tests and examples: empty, 'address,undefined' or 'thread'")

# llmgate_development: the flags every development target of llmgate uses.
add_library(llmgate_development INTERFACE)
# llmgate::eval: the evaluation kit (and SQLite) on top of llmgate::llmgate.
target_link_libraries(llmgate_development INTERFACE llmgate::eval)
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  target_compile_options(llmgate_development INTERFACE -Wall -Wextra -Wpedantic)
  if(LLMGATE_NATIVE)
    target_compile_options(llmgate_development INTERFACE -march=native)
  endif()
  if(LLMGATE_SANITIZE)
    target_compile_options(llmgate_development INTERFACE
      -fsanitize=${LLMGATE_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
    target_link_options(llmgate_development INTERFACE -fsanitize=${LLMGATE_SANITIZE})
  endif()
endif()

find_program(LLMGATE_CCACHE ccache)
if(LLMGATE_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  # The test binary precompiles its headers; ccache caches such compiles
  # only with this sloppiness (its manual, "Precompiled headers").
  set(CMAKE_CXX_COMPILER_LAUNCHER "${CMAKE_COMMAND}" -E env
      "CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime" "${LLMGATE_CCACHE}")
endif()
