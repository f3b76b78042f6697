/* batch_ode: integrates a large batch of independent two-variable ODE
 * systems, each with its own parameters, with fixed-step RK4 on the GPU, one
 * thread per system, and checks a sample against the same RK4 on the CPU.
 * The integration kernels are compiled ahead of time, one per built-in model.
 *
 *   batch_ode --model vanderpol --systems 262144 --steps 2000 --streams 2 */
#include <stdio.h>
#include <string.h>

#include "ode_models.h"
#include "ode_options.h"
#include "ode_pipeline.h"

ODE_DEFINE_INTEGRATOR(integrate_oscillator, ode_rhs_oscillator)
ODE_DEFINE_INTEGRATOR(integrate_vanderpol, ode_rhs_vanderpol)
ODE_DEFINE_INTEGRATOR(integrate_lotka_volterra, ode_rhs_lotka_volterra)

typedef void (*integrator_kernel)(const double *, double *, int, double, double, int);

static const struct {
    const char *model;
    const char *kernel_name;
    integrator_kernel kernel;
} kernels[] = {
    {"oscillator", "integrate_oscillator", integrate_oscillator},
    {"vanderpol", "integrate_vanderpol", integrate_vanderpol},
    {"lotka-volterra", "integrate_lotka_volterra", integrate_lotka_volterra},
};

static const char *launch_compiled(void *context, cudaStream_t stream, const double *params,
                                   double *state, int n, double t0, double dt, int steps)
{
    integrator_kernel kernel = (integrator_kernel)context;
    unsigned grid = (unsigned)((n + ODE_BLOCK - 1) / ODE_BLOCK);
    kernel<<<grid, ODE_BLOCK, 0, stream>>>(params, state, n, t0, dt, steps);
    cudaError_t err = cudaGetLastError();
    return err == cudaSuccess ? NULL : cudaGetErrorName(err);
}

int main(int argc, char **argv)
{
    struct ode_options o;
    ode_options_parse_or_exit(&o, ODE_PROGRAM_COMPILED, argc, argv);

    struct ode_integrator integrator = {NULL, launch_compiled, NULL};
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++) {
        if (strcmp(kernels[i].model, o.model->name) != 0) continue;
        integrator.kernel_name = kernels[i].kernel_name;
        integrator.context = (void *)kernels[i].kernel;
    }

    struct ode_device dev;
    ode_device_open(&dev);
    return ode_solve(&o, &dev, &integrator, o.model->host_rhs);
}
