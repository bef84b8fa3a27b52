cmake_policy(SET CMP0057 NEW)  # IN_LIST
# Every project kernel that runs on this machine must pass every checked-in golden suite within its
# bound (issue #5, "Consumers"): `ropecheck run --impl NAME --golden golden/suites`. Kernels that do
# not run here (no AVX-512, no GPU) are skipped with a message; the scalar kernel always runs.
set(ran "")
foreach(impl scalar avx2 avx512 cuda)
  execute_process(COMMAND ${ROPECHECK} run --impl ${impl} --golden ${GOLDEN_DIR}
                  RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(code EQUAL 2 AND err MATCHES "not available on this machine")
    message(STATUS "${impl}: skipped (does not run on this machine)")
    continue()
  endif()
  string(REGEX MATCH "verdict: [^\n]*" verdict "${out}")
  message(STATUS "${impl}: ${verdict}")
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "${impl} failed the golden suites (exit ${code}):\n${out}\n${err}")
  endif()
  list(APPEND ran ${impl})
endforeach()
if(NOT "scalar" IN_LIST ran)
  message(FATAL_ERROR "the scalar kernel did not run")
endif()
