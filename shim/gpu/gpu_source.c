/* Choosing the GPU time source and changing it (gpu_source.h).
 *
 * Another CUPTI client rules CUPTI out (DESIGN §5): a CUDA injection
 * library that is not the shim (Nsight Systems, Nsight Compute and
 * compute-sanitizer all reach a process that way: the driver loads it at
 * cuInit, and it subscribes), or the variables those tools set. A
 * subscriber the shim took first would make such a tool fail; one that a
 * tool took first makes the shim's cuptiSubscribe fail, which is the last
 * check. The environment is read at load, with the configuration. */
#include "gpu_source.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "config.h"
#include "cupti_internal.h"
#include "log.h"
#include "process.h"

_Atomic int gt_gpu_src_now = GT_SRC_OFF;
_Atomic uint64_t gt_cupti_uncorrelated;

static pthread_once_t choose_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t change_lock = PTHREAD_MUTEX_INITIALIZER;
static gt_cupti_where where;
static char other_client[256];         /* what shows another CUPTI client; "" when nothing */
static char detail[GT_PATH_MAX + 256]; /* which libcupti, or why not CUPTI */
static uint64_t changed_at;            /* a hand-over's time, CLOCK_MONOTONIC ns; 0 none */
static char change_why[128];

/* Variables the NVIDIA tools that use CUPTI set in the processes they
 * profile, besides CUDA_INJECTION64_PATH. */
static const char *const tool_prefixes[] = {"NSYS_", "NV_NSIGHT_", "NVPROF_", "NV_SANITIZER_"};

/* secure_getenv: a set-user-ID program never loads a libcupti from a
 * folder its caller named. */
static void copy_env(char *dst, size_t cap, const char *name)
{
    const char *v = secure_getenv(name);
    snprintf(dst, cap, "%s", v ? v : "");
}

/* At load, when the environment is the program's and no thread of it may
 * be changing it. */
__attribute__((constructor)) static void read_environment(void)
{
    copy_env(where.cuda_home, sizeof where.cuda_home, "CUDA_HOME");
    copy_env(where.cuda_path, sizeof where.cuda_path, "CUDA_PATH");
    const char *inject = getenv("CUDA_INJECTION64_PATH");
    if (inject && inject[0] && !strstr(inject, "libgputrace")) {
        snprintf(other_client, sizeof other_client, "CUDA_INJECTION64_PATH=%s", inject);
        return;
    }
    extern char **environ;
    for (char **e = environ; e && *e; e++)
        for (size_t i = 0; i < sizeof tool_prefixes / sizeof tool_prefixes[0]; i++)
            if (strncmp(*e, tool_prefixes[i], strlen(tool_prefixes[i])) == 0) {
                const char *eq = strchr(*e, '=');
                snprintf(other_client, sizeof other_client, "%.*s is set",
                         (int)(eq ? eq - *e : (long)strlen(*e)), *e);
                return;
            }
}

static void set_src(int src)
{
    atomic_store_explicit(&gt_gpu_src_now, src, memory_order_relaxed);
}

/* The libraries gt_cupti_load passed over ("A: why; B: why; "), in why,
 * without the last separator. */
static void trim_notes(char *why)
{
    size_t n = strlen(why);
    if (n >= 2 && why[n - 2] == ';' && why[n - 1] == ' ') why[n - 2] = '\0';
}

/* CUPTI, or 0 and why not in `why`. The detail names the library, and
 * those passed over before it (a pip wheel's CUPTI newer than the driver,
 * say): the user sees which one ran and why not another. */
static int start_cupti(char *why, size_t cap)
{
    if (other_client[0]) {
        snprintf(why, cap, "another CUPTI client is there (%s)", other_client);
        return 0;
    }
    char found[GT_PATH_MAX + 64];
    snprintf(where.cupti_path, sizeof where.cupti_path, "%s", gt_cfg.cupti_path);
    if (gt_cupti_load(&where, found, sizeof found, why, cap) != 0) return 0;
    gt_cupti_buffers_init(gt_cfg.buffer_bytes);
    gt_cupti_table_init(gt_cfg.buffer_bytes);
    char failed[256];
    if (gt_cupti_session_start(failed, sizeof failed) != 0) {
        size_t used = strlen(why);
        snprintf(why + used, cap - used, "%s", found);
        used = strlen(why);
        snprintf(why + used, cap - used, ": %s", failed);
        return 0;
    }
    trim_notes(why);
    size_t used = (size_t)snprintf(detail, sizeof detail, "%s", found);
    if (why[0] && used < sizeof detail)
        snprintf(detail + used, sizeof detail - used, "; passed over: %s", why);
    return 1;
}

static void choose(void)
{
    enum gt_gpu_timing asked = gt_cfg.gpu_timing;
    if (asked == GT_GPU_TIMING_OFF || asked == GT_GPU_TIMING_EVENTS) {
        snprintf(detail, sizeof detail, "GPUTRACE_GPU_TIMING=%s", gt_gpu_timing_name(asked));
        set_src(asked == GT_GPU_TIMING_OFF ? GT_SRC_OFF : GT_SRC_EVENTS);
        return;
    }
    char why[sizeof detail];
    if (start_cupti(why, sizeof why)) {
        gt_debug("GPU timing: CUPTI activity records, %s", detail);
        set_src(GT_SRC_CUPTI);
        return;
    }
    snprintf(detail, sizeof detail, "%s", why);
    if (asked == GT_GPU_TIMING_CUPTI)
        gt_warn("GPU timing: CUPTI cannot be used (%s): CUDA event pairs instead", why);
    else
        gt_debug("GPU timing: CUDA event pairs: %s", why);
    set_src(GT_SRC_EVENTS);
}

void gt_gpu_source_choose(void)
{
    pthread_once(&choose_once, choose);
}

static void change_to_events(const char *why)
{
    pthread_mutex_lock(&change_lock);
    if (gt_gpu_src() == GT_SRC_CUPTI) {
        /* New calls take pairs from now on; the calls CUPTI saw resolve
         * from the records the stop flushes. */
        set_src(GT_SRC_EVENTS);
        gt_cupti_session_stop();
        changed_at = gt_clock_mono_ns();
        snprintf(change_why, sizeof change_why, "%s", why);
        gt_debug("GPU timing: event pairs from now: %s", why);
    }
    pthread_mutex_unlock(&change_lock);
}

void gt_gpu_source_hand_over(const char *who)
{
    char why[sizeof change_why];
    snprintf(why, sizeof why, "the program started using CUPTI itself (%s)", who);
    change_to_events(why);
}

void gt_gpu_source_starved(void)
{
    change_to_events("CUPTI ran out of activity buffers (GPUTRACE_BUFFER_MB)");
}

/* ", N ..." for each count of records CUPTI did not time. */
static void add_losses(char *out, size_t cap)
{
    struct {
        uint64_t n;
        const char *what;
    } losses[] = {
        {gt_cupti_records_dropped(), "activity records dropped by CUPTI"},
        {gt_cupti_buffers_refused(), "activity buffers refused (the pool was full)"},
        {gt_cupti_records_untimed(), "activity records without timestamps"},
        {atomic_load_explicit(&gt_cupti_uncorrelated, memory_order_relaxed),
         "calls CUPTI did not trace"},
        {gt_cupti_table_evicted(), "activity records no recorded call took"},
    };
    size_t len = strlen(out);
    for (size_t i = 0; i < sizeof losses / sizeof losses[0] && len < cap; i++)
        if (losses[i].n)
            len += (size_t)snprintf(out + len, cap - len, "; %llu %s",
                                    (unsigned long long)losses[i].n, losses[i].what);
}

enum gt_gpu_source gt_gpu_source_report(char *out, size_t cap)
{
    pthread_mutex_lock(&change_lock);
    enum gt_gpu_source src;
    int now = gt_gpu_src();
    if (changed_at) {
        uint64_t at = changed_at > gt_process_start_ns ? changed_at - gt_process_start_ns : 0;
        snprintf(out, cap, "CUPTI (%s) until %.3f s, then event pairs: %s", detail,
                 (double)at / 1e9, change_why);
        src = GT_GPU_SOURCE_MIXED;
    } else {
        snprintf(out, cap, "%s", detail);
        src = now == GT_SRC_CUPTI    ? GT_GPU_SOURCE_CUPTI
              : now == GT_SRC_EVENTS ? GT_GPU_SOURCE_EVENTS
                                     : GT_GPU_SOURCE_OFF;
    }
    if (src == GT_GPU_SOURCE_CUPTI || src == GT_GPU_SOURCE_MIXED) add_losses(out, cap);
    pthread_mutex_unlock(&change_lock);
    return src;
}

void gt_gpu_source_after_fork_child(void)
{
    pthread_mutex_init(&change_lock, NULL);
    if (gt_gpu_src() != GT_SRC_CUPTI) return;
    gt_cupti_buffers_forget();
    gt_cupti_table_forget();
    gt_cupti_session_forget();
    changed_at = 0;
    snprintf(detail, sizeof detail, "a forked child: CUPTI's session stays the parent's");
    set_src(GT_SRC_EVENTS);
}
