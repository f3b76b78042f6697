/* NVVM (libnvvm, as Numba uses it): nvvmCompileProgram and
 * nvvmVerifyProgram are each one `compile` record with the program's
 * modules (count and bytes, noted as they are added, lazily or not), its
 * option count, status and wall time. An NVVM program has no name of its
 * own: the record names it after its first named module, else after the
 * first function its modules define (the kernel, as Numba adds it first),
 * and lists the other functions defined (its device functions). */
#include <nvvm.h>

#include "compile.h"
#include "handles.h"
#include "module.h"

/* nvvmProgram -> its modules (compile.h). */
static gt_handle_table programs;

static const char *nvvm_status(int status, const void *real, char *buf, size_t size)
{
    return gt_compile_status_name(real, "nvvmGetErrorString", "nvvmResult", status, buf, size);
}

#define NVVM(sym, kind, params, args, then, ...)                                                   \
    GT_COMPILER_WRAPPER_THEN(nvvmResult, sym, sym, kind, params, args,                             \
                             NVVM_ERROR_PROGRAM_CREATION_FAILURE, nvvm_status, then, __VA_ARGS__)

#define ADD_MODULE(sym)                                                                            \
    NVVM(sym, GT_EV_API, (nvvmProgram prog, const char *buffer, size_t size, const char *name),    \
         (prog, buffer, size, name),                                                               \
         if (r_ == NVVM_SUCCESS) gt_compile_add_code(&programs, prog, buffer, size, name),         \
         (void)c)
#define COMPILE(sym)                                                                               \
    NVVM(sym, GT_EV_COMPILE, (nvvmProgram prog, int n_options, const char **options),              \
         (prog, n_options, options), (void)0, gt_compile_describe(&c, &programs, prog),            \
         c.options = gt_compile_options(n_options))

ADD_MODULE(nvvmAddModuleToProgram)
ADD_MODULE(nvvmLazyAddModuleToProgram)
COMPILE(nvvmCompileProgram)
COMPILE(nvvmVerifyProgram)

/* PTX handed to the program: a later load or link of it is NVVM's. */
NVVM(nvvmGetCompiledResult, GT_EV_API, (nvvmProgram prog, char *buffer), (prog, buffer),
     if (r_ == NVVM_SUCCESS) gt_ptx_produced(buffer, GT_PTX_FROM_NVVM), (void)prog)

/* The handle is read before the call, which clears it. */
NVVM(nvvmDestroyProgram, GT_EV_API, (nvvmProgram * prog), (prog),
     if (r_ == NVVM_SUCCESS) gt_compile_forget(&programs, doomed),
     nvvmProgram doomed = prog ? *prog : NULL)
