/* What the CUPTI reference recorder (cupti_ref.c) totals, and its JSON
 * output; no CUPTI here, so that the accounting is testable without a GPU.
 * Not thread-safe: the recorder holds its lock around every use. */
#ifndef CUPTI_TOTALS_H
#define CUPTI_TOTALS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct ref_row {
    char *key;
    uint64_t calls;        /* runs outside graphs, plus each graph node once */
    uint64_t bytes;        /* of those calls */
    uint64_t gpu_ns;       /* of the timed runs outside graphs */
    uint64_t graph_nodes;  /* distinct graph nodes among the calls */
    uint64_t graph_runs;   /* runs as a graph node */
    uint64_t graph_gpu_ns; /* of the timed ones */
    uint64_t untimed;      /* runs whose record has no timestamps */
} ref_row;

typedef struct ref_table {
    ref_row *rows;
    size_t count, capacity;
    uint64_t lost; /* records that found no row for want of memory */
} ref_table;

/* The row of `key`, added with zero totals when new; NULL without memory. */
ref_row *ref_table_row(ref_table *t, const char *key);

typedef struct ref_span {
    uint64_t id, start, end;
    uint64_t runs; /* times the id was seen (graph nodes: their runs) */
    int used;
    int timed; /* start and end hold a timed record's */
} ref_span;

typedef struct ref_spans {
    ref_span *slots;
    size_t count, capacity; /* capacity: 0 or a power of two */
    uint64_t lost;
} ref_spans;

/* The span of `id`, added with no time when new (*added, if given, says
 * whether it was); NULL without memory. The pointer is valid until the next
 * addition to the set. */
ref_span *ref_spans_get(ref_spans *s, uint64_t id, int *added);
/* Widens a span to cover [start, end]. */
void ref_span_widen(ref_span *span, uint64_t start, uint64_t end);
/* The sum over the set of each timed span's length. */
uint64_t ref_spans_total_ns(const ref_spans *s);

/* Kernel rows are keyed by name, copy rows by "direction/host_memory/A" and
 * memset rows by "A", A being 1 for an asynchronous call and 0 otherwise. */
typedef struct ref_totals {
    ref_table kernels, copies, memsets;
    ref_spans graph_nodes; /* every graph node seen, with its runs */
    /* Each graph launch and its span: by graph and correlation id, or, for
     * work that carries no correlation id, by graph and run of its node. */
    ref_spans graph_launches, uncorrelated_graph_launches;
    uint64_t untimed; /* records without timestamps */
} ref_totals;

/* One piece of GPU work as an activity record gives it. graph_id 0: it ran
 * outside any graph. Inside a graph, correlation_id is the graph launch's
 * (0 where CUPTI gave none). start and end 0: CUPTI could not time it. */
typedef struct ref_work {
    uint64_t bytes, start, end;
    uint32_t graph_id;
    uint64_t node_id;
    uint32_t correlation_id;
} ref_work;

/* Counts `w` in `table`'s row of `key` as a tracer of API calls sees it: a
 * call with its time when it ran outside a graph; inside one, a call (with
 * no time) only the first time its node runs, and its time in the span of
 * its graph launch. A record without timestamps counts as a call, untimed,
 * and in no time and no span. */
void ref_add_work(ref_totals *t, ref_table *table, const char *key, const ref_work *w);

/* Frees what the totals hold and empties them. */
void ref_totals_free(ref_totals *t);

/* The number of graph launches and the sum of their spans. */
uint64_t ref_graph_launches(const ref_totals *t);
uint64_t ref_graph_launch_ns(const ref_totals *t);

/* The JSON document described in cupti_ref.c; `dropped`: records the
 * tracer lost, to which records lost here for want of memory are added;
 * `error`: why nothing was recorded, or NULL. */
void ref_write_json(FILE *f, const ref_totals *t, uint64_t dropped, const char *error);

#endif
