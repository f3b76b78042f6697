/* The shim's life in a process: load, fork, exit.
 *
 * Load (constructor): configuration, log, clock anchor, an empty pipeline
 * (no thread, no chunk: both come with the first record), fork handlers,
 * the exit handler, SIGINT/SIGTERM handlers. A copy of the library that
 * is not the process's active one (intercept/active_copy.c) stops after the log.
 *
 * Exit, in two steps (drain.c):
 *  - the cut: the GPU part of the report is finished. It must come before
 *    the CUDA runtime tears its contexts down (DESIGN §5: GPU times are
 *    read from events of those contexts), so it is made by the first of:
 *    the interception code's atexit handler (registered after the
 *    runtime's, so run before it), the atexit handler registered at load,
 *    the library destructor.
 *  - the final report, with the files: as late as the process allows, so
 *    that memory freed by atexit handlers, C++ static destructors and the
 *    contexts' own teardown (the runtime's handler, Numba's and CuPy's
 *    clean-up) is seen freed, not leaked. Made by the second of the two
 *    last points: the atexit handler registered at load and the library
 *    destructor. Which one runs last depends on how the shim was loaded:
 *    preloaded, its atexit handler runs after every destructor (it was
 *    registered before glibc registered its destructor walk); opened with
 *    dlopen, its destructor runs last. Between the two steps recording
 *    goes on: what threads still do is counted as late, and memory freed
 *    or released is followed to its end.
 * A signal (signals.c), _exit and _Exit (exec.c) make both steps at once;
 * an exec makes a report of everything so far. A process that recorded
 * nothing and made no CUDA call writes nothing unless the verbosity is
 * debug: under `gputrace bash script.sh` every non-CUDA child would
 * otherwise print a report.
 *
 * Fork: the child starts afresh (its pid, empty buffers, no drain thread
 * until used, a new report): it never reports the parent's records.
 *
 * Secure execution (AT_SECURE: a set-user-ID or set-group-ID program, or
 * one with file capabilities, reached through NVTX's injection variable):
 * the environment is the invoking user's, who must not choose what a
 * privileged process writes. No path is taken from it (GPUTRACE_OUTPUT,
 * GPUTRACE_LOG, the command's snapshot directory) and no file is written;
 * the summary goes to stderr, as for any program. */
#include "capture_window.h"
#include "active_copy.h"
#include "checksum.h"
#include "callsite.h"
#include "clock.h"
#include "collect.h"
#include "config.h"
#include "emit.h"
#include "gpu_source.h"
#include "init.h"
#include "intercept.h"
#include "log.h"
#include "pipeline.h"
#include "process.h"
#include "record.h"
#include "report.h"
#include "signals.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <unistd.h>

#define COMMAND_MAX (8u << 20)
#define COMMAND_CUT " [cut]"

_Atomic int gt_cuda_used; /* relaxed: each value stands alone (process.h) */

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static _Atomic int initialized; /* release after the constructor's work */
static int parent_pid;
/* This process's pid (a forked child's, from its fork handler on). Written
 * at load and in a forked child, before any other thread of the process
 * can read it. */
static int self_pid;
/* The last two exit points reached (relaxed: they run one after the
 * other, on the exiting thread): the first cuts, the second reports. */
static _Atomic int exit_points;
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
    /* The GPU time source, before this first call goes on: CUPTI wants to
     * start before contexts exist. Its work is not recorded. */
    uint32_t guard = gt_tls.guard;
    gt_tls.guard = 1;
    gt_gpu_source_choose();
    gt_tls.guard = guard;
    atomic_store_explicit(&gt_cuda_used, GT_CUDA_USED, memory_order_relaxed);
    gt_command_note_cuda();
    /* A delay that ended before the first call: recording starts with it,
     * not when the drain thread first looks at the time. */
    gt_capture_poll(gt_clock_mono_ns());
    gt_drain_ensure_started();
    return 1;
}

int gt_atfork_child_add(void (*fn)(void))
{
    if (n_child_fns >= GT_ATFORK_MAX) return -1;
    child_fns[n_child_fns++] = fn;
    return 0;
}

/* /proc/self/cmdline with the arguments separated by spaces, whole; ""
 * when unreadable. Linux starts a program with at most 6 MiB of arguments
 * and environment together, so COMMAND_MAX is never reached but by a
 * program that rewrote its arguments' memory: past it the command ends in
 * COMMAND_CUT. */
static char *read_command(void)
{
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap + 1);
    int fd = buf ? open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC) : -1;
    while (fd >= 0) {
        if (len == cap) {
            char *grown = cap < COMMAND_MAX ? realloc(buf, 2 * cap + 1) : NULL;
            if (!grown) break;
            buf = grown;
            cap *= 2;
        }
        ssize_t n = read(fd, buf + len, cap - len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        len += (size_t)n;
    }
    bool cut = fd >= 0 && len == cap;
    if (fd >= 0) close(fd);
    if (!buf) return NULL;
    while (len && buf[len - 1] == '\0')
        len--;
    for (size_t i = 0; i < len; i++)
        if (buf[i] == '\0') buf[i] = ' ';
    if (cut) memcpy(buf + len - (sizeof COMMAND_CUT - 1), COMMAND_CUT, sizeof COMMAND_CUT - 1);
    buf[len] = '\0';
    return buf;
}

static void on_finished(const gt_pipeline_totals *totals, void *ctx)
{
    (void)ctx;
    gt_collect_flush_debug();
    int used = atomic_load_explicit(&gt_cuda_used, memory_order_relaxed) == GT_CUDA_USED;
    if (!totals->records && !totals->dropped && !totals->late && !used && !gt_log_debug_enabled())
        return;
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
    if (totals->snapshot)
        gt_debug("snapshot");
    else if (!totals->final)
        gt_debug("report made before an exec");
    gt_debug("%llu records, %llu dropped, %llu late, %llu reported without their pending GPU time",
             (unsigned long long)totals->records, (unsigned long long)totals->dropped,
             (unsigned long long)totals->late, (unsigned long long)totals->gpu_given_up);
    gt_collect_finish(totals, &p);
    free(command);
}

/* The drain wakes at a capture window's edges (capture_window.h). */
static uint64_t capture_edge(uint64_t now_ns, void *ctx)
{
    (void)ctx;
    return gt_capture_poll(now_ns);
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
        .final_wait_ms = GT_GPU_WAIT_MS,
        /* Snapshots only where someone reads them: files, or the gputrace
         * command that finishes the last one. */
        .snapshot_ns =
            gt_cfg.output[0] || gt_emit_snapshot_summary_asked() ? gt_cfg.interval_ns : 0,
        .consume = gt_collect_records,
        .next_edge = capture_edge,
        .cut = gt_collect_cut,
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

int gt_own_process(void)
{
    return self_pid && syscall(SYS_getpid) == self_pid;
}

static void end_step(int (*step)(unsigned wait_ms), const char *what)
{
    if (!atomic_load_explicit(&initialized, memory_order_acquire)) return;
    int saved = errno;
    uint32_t guard = gt_tls.guard;
    gt_tls.guard = 1; /* CUDA calls made by the exit work are not recorded */
    if (step(GT_FINISH_WAIT_MS) != 0 && !gt_tls.finishing)
        gt_warn("the %s was not made within %u ms", what, GT_FINISH_WAIT_MS);
    gt_tls.guard = guard;
    errno = saved;
}

/* Copies still awaiting their synchronize at the end are recorded as
 * never synchronized, before the cut takes the records. */
static void end_checksums(void)
{
    if (gt_checksum_on() && atomic_load_explicit(&initialized, memory_order_acquire))
        gt_checksum_exit();
}

void gt_exit_cut(void)
{
    end_checksums();
    end_step(gt_pipeline_cut, "report's cut");
}

void gt_exit_final(void)
{
    end_checksums();
    end_step(gt_pipeline_finish, "report");
}

void gt_exec_report(void)
{
    end_step(gt_pipeline_report, "report before the exec");
}

/* The program's standard output, as the C library made it: an object it
 * never frees, even once closed (a stream the program put in its place
 * may be freed by then). Set at load. */
static FILE *program_stdout;

/* Before the summary goes to a standard stream: what the program still
 * holds in its standard output's buffer goes out first, as its exit would
 * send it a moment later, so that the summary comes after the program's
 * output (with `prog 2>&1 | head -c 10` the summary took the pipe, `head`
 * left, and the program's own flush died of SIGPIPE). Never waits for a
 * thread that holds the stream. The caller holds SIGPIPE blocked: a
 * SIGPIPE this flush raises is the program's, delivered once the report is
 * made, as its own flush would have had it. */
static void flush_before_summary(void)
{
    if (!atomic_load_explicit(&initialized, memory_order_acquire) ||
        gt_cfg.verbosity == GT_VERB_NONE || gt_cfg.log_dest == GT_LOG_FILE ||
        gt_command_summary_asked(getpid()) || stdout != program_stdout || !program_stdout ||
        ftrylockfile(program_stdout) != 0)
        return;
    int saved = errno;
    if (__fpending(program_stdout)) fflush_unlocked(program_stdout);
    funlockfile(program_stdout);
    errno = saved;
}

static void exit_point(void)
{
    if (atomic_fetch_add_explicit(&exit_points, 1, memory_order_relaxed) == 0) {
        gt_exit_cut();
        return;
    }
    sigset_t pipe_signal, mask;
    sigemptyset(&pipe_signal);
    sigaddset(&pipe_signal, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_signal, &mask);
    flush_before_summary();
    gt_exit_final();
    pthread_sigmask(SIG_SETMASK, &mask, NULL);
}

static void at_exit(void)
{
    exit_point();
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
    self_pid = getpid();
    atomic_store_explicit(&exit_points, 0, memory_order_relaxed);
    gt_process_start_ns = gt_clock_mono_ns();
    gt_capture_start(&gt_cfg, gt_process_start_ns);
    atomic_store_explicit(&gt_cuda_used, GT_CUDA_UNSEEN, memory_order_relaxed);
    gt_collect_reset();
    gt_callsite_fork_child();
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

/* Under secure execution: the variables that name paths are not read. */
static const char *secure_getenv_no_paths(const char *name, void *ctx)
{
    (void)ctx;
    if (!strcmp(name, gt_config_var_name(GT_VAR_OUTPUT)) ||
        !strcmp(name, gt_config_var_name(GT_VAR_LOG)) ||
        !strcmp(name, gt_config_var_name(GT_VAR_CUPTI_PATH)))
        return NULL;
    return getenv(name);
}

static void init_body(void)
{
    int saved = errno;
    bool secure = getauxval(AT_SECURE) != 0;
    gt_config_parse(&gt_cfg, secure ? secure_getenv_no_paths : process_getenv, NULL);
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
    if (secure &&
        (getenv(gt_config_var_name(GT_VAR_OUTPUT)) || getenv(gt_config_var_name(GT_VAR_LOG)) ||
         getenv(gt_config_var_name(GT_VAR_CUPTI_PATH))))
        gt_warn("secure execution (a set-user-ID, set-group-ID or capability program): "
                "GPUTRACE_OUTPUT, GPUTRACE_LOG and GPUTRACE_CUPTI_PATH are ignored, no file is "
                "written");
    gt_emit_settle_output(&gt_cfg);
    gt_emit_prepare_trace(&gt_cfg);
    gt_callsite_init(&gt_cfg);
    gt_clock_init(-1);
    gt_process_start_ns = gt_clock_mono_ns();
    gt_capture_start(&gt_cfg, gt_process_start_ns);
    parent_pid = getppid();
    self_pid = getpid();
    gt_debug("loaded in pid %d: clock %s, buffer %zu MiB", (int)getpid(),
             gt_clock_tsc ? "tsc" : "clock_gettime", gt_cfg.buffer_bytes >> 20);
    gt_snapshot_summary_init(secure ? NULL : getenv(GT_SNAPSHOT_SUMMARY_VAR));
    gt_command_summary_init(secure ? NULL : getenv(GT_CHILD_SUMMARY_VAR));
    program_stdout = stdout;
    gt_collect_set_error_namer(gt_error_name_id);
    gt_collect_set_site_namer(gt_callsite_resolve);
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

/* One of the two last exit points (see the top of this file). */
__attribute__((destructor)) static void shim_unload(void)
{
    exit_point();
}
