/* NVRTC: nvrtcCompileProgram is one `compile` record with the program's
 * name and input size (source and headers, noted when the program was
 * created), its option count, status and wall time. The size queries
 * (nvrtcGetPTXSize, nvrtcGetCUBINSize) count in `api`, their records
 * carrying the size answered. The PTX nvrtcGetPTX hands out is
 * remembered, so that its load is known to be NVRTC's. */
#include <nvrtc.h>

#include "compile.h"
#include "handles.h"
#include "module.h"

/* nvrtcProgram -> its inputs (compile.h): the source, then the headers. */
static gt_handle_table programs;

static const char *rtc_status(int status, const void *real, char *buf, size_t size)
{
    return gt_compile_status_name(real, "nvrtcGetErrorString", "nvrtcResult", status, buf, size);
}

static uint64_t text_bytes(const char *s)
{
    return s ? strlen(s) : 0;
}

/* The program's inputs: its source, named after the program (NVRTC's own
 * name for a program created without one), then its headers. */
static void created(nvrtcProgram prog, const char *src, const char *name, int n_headers,
                    const char *const *headers)
{
    gt_compile_add_input(&programs, prog, text_bytes(src), name ? name : "default_program");
    for (int i = 0; headers && i < n_headers; i++)
        gt_compile_add_input(&programs, prog, text_bytes(headers[i]), NULL);
}

#define RTC(sym, kind, params, args, then, ...)                                                    \
    GT_COMPILER_WRAPPER_THEN(nvrtcResult, sym, sym, kind, params, args,                            \
                             NVRTC_ERROR_INTERNAL_ERROR, rtc_status, then, __VA_ARGS__)

RTC(nvrtcCreateProgram, GT_EV_API,
    (nvrtcProgram * prog, const char *src, const char *name, int n_headers,
     const char *const *headers, const char *const *include_names),
    (prog, src, name, n_headers, headers, include_names),
    if (r_ == NVRTC_SUCCESS) created(*prog, src, name, n_headers, headers), (void)c)

RTC(nvrtcCompileProgram, GT_EV_COMPILE,
    (nvrtcProgram prog, int n_options, const char *const *options), (prog, n_options, options),
    (void)0, gt_compile_describe(&c, &programs, prog), c.options = gt_compile_options(n_options))

/* The handle is read before the call, which clears it. */
RTC(nvrtcDestroyProgram, GT_EV_API, (nvrtcProgram * prog), (prog),
    if (r_ == NVRTC_SUCCESS) gt_compile_forget(&programs, doomed),
    nvrtcProgram doomed = prog ? *prog : NULL)

#define SIZE_QUERY(sym)                                                                            \
    RTC(sym, GT_EV_API, (nvrtcProgram prog, size_t * size), (prog, size),                          \
        if (r_ == NVRTC_SUCCESS && size) c.bytes = *size, (void)prog)

SIZE_QUERY(nvrtcGetPTXSize)
SIZE_QUERY(nvrtcGetCUBINSize)

/* PTX handed to the program: a later load of it is NVRTC's (ptx-jit). */
RTC(nvrtcGetPTX, GT_EV_API, (nvrtcProgram prog, char *ptx), (prog, ptx),
    if (r_ == NVRTC_SUCCESS) gt_ptx_produced(ptx, GT_PTX_FROM_NVRTC), (void)prog)
