/* The program's own CUPTI use (DESIGN §5). CUPTI has one subscriber per
 * process, and activity buffers are registered once per process: a
 * program that starts a session of its own (torch.profiler, a tool of its
 * own) would find the shim's in its way, and torch.profiler records no
 * GPU event when a subscriber existed at its start. So the entry points a
 * CUPTI client starts with are wrapped: at the program's first call of
 * one, the shim hands CUPTI over (its records flushed, its kinds
 * disabled, its subscriber gone; event pairs time the rest of the run),
 * then the call goes on exactly as it would without the shim.
 *
 * Calls made by libcupti itself (through its own exports) and by the
 * shim's threads are not the program's: they pass straight through. The
 * real function is the next definition, or the one the program's dlsym
 * found (as for the compiler libraries, intercept.h). */
#include <cupti.h>
#include <cupti_profiler_target.h>

#include "gpu_source.h"
#include "hook.h"

static inline void program_starts_cupti(const char *who, const void *caller)
{
    if (gt_tls.guard || gt_gpu_src() != GT_SRC_CUPTI || gt_dlsym_caller_private(caller)) return;
    int saved = errno;
    gt_tls.guard = 1;
    gt_gpu_source_hand_over(who);
    gt_tls.guard = 0;
    errno = saved;
}

#define GT_CUPTI_CLIENT_WRAPPER(sym, params, args)                                                 \
    GT_COMPILER_HOOK(sym, sym, GT_CAT_API)                                                         \
    GT_EXPORT CUptiResult CUPTIAPI sym params                                                      \
    {                                                                                              \
        const void *caller = __builtin_return_address(0);                                          \
        __typeof__(&sym) real_ = (__typeof__(&sym))gt_hook_real(&gt_hook_##sym, caller);           \
        program_starts_cupti(#sym, caller);                                                        \
        return real_ ? real_ args : CUPTI_ERROR_NOT_INITIALIZED;                                   \
    }

GT_CUPTI_CLIENT_WRAPPER(cuptiSubscribe,
                        (CUpti_SubscriberHandle * subscriber, CUpti_CallbackFunc callback,
                         void *userdata),
                        (subscriber, callback, userdata))
GT_CUPTI_CLIENT_WRAPPER(cuptiActivityRegisterCallbacks,
                        (CUpti_BuffersCallbackRequestFunc requested,
                         CUpti_BuffersCallbackCompleteFunc completed),
                        (requested, completed))
GT_CUPTI_CLIENT_WRAPPER(cuptiActivityEnable, (CUpti_ActivityKind kind), (kind))
GT_CUPTI_CLIENT_WRAPPER(cuptiActivityEnableContext, (CUcontext context, CUpti_ActivityKind kind),
                        (context, kind))
GT_CUPTI_CLIENT_WRAPPER(cuptiActivityEnableAndDump, (CUpti_ActivityKind kind), (kind))
GT_CUPTI_CLIENT_WRAPPER(cuptiProfilerInitialize, (CUpti_Profiler_Initialize_Params * params),
                        (params))
