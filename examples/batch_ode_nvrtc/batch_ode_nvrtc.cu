/* batch_ode_nvrtc: the batch ODE solver with its integration kernel generated
 * at run time, as GPU ODE libraries do: the right-hand side, a built-in
 * model's or one given on the command line, is spliced into kernel source,
 * compiled by NVRTC, loaded with the driver API and launched on the same
 * chunked pipeline as batch_ode.
 *
 *   batch_ode_nvrtc --model oscillator --dv "-a*a*u - 0.1*v*fabs(v)"
 *   batch_ode_nvrtc --compile-only --du "v" --dv "-sin(u)"   (no GPU needed) */
#include <errno.h> /* program_invocation_short_name */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <nvtx3/nvToolsExt.h>

#include "ode_models.h"
#include "ode_options.h"
#include "ode_pipeline.h"
#include "rhs_codegen.h"

#define DEFAULT_COMPILE_ONLY_ARCH 75 /* the oldest architecture NVRTC 13 compiles for */

struct generated_kernel {
    char name[64];
    CUmodule module;
    CUfunction function;
};

static void driver_check(CUresult r, const char *call)
{
    if (r == CUDA_SUCCESS) return;
    const char *name = NULL;
    cuGetErrorName(r, &name);
    fprintf(stderr, "%s: %s failed: %s\n", program_invocation_short_name, call,
            name ? name : "unknown error");
    exit(1);
}

static void print_numbered(FILE *out, const char *text)
{
    int line = 1;
    fprintf(out, "%4d  ", line);
    for (const char *c = text; *c; c++) {
        fputc(*c, out);
        if (*c == '\n' && c[1]) fprintf(out, "%4d  ", ++line);
    }
}

/* Generates and compiles the kernel; exits 2 when the right-hand side does
 * not compile, 1 when NVRTC fails. */
static void generate(const struct ode_options *o, const char *kernel_name, int arch,
                     struct rhs_image *image)
{
    char error[256];
    char *source =
        rhs_codegen_source(kernel_name, o->du ? o->du : o->model->du, o->dv ? o->dv : o->model->dv);
    if (!source) {
        fprintf(stderr, "%s: out of host memory\n", program_invocation_short_name);
        exit(1);
    }
    if (o->show_source) fputs(source, stdout);

    enum rhs_compile_result r =
        rhs_codegen_compile(source, arch, o->cubin, image, error, sizeof error);
    if (r == RHS_REJECTED) {
        fprintf(stderr, "%s: the right-hand side does not compile:\n%s",
                program_invocation_short_name, image->log);
        fprintf(stderr, "generated source (" RHS_PROGRAM_NAME "):\n");
        print_numbered(stderr, source);
    } else if (r == RHS_FAILED) {
        fprintf(stderr, "%s: NVRTC failed: %s\n%s", program_invocation_short_name, error,
                image->log);
    }
    free(source);
    if (r != RHS_COMPILED) exit(r == RHS_REJECTED ? 2 : 1);
}

static const char *launch_generated(void *context, cudaStream_t stream, const double *params,
                                    double *state, int n, double t0, double dt, int steps)
{
    const struct generated_kernel *k = (const struct generated_kernel *)context;
    void *args[] = {&params, &state, &n, &t0, &dt, &steps};
    unsigned grid = (unsigned)((n + ODE_BLOCK - 1) / ODE_BLOCK);
    CUresult r =
        cuLaunchKernel(k->function, grid, 1, 1, ODE_BLOCK, 1, 1, 0, (CUstream)stream, args, NULL);
    const char *name = NULL;
    if (r != CUDA_SUCCESS && cuGetErrorName(r, &name) != CUDA_SUCCESS) name = "unknown error";
    return name;
}

static void kernel_name_for(const struct ode_options *o, char *name, size_t size)
{
    if (!ode_options_rhs_is_model(o)) {
        snprintf(name, size, "integrate_custom_nvrtc");
        return;
    }
    snprintf(name, size, "integrate_%s_nvrtc", o->model->name);
    for (char *c = name; *c; c++)
        if (*c == '-') *c = '_';
}

int main(int argc, char **argv)
{
    struct ode_options o;
    ode_options_parse_or_exit(&o, ODE_PROGRAM_NVRTC, argc, argv);

    struct generated_kernel kernel;
    struct rhs_image image;
    memset(&kernel, 0, sizeof kernel);
    kernel_name_for(&o, kernel.name, sizeof kernel.name);

    if (o.compile_only) {
        generate(&o, kernel.name, o.arch ? o.arch : DEFAULT_COMPILE_ONLY_ARCH, &image);
        fputs(image.data, stdout);
        rhs_image_free(&image);
        return 0;
    }

    struct ode_device dev;
    ode_device_open(&dev);
    int arch = o.arch ? o.arch : rhs_codegen_arch_for(dev.compute_capability);
    if (!arch) {
        fprintf(stderr, "%s: NVRTC cannot compile for compute capability %d.%d\n",
                program_invocation_short_name, dev.compute_capability / 10,
                dev.compute_capability % 10);
        return 1;
    }

    nvtxRangePushA("codegen");
    generate(&o, kernel.name, arch, &image);
    driver_check(cuModuleLoadData(&kernel.module, image.data), "cuModuleLoadData");
    driver_check(cuModuleGetFunction(&kernel.function, kernel.module, kernel.name),
                 "cuModuleGetFunction");
    printf("%s: %s compiled by NVRTC for %s_%d (%zu bytes)\n", program_invocation_short_name,
           kernel.name, o.cubin ? "sm" : "compute", arch, image.size);
    rhs_image_free(&image);
    nvtxRangePop();

    struct ode_integrator integrator = {kernel.name, launch_generated, &kernel};
    int status =
        ode_solve(&o, &dev, &integrator, ode_options_rhs_is_model(&o) ? o.model->host_rhs : NULL);
    driver_check(cuModuleUnload(kernel.module), "cuModuleUnload");
    return status;
}
