# Installs the public API and an exported CMake package (cmake/README.md has what a consumer gets):
#   include/ropecheck/*.h                  the public headers only (include/README.md)
#   lib/libropecheck_*.a                   the libraries behind them
#   share/ropecheck/golden/*.json          the golden suites (ROPECHECK_GOLDEN_DIR after find_package)
#   lib/cmake/ropecheck/                   find_package(ropecheck) → ropecheck::ropecheck, ::abi, ::kernels
#   bin/ropecheck                          the command
# The folders' own headers ("judge/group.h", ...) are internal and not installed.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# ropecheck::ropecheck (the C++ API) and ropecheck::abi (the C ABI header alone) are the interface;
# ropecheck::kernels implements the C ABI. The other libraries are exported only because those link
# them (static libraries): they carry no headers.
set(ropecheck_install_targets)
foreach(target ropecheck_api ropecheck_abi ropecheck_kernels
               ropecheck_runner ropecheck_fused ropecheck_judge ropecheck_spec ropecheck_base ropecheck_formats ropecheck_reference ropecheck_golden ropecheck_tensorio)
  if(TARGET ${target})
    list(APPEND ropecheck_install_targets ${target})
  endif()
endforeach()
set_target_properties(ropecheck_api PROPERTIES EXPORT_NAME ropecheck)
foreach(target ${ropecheck_install_targets})
  if(NOT target STREQUAL "ropecheck_api")
    string(REPLACE "ropecheck_" "" export_name ${target})
    set_target_properties(${target} PROPERTIES EXPORT_NAME ${export_name})
  endif()
endforeach()

install(TARGETS ${ropecheck_install_targets} EXPORT ropecheckTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY include/ropecheck DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")
set(ROPECHECK_INSTALL_GOLDEN_DIR ${CMAKE_INSTALL_DATADIR}/ropecheck/golden)
install(DIRECTORY golden/suites/ DESTINATION ${ROPECHECK_INSTALL_GOLDEN_DIR} FILES_MATCHING PATTERN "*.json")
if(TARGET ropecheck)
  install(TARGETS ropecheck RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(EXPORT ropecheckTargets NAMESPACE ropecheck:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ropecheck)

# The kernels link the CUDA runtime when optimized/ built the CUDA kernel: consumers then need it too.
set(ROPECHECK_CONFIG_CUDA OFF)
if(TARGET ropecheck_kernels)
  get_target_property(kernel_links ropecheck_kernels LINK_LIBRARIES)
  if("${kernel_links}" MATCHES "CUDA::")
    set(ROPECHECK_CONFIG_CUDA ON)
  endif()
endif()
configure_package_config_file(cmake/ropecheckConfig.cmake.in ${CMAKE_BINARY_DIR}/ropecheckConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ropecheck
  PATH_VARS ROPECHECK_INSTALL_GOLDEN_DIR)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/ropecheckConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/ropecheckConfig.cmake ${CMAKE_BINARY_DIR}/ropecheckConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ropecheck)

# The find-package test (tests/package/): install into a scratch prefix, then build and run a
# consumer that sees only what was installed (not in sanitizer builds: the plain consumer cannot
# link sanitizer-instrumented static libraries).
if(ROPECHECK_BUILD_TESTS AND NOT ROPECHECK_SANITIZE AND NOT ROPECHECK_TSAN)
  add_test(NAME package_find_package
    COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${CMAKE_BINARY_DIR} -DSOURCE_DIR=${PROJECT_SOURCE_DIR}/tests/package
            -DPUBLIC_INCLUDE_DIR=${PROJECT_SOURCE_DIR}/include -DPLUGIN_SOURCE=${PROJECT_SOURCE_DIR}/examples/plugin/rope_plugin.c
            -DWORK_DIR=${CMAKE_BINARY_DIR}/package-test -P ${PROJECT_SOURCE_DIR}/tests/package/run.cmake)
  set_tests_properties(package_find_package PROPERTIES TIMEOUT 600)
endif()
