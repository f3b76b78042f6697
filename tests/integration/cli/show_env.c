/* The program the gputrace command runs in its tests:
 *   show_env print         prints the variables gputrace sets, one per line
 *   show_env exit N        exits with status N
 *   show_env raise SIG     dies of signal number SIG
 *   show_env wait          prints "ready PID", then waits for a signal (every
 *                          signal keeps its default action)
 *   show_env checkpoint    prints "ready PID", then "checkpoint N" for the Nth
 *                          SIGUSR1 it gets, until another signal ends it
 * It makes no CUDA call: the preloaded shim stays silent. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const shown[] = {
    "LD_PRELOAD",         "NVTX_INJECTION64_PATH", "GPUTRACE_VERBOSITY",  "GPUTRACE_CATEGORIES",
    "GPUTRACE_OUTPUT",    "GPUTRACE_FORMAT",       "GPUTRACE_GPU_TIMING", "GPUTRACE_LOG",
    "GPUTRACE_CAPTURE",   "GPUTRACE_DELAY",        "GPUTRACE_DURATION",   "GPUTRACE_INTERVAL",
    "GPUTRACE_CALLSITES",
};

static volatile sig_atomic_t checkpoints;

static void on_usr1(int sig)
{
    (void)sig;
    checkpoints++;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "print") == 0) {
        for (size_t i = 0; i < sizeof shown / sizeof shown[0]; i++) {
            const char *v = getenv(shown[i]);
            printf("%s=%s\n", shown[i], v ? v : "(unset)");
        }
        return 0;
    }
    if (argc >= 3 && strcmp(argv[1], "exit") == 0) return atoi(argv[2]);
    if (argc >= 3 && strcmp(argv[1], "raise") == 0) {
        signal(atoi(argv[2]), SIG_DFL);
        raise(atoi(argv[2]));
        return 99;
    }
    if (argc >= 2 && (strcmp(argv[1], "wait") == 0 || strcmp(argv[1], "checkpoint") == 0)) {
        /* SIGUSR1 is taken only while waiting: none is missed between the
         * look at the count and the wait. */
        sigset_t usr1, waiting;
        sigemptyset(&usr1);
        sigaddset(&usr1, SIGUSR1);
        if (strcmp(argv[1], "checkpoint") == 0) {
            signal(SIGUSR1, on_usr1);
            sigprocmask(SIG_BLOCK, &usr1, &waiting);
        } else {
            sigprocmask(SIG_BLOCK, NULL, &waiting);
        }
        printf("ready %d\n", (int)getpid());
        fflush(stdout);
        for (int told = 0;;) {
            sigsuspend(&waiting);
            for (; told < checkpoints; told++)
                printf("checkpoint %d\n", told + 1);
            fflush(stdout);
        }
    }
    fprintf(stderr, "usage: show_env print | exit N | raise SIG | wait | checkpoint\n");
    return 100;
}
