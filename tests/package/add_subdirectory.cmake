# package.add_subdirectory: a user's project that adds the llmgate checkout
# with add_subdirectory builds and runs; the project itself checks that
# llmgate added no tests, examples, benchmarks or install rules.
include("${CMAKE_CURRENT_LIST_DIR}/common.cmake")

build_consumer(NAME subdirectory SOURCE "${TESTS_DIR}/subdirectory"
  OPTIONS "-DLLMGATE_CHECKOUT=${LLMGATE_SOURCE_DIR}")
