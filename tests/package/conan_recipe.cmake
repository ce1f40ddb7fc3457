# package.conan_recipe: runs the real conanfile.py through the fake
# `conan create` of fake_conan/, then builds users' projects against the
# package through the config it generated, with C++20 as Conan's toolchain
# would set from compiler.cppstd. Four times: with the default options
# (core and llmgate, no redis or eval), with redis=True (llmgate::redis
# too, on hiredis::hiredis), with eval=True (llmgate::eval too, on
# SQLite::SQLite3) and with server=False (llmgate::core alone, consumed
# where Boost.JSON and OpenSSL cannot be found); redis=True or eval=True
# with server=False must be refused. PYTHON: the interpreter CMake found.
include("${CMAKE_CURRENT_LIST_DIR}/common.cmake")

run("${PYTHON}" "${TESTS_DIR}/fake_conan/conan_create.py" "${LLMGATE_SOURCE_DIR}" "${WORK_DIR}/default")
foreach(consumer IN ITEMS consumer consumer_core)
  build_consumer(NAME default_${consumer} SOURCE "${TESTS_DIR}/${consumer}"
    LLMGATE_DIR "${WORK_DIR}/default/generators"
    OPTIONS "-DCMAKE_PREFIX_PATH=${WORK_DIR}/default/generators" -DCMAKE_CXX_STANDARD=20)
endforeach()
file(READ "${WORK_DIR}/default/generators/llmgate-config.cmake" config)
if(config MATCHES "llmgate::redis|hiredis|llmgate::eval|SQLite")
  message(FATAL_ERROR "with the default options the generated config names the Redis tier or the evaluation kit:\n${config}")
endif()

# -o "llmgate/*:redis=True": a third component, llmgate::redis, on
# llmgate::llmgate and hiredis's own target.
run("${PYTHON}" "${TESTS_DIR}/fake_conan/conan_create.py" "${LLMGATE_SOURCE_DIR}" "${WORK_DIR}/redis"
  redis=True)
file(READ "${WORK_DIR}/redis/generators/llmgate-config.cmake" config)
if(NOT config MATCHES "set_property\\(TARGET llmgate::redis APPEND PROPERTY\n  INTERFACE_LINK_LIBRARIES \"llmgate::llmgate;hiredis::hiredis\"\\)")
  message(FATAL_ERROR "with redis=True the generated config has no llmgate::redis linking llmgate::llmgate "
                      "and hiredis::hiredis:\n${config}")
endif()
build_consumer(NAME redis_consumer_redis SOURCE "${TESTS_DIR}/consumer_redis"
  LLMGATE_DIR "${WORK_DIR}/redis/generators"
  OPTIONS "-DCMAKE_PREFIX_PATH=${WORK_DIR}/redis/generators" -DCMAKE_CXX_STANDARD=20)

# -o "llmgate/*:eval=True": llmgate::eval, on llmgate::llmgate and sqlite3's target.
run("${PYTHON}" "${TESTS_DIR}/fake_conan/conan_create.py" "${LLMGATE_SOURCE_DIR}" "${WORK_DIR}/eval"
  eval=True)
file(READ "${WORK_DIR}/eval/generators/llmgate-config.cmake" config)
if(NOT config MATCHES "set_property\\(TARGET llmgate::eval APPEND PROPERTY\n  INTERFACE_LINK_LIBRARIES \"llmgate::llmgate;SQLite::SQLite3\"\\)")
  message(FATAL_ERROR "with eval=True the generated config has no llmgate::eval linking llmgate::llmgate "
                      "and SQLite::SQLite3:\n${config}")
endif()
build_consumer(NAME eval_consumer_eval SOURCE "${TESTS_DIR}/consumer_eval"
  LLMGATE_DIR "${WORK_DIR}/eval/generators"
  OPTIONS "-DCMAKE_PREFIX_PATH=${WORK_DIR}/eval/generators" -DCMAKE_CXX_STANDARD=20)

# redis=True and eval=True need server=True: the recipe's validate() refuses the rest.
foreach(option IN ITEMS redis eval)
  execute_process(
    COMMAND "${PYTHON}" "${TESTS_DIR}/fake_conan/conan_create.py" "${LLMGATE_SOURCE_DIR}"
            "${WORK_DIR}/${option}_without_server" ${option}=True server=False
    RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  if(result EQUAL 0 OR NOT output MATCHES "llmgate/[^:]*: Invalid: llmgate's ${option} option needs server=True")
    message(FATAL_ERROR "${option}=True with server=False was not refused by validate() (${result}):\n${output}")
  endif()
endforeach()

run("${PYTHON}" "${TESTS_DIR}/fake_conan/conan_create.py" "${LLMGATE_SOURCE_DIR}" "${WORK_DIR}/core_only"
  server=False)
build_consumer(NAME core_only_consumer_core SOURCE "${TESTS_DIR}/consumer_core"
  LLMGATE_DIR "${WORK_DIR}/core_only/generators"
  OPTIONS "-DCMAKE_PREFIX_PATH=${WORK_DIR}/core_only/generators" -DCMAKE_CXX_STANDARD=20
          -DLLMGATE_NO_NETWORK_DEPS=ON)
file(READ "${WORK_DIR}/core_only/generators/llmgate-config.cmake" config)
if(config MATCHES "llmgate::llmgate|OpenSSL|Boost::json")
  message(FATAL_ERROR "with server=False the generated config still names the network side:\n${config}")
endif()
