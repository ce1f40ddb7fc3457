# package.install: `cmake --install` the build tree into a fresh prefix, then
# build and run a user's project against that prefix only.
include("${CMAKE_CURRENT_LIST_DIR}/common.cmake")

set(prefix "${WORK_DIR}/prefix")
run("${CMAKE_COMMAND}" --install "${LLMGATE_BINARY_DIR}" --prefix "${prefix}" ${config_args})
expect_files("${prefix}"
  include/llmgate/llmgate.hpp
  include/llmgate/version.hpp
  share/cmake/llmgate/llmgateConfig.cmake
  share/cmake/llmgate/llmgateConfigVersion.cmake
  share/cmake/llmgate/llmgateTargets.cmake
  share/doc/llmgate/LICENSE)

build_consumer(NAME consumer SOURCE "${TESTS_DIR}/consumer"
  LLMGATE_DIR "${prefix}/share/cmake/llmgate"
  OPTIONS "-DCMAKE_PREFIX_PATH=${prefix}")

# The version file accepts the installed version and refuses a later major one.
run("${CMAKE_COMMAND}" -S "${TESTS_DIR}/version_check" -B "${WORK_DIR}/version_ok"
  ${configure_args} "-DCMAKE_PREFIX_PATH=${prefix}" "-DLLMGATE_REQUEST=${LLMGATE_VERSION}")
execute_process(
  COMMAND "${CMAKE_COMMAND}" -S "${TESTS_DIR}/version_check" -B "${WORK_DIR}/version_99"
          ${configure_args} "-DCMAKE_PREFIX_PATH=${prefix}" -DLLMGATE_REQUEST=99
  RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
if(result EQUAL 0 OR NOT output MATCHES "compatible with requested version \"99\"")
  message(FATAL_ERROR "find_package(llmgate 99) was not refused for its version:\n${output}")
endif()
