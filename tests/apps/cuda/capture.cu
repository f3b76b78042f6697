// Stream capture: work captured into a graph on a blocking stream, the graph launched
// several times, with capture-state queries around it.
//
// Usage: capture [graph_launches=10 (>= 1)] [kernels_per_graph=4] [elements=4096]
//  - one launch of step outside any capture, then the capture (thread-local mode) of
//    kernels_per_graph launches of step, a memset and a DtoD copy
//  - cudaStreamIsCapturing is checked before, during and after the capture
//  - the graph is launched graph_launches times, then cudaStreamSynchronize once
//  - the result of the captured memset + copy is checked with a DtoH pageable sync copy
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "app_util.h"
#include "manifest.h"

__global__ void step(float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * 0.5f + 1.0f;
}

static void check(cudaError_t err, const char *what)
{
    if (err != cudaSuccess) app_fail(what, cudaGetErrorName(err), (int)err);
}

#define CHECK(call) check((call), #call)

static void expect_capturing(cudaStream_t s, cudaStreamCaptureStatus expected)
{
    cudaStreamCaptureStatus status;
    CHECK(cudaStreamIsCapturing(s, &status));
    if (status != expected) app_wrong("cudaStreamIsCapturing status");
}

int main(int argc, char **argv)
{
    app_program = "capture";
    int graph_launches = (int)app_arg(argc, argv, 1, "graph_launches", 10, 1);
    int kernels = (int)app_arg(argc, argv, 2, "kernels_per_graph", 4, 0);
    size_t elements = (size_t)app_arg(argc, argv, 3, "elements", 4096, 1);
    size_t bytes = elements * sizeof(float);
    unsigned grid = (unsigned)((elements + 255) / 256);

    float *x;
    unsigned char *a, *b;
    CHECK(cudaMalloc(&x, bytes));
    CHECK(cudaMalloc(&a, bytes));
    CHECK(cudaMalloc(&b, bytes));
    unsigned char *host = (unsigned char *)malloc(bytes);
    if (host == nullptr) app_wrong("out of host memory");
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));

    step<<<grid, 256, 0, s>>>(x, (int)elements);
    app_manifest_kernel("step", 1, false);

    expect_capturing(s, cudaStreamCaptureStatusNone);
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    expect_capturing(s, cudaStreamCaptureStatusActive);
    for (int k = 0; k < kernels; k++) {
        step<<<grid, 256, 0, s>>>(x, (int)elements);
        app_manifest_kernel("step", 1, true);
    }
    CHECK(cudaMemsetAsync(a, 0x42, bytes, s));
    app_manifest_memset(bytes, true, true);
    CHECK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, s));
    app_manifest_copy(APP_DTOD, APP_NO_HOST, true, bytes, true);
    cudaGraph_t graph;
    CHECK(cudaStreamEndCapture(s, &graph));
    expect_capturing(s, cudaStreamCaptureStatusNone);

    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    for (int i = 0; i < graph_launches; i++)
        CHECK(cudaGraphLaunch(exec, s));
    app_manifest_graph_launch((unsigned long long)graph_launches);
    CHECK(cudaStreamSynchronize(s));
    app_manifest_sync("cudaStreamSynchronize", 1);
    CHECK(cudaGetLastError());

    CHECK(cudaMemcpy(host, b, bytes, cudaMemcpyDeviceToHost));
    app_manifest_copy(APP_DTOH, APP_PAGEABLE, false, bytes, false);
    app_expect_bytes(host, bytes, 0x42, "captured memset + copy");

    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(graph));
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(x));
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    free(host);
    return app_manifest_write(app_program) == 0 ? 0 : APP_EXIT_WRONG_RESULT;
}
