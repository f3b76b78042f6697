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
/* The memory type of a CUDA_MEMCPY2D side, for the 2D entry points. */
CUresult gt_copy_2d(const CUDA_MEMCPY2D *p, CUstream stream, bool per_thread, bool async,
                    bool unaligned);

struct gt_memset_request {
    CUstream stream;
    bool per_thread;
    bool async;
    struct gt_memset set;
};

CUresult gt_memset_submit(struct gt_memset_request *req);

#endif
