# package.install: `cmake --install` the build tree into a fresh prefix, then
# build and run users' projects against that prefix only: one linking
# llmgate::llmgate, one linking llmgate::core on a machine that looks as if
# it had neither Boost.JSON nor OpenSSL, one linking llmgate::redis, one
# linking llmgate::eval (the build tree has LLMGATE_REDIS and LLMGATE_EVAL
# on, as by default) and one of two files built with
# LLMGATE_SEPARATE_COMPILATION. Then the same for a core-only install
# (LLMGATE_SERVER=OFF, configured without either), and what
# find_package(llmgate) accepts, refuses and says about each, also on a
# machine that looks as if it had no hiredis or no SQLite.
include("${CMAKE_CURRENT_LIST_DIR}/common.cmake")

set(prefix "${WORK_DIR}/prefix")
run("${CMAKE_COMMAND}" --install "${LLMGATE_BINARY_DIR}" --prefix "${prefix}" ${config_args})
expect_files("${prefix}"
  include/llmgate/llmgate.hpp
  include/llmgate/version.hpp
  share/cmake/llmgate/llmgateConfig.cmake
  share/cmake/llmgate/llmgateConfigVersion.cmake
  share/cmake/llmgate/llmgateCoreTargets.cmake
  share/cmake/llmgate/llmgateServerTargets.cmake
  share/cmake/llmgate/llmgateRedisTargets.cmake
  share/cmake/llmgate/llmgateFindHiredis.cmake
  share/cmake/llmgate/llmgateEvalTargets.cmake
  include/llmgate/server/shared/redis_shared_tier.hpp
  include/llmgate/eval/run/run_store.hpp
  share/doc/llmgate/LICENSE)

build_consumer(NAME consumer SOURCE "${TESTS_DIR}/consumer"
  LLMGATE_DIR "${prefix}/share/cmake/llmgate"
  OPTIONS "-DCMAKE_PREFIX_PATH=${prefix}")
build_consumer(NAME consumer_core SOURCE "${TESTS_DIR}/consumer_core"
  LLMGATE_DIR "${prefix}/share/cmake/llmgate"
  OPTIONS "-DCMAKE_PREFIX_PATH=${prefix}" -DLLMGATE_NO_NETWORK_DEPS=ON)
build_consumer(NAME consumer_redis SOURCE "${TESTS_DIR}/consumer_redis"
  LLMGATE_DIR "${prefix}/share/cmake/llmgate"
  OPTIONS "-DCMAKE_PREFIX_PATH=${prefix}")
build_consumer(NAME consumer_eval SOURCE "${TESTS_DIR}/consumer_eval"
  LLMGATE_DIR "${prefix}/share/cmake/llmgate"
  OPTIONS "-DCMAKE_PREFIX_PATH=${prefix}")
build_consumer(NAME consumer_separate SOURCE "${TESTS_DIR}/consumer_separate"
  LLMGATE_DIR "${prefix}/share/cmake/llmgate"
  OPTIONS "-DCMAKE_PREFIX_PATH=${prefix}")

# Components: none asks for all this installation has (redis and eval only
# where hiredis and SQLite are found); core alone looks for neither
# Boost.JSON nor OpenSSL; redis and eval bring server with them; a missing
# dependency of a component is named, with the way to ask for the core alone.
find_check(NAME default PREFIX "${prefix}"
  TARGETS llmgate::core llmgate::llmgate llmgate::redis llmgate::eval Boost::json OpenSSL::SSL hiredis::hiredis SQLite::SQLite3)
find_check(NAME server PREFIX "${prefix}" OPTIONS -DLLMGATE_COMPONENTS=server
  TARGETS llmgate::core llmgate::llmgate Boost::json OpenSSL::SSL)
find_check(NAME redis PREFIX "${prefix}" OPTIONS -DLLMGATE_COMPONENTS=redis
  TARGETS llmgate::core llmgate::llmgate llmgate::redis Boost::json OpenSSL::SSL hiredis::hiredis)
find_check(NAME eval PREFIX "${prefix}" OPTIONS -DLLMGATE_COMPONENTS=eval
  TARGETS llmgate::core llmgate::llmgate llmgate::eval Boost::json OpenSSL::SSL SQLite::SQLite3)
find_check(NAME no_hiredis PREFIX "${prefix}" OPTIONS -DLLMGATE_NO_HIREDIS=ON
  TARGETS llmgate::core llmgate::llmgate llmgate::eval Boost::json OpenSSL::SSL SQLite::SQLite3)
find_check(NAME no_hiredis_redis PREFIX "${prefix}" OPTIONS -DLLMGATE_NO_HIREDIS=ON -DLLMGATE_COMPONENTS=redis
  ERROR "llmgate's redis component \\(llmgate::redis\\) needs hiredis \\(Debian: libhiredis-dev; vcpkg/Conan: hiredis\\), not found")
find_check(NAME no_sqlite PREFIX "${prefix}" OPTIONS -DLLMGATE_NO_SQLITE=ON
  TARGETS llmgate::core llmgate::llmgate llmgate::redis Boost::json OpenSSL::SSL hiredis::hiredis)
find_check(NAME no_sqlite_eval PREFIX "${prefix}" OPTIONS -DLLMGATE_NO_SQLITE=ON -DLLMGATE_COMPONENTS=eval
  ERROR "llmgate's eval component \\(llmgate::eval\\) needs SQLite 3 \\(Debian: libsqlite3-dev; vcpkg: sqlite3; Conan: sqlite3\\), not found")
find_check(NAME core PREFIX "${prefix}" OPTIONS -DLLMGATE_COMPONENTS=core
  TARGETS llmgate::core)
find_check(NAME no_network_deps PREFIX "${prefix}" OPTIONS -DLLMGATE_NO_NETWORK_DEPS=ON
  ERROR "server component \\(llmgate::llmgate\\) needs Boost.JSON 1.81 or later and OpenSSL 1.1 or later, not found.*COMPONENTS core")
find_check(NAME unknown PREFIX "${prefix}" OPTIONS -DLLMGATE_COMPONENTS=gui
  ERROR "llmgate has no component 'gui'")

# The version file accepts the installed version and refuses a later major one.
find_check(NAME version_ok PREFIX "${prefix}" OPTIONS "-DLLMGATE_REQUEST=${LLMGATE_VERSION}"
  TARGETS llmgate::core llmgate::llmgate llmgate::redis llmgate::eval Boost::json OpenSSL::SSL hiredis::hiredis SQLite::SQLite3)
find_check(NAME version_99 PREFIX "${prefix}" OPTIONS -DLLMGATE_REQUEST=99
  ERROR "compatible with requested version \"99\"")

# A core-only llmgate: configured where Boost.JSON and OpenSSL cannot be found.
set(core_prefix "${WORK_DIR}/core_prefix")
run("${CMAKE_COMMAND}" -S "${LLMGATE_SOURCE_DIR}" -B "${WORK_DIR}/core_build" ${configure_args}
  -DLLMGATE_SERVER=OFF -DLLMGATE_BUILD_TESTS=OFF -DLLMGATE_BUILD_EXAMPLES=OFF
  -DLLMGATE_BUILD_BENCHMARKS=OFF -DLLMGATE_INSTALL=ON
  -DCMAKE_DISABLE_FIND_PACKAGE_boost_json=ON -DCMAKE_DISABLE_FIND_PACKAGE_OpenSSL=ON)
run("${CMAKE_COMMAND}" --install "${WORK_DIR}/core_build" --prefix "${core_prefix}" ${config_args})
expect_files("${core_prefix}"
  include/llmgate/version.hpp
  share/cmake/llmgate/llmgateConfig.cmake
  share/cmake/llmgate/llmgateCoreTargets.cmake)
foreach(file IN ITEMS llmgateServerTargets.cmake llmgateRedisTargets.cmake llmgateFindHiredis.cmake
                     llmgateEvalTargets.cmake)
  if(EXISTS "${core_prefix}/share/cmake/llmgate/${file}")
    message(FATAL_ERROR "a core-only install has ${file}")
  endif()
endforeach()
build_consumer(NAME consumer_core_only SOURCE "${TESTS_DIR}/consumer_core"
  LLMGATE_DIR "${core_prefix}/share/cmake/llmgate"
  OPTIONS "-DCMAKE_PREFIX_PATH=${core_prefix}" -DLLMGATE_NO_NETWORK_DEPS=ON)
find_check(NAME core_only_default PREFIX "${core_prefix}" TARGETS llmgate::core)
find_check(NAME core_only_server PREFIX "${core_prefix}" OPTIONS -DLLMGATE_COMPONENTS=server
  ERROR "server component \\(llmgate::llmgate\\) is not in this installation.*LLMGATE_SERVER=ON.*COMPONENTS core")
# The redis component needs the server's: asked for here, the missing server is named.
find_check(NAME core_only_redis PREFIX "${core_prefix}" OPTIONS -DLLMGATE_COMPONENTS=redis
  ERROR "server component \\(llmgate::llmgate\\) is not in this installation")
find_check(NAME core_only_eval PREFIX "${core_prefix}" OPTIONS -DLLMGATE_COMPONENTS=eval
  ERROR "server component \\(llmgate::llmgate\\) is not in this installation")
