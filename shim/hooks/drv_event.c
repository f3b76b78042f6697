/* Driver event records, for the checksums alone: a cuEventSynchronize
 * covers the copies queued on the stream the event was recorded on before
 * it (shim/checksum/checksum.h), so with GPUTRACE_CHECKSUM on each record
 * that succeeds is noted. Nothing is recorded in the report: with
 * checksums off the call passes straight through. The runtime's event
 * records reach these through the driver entry points it calls. */
#include "hook.h"

#include "checksum.h"

static void note_record(CUevent e, CUstream s, int per_thread)
{
    int saved = errno;
    gt_checksum_event_recorded((uint64_t)(uintptr_t)e, gt_stream_id(s, per_thread),
                               gt_current_context_id());
    errno = saved;
}

#define EVENT_RECORD(sym, base, per_thread, params, args, stream)                                  \
    GT_DRIVER_HOOK(sym, base, GT_CAT_SYNC)                                                         \
    GT_EXPORT GT_NO_STACK_PROTECTOR CUresult CUDAAPI sym params                                    \
    {                                                                                              \
        GT_ENTER_ANY(sym, CUDA_ERROR_NOT_FOUND, args);                                             \
        CUresult r = real_ args;                                                                   \
        if (GT_UNLIKELY(gt_checksum_on()) && r == CUDA_SUCCESS && !gt_tls.guard)                   \
            note_record(e, stream, per_thread);                                                    \
        return r;                                                                                  \
    }

EVENT_RECORD(cuEventRecord, cuEventRecord, 0, (CUevent e, CUstream s), (e, s), s)
EVENT_RECORD(cuEventRecord_ptsz, cuEventRecord, 1, (CUevent e, CUstream s), (e, s), s)
EVENT_RECORD(cuEventRecordWithFlags, cuEventRecordWithFlags, 0,
             (CUevent e, CUstream s, unsigned int flags), (e, s, flags), s)
EVENT_RECORD(cuEventRecordWithFlags_ptsz, cuEventRecordWithFlags, 1,
             (CUevent e, CUstream s, unsigned int flags), (e, s, flags), s)
