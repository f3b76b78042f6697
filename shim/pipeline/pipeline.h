/* The pipeline's life (drain.c, end.c): started with its parameters,
 * drained on a thread of its own, finished exactly once. */
#ifndef GT_PIPELINE_H
#define GT_PIPELINE_H

#include <stddef.h>
#include <stdint.h>

#include "event.h"
#include "settings.h"

/* The drain thread and the pipeline's life: start on first use, held
 * chunks for pending GPU times, finishing exactly once. */

/* GPU-time resolution, registered by the GPU-timing module. resolve() runs
 * on the draining thread for each record flagged GT_EVF_GPU_PENDING, in
 * each thread's order: it returns 1 once it has cleared the flag (setting
 * GT_EVF_GPU_TIMED and gpu_start/gpu_end in CLOCK_MONOTONIC ns when it has
 * them), 0 while the GPU work is not complete (the record's chunk, and
 * every later chunk of its thread, are held and retried). With give_up
 * set it must clear the flag and return 1, with the time when it has it at
 * once, else without GPU time. GT_GPU_GIVE_UP_CUT is give_up from the
 * report's cut on: the process is ending, so nothing need be given back
 * (a source whose answer costs more than a lookup gives none). With no
 * resolver registered no record can be pending, and a flagged record is
 * reported without GPU time. */
#define GT_GPU_GIVE_UP 1
#define GT_GPU_GIVE_UP_CUT 2
typedef struct gt_gpu_resolver {
    int (*resolve)(gt_event *ev, int give_up);
    /* Called on the draining thread before each pass that resolves records
     * (may be NULL): lets the source bring in what resolving needs.
     * settle_left_ns is what is left of an end step's wait for pending GPU
     * times (1 once it is over), 0 outside one: the source's work stays
     * within it. Outside one, stop() (never NULL) turns true when an end
     * step is asked for: the source leaves what it has not read for the
     * next poll, so that the step is not kept waiting. */
    void (*poll)(uint64_t settle_left_ns, int (*stop)(void));
    /* Why GPU timing, configured on, could give no time at all (a short
     * phrase for the report), or NULL. May be NULL itself. */
    const char *(*off_reason)(void);
    /* After resolve() cleared ev's flag: records to hand to the consumer
     * right after ev (up to cap into out, 0 when none are left; called
     * until 0), made by the source for ev's work (a graph launch's kernel
     * nodes). Host times 0. May be NULL. */
    uint32_t (*extras)(const gt_event *ev, gt_event *out, uint32_t cap);
    /* Where the times came from, with which library or why not CUPTI in
     * detail (for the report; SPEC §12 gpu_timing). May be NULL. */
    enum gt_gpu_source (*source)(char *detail, size_t cap);
} gt_gpu_resolver;
void gt_set_gpu_resolver(const gt_gpu_resolver *r); /* store-release; NULL removes */
const char *gt_gpu_timing_off_reason(void);         /* the registered resolver's, or NULL */
/* The registered resolver's source; off (detail "") without one. */
enum gt_gpu_source gt_gpu_timing_source(char *detail, size_t cap);

/* Why records were dropped, as things stood at the first drop: no memory
 * for a buffer, or the cap (cap_bytes) full, of chunks held by `threads`
 * threads (held_bytes) and of chunks waiting for the drain thread
 * (waiting_bytes: published, or held for their GPU times). */
typedef struct gt_pool_drops {
    int no_memory;
    uint32_t threads;
    size_t held_bytes;
    size_t waiting_bytes;
    size_t cap_bytes;
} gt_pool_drops;

/* Every record is reported (consumed before the cut), dropped before the
 * cut, or late (consumed after it, or dropped after it). */
typedef struct gt_pipeline_totals {
    uint64_t records; /* records passed to the consumer up to the cut (all, before it) */
    uint64_t dropped; /* records that could not be stored, up to the cut */
    uint64_t late;    /* records made after the cut, consumed or dropped */
    /* Reported records whose GPU work was still pending when an end step
     * stopped waiting for it: reported without GPU time. */
    uint64_t gpu_given_up;
    gt_pool_drops drops; /* when any were dropped */
    int signal;          /* the signal that made the report, 0 at a normal exit */
    int final;    /* the last report; 0 for one made before an exec or a snapshot */
    int snapshot; /* a snapshot (params.snapshot_ns): the process goes on */
} gt_pipeline_totals;

typedef struct gt_pipeline_params {
    size_t chunk_bytes; /* multiple of 4096, at least GT_CHUNK_MIN_BYTES */
    size_t cap_bytes;   /* memory cap for chunks */
    int drain_thread;   /* 0: records wait until gt_pipeline_drain_now/finish */
    /* At the cut and at a report: how long pending GPU times are awaited
     * before they are given up. */
    unsigned final_wait_ms;
    unsigned idle_sleep_ms; /* longest drain sleep with nothing to do */
    /* Every this many ns from the drain thread's start, a snapshot: the
     * records so far that need not wait for the GPU go to the consumer,
     * then finished() with totals.snapshot set. 0: none. */
    uint64_t snapshot_ns;
    /* Called on the draining thread with runs of n consecutive records of
     * one thread (n >= 1), in each thread's order, host times still in
     * ticks: the consumer's per-record set-up is paid once per run. */
    void (*consume)(gt_event *ev, uint32_t n, void *ctx);
    /* Called on the drain thread at every pass with the time now: how many
     * ns until something outside the pipeline changes what is recorded (a
     * capture window's edge), which bounds the drain's sleep. NULL: none. */
    uint64_t (*next_edge)(uint64_t now_ns, void *ctx);
    /* Called on the draining thread once, at the cut: every record
     * consumed afterwards is late. */
    void (*cut)(void *ctx);
    /* Called on the draining thread for each report: before an exec
     * (final 0), at each snapshot (final 0, snapshot 1), and once at the
     * end (final 1). */
    void (*finished)(const gt_pipeline_totals *t, void *ctx);
    void *ctx;
} gt_pipeline_params;

/* What an end step adds to the program's exit or exec, at most, besides
 * writing the files: pending GPU times are awaited GT_GPU_WAIT_MS (the
 * rest of the 100 ms goes to consuming what is left and giving up what is
 * still pending). */
#define GT_GPU_WAIT_MS 30u
/* The longest a program thread waits for an end step: a bound for a
 * report stuck writing its files, far above what one takes. */
#define GT_FINISH_WAIT_MS 5000u
/* The longest a thread that crashed waits for the final report (signals.c). */
#define GT_FATAL_WAIT_MS 1000u

/* (Re)starts the pipeline with every buffer empty and no drain thread yet.
 * No other thread may be recording. */
int gt_pipeline_start(const gt_pipeline_params *p);

/* Starts the drain thread now if the parameters allow one (first use). */
void gt_drain_ensure_started(void);

/* Wakes the drain thread before its poll interval ends. Async-signal-safe. */
void gt_drain_wake(void);

/* Tests without a drain thread: one drain pass on the calling thread. */
void gt_pipeline_drain_now(void);

/* The end steps. Each is made on the drain thread when there is one (the
 * caller waits up to wait_ms), else on the caller; each returns 0 once
 * made, -1 on timeout.
 *
 * The cut, exactly once: every thread's committed records are taken and
 * consumed (pending GPU times awaited up to final_wait_ms, then given
 * up), then params.cut(). Recording goes on. */
int gt_pipeline_cut(unsigned wait_ms);

/* A report of everything recorded so far (records taken as at the cut),
 * passed to finished() with final 0; recording goes on. Nothing when
 * nothing was ever recorded. After the final report, nothing. */
int gt_pipeline_report(unsigned wait_ms);

/* The cut if not made yet, then, exactly once: recording closes, every
 * record is consumed, finished() with final 1. */
int gt_pipeline_finish(unsigned wait_ms);

/* Async-signal-safe: asks the drain thread for the final report for signal
 * `sig` and waits up to wait_ms. Returns -1 at once when there is no drain
 * thread (then nothing was recorded and no CUDA call was seen). */
int gt_pipeline_finish_from_signal(int sig, unsigned wait_ms);


/* 1 from the start of the cut: GPU work needs no event pairs any more. */
int gt_pipeline_cutting(void);

#endif
