# package.vcpkg_port: runs the real ports/llmgate/portfile.cmake with the
# fake vcpkg functions of fake_vcpkg.cmake, as `vcpkg install llmgate
# --overlay-ports=ports` would on x64-linux, then builds users' projects
# against the installed tree. Twice: with the port's default features
# (llmgate::llmgate and llmgate::core) and as llmgate[core] (llmgate::core
# alone, built and consumed where Boost.JSON and OpenSSL cannot be found).
include("${CMAKE_CURRENT_LIST_DIR}/common.cmake")
include("${CMAKE_CURRENT_LIST_DIR}/fake_vcpkg.cmake")

# What vcpkg defines for a portfile, from the port's manifest.
set(PORT llmgate)
set(TARGET_TRIPLET x64-linux)
file(READ "${LLMGATE_SOURCE_DIR}/ports/${PORT}/vcpkg.json" manifest)
string(JSON VERSION GET "${manifest}" version)
set(ALL_FEATURES "")
string(JSON feature_count ERROR_VARIABLE error LENGTH "${manifest}" features)
if(NOT error AND feature_count GREATER 0)
  math(EXPR last "${feature_count} - 1")
  foreach(i RANGE ${last})
    string(JSON feature MEMBER "${manifest}" features ${i})
    list(APPEND ALL_FEATURES "${feature}")
  endforeach()
endif()
set(default_features "")
string(JSON default_count ERROR_VARIABLE error LENGTH "${manifest}" default-features)
if(NOT error AND default_count GREATER 0)
  math(EXPR last "${default_count} - 1")
  foreach(i RANGE ${last})
    string(JSON feature GET "${manifest}" default-features ${i})
    list(APPEND default_features "${feature}")
  endforeach()
endif()
if(NOT "server" IN_LIST ALL_FEATURES)
  message(FATAL_ERROR "ports/${PORT}/vcpkg.json declares no feature 'server'")
endif()
# Build this checkout, as VCPKG_KEEP_ENV_VARS=LLMGATE_SOURCE_DIR would let through.
set(ENV{LLMGATE_SOURCE_DIR} "${LLMGATE_SOURCE_DIR}")

# install_port(<name> <features>...): what `vcpkg install llmgate[<features>]`
# leaves in installed/<triplet>, here under WORK_DIR/<name>; sets <name>_installed.
function(install_port name)
  set(FEATURES core ${ARGN})
  set(CURRENT_BUILDTREES_DIR "${WORK_DIR}/${name}/buildtrees/${PORT}")
  set(CURRENT_PACKAGES_DIR "${WORK_DIR}/${name}/packages/${PORT}_${TARGET_TRIPLET}")
  include("${LLMGATE_SOURCE_DIR}/ports/${PORT}/portfile.cmake")

  # The layout vcpkg's post-build checks expect of a header-only port.
  expect_files("${CURRENT_PACKAGES_DIR}"
    include/llmgate/llmgate.hpp
    share/llmgate/llmgateConfig.cmake
    share/llmgate/llmgateConfigVersion.cmake
    share/llmgate/llmgateCoreTargets.cmake
    share/llmgate/copyright
    share/llmgate/usage)
  foreach(path IN ITEMS debug lib share/cmake)
    if(EXISTS "${CURRENT_PACKAGES_DIR}/${path}")
      message(FATAL_ERROR "a header-only port leaves no ${path}/")
    endif()
  endforeach()

  # vcpkg then copies the package into installed/<triplet>. Moving it instead
  # makes any absolute path into packages/ left in the config fail below.
  set(installed "${WORK_DIR}/${name}/installed/${TARGET_TRIPLET}")
  get_filename_component(installed_parent "${installed}" DIRECTORY)
  file(MAKE_DIRECTORY "${installed_parent}")
  file(RENAME "${CURRENT_PACKAGES_DIR}" "${installed}")
  set(${name}_installed "${installed}" PARENT_SCOPE)
endfunction()

# vcpkg install llmgate: the default features.
install_port(default ${default_features})
if("server" IN_LIST default_features)
  expect_files("${default_installed}" share/llmgate/llmgateServerTargets.cmake)
  build_consumer(NAME default_consumer SOURCE "${TESTS_DIR}/consumer"
    LLMGATE_DIR "${default_installed}/share/llmgate"
    OPTIONS "-DCMAKE_PREFIX_PATH=${default_installed}")
endif()
build_consumer(NAME default_consumer_core SOURCE "${TESTS_DIR}/consumer_core"
  LLMGATE_DIR "${default_installed}/share/llmgate"
  OPTIONS "-DCMAKE_PREFIX_PATH=${default_installed}" -DLLMGATE_NO_NETWORK_DEPS=ON)

# vcpkg install llmgate[core], built where Boost.JSON and OpenSSL cannot be found.
set(configure_args ${configure_args}
  -DCMAKE_DISABLE_FIND_PACKAGE_boost_json=ON -DCMAKE_DISABLE_FIND_PACKAGE_OpenSSL=ON)
install_port(core_only)
if(EXISTS "${core_only_installed}/share/llmgate/llmgateServerTargets.cmake")
  message(FATAL_ERROR "llmgate[core] installed llmgateServerTargets.cmake")
endif()
build_consumer(NAME core_only_consumer_core SOURCE "${TESTS_DIR}/consumer_core"
  LLMGATE_DIR "${core_only_installed}/share/llmgate"
  OPTIONS "-DCMAKE_PREFIX_PATH=${core_only_installed}" -DLLMGATE_NO_NETWORK_DEPS=ON)
find_check(NAME core_only_server PREFIX "${core_only_installed}" OPTIONS -DLLMGATE_COMPONENTS=server
  ERROR "server component \\(llmgate::llmgate\\) is not in this installation.*llmgate\\[server\\]")
