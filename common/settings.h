/* What a user chooses, in the words of the configuration (SPEC §3, §11,
 * §12): verbosity, the GPU time source, the capture mode. The shim's
 * configuration, the report and the command all speak of them. */
#ifndef GT_SETTINGS_H
#define GT_SETTINGS_H

enum gt_verbosity { GT_VERB_NONE, GT_VERB_DEFAULT, GT_VERB_VERBOSE, GT_VERB_DEBUG };
enum gt_gpu_timing { GT_GPU_TIMING_EVENTS, GT_GPU_TIMING_OFF };
enum gt_capture_mode { GT_CAPTURE_ALL, GT_CAPTURE_PROFILER, GT_CAPTURE_NVTX };

/* "none", "default", "verbose", "debug"; "events", "off". */
const char *gt_verbosity_name(enum gt_verbosity v);
const char *gt_gpu_timing_name(enum gt_gpu_timing t);

#endif
