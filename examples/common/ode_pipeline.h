/* The device side shared by both examples: device selection, the chunked
 * multi-stream pipeline, the status kernel, the check and the summary. The
 * programs differ only in how their integration kernel is made and launched. */
#ifndef ODE_PIPELINE_H
#define ODE_PIPELINE_H

#include <stdbool.h>

#include <cuda_runtime.h>

#include "ode_options.h"

#define ODE_BLOCK 128 /* threads per block: registers, not shared memory, limit occupancy */

/* Prints "<program>: <call> failed: <name> (<description>)" and exits 1. */
#define ODE_CUDA_CHECK(call) ode_cuda_check((call), #call)
void ode_cuda_check(cudaError_t err, const char *call);

struct ode_device {
    int ordinal;
    int compute_capability; /* major * 10 + minor */
    bool emulated;          /* a CPU emulation of CUDA that runs no kernel code */
    char name[256];
};

/* Makes device 0 current, creates its context and describes it on stdout. */
void ode_device_open(struct ode_device *dev);

/* Launches the integration kernel over n systems on stream; NULL on
 * success, else the error's name. */
typedef const char *(*ode_launch_fn)(void *context, cudaStream_t stream, const double *params,
                                     double *state, int n, double t0, double dt, int steps);

struct ode_integrator {
    const char *kernel_name;
    ode_launch_fn launch;
    void *context;
};

/* Generates the batch, runs the pipeline, checks and summarises the result
 * in one line. `host_rhs` is NULL when no host reference exists (a custom
 * right-hand side). Returns the exit status: 0 when the batch was solved
 * (or could not be checked on an emulated device), 1 otherwise. */
int ode_solve(const struct ode_options *o, const struct ode_device *dev,
              const struct ode_integrator *integrator, ode_rhs_fn host_rhs);

#endif
