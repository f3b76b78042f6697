/* Advice (SPEC §8): rules that turn what was recorded into what to fix.
 *
 * The facts a rule needs about single events (the largest synchronous
 * copy, the longest synchronize call) are folded as records arrive, in
 * gt_advice_acc, so no event is kept; the rules themselves run when the
 * report is written, over the accumulator and the report's tables.
 *
 * Rules, in the order they are printed, and when each fires:
 *   pageable-async-memcpy  an async copy from or to pageable host memory
 *                          (the driver stages it: it runs synchronously)
 *   sync-memcpy            a synchronous HtoD/DtoH copy of more than
 *                          GT_ADVICE_SYNC_MEMCPY_BYTES
 *   small-memcpy           GT_ADVICE_SMALL_MEMCPY_MIN_COUNT copies or more
 *                          of fewer than GT_ADVICE_SMALL_MEMCPY_BYTES
 *   small-kernels          GT_ADVICE_SMALL_KERNEL_MIN_LAUNCHES launches or
 *                          more of kernels whose median GPU time is under
 *                          GT_ADVICE_SMALL_KERNEL_NS (GPU timing on): work so
 *                          small that its launch is a large share of it
 *   sync-api               GT_ADVICE_SYNC_API_MIN_CALLS synchronize calls or
 *                          more, blocking the host for at least
 *                          GT_ADVICE_SYNC_API_MIN_SHARE_PCT % of the wall time
 *   gpu-idle               gaps of more than GT_GPU_IDLE_GAP_NS between GPU
 *                          work (gpu_busy.h) taking at least
 *                          GT_ADVICE_GPU_IDLE_MIN_SHARE_PCT % of the time
 *                          observed, those the program could fill named
 *                          apart from those spent compiling or loading code
 *                          and at start-up
 *   ptx-jit                a module loaded from PTX (the driver compiles it);
 *                          the fix named is the one for where the PTX of the
 *                          most JIT time came from (enum gt_ptx_source)
 *   leak                   device memory still held when the process ended:
 *                          neither freed (at any time, in atexit handlers
 *                          and destructors too) nor released with its
 *                          context (destroyed or reset)
 * Each counts its occurrences and names the worst one. A rule whose
 * category is disabled stays silent. Fixes are phrased for the language
 * the work came from (language.h). */
#ifndef GT_ADVICE_H
#define GT_ADVICE_H

#include <stddef.h>
#include <stdint.h>

#include "event.h"
#include "report.h"

#define GT_ADVICE_SYNC_MEMCPY_BYTES (64u << 10) /* sync-memcpy: copies over 64 KiB */
#define GT_ADVICE_SMALL_MEMCPY_BYTES 4096u      /* small-memcpy: copies under 4 KiB */
#define GT_ADVICE_SMALL_MEMCPY_MIN_COUNT 100u   /* small-memcpy: "many" */
#define GT_ADVICE_SYNC_API_MIN_CALLS 10u        /* sync-api: fewer is not a habit */
#define GT_ADVICE_SYNC_API_MIN_SHARE_PCT 10u    /* sync-api: of the wall time blocked */
/* small-kernels: a kernel launch costs the host a few us (4-5 on an H100,
 * more under any tracer), and event pairs read 5-7 us around an empty
 * kernel there, a median of 16-19 us when 4 threads launch them on 4
 * streams: against kernels under 25 us by event timing a launch is a fifth
 * of the work or more, and 1000 such launches are a habit, not a warm-up. */
#define GT_ADVICE_SMALL_KERNEL_NS 25000u
#define GT_ADVICE_SMALL_KERNEL_MIN_LAUNCHES 1000u
/* gpu-idle: gaps the program could fill, taking at least this share of
 * the time observed. A gap near GT_GPU_IDLE_GAP_NS counts on some runs and
 * not on others; advice that rests on a few such gaps would come and go
 * with them, and a few ms in a long run are not worth a change. */
#define GT_ADVICE_GPU_IDLE_MIN_SHARE_PCT 5u
#define GT_ADVICE_RULES 8u
#define GT_ADVICE_MESSAGE_MAX 1024u

/* One event kept as a rule's example. */
typedef struct gt_advice_example {
    uint32_t api; /* string id of the entry point */
    uint8_t dir;  /* enum gt_copy_dir, for copies */
    uint64_t bytes;
    uint64_t ns; /* host time of the call; for sync-memcpy the copy's own (GPU) time */
    uint32_t site; /* its call site's label (callsite_table.h), 0 none */
} gt_advice_example;

/* A rule's running count, total and worst example. */
typedef struct gt_advice_tally {
    uint64_t count;
    uint64_t bytes;
    uint64_t ns;      /* host time; small copies: without the wait below */
    uint64_t wait_ns; /* small copies: host time spent waiting for earlier GPU work */
    gt_advice_example worst;
} gt_advice_tally;

typedef struct gt_advice_acc {
    gt_advice_tally pageable_async; /* worst: most bytes */
    gt_advice_tally sync_copy;      /* worst: longest GPU time (host time untimed) */
    gt_advice_tally small_copy;     /* worst: the direction with the most */
    uint64_t small_by_dir[GT_DIR_COUNT];
    gt_advice_tally sync_call; /* worst: longest */
    gt_advice_tally ptx_load;  /* worst: longest */
    uint64_t ptx_by_source[GT_PTX_SOURCE_COUNT];
    uint64_t ptx_ns_by_source[GT_PTX_SOURCE_COUNT];
    uint8_t device_sm; /* of the latest PTX load that knew it */
} gt_advice_acc;

/* Folds one record (not nested, times in ns). */
void gt_advice_add(gt_advice_acc *a, const gt_event *ev);

/* A finding of one rule. */
typedef struct gt_advice {
    const char *rule;
    uint64_t count;
    /* What happened, what to do, and the worst example, in one sentence
     * or three; printable ASCII apart from names the program gave. */
    char message[GT_ADVICE_MESSAGE_MAX];
} gt_advice;

/* A rule's place in the order above; GT_ADVICE_RULES for a rule this
 * gputrace does not know. */
unsigned gt_advice_rule_rank(const char *rule);

/* Runs the rules over a finished report: fills out with the findings of
 * the rules that fired, in rule order, and returns their number (for a
 * report read back from a file, the findings it holds). p gives
 * the wall time and the process start (NULL: the sync-api share is not
 * checked and times are absolute). */
size_t gt_report_advice(const gt_report *r, const gt_process_info *p,
                        gt_advice out[GT_ADVICE_RULES]);

#endif
