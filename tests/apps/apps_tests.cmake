# ctest: every test program on the emulator (label emu), its exit code, output and
# manifest checked by run_app.py against expected/<test>.json, which holds the work
# the program's documented workload does for the arguments given here, and the
# manifest's launch counts against the emulated driver's own (--emu-stats).
set(APP_RUN ${GPUTRACE_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/run_app.py)
set(APP_EXPECTED ${CMAKE_CURRENT_SOURCE_DIR}/expected)
# Short simulated kernels keep the tests quick; `spin` is the error program's busy kernel.
set(APP_EMU_ENV LD_LIBRARY_PATH=${GTEMU_LIB_DIR} "GPUTRACE_EMU_KERNEL_NS=spin=300000000,*=2000")

function(app_test name)
  cmake_parse_arguments(ARG "NO_CUDA_WORK" "" "CHECKS;COMMAND" ${ARGN})
  set(_checks ${ARG_CHECKS})
  if(NOT ARG_NO_CUDA_WORK)
    list(APPEND _checks --emu-stats)
  endif()
  add_test(NAME app_${name} COMMAND ${APP_RUN} ${_checks} -- ${ARG_COMMAND})
  set_tests_properties(app_${name} PROPERTIES LABELS emu ENVIRONMENT "${APP_EMU_ENV}" TIMEOUT 120)
endfunction()

foreach(_program drv_linked drv_dlopen drv_procaddr)
  app_test(${_program}
           CHECKS --program ${_program} --manifests ${APP_EXPECTED}/drv_3x2x4096.json
           COMMAND $<TARGET_FILE:${_program}> 3 2 4096)
endforeach()
app_test(rt_capi
         CHECKS --program rt_capi --manifests ${APP_EXPECTED}/rt_capi_3x2x4096.json
         COMMAND $<TARGET_FILE:rt_capi> 3 2 4096)
app_test(nvrtc_launch
         CHECKS --program nvrtc_launch --manifests ${APP_EXPECTED}/nvrtc_launch_3x1024.json
         COMMAND $<TARGET_FILE:nvrtc_launch> 3 1024)
app_test(fork_after_init
         CHECKS --manifests ${APP_EXPECTED}/fork_after_init_3x1024.json
                --output-regex "^child: cuMemAlloc after fork -> CUDA_ERROR_NOT_INITIALIZED$"
                --output-regex "^parent: child exited 0$"
         COMMAND $<TARGET_FILE:fork_after_init> 3 1024)
app_test(cu_streams
         CHECKS --program cu_streams --manifests ${APP_EXPECTED}/cu_streams_2x3x3072x2.json
         COMMAND ${APP_BIN}/cu_streams 2 3 3072 2)
app_test(capture
         CHECKS --program capture --manifests ${APP_EXPECTED}/capture_3x2x1024.json
         COMMAND ${APP_BIN}/capture 3 2 1024)
app_test(mt_launcher
         CHECKS --program mt_launcher --manifests ${APP_EXPECTED}/mt_launcher_4x500.json
         COMMAND ${APP_BIN}/mt_launcher 4 500)
app_test(errors
         CHECKS --program errors --manifests ${APP_EXPECTED}/errors.json
                --stdout-file ${APP_EXPECTED}/errors.stdout
         COMMAND ${APP_BIN}/errors 300)
# The static runtime needs the driver's private export tables: on the emulated driver
# it must fail at its first call with a runtime error, exit code 2 and no crash.
app_test(cu_streams_static NO_CUDA_WORK
         CHECKS --rc 2 --no-manifest
                --output-regex "^cu_streams_static: cudaSetDevice\\(0\\) failed: cuda[A-Za-z]+ \\([0-9]+\\)$"
         COMMAND ${APP_BIN}/cu_streams_static 2 3 3072 2)
# Bad arguments: a usage message and exit code 64, before any CUDA call.
app_test(usage NO_CUDA_WORK
         CHECKS --rc 64 --no-manifest --output-regex "argument 1 \\(iterations\\) must be a number"
         COMMAND $<TARGET_FILE:drv_linked> many)
