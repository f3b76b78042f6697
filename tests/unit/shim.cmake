# Unit tests of the shim core (label shim; the event pipeline also `pipeline`,
# which scripts/sanitize.sh runs under ThreadSanitizer).
gt_unit_test(shim_config SOURCES test_shim_config.c LIBS gt_shim_core LABELS shim)
gt_unit_test(shim_pipeline SOURCES test_shim_pipeline.c pipeline_check.c LIBS gt_shim_core
             LABELS shim pipeline TIMEOUT 300)
gt_unit_test(shim_pipeline_held SOURCES test_shim_pipeline_held.c pipeline_check.c
             LIBS gt_shim_core LABELS shim pipeline TIMEOUT 120)
gt_unit_test(shim_log SOURCES test_shim_log.c LIBS gt_shim_core LABELS shim)
gt_unit_test(shim_clock SOURCES test_shim_clock.c LIBS gt_shim_core LABELS shim)
gt_unit_test(shim_collect SOURCES test_shim_collect.c LIBS gt_shim_core LABELS shim)
# GPU timing against the emulated driver (tests/emu): the library links
# gtemu_cuda, so these run wherever the unit tests run.
gt_unit_test(shim_gpu_time SOURCES test_shim_gpu_time.c gpu_test.c
             LIBS gt_shim_gpu gtemu_cuda LABELS shim gpu TIMEOUT 120)
