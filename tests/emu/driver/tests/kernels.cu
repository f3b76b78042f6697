// Device code for the module-loading tests: nvcc turns it into PTX, a cubin
// and fatbins (with each compression mode) at build time.
__device__ int counter = 5;
__constant__ float coef[4] = {1.0f, 2.0f, 3.0f, 4.0f};
__managed__ int managed_total = 9;

__device__ __noinline__ float helper(float x)
{
    return x * 2.0f;
}

__global__ void busy(float *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] *= coef[i % 4];
}

__global__ void uses_helper(float *p)
{
    p[0] = helper(p[1]);
}

extern "C" __global__ void plain_kernel(int *x)
{
    *x = counter + managed_total;
}

namespace ns {
template <typename T> __global__ void tmpl(T *a)
{
    a[0] = T();
}
} // namespace ns

template __global__ void ns::tmpl<double>(double *);
