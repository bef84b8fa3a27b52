cmake_policy(SET CMP0057 NEW)  # IN_LIST
# Every project kernel that runs on this machine must pass every checked-in golden suite within its
# bound, under the exact model and the f32-angle model (judge/README.md "Models"):
# `ropecheck run --impl NAME --model M --golden golden/suites`. Kernels that do not run here (no
# AVX-512, no GPU) are skipped with a message; the scalar kernel always runs.
set(ran "")
foreach(impl scalar avx2 avx512 avx512bf16 cuda)
  foreach(model exact f32-angle)
    execute_process(COMMAND ${ROPECHECK} run --impl ${impl} --model ${model} --golden ${GOLDEN_DIR}
                    RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(code EQUAL 2 AND err MATCHES "not available on this machine")
      message(STATUS "${impl}: skipped (does not run on this machine)")
      break()
    endif()
    string(REGEX MATCH "verdict: [^\n]*" verdict "${out}")
    message(STATUS "${impl} (${model}): ${verdict}")
    if(NOT code EQUAL 0)
      message(FATAL_ERROR "${impl} failed the golden suites under ${model} (exit ${code}):\n${out}\n${err}")
    endif()
    list(APPEND ran ${impl})
  endforeach()
endforeach()
if(NOT "scalar" IN_LIST ran)
  message(FATAL_ERROR "the scalar kernel did not run")
endif()
