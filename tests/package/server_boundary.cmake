# package.server_boundary: the gateway sits on top. No header outside
# llmgate/server/ includes one inside it, save the umbrellas that gather
# everything (llmgate/server.hpp, llmgate/llmgate.hpp): the evaluation kit,
# the backends, the Redis client and the core are used without the gateway.
# A direct include is all it reads: a header that reached server/ through
# another would be that other header's offence, reported here too.
cmake_policy(SET CMP0057 NEW)  # if(IN_LIST)
set(include_dir "${LLMGATE_SOURCE_DIR}/include")
file(GLOB_RECURSE headers RELATIVE "${include_dir}" "${include_dir}/llmgate/*.hpp")
list(SORT headers)
set(umbrellas "llmgate/server.hpp" "llmgate/llmgate.hpp")
set(report "")
set(checked 0)
foreach(header IN LISTS headers)
  if(header MATCHES "^llmgate/server/" OR header IN_LIST umbrellas)
    continue()
  endif()
  math(EXPR checked "${checked} + 1")
  file(STRINGS "${include_dir}/${header}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]llmgate/server/")
  foreach(line IN LISTS includes)
    string(STRIP "${line}" line)
    string(APPEND report "\n  ${header}: ${line}")
  endforeach()
endforeach()
if(report)
  message(FATAL_ERROR "headers outside llmgate/server/ include the gateway's:${report}")
endif()
message(STATUS "${checked} headers outside llmgate/server/ include nothing of it")
