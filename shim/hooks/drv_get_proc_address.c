/* cuGetProcAddress and cuGetProcAddress_v2 (DESIGN §3).
 *
 * The caller names a base name; the driver picks the variant from the
 * version and flags, and variants differ in ABI (cuMemcpyHtoD at 2000
 * takes a 32-bit address, at 3020 it is cuMemcpyHtoD_v2). So the real
 * function answers first, with the caller's arguments, and the shim finds
 * which of the base's exported variants the answer IS (pointer equality
 * with libcuda.so.1's export of that name) and hands back that variant's
 * wrapper. An answer that is none of them passes through. Status and
 * return code are the driver's. Answers are cached per pointer: the static
 * runtime asks for ~440 entry points, Python bindings ask again and again. */
#include "hook.h"
#include "ptrmap.h"

#include <errno.h>

/* Pointer -> gt_hook *, or NOT_OURS for a pointer that is none of the
 * wrapped variants of the base asked for. */
GT_PTRMAP_DEFINE(answers, 11);
#define NOT_OURS 1u

/* The wrapped variant `fn` is, among the variants of `base`. *cacheable is
 * cleared when the answer may depend on the request: `base` names no
 * wrapped function (a request by some other name might), or two variants
 * are one function (the request's flags pick). */
static gt_hook *identify(const char *base, void *fn, cuuint64_t flags, int *cacheable)
{
    size_t n;
    gt_hook *const *v = gt_hook_variants(base, &n);
    gt_hook *match = NULL;
    int want_per_thread = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
    *cacheable = n > 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i]->lib != GT_LIB_DRIVER || gt_hook_global(v[i]) != fn) continue;
        if (match) {
            *cacheable = 0;
            if (gt_hook_is_per_thread(match) == want_per_thread) continue;
        }
        match = v[i];
    }
    return match;
}

static void *answer(const char *symbol, void *fn, int version, cuuint64_t flags, const char *via)
{
    uint64_t key = (uint64_t)(uintptr_t)fn;
    uint64_t cached = gt_ptrmap_get(&answers, key);
    gt_hook *h = cached > NOT_OURS ? (gt_hook *)(uintptr_t)cached : NULL;
    if (!cached) {
        int cacheable;
        h = identify(symbol, fn, flags, &cacheable);
        if (cacheable) gt_ptrmap_put(&answers, key, h ? (uint64_t)(uintptr_t)h : NOT_OURS);
    }
    if (gt_log_debug_enabled())
        gt_debug("%s(%s, %d, %llu) -> %s", via, symbol, version, (unsigned long long)flags,
                 h ? h->name : "passed through");
    return h ? h->wrapper : fn;
}

static void after_lookup(CUresult r, const char *symbol, void **pfn, int version, cuuint64_t flags,
                         const char *via)
{
    int saved = errno;
    if (r == CUDA_SUCCESS && pfn && *pfn && symbol)
        *pfn = answer(symbol, *pfn, version, flags, via);
    else if (gt_log_debug_enabled())
        gt_debug("%s(%s, %d, %llu) -> nothing (CUresult %d)", via, symbol ? symbol : "NULL",
                 version, (unsigned long long)flags, (int)r);
    errno = saved;
}

GT_DRIVER_HOOK(cuGetProcAddress, cuGetProcAddress, GT_CAT_API)
GT_EXPORT CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
                                            cuuint64_t flags)
{
    GT_ENTER_ANY(cuGetProcAddress, CUDA_ERROR_NOT_FOUND, (symbol, pfn, cudaVersion, flags));
    CUresult r = real_(symbol, pfn, cudaVersion, flags);
    after_lookup(r, symbol, pfn, cudaVersion, flags, "cuGetProcAddress");
    return r;
}

GT_DRIVER_HOOK(cuGetProcAddress_v2, cuGetProcAddress, GT_CAT_API)
GT_EXPORT CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                                               cuuint64_t flags,
                                               CUdriverProcAddressQueryResult *symbolStatus)
{
    GT_ENTER_ANY(cuGetProcAddress_v2, CUDA_ERROR_NOT_FOUND,
                 (symbol, pfn, cudaVersion, flags, symbolStatus));
    CUresult r = real_(symbol, pfn, cudaVersion, flags, symbolStatus);
    after_lookup(r, symbol, pfn, cudaVersion, flags, "cuGetProcAddress_v2");
    return r;
}
