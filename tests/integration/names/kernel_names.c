/* The names Python GPU libraries give their kernels, as they reach the
 * driver, compiled with the real NVRTC the way each library does it:
 *
 *   cupy-raw        CuPy RawKernel: extern "C" source, NVRTC to a cubin for
 *                   the device, cuModuleLoadData, cuModuleGetFunction by name
 *   cupy-elementwise  CuPy ElementwiseKernel: generated extern "C" source with
 *                   CArray/CIndexer parameters, the same path
 *   cupy-template   CuPy RawModule with name_expressions: C++ templates in a
 *                   namespace, nvrtcAddNameExpression, the function looked up
 *                   by its lowered (mangled) name
 *   cuda-core       cuda.core: the same templates as a library,
 *                   cuLibraryLoadData and cuLibraryGetKernel by lowered name
 *   torch           a PyTorch-style elementwise kernel: a template in
 *                   at::native with functor and array template arguments
 *   triton          Triton: an extern "C" entry named after the fused op, its
 *                   PTX loaded as Triton loads its compiled cubin's source
 *   numba           Numba: PTX whose entry is Numba's mangled name (escapes
 *                   for <locals>, ABI tags, Array parameters)
 *
 * Each kernel is launched `launches` times (argument, default 3). For each
 * it prints "kernel <library> <the name the driver was asked for>" on
 * stdout, for check_names.py. */
#include <cuda.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_util.h"
#include "test_support.h"

static long launches;

static void check_rtc(nvrtcResult r, const char *what)
{
    if (r != NVRTC_SUCCESS) app_fail(what, nvrtcGetErrorString(r), (int)r);
}

static void launch(CUfunction f, const char *library, const char *name)
{
    /* Every kernel here takes no more than three pointer-sized arguments;
     * the emulator runs no kernel code, so their values do not matter. */
    CUdeviceptr p = 0;
    void *args[] = {&p, &p, &p};
    for (long i = 0; i < launches; i++)
        app_check(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL), name);
    printf("kernel %s %s\n", library, name);
}

/* NVRTC output for sm_90 (a cubin) of src, with the lowered names of
 * `nexpr` name expressions into lowered[] (strings that live until the
 * next call). */
static char *compile(const char *src, const char *file, const char *const *expr, int nexpr,
                     const char **lowered)
{
    static nvrtcProgram prog;
    if (prog) check_rtc(nvrtcDestroyProgram(&prog), "nvrtcDestroyProgram");
    check_rtc(nvrtcCreateProgram(&prog, src, file, 0, NULL, NULL), "nvrtcCreateProgram");
    for (int i = 0; i < nexpr; i++)
        check_rtc(nvrtcAddNameExpression(prog, expr[i]), "nvrtcAddNameExpression");
    const char *options[] = {"--gpu-architecture=sm_90", "-std=c++17"};
    check_rtc(nvrtcCompileProgram(prog, 2, options), "nvrtcCompileProgram");
    for (int i = 0; i < nexpr; i++)
        check_rtc(nvrtcGetLoweredName(prog, expr[i], &lowered[i]), "nvrtcGetLoweredName");
    size_t size;
    check_rtc(nvrtcGetCUBINSize(prog, &size), "nvrtcGetCUBINSize");
    char *cubin = malloc(size);
    if (!cubin) app_wrong("out of memory");
    check_rtc(nvrtcGetCUBIN(prog, cubin), "nvrtcGetCUBIN");
    return cubin;
}

static void module_kernels(const void *image, const char *library, const char *const *names,
                           int n)
{
    CUmodule module;
    app_check(cuModuleLoadData(&module, image), "cuModuleLoadData");
    for (int i = 0; i < n; i++) {
        CUfunction f;
        app_check(cuModuleGetFunction(&f, module, names[i]), "cuModuleGetFunction");
        launch(f, library, names[i]);
    }
}

/* An extern "C" kernel: looked up by the name in its source. */
static void extern_c(const char *src, const char *file, const char *library, const char *name)
{
    const char *lowered[1];
    char *cubin = compile(src, file, NULL, 0, lowered);
    module_kernels(cubin, library, &name, 1);
    free(cubin);
}

static const char raw_src[] = "extern \"C\" __global__ void raw_add(const float *x, const float *y,"
                              " float *z)\n"
                              "{ int i = threadIdx.x; z[i] = x[i] + y[i]; }\n";

/* The shape of what CuPy generates for an ElementwiseKernel named
 * "squared_diff": its own array and indexer types as parameters. */
static const char elementwise_src[] =
    "template <typename T, int ndim> struct CArray { T *data; long size; };\n"
    "template <int ndim> struct CIndexer { long size; };\n"
    "extern \"C\" __global__ void squared_diff(const CArray<float, 1> _raw_x,\n"
    "    CArray<float, 1> _raw_z, CIndexer<1> _ind)\n"
    "{ long i = threadIdx.x; if (i < _ind.size) { float d = _raw_x.data[i];\n"
    "  _raw_z.data[i] = d * d; } }\n";

static const char template_src[] =
    "namespace mylib {\n"
    "template <typename T> __global__ void scale(T *x, T a, int n)\n"
    "{ int i = threadIdx.x; if (i < n) x[i] *= a; }\n"
    "}\n";

static const char torch_src[] =
    "namespace at { namespace detail {\n"
    "template <typename T, int N> struct Array { T data[N]; };\n"
    "} namespace native {\n"
    "template <typename T> struct CUDAFunctor_add {\n"
    "  T alpha;\n"
    "  __device__ T operator()(T a, T b) const { return a + alpha * b; }\n"
    "};\n"
    "template <int vec_size, typename func_t, typename array_t>\n"
    "__global__ void vectorized_elementwise_kernel(int N, func_t f, array_t data)\n"
    "{ if ((int)threadIdx.x < N) {\n"
    "    float *out = (float *)data.data[0];\n"
    "    out[threadIdx.x] = f(((float *)data.data[1])[threadIdx.x],\n"
    "                         ((float *)data.data[2])[threadIdx.x]); } }\n"
    "} }\n";

static const char triton_src[] =
    "extern \"C\" __global__ void triton_poi_fused_add_0(float *in0, float *in1, float *out)\n"
    "{ int i = threadIdx.x; out[i] = in0[i] + in1[i]; }\n";

/* PTX as Numba's NVVM output names its kernel (numba-cuda's mangler: the
 * qualified name with '.' as '::', "<locals>" escaped, a uid and a flags
 * ABI tag, Array parameters). */
#define NUMBA_ARRAY "5ArrayIdLi2E1C7mutable7alignedE"
#define NUMBA_NAME                                                                                 \
    "_ZN6cudapy5cubie12batchsolving17BatchSolverKernel12build_kernel12_3clocals_3e18integration_" \
    "kernelB2v1B48cw51cXTLSUwv1sDUaKthqqNgqKmkgKSB0z3ldGBVAA_3d_3dE" NUMBA_ARRAY NUMBA_ARRAY "iix"
static const char numba_ptx[] = ".version 8.0\n"
                                ".target sm_90\n"
                                ".address_size 64\n"
                                "\n"
                                ".visible .entry " NUMBA_NAME "(\n"
                                "    .param .u64 p0,\n"
                                "    .param .u64 p1,\n"
                                "    .param .u64 p2\n"
                                ")\n"
                                "{\n"
                                "    ret;\n"
                                "}\n";

int main(int argc, char **argv)
{
    app_program = "kernel_names";
    launches = app_arg(argc, argv, 1, "launches", 3, 1);
    context_on_device0();
    const char *lowered[2];

    extern_c(raw_src, "raw_add.cu", "cupy-raw", "raw_add");
    extern_c(elementwise_src, "squared_diff.cu", "cupy-elementwise", "squared_diff");

    const char *templates[] = {"mylib::scale<float>", "&mylib::scale<double>"};
    char *cubin = compile(template_src, "scale.cu", templates, 2, lowered);
    module_kernels(cubin, "cupy-template", lowered, 2);
    CUlibrary library;
    CUkernel kernel;
    app_check(cuLibraryLoadData(&library, cubin, NULL, NULL, 0, NULL, NULL, 0), "cuLibraryLoadData");
    app_check(cuLibraryGetKernel(&kernel, library, lowered[1]), "cuLibraryGetKernel");
    launch((CUfunction)kernel, "cuda-core", lowered[1]);
    free(cubin);

    const char *torch[] = {"at::native::vectorized_elementwise_kernel<4, "
                           "at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>>"};
    cubin = compile(torch_src, "torch_add.cu", torch, 1, lowered);
    module_kernels(cubin, "torch", lowered, 1);
    free(cubin);

    extern_c(triton_src, "triton_poi_fused_add_0.cu", "triton", "triton_poi_fused_add_0");

    const char *numba[] = {NUMBA_NAME};
    module_kernels(numba_ptx, "numba", numba, 1);

    app_check(cuCtxSynchronize(), "cuCtxSynchronize");
    return 0;
}
