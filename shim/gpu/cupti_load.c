/* Finding and loading libcupti (DESIGN §5), only once the process makes a
 * CUDA call, never as a link-time dependency.
 *
 * Which major version: the one of the CUDA runtime the process has mapped
 * (a pip wheel's libcudart.so.12 wants the CUPTI 12 wheel), else the
 * driver's; CUPTI of that major is built for it, and an older CUPTI runs
 * on a newer driver. A libcupti of another major already in the process
 * rules CUPTI out: two majors in one process is never safe. Where: the
 * one GPUTRACE_CUPTI_PATH names (and no other); one already mapped; beside
 * the process's libcudart (pip wheels: the same folder for CUDA 13, the
 * cuda_cupti package beside cuda_runtime for 12); beside its libcuda.so.1
 * (distribution packages put both in the system's library folder); under
 * CUDA_HOME and CUDA_PATH; the toolkit's folders under /usr/local/cuda;
 * the loader's own path.
 *
 * libcupti finds the driver with dlsym: those lookups get the driver's own
 * functions, not the shim's wrappers (gt_dlsym_private), so that CUPTI's
 * own CUDA calls are never recorded as the program's. */
#include "cupti_internal.h"

#include <cuda.h>
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "intercept.h"
#include "resolve.h"

gt_cupti_api gt_cupti;

/* Majors whose records this build reads (their leading fields lie alike). */
#define MAJOR_MIN 12
#define MAJOR_MAX 13

typedef struct search {
    int major;
    char *why;
    size_t why_cap;
    size_t why_len;
} search;

__attribute__((format(printf, 2, 3))) static void note(search *s, const char *fmt, ...)
{
    if (s->why_len >= s->why_cap) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(s->why + s->why_len, s->why_cap - s->why_len, fmt, ap);
    va_end(ap);
    if (n > 0) s->why_len += (size_t)n;
}

/* ------------------------------------------------------------ what is mapped */

typedef struct mapped {
    const char *base; /* the file name searched for: "libcudart.so" */
    char path[GT_PATH_MAX];
    int major; /* from the file name, 0 when it has none */
} mapped;

static int major_of(const char *name)
{
    const char *so = strstr(name, ".so.");
    int major = so ? atoi(so + 4) : 0;
    return major > 0 ? major : 0;
}

/* base ("libcuda.so") with a version after it, or as it is: a program that
 * opened the unversioned name has it mapped under that name. */
static int find_mapped(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    mapped *m = arg;
    const char *slash = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
    const char *file = slash ? slash + 1 : info->dlpi_name;
    size_t n = strlen(m->base);
    if (!file || strncmp(file, m->base, n) != 0 || (file[n] != '.' && file[n] != '\0')) return 0;
    snprintf(m->path, sizeof m->path, "%s", info->dlpi_name);
    m->major = major_of(file);
    return 1;
}

static int is_mapped(mapped *m, const char *base)
{
    m->base = base;
    m->path[0] = '\0';
    m->major = 0;
    return dl_iterate_phdr(find_mapped, m) != 0;
}

/* The driver's CUDA major (13000 -> 13), 0 when it cannot say. */
static int driver_major(void)
{
    CUresult (*version)(int *) = (CUresult(*)(int *))gt_cuda_real("cuDriverGetVersion");
    int v = 0;
    if (!version || version(&v) != CUDA_SUCCESS) return 0;
    return v / 1000;
}

/* ------------------------------------------------------------ loading one */

#define TAKE(field, name)                                                                          \
    do {                                                                                           \
        *(void **)&gt_cupti.field = gt_real_dlsym()(handle, name);                                 \
        if (!gt_cupti.field) missing = name;                                                       \
    } while (0)

/* Loads path and takes its entry points; 0 and the description in found. */
static int try_path(search *s, const char *path, char *found, size_t cap)
{
    if (access(path, R_OK) != 0 && strchr(path, '/')) return -1;
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *err = dlerror();
        note(s, "%s; ", err ? err : path);
        return -1;
    }
    const char *missing = NULL;
    TAKE(get_version, "cuptiGetVersion");
    TAKE(get_result_string, "cuptiGetResultString");
    TAKE(get_timestamp, "cuptiGetTimestamp");
    TAKE(subscribe, "cuptiSubscribe");
    TAKE(unsubscribe, "cuptiUnsubscribe");
    TAKE(enable_callback, "cuptiEnableCallback");
    TAKE(register_callbacks, "cuptiActivityRegisterCallbacks");
    TAKE(enable, "cuptiActivityEnable");
    TAKE(disable, "cuptiActivityDisable");
    TAKE(flush_all, "cuptiActivityFlushAll");
    TAKE(next_record, "cuptiActivityGetNextRecord");
    TAKE(dropped_records, "cuptiActivityGetNumDroppedRecords");
    uint32_t api = 0;
    CUptiResult version = missing ? CUPTI_SUCCESS : gt_cupti.get_version(&api);
    if (missing || version != CUPTI_SUCCESS) {
        /* A CUPTI newer than the driver refuses here. */
        if (missing)
            note(s, "%s: %s is missing; ", path, missing);
        else
            note(s, "%s: cuptiGetVersion: %s (%d); ", path, gt_cupti_result_name(version),
                 (int)version);
        dlclose(handle);
        return -1;
    }
    /* The file's major, else the API version's (130001 is 13.0; before 13
     * the API version was a small counter, 17 and up for CUDA 12). */
    const char *slash = strrchr(path, '/');
    int major = major_of(slash ? slash + 1 : path);
    if (!major) major = api >= 100000 ? (int)(api / 10000) : api >= 17 ? 12 : 11;
    if (major != s->major) {
        char want[48];
        snprintf(want, sizeof want, "CUPTI %d, the process's CUDA is %d", major, s->major);
        note(s, "%s is %s; ", path, want);
        dlclose(handle);
        return -1;
    }
    /* libcupti's own driver lookups must reach the driver, not the shim. */
    Dl_info info;
    if (dladdr((void *)gt_cupti.get_version, &info) && info.dli_fbase)
        gt_dlsym_private(info.dli_fbase);
    snprintf(found, cap, "%s (CUPTI %d, API version %u)", path, major, (unsigned)api);
    return 0;
}

/* dir/file, tried when it exists. */
static int try_in(search *s, const char *dir, const char *file, char *found, size_t cap)
{
    if (!dir || !dir[0]) return -1;
    char path[GT_PATH_MAX];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, file) >= sizeof path) return -1;
    if (access(path, R_OK) != 0) return -1;
    return try_path(s, path, found, cap);
}

/* The folder of a mapped library's path, into dir. */
static void folder_of(const char *path, char *dir, size_t cap)
{
    snprintf(dir, cap, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    else
        dir[0] = '\0';
}

static int try_beside(search *s, const char *base, const char *file, char *found, size_t cap)
{
    mapped m;
    if (!is_mapped(&m, base)) return -1;
    char dir[GT_PATH_MAX];
    folder_of(m.path, dir, sizeof dir);
    if (try_in(s, dir, file, found, cap) == 0) return 0;
    /* CUDA 12's pip wheels: nvidia/cuda_runtime/lib and nvidia/cuda_cupti/lib. */
    char sibling[GT_PATH_MAX];
    if ((size_t)snprintf(sibling, sizeof sibling, "%s/../../cuda_cupti/lib", dir) >= sizeof sibling)
        return -1;
    return try_in(s, sibling, file, found, cap);
}

static int try_toolkit(search *s, const char *root, const char *file, char *found, size_t cap)
{
    static const char *const subdirs[] = {"lib64", "extras/CUPTI/lib64", "lib"};
    if (!root || !root[0]) return -1;
    for (size_t i = 0; i < sizeof subdirs / sizeof subdirs[0]; i++) {
        char dir[GT_PATH_MAX];
        if ((size_t)snprintf(dir, sizeof dir, "%s/%s", root, subdirs[i]) >= sizeof dir) continue;
        if (try_in(s, dir, file, found, cap) == 0) return 0;
    }
    return -1;
}

int gt_cupti_load(const gt_cupti_where *where, char *found, size_t found_cap, char *why,
                  size_t why_cap)
{
    search s = {.why = why, .why_cap = why_cap};
    why[0] = '\0';
    mapped rt, cupti;
    s.major = is_mapped(&rt, "libcudart.so") && rt.major ? rt.major : driver_major();
    if (s.major < MAJOR_MIN || s.major > MAJOR_MAX) {
        snprintf(why, why_cap, "the process's CUDA is %d: this build reads CUPTI %d to %d", s.major,
                 MAJOR_MIN, MAJOR_MAX);
        return -1;
    }
    if (where->cupti_path[0]) {
        if (try_path(&s, where->cupti_path, found, found_cap) == 0) return 0;
        size_t used = strlen(why);
        snprintf(why + used, why_cap > used ? why_cap - used : 0,
                 "GPUTRACE_CUPTI_PATH %s cannot be used", where->cupti_path);
        return -1;
    }
    if (is_mapped(&cupti, "libcupti.so")) {
        if (try_path(&s, cupti.path, found, found_cap) == 0) return 0;
        snprintf(why, why_cap, "the process already has %s, not CUPTI %d", cupti.path, s.major);
        return -1;
    }
    char file[32];
    snprintf(file, sizeof file, "libcupti.so.%d", s.major);
    if (try_beside(&s, "libcudart.so", file, found, found_cap) == 0 ||
        try_beside(&s, "libcuda.so", file, found, found_cap) == 0 ||
        try_toolkit(&s, where->cuda_home, file, found, found_cap) == 0 ||
        try_toolkit(&s, where->cuda_path, file, found, found_cap) == 0 ||
        try_toolkit(&s, "/usr/local/cuda", file, found, found_cap) == 0 ||
        try_path(&s, file, found, found_cap) == 0)
        return 0;
    size_t used = strlen(why);
    snprintf(why + used, why_cap > used ? why_cap - used : 0,
             "no usable %s (beside libcudart and libcuda, CUDA_HOME, CUDA_PATH, /usr/local/cuda, "
             "the loader's path; GPUTRACE_CUPTI_PATH names one)",
             file);
    return -1;
}

/* CUPTI names its results itself, but not before it has started: the
 * results a start can meet are named here too. */
#define NAMED(r)                                                                                   \
    case r:                                                                                        \
        return #r
const char *gt_cupti_result_name(CUptiResult r)
{
    const char *s = NULL;
    if (gt_cupti.get_result_string && gt_cupti.get_result_string(r, &s) == CUPTI_SUCCESS && s)
        return s;
    switch (r) {
        NAMED(CUPTI_ERROR_NOT_SUPPORTED);
        NAMED(CUPTI_ERROR_NOT_COMPATIBLE);
        NAMED(CUPTI_ERROR_NOT_INITIALIZED);
        NAMED(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES);
        NAMED(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
        NAMED(CUPTI_ERROR_UNKNOWN);
    default:
        return "a CUPTI error";
    }
}
#undef NAMED
