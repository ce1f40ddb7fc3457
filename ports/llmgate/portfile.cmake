# vcpkg overlay port for llmgate, in the shape of vcpkg's header-only ports
# (nlohmann-json, fmt): llmgate's own CMake install rules do the work.
#   vcpkg install llmgate --overlay-ports=<checkout>/ports
# To package a checkout instead of the release archive, point LLMGATE_SOURCE_DIR
# at it and let the variable through vcpkg's cleaned build environment:
#   LLMGATE_SOURCE_DIR=<checkout> VCPKG_KEEP_ENV_VARS=LLMGATE_SOURCE_DIR vcpkg install ...
if(DEFINED ENV{LLMGATE_SOURCE_DIR})
  file(TO_CMAKE_PATH "$ENV{LLMGATE_SOURCE_DIR}" SOURCE_PATH)
else()
  vcpkg_from_github(
    OUT_SOURCE_PATH SOURCE_PATH
    REPO llmgate/llmgate
    REF "v${VERSION}"
    # Set at each release; with 0, vcpkg stops and prints the archive's real hash.
    SHA512 0
    HEAD_REF main
  )
endif()

# "server" (a default feature) adds llmgate::llmgate and its dependencies;
# llmgate[core] installs llmgate::core alone; llmgate[redis] adds
# llmgate::redis, the shared cache tier, and hiredis; llmgate[eval] adds
# llmgate::eval, the evaluation kit, and SQLite.
vcpkg_check_features(OUT_FEATURE_OPTIONS FEATURE_OPTIONS
  FEATURES
    server LLMGATE_SERVER
    redis LLMGATE_REDIS
    eval LLMGATE_EVAL
)

vcpkg_cmake_configure(
  SOURCE_PATH "${SOURCE_PATH}"
  OPTIONS
    ${FEATURE_OPTIONS}
    -DLLMGATE_BUILD_TESTS=OFF
    -DLLMGATE_BUILD_EXAMPLES=OFF
    -DLLMGATE_BUILD_BENCHMARKS=OFF
    -DLLMGATE_INSTALL=ON
)
vcpkg_cmake_install()
vcpkg_cmake_config_fixup(CONFIG_PATH share/cmake/llmgate)

# Header-only: the debug tree duplicates the release one and no library exists.
file(REMOVE_RECURSE
  "${CURRENT_PACKAGES_DIR}/debug"
  "${CURRENT_PACKAGES_DIR}/lib"
)

vcpkg_install_copyright(FILE_LIST "${SOURCE_PATH}/LICENSE")
file(INSTALL "${CMAKE_CURRENT_LIST_DIR}/usage" DESTINATION "${CURRENT_PACKAGES_DIR}/share/${PORT}")
