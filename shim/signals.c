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
 * handler simply replaces ours. */
#include "internal.h"

#include <errno.h>
#include <signal.h>

#define GT_EXPORT __attribute__((visibility("default")))

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

void gt_signals_install(void)
{
    static const int sigs[] = {SIGINT, SIGTERM};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old, sa;
        if (__sigaction(sigs[i], NULL, &old) != 0) continue;
        if ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL) continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaddset(&sa.sa_mask, SIGINT);
        sigaddset(&sa.sa_mask, SIGTERM);
        sa.sa_flags = SA_RESTART;
        __sigaction(sigs[i], &sa, NULL);
    }
}

static void hide_ours(struct sigaction *old)
{
    if (old && !(old->sa_flags & SA_SIGINFO) && old->sa_handler == on_signal) {
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
    return previous == on_signal ? SIG_DFL : previous;
}
