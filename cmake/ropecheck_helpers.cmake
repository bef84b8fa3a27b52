# Warnings and sanitizers applied to every project target. NO_SANITIZE: warnings only, for test
# plugins that stand in for third-party libraries (a sanitizer inside them would report their
# deliberate faults itself instead of letting them crash the way an outside plugin does).
function(ropecheck_target_defaults target)
  cmake_parse_arguments(ARG "NO_SANITIZE" "" "" ${ARGN})
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX,C>:-Wall -Wextra>
    $<$<AND:$<COMPILE_LANGUAGE:CXX,C>,$<BOOL:${ROPECHECK_WERROR}>>:-Werror>
    # GCC 12 reports -Wrestrict falsely inside <string> for operator+ on std::string at -O2
    # (GCC PR 105329, fixed in GCC 13); the warning stays on for every other compiler.
    $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:GNU>,$<VERSION_LESS:$<CXX_COMPILER_VERSION>,13>>:-Wno-restrict>)
  if(ROPECHECK_SANITIZE AND NOT ARG_NO_SANITIZE)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX,C>:-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined>)
    target_link_options(${target} PRIVATE -fsanitize=address,undefined)
  endif()
endfunction()

# One helper registers every GoogleTest executable: tests/<area>/<name>.cpp -> bin/<name>.
# Usage: ropecheck_add_test(NAME name SOURCES a.cpp b.cpp LIBS lib1 lib2 [LABELS l])
function(ropecheck_add_test)
  cmake_parse_arguments(ARG "" "NAME;TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${ARG_NAME} ${ARG_SOURCES})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main)
  ropecheck_target_defaults(${ARG_NAME})
  add_test(NAME ${ARG_NAME} COMMAND ${ARG_NAME})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 600)
  endif()
  set_tests_properties(${ARG_NAME} PROPERTIES TIMEOUT ${ARG_TIMEOUT})
  if(ARG_LABELS)
    set_tests_properties(${ARG_NAME} PROPERTIES LABELS "${ARG_LABELS}")
  endif()
endfunction()
