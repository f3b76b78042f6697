// Kernels loaded by the C runtime tests through cudaLibraryLoadData. Their simulated
// durations come from GPUTRACE_EMU_KERNEL_NS (see CMakeLists.txt).
extern "C" __global__ void rt_short(int *p)
{
    if (p != nullptr) *p += 1;
}

extern "C" __global__ void rt_long(int *p)
{
    if (p != nullptr) *p += 2;
}

// Long enough that a stream is still busy when the host asks right after the launch.
extern "C" __global__ void rt_busy(int *p)
{
    if (p != nullptr) *p += 3;
}

__device__ int rt_counter[4];
