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

# FEATURES <feature> <variable>...: -D<variable>=ON for each feature in the
# port's FEATURES (those being installed), OFF for the others; each must be
# a feature the port's vcpkg.json declares (ALL_FEATURES).
function(vcpkg_check_features)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "OUT_FEATURE_OPTIONS;PREFIX" "FEATURES")
  fake_vcpkg_no_unparsed(vcpkg_check_features ${arg_UNPARSED_ARGUMENTS})
  if(NOT arg_OUT_FEATURE_OPTIONS)
    message(FATAL_ERROR "vcpkg_check_features: OUT_FEATURE_OPTIONS is required")
  endif()
  list(LENGTH arg_FEATURES length)
  math(EXPR odd "${length} % 2")
  if(length EQUAL 0 OR odd)
    message(FATAL_ERROR "vcpkg_check_features: FEATURES takes <feature> <variable> pairs")
  endif()
  set(options "")
  math(EXPR last "${length} - 1")
  foreach(i RANGE 0 ${last} 2)
    math(EXPR j "${i} + 1")
    list(GET arg_FEATURES ${i} feature)
    list(GET arg_FEATURES ${j} variable)
    if(NOT feature IN_LIST ALL_FEATURES)
      message(FATAL_ERROR "vcpkg_check_features: '${feature}' is not a feature of ${PORT}")
    endif()
    if(feature IN_LIST FEATURES)
      set(value ON)
    else()
      set(value OFF)
    endif()
    list(APPEND options "-D${variable}=${value}")
    if(arg_PREFIX)
      set(${arg_PREFIX}_${variable} ${value} PARENT_SCOPE)
    endif()
  endforeach()
  set(${arg_OUT_FEATURE_OPTIONS} "${options}" PARENT_SCOPE)
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
