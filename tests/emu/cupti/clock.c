/* CUPTI's clock. As the real library on Linux, timestamps are
 * CLOCK_REALTIME nanoseconds unless the client registers a timestamp
 * callback; they are taken as CLOCK_MONOTONIC plus the offset between the
 * two clocks sampled once, so that durations are exact and the clock never
 * steps. The emulated driver schedules work in CLOCK_MONOTONIC: records of
 * GPU work are converted when they are delivered, as CUPTI converts GPU
 * timestamps in post-processing. */
#include "cupti_emu.h"

#include <time.h>

static int64_t realtime_offset;
static pthread_once_t offset_once = PTHREAD_ONCE_INIT;
/* Acquire/release: a client's callback, registered before it enables
 * anything, is seen by every thread that records. */
static _Atomic(CUpti_TimestampCallbackFunc) timestamp_callback;

static uint64_t read_clock(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void sample_offset(void)
{
    uint64_t mono = read_clock(CLOCK_MONOTONIC);
    uint64_t real = read_clock(CLOCK_REALTIME);
    realtime_offset = (int64_t)(real - mono);
}

uint64_t gt_cupti_monotonic(void)
{
    return read_clock(CLOCK_MONOTONIC);
}

static uint64_t realtime_ns(void)
{
    pthread_once(&offset_once, sample_offset);
    return (uint64_t)((int64_t)gt_cupti_monotonic() + realtime_offset);
}

uint64_t gt_cupti_now(void)
{
    CUpti_TimestampCallbackFunc cb =
        atomic_load_explicit(&timestamp_callback, memory_order_acquire);
    return cb ? cb() : realtime_ns();
}

int64_t gt_cupti_gpu_offset(void)
{
    CUpti_TimestampCallbackFunc cb =
        atomic_load_explicit(&timestamp_callback, memory_order_acquire);
    if (!cb) {
        pthread_once(&offset_once, sample_offset);
        return realtime_offset;
    }
    uint64_t mono = gt_cupti_monotonic();
    return (int64_t)(cb() - mono);
}

CUptiResult CUPTIAPI cuptiGetTimestamp(uint64_t *timestamp)
{
    if (!timestamp) return CUPTI_ERROR_INVALID_PARAMETER;
    *timestamp = gt_cupti_now();
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI
cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc funcTimestamp)
{
    CUptiResult r = gt_cupti_begin();
    if (r != CUPTI_SUCCESS) return r;
    if (!funcTimestamp) return CUPTI_ERROR_INVALID_PARAMETER;
    atomic_store_explicit(&timestamp_callback, funcTimestamp, memory_order_release);
    return CUPTI_SUCCESS;
}
