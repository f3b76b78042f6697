/* Manifest of the work a test program did (see manifest.h). */
#include "manifest.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct counter {
    unsigned long long calls, captured, bytes;
};

/* A row keyed by one or two names: kernels (name), sync (api), errors (api, error). */
struct named_row {
    char *name;
    char *detail;
    struct counter count;
};

struct named_rows {
    struct named_row *rows;
    size_t n, cap;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct named_rows kernels, syncs, errors;
static struct counter copies[APP_DIRECTIONS][APP_HOST_MEMORIES][2];
static struct counter memsets[2];
static unsigned long long graph_launches;

static const char *const direction_names[APP_DIRECTIONS] = {"HtoD", "DtoH", "DtoD", "HtoH"};
static const char *const memory_names[APP_HOST_MEMORIES] = {"pageable", "pinned", "managed",
                                                            "none"};

static void out_of_memory(void)
{
    fputs("manifest: out of memory\n", stderr);
    exit(1);
}

static char *copy_string(const char *s)
{
    char *c = strdup(s != NULL ? s : "");
    if (c == NULL) out_of_memory();
    return c;
}

/* Finds or adds the row (name, detail); caller holds the lock. */
static struct counter *row_of(struct named_rows *rows, const char *name, const char *detail)
{
    for (size_t i = 0; i < rows->n; i++) {
        struct named_row *r = &rows->rows[i];
        if (strcmp(r->name, name) == 0 && strcmp(r->detail, detail != NULL ? detail : "") == 0)
            return &r->count;
    }
    if (rows->n == rows->cap) {
        size_t cap = rows->cap == 0 ? 8 : rows->cap * 2;
        struct named_row *grown = realloc(rows->rows, cap * sizeof(*grown));
        if (grown == NULL) out_of_memory();
        rows->rows = grown;
        rows->cap = cap;
    }
    struct named_row *r = &rows->rows[rows->n++];
    *r = (struct named_row){copy_string(name), copy_string(detail), {0, 0, 0}};
    return &r->count;
}

static void add(struct counter *c, unsigned long long calls, unsigned long long bytes,
                bool captured)
{
    c->calls += calls;
    c->bytes += bytes;
    if (captured) c->captured += calls;
}

void app_manifest_kernel(const char *name, unsigned long long calls, bool captured)
{
    pthread_mutex_lock(&lock);
    add(row_of(&kernels, name, NULL), calls, 0, captured);
    pthread_mutex_unlock(&lock);
}

void app_manifest_copy(enum app_direction direction, enum app_host_memory host_memory, bool async,
                       unsigned long long bytes, bool captured)
{
    pthread_mutex_lock(&lock);
    add(&copies[direction][host_memory][async], 1, bytes, captured);
    pthread_mutex_unlock(&lock);
}

void app_manifest_memset(unsigned long long bytes, bool async, bool captured)
{
    pthread_mutex_lock(&lock);
    add(&memsets[async], 1, bytes, captured);
    pthread_mutex_unlock(&lock);
}

void app_manifest_sync(const char *api, unsigned long long calls)
{
    pthread_mutex_lock(&lock);
    add(row_of(&syncs, api, NULL), calls, 0, false);
    pthread_mutex_unlock(&lock);
}

void app_manifest_graph_launch(unsigned long long calls)
{
    pthread_mutex_lock(&lock);
    graph_launches += calls;
    pthread_mutex_unlock(&lock);
}

void app_manifest_error(const char *api, const char *error)
{
    pthread_mutex_lock(&lock);
    add(row_of(&errors, api, error), 1, 0, false);
    pthread_mutex_unlock(&lock);
}

static void clear_named(struct named_rows *rows)
{
    for (size_t i = 0; i < rows->n; i++) {
        free(rows->rows[i].name);
        free(rows->rows[i].detail);
    }
    rows->n = 0;
}

void app_manifest_reset(void)
{
    pthread_mutex_lock(&lock);
    clear_named(&kernels);
    clear_named(&syncs);
    clear_named(&errors);
    memset(copies, 0, sizeof(copies));
    memset(memsets, 0, sizeof(memsets));
    graph_launches = 0;
    pthread_mutex_unlock(&lock);
}

static void write_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static int compare_rows(const void *a, const void *b)
{
    const struct named_row *x = a, *y = b;
    int by_name = strcmp(x->name, y->name);
    return by_name != 0 ? by_name : strcmp(x->detail, y->detail);
}

static void write_named(FILE *f, const char *key, struct named_rows *rows, const char *name_key,
                        const char *detail_key)
{
    if (rows->n > 1) qsort(rows->rows, rows->n, sizeof(*rows->rows), compare_rows);
    fprintf(f, "  \"%s\": [", key);
    for (size_t i = 0; i < rows->n; i++) {
        const struct named_row *r = &rows->rows[i];
        fprintf(f, "%s\n    {\"%s\": ", i == 0 ? "" : ",", name_key);
        write_string(f, r->name);
        if (detail_key != NULL) {
            fprintf(f, ", \"%s\": ", detail_key);
            write_string(f, r->detail);
        }
        fprintf(f, ", \"calls\": %llu", r->count.calls);
        if (strcmp(key, "kernels") == 0) fprintf(f, ", \"captured\": %llu", r->count.captured);
        fputc('}', f);
    }
    fputs(rows->n == 0 ? "],\n" : "\n  ],\n", f);
}

static void write_copies(FILE *f)
{
    const char *sep = "";
    fputs("  \"memcpy\": [", f);
    for (int d = 0; d < APP_DIRECTIONS; d++)
        for (int m = 0; m < APP_HOST_MEMORIES; m++)
            for (int a = 0; a < 2; a++) {
                const struct counter *c = &copies[d][m][a];
                if (c->calls == 0) continue;
                fprintf(f,
                        "%s\n    {\"direction\": \"%s\", \"host_memory\": \"%s\", \"async\": %s, "
                        "\"calls\": %llu, \"captured\": %llu, \"bytes\": %llu}",
                        sep, direction_names[d], memory_names[m], a ? "true" : "false", c->calls,
                        c->captured, c->bytes);
                sep = ",";
            }
    fputs(*sep == '\0' ? "],\n" : "\n  ],\n", f);
}

static void write_memsets(FILE *f)
{
    const char *sep = "";
    fputs("  \"memset\": [", f);
    for (int a = 0; a < 2; a++) {
        if (memsets[a].calls == 0) continue;
        fprintf(f, "%s\n    {\"async\": %s, \"calls\": %llu, \"captured\": %llu, \"bytes\": %llu}",
                sep, a ? "true" : "false", memsets[a].calls, memsets[a].captured, memsets[a].bytes);
        sep = ",";
    }
    fputs(*sep == '\0' ? "],\n" : "\n  ],\n", f);
}

/* GT_APP_MANIFEST with each "%p" replaced by the process id. */
static char *manifest_path(const char *template)
{
    size_t len = strlen(template) + 1;
    for (const char *p = strstr(template, "%p"); p != NULL; p = strstr(p + 2, "%p"))
        len += 20;
    char *path = malloc(len);
    if (path == NULL) out_of_memory();
    char *out = path;
    for (const char *p = template; *p != '\0';) {
        if (p[0] == '%' && p[1] == 'p') {
            out += sprintf(out, "%ld", (long)getpid());
            p += 2;
        } else {
            *out++ = *p++;
        }
    }
    *out = '\0';
    return path;
}

int app_manifest_write(const char *program)
{
    const char *template = getenv("GT_APP_MANIFEST");
    if (template == NULL || *template == '\0') return 0;
    char *path = manifest_path(template);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        fprintf(stderr, "%s: cannot write manifest %s\n", program, path);
        free(path);
        return -1;
    }
    pthread_mutex_lock(&lock);
    fputs("{\n  \"program\": ", f);
    write_string(f, program);
    fprintf(f, ",\n  \"pid\": %ld,\n", (long)getpid());
    write_named(f, "kernels", &kernels, "name", NULL);
    write_copies(f);
    write_memsets(f);
    write_named(f, "sync", &syncs, "api", NULL);
    write_named(f, "errors", &errors, "api", "error");
    fprintf(f, "  \"graph_launches\": %llu\n}\n", graph_launches);
    pthread_mutex_unlock(&lock);
    int failed = ferror(f) | fclose(f);
    if (failed != 0) fprintf(stderr, "%s: cannot write manifest %s\n", program, path);
    free(path);
    return failed != 0 ? -1 : 0;
}
