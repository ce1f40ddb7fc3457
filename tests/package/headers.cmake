# package.headers: builds, in the build tree, the object library that
# compiles each public header alone and the program whose two translation
# units include everything, then runs that program (ODR_PROGRAM).
include("${CMAKE_CURRENT_LIST_DIR}/common.cmake")

run("${CMAKE_COMMAND}" --build "${LLMGATE_BINARY_DIR}" ${config_args} --parallel ${build_jobs}
  --target llmgate_package_headers llmgate_package_odr)
run("${ODR_PROGRAM}")
