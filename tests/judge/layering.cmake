# The layering is part of the build (cmake/ropecheck_helpers.cmake ropecheck_library): compiled with
# the include path of TARGET, layering/RIGHT includes a header of a folder TARGET may use and is
# found; layering/WRONG includes MISSING, of a folder it may not use, and is not. Used for fuzz/'s
# library (judge/ yes, gate/ no) and for a test (tests/CMakeLists.txt: tests include through include
# roots, not the source root; gate/ yes, peers/ no). Syntax only: nothing is written.
separate_arguments(flags UNIX_COMMAND "${INCLUDES}")
execute_process(COMMAND ${COMPILER} -std=c++20 -fsyntax-only ${flags} ${SOURCE_DIR}/layering/${RIGHT}
                RESULT_VARIABLE right_code ERROR_VARIABLE right_err)
if(NOT right_code EQUAL 0)
  message(FATAL_ERROR "a header ${TARGET} may use does not compile with its include path:\n${right_err}")
endif()
execute_process(COMMAND ${COMPILER} -std=c++20 -fsyntax-only ${flags} ${SOURCE_DIR}/layering/${WRONG}
                RESULT_VARIABLE wrong_code ERROR_VARIABLE wrong_err)
if(wrong_code EQUAL 0)
  message(FATAL_ERROR "${MISSING} compiles with ${TARGET}'s include path: the layering is not enforced")
endif()
if(NOT wrong_err MATCHES "${MISSING}: No such file")
  message(FATAL_ERROR "the wrong-way include failed for another reason than a missing header:\n${wrong_err}")
endif()
message(STATUS "${RIGHT} compiles, ${MISSING} not found, with ${TARGET}'s include path")
