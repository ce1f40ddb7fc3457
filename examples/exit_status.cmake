# Runs PROGRAM with ARGS (separated by ^) and fails unless it exits with
# EXPECTED and its output (stdout and stderr together) matches MATCH:
# CTest alone tells zero from non-zero, not 1 from 2.
#   cmake -DPROGRAM=... "-DARGS=--config^x.json" -DEXPECTED=1 "-DMATCH=regex" -P exit_status.cmake
string(REPLACE "^" ";" arguments "${ARGS}")
execute_process(COMMAND "${PROGRAM}" ${arguments} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT status STREQUAL EXPECTED)
  message(FATAL_ERROR "exit status ${status}, expected ${EXPECTED}; output:\n${out}")
endif()
if(DEFINED MATCH AND NOT out MATCHES "${MATCH}")
  message(FATAL_ERROR "output does not match '${MATCH}':\n${out}")
endif()
message(STATUS "exit status ${status}: ${out}")
