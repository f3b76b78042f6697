/* Event pairs read like a GPU's: a pair around work reads the work's
 * simulated duration plus GPUTRACE_EMU_EVENT_LATENCY_NS, 0 gives the
 * duration exactly, and completion still follows the work's own time.
 * Registered several times (CMakeLists.txt): GTEMU_EXPECT_LATENCY_NS is the
 * latency each run expects, GTEMU_EXPECT_WARNING the one warning line the
 * driver must print while reading its settings (none when unset).
 * Configuration: GPUTRACE_EMU_KERNEL_NS=busy=2000000,*=1000,
 * GPUTRACE_EMU_GBPS=dtod=500. */
#include "emu_test.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BUSY_NS 2000000.0
#define COPY_BYTES 1000000
#define COPY_NS 2000.0 /* 10^6 bytes at 500 GB/s */

static double latency_ns;
static CUfunction busy;

static char *read_all(FILE *f)
{
    static char text[1024];
    rewind(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    return text;
}

/* cuInit reads the settings: its stderr must be exactly the expected
 * warning, or nothing. */
static int setup(void **state)
{
    const char *want = getenv("GTEMU_EXPECT_LATENCY_NS");
    const char *warning = getenv("GTEMU_EXPECT_WARNING");
    if (!want) return -1;
    latency_ns = atof(want);
    FILE *err = tmpfile();
    int saved = dup(2);
    if (!err || saved < 0) return -1;
    fflush(stderr);
    dup2(fileno(err), 2);
    int rc = setup_primary(state);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char expected[512] = "";
    if (warning) snprintf(expected, sizeof expected, "%s\n", warning);
    const char *got = read_all(err);
    fclose(err);
    if (strcmp(got, expected) != 0) {
        fprintf(stderr, "stderr was '%s', expected '%s'\n", got, expected);
        return -1;
    }
    busy = load_test_function("_Z4busyPfi");
    return rc;
}

static CUevent new_event(void)
{
    CUevent e;
    ok_cu(cuEventCreate(&e, 0));
    return e;
}

static void test_pair_around_kernel_reads_latency_more(void **state)
{
    (void)state;
    CUevent start = new_event(), stop = new_event();
    ok_cu(cuEventRecord(start, NULL));
    launch1(busy, NULL);
    ok_cu(cuEventRecord(stop, NULL));
    ok_cu(cuEventSynchronize(stop));
    assert_elapsed(start, stop, BUSY_NS + latency_ns);
    ok_cu(cuEventDestroy(start));
    ok_cu(cuEventDestroy(stop));
}

static void test_pair_around_copy_reads_latency_more(void **state)
{
    (void)state;
    CUdeviceptr a, b;
    ok_cu(cuMemAlloc(&a, COPY_BYTES));
    ok_cu(cuMemAlloc(&b, COPY_BYTES));
    CUevent start = new_event(), stop = new_event();
    ok_cu(cuEventRecord(start, NULL));
    ok_cu(cuMemcpyDtoDAsync(b, a, COPY_BYTES, NULL));
    ok_cu(cuEventRecord(stop, NULL));
    ok_cu(cuEventSynchronize(stop));
    assert_elapsed(start, stop, COPY_NS + latency_ns);
    ok_cu(cuEventDestroy(start));
    ok_cu(cuEventDestroy(stop));
    ok_cu(cuMemFree(a));
    ok_cu(cuMemFree(b));
}

/* A tool's pairs around each kernel, inside the program's pair around two:
 * each pair reads its own work plus one latency, and the program's pair
 * reads what it reads without the tool. */
static void test_inner_pairs_leave_outer_pair(void **state)
{
    (void)state;
    CUevent outer0 = new_event(), outer1 = new_event();
    CUevent in[4] = {new_event(), new_event(), new_event(), new_event()};
    ok_cu(cuEventRecord(outer0, NULL));
    for (int k = 0; k < 2; k++) {
        ok_cu(cuEventRecord(in[2 * k], NULL));
        launch1(busy, NULL);
        ok_cu(cuEventRecord(in[2 * k + 1], NULL));
    }
    ok_cu(cuEventRecord(outer1, NULL));
    ok_cu(cuEventSynchronize(outer1));
    assert_elapsed(in[0], in[1], BUSY_NS + latency_ns);
    assert_elapsed(in[2], in[3], BUSY_NS + latency_ns);
    assert_elapsed(outer0, outer1, 2 * BUSY_NS + latency_ns);
    CUevent all[] = {outer0, outer1, in[0], in[1], in[2], in[3]};
    for (int i = 0; i < 6; i++)
        ok_cu(cuEventDestroy(all[i]));
}

/* The latency is in what the pair reads, not in when the work completes:
 * after a stream synchronisation every event recorded on it is complete. */
static void test_completion_follows_the_work(void **state)
{
    (void)state;
    CUstream s;
    ok_cu(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUevent start = new_event(), stop = new_event();
    ok_cu(cuEventRecord(start, s));
    launch1(busy, s);
    ok_cu(cuEventRecord(stop, s));
    uint64_t t0 = test_now_ns();
    ok_cu(cuStreamSynchronize(s));
    ok_cu(cuEventQuery(stop));
    assert_true(test_now_ns() - t0 < (uint64_t)BUSY_NS + 50000000ULL);
    assert_elapsed(start, stop, BUSY_NS + latency_ns);
    ok_cu(cuEventDestroy(start));
    ok_cu(cuEventDestroy(stop));
    ok_cu(cuStreamDestroy(s));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pair_around_kernel_reads_latency_more),
        cmocka_unit_test(test_pair_around_copy_reads_latency_more),
        cmocka_unit_test(test_inner_pairs_leave_outer_pair),
        cmocka_unit_test(test_completion_follows_the_work),
    };
    return cmocka_run_group_tests(tests, setup, teardown_primary);
}
