/* Run-time code generation of the integration kernel: the right-hand side's
 * text is spliced into kernel source, which NVRTC compiles to PTX or to
 * machine code. Host code only; nothing here touches a GPU. */
#ifndef RHS_CODEGEN_H
#define RHS_CODEGEN_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The name NVRTC reports the generated program under. */
#define RHS_PROGRAM_NAME "batch_ode_rhs.cu"

/* Kernel source defining the extern "C" kernel `kernel_name` with the
 * right-hand side du/dt = du, dv/dt = dv. Returns malloc'd text or NULL. */
char *rhs_codegen_source(const char *kernel_name, const char *du, const char *dv);

struct rhs_image {
    char *data; /* PTX text (NUL-terminated) or a cubin; malloc'd */
    size_t size;
    char *log; /* NVRTC's log, malloc'd, possibly empty */
};

enum rhs_compile_result {
    RHS_COMPILED,
    RHS_REJECTED, /* the source does not compile: see the log */
    RHS_FAILED,   /* NVRTC itself failed: see `error` */
};

/* Compiles `source` for compute capability `arch` (e.g. 90): PTX for
 * compute_<arch>, or machine code for sm_<arch> when `cubin`. On
 * RHS_FAILED, `error` holds one line. */
enum rhs_compile_result rhs_codegen_compile(const char *source, int arch, bool cubin,
                                            struct rhs_image *image, char *error,
                                            size_t error_size);

void rhs_image_free(struct rhs_image *image);

/* The highest compute capability NVRTC can compile for that is no higher
 * than `device_arch`, or 0 when there is none. */
int rhs_codegen_arch_for(int device_arch);

#ifdef __cplusplus
}
#endif

#endif
