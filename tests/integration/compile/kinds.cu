// Device code loaded through every module API by module_kinds.c, built by
// nvcc as PTX, a cubin and fat binaries of several kinds.
extern "C" __global__ void kinds_scale(float *x, float factor, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= factor;
}

extern "C" __global__ void kinds_fill(float *x, float value, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = value;
}
