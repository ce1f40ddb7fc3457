# USearch 2.26.2 and NumKong (formerly SimSIMD) as the peers of the index and
# kernel benchmarks. Built only when LLMGATE_USEARCH_DIR names the extracted
# npm package `usearch@2.26.2` (scripts/bench index / kernels fetch it with
# `npm pack` into build/peers/ and pass it), so that a build of every
# benchmark without it (CI's release build) neither needs nor compiles it.
#
# Configured the way the package builds itself (its binding.gyp and
# numkong/numkong.gypi): NumKong's kernels on (USEARCH_USE_NUMKONG=1) with
# dynamic dispatch (NK_DYNAMIC_DISPATCH=1): numkong/c/*.c compiled into a
# static library, each kernel built for its instruction set with target
# attributes and chosen at run time from what the processor has; which
# instruction sets the compiler can emit is probed once into nk_probes.h by
# the package's own numkong/probes/probe.js. Defines, after this file:
#   llmgate_numkong   the static library (PUBLIC: its headers and defines)
#   llmgate_usearch   INTERFACE: USearch's headers on top of it

set(LLMGATE_USEARCH_DIR "" CACHE PATH
  "Extracted npm package usearch@2.26.2 (scripts/bench fetches it); empty: no USearch/NumKong peer")
if(NOT LLMGATE_USEARCH_DIR)
  return()
endif()

set(llmgate_numkong_root "${LLMGATE_USEARCH_DIR}/numkong")
if(NOT EXISTS "${LLMGATE_USEARCH_DIR}/include/usearch/index_dense.hpp" OR
   NOT EXISTS "${llmgate_numkong_root}/c/numkong.c")
  message(FATAL_ERROR "LLMGATE_USEARCH_DIR=${LLMGATE_USEARCH_DIR} is not an extracted usearch 2.26.2 package "
                      "(no include/usearch/index_dense.hpp or numkong/c/numkong.c)")
endif()

# NumKong is C11; only these benchmarks compile C.
enable_language(C)

# The probe header, as `npm install` makes it (the gyp action runs probe.js).
set(llmgate_numkong_probes "${llmgate_numkong_root}/nk_probes.h")
if(NOT EXISTS "${llmgate_numkong_probes}")
  find_program(LLMGATE_NODE node REQUIRED)
  execute_process(COMMAND "${CMAKE_COMMAND}" -E env "CC=${CMAKE_C_COMPILER}"
                          "${LLMGATE_NODE}" probes/probe.js
                  WORKING_DIRECTORY "${llmgate_numkong_root}" RESULT_VARIABLE probe_result)
  if(NOT probe_result EQUAL 0 OR NOT EXISTS "${llmgate_numkong_probes}")
    message(FATAL_ERROR "NumKong's probes/probe.js did not write ${llmgate_numkong_probes}")
  endif()
endif()

# The sources numkong.gypi lists (parallel.c, a thread pool, is not among them).
set(llmgate_numkong_sources numkong.c)
foreach(type IN ITEMS f64 f32 f16 bf16 i8 u8 u1 e4m3 e5m2 other f64c f32c f16c bf16c i16 i32 i64
                      u16 u32 u64 i4 u4 e2m3 e3m2)
  list(APPEND llmgate_numkong_sources "dispatch_${type}.c")
endforeach()
list(TRANSFORM llmgate_numkong_sources PREPEND "${llmgate_numkong_root}/c/")

add_library(llmgate_numkong STATIC ${llmgate_numkong_sources})
# No -march here: each kernel carries its own target attribute and the
# dispatcher picks one at run time. NK_NATIVE_F16/BF16=0 as in the gyp file.
target_compile_definitions(llmgate_numkong PUBLIC NK_DYNAMIC_DISPATCH=1 NK_NATIVE_F16=0 NK_NATIVE_BF16=0)
target_include_directories(llmgate_numkong SYSTEM PUBLIC "${llmgate_numkong_root}/include")
target_compile_options(llmgate_numkong PRIVATE -O3 -w -include "${llmgate_numkong_probes}")
set_target_properties(llmgate_numkong PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON C_EXTENSIONS ON)
find_library(LLMGATE_LIBM m)
if(LLMGATE_LIBM)
  target_link_libraries(llmgate_numkong PUBLIC "${LLMGATE_LIBM}")
endif()

add_library(llmgate_usearch INTERFACE)
target_include_directories(llmgate_usearch SYSTEM INTERFACE "${LLMGATE_USEARCH_DIR}/include")
target_compile_definitions(llmgate_usearch INTERFACE USEARCH_USE_NUMKONG=1 USEARCH_USE_OPENMP=0)
target_link_libraries(llmgate_usearch INTERFACE llmgate_numkong)
