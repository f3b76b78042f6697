/* Internal interfaces of the emulated CUPTI (libcupti.so.13 built from
 * tests/emu/cupti): a CUPTI for the emulated driver, which feeds it through
 * its tracing interface (gtemu_trace.h). See ../README.md, "CUPTI".
 *
 * cupti.h is included with CUPTI_LIB defined, as NVIDIA's own build does:
 * its declarations are then public, so every definition here is checked
 * against the real prototype and exported, and everything else is hidden
 * by -fvisibility=hidden. */
#ifndef GT_CUPTI_EMU_H
#define GT_CUPTI_EMU_H

#define CUPTI_LIB 1
#include <cupti.h>

#include "gtemu_trace.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Work counts as complete this long before its simulated end: the
 * emulated driver's own tolerance (GT_SLACK_NS), so that records of work a
 * stream synchronisation waited for are ready when it returns. */
#define GT_CUPTI_SLACK_NS 50000ULL

/* ---- settings and faults (config.c), read once ---- */

struct gt_cupti_config {
    CUptiResult init_error; /* every call fails so (GPUTRACE_EMU_CUPTI_INIT_ERROR) */
    uint64_t drop_every;    /* every Nth record is dropped; 0: none */
    uint64_t zero_every;    /* every Nth GPU record has zero timestamps; 0: none */
    char *other_subscriber; /* a subscriber present before ours, or NULL */
    bool fail_kind[CUPTI_ACTIVITY_KIND_COUNT]; /* cuptiActivityEnable refuses these */
};

const struct gt_cupti_config *gt_cupti_config(void);

/* ---- initialisation (init.c) ---- */

/* Every entry point starts here: CUPTI_SUCCESS once attached to the
 * emulated driver, else the error the call returns. */
CUptiResult gt_cupti_begin(void);

/* ---- clock (clock.c) ---- */

/* CUPTI's clock: CLOCK_REALTIME-based ns, or the client's timestamp
 * callback. */
uint64_t gt_cupti_now(void);
/* Adds to a simulated CLOCK_MONOTONIC time what turns it into CUPTI's
 * clock now (sampled once per batch of records). */
int64_t gt_cupti_gpu_offset(void);
/* CLOCK_MONOTONIC ns, the emulated driver's clock. */
uint64_t gt_cupti_monotonic(void);

/* ---- activity records (records.c, buffers.c) ---- */

/* Every record kind this CUPTI writes, in the struct versions CUPTI 13.0
 * writes. */
typedef union gt_cupti_record {
    CUpti_Activity base;
    CUpti_ActivityKernel10 kernel;
    CUpti_ActivityMemcpy6 memcpy;
    CUpti_ActivityMemcpyPtoP4 peer;
    CUpti_ActivityMemset4 memset;
    CUpti_ActivityAPI api;
    CUpti_ActivityExternalCorrelation external;
    CUpti_ActivityGraphTrace2 graph;
} gt_cupti_record;

/* The size of a record of `kind` in a buffer; 0 for kinds never written. */
size_t gt_cupti_record_size(CUpti_ActivityKind kind);
/* Records are placed in buffers at addresses aligned so. */
#define GT_CUPTI_RECORD_ALIGN 8u

/* Whether records of `kind` are being collected. */
bool gt_cupti_kind_on(CUpti_ActivityKind kind);
/* Whether API records of (domain, cbid) are being collected. */
bool gt_cupti_api_records_on(enum gtemu_domain domain, uint32_t cbid);
/* Whether any API record or callback is enabled: correlation ids are
 * assigned to API calls only then. */
bool gt_cupti_api_tracing_on(void);

/* Queues a record, delivered once the CLOCK_MONOTONIC time `ready_at` is
 * reached (work records: their simulated end; API records: when made, so
 * that records come in the order they are complete). `gpu_times`: start and end
 * (and a kernel's completed) are simulated CLOCK_MONOTONIC times, converted
 * to CUPTI's clock on delivery. Applies the drop and zero-timestamp faults.
 * Never calls the client: safe under the emulated driver's locks. */
void gt_cupti_emit(const gt_cupti_record *rec, uint64_t ready_at, bool gpu_times);
/* Builds and queues the records of one piece of work. */
void gt_cupti_record_work(const struct gtemu_work *w, uint32_t correlation_id);
/* A copy of `name` that lives as long as the process (kernel names in
 * records must outlive the modules they come from). */
const char *gt_cupti_intern(const char *name);
/* Fork handlers of the name table's lock. */
void gt_cupti_names_prefork(void);
void gt_cupti_names_postfork(void);

/* ---- buffers (buffers.c) ---- */

bool gt_cupti_callbacks_registered(void);
void gt_cupti_set_buffer_callbacks(CUpti_BuffersCallbackRequestFunc requested,
                                   CUpti_BuffersCallbackCompleteFunc completed);
/* Delivers what is complete (everything, incomplete records with zero
 * timestamps, when `forced`) through the completion callback, on the
 * calling thread. */
void gt_cupti_flush(bool forced);
void gt_cupti_set_flush_period(uint32_t ms);
/* Records dropped since the last call. */
size_t gt_cupti_take_dropped(void);
/* Forgets every queued record and the buffer being filled (finalize). */
void gt_cupti_discard_records(void);
/* Fork handlers: the queue's locks, and a child's copy of the parent's
 * records, which the child must not deliver again. */
void gt_cupti_buffers_prefork(void);
void gt_cupti_buffers_postfork(bool child);

/* ---- API calls (api_trace.c, subscriber.c, external.c) ---- */

/* The ops attached to the emulated driver. */
extern const struct gtemu_trace_ops gt_cupti_trace_ops;
/* Calls the subscriber's callback for an API call's enter or exit, when it
 * is enabled for (domain, cbid). */
void gt_cupti_callback_api(const struct gtemu_api_call *call, CUpti_ApiCallbackSite site,
                           uint32_t correlation_id, uint64_t *correlation_data);
bool gt_cupti_callbacks_on(void);
/* Queues the external correlation records for an API record of the
 * calling thread (EXTERNAL_CORRELATION enabled, inside pushed regions). */
void gt_cupti_emit_external(uint32_t correlation_id);
/* The thread id API records carry (cuptiSetThreadIdType). */
uint32_t gt_cupti_thread_id(void);
/* Finalize: the subscriber goes, every enable bit is cleared. */
void gt_cupti_unsubscribe_all(void);
void gt_cupti_disable_all(void);

/* ---- the emulated driver (init.c) ---- */

struct gt_cupti_driver {
    gtemu_trace_attach_fn attach;
    gtemu_trace_context_fn context;
    gtemu_trace_stream_fn stream;
};
/* Filled by the first successful gt_cupti_begin(); read-only afterwards. */
extern struct gt_cupti_driver gt_cupti_drv;

#endif
