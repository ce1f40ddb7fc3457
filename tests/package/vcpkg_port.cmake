# package.vcpkg_port: runs the real ports/llmgate/portfile.cmake with the
# fake vcpkg functions of fake_vcpkg.cmake, as `vcpkg install llmgate
# --overlay-ports=ports` would on x64-linux, then builds a user's project
# against the installed tree.
include("${CMAKE_CURRENT_LIST_DIR}/common.cmake")
include("${CMAKE_CURRENT_LIST_DIR}/fake_vcpkg.cmake")

# What vcpkg defines for a portfile.
set(PORT llmgate)
set(TARGET_TRIPLET x64-linux)
file(READ "${LLMGATE_SOURCE_DIR}/ports/${PORT}/vcpkg.json" manifest)
string(JSON VERSION GET "${manifest}" version)
set(CURRENT_BUILDTREES_DIR "${WORK_DIR}/buildtrees/${PORT}")
set(CURRENT_PACKAGES_DIR "${WORK_DIR}/packages/${PORT}_${TARGET_TRIPLET}")
# Build this checkout, as VCPKG_KEEP_ENV_VARS=LLMGATE_SOURCE_DIR would let through.
set(ENV{LLMGATE_SOURCE_DIR} "${LLMGATE_SOURCE_DIR}")

include("${LLMGATE_SOURCE_DIR}/ports/${PORT}/portfile.cmake")

# The layout vcpkg's post-build checks expect of a header-only port.
expect_files("${CURRENT_PACKAGES_DIR}"
  include/llmgate/llmgate.hpp
  share/llmgate/llmgateConfig.cmake
  share/llmgate/llmgateConfigVersion.cmake
  share/llmgate/llmgateTargets.cmake
  share/llmgate/copyright
  share/llmgate/usage)
foreach(path IN ITEMS debug lib share/cmake)
  if(EXISTS "${CURRENT_PACKAGES_DIR}/${path}")
    message(FATAL_ERROR "a header-only port leaves no ${path}/")
  endif()
endforeach()

# vcpkg then copies the package into installed/<triplet>. Moving it instead
# makes any absolute path into packages/ left in the config fail below.
set(installed "${WORK_DIR}/installed/${TARGET_TRIPLET}")
get_filename_component(installed_parent "${installed}" DIRECTORY)
file(MAKE_DIRECTORY "${installed_parent}")
file(RENAME "${CURRENT_PACKAGES_DIR}" "${installed}")

build_consumer(NAME consumer SOURCE "${TESTS_DIR}/consumer"
  LLMGATE_DIR "${installed}/share/llmgate"
  OPTIONS "-DCMAKE_PREFIX_PATH=${installed}")
