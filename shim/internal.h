/* The shim's internal API: everything the files of shim/ (and the hooks)
 * share. Nothing here is exported from libgputrace.so.
 *
 * Data flows one way (DESIGN §1):
 *   hook -> gt_ev_begin/gt_ev_commit (this thread's chunk)
 *        -> publish list -> drain thread (GPU times resolved, clock ticks
 *        converted, records folded into the report) -> writers at exit.
 *
 * Memory ordering is stated at every publish point; an atomic without a
 * stated order uses the one written beside it. */
#ifndef GT_SHIM_INTERNAL_H
#define GT_SHIM_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "chrome.h"
#include "event.h"
#include "output.h"
#include "pftrace.h"
#include "report.h"
#include "stream_file.h"
#include "strtab.h"

#define GT_LIKELY(x) __builtin_expect(!!(x), 1)
#define GT_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ------------------------------------------------------------------ config.c
 * SPEC §3, plus GPUTRACE_BUFFER_MB. Parsed once at load; read-only after. */

#define GT_FMT_BIT(f) (1u << (f)) /* f: enum gt_output_format (output.h) */

enum gt_log_dest { GT_LOG_STDERR, GT_LOG_STDOUT, GT_LOG_FILE };

enum gt_config_var {
    GT_VAR_VERBOSITY,
    GT_VAR_CATEGORIES,
    GT_VAR_OUTPUT,
    GT_VAR_FORMAT,
    GT_VAR_GPU_TIMING,
    GT_VAR_LOG,
    GT_VAR_BUFFER_MB,
    GT_VAR_CAPTURE,
    GT_VAR_DELAY,
    GT_VAR_DURATION,
    GT_VAR_INTERVAL,
    GT_VAR_COUNT
};

/* GPUTRACE_CAPTURE: enum gt_capture_mode (report.h; capture.h says what
 * each records). */
#define GT_CAPTURE_NAME_MAX 1024u /* bytes of an NVTX range name or domain, NUL included */
/* Seconds in GPUTRACE_DELAY, _DURATION and _INTERVAL: at most this many
 * (a year), with up to 9 decimals (nanoseconds). */
#define GT_SECONDS_MAX 31536000u
#define GT_INTERVAL_MIN_NS 100000000u /* snapshots at most ten times a second */

#define GT_PATH_MAX 4096 /* paths (with their NUL) longer than this are refused */
#define GT_BUFFER_MB_DEFAULT 64u
#define GT_BUFFER_MB_MIN 1u
#define GT_BUFFER_MB_MAX 16384u
#define GT_WARNING_MAX 640    /* one warning line, NUL included */
#define GT_SHOWN_VALUE_MAX 64 /* bytes of a bad value quoted in its warning */

typedef struct gt_config {
    unsigned categories; /* GT_CAT_BIT mask */
    enum gt_verbosity verbosity;
    enum gt_gpu_timing gpu_timing;
    unsigned formats; /* GT_FMT_BIT mask; used only with an output template */
    enum gt_log_dest log_dest;
    size_t buffer_bytes;
    char output[GT_PATH_MAX]; /* report file template; "" = no files */
    char log_path[GT_PATH_MAX];
    enum gt_capture_mode capture;
    /* nvtx:NAME[@DOMAIN]: the range's name and domain; "" for the default
     * domain, "*" for any. */
    char capture_name[GT_CAPTURE_NAME_MAX];
    char capture_domain[GT_CAPTURE_NAME_MAX];
    uint64_t delay_ns;    /* recording starts this long after load */
    uint64_t duration_ns; /* and lasts this long; 0: unlimited */
    uint64_t interval_ns; /* snapshots of the report files; 0: none */
    /* One line per rejected variable (at most one each), without newline,
     * kept until the log is set up so that they go where GPUTRACE_LOG says. */
    unsigned n_warnings;
    char warnings[GT_VAR_COUNT][GT_WARNING_MAX];
    uint8_t warning_var[GT_VAR_COUNT]; /* the enum gt_config_var each warning is about */
} gt_config;

typedef const char *(*gt_getenv_fn)(const char *name, void *ctx);

/* Fills *cfg from the variables `get` returns (NULL = unset). Never fails:
 * a bad value leaves the default and adds a warning line. */
void gt_config_parse(gt_config *cfg, gt_getenv_fn get, void *ctx);

const char *gt_config_var_name(enum gt_config_var v);

/* config_warnings.c. The gputrace command checks the variables once and
 * gives their warnings; it lists the values it checked in
 * GPUTRACE_CONFIG_CHECKED (gt_config_checked_list), so that no process
 * under it repeats a warning about a value it still has. */
#define GT_CONFIG_CHECKED_VAR "GPUTRACE_CONFIG_CHECKED"
#define GT_CONFIG_CHECKED_MAX (GT_VAR_COUNT * 17) /* a 16-hex-digit hash and a comma each */

/* The list of the values the variables have now (NUL-terminated). */
void gt_config_checked_list(gt_getenv_fn get, void *ctx, char out[GT_CONFIG_CHECKED_MAX]);

/* Writes cfg's warning lines to the log (gt_log_init first) unless its
 * verbosity is none, except those about a value that `get` shows already
 * checked (listed in its GPUTRACE_CONFIG_CHECKED). */
void gt_config_give_warnings(const gt_config *cfg, gt_getenv_fn get, void *ctx);

/* The process's configuration. Hooks read gt_cfg.categories and
 * gt_cfg.gpu_timing directly: plain loads, written once before any thread
 * of the shim exists. */
extern gt_config gt_cfg;

/* --------------------------------------------------------------------- log.c
 * GPUTRACE_LOG. Every function keeps errno and never fails the program. */

void gt_log_init(enum gt_log_dest dest, const char *path, enum gt_verbosity v);

/* Writes bytes as they are (one write(2) per call where the kernel allows;
 * a file destination is opened for each call, see log.c). */
void gt_log_write(const char *buf, size_t len);

/* "gputrace: warning: ...\n" unless the verbosity is none. */
void gt_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* "gputrace: debug: ...\n" at debug verbosity only. */
void gt_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int gt_log_debug_enabled(void);

/* Copies at most `max_src` bytes of s[0..len) into out (always terminated)
 * so that any bytes are safe on a terminal: printable ASCII and well-formed
 * UTF-8 pass, \ and ' are escaped, everything else becomes \xNN; "..." is
 * appended when s was cut. Returns the length written. */
size_t gt_escape(char *out, size_t out_size, const char *s, size_t len, size_t max_src);

/* ------------------------------------------------------------------- clock.c
 * Host timestamps. The hot path stores raw ticks (rdtsc where the TSC is
 * invariant, else CLOCK_MONOTONIC ns); the drain converts them to
 * CLOCK_MONOTONIC ns with a piecewise calibration it refines as it runs. */

extern int gt_clock_tsc; /* 1: ticks are TSC cycles; 0: ticks are ns. Set at load. */

uint64_t gt_clock_mono_ns(void);

static inline uint64_t gt_rdtsc(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return __builtin_ia32_rdtsc();
#else
    return 0; /* never called: gt_clock_tsc stays 0 */
#endif
}

static inline uint64_t gt_clock_ticks(void)
{
    if (GT_LIKELY(gt_clock_tsc)) return gt_rdtsc();
    return gt_clock_mono_ns();
}

/* At load: picks the source (force_source: -1 auto, 0 clock_gettime, 1 TSC
 * when available) and anchors the calibration at the current time. */
void gt_clock_init(int force_source);

/* Converting thread only (the drain, or the thread finishing the pipeline
 * when there is no drain thread): adds a calibration sample, then
 * converts ticks read at or before that moment. */
void gt_clock_refine(void);

/* The calibration segment the last conversion used: ticks in [tsc0, tsc1)
 * convert as ns0 + ((ticks - tsc0) * mult >> 32). Converting thread only. */
typedef struct gt_clock_segment {
    uint64_t tsc0, tsc1, ns0, mult;
} gt_clock_segment;
extern gt_clock_segment gt_clock_seg;
uint64_t gt_clock_to_ns_slow(uint64_t ticks);

/* Inline: the drain converts two timestamps per record, and almost every
 * tick falls in the segment used last. */
static inline uint64_t gt_clock_to_ns(uint64_t ticks)
{
    const gt_clock_segment *s = &gt_clock_seg;
    if (GT_LIKELY(ticks - s->tsc0 < s->tsc1 - s->tsc0))
        return s->ns0 + (uint64_t)(((unsigned __int128)(ticks - s->tsc0) * s->mult) >> 32);
    return gt_clock_to_ns_slow(ticks);
}

/* ------------------------------------------------------------ thread.c, TLS
 * Per-thread state. `gt_tls` is initial-exec TLS (the hot path reads it
 * with one %fs-relative load); `gt_thread` is the heap part that other
 * threads may read (registry). */

typedef struct gt_chunk gt_chunk;
typedef struct gt_thread gt_thread;

enum gt_tls_state {
    /* Not registered: before the first record, and again after the TLS
     * destructor (a later destructor of another library may still record:
     * the thread registers again and is handed over in the next round). */
    GT_TLS_FRESH,
    GT_TLS_ACTIVE, /* registered */
    GT_TLS_NEVER   /* a shim thread: never records */
};

struct gt_tls {
    gt_chunk *chunk;   /* current chunk, NULL when none */
    uint32_t count;    /* records committed to chunk (also in chunk->committed) */
    uint32_t capacity; /* records chunk holds; 0 when none: the slow path runs */
    uint32_t guard;    /* non-zero: inside the shim (a slot is open, or shim work) */
    uint32_t tid;
    uint64_t seq;    /* next record's sequence number */
    uint32_t serial; /* kept when the thread registers again: its records stay one sequence */
    gt_thread *thr;
    uint8_t state;     /* enum gt_tls_state */
    uint8_t finishing; /* this thread is finishing the pipeline */
};

extern __thread struct gt_tls gt_tls __attribute__((tls_model("initial-exec")));

/* --------------------------------------------------------- buffer.c, chunks
 * A chunk is one mmap'ed block: a 128-byte header, then gt_event slots.
 * Ownership moves: owner thread (OPEN) -> publish list (PUBLISHED) -> drain
 * -> free stack -> a new owner; or, at an end step, OPEN -> STOLEN by the
 * drain, which then reads what the owner commits until the owner moves on
 * to another chunk, and recycles it. */

enum gt_chunk_state { GT_CHUNK_OPEN, GT_CHUNK_PUBLISHED, GT_CHUNK_STOLEN };

struct gt_chunk {
    union {
        struct {
            gt_chunk *next; /* publish list / drain queues; written only by the
                               chunk's current holder */
            /* Owner: store-release after each record (gt_ev_commit).
             * Readers: load-acquire, then read the records below it. */
            _Atomic uint32_t committed;
            /* enum gt_chunk_state; OPEN -> PUBLISHED (owner) or OPEN -> STOLEN
             * (collector) by compare-exchange, acq_rel: whoever wins owns
             * the records. */
            _Atomic uint32_t state;
            /* Link in the free stack (table index + 1). Relaxed: the stack's
             * head CAS orders it, and a stale reader's value is discarded by
             * the tag check. */
            _Atomic uint32_t free_next;
            uint32_t index; /* in the pool table */
            uint32_t owner; /* registration serial of the owner thread */
            uint32_t limit; /* drain: records to consume */
            uint32_t done;  /* drain: records already consumed */
            /* Set by the owner when it takes the chunk: the seq its first
             * record gets (its thread's chunks are ordered by it), and its
             * registry node (a stolen chunk is its thread's to write for
             * as long as the node's `current` is this chunk). */
            uint64_t first_seq;
            gt_thread *thr;
        } h;
        char header_bytes[128];
    };
    gt_event ev[];
};

#define GT_CHUNK_MIN_BYTES 4096u
#define GT_CHUNK_DEFAULT_BYTES 65536u

/* ------------------------------------------------------------ the event API
 * What a hook does:
 *
 *     uint64_t t0 = gt_clock_ticks();
 *     CUresult r = real_fn(args);
 *     gt_event *ev = gt_ev_begin();      // NULL: not recorded (see below)
 *     if (ev) {
 *         ev->kind = GT_EV_KERNEL; ev->api = id; ev->result = r;
 *         ev->host_start = t0; ev->host_end = gt_clock_ticks(); ...
 *         gt_ev_commit(ev);
 *     }
 *
 * gt_ev_begin returns a zeroed slot with seq and tid filled, or NULL when
 * the record cannot be stored (no chunk within the memory cap: counted as
 * dropped), when the thread is inside the shim already (a slot is open on
 * this thread, or this is a shim thread such as the drain: not counted),
 * or when recording is closed (before load, after exit). Between begin and
 * commit the thread's guard is held, so a hook reached from inside another
 * hook's begin..commit window records nothing; begin may also be called
 * before the real call, at the price of that window covering it.
 *
 * Cost: fast path (a slot left in the chunk) ~ a TLS load, two compares,
 * 128 bytes of zero stores and a plain store-release (a mov on x86); no
 * atomic read-modify-write, no lock, no syscall. Once per chunk (511
 * records by default) the slow path publishes the full chunk (one CAS on
 * its state, one CAS push, one relaxed fetch-add) and pops a free chunk
 * (one CAS) or maps a new one (mmap, only while below the cap). The first
 * record of a thread registers it (lock-free) and may start the drain
 * thread. begin..commit touch errno only on the slow path, and restore it.
 * A slot must be committed or cancelled before the thread begins another
 * and before it forks. */

gt_event *gt_ev_begin_slow(void);

/* Eight 16-byte stores: compilers turn a 128-byte memset into `rep stos`,
 * whose start-up alone costs more than the whole record. Slots are
 * 16-byte aligned (a page-aligned chunk, a 128-byte header). */
static inline void gt_event_zero(gt_event *ev)
{
    typedef long long zero16 __attribute__((vector_size(16), may_alias));
    zero16 *p = (zero16 *)(void *)ev;
    const zero16 z = {0, 0};
    p[0] = z, p[1] = z, p[2] = z, p[3] = z, p[4] = z, p[5] = z, p[6] = z, p[7] = z;
}

static inline gt_event *gt_ev_begin(void)
{
    struct gt_tls *t = &gt_tls;
    if (GT_LIKELY(t->count < t->capacity && !t->guard)) {
        gt_event *ev = &t->chunk->ev[t->count];
        gt_event_zero(ev);
        ev->seq = t->seq++;
        ev->tid = t->tid;
        t->guard = 1;
        return ev;
    }
    return gt_ev_begin_slow();
}

static inline void gt_ev_commit(gt_event *ev)
{
    struct gt_tls *t = &gt_tls;
    (void)ev; /* always the slot at t->count: one open slot per thread */
    /* Release: the record's stores become visible to whoever loads the
     * count with acquire (the exit collector reading a live chunk). */
    atomic_store_explicit(&t->chunk->h.committed, ++t->count, memory_order_release);
    t->guard = 0;
}

/* Gives the open slot back: it is not recorded and its seq is reused. */
void gt_ev_cancel(gt_event *ev);

/* Publishes the calling thread's partial chunk now, so that the drain sees
 * its records before the thread blocks for long (a synchronize call whose
 * pending GPU records should resolve meanwhile). The rest of the chunk is
 * not used; the next record starts a new one. Costs one slow path. */
void gt_ev_flush(void);

/* Shim work on a program thread that must not be recorded (the shim's own
 * CUDA calls from a hook). Returns 0 when the guard was already held: the
 * caller is nested and must not leave it. */
static inline int gt_guard_enter(void)
{
    if (gt_tls.guard) return 0;
    gt_tls.guard = 1;
    return 1;
}

static inline void gt_guard_leave(void)
{
    gt_tls.guard = 0;
}

/* Hooks note every intercepted CUDA call (hooks/hook.h): a process that
 * made one reports at exit even with nothing recorded, and gets a drain
 * thread so that SIGINT/SIGTERM can make that report. gt_cuda_used is
 * GT_CUDA_USED once noted: then one relaxed load and one branch per call.
 * Any other value takes the slow path, which notes the call in the active
 * copy, or sets GT_CUDA_PASS_THROUGH in an inactive one (copies.c), whose
 * wrappers then call the real function and nothing else. */
enum { GT_CUDA_UNSEEN, GT_CUDA_USED, GT_CUDA_PASS_THROUGH };
extern _Atomic int gt_cuda_used;
/* Returns 0 when the call must only pass through. */
int gt_note_cuda_call_slow(void);

/* --------------------------------------------------- thread.c, the registry */

struct gt_thread {
    _Atomic(gt_thread *) next; /* registry list: push-only, nodes reused */
    _Atomic uint32_t in_use;   /* 0 free, 1 claimed: CAS acquire / store release */
    uint32_t serial;           /* unique per registration: chunk owner id */
    uint32_t tid;
    /* The owner's current chunk. Owner: store-release after initialising a
     * new chunk; collector: load-acquire, then compete for it by CAS on its
     * state. NULL when the thread holds none. */
    _Atomic(gt_chunk *) current;
    /* Records this thread could not store. Only the owner writes (relaxed
     * load + store, no read-modify-write); summed once at the end. */
    _Atomic uint64_t dropped;
};

/* Registers the calling thread (claims or adds a registry node). NULL when
 * no memory: the caller counts its records as dropped without a thread. */
gt_thread *gt_thread_register(void);
void gt_threads_init(void);
void gt_thread_count_dropped(void); /* the calling thread lost one record */
uint64_t gt_threads_dropped(void);  /* live threads' + exited threads' */
void gt_threads_for_each(void (*fn)(gt_thread *thr, void *ctx), void *ctx);
void gt_threads_reset(void); /* forget every thread (fork child, tests) */
void gt_tls_reset(void);     /* the calling thread starts fresh */

/* --------------------------------------------------------------- buffer.c */

typedef struct gt_pool_stats {
    size_t chunk_bytes;
    uint32_t chunk_capacity; /* records per chunk */
    uint32_t max_chunks;     /* the cap, in chunks */
    uint32_t mapped_chunks;  /* chunks ever mapped: peak memory = this * chunk_bytes */
    uint32_t pending_chunks; /* published, not yet taken by the drain */
} gt_pool_stats;

/* (Re)initialises the chunk pool; every chunk mapped before is unmapped,
 * so no thread may hold one (fork child, tests). */
int gt_pool_init(size_t chunk_bytes, size_t cap_bytes);
void gt_pool_stats_get(gt_pool_stats *s);
void gt_pool_recycle(gt_chunk *c);
uint32_t gt_pool_capacity(void);

/* Drain side of the publish list: every chunk published so far, oldest
 * first, and their number. */
gt_chunk *gt_publish_take(uint32_t *n);

/* The end steps (drain.c): competes with each live thread for its current
 * chunk (OPEN -> STOLEN) and returns those won, with limit = the committed
 * count at that moment, linked through h.next. The thread goes on writing
 * a stolen chunk until it is full, then takes another without publishing
 * it: what it committed meanwhile is for the drain to read. */
gt_chunk *gt_buffer_steal_live(void);
void gt_buffer_open(void);  /* after gt_pool_init: records may be begun */
void gt_buffer_close(void); /* no new chunk is handed out any more */

/* TLS destructor: hands the thread's partial chunk to the drain. */
void gt_buffer_release_thread(void);

/* ---------------------------------------------------------------- drain.c
 * The drain thread and the pipeline's life: start on first use, held
 * chunks for pending GPU times, finishing exactly once. */

/* GPU-time resolution, registered by the GPU-timing module. resolve() runs
 * on the draining thread for each record flagged GT_EVF_GPU_PENDING, in
 * each thread's order: it returns 1 once it has cleared the flag (setting
 * GT_EVF_GPU_TIMED and gpu_start/gpu_end in CLOCK_MONOTONIC ns when it has
 * them), 0 while the GPU work is not complete (the record's chunk, and
 * every later chunk of its thread, are held and retried). With give_up
 * set it must clear the flag and return 1 (the record is then reported
 * without GPU time). With no resolver registered no record can be pending,
 * and a flagged record is reported without GPU time. */
typedef struct gt_gpu_resolver {
    int (*resolve)(gt_event *ev, int give_up);
    /* Why GPU timing, configured on, could give no time at all (a short
     * phrase for the report), or NULL. May be NULL itself. */
    const char *(*off_reason)(void);
} gt_gpu_resolver;
void gt_set_gpu_resolver(const gt_gpu_resolver *r); /* store-release; NULL removes */
const char *gt_gpu_timing_off_reason(void);         /* the registered resolver's, or NULL */

/* Every record is reported (consumed before the cut), dropped before the
 * cut, or late (consumed after it, or dropped after it). */
typedef struct gt_pipeline_totals {
    uint64_t records; /* records passed to the consumer up to the cut (all, before it) */
    uint64_t dropped; /* records that could not be stored, up to the cut */
    uint64_t late;    /* records made after the cut, consumed or dropped */
    /* Reported records whose GPU work was still pending when an end step
     * stopped waiting for it: reported without GPU time. */
    uint64_t gpu_given_up;
    int signal;   /* the signal that made the report, 0 at a normal exit */
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
    /* Called on the draining thread for each record, in each thread's
     * order, host times still in ticks. */
    void (*consume)(gt_event *ev, void *ctx);
    /* When set, called instead of consume with runs of n consecutive
     * records of one thread (n >= 1): the consumer's per-record set-up is
     * paid once per run. */
    void (*consume_run)(gt_event *ev, uint32_t n, void *ctx);
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

int gt_pipeline_finished(void); /* the final report was made */

/* 1 from the start of the cut: GPU work needs no event pairs any more. */
int gt_pipeline_cutting(void);

/* ------------------------------------------------- drain.c and end.c
 * end.c says when each end step is made and makes it with the drain's
 * means, on the drain thread (or, without one, on the thread that asked). */

enum gt_drain_state {
    GT_DRAIN_NONE,     /* not started: starts at first use */
    GT_DRAIN_STARTING, /* pthread_create in progress */
    GT_DRAIN_RUNNING,
    GT_DRAIN_FAILED, /* could not start: records wait until the end */
    GT_DRAIN_BARRED  /* an end step was made without one: never starts */
};

/* The drain thread's state once settled (enum gt_drain_state); with
 * `bar`, a drain not started never will be. */
int gt_drain_settled(int bar);
int gt_drain_running(void); /* async-signal-safe */

/* The draining thread's side of the steps. Settle: every record so far
 * taken (live chunks stolen) and consumed, pending GPU times awaited at
 * most final_wait_ms from now, then given up. Cut: what is consumed from
 * now on is late; params.cut. Last: recording closed, every record
 * consumed. Report: params.finished with the totals so far. */
void gt_drain_settle(void);
void gt_drain_cut(void);
void gt_drain_last(void);
void gt_drain_report(int final, int sig);

/* For the drain thread: whether a step is asked for (relaxed: a pass
 * working through a backlog gives way), the steps asked for since the
 * last take (and the signal of a final one), and making them (1 once the
 * final report is made). */
int gt_end_asked(void);
uint32_t gt_end_take(int *sig);
int gt_end_work(uint32_t steps, int sig);
void gt_end_reset(void); /* with the pipeline's start */

/* futex(2) on a private word; and ns as a timespec. */
long gt_futex(_Atomic uint32_t *word, int op, uint32_t val, const struct timespec *timeout);
static inline struct timespec gt_ns_timespec(uint64_t ns)
{
    return (struct timespec){(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
}

/* --------------------------------------------------------------- collect.c
 * The consumer of the shim's pipeline: ticks -> ns, the error name, a debug
 * line, then the report. Runs on the draining thread only. */

/* Names a non-zero result (e.g. "CUDA_ERROR_INVALID_VALUE"): set by the
 * interception code; returns a string id, 0 when unknown. */
typedef uint32_t (*gt_error_namer)(const gt_event *ev);
void gt_collect_set_error_namer(gt_error_namer fn);

void gt_collect_reset(void);   /* a fresh report; the old one is abandoned (fork child) */
void gt_collect_release(void); /* a fresh report; the old one is freed (no drain running) */
void gt_collect_record(gt_event *ev, void *ctx);
void gt_collect_records(gt_event *ev, uint32_t n, void *ctx); /* a run: consume_run */
void gt_collect_flush_debug(void); /* debug lines are written in batches */

/* params.cut: records from now on are late (gt_report_add_after_cut). */
void gt_collect_cut(void *ctx);

/* A report (params.finished): the pipeline's counts, the report's end,
 * then the summary and files (gt_emit). */
void gt_collect_finish(const gt_pipeline_totals *t, const gt_process_info *p);
gt_report *gt_collect_report(void); /* created on first use; NULL without memory */

/* Interned names shared by hooks and report (one table per process). */
gt_strtab *gt_names(void);

/* ------------------------------------------------------------------ init.c
 * Process life. */

/* The end steps (init.c says when each is made). Safe from any thread,
 * any number of times; each waits at most GT_FINISH_WAIT_MS and keeps
 * errno.
 *
 * The cut: the report's GPU part is finished. The interception code calls
 * it from an atexit handler registered after the CUDA runtime initialised,
 * so that it runs before the runtime tears contexts down (DESIGN §5). */
void gt_exit_cut(void);
/* The final report: the cut if not made, then the summary and the files. */
void gt_exit_final(void);
/* Before an exec: a report of everything so far; recording goes on. */
void gt_exec_report(void);

/* Whether the calling process is the one the shim records for: not a
 * vfork child, nor one made by clone without the fork handlers. Touches
 * nothing (safe in a vfork child). */
int gt_own_process(void);

/* Runs the constructor's work if it has not run yet (a hook called before
 * the shim's constructor). */
void gt_init_once(void);

/* Functions run in a forked child after the shim's own reset, in the order
 * added (at load; up to GT_ATFORK_MAX). Returns -1 when full. */
#define GT_ATFORK_MAX 16
int gt_atfork_child_add(void (*fn)(void));

/* CLOCK_MONOTONIC ns when this process (or forked child) started. */
extern uint64_t gt_process_start_ns;

/* ---------------------------------------------------------------- copies.c
 * One active copy of libgputrace.so per process. */

/* Whether this copy is the process's active one (decided once). */
int gt_copy_active(void);

/* In an inactive copy, the active copy's definition of `name`; else NULL. */
void *gt_copy_active_symbol(const char *name);

/* In an inactive copy, one debug line saying that it passes calls through. */
void gt_copy_describe(void);

/* ------------------------------------------------------------------ emit.c */

/* The traces streamed while the program runs, the Chrome trace and the
 * Perfetto trace (collect.c starts them with the report): the drain
 * appends each record's events to their temporary files, gt_emit
 * completes them. */
enum { GT_TRACE_CHROME, GT_TRACE_PERFETTO, GT_TRACES };
typedef struct gt_trace {
    /* NULL: none (not asked for, or it could not start: warned) */
    gt_timeline *timeline;
    gt_pftrace *pftrace;
    gt_stream_file files[GT_TRACES];
} gt_trace;

#define GT_TRACE_NONE                                                                              \
    {                                                                                              \
        .files = { {.fd = -1}, {.fd = -1} }                                                        \
    }

/* Feeds a record to the traces there are. */
static inline void gt_trace_add(const gt_trace *t, const gt_event *ev)
{
    if (t->timeline) gt_timeline_add(t->timeline, ev);
    if (t->pftrace) gt_pftrace_add(t->pftrace, ev);
}

/* Frees the traces and removes their temporary files. */
void gt_trace_discard(gt_trace *t);

/* Writes the summary to the log and the report files, as the configuration
 * says, completing the trace (which is left empty); a file that cannot be
 * written gives a warning. */
void gt_emit(const gt_report *r, const gt_process_info *p, const gt_config *cfg, gt_trace *trace);

/* The report files alone (as gt_emit writes them); with trace NULL the
 * Chrome trace is left as it is (a snapshot: see snapshot.c). */
void gt_emit_files(const gt_report *r, const gt_process_info *p, const gt_config *cfg,
                   gt_trace *trace);

/* snapshot.c. A snapshot: the report files but the trace, which is
 * completed at the end only (it is streamed: valid only once closed), and
 * the summary the gputrace command asked for, if it did. */
void gt_emit_snapshot(const gt_report *r, const gt_process_info *p, const gt_config *cfg);
/* At load: the command's path template for the snapshots' summary
 * (GPUTRACE_SNAPSHOT_SUMMARY; NULL: none). */
#define GT_SNAPSHOT_SUMMARY_VAR "GPUTRACE_SNAPSHOT_SUMMARY"
void gt_snapshot_summary_init(const char *tmpl);
int gt_emit_snapshot_summary_asked(void);
/* A report made at an end step: the command has no summary to print. */
void gt_snapshot_summary_remove(const gt_process_info *p);

/* At load: a GPUTRACE_OUTPUT template that expands to a relative path is
 * made absolute against the working directory, so that a program that
 * changes directory still writes every file where the user pointed. */
void gt_emit_anchor_output(gt_config *cfg);

/* With chrome or perfetto among the formats, while the process has one thread (load,
 * a forked child): readies the descriptor table for the traces' high
 * number (fd_guard.h), so that the drain never waits on the kernel for it. */
void gt_emit_prepare_trace(const gt_config *cfg);

/* For chrome and perfetto among the formats: opens each trace's temporary
 * file beside its final path and starts it, the Chrome trace's times
 * counting from origin_ns (a file that cannot be created is warned about
 * now, and that trace is left out). */
void gt_emit_start_trace(gt_trace *trace, const gt_config *cfg, const gt_strtab *names,
                         uint64_t origin_ns);

/* ------------------------------------------------------------- signals.c */

void gt_signals_install(void);

#endif
