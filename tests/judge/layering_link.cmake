# The layering covers executables too (cmake/ropecheck_helpers.cmake ropecheck_check_all_targets):
# the fixture project layering/link_project/, whose executable in app/ links the library of lib/,
# is configured twice in this test's own folder WORK: with app/README.md saying "May use: nothing"
# the configuration must fail naming the README, the executable and the library; with "May use:
# lib" it must succeed (so the failure comes from the README's line, not from the fixture).
file(REMOVE_RECURSE ${WORK})
file(COPY ${SOURCE_DIR}/layering/link_project/ DESTINATION ${WORK}/source)

function(configure_fixture may_use result_var output_var)
  file(WRITE ${WORK}/source/app/README.md "# app/ — an executable of the layering fixture\n\nMay use: ${may_use}\n")
  file(REMOVE_RECURSE ${WORK}/build)
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${WORK}/source -B ${WORK}/build -DCMAKE_CXX_COMPILER=${COMPILER}
                          -DROPECHECK_HELPERS=${HELPERS}
                  RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(${result_var} ${code} PARENT_SCOPE)
  set(${output_var} "${out}${err}" PARENT_SCOPE)
endfunction()

configure_fixture("nothing" forbidden_code forbidden_output)
if(forbidden_code EQUAL 0)
  message(FATAL_ERROR "an executable of app/ linking lib/'s library configured although app/README.md allows nothing:\n${forbidden_output}")
endif()
string(REGEX REPLACE "[ \n]+" " " flat "${forbidden_output}")
if(NOT flat MATCHES "app/README.md says app/ may use: ; fixture_app links fixture_lib \\(from lib/\\)\\. Fix the dependency or the README\\.")
  message(FATAL_ERROR "the configuration failed without the layering message:\n${forbidden_output}")
endif()

configure_fixture("lib" allowed_code allowed_output)
if(NOT allowed_code EQUAL 0)
  message(FATAL_ERROR "the fixture failed to configure with app/README.md allowing lib:\n${allowed_output}")
endif()
file(REMOVE_RECURSE ${WORK})
message(STATUS "fixture_app linking fixture_lib: refused with 'May use: nothing', configured with 'May use: lib'")
