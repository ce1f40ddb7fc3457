# package.vcpkg_port: runs the real ports/llmgate/portfile.cmake with the
# fake vcpkg functions of fake_vcpkg.cmake, as `vcpkg install llmgate
# --overlay-ports=ports` would on x64-linux, then builds users' projects
# against the installed tree. Three times: with the port's default features
# (llmgate::llmgate and llmgate::core, built and consumed where hiredis
# cannot be found), as llmgate[redis,eval] (llmgate::redis and
# llmgate::eval too, with the machine's hiredis and SQLite) and as
# llmgate[core] (llmgate::core alone, built and consumed where Boost.JSON
# and OpenSSL cannot be found).
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
foreach(feature IN ITEMS server redis eval)
  if(NOT feature IN_LIST ALL_FEATURES)
    message(FATAL_ERROR "ports/${PORT}/vcpkg.json declares no feature '${feature}'")
  endif()
endforeach()
foreach(feature dependency IN ZIP_LISTS "redis;eval" "hiredis;SQLite")
  if(feature IN_LIST default_features)
    message(FATAL_ERROR "ports/${PORT}/vcpkg.json makes '${feature}' a default feature: every user would need ${dependency}")
  endif()
endforeach()

# feature_needs(<feature> <packages> <features>): the packages a feature of
# the port depends on, and the port's own features it asks for (a
# dependency on "llmgate" with "features"), as vcpkg reads the manifest.
function(feature_needs feature out_packages out_features)
  set(packages "")
  set(features "")
  string(JSON count LENGTH "${manifest}" features ${feature} dependencies)
  math(EXPR last "${count} - 1")
  foreach(i RANGE ${last})
    string(JSON type TYPE "${manifest}" features ${feature} dependencies ${i})
    if(type STREQUAL "STRING")
      string(JSON name GET "${manifest}" features ${feature} dependencies ${i})
    else()
      string(JSON name GET "${manifest}" features ${feature} dependencies ${i} name)
    endif()
    list(APPEND packages "${name}")
    if(name STREQUAL PORT AND type STREQUAL "OBJECT")
      string(JSON own_count ERROR_VARIABLE error LENGTH "${manifest}" features ${feature} dependencies ${i} features)
      if(NOT error AND own_count GREATER 0)
        math(EXPR own_last "${own_count} - 1")
        foreach(j RANGE ${own_last})
          string(JSON own GET "${manifest}" features ${feature} dependencies ${i} features ${j})
          list(APPEND features "${own}")
        endforeach()
      endif()
    endif()
  endforeach()
  set(${out_packages} "${packages}" PARENT_SCOPE)
  set(${out_features} "${features}" PARENT_SCOPE)
endfunction()

# llmgate[redis] brings hiredis and llmgate[eval] SQLite, each with the
# server feature (llmgate::redis and llmgate::eval are built on llmgate::llmgate).
foreach(feature package IN ZIP_LISTS "redis;eval" "hiredis;sqlite3")
  feature_needs(${feature} ${feature}_packages ${feature}_features)
  foreach(needed IN ITEMS ${package} ${PORT})
    if(NOT needed IN_LIST ${feature}_packages)
      message(FATAL_ERROR "the port's feature '${feature}' does not depend on ${needed}: "
                          "it depends on [${${feature}_packages}]")
    endif()
  endforeach()
  if(NOT "server" IN_LIST ${feature}_features)
    message(FATAL_ERROR "the port's feature '${feature}' does not ask for llmgate[server]: "
                        "it asks for [${${feature}_features}]")
  endif()
endforeach()
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

# vcpkg install llmgate: the default features, which do not depend on
# hiredis, so vcpkg would not have installed it: built and consumed where it
# cannot be found (its CMake package refused, pkg-config searching an empty
# folder; the processes started below inherit the environment).
set(with_hiredis_args ${configure_args})
foreach(variable IN ITEMS PKG_CONFIG_LIBDIR PKG_CONFIG_PATH)
  if(DEFINED ENV{${variable}})
    set(with_hiredis_${variable} "$ENV{${variable}}")
  endif()
endforeach()
list(APPEND configure_args -DCMAKE_DISABLE_FIND_PACKAGE_hiredis=ON)
set(ENV{PKG_CONFIG_LIBDIR} "${WORK_DIR}/no_pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")
install_port(default ${default_features})
foreach(file IN ITEMS llmgateRedisTargets.cmake llmgateFindHiredis.cmake llmgateEvalTargets.cmake)
  if(EXISTS "${default_installed}/share/llmgate/${file}")
    message(FATAL_ERROR "llmgate's default features installed ${file}")
  endif()
endforeach()
if("server" IN_LIST default_features)
  expect_files("${default_installed}" share/llmgate/llmgateServerTargets.cmake)
  build_consumer(NAME default_consumer SOURCE "${TESTS_DIR}/consumer"
    LLMGATE_DIR "${default_installed}/share/llmgate"
    OPTIONS "-DCMAKE_PREFIX_PATH=${default_installed}")
  find_check(NAME default_redis PREFIX "${default_installed}" OPTIONS -DLLMGATE_COMPONENTS=redis
    ERROR "redis component \\(llmgate::redis\\) is not in this installation")
  find_check(NAME default_eval PREFIX "${default_installed}" OPTIONS -DLLMGATE_COMPONENTS=eval
    ERROR "eval component \\(llmgate::eval\\) is not in this installation.*llmgate\\[eval\\]")
endif()
build_consumer(NAME default_consumer_core SOURCE "${TESTS_DIR}/consumer_core"
  LLMGATE_DIR "${default_installed}/share/llmgate"
  OPTIONS "-DCMAKE_PREFIX_PATH=${default_installed}" -DLLMGATE_NO_NETWORK_DEPS=ON)
# Back to the machine as it is. (An empty PKG_CONFIG_LIBDIR, unlike none,
# would leave pkg-config no folder to search.)
set(configure_args ${with_hiredis_args})
foreach(variable IN ITEMS PKG_CONFIG_LIBDIR PKG_CONFIG_PATH)
  if(DEFINED with_hiredis_${variable})
    set(ENV{${variable}} "${with_hiredis_${variable}}")
  else()
    unset(ENV{${variable}})
  endif()
endforeach()

# vcpkg install llmgate[redis,eval]: the default features, redis, eval and
# what they ask for; hiredis and SQLite are the machine's (Debian's
# libhiredis-dev, found through pkg-config as vcpkg's would be through its
# CMake package, and libsqlite3-dev, through CMake's FindSQLite3 as vcpkg's).
install_port(redis_eval ${default_features} redis eval ${redis_features} ${eval_features})
expect_files("${redis_eval_installed}"
  share/llmgate/llmgateServerTargets.cmake
  share/llmgate/llmgateRedisTargets.cmake
  share/llmgate/llmgateFindHiredis.cmake
  share/llmgate/llmgateEvalTargets.cmake)
foreach(consumer IN ITEMS consumer_redis consumer_eval)
  build_consumer(NAME redis_eval_${consumer} SOURCE "${TESTS_DIR}/${consumer}"
    LLMGATE_DIR "${redis_eval_installed}/share/llmgate"
    OPTIONS "-DCMAKE_PREFIX_PATH=${redis_eval_installed}")
endforeach()
find_check(NAME redis_eval_default PREFIX "${redis_eval_installed}"
  TARGETS llmgate::core llmgate::llmgate llmgate::redis llmgate::eval Boost::json OpenSSL::SSL hiredis::hiredis
          SQLite::SQLite3)

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
