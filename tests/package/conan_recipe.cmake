# package.conan_recipe: runs the real conanfile.py through the fake
# `conan create` of fake_conan/, then builds users' projects against the
# package through the config it generated, with C++20 as Conan's toolchain
# would set from compiler.cppstd. Twice: with the default options (both
# components) and with server=False (llmgate::core alone, consumed where
# Boost.JSON and OpenSSL cannot be found). PYTHON: the interpreter CMake found.
include("${CMAKE_CURRENT_LIST_DIR}/common.cmake")

run("${PYTHON}" "${TESTS_DIR}/fake_conan/conan_create.py" "${LLMGATE_SOURCE_DIR}" "${WORK_DIR}/default")
foreach(consumer IN ITEMS consumer consumer_core)
  build_consumer(NAME default_${consumer} SOURCE "${TESTS_DIR}/${consumer}"
    LLMGATE_DIR "${WORK_DIR}/default/generators"
    OPTIONS "-DCMAKE_PREFIX_PATH=${WORK_DIR}/default/generators" -DCMAKE_CXX_STANDARD=20)
endforeach()

run("${PYTHON}" "${TESTS_DIR}/fake_conan/conan_create.py" "${LLMGATE_SOURCE_DIR}" "${WORK_DIR}/core_only"
  server=False)
build_consumer(NAME core_only_consumer_core SOURCE "${TESTS_DIR}/consumer_core"
  LLMGATE_DIR "${WORK_DIR}/core_only/generators"
  OPTIONS "-DCMAKE_PREFIX_PATH=${WORK_DIR}/core_only/generators" -DCMAKE_CXX_STANDARD=20
          -DLLMGATE_NO_NETWORK_DEPS=ON)
file(READ "${WORK_DIR}/core_only/generators/llmgate-config.cmake" config)
if(config MATCHES "llmgate::llmgate|OpenSSL|Boost::json")
  message(FATAL_ERROR "with server=False the generated config still names the network side:\n${config}")
endif()
