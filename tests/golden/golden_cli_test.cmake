# CLI checks of `ropecheck golden` (run by ctest with -P). Variables: ROPECHECK, SUITES, DATA, WORK.
function(run expected_code)
  execute_process(COMMAND ${ROPECHECK} ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT code EQUAL expected_code)
    message(FATAL_ERROR "ropecheck ${ARGN}: exit ${code}, expected ${expected_code}\nstdout: ${out}\nstderr: ${err}")
  endif()
  set(last_out "${out}" PARENT_SCOPE)
  set(last_err "${err}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK})

# list names the suites.
run(0 golden list)
if(NOT last_out MATCHES "(^|\n)multi-head\n" OR NOT last_out MATCHES "(^|\n)attention\n")
  message(FATAL_ERROR "golden list: expected suite names, got: ${last_out}")
endif()

# generate writes the same bytes as the checked-in file, and creates the folder.
run(0 golden generate --suite multi-head --out ${WORK})
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${WORK}/multi-head.json ${SUITES}/multi-head.json
                RESULT_VARIABLE differ)
if(differ)
  message(FATAL_ERROR "golden generate: ${WORK}/multi-head.json differs from the checked-in suite")
endif()

# Without --force an existing file is kept: exit 2, one line on stderr naming the file.
run(2 golden generate --suite multi-head --out ${WORK})
string(REGEX MATCHALL "\n" lines "${last_err}")
list(LENGTH lines line_count)
if(NOT line_count EQUAL 1 OR NOT last_err MATCHES "multi-head.json" OR NOT last_err MATCHES "--force")
  message(FATAL_ERROR "golden generate without --force: expected one line naming the file and --force, got: ${last_err}")
endif()
run(0 golden generate --suite multi-head --out ${WORK} --force)
file(GLOB leftovers ${WORK}/.*.tmp*)
if(leftovers)
  message(FATAL_ERROR "golden generate left temporary files: ${leftovers}")
endif()

# Unknown suite and missing selection are usage errors.
run(2 golden generate --suite no-such-suite --out ${WORK})
run(2 golden generate --out ${WORK})

# verify and lint pass on a good file, lint fails (exit 1) on a bad one naming the field,
# verify refuses a malformed file (exit 2, one line).
run(0 golden verify ${WORK}/multi-head.json)
run(0 golden lint ${SUITES})
run(1 golden lint ${DATA}/bad-expected-number.json)
if(NOT last_out MATCHES "groups\\[0\\]\\.tests\\[0\\]\\.expected\\[1\\]: expected a hex-float string, got 12")
  message(FATAL_ERROR "golden lint: expected the field path of the bad value, got: ${last_out}")
endif()
run(2 golden verify ${DATA}/bad-expected-number.json)
