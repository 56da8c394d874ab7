# bef-run's end-to-end test: hand-built .bef files (bef_run_test_artifacts,
# with host kernels from the bef_run_test_kernels shared object) run through
# bef-run by bef_run_test.sh. Included from tests/CMakeLists.txt.
add_library(bef_run_test_kernels MODULE ${CMAKE_CURRENT_LIST_DIR}/bef_run_test_kernels.cc)
add_executable(bef_run_test_artifacts ${CMAKE_CURRENT_LIST_DIR}/bef_run_test_artifacts.cc)
target_link_libraries(bef_run_test_artifacts PRIVATE kiln_serialization)
add_test(NAME bef_run_test
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/bef_run_test.sh $<TARGET_FILE:bef-run>
                 $<TARGET_FILE:bef_run_test_artifacts> $<TARGET_FILE:bef_run_test_kernels>)
set_tests_properties(bef_run_test PROPERTIES LABELS tools)

# The report formatting of tools/common, on hand-made profiles.
kiln_cc_test(tool_reports_test SRCS ${CMAKE_CURRENT_LIST_DIR}/tool_reports_test.cc
             DEPS kiln_tool_reports LABELS tools)
