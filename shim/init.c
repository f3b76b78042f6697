/* The shim's life in a process: load, fork, exit.
 *
 * Load (constructor): configuration, log, clock anchor, an empty pipeline
 * (no thread, no chunk: both come with the first record), fork handlers,
 * the exit handler, SIGINT/SIGTERM handlers. A copy of the library that
 * is not the process's active one (copies.c) stops after the log.
 *
 * Exit: gt_shutdown() runs the exit work once, whoever calls first: the
 * interception code (from an atexit handler registered after the CUDA
 * runtime's, so it runs before the runtime's teardown), the atexit handler
 * registered at load, the library destructor, or the signal handler. A
 * process that recorded nothing and made no CUDA call writes nothing
 * unless the verbosity is debug: under `gputrace bash script.sh` every
 * non-CUDA child would otherwise print a report.
 *
 * Fork: the child starts afresh (its pid, empty buffers, no drain thread
 * until used, a new report): it never reports the parent's records. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define COMMAND_MAX 32768

_Atomic int gt_cuda_used; /* relaxed: each value stands alone (internal.h) */

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static _Atomic int initialized; /* release after the constructor's work */
static int parent_pid;
static void (*child_fns[GT_ATFORK_MAX])(void);
static int n_child_fns; /* written at load only */
static __thread uint32_t guard_before_fork __attribute__((tls_model("initial-exec")));

int gt_note_cuda_call_slow(void)
{
    if (atomic_load_explicit(&gt_cuda_used, memory_order_relaxed) == GT_CUDA_PASS_THROUGH) return 0;
    if (!gt_copy_active()) {
        atomic_store_explicit(&gt_cuda_used, GT_CUDA_PASS_THROUGH, memory_order_relaxed);
        return 0;
    }
    atomic_store_explicit(&gt_cuda_used, GT_CUDA_USED, memory_order_relaxed);
    gt_drain_ensure_started();
    return 1;
}

int gt_atfork_child_add(void (*fn)(void))
{
    if (n_child_fns >= GT_ATFORK_MAX) return -1;
    child_fns[n_child_fns++] = fn;
    return 0;
}

/* /proc/self/cmdline with the arguments separated by spaces, cut at
 * COMMAND_MAX; "" when unreadable. */
static char *read_command(void)
{
    char *buf = malloc(COMMAND_MAX + 1);
    if (!buf) return NULL;
    size_t len = 0;
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    while (fd >= 0 && len < COMMAND_MAX) {
        ssize_t n = read(fd, buf + len, COMMAND_MAX - len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        len += (size_t)n;
    }
    if (fd >= 0) close(fd);
    while (len && buf[len - 1] == '\0')
        len--;
    for (size_t i = 0; i < len; i++)
        if (buf[i] == '\0') buf[i] = ' ';
    buf[len] = '\0';
    return buf;
}

static void on_finished(const gt_pipeline_totals *totals, void *ctx)
{
    (void)ctx;
    gt_collect_flush_debug();
    int used = atomic_load_explicit(&gt_cuda_used, memory_order_relaxed) == GT_CUDA_USED;
    if (!totals->records && !totals->dropped && !used && !gt_log_debug_enabled()) return;
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    char *command = read_command();
    gt_process_info p = {
        .pid = getpid(),
        .ppid = parent_pid,
        .hostname = host,
        .command = command ? command : "",
        .start_ns = gt_process_start_ns,
        .end_ns = gt_clock_mono_ns(),
    };
    if (totals->signal) gt_debug("report made on signal %d", totals->signal);
    gt_debug("%llu records, %llu dropped", (unsigned long long)totals->records,
             (unsigned long long)totals->dropped);
    gt_collect_finish(totals->dropped, &p);
    free(command);
}

static gt_pipeline_params shim_params(void)
{
    /* Each recording thread holds a chunk: a small cap gets small chunks
     * (at least 256 of them) so that it still serves many threads. */
    size_t chunk = gt_cfg.buffer_bytes / 256;
    if (chunk > GT_CHUNK_DEFAULT_BYTES) chunk = GT_CHUNK_DEFAULT_BYTES;
    return (gt_pipeline_params){
        .chunk_bytes = chunk,
        .cap_bytes = gt_cfg.buffer_bytes,
        .drain_thread = 1,
        .final_wait_ms = GT_FINAL_GPU_WAIT_MS,
        .consume_run = gt_collect_records,
        .finished = on_finished,
    };
}

static void start_pipeline(void)
{
    gt_pipeline_params params = shim_params();
    if (gt_pipeline_start(&params) != 0)
        gt_warn("no memory for the event buffers: nothing is recorded");
    /* Debug verbosity reports even a process that records nothing, also on
     * a signal, which needs the drain thread to make the report. */
    if (gt_log_debug_enabled()) gt_drain_ensure_started();
}

void gt_shutdown(void)
{
    if (!atomic_load_explicit(&initialized, memory_order_acquire)) return;
    int saved = errno;
    uint32_t guard = gt_tls.guard;
    gt_tls.guard = 1; /* CUDA calls made by the exit work are not recorded */
    if (gt_pipeline_finish(GT_FINISH_WAIT_MS) != 0 && !gt_tls.finishing)
        gt_warn("the report was not finished within %u ms", GT_FINISH_WAIT_MS);
    gt_tls.guard = guard;
    errno = saved;
}

static void at_exit(void)
{
    gt_shutdown();
}

static void fork_prepare(void)
{
    guard_before_fork = gt_tls.guard;
    gt_tls.guard = 1;
}

static void fork_parent(void)
{
    gt_tls.guard = guard_before_fork;
}

static void fork_child(void)
{
    parent_pid = getppid();
    gt_process_start_ns = gt_clock_mono_ns();
    atomic_store_explicit(&gt_cuda_used, GT_CUDA_UNSEEN, memory_order_relaxed);
    gt_collect_reset();
    gt_emit_prepare_trace(&gt_cfg);
    start_pipeline();
    for (int i = 0; i < n_child_fns; i++)
        child_fns[i]();
    gt_tls.guard = guard_before_fork;
}

static const char *process_getenv(const char *name, void *ctx)
{
    (void)ctx;
    return getenv(name);
}

static void init_body(void)
{
    int saved = errno;
    gt_config_parse(&gt_cfg, process_getenv, NULL);
    gt_log_init(gt_cfg.log_dest, gt_cfg.log_path, gt_cfg.verbosity);
    /* Another copy of the library is the process's active one: this copy
     * says so at debug, and sets up nothing (no report, no exit work, no
     * fork or signal handler). Its configuration warnings are the active
     * copy's to give. */
    if (!gt_copy_active()) {
        gt_copy_describe();
        errno = saved;
        return;
    }
    /* Under the gputrace command the values were checked, and their
     * warnings given, once for every process (config_warnings.c). */
    gt_config_give_warnings(&gt_cfg, process_getenv, NULL);
    gt_emit_anchor_output(&gt_cfg);
    gt_emit_prepare_trace(&gt_cfg);
    gt_clock_init(-1);
    gt_process_start_ns = gt_clock_mono_ns();
    parent_pid = getppid();
    gt_debug("loaded in pid %d: clock %s, buffer %zu MiB", (int)getpid(),
             gt_clock_tsc ? "tsc" : "clock_gettime", gt_cfg.buffer_bytes >> 20);
    start_pipeline();
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    atexit(at_exit);
    gt_signals_install();
    atomic_store_explicit(&initialized, 1, memory_order_release);
    errno = saved;
}

void gt_init_once(void)
{
    pthread_once(&init_once, init_body);
}

__attribute__((constructor)) static void shim_load(void)
{
    gt_init_once();
}

/* Where atexit handlers do not run for the shim (it was loaded with
 * dlopen and is being unloaded, or exit ran before the constructor's
 * atexit), the destructor still ends the trace; after the atexit handler
 * it does nothing. */
__attribute__((destructor)) static void shim_unload(void)
{
    gt_shutdown();
}
