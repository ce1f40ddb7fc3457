# Shared by the package tests' scripts, which CTest runs with cmake -P and:
#   LLMGATE_SOURCE_DIR  the llmgate checkout
#   LLMGATE_BINARY_DIR  its build tree (the one running these tests)
#   TESTS_DIR           tests/package in the checkout
#   WORK_DIR            this test's own scratch folder, inside the build tree
#   GENERATOR, CXX_COMPILER, CONFIG, CTEST_COMMAND
#                       so every project here builds like the build tree

# Scripts run with the policies of the CMake the project requires (IN_LIST...).
cmake_minimum_required(VERSION 3.21)

# Every project these tests configure uses the build tree's generator,
# compiler and configuration, and ignores packages registered by other
# builds on this machine, so it finds llmgate only where a test points it.
set(configure_args -G "${GENERATOR}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
    "-DCMAKE_BUILD_TYPE=${CONFIG}" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
# Builds run two jobs, or as many as CMAKE_BUILD_PARALLEL_LEVEL says where
# the environment sets it (1 on a machine shared with other builds).
set(build_jobs 2)
if("$ENV{CMAKE_BUILD_PARALLEL_LEVEL}" MATCHES "^[1-9][0-9]*$")
  set(build_jobs "$ENV{CMAKE_BUILD_PARALLEL_LEVEL}")
endif()
# CONFIG is empty for a single-configuration tree built without a build type.
set(config_args "")
if(CONFIG)
  set(config_args --config "${CONFIG}")
endif()

# Runs a command; stops the test with the command and its output if it fails.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  if(NOT result EQUAL 0)
    list(JOIN ARGN " " command)
    message(FATAL_ERROR "failed (${result}): ${command}\n${output}")
  endif()
endfunction()

# build_consumer(NAME <name> SOURCE <dir> [LLMGATE_DIR <dir>] [OPTIONS <args>...])
# Configures the project in SOURCE into WORK_DIR/NAME with OPTIONS, builds it
# (build_jobs jobs) and runs its CTest tests. With LLMGATE_DIR, also checks that
# find_package(llmgate) found its config there and nowhere else.
function(build_consumer)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "NAME;SOURCE;LLMGATE_DIR" "OPTIONS")
  set(binary "${WORK_DIR}/${arg_NAME}")
  run("${CMAKE_COMMAND}" -S "${arg_SOURCE}" -B "${binary}" ${configure_args} ${arg_OPTIONS})
  if(arg_LLMGATE_DIR)
    file(STRINGS "${binary}/CMakeCache.txt" found REGEX "^llmgate_DIR:")
    string(REGEX REPLACE "^[^=]*=" "" found "${found}")
    file(REAL_PATH "${found}" found)
    file(REAL_PATH "${arg_LLMGATE_DIR}" expected)
    if(NOT found STREQUAL expected)
      message(FATAL_ERROR "find_package(llmgate) used ${found}, not ${expected}")
    endif()
  endif()
  run("${CMAKE_COMMAND}" --build "${binary}" ${config_args} --parallel ${build_jobs})
  if(CONFIG)
    set(ctest_config -C "${CONFIG}")
  endif()
  run("${CTEST_COMMAND}" --test-dir "${binary}" ${ctest_config} --output-on-failure --no-tests=error)
endfunction()

# find_check(NAME <name> PREFIX <prefix> (TARGETS <target>... | ERROR <regex>)
#            [OPTIONS <args>...])
# Configures find_check/ (find_package(llmgate) as OPTIONS ask: LLMGATE_REQUEST,
# LLMGATE_COMPONENTS, LLMGATE_NO_NETWORK_DEPS, LLMGATE_NO_HIREDIS,
# LLMGATE_NO_SQLITE) against <prefix> only. With TARGETS, it must succeed
# and define exactly those of llmgate::core, llmgate::llmgate,
# llmgate::redis, llmgate::eval, Boost::json, OpenSSL::SSL, hiredis::hiredis
# and SQLite::SQLite3 (in that order); with ERROR, it must fail with a
# message matching <regex>.
function(find_check)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "NAME;PREFIX;ERROR" "TARGETS;OPTIONS")
  execute_process(
    COMMAND "${CMAKE_COMMAND}" -S "${TESTS_DIR}/find_check" -B "${WORK_DIR}/find_${arg_NAME}"
            ${configure_args} "-DCMAKE_PREFIX_PATH=${arg_PREFIX}" ${arg_OPTIONS}
    RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  if(DEFINED arg_ERROR)
    # CMake wraps messages at spaces; unwrap before matching.
    string(REGEX REPLACE "\n  +" " " flat "${output}")
    if(result EQUAL 0 OR NOT flat MATCHES "${arg_ERROR}")
      message(FATAL_ERROR "find_check ${arg_NAME}: expected a failure saying '${arg_ERROR}', got (${result}):\n${output}")
    endif()
  else()
    list(JOIN arg_TARGETS ";" expected)
    if(NOT result EQUAL 0 OR NOT output MATCHES "-- targets: \\[([^\n]*)\\]")
      message(FATAL_ERROR "find_check ${arg_NAME} failed (${result}):\n${output}")
    endif()
    if(NOT CMAKE_MATCH_1 STREQUAL expected)
      message(FATAL_ERROR "find_check ${arg_NAME}: defined [${CMAKE_MATCH_1}], expected [${expected}]")
    endif()
  endif()
endfunction()

# Stops the test unless every path in ARGN exists under <root>.
function(expect_files root)
  foreach(path IN LISTS ARGN)
    if(NOT EXISTS "${root}/${path}")
      message(FATAL_ERROR "${root} lacks ${path}")
    endif()
  endforeach()
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
