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
  if(ROPECHECK_TSAN AND NOT ARG_NO_SANITIZE)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX,C>:-fsanitize=thread -fno-omit-frame-pointer>)
    target_link_options(${target} PRIVATE -fsanitize=thread)
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

# ---- Layering: a folder's library sees only the folders its README says it may use -------------
# Every project library is declared with ropecheck_library(NAME target FOLDER folder SOURCES ...
# USES lib... [PRIVATE_USES lib...] [EXTERNAL ...] [PRIVATE_EXTERNAL ...]). Two checks make the
# layering of docs/design.md part of the build:
#  1. FOLDER/README.md has a line "May use: a, b" (or "May use: nothing"); a USES/PRIVATE_USES library
#     from a folder not on that line stops the configuration with a message naming both.
#  2. Headers are not found through the source root: each folder is exposed as its own include root,
#     build/layers/FOLDER/FOLDER -> the source folder, added to the include path of the folder's
#     library and (PUBLIC) of whatever links it. So `#include "gate/report.h"` compiles only in
#     targets that link a gate library: a wrong-way include fails the build, not just a review.
function(ropecheck_layer_include_root folder out)
  set(root ${CMAKE_BINARY_DIR}/layers/${folder})
  if(NOT EXISTS ${root}/${folder})
    file(MAKE_DIRECTORY ${root})
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/${folder} ${root}/${folder} SYMBOLIC)
  endif()
  set(${out} ${root} PARENT_SCOPE)
endfunction()

# The folders FOLDER/README.md allows ("May use: a, b, c" or "May use: nothing").
function(ropecheck_allowed_folders folder out)
  file(STRINGS ${PROJECT_SOURCE_DIR}/${folder}/README.md lines REGEX "^May use: ")
  list(LENGTH lines count)
  if(NOT count EQUAL 1)
    message(FATAL_ERROR "${folder}/README.md: expected one line 'May use: FOLDER, ...' (or 'May use: nothing'), found ${count}")
  endif()
  string(REGEX REPLACE "^May use: " "" text "${lines}")
  string(REGEX REPLACE " \\(.*$" "" text "${text}")  # an explanation in parentheses may follow
  string(REGEX REPLACE "[`.]" "" text "${text}")
  string(REPLACE "," ";" allowed "${text}")
  set(result)
  foreach(item ${allowed})
    string(STRIP "${item}" item)
    if(NOT item STREQUAL "nothing")
      list(APPEND result ${item})
    endif()
  endforeach()
  set(${out} ${result} PARENT_SCOPE)
endfunction()

# Check 1 for target NAME of FOLDER linking the project libraries that follow: each from FOLDER or
# from a folder its README allows. ropecheck_library calls it; so does a target that is not a static
# library (the Python extension module, python/CMakeLists.txt).
function(ropecheck_check_uses name folder)
  ropecheck_allowed_folders(${folder} allowed)
  foreach(dep ${ARGN})
    get_property(dep_folder GLOBAL PROPERTY ROPECHECK_FOLDER_OF_${dep})
    if(NOT dep_folder)
      message(FATAL_ERROR "${name}: ${dep} is not a project library declared before it")
    endif()
    if(NOT dep_folder STREQUAL folder AND NOT dep_folder IN_LIST allowed)
      message(FATAL_ERROR "${folder}/README.md says ${folder}/ may use: ${allowed}; "
                          "${name} links ${dep} (from ${dep_folder}/). Fix the dependency or the README.")
    endif()
  endforeach()
endfunction()

function(ropecheck_library)
  cmake_parse_arguments(ARG "" "NAME;FOLDER" "SOURCES;USES;PRIVATE_USES;EXTERNAL;PRIVATE_EXTERNAL" ${ARGN})
  add_library(${ARG_NAME} STATIC ${ARG_SOURCES})
  set_property(GLOBAL PROPERTY ROPECHECK_FOLDER_OF_${ARG_NAME} ${ARG_FOLDER})
  ropecheck_check_uses(${ARG_NAME} ${ARG_FOLDER} ${ARG_USES} ${ARG_PRIVATE_USES})
  ropecheck_layer_include_root(${ARG_FOLDER} root)
  target_include_directories(${ARG_NAME} PUBLIC $<BUILD_INTERFACE:${root}>)
  target_link_libraries(${ARG_NAME} PUBLIC ${ARG_USES} ${ARG_EXTERNAL} PRIVATE ${ARG_PRIVATE_USES} ${ARG_PRIVATE_EXTERNAL})
  string(REPLACE "ropecheck_" "" alias ${ARG_NAME})
  add_library(ropecheck::${alias} ALIAS ${ARG_NAME})
  ropecheck_target_defaults(${ARG_NAME})
endfunction()

# A folder's headers alone, for the targets of another folder (peers/ggml/ggml_api.h, the ggml
# loader bench/peers_bench.cpp uses): an INTERFACE library with the folder's include root, declared
# as the folder's, so that linking it is checked against the linker's README as a library's is.
function(ropecheck_header_library)
  cmake_parse_arguments(ARG "" "NAME;FOLDER" "" ${ARGN})
  add_library(${ARG_NAME} INTERFACE)
  set_property(GLOBAL PROPERTY ROPECHECK_FOLDER_OF_${ARG_NAME} ${ARG_FOLDER})
  ropecheck_layer_include_root(${ARG_FOLDER} root)
  target_include_directories(${ARG_NAME} INTERFACE $<BUILD_INTERFACE:${root}>)
endfunction()

# ---- Layering of every target: executables, modules, fuzz targets, benches, tests ----------------
# ropecheck_library checks each library as it is declared; the top-level CMakeLists.txt calls
# ropecheck_check_all_targets() once every folder is added, and it applies check 1 to every other
# target as well. A target's folder is the folder its library was declared for, else the first
# component of its SOURCE_DIR below the project root (tests/gate/ → tests); the project libraries it
# links directly (LINK_LIBRARIES, INTERFACE_LINK_LIBRARIES for an interface target) must come from
# that folder or from one its README's `May use:` line names. An interface target that is not a
# project library (ropecheck::ropecheck, include/) stands for the project libraries it links.

# The project libraries the names of a link line stand for: a project library itself (an alias
# resolved), those an interface target of the project links, nothing for anything else (system
# libraries, imported targets, generator expressions, which are not evaluated at configure time).
function(ropecheck_project_libraries_in out)
  set(result)
  foreach(item ${ARGN})
    if(NOT TARGET ${item})
      continue()
    endif()
    get_target_property(aliased ${item} ALIASED_TARGET)
    if(aliased)
      set(item ${aliased})
    endif()
    get_property(folder GLOBAL PROPERTY ROPECHECK_FOLDER_OF_${item})
    get_target_property(type ${item} TYPE)
    get_target_property(imported ${item} IMPORTED)
    if(folder)
      list(APPEND result ${item})
    elseif(type STREQUAL "INTERFACE_LIBRARY" AND NOT imported)
      get_target_property(links ${item} INTERFACE_LINK_LIBRARIES)
      if(links)
        ropecheck_project_libraries_in(libs ${links})
        list(APPEND result ${libs})
      endif()
    endif()
  endforeach()
  set(${out} ${result} PARENT_SCOPE)
endfunction()

# Every target declared in `dir` and the folders below it.
function(ropecheck_targets_below dir out)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub ${subdirs})
    ropecheck_targets_below(${sub} below)
    list(APPEND targets ${below})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

function(ropecheck_check_all_targets)
  ropecheck_targets_below(${PROJECT_SOURCE_DIR} targets)
  foreach(target ${targets})
    get_target_property(type ${target} TYPE)
    if(NOT type MATCHES "^(EXECUTABLE|STATIC_LIBRARY|SHARED_LIBRARY|MODULE_LIBRARY|OBJECT_LIBRARY|INTERFACE_LIBRARY)$")
      continue()  # custom targets (proofs/formal/) link nothing
    endif()
    get_property(folder GLOBAL PROPERTY ROPECHECK_FOLDER_OF_${target})
    if(NOT folder)
      get_target_property(source_dir ${target} SOURCE_DIR)
      file(RELATIVE_PATH relative ${PROJECT_SOURCE_DIR} ${source_dir})
      if(relative STREQUAL "" OR relative MATCHES "^\\.\\.")
        continue()  # the top-level folder, or outside the project
      endif()
      string(REGEX REPLACE "/.*$" "" folder "${relative}")
    endif()
    if(type STREQUAL "INTERFACE_LIBRARY")
      get_target_property(links ${target} INTERFACE_LINK_LIBRARIES)
    else()
      get_target_property(links ${target} LINK_LIBRARIES)
    endif()
    set(uses)
    if(links)
      ropecheck_project_libraries_in(uses ${links})
    endif()
    if(uses)
      list(REMOVE_DUPLICATES uses)
      ropecheck_check_uses(${target} ${folder} ${uses})
    endif()
  endforeach()
endfunction()
