/* Occupancy queries, from the emulated SM: 2048 threads, 32 blocks,
 * 65536 registers (a function uses 32 per thread) and 228 KiB of shared
 * memory, 1 KiB of it reserved per block. */
#include "emu_module.h"

#define SM_THREADS 2048
#define SM_BLOCKS 32
#define SM_REGISTERS 65536
#define SM_SHARED (228 * 1024)
#define BLOCK_RESERVED_SHARED 1024
#define WARP 32

static int blocks_per_sm(const struct gt_function *f, int block_size, size_t dynamic_smem)
{
    int threads = (block_size + WARP - 1) / WARP * WARP;
    int blocks = SM_THREADS / threads;
    int by_regs = SM_REGISTERS / (threads * f->attrs[CU_FUNC_ATTRIBUTE_NUM_REGS]);
    size_t per_block = dynamic_smem + (size_t)f->attrs[CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES] +
                       BLOCK_RESERVED_SHARED;
    int by_smem = (int)(SM_SHARED / per_block);
    if (by_regs < blocks) blocks = by_regs;
    if (by_smem < blocks) blocks = by_smem;
    return blocks < SM_BLOCKS ? blocks : SM_BLOCKS;
}

static CUresult active_blocks(int *numBlocks, CUfunction func, int blockSize, size_t smem)
{
    struct gt_function *f;
    CUresult r = gt_function_check(func, &f);
    if (r != CUDA_SUCCESS) return r;
    if (!numBlocks || blockSize <= 0 ||
        blockSize > f->attrs[CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK] ||
        smem > (size_t)f->attrs[CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES])
        return CUDA_ERROR_INVALID_VALUE;
    *numBlocks = blocks_per_sm(f, blockSize, smem);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, CUfunction func,
                                                             int blockSize, size_t dynamicSMemSize)
{
    return active_blocks(numBlocks, func, blockSize, dynamicSMemSize);
}

CUresult CUDAAPI cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    int *numBlocks, CUfunction func, int blockSize, size_t dynamicSMemSize, unsigned int flags)
{
    (void)flags; /* caching override: no effect on this SM */
    return active_blocks(numBlocks, func, blockSize, dynamicSMemSize);
}

/* The block size with the most resident threads per SM (largest on ties). */
static CUresult potential_block_size(int *minGridSize, int *blockSize, CUfunction func,
                                     CUoccupancyB2DSize smem_of, size_t smem, int limit)
{
    struct gt_function *f;
    CUresult r = gt_function_check(func, &f);
    if (r != CUDA_SUCCESS) return r;
    if (!minGridSize || !blockSize) return CUDA_ERROR_INVALID_VALUE;
    int max = f->attrs[CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK];
    if (limit > 0 && limit < max) max = limit;
    int best = 0, best_blocks = 0, best_threads = 0;
    for (int size = WARP; size <= max; size += WARP) {
        size_t dyn = smem_of ? smem_of(size) : smem;
        if (dyn > (size_t)f->attrs[CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES]) continue;
        int blocks = blocks_per_sm(f, size, dyn);
        if (blocks * size >= best_threads && blocks > 0) {
            best = size;
            best_blocks = blocks;
            best_threads = blocks * size;
        }
    }
    if (!best) return CUDA_ERROR_INVALID_VALUE;
    int sms = 0;
    cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                         f->module->ctx->dev->ordinal);
    *blockSize = best;
    *minGridSize = best_blocks * sms;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuOccupancyMaxPotentialBlockSize(int *minGridSize, int *blockSize, CUfunction func,
                                                  CUoccupancyB2DSize blockSizeToDynamicSMemSize,
                                                  size_t dynamicSMemSize, int blockSizeLimit)
{
    return potential_block_size(minGridSize, blockSize, func, blockSizeToDynamicSMemSize,
                                dynamicSMemSize, blockSizeLimit);
}

CUresult CUDAAPI cuOccupancyMaxPotentialBlockSizeWithFlags(
    int *minGridSize, int *blockSize, CUfunction func,
    CUoccupancyB2DSize blockSizeToDynamicSMemSize, size_t dynamicSMemSize, int blockSizeLimit,
    unsigned int flags)
{
    (void)flags;
    return potential_block_size(minGridSize, blockSize, func, blockSizeToDynamicSMemSize,
                                dynamicSMemSize, blockSizeLimit);
}

CUresult CUDAAPI cuOccupancyAvailableDynamicSMemPerBlock(size_t *dynamicSmemSize, CUfunction func,
                                                         int numBlocks, int blockSize)
{
    struct gt_function *f;
    CUresult r = gt_function_check(func, &f);
    if (r != CUDA_SUCCESS) return r;
    if (!dynamicSmemSize || numBlocks <= 0 || blockSize <= 0 ||
        blocks_per_sm(f, blockSize, 0) < numBlocks)
        return CUDA_ERROR_INVALID_VALUE;
    size_t per_block = SM_SHARED / (size_t)numBlocks - BLOCK_RESERVED_SHARED -
                       (size_t)f->attrs[CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES];
    size_t cap = (size_t)f->attrs[CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES];
    *dynamicSmemSize = per_block < cap ? per_block : cap;
    return CUDA_SUCCESS;
}
