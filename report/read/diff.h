/* Comparing two reports (gputrace diff): rows matched by their key
 * (kernel name and graph flag; copy direction, host memory and async;
 * memset async; compile api, program and success; module api and image
 * kind; sync and api entry point; NVTX domain and name), with the calls,
 * total and average before and after and the change of the total in %.
 *
 * Verdicts: `new` (only in the new report), `gone` (only in the base),
 * `slower` / `faster` when the total changed by more than the threshold,
 * `same` otherwise; `moved` for a row that grew or appeared in a category
 * whose total did not grow past the threshold while other rows of it
 * shrank or went: work that moved between rows (a copy kind that became
 * another, as pinning pageable buffers does), not time added. A slower or
 * new row fails the gate (diff exits 1) unless its new total is below
 * min_ns: time the base did not spend is time added, whether a row grew or
 * appeared. So does the GPU busy total, when GPU work is compared and it
 * grew past the threshold by min_ns or more: it is the headline. NVTX
 * marks are matched by domain and name after the NVTX rows (category
 * "nvtx_mark"): they have counts, no time, so they are new, gone or the
 * same and never fail the gate. Memory devices are not compared.
 *
 * Rates (diff_rates.c, category "nvtx_rate"): for an NVTX range in both
 * reports, each payload number both give per second of the range's GPU
 * time (of its wall time when it had none). A throughput that dropped by
 * more than the threshold is `slower` and fails the gate; one that rose
 * is `faster`. Compared whenever NVTX ranges or kernels are. */
#ifndef GT_DIFF_H
#define GT_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "event.h"
#include "report.h"
#include "strtab.h"

struct gt_json;

#define GT_DIFF_DEFAULT_THRESHOLD_PCT 5.0
/* By default GPU-timed rows (SPEC §12): what the GPU did, measured by the
 * GPU; host times vary from run to run with the machine's load. */
#define GT_DIFF_DEFAULT_CATEGORIES                                                                 \
    (GT_CAT_BIT(GT_CAT_KERNEL) | GT_CAT_BIT(GT_CAT_MEMCPY) | GT_CAT_BIT(GT_CAT_MEMSET))
/* The default min_ns: 1% of the base's GPU busy time, at least this: a row
 * that small moves by noise alone (a few launches' jitter). */
#define GT_DIFF_MIN_SHARE_PCT 1u
#define GT_DIFF_MIN_FLOOR_NS 20000u
#define GT_DIFF_MIN_AUTO UINT64_MAX /* min_ns: the default above */

enum gt_diff_verdict {
    GT_DIFF_SLOWER,
    GT_DIFF_NEW,
    GT_DIFF_MOVED,
    GT_DIFF_FASTER,
    GT_DIFF_GONE,
    GT_DIFF_SAME,
    GT_DIFF_VERDICTS
};

typedef struct gt_diff_options {
    double threshold_pct; /* a change within +-threshold is the same */
    uint64_t min_ns;      /* rows with a smaller new total never fail the gate; GT_DIFF_MIN_AUTO */
    unsigned categories;  /* GT_CAT_BIT mask of the categories compared */
} gt_diff_options;

/* One side of a row: what a report says of it (zero when absent). */
typedef struct gt_diff_side {
    bool present;
    uint64_t calls;
    uint64_t timed; /* calls with a time: the average's count */
    uint64_t total;
    uint64_t avg;
} gt_diff_side;

typedef struct gt_diff_row {
    enum gt_category cat;
    bool mark;                      /* an NVTX mark (cat is GT_CAT_NVTX): calls are its count */
    bool rate;                      /* an NVTX rate (cat is GT_CAT_NVTX): compared by rate_* */
    double rate_before, rate_after; /* per second */
    char unit[24];                  /* of the rate: "FLOP", "B", "" */
    char *name;                     /* the row's label, as in the summary */
    gt_diff_side before, after;
    enum gt_diff_verdict verdict;
    double change_pct; /* of the total; NaN when the base total is 0 */
    bool fails;        /* counts against the gate */
} gt_diff_row;

/* What the header compares. */
typedef struct gt_diff_run {
    const char *file;
    const char *command;
    uint64_t wall_ns;
    uint64_t gpu_busy_ns;
    uint64_t events;
    uint64_t late_events;
    uint64_t gpu_pending; /* GPU work without GPU time: pending at exit */
    uint64_t nvtx_open_ns;
} gt_diff_run;

/* What the checksums of the two runs say (diff_checksums.c). */
enum gt_diff_ck_verdict {
    GT_DIFF_CK_NONE,         /* neither run has checksums */
    GT_DIFF_CK_ONE_SIDED,    /* one run has them: nothing to compare */
    GT_DIFF_CK_SAME,         /* every copy compared brought back the same data */
    GT_DIFF_CK_DIVERGED,     /* a copy brought back other data (diff exits 3) */
    GT_DIFF_CK_INCOMPARABLE, /* other modes, copy counts or sizes (diff exits 4) */
};

typedef struct gt_diff_checksums {
    enum gt_diff_ck_verdict verdict;
    char mode[16];
    char detail[320];    /* in words: why not comparable, or not compared */
    uint64_t compared;   /* copies whose hashes were compared */
    uint64_t uncompared; /* copies unhashed in either run, passed over */
    bool renumbered;     /* threads paired by their copies under other numbers */
    /* DIVERGED: the first copy (by rank, thread and index in BASE) that
     * brought back other data; past the listed copies (first_listed
     * false) only its thread and the first unlisted index are known. */
    bool first_listed;
    uint32_t rank, thread, next_thread;
    uint64_t index, bytes, base_hash, next_hash;
    uint32_t site; /* string id of the copy's call site as JSON, 0: none */
} gt_diff_checksums;

typedef struct gt_diff {
    gt_diff_options opt; /* min_ns as applied (the default worked out) */
    gt_diff_run base, next;
    gt_diff_row *rows; /* by category, then by how much the total moved */
    size_t nrows;
    size_t count[GT_DIFF_VERDICTS];
    size_t failing;      /* rows */
    bool gpu_compared;   /* a GPU-timed category is among those compared */
    bool gpu_busy_fails; /* the GPU busy total grew past the threshold and min_ns */
    gt_diff_checksums checksums;
    const gt_strtab *names; /* the reports' names (call sites) */
} gt_diff;

/* Whether the comparison fails the gate. */
static inline bool gt_diff_fails(const gt_diff *d)
{
    return d->failing || d->gpu_busy_fails;
}

/* Compares two reports whose names share one string table (the keys
 * then compare as they are). 0, or -1 when out of memory. */
int gt_diff_reports(const gt_report *base, const gt_report *next, const char *base_file,
                    const char *next_file, const gt_diff_options *opt, gt_diff *out);
void gt_diff_free(gt_diff *d);

const char *gt_diff_verdict_name(enum gt_diff_verdict v);

/* Appends the rate rows of the NVTX ranges both reports have (diff_rates.c);
 * 0, or -1 when out of memory. */
int gt_diff_rates(gt_diff *d, size_t *cap, const gt_report *base, const gt_report *next);

/* A new row at the end of d's rows (grown by doubling *cap); NULL when
 * out of memory. */
gt_diff_row *gt_diff_add_row(gt_diff *d, size_t *cap);

/* diff_checksums.c: the checksums of two reports whose names share one
 * table; 0, or -1 when out of memory (the verdict is then partial). */
int gt_diff_checksums_compare(const gt_report *base, const gt_report *next, gt_diff_checksums *out);
const char *gt_diff_checksum_verdict_name(enum gt_diff_ck_verdict v);
/* The checksums' line(s) in the text, their member in the JSON. */
void gt_diff_checksums_write_text(const gt_diff_checksums *d, const gt_strtab *names, FILE *out);
void gt_diff_checksums_write_json(const gt_diff_checksums *d, const gt_strtab *names,
                                  struct gt_json *w);

/* The category a row is shown under: "nvtx_mark" for marks, "nvtx_rate"
 * for rates. */
const char *gt_diff_row_category(const gt_diff_row *r);

/* Text: the header, the verdict, and per category a table of the rows
 * that changed (every row, whole, when all is set), fitting width
 * columns (0: 120). JSON and CSV: every row.
 * Each returns 0, or -1 after a write error. */
int gt_diff_write_text(const gt_diff *d, bool all, unsigned width, FILE *out);
int gt_diff_write_json(const gt_diff *d, FILE *out);
int gt_diff_write_csv(const gt_diff *d, FILE *out);

#endif
