/* What the emulated driver reports, turned into CUPTI's view: correlation
 * ids, API callbacks, API records and the records of GPU work. */
#include "cupti_emu.h"

#include <unistd.h>

/* tool_data of a call whose enter this library saw. */
enum { CALL_MARK, CALL_CORRELATION, CALL_START, CALL_USER_DATA };
#define CALL_MARK_VALUE 0x6375707469656d75ULL

/* Relaxed: ids need only be unique and increase per call. */
static _Atomic uint32_t last_correlation;

/* The calling thread's API calls in progress; work submitted inside them
 * carries the outermost one's correlation id (a runtime call's, not that of
 * the driver call it makes), as a GPU's records do. */
static __thread struct {
    unsigned depth;
    uint32_t outer_correlation;
} calls;

static void api_enter(struct gtemu_api_call *call)
{
    uint32_t id = 0;
    if (gt_cupti_api_tracing_on())
        id = atomic_fetch_add_explicit(&last_correlation, 1, memory_order_relaxed) + 1;
    call->tool_data[CALL_MARK] = CALL_MARK_VALUE;
    call->tool_data[CALL_CORRELATION] = id;
    call->tool_data[CALL_START] = gt_cupti_now();
    call->tool_data[CALL_USER_DATA] = 0;
    if (calls.depth++ == 0) calls.outer_correlation = id;
    gt_cupti_callback_api(call, CUPTI_API_ENTER, id, &call->tool_data[CALL_USER_DATA]);
}

static void api_exit(struct gtemu_api_call *call)
{
    /* An exit without the enter: CUPTI attached while the call ran. */
    if (call->tool_data[CALL_MARK] != CALL_MARK_VALUE) return;
    call->tool_data[CALL_MARK] = 0;
    uint64_t end = gt_cupti_now();
    uint32_t id = (uint32_t)call->tool_data[CALL_CORRELATION];
    gt_cupti_callback_api(call, CUPTI_API_EXIT, id, &call->tool_data[CALL_USER_DATA]);
    if (gt_cupti_api_records_on(call->domain, call->cbid)) {
        gt_cupti_emit_external(id);
        gt_cupti_record rec = {.api = {
                                   .kind = call->domain == GTEMU_DOMAIN_RUNTIME
                                               ? CUPTI_ACTIVITY_KIND_RUNTIME
                                               : CUPTI_ACTIVITY_KIND_DRIVER,
                                   .cbid = call->cbid,
                                   .start = call->tool_data[CALL_START],
                                   .end = end,
                                   .processId = (uint32_t)getpid(),
                                   .threadId = gt_cupti_thread_id(),
                                   .correlationId = id,
                                   .returnValue = (uint32_t)call->result,
                               }};
        gt_cupti_emit(&rec, gt_cupti_monotonic(), false);
    }
    calls.depth--;
}

static void work(const struct gtemu_work *w)
{
    gt_cupti_record_work(w, calls.depth ? calls.outer_correlation : 0);
}

const struct gtemu_trace_ops gt_cupti_trace_ops = {
    .abi = GTEMU_TRACE_ABI,
    .api_enter = api_enter,
    .api_exit = api_exit,
    .work = work,
};
