/* The chunked pipeline. The batch is cut into chunks; chunk k runs on stream
 * k % streams, and each stream owns one set of device buffers that its
 * chunks reuse in stream order. Per chunk:
 *
 *   H2D initial states and parameters (pinned)  ->  D2D initial -> working state
 *   -> memset status -> integrate (in place) -> classify final states
 *   -> D2H final states (pinned) -> D2H status codes (pageable unless --pin-all)
 *
 * The status copy lands straight in an ordinary malloc'd array, as code
 * that grew from a synchronous prototype often does: such a copy is staged
 * by the driver and blocks the host, so the chunks behind it are issued
 * late. --pin-all stages it through pinned memory instead. */
#include "ode_pipeline.h"

#include <errno.h> /* program_invocation_short_name */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvtx3/nvToolsExt.h>

#include "ode_batch.h"

#define EMULATED_DEVICE_PREFIX "gputrace emulated"

void ode_cuda_check(cudaError_t err, const char *call)
{
    if (err == cudaSuccess) return;
    fprintf(stderr, "%s: %s failed: %s (%s)\n", program_invocation_short_name, call,
            cudaGetErrorName(err), cudaGetErrorString(err));
    exit(1);
}

void ode_device_open(struct ode_device *dev)
{
    cudaDeviceProp prop;
    memset(dev, 0, sizeof *dev);
    ODE_CUDA_CHECK(cudaSetDevice(dev->ordinal));
    ODE_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev->ordinal));
    snprintf(dev->name, sizeof dev->name, "%s", prop.name);
    dev->compute_capability = prop.major * 10 + prop.minor;
    dev->emulated = strncmp(dev->name, EMULATED_DEVICE_PREFIX, strlen(EMULATED_DEVICE_PREFIX)) == 0;
    printf("%s: device %d: %s, compute capability %d.%d, %d SMs\n", program_invocation_short_name,
           dev->ordinal, dev->name, prop.major, prop.minor, prop.multiProcessorCount);
}

/* Marks each system ODE_STATUS_OK, _NONFINITE or _DIVERGED and counts the
 * failures of the chunk, so the host can report them without scanning. */
__global__ void classify_final_states(const double *__restrict__ initial,
                                      const double *__restrict__ state, int *__restrict__ status,
                                      unsigned *__restrict__ chunk_failures, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int code = ODE_STATUS_OK;
    for (int k = 0; k < ODE_DIM; k++) {
        const double y = state[ODE_DIM * i + k];
        if (!isfinite(y)) {
            code = ODE_STATUS_NONFINITE;
            break;
        }
        if (fabs(y) > ODE_DIVERGED_FACTOR * (1.0 + fabs(initial[ODE_DIM * i + k])))
            code = ODE_STATUS_DIVERGED;
    }
    status[i] = code;
    if (code != ODE_STATUS_OK) atomicAdd(chunk_failures, 1u);
}

struct host_batch {
    double *initial, *params, *final; /* pinned */
    int *status;                      /* pageable, or pinned with --pin-all */
};

/* One stream and the device buffers of the chunks it carries. */
struct stream_slot {
    cudaStream_t stream;
    double *initial, *state, *params;
    int *status;
};

struct pipeline {
    const struct ode_options *o;
    const struct ode_integrator *integrator;
    int streams;
    struct stream_slot *slots;
    unsigned *chunk_failures; /* device, one counter per chunk */
    cudaEvent_t start, stop;
};

static int chunk_begin(const struct ode_options *o, int chunk)
{
    return (int)((long long)chunk * o->systems / o->chunks);
}

static void *checked_malloc(size_t bytes)
{
    void *p = malloc(bytes);
    if (!p) {
        fprintf(stderr, "%s: out of host memory (%zu bytes)\n", program_invocation_short_name,
                bytes);
        exit(1);
    }
    return p;
}

static void host_batch_alloc(struct host_batch *h, const struct ode_options *o)
{
    size_t n = (size_t)o->systems;
    ODE_CUDA_CHECK(cudaMallocHost((void **)&h->initial, n * ODE_DIM * sizeof(double)));
    ODE_CUDA_CHECK(cudaMallocHost((void **)&h->params, n * ODE_NPARAM * sizeof(double)));
    ODE_CUDA_CHECK(cudaMallocHost((void **)&h->final, n * ODE_DIM * sizeof(double)));
    if (o->pin_all)
        ODE_CUDA_CHECK(cudaMallocHost((void **)&h->status, n * sizeof(int)));
    else
        h->status = (int *)checked_malloc(n * sizeof(int));
}

static void host_batch_free(struct host_batch *h, const struct ode_options *o)
{
    ODE_CUDA_CHECK(cudaFreeHost(h->initial));
    ODE_CUDA_CHECK(cudaFreeHost(h->params));
    ODE_CUDA_CHECK(cudaFreeHost(h->final));
    if (o->pin_all)
        ODE_CUDA_CHECK(cudaFreeHost(h->status));
    else
        free(h->status);
}

static void pipeline_create(struct pipeline *p, const struct ode_options *o,
                            const struct ode_integrator *integrator)
{
    /* Chunk sizes differ by at most one system. */
    size_t largest = (size_t)(chunk_begin(o, 1) - chunk_begin(o, 0)) + 1;
    memset(p, 0, sizeof *p);
    p->o = o;
    p->integrator = integrator;
    p->streams = o->streams < o->chunks ? o->streams : o->chunks;
    p->slots = (struct stream_slot *)checked_malloc((size_t)p->streams * sizeof *p->slots);
    for (int s = 0; s < p->streams; s++) {
        struct stream_slot *slot = &p->slots[s];
        ODE_CUDA_CHECK(cudaStreamCreateWithFlags(&slot->stream, cudaStreamNonBlocking));
        ODE_CUDA_CHECK(cudaMalloc((void **)&slot->initial, largest * ODE_DIM * sizeof(double)));
        ODE_CUDA_CHECK(cudaMalloc((void **)&slot->state, largest * ODE_DIM * sizeof(double)));
        ODE_CUDA_CHECK(cudaMalloc((void **)&slot->params, largest * ODE_NPARAM * sizeof(double)));
        ODE_CUDA_CHECK(cudaMalloc((void **)&slot->status, largest * sizeof(int)));
    }
    ODE_CUDA_CHECK(cudaMalloc((void **)&p->chunk_failures, (size_t)o->chunks * sizeof(unsigned)));
    ODE_CUDA_CHECK(cudaEventCreate(&p->start));
    ODE_CUDA_CHECK(cudaEventCreate(&p->stop));
}

static void pipeline_destroy(struct pipeline *p)
{
    for (int s = 0; s < p->streams; s++) {
        struct stream_slot *slot = &p->slots[s];
        ODE_CUDA_CHECK(cudaFree(slot->initial));
        ODE_CUDA_CHECK(cudaFree(slot->state));
        ODE_CUDA_CHECK(cudaFree(slot->params));
        ODE_CUDA_CHECK(cudaFree(slot->status));
        ODE_CUDA_CHECK(cudaStreamDestroy(slot->stream));
    }
    ODE_CUDA_CHECK(cudaFree(p->chunk_failures));
    ODE_CUDA_CHECK(cudaEventDestroy(p->start));
    ODE_CUDA_CHECK(cudaEventDestroy(p->stop));
    free(p->slots);
}

static void enqueue_chunk(struct pipeline *p, const struct host_batch *h, int chunk)
{
    const struct ode_options *o = p->o;
    const struct stream_slot *slot = &p->slots[chunk % p->streams];
    const cudaStream_t st = slot->stream;
    const int begin = chunk_begin(o, chunk);
    const int n = chunk_begin(o, chunk + 1) - begin;
    const size_t state_bytes = (size_t)n * ODE_DIM * sizeof(double);
    const unsigned grid = (unsigned)((n + ODE_BLOCK - 1) / ODE_BLOCK);

    nvtxRangePushA("chunk");
    ODE_CUDA_CHECK(cudaMemcpyAsync(slot->initial, h->initial + (size_t)ODE_DIM * begin, state_bytes,
                                   cudaMemcpyHostToDevice, st));
    ODE_CUDA_CHECK(cudaMemcpyAsync(slot->params, h->params + (size_t)ODE_NPARAM * begin,
                                   (size_t)n * ODE_NPARAM * sizeof(double), cudaMemcpyHostToDevice,
                                   st));
    /* The integrator works in place; the initial states stay for the
     * divergence test. */
    ODE_CUDA_CHECK(
        cudaMemcpyAsync(slot->state, slot->initial, state_bytes, cudaMemcpyDeviceToDevice, st));
    ODE_CUDA_CHECK(cudaMemsetAsync(slot->status, 0xff, (size_t)n * sizeof(int), st));

    const char *err = p->integrator->launch(p->integrator->context, st, slot->params, slot->state,
                                            n, 0.0, o->dt, o->steps);
    if (err) {
        fprintf(stderr, "%s: launching %s failed: %s\n", program_invocation_short_name,
                p->integrator->kernel_name, err);
        exit(1);
    }
    classify_final_states<<<grid, ODE_BLOCK, 0, st>>>(slot->initial, slot->state, slot->status,
                                                      p->chunk_failures + chunk, n);
    ODE_CUDA_CHECK(cudaGetLastError());

    ODE_CUDA_CHECK(cudaMemcpyAsync(h->final + (size_t)ODE_DIM * begin, slot->state, state_bytes,
                                   cudaMemcpyDeviceToHost, st));
    ODE_CUDA_CHECK(cudaMemcpyAsync(h->status + begin, slot->status, (size_t)n * sizeof(int),
                                   cudaMemcpyDeviceToHost, st));
    nvtxRangePop();
}

/* Runs every chunk; returns the GPU time from the first copy to the last. */
static float pipeline_run(struct pipeline *p, const struct host_batch *h, unsigned *failures)
{
    const struct ode_options *o = p->o;
    const cudaStream_t first = p->slots[0].stream;
    float ms = 0.0f;

    nvtxRangeId_t range = nvtxRangeStartA("pipeline");
    ODE_CUDA_CHECK(
        cudaMemsetAsync(p->chunk_failures, 0, (size_t)o->chunks * sizeof(unsigned), first));
    ODE_CUDA_CHECK(cudaEventRecord(p->start, first));
    for (int s = 1; s < p->streams; s++)
        ODE_CUDA_CHECK(cudaStreamWaitEvent(p->slots[s].stream, p->start, 0));

    for (int chunk = 0; chunk < o->chunks; chunk++)
        enqueue_chunk(p, h, chunk);

    /* Join every stream into the first, so that one event marks the end. */
    for (int s = 1; s < p->streams; s++) {
        cudaEvent_t done;
        ODE_CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
        ODE_CUDA_CHECK(cudaEventRecord(done, p->slots[s].stream));
        ODE_CUDA_CHECK(cudaStreamWaitEvent(first, done, 0));
        ODE_CUDA_CHECK(cudaEventDestroy(done));
    }
    ODE_CUDA_CHECK(cudaEventRecord(p->stop, first));
    ODE_CUDA_CHECK(cudaEventSynchronize(p->stop));
    ODE_CUDA_CHECK(cudaEventElapsedTime(&ms, p->start, p->stop));
    ODE_CUDA_CHECK(cudaMemcpy(failures, p->chunk_failures, (size_t)o->chunks * sizeof(unsigned),
                              cudaMemcpyDeviceToHost));
    nvtxRangeEnd(range);
    return ms;
}

struct outcome {
    float gpu_ms;
    unsigned failures_counted; /* by the status kernel */
    struct ode_status_counts status;
    struct ode_check check;
};

static void print_summary(const struct ode_options *o, const struct ode_device *dev,
                          const struct ode_integrator *integrator, const struct outcome *r,
                          const char *verdict)
{
    const double steps = (double)o->systems * o->steps;
    const int streams = o->streams < o->chunks ? o->streams : o->chunks;
    printf("%s: %d %s systems x %d steps in %d chunk%s on %d stream%s (%s): %.3f ms GPU",
           program_invocation_short_name, o->systems,
           ode_options_rhs_is_model(o) ? o->model->name : "custom", o->steps, o->chunks,
           o->chunks == 1 ? "" : "s", streams, streams == 1 ? "" : "s", integrator->kernel_name,
           r->gpu_ms);
    if (dev->emulated) {
        printf(", numeric check skipped: kernels do not run on the %s: %s\n", dev->name, verdict);
        return;
    }
    if (r->gpu_ms > 0.0f) printf(", %.3g steps/s", steps / (r->gpu_ms * 1e-3));
    printf(", %d failed", r->status.nonfinite + r->status.diverged);
    if (r->check.checked)
        printf(", %d checked against the CPU (max rel diff %.2g)", r->check.checked,
               r->check.max_rel_diff);
    else
        printf(", no CPU check");
    printf(": %s\n", verdict);
}

/* On an emulated device no kernel runs, but every copy and memset does:
 * the states must come back unchanged and no status may be written. */
static const char *judge_emulated(const struct ode_options *o, const struct host_batch *h,
                                  const struct outcome *r)
{
    if (memcmp(h->final, h->initial, (size_t)o->systems * ODE_DIM * sizeof(double)) != 0)
        return "FAILED: the states did not come back from the device unchanged";
    if (r->status.unwritten != o->systems) return "FAILED: status codes without a kernel run";
    return NULL;
}

/* The verdict on a run on a real device, or NULL when all is well. */
static const char *judge(const struct ode_options *o, const struct outcome *r)
{
    int failed = r->status.nonfinite + r->status.diverged;
    if (r->status.unwritten || r->status.other)
        return "FAILED: kernels did not run on every system";
    if ((unsigned)failed != r->failures_counted)
        return "FAILED: status codes and failure counters disagree";
    if (r->check.mismatched) return "FAILED: results differ from the CPU reference";
    if (failed && ode_options_rhs_is_model(o)) return "FAILED: systems failed in a built-in model";
    return NULL;
}

int ode_solve(const struct ode_options *o, const struct ode_device *dev,
              const struct ode_integrator *integrator, ode_rhs_fn host_rhs)
{
    struct host_batch h;
    struct pipeline p;
    struct outcome r;
    memset(&r, 0, sizeof r);

    nvtxRangePushA("setup");
    host_batch_alloc(&h, o);
    ode_batch_generate(o->model, o->seed, o->systems, h.initial, h.params);
    pipeline_create(&p, o, integrator);
    nvtxRangePop();

    unsigned *failures = (unsigned *)checked_malloc((size_t)o->chunks * sizeof(unsigned));
    r.gpu_ms = pipeline_run(&p, &h, failures);
    for (int c = 0; c < o->chunks; c++)
        r.failures_counted += failures[c];
    free(failures);

    nvtxRangePushA("verify");
    ode_batch_count_status(h.status, o->systems, &r.status);
    if (!dev->emulated && host_rhs)
        ode_batch_check(host_rhs, o->systems, o->check, o->dt, o->steps, h.initial, h.params,
                        h.final, &r.check);
    nvtxRangePop();

    const char *failure = dev->emulated ? judge_emulated(o, &h, &r) : judge(o, &r);
    print_summary(o, dev, integrator, &r, failure ? failure : "OK");
    if (failure && r.check.mismatched)
        fprintf(stderr, "%s: worst system %d differs by %.3g (tolerance %.0e)\n",
                program_invocation_short_name, r.check.worst, r.check.max_rel_diff,
                r.check.tolerance);

    nvtxRangePushA("teardown");
    pipeline_destroy(&p);
    host_batch_free(&h, o);
    nvtxRangePop();
    return failure ? 1 : 0;
}
