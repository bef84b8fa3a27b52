# The helpers of the `ropecheck fused` CLI tests (fused_cli.cmake, backward_cli.cmake,
# fused_golden_cli.cmake), run with -DCOMMAND=the ropecheck binary and -DWORK=the test's own folder,
# which is emptied first.
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

# Runs `ropecheck ARGN`, requires exit code `expect_code`; leaves its stdout in `out`, stderr in `err`.
function(run expect_code)
  execute_process(COMMAND ${COMMAND} ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT code EQUAL expect_code)
    message(FATAL_ERROR "exit code ${code}, expected ${expect_code}: ${ARGN}\n${out}${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
  set(err "${err}" PARENT_SCOPE)
endfunction()

# Bad input: exit 2 and one line on stderr matching `what`.
function(refused what)
  execute_process(COMMAND ${COMMAND} ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(REGEX MATCHALL "\n" newlines "${err}")
  list(LENGTH newlines lines)
  if(NOT code EQUAL 2 OR NOT lines EQUAL 1 OR NOT err MATCHES "${what}")
    message(FATAL_ERROR "expected exit 2 and one line naming '${what}', got ${code}: ${err}")
  endif()
endfunction()
