# Finds hiredis as hiredis::hiredis: its own CMake package where it has one
# (vcpkg, Conan, hiredis 1.x), else pkg-config's hiredis.pc (Debian's
# libhiredis-dev 0.14 ships no CMake package). Used by llmgate's build and
# by the installed package's config.
if(NOT TARGET hiredis::hiredis)
  find_package(hiredis CONFIG QUIET)
endif()
if(NOT TARGET hiredis::hiredis)
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(LLMGATE_HIREDIS QUIET IMPORTED_TARGET GLOBAL hiredis)
  endif()
  if(TARGET PkgConfig::LLMGATE_HIREDIS)
    add_library(hiredis::hiredis ALIAS PkgConfig::LLMGATE_HIREDIS)
  endif()
endif()
if(NOT TARGET hiredis::hiredis AND NOT LLMGATE_HIREDIS_OPTIONAL)
  message(FATAL_ERROR "llmgate's Redis tier needs hiredis (Debian: libhiredis-dev; vcpkg/Conan: hiredis), "
                      "or configure with -DLLMGATE_REDIS=OFF")
endif()
