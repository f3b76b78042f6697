// A second translation unit, linked with kernels.cu by cuLinkAddData.
extern "C" __global__ void extra_kernel(float *p)
{
    p[threadIdx.x] = 0.0f;
}
