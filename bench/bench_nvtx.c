/* What an NVTX range costs the calling thread under libgputrace.so
 * (figures, not tests: see scripts/bench.sh). No GPU work: the range's
 * own calls only.
 *
 *   gt_bench_nvtx PATH/libgputrace.so [ranges] [runs] [BASELINE/libgputrace.so|-]
 *
 * A child times `ranges` push/pop pairs (default 1000000) after a warm-up,
 * by the CPU time of its thread (the figures hold on a loaded machine),
 * in each of these modes, the runs interleaved so that a change in machine
 * load touches every mode alike:
 *   bare     no tool: NVTX's calls find no injection and return
 *   push     nvtxRangePushA / nvtxRangePop, the library injected
 *   attrs    nvtxRangePushEx with a message and a colour, no payload
 *   payload  nvtxRangePushEx with a uint64 payload
 *   fields   nvtxDomainRangePushEx with an extended payload of a registered
 *            schema of three numbers (flops, bytes_read, bytes_written)
 * Printed as rows of a Markdown table (figure | value | target): ns per
 * bare pair, and the medians over the runs of the ns the library adds to a
 * pair. With a second library (an earlier build), each of its modes runs
 * right after the same mode of the first and its rows follow, marked
 * "baseline": a range without payload must cost what it cost before the
 * library read payloads. */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtPayload.h>

#include "bench_emu.h"
#include "bench_median.h"

#define CHILD_ENV "GT_BENCH_NVTX_CHILD"
#define WARM_UP 100000
#define MAX_RUNS 99
#define LIBS 2 /* the library measured, and a baseline to compare it with */

enum mode { BARE, PUSH, ATTRS, PAYLOAD, FIELDS, MODES };
static const char *const mode_names[MODES] = {"bare", "push", "attrs", "payload", "fields"};
static const char *const mode_labels[MODES] = {
    "", "nvtxRangePushA/Pop", "nvtxRangePushEx/Pop, message and colour, no payload",
    "nvtxRangePushEx/Pop, uint64 payload",
    "nvtxDomainRangePushEx/Pop, extended payload of 3 schema fields"};

typedef struct work_numbers {
    uint64_t flops, bytes_read, bytes_written;
} work_numbers;

static uint64_t work_schema(nvtxDomainHandle_t d)
{
    static const nvtxPayloadSchemaEntry_t entries[] = {
        {0, NVTX_PAYLOAD_ENTRY_TYPE_UINT64, "flops", NULL, 0, offsetof(work_numbers, flops), NULL,
         NULL},
        {0, NVTX_PAYLOAD_ENTRY_TYPE_UINT64, "bytes_read", NULL, 0,
         offsetof(work_numbers, bytes_read), NULL, NULL},
        {0, NVTX_PAYLOAD_ENTRY_TYPE_UINT64, "bytes_written", NULL, 0,
         offsetof(work_numbers, bytes_written), NULL, NULL},
    };
    nvtxPayloadSchemaAttr_t attr = {0};
    attr.fieldMask = NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_TYPE | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ENTRIES |
                     NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NUM_ENTRIES |
                     NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_STATIC_SIZE;
    attr.type = NVTX_PAYLOAD_SCHEMA_TYPE_STATIC;
    attr.entries = entries;
    attr.numEntries = sizeof entries / sizeof entries[0];
    attr.payloadStaticSize = sizeof(work_numbers);
    return nvtxPayloadSchemaRegister(d, &attr);
}

/* `n` pairs of the mode's calls. */
static void ranges(enum mode mode, uint64_t n, nvtxDomainHandle_t d, uint64_t schema)
{
    nvtxEventAttributes_t a;
    memset(&a, 0, sizeof a);
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = "bench_range";
    a.colorType = NVTX_COLOR_ARGB;
    a.color = 0xff3377aa;
    work_numbers w = {4556334, 1024000, 234544};
    nvtxPayloadData_t data = {schema, sizeof w, &w};
    if (mode == PAYLOAD) {
        a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
        a.payload.ullValue = 1000;
    } else if (mode == FIELDS) {
        a.payloadType = NVTX_PAYLOAD_TYPE_EXT;
        a.payload.ullValue = (uint64_t)(uintptr_t)&data;
        a.reserved0 = 1;
    }
    for (uint64_t i = 0; i < n; i++) {
        switch (mode) {
        case BARE:
        case PUSH:
            nvtxRangePushA("bench_range");
            nvtxRangePop();
            break;
        case ATTRS:
        case PAYLOAD:
            nvtxRangePushEx(&a);
            nvtxRangePop();
            break;
        default:
            nvtxDomainRangePushEx(d, &a);
            nvtxDomainRangePop(d);
            break;
        }
    }
}

/* The calling thread's CPU time: what the calls cost it, whatever else
 * the machine runs meanwhile. */
static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int child(enum mode mode, uint64_t n)
{
    nvtxDomainHandle_t d = nvtxDomainCreateA("bench");
    uint64_t schema = work_schema(d);
    ranges(mode, WARM_UP, d, schema);
    uint64_t t0 = thread_cpu_ns();
    ranges(mode, n, d, schema);
    printf("%.3f\n", (double)(thread_cpu_ns() - t0) / (double)n);
    return 0;
}

/* Runs this program as a child in `mode` under `shim`; ns per pair, or a
 * negative number when the child failed. */
static double run_child(const char *shim, enum mode mode, uint64_t n)
{
    FILE *in = NULL;
    pid_t pid = bench_fork_child(CHILD_ENV, &in);
    if (pid < 0) return -1;
    if (pid == 0) {
        setenv("GPUTRACE_VERBOSITY", "none", 1);
        setenv("GPUTRACE_GPU_TIMING", "off", 1);
        unsetenv("GPUTRACE_OUTPUT");
        unsetenv("GPUTRACE_CAPTURE");
        unsetenv("GPUTRACE_CATEGORIES");
        if (mode == BARE) {
            unsetenv("LD_PRELOAD");
            unsetenv("NVTX_INJECTION64_PATH");
        } else {
            setenv("LD_PRELOAD", shim, 1);
            setenv("NVTX_INJECTION64_PATH", shim, 1);
        }
        char count[32];
        snprintf(count, sizeof count, "%" PRIu64, n);
        execl("/proc/self/exe", "gt_bench_nvtx", mode_names[mode], count, (char *)NULL);
        _exit(127);
    }
    double ns = -1;
    if (!in || fscanf(in, "%lf", &ns) != 1) ns = -1;
    if (in) fclose(in);
    int status;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? ns : -1;
}

int main(int argc, char **argv)
{
    if (getenv(CHILD_ENV)) {
        if (argc < 3) return 2;
        for (int m = 0; m < MODES; m++)
            if (strcmp(argv[1], mode_names[m]) == 0)
                return child((enum mode)m, strtoull(argv[2], NULL, 10));
        return 2;
    }
    if (argc < 2) {
        fprintf(stderr, "usage: gt_bench_nvtx PATH/libgputrace.so [ranges] [runs] "
                        "[BASELINE/libgputrace.so|-]\n");
        return 2;
    }
    uint64_t n = argc > 2 ? strtoull(argv[2], NULL, 10) : 1000000;
    int runs = argc > 3 ? atoi(argv[3]) : 7;
    const char *shims[LIBS] = {argv[1], argc > 4 && strcmp(argv[4], "-") ? argv[4] : NULL};
    int nlibs = shims[1] ? 2 : 1;
    if (n == 0 || runs < 1 || runs > MAX_RUNS) return 2;
    static double ns[LIBS][MODES][MAX_RUNS];
    for (int r = 0; r < runs; r++) {
        for (int m = 0; m < MODES; m++) {
            for (int l = 0; l < nlibs; l++) {
                if (m == BARE && l) { /* the same for both */
                    ns[l][m][r] = ns[0][m][r];
                    continue;
                }
                ns[l][m][r] = run_child(shims[l], (enum mode)m, n);
                if (ns[l][m][r] < 0) {
                    fprintf(stderr, "gt_bench_nvtx: the %s run of %s failed\n", mode_names[m],
                            shims[l]);
                    return 1;
                }
            }
        }
    }
    double bare = bench_median(ns[0][BARE], runs);
    printf("| NVTX range (push and pop), no tool | %.1f ns | |\n", bare);
    for (int l = 0; l < nlibs; l++)
        for (int m = PUSH; m < MODES; m++)
            printf("| NVTX range: added, %s%s | %+.1f ns | %s |\n", mode_labels[m],
                   l ? " (baseline)" : "", bench_median(ns[l][m], runs) - bare,
                   !l && nlibs > 1 && (m == PUSH || m == ATTRS) ? "as the baseline's" : "");
    return 0;
}
