# The layering is part of the build (cmake/ropecheck_helpers.cmake ropecheck_library): compiled with
# the include path of fuzz/'s library, a header of judge/ (which fuzz/ may use) is found and one of
# gate/ (which it may not) is not. Syntax only: nothing is written.
separate_arguments(flags UNIX_COMMAND "${INCLUDES}")
execute_process(COMMAND ${COMPILER} -std=c++20 -fsyntax-only ${flags} ${SOURCE_DIR}/layering/right_way.cpp
                RESULT_VARIABLE right_code ERROR_VARIABLE right_err)
if(NOT right_code EQUAL 0)
  message(FATAL_ERROR "a header fuzz/ may use does not compile with fuzz/'s include path:\n${right_err}")
endif()
execute_process(COMMAND ${COMPILER} -std=c++20 -fsyntax-only ${flags} ${SOURCE_DIR}/layering/wrong_way.cpp
                RESULT_VARIABLE wrong_code ERROR_VARIABLE wrong_err)
if(wrong_code EQUAL 0)
  message(FATAL_ERROR "a header of gate/ compiles with fuzz/'s include path: the layering is not enforced")
endif()
if(NOT wrong_err MATCHES "gate/report.h: No such file")
  message(FATAL_ERROR "the wrong-way include failed for another reason than a missing header:\n${wrong_err}")
endif()
message(STATUS "judge/pair_rule.h found, gate/report.h not found, with fuzz/'s include path")
