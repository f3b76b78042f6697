/* A CUDA driver program that treats its descriptors, its streams and its
 * working directory as programs in the wild do, run with and without the
 * shim on the emulated driver: what it prints, the files it writes and
 * its exit status must not change.
 *
 *   outputs_prog work N             N rounds of copies and memsets, one line
 *   outputs_prog takeover DATA      work until a line comes on stdin; closes
 *                                   3..1023 (as daemons do); opens DATA and
 *                                   fills every number up to 1023 with copies
 *                                   of it (as a server with many connections
 *                                   does); writes a line through each; work;
 *                                   a forked child writes through each too
 *   outputs_prog reopen DATA        work; opens DATA (run with 2>&- or 1>&-: it
 *                                   gets that descriptor) and writes 12 bytes
 *   outputs_prog lines N            work; one line, flushed; waits for a line on
 *                                   stdin; then N lines through stdio, left
 *                                   for exit to flush
 *   outputs_prog chdir DIR          work; chdir(DIR); work
 *   outputs_prog wait               work; "ready" on stdout; sleeps until killed */
#include <cuda.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define BYTES (64u << 10)
#define FD_CEILING 1024

static CUdeviceptr dev_buf;
static unsigned char host_buf[BYTES];

static void check(CUresult r, const char *what)
{
    if (r == CUDA_SUCCESS) return;
    fprintf(stderr, "%s failed: %d\n", what, (int)r);
    exit(3);
}

static void setup(void)
{
    CUdevice dev;
    CUcontext ctx;
    check(cuInit(0), "cuInit");
    check(cuDeviceGet(&dev, 0), "cuDeviceGet");
    check(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
    check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
    check(cuMemAlloc(&dev_buf, BYTES), "cuMemAlloc");
}

/* n rounds: a memset, a copy each way; returns a checksum of what came back. */
static unsigned work(int n)
{
    unsigned sum = 0;
    for (int i = 0; i < n; i++) {
        memset(host_buf, i & 0xff, sizeof host_buf);
        check(cuMemcpyHtoD(dev_buf, host_buf, BYTES), "cuMemcpyHtoD");
        check(cuMemsetD8(dev_buf + BYTES / 2, (unsigned char)(i * 3), BYTES / 2), "cuMemsetD8");
        check(cuMemcpyDtoH(host_buf, dev_buf, BYTES), "cuMemcpyDtoH");
        sum = sum * 31 + host_buf[0] + host_buf[BYTES - 1];
    }
    return sum;
}

static int write_all(int fd, const char *s, size_t n)
{
    while (n) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        s += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Writes one line through each descriptor from first to FD_CEILING - 1;
 * the number of writes that failed. */
static int write_through_each(int first, const char *who)
{
    int failed = 0;
    char line[64];
    for (int fd = first; fd < FD_CEILING; fd++) {
        int n = snprintf(line, sizeof line, "%s %d\n", who, fd);
        if (write_all(fd, line, (size_t)n) != 0) failed++;
    }
    return failed;
}

/* Works until a line arrives on stdin. */
static void work_until_told(void)
{
    struct pollfd in = {.fd = STDIN_FILENO, .events = POLLIN};
    while (poll(&in, 1, 5) == 0)
        work(1);
    char go[16];
    if (!fgets(go, sizeof go, stdin)) exit(4);
}

static int takeover(const char *data)
{
    printf("before %u\n", work(20));
    fflush(stdout);
    work_until_told();
    for (int fd = 3; fd < FD_CEILING; fd++)
        close(fd);
    int first = open(data, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
    if (first < 0) return 4;
    int copies = 0;
    for (int fd = first; fd >= 0 && fd < FD_CEILING - 1; copies++)
        fd = dup(first);
    printf("descriptors %d..%d: %d copies\n", first, FD_CEILING - 1, copies);
    printf("failed writes: %d\n", write_through_each(first, "parent"));
    printf("after %u\n", work(20));
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) _exit(write_through_each(first, "child") ? 1 : 0);
    int status = -1;
    waitpid(child, &status, 0);
    printf("child: %s\n", WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "all written" : "failed");
    return 0;
}

static int reopen(const char *data)
{
    printf("work %u\n", work(5));
    fflush(stdout);
    int fd = open(data, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return 4;
    return write_all(fd, "program data", 12) == 0 ? 0 : 5;
}

static int lines(long n)
{
    unsigned sum = work(5);
    printf("first %u\n", sum);
    fflush(stdout);
    char go[16];
    if (!fgets(go, sizeof go, stdin)) return 4;
    for (long i = 0; i < n; i++)
        printf("line %ld of %ld\n", i, n);
    return 0;
}

static int change_directory(const char *dir)
{
    printf("here %u\n", work(5));
    if (chdir(dir) != 0) return 4;
    printf("there %u\n", work(5));
    return 0;
}

static _Noreturn void wait_for_kill(void)
{
    printf("work %u\nready\n", work(50));
    fflush(stdout);
    for (;;) {
        work(1);
        usleep(10000);
    }
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "work";
    const char *arg = argc > 2 ? argv[2] : "";
    setup();
    if (strcmp(mode, "work") == 0) {
        printf("work %u\n", work(argc > 2 ? atoi(arg) : 10));
        return 0;
    }
    if (strcmp(mode, "takeover") == 0) return takeover(arg);
    if (strcmp(mode, "reopen") == 0) return reopen(arg);
    if (strcmp(mode, "lines") == 0) return lines(atol(arg));
    if (strcmp(mode, "chdir") == 0) return change_directory(arg);
    if (strcmp(mode, "wait") == 0) wait_for_kill();
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
}
