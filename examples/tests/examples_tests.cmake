# ctest: the examples' host code (cmocka) and the built programs (check_examples.py),
# all labelled `examples`. The programs run with the emulated CUDA libraries first in
# LD_LIBRARY_PATH: they provide the libcuda.so.1 the NVRTC program is linked against,
# and the runtime the _shared programs run on.
find_library(CMOCKA_LIBRARY NAMES cmocka REQUIRED)
find_path(CMOCKA_INCLUDE_DIR NAMES cmocka.h REQUIRED)
find_program(GPUTRACE_PYTHON3 NAMES python3 REQUIRED)

function(example_unit_test name)
  add_executable(examples_${name} tests/test_ode_${name}.c)
  target_include_directories(examples_${name} PRIVATE ${CMOCKA_INCLUDE_DIR})
  target_link_libraries(examples_${name} PRIVATE ode_host ${CMOCKA_LIBRARY})
  add_test(NAME examples.${name} COMMAND examples_${name})
  set_tests_properties(examples.${name} PROPERTIES LABELS examples)
endfunction()

example_unit_test(rk4)
example_unit_test(batch)
example_unit_test(options)

set(EXAMPLES_CHECK ${GPUTRACE_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/tests/check_examples.py
    --bin ${EXAMPLES_OUT} --emu-lib ${GTEMU_LIB_DIR})
foreach(_check build cli compile emulated)
  add_test(NAME examples.${_check} COMMAND ${EXAMPLES_CHECK} ${_check})
  set_tests_properties(examples.${_check} PROPERTIES LABELS examples TIMEOUT 120)
endforeach()

# The demo's solver, small, traced and its two timelines loaded into
# Perfetto's own trace processor (tests/integration/trace/check_trace_processor.py:
# no error in its stats, the GPU slices of both traces and of the JSON report
# alike; skipped with one line where the trace processor cannot be had).
add_test(NAME examples.trace_processor
         COMMAND ${GPUTRACE_PYTHON3}
                 ${PROJECT_SOURCE_DIR}/tests/integration/trace/check_trace_processor.py
                 --lib $<TARGET_FILE:gputrace> --build-dir ${CMAKE_BINARY_DIR} plain --
                 ${EXAMPLES_OUT}/batch_ode_shared --systems 16384 --steps 20 --check 8)
set_tests_properties(examples.trace_processor PROPERTIES
                     LABELS "examples;trace;integration;perfetto" TIMEOUT 900
                     SKIP_RETURN_CODE 77 ENVIRONMENT "LD_LIBRARY_PATH=${GTEMU_LIB_DIR}")
