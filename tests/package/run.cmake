# Installs the build tree into WORK_DIR/prefix, checks that the installed headers are exactly the
# public ones (include/ropecheck/*.h), then configures, builds and runs the consumer against the
# prefix alone. Arguments: BUILD_DIR, SOURCE_DIR (this folder), PUBLIC_INCLUDE_DIR (the repository's
# include/), PLUGIN_SOURCE (the C plugin template), WORK_DIR.
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "install failed")
endif()

file(GLOB_RECURSE installed RELATIVE ${WORK_DIR}/prefix/include ${WORK_DIR}/prefix/include/*)
file(GLOB public RELATIVE ${PUBLIC_INCLUDE_DIR} ${PUBLIC_INCLUDE_DIR}/ropecheck/*.h)
list(SORT installed)
list(SORT public)
if(NOT installed STREQUAL public)
  message(FATAL_ERROR "installed headers: ${installed}\nexpected the public headers only: ${public}")
endif()

execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/consumer -DCMAKE_BUILD_TYPE=Release
                        -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DPLUGIN_SOURCE=${PLUGIN_SOURCE} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "find_package(ropecheck) consumer failed to configure")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/consumer -j 2 RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "consumer failed to build")
endif()
execute_process(COMMAND ${WORK_DIR}/consumer/consumer RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
message(STATUS "${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "consumer failed")
endif()

# The installed command judges the installed suites by default (gate/commands/run_command.cpp
# default_golden_dir), not the source tree it was built from.
if(EXISTS ${WORK_DIR}/prefix/bin/ropecheck)
  execute_process(COMMAND ${WORK_DIR}/prefix/bin/ropecheck run --impl scalar --json ${WORK_DIR}/installed-run.json
                  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "installed ropecheck run --impl scalar: exit ${rc}: ${err}")
  endif()
  file(READ ${WORK_DIR}/installed-run.json report)
  string(JSON first GET "${report}" golden 0)
  string(FIND "${first}" "${WORK_DIR}/prefix/share/ropecheck/golden/" at)
  if(NOT at EQUAL 0)
    message(FATAL_ERROR "installed ropecheck run judged ${first}: expected a suite under ${WORK_DIR}/prefix/share/ropecheck/golden/")
  endif()
endif()
