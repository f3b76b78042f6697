/* Call sites (SPEC §12 `callsites`): which lines of the program launched
 * each kernel, made each copy and memset, and allocated memory.
 *
 * Sites are told to the report once each (gt_callsites_add_site), named by
 * the string id of their label (gt_site_label), which is what a record's
 * `site` field holds once the drain resolved it (event.h). Rows are keyed
 * by what was done and where: (kind, name, site). For each name, a totals
 * row (site GT_SITE_TOTAL) counts every record that could have been
 * attributed, sampled or not, so that sampled calls stand for the calls
 * the sampling passed over:
 *
 *   factor = (sampled + skipped) / sampled      (over the name's records)
 *   calls  = exact + sampled x factor           (each site; gpu_ns, bytes alike)
 *
 * Figures with sampled calls in them are estimates; `samples` says how
 * many calls were seen. Allocations are always attributed one by one: a
 * site's bytes allocated, the bytes it held at its peak (in the order the
 * records reached the report), and what it still held at the end. */
#ifndef GT_CALLSITE_TABLE_H
#define GT_CALLSITE_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"
#include "idmap.h"
#include "strtab.h"

enum gt_site_language { GT_SITE_NATIVE, GT_SITE_PYTHON, GT_SITE_LANGUAGE_COUNT };

/* A place in the program, as the report names it. String ids; 0 is "". */
typedef struct gt_site {
    uint8_t language; /* enum gt_site_language */
    int32_t line;     /* 0: not known */
    uint32_t file;
    uint32_t function;
    /* The object, for native code: its path, and "+0xOFFSET" of the call
     * when no line is known (the offset then tells calls apart). */
    uint32_t module;
    /* Python: the library function the line called on its way to CUDA,
     * "package.function" (numba_cuda._LaunchConfiguration.__call__,
     * cupy.zeros); "" when the line called CUDA itself. */
    uint32_t via;
} gt_site;

const char *gt_site_language_name(enum gt_site_language l); /* "native", "python" */
int gt_site_language_of(const char *name);                  /* -1 when unknown */

/* The label that names a site everywhere (traces, rows): "FILE:LINE in
 * FUNCTION", then " via VIA", then " [MODULE]"; parts not known are left
 * out ("FUNCTION [MODULE]"). Cut to cap; returns the length written. */
size_t gt_site_label(const gt_strtab *names, const gt_site *s, char *buf, size_t cap);
#define GT_SITE_LABEL_MAX 4096u

/* The site as the summary and the advice show it: the file's base name
 * (a package's __init__.py with its directory), "FILE:LINE in FUNCTION
 * via VIA"; without a file, "FUNCTION in MODULE" with the module's base
 * name and offset. Cut to cap; returns the length written. */
size_t gt_site_short(const gt_strtab *names, const gt_site *s, char *buf, size_t cap);

/* What a row counts: GT_EV_KERNEL (graph launches too: b = 1),
 * GT_EV_MEMCPY, GT_EV_MEMSET, GT_EV_ALLOC. The name, by kind:
 *   kernel  a = kernel name id, b = 1 for a graph launch
 *   memcpy  a = enum gt_copy_dir, b = enum gt_host_mem | async << 8
 *   memset  a = async
 *   alloc   a = enum gt_mem_kind */
#define GT_SITE_TOTAL UINT32_MAX

typedef struct gt_site_row {
    uint8_t kind;
    uint32_t a, b;
    uint32_t site; /* index into gt_site_table.sites; GT_SITE_TOTAL: the name's totals */
    /* As recorded (aggregation). */
    uint64_t exact_calls, sampled_calls, skipped_calls;
    uint64_t exact_gpu_ns, sampled_gpu_ns, skipped_gpu_ns;
    uint64_t exact_bytes, sampled_bytes, skipped_bytes;
    /* Memory held by the site's allocations (alloc rows). */
    uint64_t held_bytes, held_allocs, peak_bytes;
    /* What the writers show: gt_callsites_settle's estimates, or as read
     * back from a file. */
    uint64_t calls, gpu_ns, bytes, samples;
} gt_site_row;

typedef struct gt_site_table {
    gt_site *sites;
    uint32_t *labels; /* the label's string id of each site */
    uint32_t nsites, sites_cap;
    gt_idmap by_label; /* label id -> site index */
    gt_site_row *rows;
    uint32_t nrows, rows_cap;
    uint32_t *index; /* row + 1, 0 empty; open addressing by key */
    uint32_t index_size;
    bool settled; /* rows' shown figures are up to date */
    /* Read back from a file or merged: the shown figures are all there is,
     * and nothing recorded changes them (settling and releases leave them). */
    bool loaded;
} gt_site_table;

/* A site the report has not been told of yet, named by its label's id.
 * Telling it again does nothing. The site's index, or -1 when out of
 * memory. */
int32_t gt_callsites_add_site(gt_site_table *cs, uint32_t label, const gt_site *s);
/* The site of a label id, -1 when unknown. */
int32_t gt_callsites_site_of(const gt_site_table *cs, uint32_t label);

/* A kernel launch, graph launch, copy or memset that succeeded, with its
 * GPU time when it has one. Records with no site are not counted. */
void gt_callsites_add_work(gt_site_table *cs, const gt_event *ev, uint64_t gpu_ns);

/* An allocation: its site row's number + 1 for the memory table to keep
 * with the block (0: none), and its bytes counted as held. */
uint32_t gt_callsites_alloc(gt_site_table *cs, const gt_event *ev);
/* The allocation of row `ref` (as gt_callsites_alloc gave) of `bytes`
 * ended: freed, or released with its context. */
void gt_callsites_release(gt_site_table *cs, uint32_t ref, uint64_t bytes);

/* The row of a key, created when new (a report read back fills it as
 * read); NULL when out of memory. */
gt_site_row *gt_callsites_row(gt_site_table *cs, uint8_t kind, uint32_t a, uint32_t b,
                              uint32_t site);

/* A row as shown (calls, gpu_ns, bytes, samples, and an allocation's held
 * and peak figures) added to the row of `from`'s key at site `site` of
 * cs, which becomes a loaded table: a report read back, or the merge of
 * several (whose peaks add up: each process's own peak). -1 when out of
 * memory. */
int gt_callsites_add_shown(gt_site_table *cs, const gt_site_row *from, uint32_t site);

/* Every site and row of `from` added to `to` as gt_callsites_add_shown
 * adds them; both tables' string ids are of the same names. -1 when out
 * of memory. */
int gt_callsites_merge(gt_site_table *to, const gt_site_table *from);

/* Works out every row's shown figures (calls, gpu_ns, bytes, samples)
 * from what was recorded. Call before the writers; again after more
 * records. */
void gt_callsites_settle(gt_site_table *cs);

/* How many rows have a site (what gt_callsites_sorted lists). */
size_t gt_callsites_listed(const gt_site_table *cs);

/* The rows with a site, in report order: by kind (kernel, memcpy, memset,
 * alloc), each kind's names by their total GPU time descending, and within
 * a name its sites the same way; allocations as one list by bytes
 * descending, whatever their memory kind; ties by label.
 * The caller frees the array; NULL with *n = 0 when none, or when out of
 * memory (gt_callsites_listed tells the two apart). */
const gt_site_row **gt_callsites_sorted(const gt_site_table *cs, const gt_strtab *names, size_t *n);

/* The totals row of a row's name; NULL when none. */
const gt_site_row *gt_callsites_total(const gt_site_table *cs, const gt_site_row *row);

/* A row's name in words, as the tables name theirs: the kernel (or
 * GT_GRAPH_LAUNCH_NAME), "HtoD pageable async", "memset async", the
 * memory kind ("device", "managed"...). Cut to cap; returns the length. */
size_t gt_site_row_name(const gt_strtab *names, const gt_site_row *row, char *buf, size_t cap);

/* The kind's name in the JSON and CSV: "kernel", "memcpy", "memset", "alloc". */
const char *gt_site_kind_name(uint8_t kind);
int gt_site_kind_of(const char *name); /* the record kind, -1 when unknown */

void gt_callsites_free(gt_site_table *cs);

#endif
