/* Python sites of threads that released the GIL.
 *
 * Frames are read only by a thread that holds the GIL (python_walk.c). But
 * the Python CUDA stack releases it around every driver call (cuda.bindings,
 * which numba-cuda and cuda.core use, CuPy's Cython modules, ctypes,
 * PyTorch's pybind11 bindings), so a launch or an allocation is almost
 * never made holding it. Its Python site is still known: the thread cannot
 * run Python code again before it takes the GIL back, so its frames at the
 * call are those it had when it released the GIL. The site is taken then,
 * while the thread still holds it.
 *
 * Those releases are calls of PyEval_SaveThread and PyEval_RestoreThread
 * made by extension modules (Py_BEGIN_ALLOW_THREADS and its kin), through
 * each module's own global offset table. Preloading cannot route them here
 * where the interpreter is built into the python executable (Debian's,
 * Ubuntu's, conda's, the standalone builds): the executable's definitions
 * come first. So the slots of those two names in each loaded object that
 * imports them are pointed at this file's wrappers: the slot written
 * atomically, a page the loader made read-only after relocation (RELRO)
 * made writable for the write only. The interpreter's own releases (its
 * I/O) are not routed: the interpreter defines the names, it does not
 * import them. Objects loaded later are looked at when a thread is found
 * to have released the GIL unseen (the loader's count of loads changed).
 *
 * Each thread keeps the sites of its releases on a small stack: a release
 * inside a callback that took the GIL back in a released region pops back
 * to the outer one. */
#include "python_gil.h"

#include "elf_dynamic.h"
#include "intercept.h"
#include "python_walk.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>

#if defined(__x86_64__)
#define RELOC_JUMP_SLOT R_X86_64_JUMP_SLOT
#define RELOC_GLOB_DAT R_X86_64_GLOB_DAT
#elif defined(__aarch64__)
#define RELOC_JUMP_SLOT R_AARCH64_JUMP_SLOT
#define RELOC_GLOB_DAT R_AARCH64_GLOB_DAT
#endif

typedef void *(*save_fn)(void);
typedef void (*restore_fn)(void *);

static save_fn real_save;
static restore_fn real_restore;

#define RELEASES_MAX 8u

static __thread uint32_t released[RELEASES_MAX] __attribute__((tls_model("initial-exec")));
/* The thread state each release detached: attached again, the thread has
 * taken the GIL back inside the release (a callback into Python). */
static __thread const void *released_state[RELEASES_MAX] __attribute__((tls_model("initial-exec")));
static __thread uint32_t releases __attribute__((tls_model("initial-exec")));

/* The wrappers: called by the thread that releases (holding the GIL) and
 * takes back the GIL. */
static void *save_thread(void)
{
    int saved_errno = errno;
    uint32_t depth = releases;
    if (depth < RELEASES_MAX) {
        released[depth] = gt_python_site_id_releasing();
        released_state[depth] = gt_python_attached();
    }
    releases = depth + 1;
    errno = saved_errno;
    return real_save();
}

static void restore_thread(void *state)
{
    real_restore(state);
    if (releases) releases--;
}

#if defined(RELOC_JUMP_SLOT)

static uintptr_t page_size;
static uintptr_t own_base; /* this library's load address: never written */
static atomic_flag scanning = ATOMIC_FLAG_INIT;
static _Atomic unsigned long long scanned_loads; /* the loader's count when last looked */
static unsigned long long scanned_unloads;

/* The objects looked at already, by load address (under `scanning`): only
 * new ones are read at the next look. Forgotten whenever an object was
 * unloaded (a new one may load where it was); when full, every object is
 * looked at again (writing a slot twice is harmless). */
#define SEEN_SLOTS 2048u
static uintptr_t seen[SEEN_SLOTS];
static unsigned seen_count;

static int seen_before(uintptr_t base)
{
    uint32_t i = (uint32_t)((base >> 12) * 0x9e3779b97f4a7c15ull >> 53);
    for (unsigned n = 0; n < SEEN_SLOTS; n++, i = (i + 1) & (SEEN_SLOTS - 1)) {
        if (seen[i] == base) return 1;
        if (!seen[i]) {
            if (seen_count >= SEEN_SLOTS / 2) return 0;
            seen[i] = base;
            seen_count++;
            return 0;
        }
    }
    return 0;
}
static pthread_once_t started = PTHREAD_ONCE_INIT;

/* The object's dynamic section, NULL when it has none. */
static const ElfW(Dyn) * dynamic_of(const struct dl_phdr_info *info)
{
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            return (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    return NULL;
}

/* Whether the word at addr lies in the part of the object the loader made
 * read-only after relocation (it rounds the part's end down to a page). */
static int in_relro(const struct dl_phdr_info *info, uintptr_t addr)
{
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[i];
        if (p->p_type != PT_GNU_RELRO) continue;
        uintptr_t start = (info->dlpi_addr + p->p_vaddr) & ~(page_size - 1);
        uintptr_t end = (info->dlpi_addr + p->p_vaddr + p->p_memsz) & ~(page_size - 1);
        return addr >= start && addr < end;
    }
    return 0;
}

static void point_at(const struct dl_phdr_info *info, uintptr_t *slot, uintptr_t to)
{
    if (__atomic_load_n(slot, __ATOMIC_RELAXED) == to) return;
    if (!in_relro(info, (uintptr_t)slot)) {
        __atomic_store_n(slot, to, __ATOMIC_RELEASE);
        return;
    }
    void *page = (void *)((uintptr_t)slot & ~(page_size - 1));
    if (mprotect(page, page_size, PROT_READ | PROT_WRITE) != 0) return;
    __atomic_store_n(slot, to, __ATOMIC_RELEASE);
    mprotect(page, page_size, PROT_READ);
}

static int route_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    const ElfW(Dyn) *ld = dynamic_of(info);
    if (info->dlpi_addr == own_base || seen_before(info->dlpi_addr) || !ld) return 0;
    gt_elf_dynamic d;
    gt_elf_dynamic_read(ld, info->dlpi_addr, &d);
    if (!d.syms || !d.strs) return 0;
    const ElfW(Rela) * tables[2] = {d.plt_relocs, d.relocs};
    size_t bytes[2] = {d.plt_relocs_bytes, d.relocs_bytes};
    for (int t = 0; t < 2; t++) {
        if (!tables[t]) continue;
        size_t n = bytes[t] / sizeof(ElfW(Rela));
        for (size_t i = 0; i < n; i++) {
            const ElfW(Rela) *r = &tables[t][i];
            unsigned long type = ELF64_R_TYPE(r->r_info);
            if (type != RELOC_JUMP_SLOT && type != RELOC_GLOB_DAT) continue;
            const ElfW(Sym) *sym = &d.syms[ELF64_R_SYM(r->r_info)];
            if (sym->st_shndx != SHN_UNDEF || sym->st_name >= d.strs_size) continue;
            const char *name = d.strs + sym->st_name;
            uintptr_t to;
            if (strcmp(name, "PyEval_SaveThread") == 0)
                to = (uintptr_t)save_thread;
            else if (strcmp(name, "PyEval_RestoreThread") == 0)
                to = (uintptr_t)restore_thread;
            else
                continue;
            point_at(info, (uintptr_t *)(info->dlpi_addr + r->r_offset), to);
        }
    }
    return 0;
}

typedef struct loader_counts {
    unsigned long long loads, unloads;
} loader_counts;

static int count_loads(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    loader_counts *c = data;
    c->loads = info->dlpi_adds;
    c->unloads = info->dlpi_subs;
    return 1;
}

/* Routes the objects' slots when objects were loaded since the last look. */
static void route_new_objects(void)
{
    loader_counts now = {0, 0};
    dl_iterate_phdr(count_loads, &now);
    if (now.loads == atomic_load_explicit(&scanned_loads, memory_order_relaxed)) return;
    if (atomic_flag_test_and_set_explicit(&scanning, memory_order_acquire)) return;
    int saved_errno = errno;
    if (now.unloads != scanned_unloads || seen_count >= SEEN_SLOTS / 2) {
        memset(seen, 0, sizeof seen);
        seen_count = 0;
        scanned_unloads = now.unloads;
    }
    dl_iterate_phdr(route_object, NULL);
    errno = saved_errno;
    atomic_store_explicit(&scanned_loads, now.loads, memory_order_relaxed);
    atomic_flag_clear_explicit(&scanning, memory_order_release);
}

static void start(void)
{
    gt_dlsym_fn lookup = gt_libc_dlsym();
    if (!lookup) return;
    restore_fn restore = (restore_fn)lookup(RTLD_DEFAULT, "PyEval_RestoreThread");
    save_fn save = (save_fn)lookup(RTLD_DEFAULT, "PyEval_SaveThread");
    Dl_info self;
    struct link_map *map = NULL;
    if (!save || !restore || !dladdr1((void *)save_thread, &self, (void **)&map, RTLD_DL_LINKMAP) ||
        !map)
        return;
    own_base = (uintptr_t)map->l_addr;
    page_size = (uintptr_t)getauxval(AT_PAGESZ);
    if (!page_size) page_size = 4096;
    real_restore = restore;
    real_save = save;
}

void gt_python_gil_watch(void)
{
    pthread_once(&started, start);
    if (real_save) route_new_objects();
}

void gt_python_gil_fork_child(void)
{
    atomic_flag_clear_explicit(&scanning, memory_order_relaxed);
}

#else

void gt_python_gil_watch(void) {}

void gt_python_gil_fork_child(void) {}

static void route_new_objects(void) {}

#endif

int gt_python_released(uint32_t *id)
{
    uint32_t depth = releases;
    if (!depth || depth > RELEASES_MAX || gt_python_attached() == released_state[depth - 1])
        return 0;
    *id = released[depth - 1];
    return 1;
}

/* Asking the loader whether objects were loaded takes its lock: a thread
 * that keeps making calls in releases this library cannot see asks at its
 * first such call and then at one in UNSEEN_LOOK_EVERY. */
#define UNSEEN_LOOK_EVERY 64u
static __thread uint32_t unseen_calls __attribute__((tls_model("initial-exec")));

void gt_python_release_unseen(void)
{
    if (real_save && unseen_calls++ % UNSEEN_LOOK_EVERY == 0) route_new_objects();
}
