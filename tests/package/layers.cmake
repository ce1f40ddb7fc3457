# llmgate's two layers, read from the folder layout of include/llmgate/:
#   network side (llmgate::llmgate): the folders and files matched below;
#   core (llmgate::core): every other header.
# A header in a new folder is core until listed here, so the core purity
# test checks it from the day it appears. Used at configure time by
# tests/package/CMakeLists.txt and at test time by core_purity.cmake.

# Paths relative to include/, as in #include <...>.
set(LLMGATE_NETWORK_HEADER_PATTERNS
  # Folders whose headers speak HTTP/JSON, and their umbrella headers.
  "^llmgate/(backend|config|http|pipeline|prompt|route|server|eval|redis|tools|wire)/"
  "^llmgate/(backend|pipeline|prompt|route|server|eval)\\.hpp$"
  # The umbrella of everything, and the network side's compiled part.
  "^llmgate/(llmgate|src)\\.hpp$")

# llmgate_is_network_header(<out> <path relative to include/>)
function(llmgate_is_network_header out path)
  set(result FALSE)
  foreach(pattern IN LISTS LLMGATE_NETWORK_HEADER_PATTERNS)
    if(path MATCHES "${pattern}")
      set(result TRUE)
      break()
    endif()
  endforeach()
  set(${out} ${result} PARENT_SCOPE)
endfunction()

# llmgate_layer_headers(<include dir> <core out> <network out>): every
# header under <include dir>/llmgate, relative to <include dir>, split by layer.
function(llmgate_layer_headers include_dir core_out network_out)
  file(GLOB_RECURSE headers RELATIVE "${include_dir}" "${include_dir}/llmgate/*.hpp")
  list(SORT headers)
  set(core "")
  set(network "")
  foreach(header IN LISTS headers)
    llmgate_is_network_header(is_network "${header}")
    if(is_network)
      list(APPEND network "${header}")
    else()
      list(APPEND core "${header}")
    endif()
  endforeach()
  set(${core_out} "${core}" PARENT_SCOPE)
  set(${network_out} "${network}" PARENT_SCOPE)
endfunction()
