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

# llmgate_program: what the benchmarks and the small examples link (not the
# tools people run, such as the gateway). With LLMGATE_OPTIMISED_PROGRAMS
# off (the release preset, which scripts/test builds) they are compiled at
# -O1, as the tests are: that build checks and runs them, it does not time
# them (scripts/bench configures a tree of its own, with the option on),
# and a cold CI run waits for them.
option(LLMGATE_OPTIMISED_PROGRAMS "Compile the benchmarks and small examples at the build type's optimisation" ON)
add_library(llmgate_program INTERFACE)
target_link_libraries(llmgate_program INTERFACE llmgate_development)
if(NOT LLMGATE_OPTIMISED_PROGRAMS AND CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  target_compile_options(llmgate_program INTERFACE -O1)
endif()

find_program(LLMGATE_CCACHE ccache)
if(LLMGATE_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  # The test binary precompiles its headers; ccache caches such compiles
  # only with this sloppiness (its manual, "Precompiled headers").
  set(CMAKE_CXX_COMPILER_LAUNCHER "${CMAKE_COMMAND}" -E env
      "CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime" "${LLMGATE_CCACHE}")
endif()
