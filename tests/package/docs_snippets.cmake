# package.docs_snippets: every C++ snippet of README.md and docs/ compiled
# as written (and, where it says it runs, run) against an installed llmgate,
# as a new user copying it would: `cmake --install` into a fresh prefix,
# docs_snippets.py writes a program per snippet, build_consumer builds them
# and runs those that run. PYTHON: the interpreter CMake found.
include("${CMAKE_CURRENT_LIST_DIR}/common.cmake")

set(prefix "${WORK_DIR}/prefix")
run("${CMAKE_COMMAND}" --install "${LLMGATE_BINARY_DIR}" --prefix "${prefix}" ${config_args})
run("${PYTHON}" "${TESTS_DIR}/docs_snippets.py" "${LLMGATE_SOURCE_DIR}" "${WORK_DIR}/snippets")
build_consumer(NAME snippets_build SOURCE "${WORK_DIR}/snippets"
  LLMGATE_DIR "${prefix}/share/cmake/llmgate"
  OPTIONS "-DCMAKE_PREFIX_PATH=${prefix}")
