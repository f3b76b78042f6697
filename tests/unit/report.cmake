# Unit tests of the pure report code (report/).
find_package(Threads REQUIRED)

foreach(_t stats strtab aggregate gpu_busy memory nvtx output json display_name capture snapshot)
  gt_unit_test(report_${_t} SOURCES test_report_${_t}.c LIBS gt_report Threads::Threads
               LABELS report)
endforeach()

# The JSON report parsed back by python3's json module, hostile names included.
add_test(NAME unit.report_json_parse
         COMMAND ${GPUTRACE_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/report_json_check.py
                 $<TARGET_FILE:unit_report_json>)
set_tests_properties(unit.report_json_parse PROPERTIES LABELS "unit;report")

# The writers: the summary against golden files (tests/golden), CSV parsed
# back by python3's csv module, the Chrome trace checked for structure,
# the advice rules.
gt_unit_test(report_text SOURCES test_report_text.c LIBS gt_report LABELS report)
target_compile_definitions(unit_report_text PRIVATE GOLDEN_DIR="${PROJECT_SOURCE_DIR}/tests/golden")
gt_unit_test(report_advice SOURCES test_report_advice.c LIBS gt_report LABELS report)
gt_unit_test(report_csv SOURCES test_report_csv.c LIBS gt_report LABELS report)
add_test(NAME unit.report_csv_parse
         COMMAND ${GPUTRACE_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/report_csv_check.py
                 $<TARGET_FILE:unit_report_csv>)
set_tests_properties(unit.report_csv_parse PROPERTIES LABELS "unit;report")
gt_unit_test(report_chrome SOURCES test_report_chrome.c LIBS gt_report LABELS report)
gt_unit_test(report_fd_guard SOURCES test_report_fd_guard.c LIBS gt_report LABELS report)
add_test(NAME unit.report_chrome_parse
         COMMAND ${GPUTRACE_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/report_chrome_check.py
                 $<TARGET_FILE:unit_report_chrome> ${CMAKE_CURRENT_BINARY_DIR})
set_tests_properties(unit.report_chrome_parse PROPERTIES LABELS "unit;report")

# The Perfetto trace: its compressor's streams inflated by zlib; the
# wire-format encoder byte for byte and the writer through a small reader
# of its own (zlib inflating its bundles); then (report_pftrace_check.py)
# the emitted trace decoded with Perfetto's own definitions.
find_package(ZLIB REQUIRED)
gt_unit_test(report_deflate SOURCES test_report_deflate.c LIBS gt_report ZLIB::ZLIB LABELS report)
gt_unit_test(report_pftrace SOURCES test_report_pftrace.c LIBS gt_report ZLIB::ZLIB LABELS report)
add_test(NAME unit.report_pftrace_parse
         COMMAND ${GPUTRACE_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/report_pftrace_check.py
                 $<TARGET_FILE:unit_report_pftrace> ${CMAKE_CURRENT_BINARY_DIR} ${CMAKE_BINARY_DIR})
set_tests_properties(unit.report_pftrace_parse PROPERTIES LABELS "unit;report;perfetto"
                     SKIP_RETURN_CODE 77 TIMEOUT 900)

# Reports read back (report/load.c): round trips through every writer,
# and what the reader refuses.
gt_unit_test(report_load SOURCES test_report_load.c LIBS gt_report_tools LABELS "report;tools")
# Merges (report/merge.c): against one report of all the records, the
# spread across inputs, the round trip, merging a merge.
gt_unit_test(report_merge SOURCES test_report_merge.c LIBS gt_report_tools LABELS "report;tools")
# Comparisons (report/diff.c): reports whose differences are known.
gt_unit_test(report_diff SOURCES test_report_diff.c LIBS gt_report_tools LABELS "report;tools")
