/* The loaded objects that call stacks pass through (modules.c): each
 * registered once, on the first return address seen in it, with what
 * the unwinder and the symbolizer need. */
#ifndef GT_MODULES_H
#define GT_MODULES_H

#include <stdint.h>

/* Whose code an object is: the user's (anything else), this library's, or
 * a CUDA library's (the driver, the runtime, CUPTI, the math and
 * communication libraries: see modules.c). */
enum gt_module_class { GT_MODULE_USER, GT_MODULE_SELF, GT_MODULE_CUDA };

#define GT_MODULES_MAX 1024u
#define GT_MODULE_NONE GT_MODULES_MAX /* an index no module has */

typedef struct gt_module {
    uintptr_t bias;           /* load bias: an address minus it is the offset in the file */
    uintptr_t start, end;     /* the object's mapped segments */
    const void *eh_frame_hdr; /* its PT_GNU_EH_FRAME segment; NULL when none */
    const char *path;         /* the file it was loaded from ("" unknown) */
    uint8_t cls;              /* enum gt_module_class */
} gt_module;

/* The module holding code address pc, registered on first sight (its
 * index into *index, GT_MODULE_NONE when the registry is full or busy:
 * the module is still returned, in *scratch); NULL when no loaded object
 * holds pc. Takes the loader's lock briefly (dl_iterate_phdr): called
 * once per new return address, not per call. */
const gt_module *gt_module_find(uintptr_t pc, uint32_t *index, gt_module *scratch);

/* Whether the registry is full: a module found without an index is then
 * never registered (otherwise another thread was registering one). */
int gt_modules_full(void);

/* A registered module, NULL for GT_MODULE_NONE or an index not given out. */
const gt_module *gt_module_get(uint32_t index);

/* In a forked child: a registration another thread of the parent was
 * making is abandoned. */
void gt_modules_fork_child(void);

/* Whether a file name (a path, or a base name) is a CUDA library's. */
int gt_module_is_cuda_library(const char *path);

#endif
