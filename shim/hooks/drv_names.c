/* Where kernel handles come from, and where they go: the name of each
 * handle is noted for drivers that cannot name a handle themselves, and an
 * unload makes every cached name be looked up again (intercept/kernel_names.c). Recorded in
 * `api` like any call. */
#include "hook.h"

/* After a successful real call: notes the handle's name when kernel names
 * are being collected. errno stays the real call's. */
#define NOTE_AFTER(sym, r, stmt)                                                                   \
    do {                                                                                           \
        if ((r) == CUDA_SUCCESS && (gt_hook_mode(&GT_HOOK(sym)) & GT_HOOK_WORK)) {                 \
            int saved_ = errno;                                                                    \
            GT_SHIM_WORK(stmt);                                                                    \
            errno = saved_;                                                                        \
        }                                                                                          \
    } while (0)

/* Names are noted outside capture windows too (capture.h): a kernel
 * launched in a window is usually looked up before it. */
#define NAME_SOURCE(sym, params, args, note)                                                       \
    GT_DRIVER_KEEP_WRAPPER_THEN(sym, sym, GT_CAT_KERNEL, GT_EV_API, params, args,                  \
                                NOTE_AFTER(sym, r_, note), (void)c)

NAME_SOURCE(cuModuleGetFunction, (CUfunction * f, CUmodule m, const char *name), (f, m, name),
            gt_kernel_name_note_function((uint64_t)(uintptr_t)*f, name))
NAME_SOURCE(cuLibraryGetKernel, (CUkernel * k, CUlibrary l, const char *name), (k, l, name),
            gt_kernel_name_note_kernel((uint64_t)(uintptr_t)*k, name))
NAME_SOURCE(cuKernelGetFunction, (CUfunction * f, CUkernel k), (f, k),
            gt_kernel_name_alias((uint64_t)(uintptr_t)*f, (uint64_t)(uintptr_t)k))
NAME_SOURCE(cuModuleUnload, (CUmodule m), (m), gt_kernel_names_invalidate())
NAME_SOURCE(cuLibraryUnload, (CUlibrary l), (l), gt_kernel_names_invalidate())
