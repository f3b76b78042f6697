/* Driver code loading (the `module` category): modules and libraries from
 * memory or files. Each load is one record: the image's kind and size
 * (module.h) and the call's wall time, which for a `ptx` image is mostly
 * the driver's JIT compilation. Loads the runtime makes for the program
 * (its fat binaries, lazily, under the first launch) are recorded too. */
#include "module.h"

#define LOAD(sym, params, args, describe_stmt)                                                     \
    GT_DRIVER_WRAPPER(sym, sym, GT_CAT_MODULE, GT_EV_MODULE, params, args, describe_stmt)

LOAD(cuModuleLoad, (CUmodule * module, const char *fname), (module, fname),
     gt_module_describe_file(&c, fname))
LOAD(cuModuleLoadData, (CUmodule * module, const void *image), (module, image),
     gt_module_describe(&c, image))
LOAD(cuModuleLoadDataEx,
     (CUmodule * module, const void *image, unsigned int n, CUjit_option *options, void **values),
     (module, image, n, options, values), gt_module_describe(&c, image))
LOAD(cuModuleLoadFatBinary, (CUmodule * module, const void *fat), (module, fat),
     gt_module_describe(&c, fat))
LOAD(cuLibraryLoadData,
     (CUlibrary * library, const void *code, CUjit_option *jit_options, void **jit_values,
      unsigned int n_jit, CUlibraryOption *options, void **values, unsigned int n),
     (library, code, jit_options, jit_values, n_jit, options, values, n),
     gt_module_describe(&c, code))
LOAD(cuLibraryLoadFromFile,
     (CUlibrary * library, const char *path, CUjit_option *jit_options, void **jit_values,
      unsigned int n_jit, CUlibraryOption *options, void **values, unsigned int n),
     (library, path, jit_options, jit_values, n_jit, options, values, n),
     gt_module_describe_file(&c, path))
