/* The command between the user and the program it runs (SPEC §12), so
 * that sending a signal to gputrace is sending it to the program:
 *
 * - Every signal gputrace can catch, sent by a process (kill, sigqueue, a
 *   supervisor, Python's send_signal), goes on to the program. A signal
 *   the kernel sent is not: the terminal's (Ctrl-C, Ctrl-\, Ctrl-Z, a
 *   hang-up, a resize) went to the whole foreground process group, the
 *   program included; the others are about gputrace itself (its child's
 *   changes, its own faults, of which it dies).
 * - A stop (SIGTSTP, SIGTTIN, SIGTTOU) stops the program, then gputrace
 *   once the program has stopped, so that a shell sees the job stop;
 *   SIGCONT goes on to the program as any signal does.
 * - The program dies with gputrace: SIGKILL, which gputrace cannot catch
 *   and pass on, reaches the program as its parent-death signal, set in
 *   the child before the exec with no window where gputrace could die
 *   unseen (the parent's pid is checked after it is set).
 * - When the program dies of signal N, gputrace dies of N (after its own
 *   output), without a core dump of its own: shells, loops and parents see
 *   what they see without gputrace (a shell loop stops on Ctrl-C).
 *
 * A signal gputrace was started ignoring stays ignored (nohup), for the
 * program too. */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

static volatile sig_atomic_t program_pid;
/* The stop signal gputrace was sent (0: none): it stops too, once the
 * program has. */
static volatile sig_atomic_t stop_asked;
static bool relayed[NSIG]; /* a handler is installed: written before the fork only */

static bool is_stop(int sig)
{
    return sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* Signals of an instruction gputrace ran: of those it dies. */
static bool is_fault(int sig)
{
    return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL || sig == SIGTRAP ||
           sig == SIGSYS;
}

static void relay(int sig, siginfo_t *info, void *uctx)
{
    (void)uctx;
    int saved = errno;
    if (is_stop(sig)) stop_asked = sig;
    /* A SIGCONT before gputrace has stopped too: it must not stop after. */
    if (sig == SIGCONT) stop_asked = 0;
    /* si_code <= 0: sent by a process (SI_USER, SI_QUEUE, SI_TKILL...). */
    if (info->si_code <= 0) {
        if (program_pid > 0) kill((pid_t)program_pid, sig);
    } else if (is_fault(sig)) {
        signal(sig, SIG_DFL); /* the instruction runs again, and gputrace dies */
    }
    errno = saved;
}

void gt_cli_relay_install(sigset_t *set)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = relay;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigemptyset(set);
    for (int sig = 1; sig < NSIG; sig++) {
        struct sigaction old;
        if (sig == SIGKILL || sig == SIGSTOP) continue;
        /* Signals the C library keeps for itself are refused here. */
        if (sigaction(sig, NULL, &old) != 0 || old.sa_handler == SIG_IGN) continue;
        relayed[sig] = sigaction(sig, &sa, NULL) == 0;
        if (relayed[sig]) sigaddset(set, sig);
    }
}

void gt_cli_relay_to(pid_t pid)
{
    program_pid = pid;
}

int gt_cli_relay_child(pid_t parent)
{
    /* Default actions, while every signal is still blocked: one sent to
     * the child before the exec then does to it what it does to the
     * program (a caught one would be lost in gputrace's handler here). */
    for (int sig = 1; sig < NSIG; sig++)
        if (relayed[sig]) signal(sig, SIG_DFL);
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return -1;
    /* gputrace died before the death signal was set: nothing would send it. */
    return getppid() == parent ? 0 : -1;
}

/* Stops gputrace as the program stopped (SIGSTOP for a stop of another
 * kind), until a SIGCONT. */
static void stop_like(int sig)
{
    struct sigaction dfl, old;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    if (!is_stop(sig)) sig = SIGSTOP;
    bool swapped = sig != SIGSTOP && sigaction(sig, &dfl, &old) == 0;
    sigset_t one, mask;
    sigemptyset(&one);
    sigaddset(&one, sig);
    sigprocmask(SIG_UNBLOCK, &one, &mask);
    raise(sig);
    sigprocmask(SIG_SETMASK, &mask, NULL);
    if (swapped) sigaction(sig, &old, NULL);
}

int gt_cli_relay_wait(pid_t pid, int *status)
{
    for (;;) {
        int st = 0;
        if (waitpid(pid, &st, WUNTRACED) < 0) {
            if (errno == EINTR) continue;
            gt_cli_error("waiting for the program: %s", strerror(errno));
            return -1;
        }
        if (!WIFSTOPPED(st)) {
            *status = st;
            /* Nothing to pass on any more: gputrace, which may still write
             * the summary, takes signals as a program does (a background
             * write to a terminal with tostop stops it). */
            for (int sig = 1; sig < NSIG; sig++)
                if (relayed[sig]) signal(sig, SIG_DFL);
            return 0;
        }
        /* Stopped by a stop gputrace was sent too (the terminal's Ctrl-Z,
         * or one passed on): gputrace stops as well, unless a SIGCONT came
         * meanwhile (it cleared the request: stopping after it would leave
         * gputrace stopped and its program running). A program stopped by
         * a signal sent to it alone is waited for as it is. */
        int asked = stop_asked;
        stop_asked = 0;
        if (asked) stop_like(WSTOPSIG(st));
    }
}

void gt_cli_die_of(int sig)
{
    /* The program made its own core dump, where the limits allow one. */
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none);
    prctl(PR_SET_DUMPABLE, 0);
    fflush(NULL);
    signal(sig, SIG_DFL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    sigprocmask(SIG_UNBLOCK, &one, NULL);
    raise(sig);
}
