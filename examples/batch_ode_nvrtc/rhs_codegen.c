#include "rhs_codegen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvrtc.h>

#include "ode_rk4_text.h" /* ode_rk4.h as a C array, generated at build time */

/* Each expression sits on a line of its own, so that NVRTC's line numbers
 * point at the expression at fault. */
static const char source_template[] =
    "#include \"ode_rk4.h\"\n"
    "\n"
    "ODE_INLINE __device__ void ode_rhs_generated(\n"
    "    double t, const double *y, const double *p, double *dydt)\n"
    "{\n"
    "    ODE_RHS_NAMES\n"
    "    dydt[0] = (\n        %s\n    );\n"
    "    dydt[1] = (\n        %s\n    );\n"
    "}\n"
    "\n"
    "ODE_DEFINE_INTEGRATOR(%s, ode_rhs_generated)\n";

char *rhs_codegen_source(const char *kernel_name, const char *du, const char *dv)
{
    int len = snprintf(NULL, 0, source_template, du, dv, kernel_name);
    if (len < 0) return NULL;
    char *source = malloc((size_t)len + 1);
    if (source) snprintf(source, (size_t)len + 1, source_template, du, dv, kernel_name);
    return source;
}

int rhs_codegen_arch_for(int device_arch)
{
    int count = 0, best = 0;
    if (nvrtcGetNumSupportedArchs(&count) != NVRTC_SUCCESS || count <= 0) return 0;
    int *archs = malloc((size_t)count * sizeof *archs);
    if (!archs) return 0;
    if (nvrtcGetSupportedArchs(archs) == NVRTC_SUCCESS)
        for (int i = 0; i < count; i++)
            if (archs[i] <= device_arch && archs[i] > best) best = archs[i];
    free(archs);
    return best;
}

static char *read_log(nvrtcProgram program)
{
    size_t size = 0;
    if (nvrtcGetProgramLogSize(program, &size) != NVRTC_SUCCESS || size == 0) size = 1;
    char *log = calloc(size, 1);
    if (log && nvrtcGetProgramLog(program, log) != NVRTC_SUCCESS) log[0] = '\0';
    return log;
}

static nvrtcResult read_image(nvrtcProgram program, bool cubin, struct rhs_image *image)
{
    nvrtcResult r =
        cubin ? nvrtcGetCUBINSize(program, &image->size) : nvrtcGetPTXSize(program, &image->size);
    if (r != NVRTC_SUCCESS) return r;
    image->data = malloc(image->size);
    if (!image->data) return NVRTC_ERROR_OUT_OF_MEMORY;
    return cubin ? nvrtcGetCUBIN(program, image->data) : nvrtcGetPTX(program, image->data);
}

enum rhs_compile_result rhs_codegen_compile(const char *source, int arch, bool cubin,
                                            struct rhs_image *image, char *error, size_t error_size)
{
    const char *header_text = (const char *)ode_rk4_text;
    const char *header_name = "ode_rk4.h";
    char arch_option[32];
    const char *options[] = {arch_option};
    nvrtcProgram program;
    enum rhs_compile_result result = RHS_COMPILED;
    const char *step = "nvrtcCreateProgram";

    memset(image, 0, sizeof *image);
    snprintf(arch_option, sizeof arch_option, "--gpu-architecture=%s_%d", cubin ? "sm" : "compute",
             arch);
    nvrtcResult r =
        nvrtcCreateProgram(&program, source, RHS_PROGRAM_NAME, 1, &header_text, &header_name);
    if (r != NVRTC_SUCCESS) {
        snprintf(error, error_size, "%s: %s", step, nvrtcGetErrorString(r));
        return RHS_FAILED;
    }

    r = nvrtcCompileProgram(program, 1, options);
    image->log = read_log(program);
    if (r == NVRTC_ERROR_COMPILATION) {
        result = RHS_REJECTED;
    } else {
        step = r == NVRTC_SUCCESS ? "reading the compiled code" : "nvrtcCompileProgram";
        if (r == NVRTC_SUCCESS) r = read_image(program, cubin, image);
        if (r != NVRTC_SUCCESS) {
            snprintf(error, error_size, "%s (%s): %s", step, arch_option, nvrtcGetErrorString(r));
            result = RHS_FAILED;
        }
    }
    nvrtcDestroyProgram(&program);
    return result;
}

void rhs_image_free(struct rhs_image *image)
{
    free(image->data);
    free(image->log);
    memset(image, 0, sizeof *image);
}
