/* A multithreaded program with no CUDA in it, run with and without the
 * shim preloaded: whatever it prints and however it ends must not change.
 *
 *   preload_prog threads N CODE   N threads compute checksums; exit(CODE)
 *   preload_prog fork             a child computes and exits 5; the parent reports it
 *   preload_prog sigterm          SIGTERM from a thread, default disposition
 *   preload_prog handler          SIGTERM with the program's own handler: _exit(7)
 *   preload_prog dispositions     prints what sigaction()/signal() say
 *   preload_prog exit|return|_exit|thread-exit   the ways out, with threads running */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static uint64_t checksum(uint64_t seed)
{
    uint64_t x = seed * 2654435761u + 1;
    for (int i = 0; i < 200000; i++)
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    return x;
}

typedef struct job {
    pthread_t thread;
    uint64_t seed, result;
} job;

static void *work(void *arg)
{
    job *j = arg;
    j->result = checksum(j->seed);
    return NULL;
}

static int run_threads(int n)
{
    job jobs[64];
    if (n > 64) n = 64;
    for (int i = 0; i < n; i++) {
        jobs[i].seed = (uint64_t)i;
        pthread_create(&jobs[i].thread, NULL, work, &jobs[i]);
    }
    for (int i = 0; i < n; i++) {
        pthread_join(jobs[i].thread, NULL);
        printf("thread %d: %016llx\n", i, (unsigned long long)jobs[i].result);
    }
    return n;
}

static void *spin(void *arg)
{
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

static void start_spinners(int n)
{
    for (int i = 0; i < n; i++) {
        pthread_t t;
        pthread_create(&t, NULL, spin, NULL);
    }
}

static void *send_sigterm(void *arg)
{
    (void)arg;
    usleep(100 * 1000);
    kill(getpid(), SIGTERM);
    return NULL;
}

static void own_handler(int sig)
{
    static const char msg[] = "caught SIGTERM\n";
    if (write(STDOUT_FILENO, msg, sizeof msg - 1) < 0) _exit(8);
    _exit(sig == SIGTERM ? 7 : 9);
}

static const char *describe(void (*h)(int))
{
    return h == SIG_DFL ? "default" : h == SIG_IGN ? "ignored" : "handler";
}

static int dispositions(void)
{
    struct sigaction sa;
    sigaction(SIGINT, NULL, &sa);
    printf("SIGINT %s flags %d\n", describe(sa.sa_handler), sa.sa_flags & SA_SIGINFO);
    sigaction(SIGTERM, NULL, &sa);
    printf("SIGTERM %s\n", describe(sa.sa_handler));
    printf("signal(SIGTERM) was %s\n", describe(signal(SIGTERM, SIG_IGN)));
    printf("signal(SIGTERM) now %s\n", describe(signal(SIGTERM, SIG_DFL)));
    sigaction(SIGHUP, NULL, &sa);
    printf("SIGHUP %s\n", describe(sa.sa_handler));
    return 0;
}

static void *exit_from_thread(void *arg)
{
    (void)arg;
    printf("exiting from a thread\n");
    exit(11);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "threads";
    if (strcmp(mode, "threads") == 0) {
        int n = argc > 2 ? atoi(argv[2]) : 4;
        run_threads(n);
        return argc > 3 ? atoi(argv[3]) : 0;
    }
    if (strcmp(mode, "fork") == 0) {
        run_threads(2);
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            printf("child: %016llx\n", (unsigned long long)checksum(99));
            run_threads(3);
            exit(5);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        printf("parent: child exited %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        return 0;
    }
    if (strcmp(mode, "sigterm") == 0 || strcmp(mode, "handler") == 0) {
        if (mode[0] == 'h') {
            struct sigaction sa;
            memset(&sa, 0, sizeof sa);
            sa.sa_handler = own_handler;
            sigaction(SIGTERM, &sa, NULL);
        }
        run_threads(2);
        fflush(stdout);
        start_spinners(2);
        pthread_t t;
        pthread_create(&t, NULL, send_sigterm, NULL);
        for (;;)
            pause();
    }
    if (strcmp(mode, "dispositions") == 0) return dispositions();
    run_threads(2);
    start_spinners(3);
    fflush(stdout);
    if (strcmp(mode, "exit") == 0) exit(3);
    if (strcmp(mode, "return") == 0) return 6;
    if (strcmp(mode, "_exit") == 0) _exit(9);
    if (strcmp(mode, "thread-exit") == 0) {
        pthread_t t;
        pthread_create(&t, NULL, exit_from_thread, NULL);
        for (;;)
            pause();
    }
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
}
