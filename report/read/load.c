/* Reading a JSON report: the file, the parse, the document's top level
 * (tool, schema, process, config, totals, advice, anomalies, a merge's
 * inputs, members this reader does not know). The tables are load_rows.c. */
#include "load.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json_writer.h"
#include "load_internal.h"
#include "advice.h"
#include "event.h"
#include "loaded.h"
#include "nvtx_table.h"
#include "report.h"
#include "settings.h"
#include "strtab.h"

/* ------------------------------------------------------------- the arena */

/* cJSON allocates every node and string separately; for a report of 100k
 * rows that is millions of allocations, each freed again at the end. An
 * arena makes them a pointer bump, and nothing is freed node by node (the
 * parse takes about three quarters of the time it takes with malloc).
 * After a load its chunks are kept, in order, for the next load to fill
 * again: a command reading several reports then touches fresh memory only
 * for the first (the page faults were a fifth of a load's time). What the
 * arena holds stays mapped until the process ends. */
typedef struct arena_chunk {
    struct arena_chunk *next;
    size_t used;
    size_t cap;
    max_align_t data[];
} arena_chunk;

#define ARENA_MIN_CHUNK ((size_t)1 << 20)

/* One load at a time (cJSON's hooks and its error record are process-wide). */
static arena_chunk *arena_first, *arena_last;
static arena_chunk *arena; /* the chunk being filled */
static size_t arena_total;

/* cJSON's nodes hold pointers and a double, its strings bytes: 8-byte
 * alignment serves them all, with less memory than max_align_t's 16. */
#define ARENA_ALIGN ((size_t)8)

static void *arena_alloc(size_t n)
{
    n = (n + ARENA_ALIGN - 1) & ~(ARENA_ALIGN - 1);
    /* Past the chunks that have no room for n: each is filled afresh. */
    while (arena && arena->cap - arena->used < n && arena->next) {
        arena = arena->next;
        arena->used = 0;
    }
    if (!arena || arena->cap - arena->used < n) {
        size_t cap = arena_total > ARENA_MIN_CHUNK ? arena_total : ARENA_MIN_CHUNK;
        if (cap < n) cap = n;
        arena_chunk *c = malloc(sizeof(*c) + cap);
        if (!c) return NULL;
        *c = (arena_chunk){.next = NULL, .used = 0, .cap = cap};
        if (arena_last)
            arena_last->next = c;
        else
            arena_first = c;
        arena_last = arena = c;
        arena_total += cap;
    }
    void *p = (char *)arena->data + arena->used;
    arena->used += n;
    return p;
}

static void arena_keep(void *p)
{
    (void)p; /* the arena is filled again by the next load */
}

/* The next load fills the chunks again from the first. */
static void arena_rewind(void)
{
    arena = arena_first;
    if (arena) arena->used = 0;
}

/* ------------------------------------------------------------ top level */

static char *dup_or_fail(gt_loader *ld, const char *s)
{
    char *d = strdup(s ? s : "");
    if (!d) gt_load_fail(ld, NULL, "out of memory");
    return d;
}

static bool load_process(gt_loader *ld, const cJSON *doc)
{
    const cJSON *p = gt_load_object(ld, doc, "process", NULL, false);
    if (!p) return false;
    ld->table = "process";
    const cJSON *h = NULL;
    int64_t pid, ppid;
    uint64_t start, end;
    const char *host, *command;
    if (!gt_load_i64_or(ld, p, "pid", &h, INT32_MIN, INT32_MAX, 0, &pid) ||
        !gt_load_i64_or(ld, p, "ppid", &h, INT32_MIN, INT32_MAX, 0, &ppid) ||
        !(host = gt_load_string(ld, p, "hostname", &h, "")) ||
        !(command = gt_load_string(ld, p, "command", &h, "")) ||
        !gt_load_u64(ld, p, "start_ns", &h, &start) || !gt_load_u64(ld, p, "end_ns", &h, &end))
        return false;
    gt_loaded *l = ld->l;
    if (!(l->hostname = dup_or_fail(ld, host)) || !(l->command = dup_or_fail(ld, command)))
        return false;
    l->process = (gt_process_info){.pid = (int)pid,
                                   .ppid = (int)ppid,
                                   .hostname = l->hostname,
                                   .command = l->command,
                                   .start_ns = start,
                                   .end_ns = end};
    return true;
}

static unsigned category_bit(const char *name)
{
    for (unsigned c = 0; c < GT_CAT_COUNT; c++)
        if (strcmp(name, gt_category_name(c)) == 0) return GT_CAT_BIT(c);
    return 0; /* a category this reader does not know */
}

static bool load_config(gt_loader *ld, const cJSON *doc)
{
    const cJSON *cfg = gt_load_object(ld, doc, "config", NULL, false);
    if (!cfg) return false;
    ld->table = "config";
    const char *verbosity = gt_load_string(ld, cfg, "verbosity", NULL, "default");
    const char *timing = gt_load_string(ld, cfg, "gpu_timing", NULL, "events");
    const cJSON *cats = gt_load_array(ld, cfg, "categories", NULL);
    if (!verbosity || !timing || !cats) return false;
    gt_report_options *opt = &ld->r->opt;
    opt->verbosity = GT_VERB_DEFAULT;
    for (int v = GT_VERB_NONE; v <= GT_VERB_DEBUG; v++)
        if (strcmp(verbosity, gt_verbosity_name(v)) == 0) opt->verbosity = v;
    opt->gpu_timing = GT_GPU_TIMING_EVENTS; /* what reports before the choice of sources say */
    for (int t = 0; t < GT_GPU_TIMING_COUNT; t++)
        if (strcmp(timing, gt_gpu_timing_name(t)) == 0) opt->gpu_timing = t;
    const char *off = gt_load_string(ld, cfg, "gpu_timing_off_reason", NULL, "");
    const char *callsites = gt_load_string(ld, cfg, "callsites", NULL, "auto");
    if (!off || !callsites) return false;
    for (int c = 0; c < GT_CALLSITES_COUNT; c++)
        if (strcmp(callsites, gt_callsites_name(c)) == 0) gt_report_set_callsites_mode(ld->r, c);
    gt_report_set_gpu_timing_off(ld->r, off);
    opt->categories = 0;
    for (const cJSON *c = cats->child; c; c = c->next) {
        if (!cJSON_IsString(c)) return gt_load_fail(ld, "categories", "expected strings");
        opt->categories |= category_bit(c->valuestring);
    }
    return true;
}

/* gpu_timing (SPEC §12): absent from reports made before there was a
 * choice of sources, which then came from event pairs (or none). */
static bool load_gpu_timing(gt_loader *ld, const cJSON *doc)
{
    const cJSON *gt = gt_load_object(ld, doc, "gpu_timing", NULL, true);
    if (!gt) return !ld->failed;
    ld->table = "gpu_timing";
    const char *source = gt_load_string(ld, gt, "source", NULL, NULL);
    const char *detail = gt_load_string(ld, gt, "detail", NULL, "");
    if (!source || !detail) return false;
    for (int s = 0; s < GT_GPU_SOURCE_COUNT; s++)
        if (strcmp(source, gt_gpu_source_name(s)) == 0) {
            gt_report_set_gpu_source(ld->r, s, detail);
            return true;
        }
    return gt_load_fail(ld, "source", "expected off, events, cupti or mixed");
}

/* Totals this reader does not know are kept, when they are counts, and
 * written again after the writer's own. A total the JSON writer writes
 * itself must be in `known` and read into the report, or it would be
 * written twice (the round-trip tests catch that). */
static bool keep_total(gt_loader *ld, const cJSON *m)
{
    static const char *const known[] = {
        "events",       "dropped",     "gpu_busy_ns",   "gpu_intervals",       "nvtx_mark_calls",
        "nvtx_open_ns", "late_events", "late_gpu_work", "gpu_pending_at_exit",
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(m->string, known[i]) == 0) return true;
    uint64_t v;
    if (!gt_load_number_u64(m, &v)) return true;
    gt_loaded *l = ld->l;
    gt_loaded_member *grown = realloc(l->totals, (l->ntotals + 1) * sizeof(*grown));
    if (!grown) return gt_load_fail(ld, NULL, "out of memory");
    l->totals = grown;
    l->totals[l->ntotals] = (gt_loaded_member){.key = strdup(m->string), .value = v};
    if (!l->totals[l->ntotals].key) return gt_load_fail(ld, NULL, "out of memory");
    l->ntotals++;
    return true;
}

static bool load_totals(gt_loader *ld, const cJSON *doc)
{
    const cJSON *t = gt_load_object(ld, doc, "totals", NULL, false);
    if (!t) return false;
    ld->table = "totals";
    gt_report *r = ld->r;
    uint64_t busy;
    const cJSON *h = NULL;
    if (!gt_load_u64(ld, t, "events", &h, &r->events) ||
        !gt_load_u64(ld, t, "dropped", &h, &r->dropped) ||
        !gt_load_u64(ld, t, "gpu_busy_ns", &h, &busy) ||
        !gt_load_u64_or(ld, t, "gpu_intervals", &h, 0, &r->busy.intervals) ||
        !gt_load_u64_or(ld, t, "nvtx_mark_calls", &h, 0, &r->nvtx.counts.marks) ||
        !gt_load_u64_or(ld, t, "nvtx_open_ns", &h, 0, &r->nvtx.open_ns) ||
        !gt_load_u64_or(ld, t, "late_events", &h, 0, &r->late) ||
        !gt_load_u64_or(ld, t, "late_gpu_work", &h, 0, &r->late_gpu_work) ||
        !gt_load_u64_or(ld, t, "gpu_pending_at_exit", &h, 0, &r->gpu_pending))
        return false;
    /* Busy time as a total already retired: no interval is kept. */
    r->busy.retired_ns = busy;
    for (const cJSON *m = t->child; m; m = m->next)
        if (!keep_total(ld, m)) return false;
    return true;
}

static bool load_advice(gt_loader *ld, const cJSON *doc)
{
    const cJSON *a = gt_load_array(ld, doc, "advice", NULL);
    if (!a) return false;
    ld->table = "advice";
    ld->index = 0;
    gt_loaded *l = ld->l;
    for (const cJSON *f = a->child; f; f = f->next, ld->index++) {
        if (!cJSON_IsObject(f)) return gt_load_fail(ld, NULL, "advice: expected objects");
        const cJSON *h = NULL;
        uint32_t rule = 0;
        uint64_t count = 0;
        const char *message;
        if (!gt_load_name(ld, f, "rule", &h, &rule) || !gt_load_u64(ld, f, "count", &h, &count) ||
            !(message = gt_load_string(ld, f, "message", &h, NULL)))
            return false;
        /* A newer writer's rules past this one's count are left out. */
        if (l->nadvice == GT_ADVICE_RULES) continue;
        gt_advice *out = &l->advice[l->nadvice++];
        out->rule = gt_strtab_get(ld->names, rule);
        out->count = count;
        snprintf(out->message, sizeof out->message, "%s", message);
    }
    ld->index = -1;
    return true;
}

static bool load_anomalies(gt_loader *ld, const cJSON *doc)
{
    const cJSON *a = gt_load_object(ld, doc, "anomalies", NULL, true);
    if (!a) return !ld->failed;
    ld->table = "anomalies";
    gt_nvtx_counts *n = &ld->r->nvtx.counts;
    const cJSON *h = NULL;
    return gt_load_u64_or(ld, a, "nvtx_unbalanced_pops", &h, 0, &n->unbalanced_pops) &&
           gt_load_u64_or(ld, a, "nvtx_open_at_exit", &h, 0, &n->open_at_exit) &&
           gt_load_u64_or(ld, a, "nvtx_unmatched_ends", &h, 0, &n->unmatched_ends) &&
           gt_load_u64_or(ld, a, "nvtx_too_deep", &h, 0, &n->too_deep) &&
           gt_load_u64_or(ld, a, "nvtx_untracked", &h, 0, &n->untracked) &&
           gt_load_u64_or(ld, a, "gpu_busy_clipped_ns", &h, 0, &ld->r->busy.clipped_ns);
}

/* A merged report's inputs. */
static bool load_inputs(gt_loader *ld, const cJSON *doc)
{
    if (!gt_load_member(doc, "inputs", NULL)) return true;
    const cJSON *a = gt_load_array(ld, doc, "inputs", NULL);
    if (!a) return false;
    int n = cJSON_GetArraySize(a);
    if (n == 0) return true;
    gt_loaded *l = ld->l;
    l->inputs = calloc((size_t)n, sizeof(*l->inputs));
    if (!l->inputs) return gt_load_fail(ld, NULL, "out of memory");
    ld->table = "inputs";
    ld->index = 0;
    for (const cJSON *in = a->child; in; in = in->next, ld->index++) {
        if (!cJSON_IsObject(in)) return gt_load_fail(ld, NULL, "inputs: expected objects");
        gt_report_input *out = &l->inputs[l->ninputs++];
        const cJSON *h = NULL;
        int64_t pid = 0;
        const char *file = gt_load_string(ld, in, "file", &h, "");
        if (!file || !gt_load_i64_or(ld, in, "pid", &h, INT32_MIN, INT32_MAX, 0, &pid))
            return false;
        const char *host = gt_load_string(ld, in, "hostname", &h, "");
        const char *command = host ? gt_load_string(ld, in, "command", &h, "") : NULL;
        if (!command || !gt_load_u64_or(ld, in, "wall_ns", &h, 0, &out->wall_ns) ||
            !gt_load_u64_or(ld, in, "gpu_busy_ns", &h, 0, &out->gpu_busy_ns) ||
            !gt_load_u64_or(ld, in, "events", &h, 0, &out->events))
            return false;
        out->pid = (int)pid;
        if (!(out->file = dup_or_fail(ld, file)) || !(out->hostname = dup_or_fail(ld, host)) ||
            !(out->command = dup_or_fail(ld, command)))
            return false;
    }
    ld->index = -1;
    return true;
}

/* Compact JSON of a value; strings through the writer's escaping, so that
 * what is written back is valid UTF-8 whatever was read. */
static void print_value(FILE *f, const cJSON *v)
{
    if (cJSON_IsString(v)) {
        gt_json_write_string(f, v->valuestring, strlen(v->valuestring));
    } else if (cJSON_IsNumber(v)) {
        uint64_t u;
        if (gt_load_number_u64(v, &u))
            fprintf(f, "%" PRIu64, u);
        else if (isfinite(v->valuedouble))
            fprintf(f, "%.17g", v->valuedouble);
        else
            fputs("null", f);
    } else if (cJSON_IsArray(v) || cJSON_IsObject(v)) {
        bool object = cJSON_IsObject(v);
        fputc(object ? '{' : '[', f);
        for (const cJSON *c = v->child; c; c = c->next) {
            if (c != v->child) fputc(',', f);
            if (object) {
                gt_json_write_string(f, c->string, strlen(c->string));
                fputc(':', f);
            }
            print_value(f, c);
        }
        fputc(object ? '}' : ']', f);
    } else {
        fputs(cJSON_IsTrue(v) ? "true" : cJSON_IsFalse(v) ? "false" : "null", f);
    }
}

/* Top-level members this reader does not know, kept as JSON text. As for
 * totals, a member the JSON writer writes must be in `known`. */
static bool keep_member(gt_loader *ld, const cJSON *m)
{
    static const char *const known[] = {
        "tool",       "schema",        "version",    "process",   "config", "totals",  "kernels",
        "memcpy",     "memset",        "memory",     "compile",   "module", "sync",    "nvtx",
        "api",        "advice",        "nvtx_marks", "anomalies", "inputs", "capture", "snapshot",
        "gpu_timing", "nvtx_counters", "checksums",  "callsites",
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(m->string, known[i]) == 0) return true;
    gt_loaded *l = ld->l;
    gt_loaded_member *grown = realloc(l->members, (l->nmembers + 1) * sizeof(*grown));
    if (!grown) return gt_load_fail(ld, NULL, "out of memory");
    l->members = grown;
    gt_loaded_member *out = &l->members[l->nmembers];
    *out = (gt_loaded_member){.key = strdup(m->string)};
    size_t len = 0;
    FILE *f = open_memstream(&out->json, &len);
    if (f) {
        print_value(f, m);
        if (fclose(f) != 0) {
            free(out->json);
            out->json = NULL;
        }
    }
    if (!out->key || !out->json) {
        free(out->key);
        free(out->json);
        return gt_load_fail(ld, NULL, "out of memory");
    }
    l->nmembers++;
    return true;
}

static bool load_document(gt_loader *ld, const cJSON *doc)
{
    if (!cJSON_IsObject(doc))
        return gt_load_fail(ld, NULL, "not a gputrace report: the JSON is not an object");
    const cJSON *tool = gt_load_member(doc, "tool", NULL);
    if (!cJSON_IsString(tool) || strcmp(tool->valuestring, "gputrace") != 0)
        return gt_load_fail(ld, NULL, "not a gputrace report (no \"tool\": \"gputrace\")");
    const cJSON *schema = gt_load_member(doc, "schema", NULL);
    uint64_t version;
    if (!gt_load_number_u64(schema, &version))
        return gt_load_fail(ld, NULL, "not a gputrace report (no schema number)");
    if (version != 1) {
        char what[128];
        snprintf(what, sizeof what,
                 "schema %" PRIu64 " is not supported: this gputrace reads schema 1", version);
        return gt_load_fail(ld, NULL, what);
    }
    if (!load_process(ld, doc) || !load_config(ld, doc) || !load_gpu_timing(ld, doc) ||
        !load_totals(ld, doc))
        return false;
    ld->table = NULL;
    if (!gt_load_callsites(ld, doc)) return false;
    ld->table = NULL;
    if (!gt_load_tables(ld, doc)) return false;
    ld->table = NULL;
    if (!load_advice(ld, doc) || !load_anomalies(ld, doc) || !load_inputs(ld, doc) ||
        !gt_load_capture(ld, doc) || !gt_load_checksums(ld, doc))
        return false;
    ld->table = NULL;
    for (const cJSON *m = doc->child; m; m = m->next)
        if (!keep_member(ld, m)) return false;
    return true;
}

/* ----------------------------------------------------------- the parse */

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Why cJSON stopped near offset `at`: nesting past its limit, the data
 * ending inside a container or a string (a file cut short), or something
 * else at a line and column. */
static void parse_error(gt_loader *ld, const char *data, size_t len, size_t at)
{
    /* cJSON points before the blanks in front of what it stumbled on, or
     * one past it at the end. */
    while (at < len && is_blank(data[at]))
        at++;
    if (at >= len) {
        at = len;
        while (at > 0 && is_blank(data[at - 1]))
            at--;
        if (at) at--;
    }
    unsigned depth = 0, deepest = 0;
    bool in_string = false;
    size_t line = 1, col = 1;
    for (size_t i = 0; i < len; i++) {
        char c = data[i];
        if (i < at) {
            col = c == '\n' ? 1 : col + 1;
            line += c == '\n';
        }
        if (in_string) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > deepest && i <= at) deepest = depth;
        } else if ((c == ']' || c == '}') && depth) {
            depth--;
        }
    }
    char what[160];
    if (deepest >= CJSON_NESTING_LIMIT)
        snprintf(what, sizeof what, "not a gputrace report: JSON nested deeper than %d levels",
                 CJSON_NESTING_LIMIT);
    else if (depth || in_string)
        snprintf(what, sizeof what, "truncated: the JSON ends before it is complete");
    else
        snprintf(what, sizeof what, "not valid JSON at line %zu, column %zu", line, col);
    gt_load_fail(ld, NULL, what);
}

/* text[len] is a NUL (cJSON wants it inside the length it is given). */
static gt_report *load_text(const char *text, size_t len, const char *name, gt_strtab *names,
                            char *err, size_t errcap)
{
    cJSON_Hooks hooks = {arena_alloc, arena_keep};
    cJSON_InitHooks(&hooks);
    gt_loader ld = {.names = names, .file = name, .err = err, .errcap = errcap, .index = -1};
    if (len == 0) {
        gt_load_fail(&ld, NULL, "empty file: not a gputrace report");
        return NULL;
    }
    /* On failure `end` is where the parse stopped. */
    const char *end = NULL;
    cJSON *doc = cJSON_ParseWithLengthOpts(text, len + 1, &end, 1);
    if (!doc) {
        parse_error(&ld, text, len, end && end >= text ? (size_t)(end - text) : len);
    } else {
        ld.r = gt_loaded_report_create(NULL, names);
        if (!ld.r) {
            gt_load_fail(&ld, NULL, "out of memory");
        } else {
            ld.l = ld.r->loaded;
            if (!load_document(&ld, doc)) {
                gt_report_destroy(ld.r);
                ld.r = NULL;
            }
        }
    }
    arena_rewind();
    cJSON_InitHooks(NULL);
    return ld.r;
}

gt_report *gt_report_load_buffer(const char *data, size_t len, const char *name, gt_strtab *names,
                                 char *err, size_t errcap)
{
    char *text = malloc(len + 1);
    if (!text) {
        snprintf(err, errcap, "%s: out of memory", name);
        return NULL;
    }
    memcpy(text, data, len);
    text[len] = '\0';
    gt_report *r = load_text(text, len, name, names, err, errcap);
    free(text);
    return r;
}

/* The whole of fd and a NUL after it; NULL with errno set on failure. */
static char *read_all(int fd, size_t *len)
{
    size_t cap = 1 << 16, n = 0;
    struct stat st;
    /* A regular file's size, a byte to see the end and one for the NUL. */
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) cap = (size_t)st.st_size + 2;
    char *buf = malloc(cap);
    while (buf) {
        if (n == cap - 1) { /* room for the NUL */
            char *grown = realloc(buf, cap * 2);
            if (!grown) break;
            buf = grown;
            cap *= 2;
        }
        ssize_t got = read(fd, buf + n, cap - 1 - n);
        if (got == 0) {
            buf[n] = '\0';
            *len = n;
            return buf;
        }
        if (got < 0 && errno != EINTR) break;
        if (got > 0) n += (size_t)got;
    }
    int saved = errno ? errno : ENOMEM;
    free(buf);
    errno = saved;
    return NULL;
}

gt_report *gt_report_load_file(const char *path, gt_strtab *names, char *err, size_t errcap)
{
    bool stdin_ = strcmp(path, "-") == 0;
    int fd = stdin_ ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    const char *why = NULL;
    if (fd < 0)
        why = strerror(errno);
    else if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode))
        why = "is a directory, not a report file";
    size_t len = 0;
    char *data = why ? NULL : read_all(fd, &len);
    if (!why && !data) why = strerror(errno);
    if (fd >= 0 && !stdin_) close(fd);
    if (why) {
        snprintf(err, errcap, "%s: %s", path, why);
        return NULL;
    }
    gt_report *r = load_text(data, len, stdin_ ? "(stdin)" : path, names, err, errcap);
    free(data);
    return r;
}
