/* The expectations of a test program (expect.h), as JSON:
 *
 *   {"memory": [{"device", "allocs", "frees", "peak_bytes", "current_bytes",
 *                "leaked_allocs", "leaked_bytes", "unknown_frees",
 *                "context_released_allocs", "context_released_bytes"}],
 *    "module":  [{"api", "kind", "calls", "bytes"}],
 *    "compile": [{"api", "name", "ok", "calls", "bytes", "wall_ns", "programs"}],
 *    "programs_expected": whether expect_compile_program was called,
 *    "api": {"name": calls}, "api_errors": [{"api", "error", "calls"}],
 *    "kernels": {"name": calls}} */
#include "expect.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ROWS 256
#define NAME_MAX_LEN 128

typedef struct mem_row {
    int device;
    unsigned long long allocs, frees, current, peak, live, unknown, released, released_bytes;
} mem_row;

typedef struct named_row {
    char a[NAME_MAX_LEN], b[NAME_MAX_LEN];
    bool ok;
    unsigned long long calls, bytes, wall_ns, programs;
} named_row;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static mem_row mem[MAX_ROWS];
static named_row modules[MAX_ROWS], compiles[MAX_ROWS], apis[MAX_ROWS], errors[MAX_ROWS],
    kernels[MAX_ROWS];
static int n_mem, n_modules, n_compiles, n_apis, n_errors, n_kernels;
static bool programs_expected;

static void overflow(void)
{
    fprintf(stderr, "expect: too many rows\n");
    exit(1);
}

static mem_row *mem_row_of(int device)
{
    for (int i = 0; i < n_mem; i++)
        if (mem[i].device == device) return &mem[i];
    if (n_mem == MAX_ROWS) overflow();
    mem[n_mem].device = device;
    return &mem[n_mem++];
}

void expect_alloc(int row, unsigned long long bytes)
{
    pthread_mutex_lock(&lock);
    mem_row *r = mem_row_of(row);
    r->allocs++;
    r->live++;
    r->current += bytes;
    if (r->current > r->peak) r->peak = r->current;
    pthread_mutex_unlock(&lock);
}

void expect_free(int row, unsigned long long bytes)
{
    pthread_mutex_lock(&lock);
    mem_row *r = mem_row_of(row);
    r->frees++;
    r->live--;
    r->current -= bytes;
    pthread_mutex_unlock(&lock);
}

void expect_unknown_free(int row)
{
    pthread_mutex_lock(&lock);
    mem_row_of(row)->unknown++;
    pthread_mutex_unlock(&lock);
}

void expect_context_end(int row)
{
    pthread_mutex_lock(&lock);
    mem_row *r = mem_row_of(row);
    r->released += r->live;
    r->released_bytes += r->current;
    r->live = r->current = 0;
    pthread_mutex_unlock(&lock);
}

/* The row of (a, b, ok) in rows, added when new. */
static named_row *named(named_row *rows, int *n, const char *a, const char *b, bool ok)
{
    for (int i = 0; i < *n; i++)
        if (!strcmp(rows[i].a, a) && !strcmp(rows[i].b, b) && rows[i].ok == ok) return &rows[i];
    if (*n == MAX_ROWS || strlen(a) >= NAME_MAX_LEN || strlen(b) >= NAME_MAX_LEN) overflow();
    named_row *r = &rows[(*n)++];
    strcpy(r->a, a);
    strcpy(r->b, b);
    r->ok = ok;
    return r;
}

void expect_module(const char *api, const char *kind, unsigned long long bytes)
{
    pthread_mutex_lock(&lock);
    named_row *r = named(modules, &n_modules, api, kind, true);
    r->calls++;
    r->bytes += bytes;
    pthread_mutex_unlock(&lock);
}

void expect_compile(const char *api, const char *name, bool ok, unsigned long long bytes,
                    unsigned long long wall_ns)
{
    pthread_mutex_lock(&lock);
    named_row *r = named(compiles, &n_compiles, api, name, ok);
    r->calls++;
    r->bytes += bytes;
    r->wall_ns += wall_ns;
    pthread_mutex_unlock(&lock);
}

void expect_compile_program(const char *api, const char *name, bool ok)
{
    pthread_mutex_lock(&lock);
    named(compiles, &n_compiles, api, name, ok)->programs++;
    programs_expected = true;
    pthread_mutex_unlock(&lock);
}

void expect_kernel(const char *name)
{
    pthread_mutex_lock(&lock);
    named(kernels, &n_kernels, name, "", true)->calls++;
    pthread_mutex_unlock(&lock);
}

void expect_api(const char *name, unsigned long long calls)
{
    pthread_mutex_lock(&lock);
    named(apis, &n_apis, name, "", true)->calls = calls;
    pthread_mutex_unlock(&lock);
}

void expect_api_error(const char *name, const char *error)
{
    pthread_mutex_lock(&lock);
    named(errors, &n_errors, name, error, false)->calls++;
    pthread_mutex_unlock(&lock);
}

int expect_write(void)
{
    const char *path = getenv("GT_EXPECT");
    if (!path) return 0;
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    pthread_mutex_lock(&lock);
    fprintf(f, "{\"memory\": [");
    for (int i = 0; i < n_mem; i++)
        fprintf(f,
                "%s{\"device\": %d, \"allocs\": %llu, \"frees\": %llu, \"peak_bytes\": %llu, "
                "\"current_bytes\": %llu, \"leaked_allocs\": %llu, \"leaked_bytes\": %llu, "
                "\"unknown_frees\": %llu, \"context_released_allocs\": %llu, "
                "\"context_released_bytes\": %llu}",
                i ? ", " : "", mem[i].device, mem[i].allocs, mem[i].frees, mem[i].peak,
                mem[i].current, mem[i].live, mem[i].current, mem[i].unknown, mem[i].released,
                mem[i].released_bytes);
    fprintf(f, "],\n \"module\": [");
    for (int i = 0; i < n_modules; i++)
        fprintf(f, "%s{\"api\": \"%s\", \"kind\": \"%s\", \"calls\": %llu, \"bytes\": %llu}",
                i ? ", " : "", modules[i].a, modules[i].b, modules[i].calls, modules[i].bytes);
    fprintf(f, "],\n \"compile\": [");
    for (int i = 0; i < n_compiles; i++)
        fprintf(f,
                "%s{\"api\": \"%s\", \"name\": \"%s\", \"ok\": %s, \"calls\": %llu, "
                "\"bytes\": %llu, \"wall_ns\": %llu, \"programs\": %llu}",
                i ? ", " : "", compiles[i].a, compiles[i].b, compiles[i].ok ? "true" : "false",
                compiles[i].calls, compiles[i].bytes, compiles[i].wall_ns, compiles[i].programs);
    fprintf(f, "],\n \"programs_expected\": %s,\n \"api\": {",
            programs_expected ? "true" : "false");
    for (int i = 0; i < n_apis; i++)
        fprintf(f, "%s\"%s\": %llu", i ? ", " : "", apis[i].a, apis[i].calls);
    fprintf(f, "},\n \"api_errors\": [");
    for (int i = 0; i < n_errors; i++)
        fprintf(f, "%s{\"api\": \"%s\", \"error\": \"%s\", \"calls\": %llu}", i ? ", " : "",
                errors[i].a, errors[i].b, errors[i].calls);
    fprintf(f, "],\n \"kernels\": {");
    for (int i = 0; i < n_kernels; i++)
        fprintf(f, "%s\"%s\": %llu", i ? ", " : "", kernels[i].a, kernels[i].calls);
    fprintf(f, "}}\n");
    pthread_mutex_unlock(&lock);
    return fclose(f) == 0 ? 0 : -1;
}
