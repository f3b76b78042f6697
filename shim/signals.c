/* SIGINT and SIGTERM with the default disposition (SPEC §10): the report
 * is made, then the process dies of the signal as it would have.
 *
 * At load, each of the two whose disposition is SIG_DFL gets a handler; a
 * disposition the program set before load is never touched. The handler
 * itself only asks the drain thread to finish (a futex wake) and waits for
 * it, at most GT_FINISH_WAIT_MS, so a stuck report cannot hang the
 * program; then it restores SIG_DFL and raises the signal again, so the
 * exit status is exactly the signal's.
 *
 * The handler is invisible: sigaction() and signal() report SIG_DFL where
 * the shim's handler is installed. A program that decides what to do from
 * the current disposition (Python installs its KeyboardInterrupt handler
 * only over SIG_DFL) behaves as without the shim; one that installs its own
 * handler simply replaces ours.
 *
 * Fatal signals (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) with the default
 * disposition get the same treatment, bounded tighter (GT_FATAL_WAIT_MS):
 * the final report is asked of the drain thread, which does the work (the
 * crashed thread only waits on a futex), then the default action is put
 * back and the process dies exactly where and as it would have: a fault
 * the kernel raised (si_code > 0) comes again when the handler returns and
 * the instruction runs again; a signal sent (kill, raise, abort) is raised
 * again, pending while the handler runs and delivered as it returns. So
 * the exit status is the signal's, and a core dump (where the limits make
 * one) shows the faulting thread as it was. A fault on the drain thread
 * itself, or on a stack with no room for a handler, dies at once, as bare.
 * While the report is made the program's other threads run on (a few
 * milliseconds; at most the bound, after which the report is given up:
 * heap corruption or a lock the crashed thread held can keep the drain
 * from finishing). */
#include "signals.h"

#include "compiler.h"
#include "pipeline.h"
#include "record.h"

#include <errno.h>
#include <signal.h>
#include <string.h>

/* glibc's own entry points, under the names the exported ones alias. */
extern int __sigaction(int sig, const struct sigaction *act, struct sigaction *old);
extern __sighandler_t bsd_signal(int sig, __sighandler_t handler);

static void on_signal(int sig)
{
    int saved = errno;
    gt_pipeline_finish_from_signal(sig, GT_FINISH_WAIT_MS);
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    __sigaction(sig, &dfl, NULL);
    /* Blocked while the handler runs: delivered, with the default action,
     * as soon as it returns. */
    raise(sig);
    errno = saved;
}

static void on_fatal(int sig, siginfo_t *info, void *uctx)
{
    (void)uctx;
    int saved = errno;
    if (gt_tls.state != GT_TLS_NEVER) gt_pipeline_finish_from_signal(sig, GT_FATAL_WAIT_MS);
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    __sigaction(sig, &dfl, NULL);
    if (info->si_code <= 0) raise(sig);
    errno = saved;
}

/* Whether the disposition is one of ours. */
static int ours(const struct sigaction *sa)
{
    return (sa->sa_flags & SA_SIGINFO) ? sa->sa_sigaction == on_fatal : sa->sa_handler == on_signal;
}

void gt_signals_install(void)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old, sa;
        if (__sigaction(sigs[i], NULL, &old) != 0) continue;
        if ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL) continue;
        memset(&sa, 0, sizeof sa);
        sigemptyset(&sa.sa_mask);
        sigaddset(&sa.sa_mask, SIGINT);
        sigaddset(&sa.sa_mask, SIGTERM);
        if (sigs[i] == SIGINT || sigs[i] == SIGTERM) {
            sa.sa_handler = on_signal;
            sa.sa_flags = SA_RESTART;
        } else {
            sa.sa_sigaction = on_fatal;
            sa.sa_flags = SA_SIGINFO;
        }
        __sigaction(sigs[i], &sa, NULL);
    }
}

static void hide_ours(struct sigaction *old)
{
    if (old && ours(old)) {
        memset(old, 0, sizeof *old);
        old->sa_handler = SIG_DFL;
        sigemptyset(&old->sa_mask);
    }
}

GT_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    int rc = __sigaction(sig, act, old);
    if (rc == 0) hide_ours(old);
    return rc;
}

GT_EXPORT __sighandler_t signal(int sig, __sighandler_t handler)
{
    __sighandler_t previous = bsd_signal(sig, handler);
    return previous == on_signal || previous == (__sighandler_t)(void (*)(void))on_fatal ? SIG_DFL
                                                                                         : previous;
}
