/* Runtime code loading (shared libcudart): cudaLibraryLoadData and
 * cudaLibraryLoadFromFile, recorded once with the driver load under them
 * (call.c); the description here stands in when no driver load was seen. */
#include "module.h"

#define LOAD(sym, params, args, describe_stmt)                                                     \
    GT_RUNTIME_WRAPPER(sym, sym, GT_CAT_MODULE, GT_EV_MODULE, params, args, describe_stmt)

LOAD(cudaLibraryLoadData,
     (cudaLibrary_t * library, const void *code, enum cudaJitOption *jit_options, void **jit_values,
      unsigned int n_jit, enum cudaLibraryOption *options, void **values, unsigned int n),
     (library, code, jit_options, jit_values, n_jit, options, values, n),
     gt_module_describe(&c, code))
LOAD(cudaLibraryLoadFromFile,
     (cudaLibrary_t * library, const char *path, enum cudaJitOption *jit_options, void **jit_values,
      unsigned int n_jit, enum cudaLibraryOption *options, void **values, unsigned int n),
     (library, path, jit_options, jit_values, n_jit, options, values, n),
     gt_module_describe_file(&c, path))
