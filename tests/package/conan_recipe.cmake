# package.conan_recipe: runs the real conanfile.py through the fake
# `conan create` of fake_conan/, then builds a user's project against the
# package through the config it generated, with C++20 as Conan's toolchain
# would set from compiler.cppstd. PYTHON: the interpreter CMake found.
include("${CMAKE_CURRENT_LIST_DIR}/common.cmake")

run("${PYTHON}" "${TESTS_DIR}/fake_conan/conan_create.py" "${LLMGATE_SOURCE_DIR}" "${WORK_DIR}")
build_consumer(NAME consumer SOURCE "${TESTS_DIR}/consumer"
  LLMGATE_DIR "${WORK_DIR}/generators"
  OPTIONS "-DCMAKE_PREFIX_PATH=${WORK_DIR}/generators" -DCMAKE_CXX_STANDARD=20)
