# package.core_purity: no core header reaches the network side. Every core
# header (layers.cmake says which, from the folder layout; detail/ ones
# included) is preprocessed alone with llmgate::core's flags (CORE_FLAGS,
# written by tests/package/CMakeLists.txt) and GCC's or Clang's -H, which
# lists every header it opens, nested. The test fails if one of them is a
# Boost.JSON, Asio, Beast or OpenSSL header or a network-side llmgate
# header, and prints the chain of includes that led there.
include("${CMAKE_CURRENT_LIST_DIR}/common.cmake")
include("${CMAKE_CURRENT_LIST_DIR}/layers.cmake")
include("${CORE_FLAGS}")

set(include_dir "${LLMGATE_SOURCE_DIR}/include")
# What core headers may not include, besides network-side llmgate headers.
set(forbidden_external "/(boost/json|boost/asio|boost/beast|openssl)/|/boost/(json|asio|beast)\\.hpp$")

file(REAL_PATH "${include_dir}" include_dir_real)
set(flags ${CXX_STANDARD_FLAG} ${CORE_COMPILE_OPTIONS})
foreach(definition IN LISTS CORE_COMPILE_DEFINITIONS)
  list(APPEND flags "-D${definition}")
endforeach()
foreach(dir IN LISTS CORE_INCLUDE_DIRECTORIES)
  file(REAL_PATH "${dir}" dir_real)
  set(implicit FALSE)
  foreach(implicit_dir IN LISTS IMPLICIT_INCLUDE_DIRECTORIES)
    file(REAL_PATH "${implicit_dir}" implicit_real)
    if(dir_real STREQUAL implicit_real)
      set(implicit TRUE)
    endif()
  endforeach()
  if(implicit)
    continue()
  elseif(dir_real STREQUAL include_dir_real)
    list(APPEND flags "-I${include_dir}")
  else()
    list(APPEND flags "-isystem" "${dir}")
  endif()
endforeach()

# The name of <path> as an #include of llmgate would spell it, or "" when
# <path> is not under the checkout's include/ (the compiler prints each path
# as the -I folder it was found in, "/", the name).
string(LENGTH "${include_dir}/" prefix_length)
function(llmgate_relative out path)
  string(SUBSTRING "${path}" 0 ${prefix_length} prefix)
  if(prefix STREQUAL "${include_dir}/")
    string(SUBSTRING "${path}" ${prefix_length} -1 relative)
    set(${out} "${relative}" PARENT_SCOPE)
  else()
    set(${out} "" PARENT_SCOPE)
  endif()
endfunction()

llmgate_layer_headers("${include_dir}" core_headers network_headers)
list(LENGTH core_headers core_count)
if(core_count EQUAL 0)
  message(FATAL_ERROR "no core headers found under ${include_dir}/llmgate")
endif()

set(report "")
set(offenders 0)
foreach(header IN LISTS core_headers)
  string(MAKE_C_IDENTIFIER "${header}" name)
  set(source "${WORK_DIR}/${name}.cpp")
  file(WRITE "${source}" "#include <${header}>\n")
  execute_process(
    COMMAND "${CXX_COMPILER}" ${flags} -H -E -o "${WORK_DIR}/${name}.ii" "${source}"
    RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "preprocessing ${header} against llmgate::core failed:\n${output}")
  endif()
  # -H prints one line per header opened: as many dots as its depth, a space, its path.
  string(REPLACE ";" "\\;" output "${output}")
  string(REPLACE "\n" ";" lines "${output}")
  set(chain "")  # chain[i]: the header open at depth i + 1
  set(found "")  # the chain to the first forbidden header
  set(found_depth 0)
  foreach(line IN LISTS lines)
    if(NOT line MATCHES "^(\\.+) (.+)$")
      continue()
    endif()
    string(LENGTH "${CMAKE_MATCH_1}" depth)
    set(path "${CMAKE_MATCH_2}")
    if(found AND depth LESS_EQUAL found_depth)
      break()  # past the forbidden llmgate header's own includes
    endif()
    math(EXPR keep "${depth} - 1")
    if(keep GREATER 0)
      list(SUBLIST chain 0 ${keep} chain)
    else()
      set(chain "")
    endif()
    llmgate_relative(relative "${path}")
    if(relative)
      list(APPEND chain "${relative}")
      if(NOT found)
        llmgate_is_network_header(network "${relative}")
        if(network)
          # Keep reading its includes for the external header that makes it
          # network-side, to show that too.
          set(found "${chain}")
          set(found_depth ${depth})
        endif()
      endif()
    else()
      list(APPEND chain "${path}")
      if(path MATCHES "${forbidden_external}")
        set(found "${chain}")
        break()
      endif()
    endif()
  endforeach()
  if(found)
    math(EXPR offenders "${offenders} + 1")
    list(JOIN found "\n      -> " found)
    string(APPEND report "\n  ${found}")
  endif()
endforeach()

if(offenders GREATER 0)
  message(FATAL_ERROR "${offenders} of ${core_count} core headers reach the network side "
                      "(Boost.JSON/Asio/Beast, OpenSSL or a network-side llmgate header):${report}")
endif()
message(STATUS "${core_count} core headers include nothing from the network side")
