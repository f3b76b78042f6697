/* The loaded objects that call stacks pass through.
 *
 * Registration appends to a fixed array and publishes the new count with
 * a store-release (readers load it with acquire, then read entries below
 * it); appending takes a try-lock, and a caller that finds it taken does
 * without an index rather than wait, so a hook never blocks on another
 * thread here. An object unloaded and another loaded at its addresses
 * keeps the first one's entry: the registry, like the unwinder's cache of
 * return addresses, outlives dlclose (docs/limitations.md). */
#include "modules.h"

#include <link.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static gt_module modules[GT_MODULES_MAX];
static _Atomic uint32_t count; /* release by the registrar, acquire by readers */
static atomic_flag registering = ATOMIC_FLAG_INIT;

/* The CUDA libraries, by the start of their file names: a frame in them is
 * never the user's. */
static const char *const cuda_libraries[] = {
    "libcuda.so",    "libcudart.so",  "libcupti.so",     "libnvrtc.so",    "libnvrtc-builtins",
    "libnvJitLink.", "libnvvm.so",    "libcublas.so",    "libcublasLt.so", "libcufft.so",
    "libcufftw.so",  "libcurand.so",  "libcusparse.so",  "libcusolver.so", "libcudnn",
    "libnccl.so",    "libnvToolsExt", "libnvtx3interop", "libnvperf",      "libcaffe2_nvrtc",
};

int gt_module_is_cuda_library(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    for (size_t i = 0; i < sizeof cuda_libraries / sizeof cuda_libraries[0]; i++)
        if (strncmp(base, cuda_libraries[i], strlen(cuda_libraries[i])) == 0) return 1;
    return 0;
}

typedef struct search {
    uintptr_t pc;
    gt_module *found;
    const char *name;
} search;

static int visit(struct dl_phdr_info *info, size_t size, void *ctx)
{
    (void)size;
    search *s = ctx;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    const void *eh = NULL;
    int holds = 0;
    for (unsigned i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t start = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_GNU_EH_FRAME) eh = (const void *)start;
        if (ph->p_type != PT_LOAD) continue;
        if (start < lo) lo = start;
        if (start + ph->p_memsz > hi) hi = start + ph->p_memsz;
        if ((ph->p_flags & PF_X) && s->pc >= start && s->pc - start < ph->p_memsz) holds = 1;
    }
    if (!holds) return 0;
    *s->found = (gt_module){.bias = info->dlpi_addr, .start = lo, .end = hi, .eh_frame_hdr = eh};
    s->name = info->dlpi_name;
    return 1;
}

/* The main program's file (its link map names it ""), read by the
 * registrar only, under the try-lock. */
static const char *program_path(void)
{
    static char path[4096];
    if (!path[0]) {
        ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
        path[n > 0 ? n : 0] = '\0';
    }
    return path;
}

static uint8_t class_of(const gt_module *m, const char *path)
{
    uintptr_t self = (uintptr_t)&gt_module_find;
    if (self >= m->start && self < m->end) return GT_MODULE_SELF;
    return gt_module_is_cuda_library(path) ? GT_MODULE_CUDA : GT_MODULE_USER;
}

static uint32_t known(const gt_module *m, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (modules[i].start == m->start && modules[i].bias == m->bias) return i;
    return GT_MODULE_NONE;
}

const gt_module *gt_module_find(uintptr_t pc, uint32_t *index, gt_module *scratch)
{
    *index = GT_MODULE_NONE;
    search s = {pc, scratch, NULL};
    if (!dl_iterate_phdr(visit, &s)) return NULL;
    const char *name = s.name ? s.name : "";
    scratch->cls = class_of(scratch, name);
    scratch->path = "";
    uint32_t n = atomic_load_explicit(&count, memory_order_acquire);
    uint32_t i = known(scratch, n);
    if (i != GT_MODULE_NONE) {
        *index = i;
        return &modules[i];
    }
    if (atomic_flag_test_and_set_explicit(&registering, memory_order_acquire)) return scratch;
    n = atomic_load_explicit(&count, memory_order_acquire);
    i = known(scratch, n);
    if (i == GT_MODULE_NONE && n < GT_MODULES_MAX) {
        char *copy = strdup(name[0] ? name : program_path());
        scratch->path = copy ? copy : "";
        modules[n] = *scratch;
        atomic_store_explicit(&count, n + 1, memory_order_release);
        i = n;
    }
    atomic_flag_clear_explicit(&registering, memory_order_release);
    if (i == GT_MODULE_NONE) return scratch;
    *index = i;
    return &modules[i];
}

void gt_modules_fork_child(void)
{
    atomic_flag_clear_explicit(&registering, memory_order_relaxed);
}

int gt_modules_full(void)
{
    return atomic_load_explicit(&count, memory_order_acquire) >= GT_MODULES_MAX;
}

const gt_module *gt_module_get(uint32_t index)
{
    return index < atomic_load_explicit(&count, memory_order_acquire) ? &modules[index] : NULL;
}
