/* The program the gputrace command runs in its tests:
 *   show_env print         prints the variables gputrace sets, one per line
 *   show_env exit N        exits with status N
 *   show_env raise SIG     dies of signal number SIG
 *   show_env wait          prints "ready", then waits for a signal (SIGINT,
 *                          SIGTERM, SIGHUP, SIGQUIT keep their default action)
 * It makes no CUDA call: the preloaded shim stays silent. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const shown[] = {
    "LD_PRELOAD",       "NVTX_INJECTION64_PATH", "GPUTRACE_VERBOSITY",  "GPUTRACE_CATEGORIES",
    "GPUTRACE_OUTPUT",  "GPUTRACE_FORMAT",       "GPUTRACE_GPU_TIMING", "GPUTRACE_LOG",
    "GPUTRACE_CAPTURE", "GPUTRACE_DELAY",        "GPUTRACE_DURATION",   "GPUTRACE_INTERVAL",
};

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
    if (argc >= 2 && strcmp(argv[1], "wait") == 0) {
        puts("ready");
        fflush(stdout);
        for (;;)
            pause();
    }
    fprintf(stderr, "usage: show_env print | exit N | raise SIG | wait\n");
    return 100;
}
