/* What the CUPTI source's files share (cupti_load.c, cupti_session.c,
 * cupti_buffers.c, cupti_records.c, cupti_table.c, cupti_clock.c,
 * cupti_resolve.c). DESIGN §5 gives the facts they rest on.
 *
 * Threads: the program's threads run the API callback (cupti_session.c)
 * and nothing else; CUPTI's own thread, or whichever thread flushes,
 * hands completed buffers to a lock-free list (cupti_buffers.c); the
 * draining thread does the rest: it reads the buffers' records into the
 * correlation table, maps their clock, resolves records and flushes. The
 * session's start and its hand-over run under the session lock. */
#ifndef GT_CUPTI_INTERNAL_H
#define GT_CUPTI_INTERNAL_H

#include <cupti.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"

/* ------------------------------------------------------------ cupti_load.c
 * The entry points the shim uses, from the libcupti it loaded (never a
 * link-time dependency): CUPTI 12 and 13 give records whose leading
 * fields, the only ones read here, lie alike (cupti_records.c). */

typedef struct gt_cupti_api {
    CUptiResult (*get_version)(uint32_t *version);
    CUptiResult (*get_result_string)(CUptiResult result, const char **str);
    CUptiResult (*get_timestamp)(uint64_t *timestamp);
    CUptiResult (*subscribe)(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
                             void *userdata);
    CUptiResult (*unsubscribe)(CUpti_SubscriberHandle subscriber);
    CUptiResult (*enable_callback)(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                   CUpti_CallbackDomain domain, CUpti_CallbackId cbid);
    CUptiResult (*register_callbacks)(CUpti_BuffersCallbackRequestFunc requested,
                                      CUpti_BuffersCallbackCompleteFunc completed);
    CUptiResult (*enable)(CUpti_ActivityKind kind);
    CUptiResult (*disable)(CUpti_ActivityKind kind);
    CUptiResult (*flush_all)(uint32_t flag);
    CUptiResult (*next_record)(uint8_t *buffer, size_t valid, CUpti_Activity **record);
    CUptiResult (*dropped_records)(CUcontext context, uint32_t stream, size_t *dropped);
} gt_cupti_api;

extern gt_cupti_api gt_cupti;

/* The places the environment names, read at load (never later, on a
 * program thread that another may be changing the environment on). */
typedef struct gt_cupti_where {
    char cupti_path[4096]; /* GPUTRACE_CUPTI_PATH (config.h); "" when unset */
    char cuda_home[4096];
    char cuda_path[4096];
} gt_cupti_where;

/* Finds a libcupti of the major version the process's CUDA has (DESIGN §5:
 * GPUTRACE_CUPTI_PATH, one already mapped, beside the process's libcudart
 * or libcuda, under CUDA_HOME or CUDA_PATH, the toolkit's places, the
 * loader's path), loads it and takes its entry points. 0 with `found`
 * describing it ("PATH (CUPTI 13, API version 130001)"); -1 with `why`. */
int gt_cupti_load(const gt_cupti_where *where, char *found, size_t found_cap, char *why,
                  size_t why_cap);

/* "CUPTI_ERROR_..." for a result, from the library when it can say. */
const char *gt_cupti_result_name(CUptiResult r);

/* ------------------------------------------------------------ cupti_session.c */

/* Subscribes (the API callback for the traced calls), registers the
 * buffer callbacks and enables the activity kinds. 0, or -1 with `why`
 * (another subscriber, a kind CUPTI refuses), everything undone. */
int gt_cupti_session_start(char *why, size_t cap);

/* Flushes what CUPTI holds, disables the kinds, unsubscribes. Safe to call
 * when no session runs. */
void gt_cupti_session_stop(void);

/* Whether a session runs; whether one ran in this process (its records
 * may still come in after it stopped). Relaxed. */
int gt_cupti_session_running(void);
int gt_cupti_session_started(void);

/* A forked child: the session is the parent's. */
void gt_cupti_session_forget(void);

/* The generated tables of the callback ids the session traces: every
 * driver and runtime entry point that launches, copies or sets memory
 * (cmake/cupti_cbids.py, from the CUPTI headers). */
extern const CUpti_CallbackId gt_cupti_driver_cbids[];
extern const size_t gt_cupti_driver_cbids_len;
extern const CUpti_CallbackId gt_cupti_runtime_cbids[];
extern const size_t gt_cupti_runtime_cbids_len;

/* ------------------------------------------------------------ cupti_buffers.c
 * Activity buffers from a bounded pool inside GPUTRACE_BUFFER_MB. When
 * the pool is empty CUPTI is given none and drops records, which it
 * counts (cupti_records.c reads that count). */

#define GT_CUPTI_BUFFER_BYTES (1u << 20)
#define GT_CUPTI_BUFFERS_MIN 4u
#define GT_CUPTI_BUFFERS_MAX 64u

/* The pool's size from the event buffers' cap (an eighth of it). */
void gt_cupti_buffers_init(size_t event_buffer_bytes);

void CUPTIAPI gt_cupti_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records);
void CUPTIAPI gt_cupti_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
                                        size_t size, size_t valid);

typedef struct gt_cupti_buffer gt_cupti_buffer;

/* Draining thread: the buffers completed so far, oldest first, each read
 * with `read` and given back to the pool. Reading stops between buffers
 * once CLOCK_MONOTONIC passes until_ns (0: no limit) or stop() (may be
 * NULL) turns true; the rest are read first next time. Returns how many
 * were read. */
unsigned gt_cupti_buffers_drain(void (*read)(const uint8_t *records, size_t valid),
                                uint64_t until_ns, int (*stop)(void));

/* Buffers requested and refused (the pool was empty); whether an older
 * CUPTI, which a refusal would crash, was given one past the bound: the
 * drain then stops CUPTI's records. */
uint64_t gt_cupti_buffers_refused(void);
int gt_cupti_buffers_starved(void);

/* A forked child: the pool is the parent's; forgotten, never freed. */
void gt_cupti_buffers_forget(void);

/* ------------------------------------------------------------ cupti_clock.c
 * CUPTI's timestamps are in its own clock (CLOCK_REALTIME based by
 * default): a sample pairs cuptiGetTimestamp with CLOCK_MONOTONIC read on
 * either side of it, and times map by the sample's offset. The timestamp
 * callback, which would make CUPTI use the shim's clock, is not used: it
 * gave kernels zero times from CUDA 12.6 update 2 until 13.1. */

/* Takes a sample when the last one is older than GT_CUPTI_CLOCK_RESAMPLE_NS
 * (or `now` set); it replaces the offset in use only where its window
 * excludes that offset. Draining thread, or the session's start. */
#define GT_CUPTI_CLOCK_RESAMPLE_NS 200000000u
void gt_cupti_clock_sample(int now);

/* A CUPTI timestamp in CLOCK_MONOTONIC ns (0 stays 0). */
uint64_t gt_cupti_clock_to_mono(uint64_t cupti_ns);

/* The widest window (ns) a sample in use was taken in: the mapping's
 * uncertainty. */
uint64_t gt_cupti_clock_window(void);

/* ------------------------------------------------------------ cupti_table.c
 * Activity records by correlation id, until the record of the call that
 * made them takes them. A call's work may be several records (a graph
 * launch runs each node): they fold into one entry, its span the union. */

typedef struct gt_cupti_entry {
    uint32_t corr;       /* 0: an empty slot */
    uint32_t pushed_out; /* the last id pushed out of this slot (cupti_table.c) */
    uint32_t nodes;      /* a graph launch's kernel nodes: the first's index + 1; 0 none */
    uint16_t records;    /* records folded in */
    uint16_t untimed;    /* of them, without timestamps (CUPTI could not fill them) */
    uint16_t device;     /* of the first record */
    uint8_t running;     /* an untimed one came from a forced flush: its work was still running */
    uint64_t start;      /* CLOCK_MONOTONIC ns; the earliest of the timed records */
    uint64_t end;        /* the latest */
    uint64_t updated;    /* when (CLOCK_MONOTONIC ns, the drain's) a record last folded in */
} gt_cupti_entry;

/* A kernel a graph launch ran (its record carried the launch's
 * correlation id and a graph id), kept for the kernel's own row. */
typedef struct gt_cupti_node {
    uint32_t name; /* string id of the demangled name */
    uint32_t next; /* the entry's next node's index + 1; 0 last */
    uint16_t device;
    uint64_t start, end; /* CLOCK_MONOTONIC ns; 0 when untimed */
} gt_cupti_node;

/* Folds a record in (start, end: mapped; 0 when CUPTI left them 0) at
 * now_ns; `forced`: read from a forced flush, where a record without
 * timestamps is work still running. */
void gt_cupti_table_add(uint32_t corr, uint64_t start, uint64_t end, uint16_t device,
                        uint64_t now_ns, int forced);

/* Adds a graph's kernel node to corr's entry (made by the node's own
 * record's gt_cupti_table_add just before). Dropped when the bound on
 * nodes is reached (counted). */
void gt_cupti_table_add_node(uint32_t corr, const gt_cupti_node *node);

/* The entry of corr, NULL when none yet. */
const gt_cupti_entry *gt_cupti_table_find(uint32_t corr);

/* Whether corr's entry was pushed out at the bound: its records came and
 * are gone (until the slot pushes out another id). */
int gt_cupti_table_pushed_out(uint32_t corr);

/* Removes corr's entry; its nodes, when `nodes` is not NULL, go there
 * (the first's index + 1, 0 none) for gt_cupti_table_take_node, else are
 * freed. */
void gt_cupti_table_remove(uint32_t corr, uint32_t *nodes);

/* The node at *list (index + 1), copied out and freed; *list moves on.
 * 0 when *list was 0. */
int gt_cupti_table_take_node(uint32_t *list, gt_cupti_node *out);

/* Nodes dropped at the bound. */
uint64_t gt_cupti_table_nodes_dropped(void);

/* Entries pushed out to stay within the bound: records of calls that were
 * never recorded (dropped, made inside the shim) or never came. */
uint64_t gt_cupti_table_evicted(void);

/* Entries held now, and the bound (slots, from the event buffers' cap). */
size_t gt_cupti_table_count(void);
size_t gt_cupti_table_slots(void);
void gt_cupti_table_init(size_t event_buffer_bytes);
void gt_cupti_table_forget(void);
/* Frees the table, empty again: for tests (the process's table lasts to
 * its end). */
void gt_cupti_table_free(void);

/* ------------------------------------------------------------ cupti_records.c */

/* Reads one completed buffer's records into the table (the drain pass
 * `pass`). Kernel, copy, peer-copy and memset records; others are passed
 * over. */
void gt_cupti_records_read(const uint8_t *records, size_t valid);
void gt_cupti_records_set_pass(uint64_t now_ns);
/* The buffers read next come from a forced flush (1) or not (0). */
void gt_cupti_records_set_forced(int forced);

/* What the records said beside times: records CUPTI dropped (its count)
 * and records without timestamps. */
uint64_t gt_cupti_records_dropped(void);
uint64_t gt_cupti_records_untimed(void);

/* ------------------------------------------------------------ cupti_resolve.c */

/* The pipeline's resolver for a record with GT_GPU_CUPTI_KEY, its poll and
 * its extra records (gpu_time.c dispatches to them): settle_left_ns is
 * what is left of an end step's wait, 0 outside one; the extras are the
 * kernel nodes of the graph launch resolved last. */
int gt_cupti_resolve(gt_event *ev, int give_up);
void gt_cupti_poll(uint64_t settle_left_ns, int (*stop)(void));
uint32_t gt_cupti_extras(const gt_event *ev, gt_event *out, uint32_t cap);

#endif
