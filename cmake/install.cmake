# Installs the libraries, their headers and an exported CMake package, so that
#   find_package(ropecheck) → ropecheck::spec, ::formats, ::reference, ::kernels, ::golden, ::tensorio, ::judge
# (fmt's pattern: namespaced exported targets, a test that consumes the installed package).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(ropecheck_install_targets)
foreach(target ropecheck_spec ropecheck_formats ropecheck_reference ropecheck_kernels ropecheck_golden ropecheck_tensorio ropecheck_judge)
  if(TARGET ${target})
    list(APPEND ropecheck_install_targets ${target})
    string(REPLACE "ropecheck_" "" export_name ${target})
    set_target_properties(${target} PROPERTIES EXPORT_NAME ${export_name})
    # Internal headers install under include/ropecheck/<folder>/ and are included as "<folder>/x.h".
    target_include_directories(${target} PUBLIC $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/ropecheck>)
  endif()
endforeach()

install(TARGETS ${ropecheck_install_targets} EXPORT ropecheckTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/ropecheck DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
foreach(folder spec reference golden tensorio judge)
  install(DIRECTORY ${folder}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ropecheck/${folder}
          FILES_MATCHING PATTERN "*.h" PATTERN "suites" EXCLUDE PATTERN "schema" EXCLUDE)
endforeach()
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
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ropecheck)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/ropecheckConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/ropecheckConfig.cmake ${CMAKE_BINARY_DIR}/ropecheckConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ropecheck)

# The find-package test: install into a scratch prefix and build a consumer against it (not in
# sanitizer builds: the plain consumer cannot link sanitizer-instrumented static libraries).
if(NOT ROPECHECK_SANITIZE AND NOT ROPECHECK_TSAN)
add_test(NAME package_find_package
  COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${CMAKE_BINARY_DIR} -DSOURCE_DIR=${PROJECT_SOURCE_DIR}/tests/package
          -DWORK_DIR=${CMAKE_BINARY_DIR}/package-test -P ${PROJECT_SOURCE_DIR}/tests/package/run.cmake)
set_tests_properties(package_find_package PROPERTIES TIMEOUT 600)
endif()
