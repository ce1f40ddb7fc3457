# FAKE vcpkg, for tests only. vcpkg is neither installed nor reachable here,
# so these stand-ins for the vcpkg helper functions that ports/llmgate/
# portfile.cmake calls let vcpkg_port.cmake run the real portfile. Each does
# what the real one does for this port, for the release configuration only;
# the real ones live in vcpkg's scripts/cmake and ports/vcpkg-cmake*.

function(vcpkg_from_github)
  message(FATAL_ERROR "fake vcpkg cannot download: set ENV{LLMGATE_SOURCE_DIR}")
endfunction()

# Stops on arguments the real function would not accept either.
function(fake_vcpkg_no_unparsed function)
  if(ARGN)
    message(FATAL_ERROR "${function}: unexpected arguments ${ARGN}")
  endif()
endfunction()

function(vcpkg_cmake_configure)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "SOURCE_PATH" "OPTIONS;OPTIONS_RELEASE")
  fake_vcpkg_no_unparsed(vcpkg_cmake_configure ${arg_UNPARSED_ARGUMENTS})
  run("${CMAKE_COMMAND}" -S "${arg_SOURCE_PATH}" -B "${CURRENT_BUILDTREES_DIR}/${TARGET_TRIPLET}-rel"
    ${configure_args} -DCMAKE_BUILD_TYPE=Release "-DCMAKE_INSTALL_PREFIX=${CURRENT_PACKAGES_DIR}"
    ${arg_OPTIONS} ${arg_OPTIONS_RELEASE})
endfunction()

function(vcpkg_cmake_install)
  fake_vcpkg_no_unparsed(vcpkg_cmake_install ${ARGN})
  run("${CMAKE_COMMAND}" --install "${CURRENT_BUILDTREES_DIR}/${TARGET_TRIPLET}-rel")
endfunction()

# Moves the CMake config files from CONFIG_PATH to share/<package>, where
# vcpkg keeps them, and makes them compute the install prefix from there.
function(vcpkg_cmake_config_fixup)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "PACKAGE_NAME;CONFIG_PATH" "")
  fake_vcpkg_no_unparsed(vcpkg_cmake_config_fixup ${arg_UNPARSED_ARGUMENTS})
  if(NOT arg_PACKAGE_NAME)
    set(arg_PACKAGE_NAME "${PORT}")
  endif()
  set(from "${CURRENT_PACKAGES_DIR}/${arg_CONFIG_PATH}")
  set(to "${CURRENT_PACKAGES_DIR}/share/${arg_PACKAGE_NAME}")
  if(NOT IS_DIRECTORY "${from}")
    message(FATAL_ERROR "vcpkg_cmake_config_fixup: '${from}' does not exist")
  endif()
  file(GLOB configs RELATIVE "${from}" "${from}/*.cmake")
  file(MAKE_DIRECTORY "${to}")
  foreach(config IN LISTS configs)
    file(READ "${from}/${config}" text)
    # Two levels up from share/<package>, where export() counted from CONFIG_PATH.
    string(REGEX REPLACE
      [[get_filename_component\(_IMPORT_PREFIX "\${CMAKE_CURRENT_LIST_FILE}" PATH\)(
get_filename_component\(_IMPORT_PREFIX "\${_IMPORT_PREFIX}" PATH\))*]]
      [[get_filename_component(_IMPORT_PREFIX "${CMAKE_CURRENT_LIST_FILE}" PATH)
get_filename_component(_IMPORT_PREFIX "${_IMPORT_PREFIX}" PATH)
get_filename_component(_IMPORT_PREFIX "${_IMPORT_PREFIX}" PATH)]]
      text "${text}")
    # The same for configure_package_config_file()'s PACKAGE_PREFIX_DIR.
    string(REGEX REPLACE [[\${CMAKE_CURRENT_LIST_DIR}/(\.\./)+]] [[${CMAKE_CURRENT_LIST_DIR}/../../]]
      text "${text}")
    file(WRITE "${to}/${config}" "${text}")
  endforeach()
  file(REMOVE_RECURSE "${from}")
  # Like the real one, leave no empty share/cmake behind.
  get_filename_component(parent "${from}" DIRECTORY)
  file(GLOB siblings "${parent}/*")
  if(NOT siblings)
    file(REMOVE_RECURSE "${parent}")
  endif()
endfunction()

function(vcpkg_install_copyright)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "" "FILE_LIST")
  fake_vcpkg_no_unparsed(vcpkg_install_copyright ${arg_UNPARSED_ARGUMENTS})
  set(text "")
  foreach(file IN LISTS arg_FILE_LIST)
    file(READ "${file}" content)
    string(APPEND text "${content}")
  endforeach()
  file(WRITE "${CURRENT_PACKAGES_DIR}/share/${PORT}/copyright" "${text}")
endfunction()
