/* Finding the real CUDA entry points (DESIGN §3): never the shim's own
 * wrappers, never a path that can land back in the shim. */
#ifndef GT_SHIM_RESOLVE_H
#define GT_SHIM_RESOLVE_H

/* The real driver's export of exactly this name ("cuEventRecord",
 * "cuEventRecord_ptsz", "cuMemcpyHtoD_v2_ptds" ...), from libcuda.so.1 as
 * the program loaded it (loading it if the program has not yet). NULL when
 * there is no driver or no such export. Thread-safe; callers cache the
 * result. */
void *gt_cuda_real(const char *symbol);

#endif
