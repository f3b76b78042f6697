/* What GPUTRACE_CHECKSUM costs (figures, not tests: see scripts/bench.sh).
 *
 *   gt_bench_checksum PATH/libgputrace.so [runs] [BASELINE/libgputrace.so|-]
 *
 * 1. The hash alone, on one core: XXH3-64 (and the dtoh:f32:16 mode) over
 *    buffers from 4 KiB, in the first-level cache, to 64 MiB, in memory;
 *    GB/s = 10^9 bytes a second.
 * 2. A copy read back on the emulated driver, cuMemcpyDtoH into pageable
 *    memory, in children run in turn: bare, under libgputrace.so with
 *    checksums off and with dtoh (GPU timing off in both, so that only the
 *    checksum differs): for 64-byte copies the ns the library adds to a
 *    copy, for 1 MiB copies the time dtoh adds per MiB read back. The
 *    emulator's copies are made nearly free (GPUTRACE_EMU_GBPS) so that the
 *    host's own work is what is measured. With a baseline library (the code
 *    before checksums existed), its copies with checksums off run in the
 *    same rounds: off must cost what the baseline costs.
 * Rows of a Markdown table (figure | value | target), medians over the
 * runs. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda.h>

#include "bench_cpu_time.h"
#include "bench_emu.h"
#include "bench_median.h"
#include "checksum_hash.h"
#include "checksum_mode.h"
#include "xxh3.h"

#define CHILD_ENV "GT_BENCH_CHECKSUM_CHILD"
#define MAX_RUNS 99
#define SMALL 64u
#define LARGE (1u << 20)

/* ------------------------------------------------------- the hash alone */

/* GB/s of `mode` over `bytes`, hashed again and again for about 0.2 s of
 * the thread's CPU time: the speed of one core, however busy the machine. */
static double hash_gbps(gt_checksum_mode mode, const unsigned char *buf, size_t bytes)
{
    uint64_t sink = 0, done = 0, t0 = bench_thread_cpu_ns(), t;
    do {
        for (int i = 0; i < 16; i++) {
            sink += gt_checksum_hash(mode, buf, bytes);
            done += bytes;
        }
        t = bench_thread_cpu_ns();
    } while (t - t0 < 200000000u);
    /* Keeps the loop from being optimised away. */
    if (sink == 42) puts("");
    return (double)done / (double)(t - t0);
}

static void hash_rows(int runs)
{
    static const size_t sizes[] = {4u << 10, 64u << 10, 1u << 20, 64u << 20};
    size_t most = sizes[sizeof sizes / sizeof sizes[0] - 1];
    unsigned char *buf = malloc(most);
    if (!buf) return;
    for (size_t i = 0; i < most; i++)
        buf[i] = (unsigned char)(i * 2654435761u >> 24);
    const gt_checksum_mode bytes = {GT_CHECKSUM_BYTES, 0}, f32 = {GT_CHECKSUM_F32, 16};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        double v[MAX_RUNS], w[MAX_RUNS];
        for (int r = 0; r < runs; r++) {
            v[r] = hash_gbps(bytes, buf, sizes[s]);
            w[r] = hash_gbps(f32, buf, sizes[s]);
        }
        printf("| checksum hash, %s (XXH3-64), %zu KiB buffer, one core | %.1f GB/s | %s |\n",
               GT_XXH3_NAME, sizes[s] >> 10, bench_median(v, runs),
               sizes[s] <= (1u << 20) ? ">= 10 GB/s" : "");
        printf(
            "| checksum hash, dtoh:f32:16 (rounded floats), %zu KiB buffer, one core | %.1f GB/s "
            "| |\n",
            sizes[s] >> 10, bench_median(w, runs));
    }
    free(buf);
}

/* ------------------------------------------------------ copies read back */

enum mode { BARE, OFF, DTOH, BASE_OFF, MODES };

/* In the child: ns per copy of `bytes` over `copies` synchronous copies. */
static int child(size_t bytes, uint64_t copies)
{
    CUfunction f;
    CUstream s;
    CUdeviceptr d;
    unsigned char *host = malloc(bytes);
    if (!host || bench_driver_setup("gt_bench_checksum", &f, &s) ||
        bench_check("gt_bench_checksum", cuMemAlloc(&d, bytes), "cuMemAlloc") ||
        bench_check("gt_bench_checksum", cuMemsetD8(d, 7, bytes), "cuMemsetD8"))
        return 1;
    for (uint64_t i = 0; i < copies / 10 + 1; i++)
        cuMemcpyDtoH(host, d, bytes);
    uint64_t t0 = bench_now_ns();
    for (uint64_t i = 0; i < copies; i++)
        cuMemcpyDtoH(host, d, bytes);
    printf("%.3f\n", (double)(bench_now_ns() - t0) / (double)copies);
    return 0;
}

static int run_child(const char *lib, enum mode m, size_t bytes, uint64_t copies, double *ns)
{
    FILE *in = NULL;
    pid_t pid = bench_fork_child(CHILD_ENV, &in);
    if (pid < 0) return -1;
    if (pid == 0) {
        setenv("GPUTRACE_VERBOSITY", "none", 1);
        setenv("GPUTRACE_GPU_TIMING", "off", 1);
        setenv("GPUTRACE_EMU_GBPS", "pageable=1000000", 1);
        unsetenv("GPUTRACE_OUTPUT");
        setenv("GPUTRACE_CHECKSUM", m == DTOH ? "dtoh" : "off", 1);
        if (m == BARE)
            unsetenv("LD_PRELOAD");
        else
            setenv("LD_PRELOAD", lib, 1);
        char b[32], n[32];
        snprintf(b, sizeof b, "%zu", bytes);
        snprintf(n, sizeof n, "%" PRIu64, copies);
        execl("/proc/self/exe", "/proc/self/exe", b, n, (char *)NULL);
        _exit(127);
    }
    int got = in ? fscanf(in, "%lf", ns) : 0;
    if (in) fclose(in);
    int status;
    waitpid(pid, &status, 0);
    return got == 1 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static int copy_rows(const char *lib, const char *baseline, int runs)
{
    static const struct {
        size_t bytes;
        uint64_t copies;
    } sizes[] = {{SMALL, 200000}, {LARGE, 2000}};
    double ns[2][MODES][MAX_RUNS];
    for (int r = 0; r < runs; r++)
        for (int s = 0; s < 2; s++)
            for (int m = 0; m < MODES; m++) {
                if (m == BASE_OFF && !baseline) continue;
                if (run_child(m == BASE_OFF ? baseline : lib, (enum mode)m, sizes[s].bytes,
                              sizes[s].copies, &ns[s][m][r]) != 0) {
                    fprintf(stderr, "gt_bench_checksum: a copy run failed\n");
                    return -1;
                }
            }
    double med[2][MODES];
    for (int s = 0; s < 2; s++)
        for (int m = 0; m < MODES; m++)
            med[s][m] = m == BASE_OFF && !baseline ? 0 : bench_median(ns[s][m], runs);
    printf("| copy read back, 64 B cuMemcpyDtoH: bare | %.1f ns | |\n", med[0][BARE]);
    printf("| copy read back, 64 B: added, checksums off | %+.1f ns | |\n",
           med[0][OFF] - med[0][BARE]);
    if (baseline)
        printf("| copy read back, 64 B: added, checksums off, against the baseline library | "
               "%+.1f ns (baseline %+.1f ns) | the same within noise |\n",
               med[0][OFF] - med[0][BASE_OFF], med[0][BASE_OFF] - med[0][BARE]);
    printf("| copy read back, 64 B: added, checksums dtoh | %+.1f ns | |\n",
           med[0][DTOH] - med[0][BARE]);
    printf("| copy read back, 1 MiB cuMemcpyDtoH: bare | %.1f us | |\n", med[1][BARE] / 1000);
    printf("| copy read back, 1 MiB: added by dtoh over checksums off, per MiB read back | "
           "%+.1f us (%.1f GB/s) | <= 100 us (hashing at >= 10 GB/s) |\n",
           (med[1][DTOH] - med[1][OFF]) / 1000, (double)LARGE / (med[1][DTOH] - med[1][OFF]));
    if (baseline)
        printf("| copy read back, 1 MiB: added, checksums off, against the baseline library | "
               "%+.1f us | the same within noise |\n",
               (med[1][OFF] - med[1][BASE_OFF]) / 1000);
    return 0;
}

int main(int argc, char **argv)
{
    if (getenv(CHILD_ENV)) return child(strtoull(argv[1], NULL, 10), strtoull(argv[2], NULL, 10));
    if (argc < 2) {
        fprintf(stderr, "usage: gt_bench_checksum PATH/libgputrace.so [runs] "
                        "[BASELINE/libgputrace.so|-]\n");
        return 2;
    }
    int runs = argc > 2 ? atoi(argv[2]) : 5;
    const char *baseline = argc > 3 && strcmp(argv[3], "-") ? argv[3] : NULL;
    if (runs < 1 || runs > MAX_RUNS) return 2;
    hash_rows(runs);
    return copy_rows(argv[1], baseline, runs) == 0 ? 0 : 1;
}
