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
    return t == GT_GPU_TIMING_OFF ? "off" : "events";
}
