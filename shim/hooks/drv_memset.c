/* Driver memsets: 8, 16 and 32-bit, 1D and 2D, synchronous and
 * stream-ordered, every exported variant. Bytes = elements x element size. */
#include "hook.h"

#define SET(sym, base, params, args, ...)                                                          \
    GT_DRIVER_WRAPPER(sym, base, GT_CAT_MEMSET, GT_EV_MEMSET, params, args, __VA_ARGS__)

#define MEMSET(sym, base, dptr_t, value_t, count_t, size)                                          \
    SET(sym, base, (dptr_t dst, value_t v, count_t n), (dst, v, n), gt_call_sync(&c),              \
        c.bytes = (uint64_t)n * (size))
#define MEMSET_ASYNC(sym, base, value_t, size)                                                     \
    SET(sym, base, (CUdeviceptr dst, value_t v, size_t n, CUstream s), (dst, v, n, s),             \
        gt_call_async(&c, s), c.bytes = (uint64_t)n * (size))
#define MEMSET_2D(sym, base, dptr_t, value_t, count_t, size)                                       \
    SET(sym, base, (dptr_t dst, count_t pitch, value_t v, count_t w, count_t h),                   \
        (dst, pitch, v, w, h), gt_call_sync(&c), c.bytes = (uint64_t)w * h * (size))
#define MEMSET_2D_ASYNC(sym, base, value_t, size)                                                  \
    SET(sym, base, (CUdeviceptr dst, size_t pitch, value_t v, size_t w, size_t h, CUstream s),     \
        (dst, pitch, v, w, h, s), gt_call_async(&c, s), c.bytes = (uint64_t)w * h * (size))

MEMSET(cuMemsetD8, cuMemsetD8, CUdeviceptr_v1, unsigned char, unsigned int, 1)
MEMSET(cuMemsetD8_v2, cuMemsetD8, CUdeviceptr, unsigned char, size_t, 1)
MEMSET(cuMemsetD8_v2_ptds, cuMemsetD8, CUdeviceptr, unsigned char, size_t, 1)
MEMSET(cuMemsetD16, cuMemsetD16, CUdeviceptr_v1, unsigned short, unsigned int, 2)
MEMSET(cuMemsetD16_v2, cuMemsetD16, CUdeviceptr, unsigned short, size_t, 2)
MEMSET(cuMemsetD16_v2_ptds, cuMemsetD16, CUdeviceptr, unsigned short, size_t, 2)
MEMSET(cuMemsetD32, cuMemsetD32, CUdeviceptr_v1, unsigned int, unsigned int, 4)
MEMSET(cuMemsetD32_v2, cuMemsetD32, CUdeviceptr, unsigned int, size_t, 4)
MEMSET(cuMemsetD32_v2_ptds, cuMemsetD32, CUdeviceptr, unsigned int, size_t, 4)

MEMSET_ASYNC(cuMemsetD8Async, cuMemsetD8Async, unsigned char, 1)
MEMSET_ASYNC(cuMemsetD8Async_ptsz, cuMemsetD8Async, unsigned char, 1)
MEMSET_ASYNC(cuMemsetD16Async, cuMemsetD16Async, unsigned short, 2)
MEMSET_ASYNC(cuMemsetD16Async_ptsz, cuMemsetD16Async, unsigned short, 2)
MEMSET_ASYNC(cuMemsetD32Async, cuMemsetD32Async, unsigned int, 4)
MEMSET_ASYNC(cuMemsetD32Async_ptsz, cuMemsetD32Async, unsigned int, 4)

MEMSET_2D(cuMemsetD2D8, cuMemsetD2D8, CUdeviceptr_v1, unsigned char, unsigned int, 1)
MEMSET_2D(cuMemsetD2D8_v2, cuMemsetD2D8, CUdeviceptr, unsigned char, size_t, 1)
MEMSET_2D(cuMemsetD2D8_v2_ptds, cuMemsetD2D8, CUdeviceptr, unsigned char, size_t, 1)
MEMSET_2D(cuMemsetD2D16, cuMemsetD2D16, CUdeviceptr_v1, unsigned short, unsigned int, 2)
MEMSET_2D(cuMemsetD2D16_v2, cuMemsetD2D16, CUdeviceptr, unsigned short, size_t, 2)
MEMSET_2D(cuMemsetD2D16_v2_ptds, cuMemsetD2D16, CUdeviceptr, unsigned short, size_t, 2)
MEMSET_2D(cuMemsetD2D32, cuMemsetD2D32, CUdeviceptr_v1, unsigned int, unsigned int, 4)
MEMSET_2D(cuMemsetD2D32_v2, cuMemsetD2D32, CUdeviceptr, unsigned int, size_t, 4)
MEMSET_2D(cuMemsetD2D32_v2_ptds, cuMemsetD2D32, CUdeviceptr, unsigned int, size_t, 4)

MEMSET_2D_ASYNC(cuMemsetD2D8Async, cuMemsetD2D8Async, unsigned char, 1)
MEMSET_2D_ASYNC(cuMemsetD2D8Async_ptsz, cuMemsetD2D8Async, unsigned char, 1)
MEMSET_2D_ASYNC(cuMemsetD2D16Async, cuMemsetD2D16Async, unsigned short, 2)
MEMSET_2D_ASYNC(cuMemsetD2D16Async_ptsz, cuMemsetD2D16Async, unsigned short, 2)
MEMSET_2D_ASYNC(cuMemsetD2D32Async, cuMemsetD2D32Async, unsigned int, 4)
MEMSET_2D_ASYNC(cuMemsetD2D32Async_ptsz, cuMemsetD2D32Async, unsigned int, 4)
