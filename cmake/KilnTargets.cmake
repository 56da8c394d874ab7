# Helpers that declare kiln targets uniformly.

# kiln_forbid_llvm(<target>): records that <target> belongs to a layer that
# must run on machines without LLVM/MLIR. Configuration fails if any LLVM or
# MLIR library appears among its direct link dependencies; the layering test
# additionally inspects the built binaries with ldd.
function(kiln_forbid_llvm target)
  set_property(GLOBAL APPEND PROPERTY KILN_NO_LLVM_TARGETS ${target})
  get_target_property(libs ${target} LINK_LIBRARIES)
  if(libs)
    foreach(lib IN LISTS libs)
      if(lib MATCHES "^(LLVM|MLIR|mlir|lld)" OR lib STREQUAL "kiln_codegen")
        message(FATAL_ERROR "kiln layering: ${target} must not link ${lib}")
      endif()
    endforeach()
  endif()
endfunction()

# kiln_cc_test(NAME SRCS a.cc b.cc DEPS lib... [LABELS l...] [ARGS a...])
function(kiln_cc_test name)
  cmake_parse_arguments(T "" "" "SRCS;DEPS;LABELS;ARGS" ${ARGN})
  add_executable(${name} ${T_SRCS})
  target_link_libraries(${name} PRIVATE ${T_DEPS} GTest::gtest GTest::gtest_main)
  add_test(NAME ${name} COMMAND ${name} ${T_ARGS} WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  if(T_LABELS)
    set_tests_properties(${name} PROPERTIES LABELS "${T_LABELS}")
  endif()
endfunction()
