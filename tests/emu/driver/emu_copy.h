/* Copies and memsets (copy.c, memset.c): classification of the memory on
 * each side, simulated durations and synchronisation behaviour. */
#ifndef GTEMU_EMU_COPY_H
#define GTEMU_EMU_COPY_H

#include "emu_stream.h"

/* What a copy endpoint must be. */
enum gt_side { GT_SIDE_HOST, GT_SIDE_DEVICE, GT_SIDE_ANY };

struct gt_copy_request {
    CUstream stream;
    bool per_thread; /* _ptds/_ptsz entry point */
    bool async;      /* *Async entry point */
    enum gt_side dst_side, src_side;
    struct gt_copy copy;
    /* Peer copies name contexts; NULL for the others. */
    struct gt_context *dst_ctx, *src_ctx;
};

CUresult gt_copy(struct gt_copy_request *req);

/* One side of a 2D/3D copy as the CUDA_MEMCPY* structures describe it. */
struct gt_copy_side {
    CUmemorytype type;
    const void *host;
    CUdeviceptr device;
    size_t x, y, z;       /* offset: bytes, rows, slices */
    size_t pitch, height; /* bytes per row, rows per slice */
};

CUresult gt_copy_sides(const struct gt_copy_side *dst, const struct gt_copy_side *src, size_t width,
                       size_t height, size_t depth, CUstream stream, bool per_thread, bool async);
CUresult gt_copy_2d(const CUDA_MEMCPY2D *p, CUstream stream, bool per_thread, bool async);

struct gt_memset_request {
    CUstream stream;
    bool per_thread;
    bool async;
    struct gt_memset set;
};

CUresult gt_memset_submit(struct gt_memset_request *req);

#endif
