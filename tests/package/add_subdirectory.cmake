# package.add_subdirectory: users' projects that add the llmgate checkout
# with add_subdirectory build and run: one linking llmgate::llmgate where
# hiredis cannot be found (the project itself checks that llmgate added no
# tests, examples, benchmarks or install rules), one linking llmgate::core
# with LLMGATE_SERVER=OFF where Boost.JSON and OpenSSL cannot be found, one
# linking llmgate::redis with LLMGATE_REDIS=ON.
include("${CMAKE_CURRENT_LIST_DIR}/common.cmake")

build_consumer(NAME subdirectory SOURCE "${TESTS_DIR}/subdirectory"
  OPTIONS "-DLLMGATE_CHECKOUT=${LLMGATE_SOURCE_DIR}" -DLLMGATE_NO_HIREDIS=ON)
build_consumer(NAME subdirectory_core SOURCE "${TESTS_DIR}/consumer_core"
  OPTIONS "-DLLMGATE_CHECKOUT=${LLMGATE_SOURCE_DIR}" -DLLMGATE_NO_NETWORK_DEPS=ON)
build_consumer(NAME subdirectory_redis SOURCE "${TESTS_DIR}/consumer_redis"
  OPTIONS "-DLLMGATE_CHECKOUT=${LLMGATE_SOURCE_DIR}")
