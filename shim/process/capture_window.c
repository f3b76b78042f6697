/* When the shim records (capture.h). */
#include "capture_window.h"

#include "clock.h"
#include "compiler.h"
#include "config.h"
#include "report.h"
#include "settings.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define OPENS_KEPT 64u /* window openings remembered for the report (a ring) */

_Atomic uint8_t gt_capture_gate = 0xff;

/* Read by gt_capture_poll without the lock: store-release under it,
 * load-acquire outside. UINT64_MAX: no time edge left. */
static _Atomic uint64_t next_edge = UINT64_MAX;
static _Atomic uint64_t opens_total; /* windows opened; release under the lock */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* Under the lock. */
static struct state {
    enum gt_capture_mode kind;
    char mode[GT_CAPTURE_MODE_MAX];
    uint64_t delay_ns, duration_ns;
    uint64_t time_from, time_to; /* CLOCK_MONOTONIC; time_to UINT64_MAX: unlimited */
    int time_on;                 /* within [time_from, time_to) */
    int profiler_on;
    uint64_t nvtx_open; /* matching ranges open now */
    int on;             /* the window is open */
    uint64_t on_since;
    uint64_t windows, captured_ns, mode_opens;
    uint64_t opens[OPENS_KEPT];
} st;

static int mode_holds(void)
{
    switch (st.kind) {
    case GT_CAPTURE_PROFILER:
        return st.profiler_on;
    case GT_CAPTURE_NVTX:
        return st.nvtx_open > 0;
    case GT_CAPTURE_ALL:
        break;
    }
    return 1;
}

/* Under the lock: the window follows the conditions, as of `at`. */
static void settle(uint64_t at)
{
    int on = mode_holds() && st.time_on;
    if (on == st.on) return;
    st.on = on;
    if (on) {
        st.on_since = at;
        st.opens[st.windows % OPENS_KEPT] = at;
        st.windows++;
        atomic_store_explicit(&opens_total, st.windows, memory_order_release);
    } else {
        st.captured_ns += at > st.on_since ? at - st.on_since : 0;
    }
    atomic_store_explicit(&gt_capture_gate, on ? 0xff : 0, memory_order_relaxed);
}

/* Under the lock: the time condition at now, an edge counted at its own
 * moment (the drain may see it late; the window is what was asked for). */
static void time_settle(uint64_t now)
{
    int on = now >= st.time_from && now < st.time_to;
    uint64_t next = now < st.time_from ? st.time_from : now < st.time_to ? st.time_to : UINT64_MAX;
    atomic_store_explicit(&next_edge, next, memory_order_release);
    if (on == st.time_on) return;
    st.time_on = on;
    uint64_t at = on ? st.time_from : st.time_to;
    if (!on && at < st.on_since) at = st.on_since;
    settle(at);
}

static void describe_mode(const gt_config *cfg)
{
    switch (cfg->capture) {
    case GT_CAPTURE_PROFILER:
        snprintf(st.mode, sizeof st.mode, "profiler-api");
        break;
    case GT_CAPTURE_NVTX:
        snprintf(st.mode, sizeof st.mode, "nvtx:%s%s%s", cfg->capture_name,
                 cfg->capture_domain[0] ? "@" : "", cfg->capture_domain);
        break;
    case GT_CAPTURE_ALL:
        snprintf(st.mode, sizeof st.mode, "all");
        break;
    }
}

void gt_capture_start(const gt_config *cfg, uint64_t start_ns)
{
    /* A forked child may have been made while another thread held it. */
    pthread_mutex_init(&lock, NULL);
    memset(&st, 0, sizeof st);
    st.kind = cfg->capture;
    describe_mode(cfg);
    st.delay_ns = cfg->delay_ns;
    st.duration_ns = cfg->duration_ns;
    st.time_from = start_ns + cfg->delay_ns;
    st.time_to = cfg->duration_ns ? st.time_from + cfg->duration_ns : UINT64_MAX;
    atomic_store_explicit(&opens_total, 0, memory_order_relaxed);
    atomic_store_explicit(&gt_capture_gate, 0, memory_order_relaxed);
    time_settle(start_ns);
}

void gt_capture_profiler(int on)
{
    uint64_t now = gt_clock_mono_ns();
    pthread_mutex_lock(&lock);
    if (st.kind == GT_CAPTURE_PROFILER && on != st.profiler_on) {
        st.profiler_on = on;
        st.mode_opens += on != 0;
        settle(now);
    }
    pthread_mutex_unlock(&lock);
}

void gt_capture_nvtx(int change)
{
    uint64_t now = gt_clock_mono_ns();
    pthread_mutex_lock(&lock);
    /* Never below 0: a range opened before a fork closes in the child. */
    if (change > 0) {
        st.mode_opens += st.nvtx_open == 0;
        st.nvtx_open++;
    } else if (st.nvtx_open) {
        st.nvtx_open--;
    }
    settle(now);
    pthread_mutex_unlock(&lock);
}

uint64_t gt_capture_poll(uint64_t now_ns)
{
    uint64_t next = atomic_load_explicit(&next_edge, memory_order_acquire);
    if (GT_LIKELY(now_ns < next)) return next == UINT64_MAX ? UINT64_MAX : next - now_ns;
    pthread_mutex_lock(&lock);
    time_settle(now_ns);
    next = atomic_load_explicit(&next_edge, memory_order_relaxed);
    pthread_mutex_unlock(&lock);
    return next == UINT64_MAX ? UINT64_MAX : next > now_ns ? next - now_ns : 0;
}

void gt_capture_get(gt_capture_info *out, uint64_t end_ns)
{
    gt_capture_poll(end_ns);
    pthread_mutex_lock(&lock);
    out->kind = st.kind;
    memcpy(out->mode, st.mode, sizeof out->mode);
    out->delay_ns = st.delay_ns;
    out->duration_ns = st.duration_ns;
    out->windows = st.windows;
    out->captured_ns = st.captured_ns;
    if (st.on && end_ns > st.on_since) out->captured_ns += end_ns - st.on_since;
    out->mode_opens = st.mode_opens;
    pthread_mutex_unlock(&lock);
}

uint64_t gt_capture_open_count(void)
{
    return atomic_load_explicit(&opens_total, memory_order_acquire);
}

uint32_t gt_capture_opens_since(uint64_t *seen, uint64_t *out, uint32_t max)
{
    pthread_mutex_lock(&lock);
    uint64_t from = *seen <= st.windows ? *seen : 0; /* a count from before a fork */
    if (st.windows - from > OPENS_KEPT) from = st.windows - OPENS_KEPT;
    if (st.windows - from > max) from = st.windows - max;
    uint32_t n = 0;
    for (uint64_t w = from; w < st.windows; w++)
        out[n++] = st.opens[w % OPENS_KEPT];
    *seen = st.windows;
    pthread_mutex_unlock(&lock);
    return n;
}
