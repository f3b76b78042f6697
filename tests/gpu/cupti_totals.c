/* The CUPTI reference recorder's accounting and JSON output (cupti_totals.h). */
#include "cupti_totals.h"

#include <stdlib.h>
#include <string.h>

ref_row *ref_table_row(ref_table *t, const char *key)
{
    /* Programs have a few hundred distinct kernels at most: a linear search
     * costs less than the activity records it serves. */
    for (size_t i = 0; i < t->count; i++)
        if (strcmp(t->rows[i].key, key) == 0) return &t->rows[i];
    if (t->count == t->capacity) {
        size_t capacity = t->capacity ? 2 * t->capacity : 64;
        ref_row *rows = realloc(t->rows, capacity * sizeof(*rows));
        if (!rows) {
            t->lost++;
            return NULL;
        }
        t->rows = rows;
        t->capacity = capacity;
    }
    ref_row *r = &t->rows[t->count];
    memset(r, 0, sizeof(*r));
    r->key = strdup(key);
    if (!r->key) {
        t->lost++;
        return NULL;
    }
    t->count++;
    return r;
}

static size_t slot_of(const ref_span *slots, size_t capacity, uint64_t id)
{
    /* Ids are counters; a multiplicative hash spreads consecutive ones. */
    size_t i = (size_t)((id * 0x9e3779b97f4a7c15ull) >> 17) & (capacity - 1);
    while (slots[i].used && slots[i].id != id)
        i = (i + 1) & (capacity - 1);
    return i;
}

static int grow(ref_spans *s)
{
    size_t capacity = s->capacity ? 2 * s->capacity : 1024;
    ref_span *slots = calloc(capacity, sizeof(*slots));
    if (!slots) return -1;
    for (size_t i = 0; i < s->capacity; i++)
        if (s->slots[i].used) slots[slot_of(slots, capacity, s->slots[i].id)] = s->slots[i];
    free(s->slots);
    s->slots = slots;
    s->capacity = capacity;
    return 0;
}

ref_span *ref_spans_get(ref_spans *s, uint64_t id, int *added)
{
    if (added) *added = 0;
    /* Kept at most half full, so that probes stay short. */
    if (2 * (s->count + 1) > s->capacity && grow(s) != 0) {
        s->lost++;
        return NULL;
    }
    ref_span *slot = &s->slots[slot_of(s->slots, s->capacity, id)];
    if (!slot->used) {
        *slot = (ref_span){.id = id, .used = 1};
        s->count++;
        if (added) *added = 1;
    }
    return slot;
}

void ref_span_widen(ref_span *span, uint64_t start, uint64_t end)
{
    if (!span->timed || start < span->start) span->start = start;
    if (!span->timed || end > span->end) span->end = end;
    span->timed = 1;
}

uint64_t ref_spans_total_ns(const ref_spans *s)
{
    uint64_t total = 0;
    for (size_t i = 0; i < s->capacity; i++)
        if (s->slots[i].used && s->slots[i].timed && s->slots[i].end > s->slots[i].start)
            total += s->slots[i].end - s->slots[i].start;
    return total;
}

/* The launch a node's run belongs to. All the work of a launch carries its
 * correlation id; without one, the nth run of a node of a graph belongs to
 * the nth launch of that graph (the node ids of one instantiation are its
 * own, so two instantiations of a graph are told apart only by ids). */
static ref_span *launch_of(ref_totals *t, const ref_work *w, uint64_t run)
{
    uint64_t graph = (uint64_t)w->graph_id << 32;
    if (w->correlation_id)
        return ref_spans_get(&t->graph_launches, graph | w->correlation_id, NULL);
    return ref_spans_get(&t->uncorrelated_graph_launches, graph | (run & 0xffffffffu), NULL);
}

void ref_add_work(ref_totals *t, ref_table *table, const char *key, const ref_work *w)
{
    ref_row *r = ref_table_row(table, key);
    if (!r) return;
    /* CUPTI writes 0 for both timestamps of work it could not time. */
    int timed = w->start != 0 || w->end != 0;
    uint64_t ns = timed && w->end > w->start ? w->end - w->start : 0;
    if (!timed) {
        r->untimed++;
        t->untimed++;
    }
    if (w->graph_id == 0) {
        r->calls++;
        r->bytes += w->bytes;
        r->gpu_ns += ns;
        return;
    }
    r->graph_runs++;
    r->graph_gpu_ns += ns;
    int added;
    ref_span *node = ref_spans_get(&t->graph_nodes, w->node_id, &added);
    if (!node) return;
    if (added) {
        r->graph_nodes++;
        r->calls++;
        r->bytes += w->bytes;
    }
    uint64_t run = node->runs++;
    ref_span *launch = launch_of(t, w, run);
    if (launch && timed) ref_span_widen(launch, w->start, w->end);
}

uint64_t ref_graph_launches(const ref_totals *t)
{
    return t->graph_launches.count + t->uncorrelated_graph_launches.count;
}

uint64_t ref_graph_launch_ns(const ref_totals *t)
{
    return ref_spans_total_ns(&t->graph_launches) +
           ref_spans_total_ns(&t->uncorrelated_graph_launches);
}

static void free_table(ref_table *t)
{
    for (size_t i = 0; i < t->count; i++)
        free(t->rows[i].key);
    free(t->rows);
    *t = (ref_table){0};
}

void ref_totals_free(ref_totals *t)
{
    free_table(&t->kernels);
    free_table(&t->copies);
    free_table(&t->memsets);
    free(t->graph_nodes.slots);
    free(t->graph_launches.slots);
    free(t->uncorrelated_graph_launches.slots);
    *t = (ref_totals){0};
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

static unsigned long long ull(uint64_t v)
{
    return (unsigned long long)v;
}

static void write_kernels(FILE *f, const ref_table *t)
{
    for (size_t i = 0; i < t->count; i++) {
        const ref_row *r = &t->rows[i];
        fprintf(f, "%s\n  {\"name\": ", i ? "," : "");
        write_json_string(f, r->key);
        fprintf(f,
                ", \"calls\": %llu, \"gpu_ns\": %llu, \"graph_nodes\": %llu, "
                "\"graph_runs\": %llu, \"graph_gpu_ns\": %llu, \"untimed\": %llu}",
                ull(r->calls), ull(r->gpu_ns), ull(r->graph_nodes), ull(r->graph_runs),
                ull(r->graph_gpu_ns), ull(r->untimed));
    }
}

static void write_copies(FILE *f, const ref_table *t)
{
    const char *sep = "";
    for (size_t i = 0; i < t->count; i++) {
        const ref_row *r = &t->rows[i];
        char direction[16], memory[16];
        int async = 0;
        if (sscanf(r->key, "%15[^/]/%15[^/]/%d", direction, memory, &async) != 3) continue;
        fprintf(f,
                "%s\n  {\"direction\": \"%s\", \"host_memory\": \"%s\", \"async\": %s, "
                "\"calls\": %llu, \"bytes\": %llu, \"gpu_ns\": %llu, \"graph_nodes\": %llu, "
                "\"graph_runs\": %llu, \"untimed\": %llu}",
                sep, direction, memory, async ? "true" : "false", ull(r->calls), ull(r->bytes),
                ull(r->gpu_ns), ull(r->graph_nodes), ull(r->graph_runs), ull(r->untimed));
        sep = ",";
    }
}

static void write_memsets(FILE *f, const ref_table *t)
{
    for (size_t i = 0; i < t->count; i++) {
        const ref_row *r = &t->rows[i];
        fprintf(f,
                "%s\n  {\"async\": %s, \"calls\": %llu, \"bytes\": %llu, \"gpu_ns\": %llu, "
                "\"graph_nodes\": %llu, \"graph_runs\": %llu, \"untimed\": %llu}",
                i ? "," : "", strcmp(r->key, "1") == 0 ? "true" : "false", ull(r->calls),
                ull(r->bytes), ull(r->gpu_ns), ull(r->graph_nodes), ull(r->graph_runs),
                ull(r->untimed));
    }
}

void ref_write_json(FILE *f, const ref_totals *t, uint64_t dropped, const char *error)
{
    uint64_t lost = t->kernels.lost + t->copies.lost + t->memsets.lost + t->graph_nodes.lost +
                    t->graph_launches.lost + t->uncorrelated_graph_launches.lost;
    fprintf(f, "{\"tool\": \"cupti_ref\", \"dropped\": %llu, \"untimed\": %llu,",
            ull(dropped + lost), ull(t->untimed));
    if (error) {
        fputs(" \"error\": ", f);
        write_json_string(f, error);
        fputc(',', f);
    }
    fputs("\n \"kernels\": [", f);
    write_kernels(f, &t->kernels);
    fputs("],\n \"memcpy\": [", f);
    write_copies(f, &t->copies);
    fputs("],\n \"memset\": [", f);
    write_memsets(f, &t->memsets);
    fprintf(f, "],\n \"graphs\": {\"launches\": %llu, \"gpu_ns\": %llu}}\n",
            ull(ref_graph_launches(t)), ull(ref_graph_launch_ns(t)));
}
