// Device code for the C test programs: compiled to PTX (driver API programs) and to a
// fat binary (the runtime C program). The kernels really compute on a GPU; on the
// emulator they only take their configured time, so programs never check their output.

extern "C" __global__ void vec_add(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

namespace apps
{
__global__ void scale(float *x, float factor, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= factor;
}
} // namespace apps
