// <<<>>> launches of templated and namespaced kernels on several streams, async copies
// from pinned memory, events, a __constant__ variable and a captured graph.
// Built twice: with -cudart shared (cu_streams) and with nvcc's default static runtime
// (cu_streams_static), which cannot run on an emulated driver and must fail cleanly.
//
// Usage: cu_streams [iterations=10] [streams=3] [elements=65536] [graph_launches=5]
//  - cudaMemcpyToSymbol / cudaMemcpyFromSymbol of 4 floats (HtoD/DtoH pageable sync)
//  - per iteration and stream: HtoD pinned async copy of the stream's chunk, launches of
//    apps::axpy<float>, apps::axpy<double>, apps::detail::block_sum<256> and touch,
//    DtoH pinned async copy of the chunk back; the round trip is checked
//  - streams other than 0 wait (cudaStreamWaitEvent) for stream 0's first copy
//  - an event pair per stream around iteration 0 (cudaEventSynchronize each)
//  - a graph captured on stream 0 (apps::axpy<float>, touch, a memset, a DtoD copy),
//    launched graph_launches times; its memset + copy result is checked with a DtoH
//    pinned sync copy
//  - cudaStreamSynchronize per stream, one cudaDeviceSynchronize
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "app_util.h"
#include "manifest.h"

namespace apps
{
template <typename T> __global__ void axpy(T a, const T *x, T *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

namespace detail
{
template <int Block> __global__ void block_sum(const float *in, float *out, int n)
{
    __shared__ float partial[Block];
    int i = blockIdx.x * Block + threadIdx.x;
    partial[threadIdx.x] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int stride = Block / 2; stride > 0; stride /= 2) {
        if ((int)threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = partial[0];
}
} // namespace detail
} // namespace apps

__constant__ float coefficients[4];

__global__ void touch(int *flags, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) flags[i] += (int)coefficients[i % 4];
}

static void check(cudaError_t err, const char *what)
{
    if (err != cudaSuccess) app_fail(what, cudaGetErrorName(err), (int)err);
}

#define CHECK(call) check((call), #call)

static const int block = 256;

struct work {
    size_t chunk; // elements per stream
    float *x, *y, *sums;
    double *xd, *yd;
    int *flags;
    unsigned char *staging;  // device side of the checked round trip
    unsigned char *in, *out; // pinned host
};

static void launch_all(const work &w, cudaStream_t s, size_t offset, bool captured)
{
    int n = (int)w.chunk;
    unsigned grid = (unsigned)((n + block - 1) / block);
    apps::axpy<float><<<grid, block, 0, s>>>(2.0f, w.x + offset, w.y + offset, n);
    app_manifest_kernel("apps::axpy<float>", 1, captured);
    touch<<<grid, block, 0, s>>>(w.flags + offset, n);
    app_manifest_kernel("touch", 1, captured);
    if (captured) return;
    apps::axpy<double><<<grid, block, 0, s>>>(0.5, w.xd + offset, w.yd + offset, n);
    app_manifest_kernel("apps::axpy<double>", 1, false);
    apps::detail::block_sum<256><<<grid, block, 0, s>>>(w.x + offset, w.sums, n);
    app_manifest_kernel("apps::detail::block_sum<256>", 1, false);
}

static void symbols()
{
    const float host[4] = {1.0f, 2.0f, 3.0f, 4.0f};
    float back[4] = {0};
    CHECK(cudaMemcpyToSymbol(coefficients, host, sizeof(host)));
    app_manifest_copy(APP_HTOD, APP_PAGEABLE, false, sizeof(host), false);
    CHECK(cudaMemcpyFromSymbol(back, coefficients, sizeof(back)));
    app_manifest_copy(APP_DTOH, APP_PAGEABLE, false, sizeof(back), false);
    app_expect_same(host, back, sizeof(host), "__constant__ round trip");
}

static void graph(const work &w, cudaStream_t s, int launches)
{
    size_t bytes = w.chunk;
    unsigned char *a, *b;
    CHECK(cudaMalloc(&a, bytes));
    CHECK(cudaMalloc(&b, bytes));
    cudaGraph_t g;
    cudaGraphExec_t exec;
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    launch_all(w, s, 0, true);
    CHECK(cudaMemsetAsync(a, 0x11, bytes, s));
    app_manifest_memset(bytes, true, true);
    CHECK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, s));
    app_manifest_copy(APP_DTOD, APP_NO_HOST, true, bytes, true);
    CHECK(cudaStreamEndCapture(s, &g));
    CHECK(cudaGraphInstantiate(&exec, g, 0));
    for (int i = 0; i < launches; i++)
        CHECK(cudaGraphLaunch(exec, s));
    app_manifest_graph_launch((unsigned long long)launches);
    CHECK(cudaStreamSynchronize(s));
    app_manifest_sync("cudaStreamSynchronize", 1);
    if (launches > 0) {
        CHECK(cudaMemcpy(w.out, b, bytes, cudaMemcpyDeviceToHost));
        app_manifest_copy(APP_DTOH, APP_PINNED, false, bytes, false);
        app_expect_bytes(w.out, bytes, 0x11, "graph memset + copy");
    }
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
}

int main(int argc, char **argv)
{
    app_program =
        argc > 0 && strstr(argv[0], "static") != nullptr ? "cu_streams_static" : "cu_streams";
    int iterations = (int)app_arg(argc, argv, 1, "iterations", 10, 0);
    int nstreams = (int)app_arg(argc, argv, 2, "streams", 3, 1);
    size_t elements = (size_t)app_arg(argc, argv, 3, "elements", 65536, nstreams);
    int graph_launches = (int)app_arg(argc, argv, 4, "graph_launches", 5, 0);

    CHECK(cudaSetDevice(0));
    work w = {};
    w.chunk = elements / nstreams;
    CHECK(cudaMalloc(&w.x, elements * sizeof(float)));
    CHECK(cudaMalloc(&w.y, elements * sizeof(float)));
    CHECK(cudaMalloc(&w.sums, (elements / block + 1) * sizeof(float)));
    CHECK(cudaMalloc(&w.xd, elements * sizeof(double)));
    CHECK(cudaMalloc(&w.yd, elements * sizeof(double)));
    CHECK(cudaMalloc(&w.flags, elements * sizeof(int)));
    CHECK(cudaMalloc(&w.staging, elements));
    CHECK(cudaMallocHost(&w.in, elements));
    CHECK(cudaMallocHost(&w.out, elements));
    app_fill_pattern(w.in, elements, 21);
    memset(w.out, 0, elements);
    symbols();

    cudaStream_t *streams = new cudaStream_t[nstreams];
    cudaEvent_t *start = new cudaEvent_t[nstreams], *stop = new cudaEvent_t[nstreams];
    cudaEvent_t first_copy;
    CHECK(cudaEventCreateWithFlags(&first_copy, cudaEventDisableTiming));
    for (int s = 0; s < nstreams; s++) {
        CHECK(cudaStreamCreateWithFlags(&streams[s], cudaStreamNonBlocking));
        CHECK(cudaEventCreate(&start[s]));
        CHECK(cudaEventCreate(&stop[s]));
    }
    for (int it = 0; it < iterations; it++) {
        for (int s = 0; s < nstreams; s++) {
            size_t offset = (size_t)s * w.chunk;
            if (it == 0) CHECK(cudaEventRecord(start[s], streams[s]));
            CHECK(cudaMemcpyAsync(w.staging + offset, w.in + offset, w.chunk,
                                  cudaMemcpyHostToDevice, streams[s]));
            app_manifest_copy(APP_HTOD, APP_PINNED, true, w.chunk, false);
            if (it == 0 && s == 0) CHECK(cudaEventRecord(first_copy, streams[0]));
            if (it == 0 && s != 0) CHECK(cudaStreamWaitEvent(streams[s], first_copy, 0));
            launch_all(w, streams[s], offset, false);
            CHECK(cudaMemcpyAsync(w.out + offset, w.staging + offset, w.chunk,
                                  cudaMemcpyDeviceToHost, streams[s]));
            app_manifest_copy(APP_DTOH, APP_PINNED, true, w.chunk, false);
            if (it == 0) CHECK(cudaEventRecord(stop[s], streams[s]));
        }
    }
    if (iterations > 0) {
        for (int s = 0; s < nstreams; s++) {
            float ms = -1.0f;
            CHECK(cudaEventSynchronize(stop[s]));
            app_manifest_sync("cudaEventSynchronize", 1);
            CHECK(cudaEventElapsedTime(&ms, start[s], stop[s]));
            if (ms < 0.0f) app_wrong("negative elapsed time");
        }
    }
    for (int s = 0; s < nstreams; s++) {
        CHECK(cudaStreamSynchronize(streams[s]));
        app_manifest_sync("cudaStreamSynchronize", 1);
    }
    if (iterations > 0) app_expect_same(w.in, w.out, w.chunk * nstreams, "pinned async round trip");

    graph(w, streams[0], graph_launches);
    CHECK(cudaDeviceSynchronize());
    app_manifest_sync("cudaDeviceSynchronize", 1);
    CHECK(cudaGetLastError());

    for (int s = 0; s < nstreams; s++) {
        CHECK(cudaEventDestroy(start[s]));
        CHECK(cudaEventDestroy(stop[s]));
        CHECK(cudaStreamDestroy(streams[s]));
    }
    CHECK(cudaEventDestroy(first_copy));
    delete[] streams;
    delete[] start;
    delete[] stop;
    void *device[] = {w.x, w.y, w.sums, w.xd, w.yd, w.flags, w.staging};
    for (void *p : device)
        CHECK(cudaFree(p));
    CHECK(cudaFreeHost(w.in));
    CHECK(cudaFreeHost(w.out));
    return app_manifest_write(app_program) == 0 ? 0 : APP_EXIT_WRONG_RESULT;
}
