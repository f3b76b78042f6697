/* An independent reference recorder for the real-GPU validation kit.
 *
 * Loaded into a CUDA program with CUDA_INJECTION64_PATH=libcupti_ref.so, it
 * uses the CUPTI Activity API (not gputrace's code) to total every kernel,
 * copy and memset the GPU ran, and writes those totals as JSON at exit to
 * $GPUTRACE_CUPTI_OUT (default cupti_ref.<pid>.json). scripts/gpu-check.sh
 * compares them with gputrace's report of the same program.
 *
 * Output:
 *   {"tool": "cupti_ref", "dropped": N,
 *    "kernels": [{"name", "calls", "gpu_ns"}],      name demangled, as gputrace keys it
 *    "memcpy":  [{"direction", "host_memory", "calls", "bytes", "gpu_ns"}],
 *    "memset":  [{"calls", "bytes", "gpu_ns"}]}
 */
#define _GNU_SOURCE
#include <cupti.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define ACTIVITY_BUFFER_BYTES (8u << 20)
#define ACTIVITY_ALIGN 8u
#define MAX_ROWS 4096u

typedef struct total_row {
    char *name; /* kernels: demangled name; copies: "direction/host_memory" */
    uint64_t calls;
    uint64_t bytes;
    uint64_t gpu_ns;
} total_row;

typedef struct total_table {
    total_row rows[MAX_ROWS];
    unsigned count;
    uint64_t overflow; /* records that found no free row */
} total_table;

static pthread_mutex_t totals_lock = PTHREAD_MUTEX_INITIALIZER;
static total_table kernels, copies, memsets;
static uint64_t dropped_records;

static total_row *row_for(total_table *t, const char *name)
{
    for (unsigned i = 0; i < t->count; i++)
        if (strcmp(t->rows[i].name, name) == 0) return &t->rows[i];
    if (t->count == MAX_ROWS) {
        t->overflow++;
        return NULL;
    }
    total_row *r = &t->rows[t->count];
    r->name = strdup(name);
    if (!r->name) return NULL;
    t->count++;
    return r;
}

static void add_to(total_table *t, const char *name, uint64_t bytes, uint64_t start, uint64_t end)
{
    total_row *r = row_for(t, name);
    if (!r) return;
    r->calls++;
    r->bytes += bytes;
    r->gpu_ns += end > start ? end - start : 0;
}

/* Kernel names arrive mangled; gputrace reports them demangled. The
 * demangler is looked up at run time so that this C library needs no C++
 * runtime of its own (every CUDA program has one). */
typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

static void add_kernel(const char *mangled, uint64_t start, uint64_t end)
{
    static demangle_fn demangle;
    static int looked_up;
    if (!looked_up) {
        demangle = (demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
        looked_up = 1;
    }
    char *plain = NULL;
    int status = -1;
    if (demangle && mangled) plain = demangle(mangled, NULL, NULL, &status);
    add_to(&kernels, status == 0 && plain ? plain : (mangled ? mangled : "?"), 0, start, end);
    free(plain);
}

static const char *copy_direction(uint8_t kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "PtoP";
    default: return "other";
    }
}

static const char *host_memory(uint8_t kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE: return "pageable";
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED: return "pinned";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED: return "managed";
    default: return "none";
    }
}

static void add_copy(const CUpti_ActivityMemcpy6 *m)
{
    /* The host side is the source of an upload and the destination of a
     * download; device-only copies have none. */
    uint8_t host = CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN;
    if (m->copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD) host = m->srcKind;
    if (m->copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH) host = m->dstKind;
    if (m->copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOH) host = m->srcKind;
    char key[64];
    snprintf(key, sizeof key, "%s/%s", copy_direction(m->copyKind), host_memory(host));
    add_to(&copies, key, m->bytes, m->start, m->end);
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    void *p = NULL;
    if (posix_memalign(&p, ACTIVITY_ALIGN, ACTIVITY_BUFFER_BYTES) != 0) p = NULL;
    *buffer = p;
    *size = p ? ACTIVITY_BUFFER_BYTES : 0;
    *max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                      size_t valid)
{
    CUpti_Activity *rec = NULL;
    pthread_mutex_lock(&totals_lock);
    while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
        switch (rec->kind) {
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
            const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)rec;
            add_kernel(k->name, k->start, k->end);
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY:
            add_copy((const CUpti_ActivityMemcpy6 *)rec);
            break;
        case CUPTI_ACTIVITY_KIND_MEMSET: {
            const CUpti_ActivityMemset4 *m = (const CUpti_ActivityMemset4 *)rec;
            add_to(&memsets, "memset", m->bytes, m->start, m->end);
            break;
        }
        default:
            break;
        }
    }
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS)
        dropped_records += dropped;
    pthread_mutex_unlock(&totals_lock);
    (void)size;
    free(buffer);
}

static void write_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

static void write_totals(FILE *f)
{
    fprintf(f, "{\"tool\": \"cupti_ref\", \"dropped\": %llu,\n \"kernels\": [",
            (unsigned long long)(dropped_records + kernels.overflow + copies.overflow +
                                 memsets.overflow));
    for (unsigned i = 0; i < kernels.count; i++) {
        const total_row *r = &kernels.rows[i];
        fprintf(f, "%s\n  {\"name\": ", i ? "," : "");
        write_json_string(f, r->name);
        fprintf(f, ", \"calls\": %llu, \"gpu_ns\": %llu}", (unsigned long long)r->calls,
                (unsigned long long)r->gpu_ns);
    }
    fputs("],\n \"memcpy\": [", f);
    for (unsigned i = 0; i < copies.count; i++) {
        const total_row *r = &copies.rows[i];
        const char *slash = strchr(r->name, '/');
        fprintf(f,
                "%s\n  {\"direction\": \"%.*s\", \"host_memory\": \"%s\", \"calls\": %llu, "
                "\"bytes\": %llu, \"gpu_ns\": %llu}",
                i ? "," : "", (int)(slash - r->name), r->name, slash + 1,
                (unsigned long long)r->calls, (unsigned long long)r->bytes,
                (unsigned long long)r->gpu_ns);
    }
    fputs("],\n \"memset\": [", f);
    for (unsigned i = 0; i < memsets.count; i++) {
        const total_row *r = &memsets.rows[i];
        fprintf(f, "%s\n  {\"calls\": %llu, \"bytes\": %llu, \"gpu_ns\": %llu}", i ? "," : "",
                (unsigned long long)r->calls, (unsigned long long)r->bytes,
                (unsigned long long)r->gpu_ns);
    }
    fputs("]}\n", f);
}

static void flush_and_write(void)
{
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    const char *path = getenv("GPUTRACE_CUPTI_OUT");
    char fallback[64];
    if (!path || !*path) {
        snprintf(fallback, sizeof fallback, "cupti_ref.%d.json", (int)getpid());
        path = fallback;
    }
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "cupti_ref: cannot write %s\n", path);
        return;
    }
    pthread_mutex_lock(&totals_lock);
    write_totals(f);
    pthread_mutex_unlock(&totals_lock);
    if (fclose(f) != 0) fprintf(stderr, "cupti_ref: error writing %s\n", path);
}

static int enable(CUpti_ActivityKind kind)
{
    CUptiResult r = cuptiActivityEnable(kind);
    if (r == CUPTI_SUCCESS) return 0;
    const char *msg = "?";
    cuptiGetResultString(r, &msg);
    fprintf(stderr, "cupti_ref: cannot enable activity kind %d: %s\n", (int)kind, msg);
    return -1;
}

/* Called by the CUDA driver when it loads the library named in
 * CUDA_INJECTION64_PATH. */
EXPORT int InitializeInjection(void)
{
    if (cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS) {
        fprintf(stderr, "cupti_ref: cannot register activity buffers\n");
        return 0;
    }
    int failed = enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    failed |= enable(CUPTI_ACTIVITY_KIND_MEMCPY);
    failed |= enable(CUPTI_ACTIVITY_KIND_MEMSET);
    atexit(flush_and_write);
    return failed ? 0 : 1;
}
