# package.versions: every place that states llmgate's version agrees with
# project(VERSION) in CMakeLists.txt.
file(READ "${LLMGATE_SOURCE_DIR}/CMakeLists.txt" text)
string(REGEX MATCH "project\\(llmgate[^)]*VERSION ([0-9.]+)" _ "${text}")
set(expected "${CMAKE_MATCH_1}")

foreach(manifest IN ITEMS vcpkg.json ports/llmgate/vcpkg.json)
  file(READ "${LLMGATE_SOURCE_DIR}/${manifest}" text)
  string(JSON "version_${manifest}" ERROR_VARIABLE error GET "${text}" version)
endforeach()

file(READ "${LLMGATE_SOURCE_DIR}/conanfile.py" text)
string(REGEX MATCH "\n +version = \"([^\"]*)\"" _ "${text}")
set("version_conanfile.py" "${CMAKE_MATCH_1}")

file(READ "${LLMGATE_SOURCE_DIR}/include/llmgate/version.hpp" text)
set(parts "")
foreach(part IN ITEMS MAJOR MINOR PATCH)
  string(REGEX MATCH "#define LLMGATE_VERSION_${part} ([0-9]+)" _ "${text}")
  list(APPEND parts "${CMAKE_MATCH_1}")
endforeach()
list(JOIN parts "." "version_include/llmgate/version.hpp")

set(mismatches "")
foreach(file IN ITEMS vcpkg.json ports/llmgate/vcpkg.json conanfile.py include/llmgate/version.hpp)
  if(NOT "${version_${file}}" STREQUAL expected)
    string(APPEND mismatches "\n  ${file}: '${version_${file}}'")
  endif()
endforeach()
if(expected STREQUAL "" OR mismatches)
  message(FATAL_ERROR "CMakeLists.txt says version '${expected}', but:${mismatches}")
endif()
