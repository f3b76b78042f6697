# Unit tests of the shim core (label shim; the event pipeline also `pipeline`,
# which scripts/sanitize.sh runs under ThreadSanitizer).
gt_unit_test(shim_config SOURCES test_shim_config.c LIBS gt_shim_core LABELS shim)
gt_unit_test(shim_capture SOURCES test_shim_capture.c LIBS gt_shim_core LABELS shim)
gt_unit_test(shim_pipeline SOURCES test_shim_pipeline.c pipeline_check.c LIBS gt_shim_core
             LABELS shim pipeline TIMEOUT 300)
gt_unit_test(shim_pipeline_held SOURCES test_shim_pipeline_held.c pipeline_check.c
             LIBS gt_shim_core LABELS shim pipeline TIMEOUT 120)
gt_unit_test(shim_pipeline_end SOURCES test_shim_pipeline_end.c pipeline_check.c
             LIBS gt_shim_core LABELS shim pipeline TIMEOUT 120)
gt_unit_test(shim_log SOURCES test_shim_log.c LIBS gt_shim_core LABELS shim)
gt_unit_test(shim_clock SOURCES test_shim_clock.c LIBS gt_shim_core LABELS shim)
find_package(ZLIB REQUIRED) # to read the Perfetto trace's bundle
gt_unit_test(shim_collect SOURCES test_shim_collect.c LIBS gt_shim_core ZLIB::ZLIB LABELS shim)
# GPU timing against the emulated driver (tests/emu): the library links
# gtemu_cuda, so these run wherever the unit tests run.
gt_unit_test(shim_gpu_time SOURCES test_shim_gpu_time.c gpu_test.c
             LIBS gt_shim_gpu gtemu_cuda LABELS shim gpu TIMEOUT 120)
gt_unit_test(shim_gpu_retire SOURCES test_shim_gpu_retire.c gpu_test.c
             LIBS gt_shim_gpu gtemu_cuda LABELS shim gpu TIMEOUT 120)
gt_unit_test(shim_gpu_threads SOURCES test_shim_gpu_threads.c gpu_test.c
             LIBS gt_shim_gpu gtemu_cuda LABELS shim gpu pipeline TIMEOUT 300)
# The stream order of placed pairs alone: no driver.
gt_unit_test(shim_gpu_order SOURCES test_shim_gpu_order.c ${PROJECT_SOURCE_DIR}/shim/gpu_order.c
             LIBS gt_shim_core LABELS shim gpu)
target_include_directories(unit_shim_gpu_order SYSTEM PRIVATE ${GPUTRACE_CUDA_INCLUDE})
# Interception (label intercept): the caches' lock-free map, and how a
# program is handed the wrappers, with libgputrace.so preloaded on the
# emulated driver (not under sanitizers: their runtime must come first).
gt_unit_test(shim_ptrmap SOURCES test_shim_ptrmap.c ${PROJECT_SOURCE_DIR}/shim/ptrmap.c
             LIBS Threads::Threads LABELS shim intercept)
if(NOT GPUTRACE_SANITIZE)
  gt_unit_test(shim_resolve SOURCES test_shim_resolve.c LIBS ${CMAKE_DL_LIBS}
               LABELS shim intercept)
  target_include_directories(unit_shim_resolve SYSTEM PRIVATE ${GPUTRACE_CUDA_INCLUDE})
  target_compile_definitions(unit_shim_resolve PRIVATE
    GT_CUDART_LOOKUPS="${PROJECT_SOURCE_DIR}/tests/emu/driver/tests/cudart13-getprocaddress.txt")
  add_dependencies(unit_shim_resolve gputrace gtemu_cuda)
  set_tests_properties(unit.shim_resolve PROPERTIES ENVIRONMENT
    "LD_PRELOAD=$<TARGET_FILE:gputrace>;LD_LIBRARY_PATH=$<TARGET_FILE_DIR:gtemu_cuda>;GPUTRACE_VERBOSITY=none")
endif()
# The memory, compile and module categories' pure parts (label memory): the
# host-memory registry that classifies copies, module image kinds, handle
# tables.
foreach(_unit hostmem:hostmem_registry image:image handles:handles)
  string(REPLACE ":" ";" _unit ${_unit})
  list(GET _unit 0 _test)
  list(GET _unit 1 _source)
  gt_unit_test(shim_${_test} SOURCES test_shim_${_test}.c ${PROJECT_SOURCE_DIR}/shim/${_source}.c
               LIBS Threads::Threads LABELS shim memory)
  target_include_directories(unit_shim_${_test} PRIVATE ${PROJECT_SOURCE_DIR}/report)
endforeach()
