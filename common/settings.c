#include "settings.h"

const char *gt_verbosity_name(enum gt_verbosity v)
{
    switch (v) {
    case GT_VERB_NONE:
        return "none";
    case GT_VERB_DEFAULT:
        return "default";
    case GT_VERB_VERBOSE:
        return "verbose";
    case GT_VERB_DEBUG:
        return "debug";
    }
    return "default";
}

const char *gt_gpu_timing_name(enum gt_gpu_timing t)
{
    static const char *const names[GT_GPU_TIMING_COUNT] = {"auto", "cupti", "events", "off"};
    return (unsigned)t < GT_GPU_TIMING_COUNT ? names[t] : "auto";
}

const char *gt_gpu_source_name(enum gt_gpu_source s)
{
    static const char *const names[GT_GPU_SOURCE_COUNT] = {"off", "events", "cupti", "mixed"};
    return (unsigned)s < GT_GPU_SOURCE_COUNT ? names[s] : "off";
}

const char *gt_callsites_name(enum gt_callsites c)
{
    static const char *const names[GT_CALLSITES_COUNT] = {"auto", "python", "native", "all", "off"};
    return (unsigned)c < GT_CALLSITES_COUNT ? names[c] : "auto";
}
