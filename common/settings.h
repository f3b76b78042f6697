/* What a user chooses, in the words of the configuration (SPEC §3, §11,
 * §12): verbosity, the GPU time source, the capture mode. The shim's
 * configuration, the report and the command all speak of them. */
#ifndef GT_SETTINGS_H
#define GT_SETTINGS_H

enum gt_verbosity { GT_VERB_NONE, GT_VERB_DEFAULT, GT_VERB_VERBOSE, GT_VERB_DEBUG };
/* GPUTRACE_GPU_TIMING: what the user asked for (SPEC §12). */
enum gt_gpu_timing {
    GT_GPU_TIMING_AUTO,   /* CUPTI activity records where CUPTI can be used, else event pairs */
    GT_GPU_TIMING_CUPTI,  /* CUPTI, or event pairs with one warning saying why not */
    GT_GPU_TIMING_EVENTS, /* CUDA event pairs around each piece of GPU work */
    GT_GPU_TIMING_OFF,
    GT_GPU_TIMING_COUNT
};

/* Where a run's GPU times came from (JSON gpu_timing.source): mixed when
 * the source changed during the run (CUPTI handed over to the program). */
enum gt_gpu_source {
    GT_GPU_SOURCE_OFF,
    GT_GPU_SOURCE_EVENTS,
    GT_GPU_SOURCE_CUPTI,
    GT_GPU_SOURCE_MIXED,
    GT_GPU_SOURCE_COUNT
};
enum gt_capture_mode { GT_CAPTURE_ALL, GT_CAPTURE_PROFILER, GT_CAPTURE_NVTX };

/* GPUTRACE_CALLSITES (SPEC §12): which call sites are attributed. `auto`
 * is Python frames in a process that runs Python, native frames in any
 * other; `all` is Python frames where the calling thread runs Python and
 * native frames where it does not. */
enum gt_callsites {
    GT_CALLSITES_AUTO,
    GT_CALLSITES_PYTHON,
    GT_CALLSITES_NATIVE,
    GT_CALLSITES_ALL,
    GT_CALLSITES_OFF,
    GT_CALLSITES_COUNT
};

/* "none", "default", "verbose", "debug"; "auto", "cupti", "events",
 * "off"; "off", "events", "cupti", "mixed". */
const char *gt_verbosity_name(enum gt_verbosity v);
const char *gt_gpu_timing_name(enum gt_gpu_timing t);
const char *gt_gpu_source_name(enum gt_gpu_source s);
const char *gt_callsites_name(enum gt_callsites c); /* "auto", "python", "native", "all", "off" */

#endif
