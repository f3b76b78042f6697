// Failing runtime calls and the last-error state after each, one line per observation,
// so that the output with and without a tracer can be compared line by line. Runs the
// same on a GPU; `spin` takes GPUTRACE_EMU_KERNEL_NS on the emulator and about
// spin_ms of clock cycles on a GPU.
//
// Usage: errors [spin_ms=500]
// Line format: "<step>: <call> -> <cudaError name>" for a call's result and
//              "<step>: peek -> <name>" / "<step>: get -> <name>" for the last error.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "app_util.h"
#include "manifest.h"

__global__ void noop(int *p)
{
    if (p != nullptr) *p = 1;
}

__global__ void spin(long long cycles)
{
    long long start = clock64();
    while (clock64() - start < cycles) {
    }
}

static int step_number;
static const char *step_name;

static void begin(const char *name)
{
    step_number++;
    step_name = name;
}

// Prints a call's result; a failure is recorded under the API's name (the call's text
// up to its argument list).
static cudaError_t show(const char *call, cudaError_t err)
{
    printf("%d %s: %s -> %s\n", step_number, step_name, call, cudaGetErrorName(err));
    if (err != cudaSuccess) {
        std::string api(call, strcspn(call, "("));
        app_manifest_error(api.c_str(), cudaGetErrorName(err));
    }
    return err;
}

#define SHOW(call) show(#call, (call))

static void peek()
{
    printf("%d %s: peek -> %s\n", step_number, step_name, cudaGetErrorName(cudaPeekAtLastError()));
}

static void get()
{
    printf("%d %s: get -> %s\n", step_number, step_name, cudaGetErrorName(cudaGetLastError()));
}

static int not_a_symbol;

int main(int argc, char **argv)
{
    app_program = "errors";
    long spin_ms = app_arg(argc, argv, 1, "spin_ms", 500, 1);
    setvbuf(stdout, nullptr, _IOLBF, 0);
    void *device = nullptr;
    int host_value = 0;

    begin("initial state");
    peek();
    get();

    begin("bad free, then a success");
    SHOW(cudaFree((void *)0x1000));
    peek();
    SHOW(cudaMalloc(&device, 256));
    peek();
    get();
    get();

    begin("pageable pointer to cudaFreeHost");
    SHOW(cudaFreeHost(&host_value));
    get();

    begin("unregister unregistered memory");
    SHOW(cudaHostUnregister(&host_value));
    get();

    begin("invalid device ordinal");
    SHOW(cudaSetDevice(1 << 20));
    get();

    begin("invalid copy kind");
    SHOW(cudaMemcpy(device, &host_value, sizeof(host_value), (cudaMemcpyKind)7));
    get();

    begin("unknown symbol");
    SHOW(cudaMemcpyToSymbol(not_a_symbol, &host_value, sizeof(host_value)));
    get();

    begin("elapsed time of unrecorded events");
    cudaEvent_t a, b;
    float ms = 0.0f;
    SHOW(cudaEventCreate(&a));
    SHOW(cudaEventCreate(&b));
    SHOW(cudaEventElapsedTime(&ms, a, b));
    get();

    begin("block too large");
    noop<<<1, 4096>>>(nullptr);
    peek();
    get();
    get();

    begin("empty grid");
    noop<<<0, 32>>>(nullptr);
    get();

    begin("null function");
    SHOW(cudaLaunchKernel((const void *)nullptr, dim3(1), dim3(1), nullptr, 0, 0));
    get();

    begin("allocation too large");
    void *huge = nullptr;
    SHOW(cudaMalloc(&huge, (size_t)1 << 62));
    get();

    begin("query while busy");
    int rate_khz = 0;
    SHOW(cudaDeviceGetAttribute(&rate_khz, cudaDevAttrClockRate, 0));
    cudaStream_t s;
    SHOW(cudaStreamCreate(&s));
    spin<<<1, 1, 0, s>>>((long long)rate_khz * spin_ms);
    app_manifest_kernel("spin", 1, false);
    SHOW(cudaStreamQuery(s));
    peek();
    SHOW(cudaStreamSynchronize(s));
    app_manifest_sync("cudaStreamSynchronize", 1);
    SHOW(cudaStreamQuery(s));
    get();

    begin("error names");
    printf("%d %s: name(12345) -> %s\n", step_number, step_name,
           cudaGetErrorName((cudaError_t)12345));
    printf("%d %s: string(cudaErrorInvalidValue) -> %s\n", step_number, step_name,
           cudaGetErrorString(cudaErrorInvalidValue));

    begin("cleanup");
    SHOW(cudaEventDestroy(a));
    SHOW(cudaEventDestroy(b));
    SHOW(cudaStreamDestroy(s));
    SHOW(cudaFree(device));
    SHOW(cudaDeviceSynchronize());
    app_manifest_sync("cudaDeviceSynchronize", 1);
    get();
    return app_manifest_write(app_program) == 0 ? 0 : APP_EXIT_WRONG_RESULT;
}
