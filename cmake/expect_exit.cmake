# Runs COMMAND with ARGS (a ;-list) and checks the exit code is EXPECT_CODE, stderr is exactly one
# line and contains EXPECT_STDERR. Used by CLI tests: bad input → one clear line, exit code 2.
execute_process(COMMAND ${COMMAND} ${ARGS} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL EXPECT_CODE)
  message(FATAL_ERROR "exit code ${code}, expected ${EXPECT_CODE}; stderr: ${err}")
endif()
if(DEFINED EXPECT_STDERR AND NOT err MATCHES "${EXPECT_STDERR}")
  message(FATAL_ERROR "stderr does not mention '${EXPECT_STDERR}': ${err}")
endif()
string(REGEX MATCHALL "\n" newlines "${err}")
list(LENGTH newlines lines)
if(NOT lines EQUAL 1)
  message(FATAL_ERROR "stderr has ${lines} lines, expected exactly one: ${err}")
endif()
