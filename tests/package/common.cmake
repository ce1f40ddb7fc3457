# Shared by the package tests' scripts, which CTest runs with cmake -P and:
#   LLMGATE_SOURCE_DIR  the llmgate checkout
#   LLMGATE_BINARY_DIR  its build tree (the one running these tests)
#   TESTS_DIR           tests/package in the checkout
#   WORK_DIR            this test's own scratch folder, inside the build tree
#   GENERATOR, CXX_COMPILER, CONFIG, CTEST_COMMAND
#                       so every project here builds like the build tree

# Every project these tests configure uses the build tree's generator,
# compiler and configuration, and ignores packages registered by other
# builds on this machine, so it finds llmgate only where a test points it.
set(configure_args -G "${GENERATOR}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
    "-DCMAKE_BUILD_TYPE=${CONFIG}" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
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
# with two jobs and runs its CTest tests. With LLMGATE_DIR, also checks that
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
  run("${CMAKE_COMMAND}" --build "${binary}" ${config_args} --parallel 2)
  if(CONFIG)
    set(ctest_config -C "${CONFIG}")
  endif()
  run("${CTEST_COMMAND}" --test-dir "${binary}" ${ctest_config} --output-on-failure --no-tests=error)
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
