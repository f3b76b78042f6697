/* Process life with CUPTI: a program exits at once with GPU work and
 * records pending, with its completion callback running on the worker
 * thread, or dies of SIGINT; a child forked before cuInit runs CUDA and
 * gets its own records; children forked while another thread records do
 * not hang in CUPTI. The cases that need a fresh process run this program
 * again with a mode argument. Configuration (CMakeLists.txt):
 * GPUTRACE_EMU_KERNEL_NS=slow=100000000,quick=0,*=1000. */
#include "cupti_test.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

TEST_CLIENT_DEFINE;

extern char **environ;
static const char *self;

/* Runs this program in `mode`; returns its wait status and how long it took. */
static int run_child(const char *mode, uint64_t *took_ns)
{
    char *argv[] = {(char *)self, (char *)mode, NULL};
    pid_t pid;
    uint64_t t0 = test_now_ns();
    assert_int_equal(posix_spawn(&pid, self, NULL, NULL, argv, environ), 0);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    *took_ns = test_now_ns() - t0;
    return status;
}

static CUfunction load_in_primary(const char *name)
{
    CUdevice dev;
    CUcontext ctx;
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
        cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS || cuCtxSetCurrent(ctx) != CUDA_SUCCESS)
        exit(3);
    return load_test_function(name);
}

/* 5 s of slow kernels queued, records pending: exit at once. */
static int child_exit_with_work(void)
{
    CUfunction slow = load_in_primary("_Z4slowv");
    test_client_start(1 << 20);
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    for (int i = 0; i < 50; i++)
        launch1(slow, NULL);
    return 0;
}

static _Atomic int completing; /* completions begun */

/* The first completion (the worker's) takes 10 s. */
static void CUPTIAPI slow_completion(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                     size_t valid)
{
    (void)ctx, (void)stream, (void)size, (void)valid;
    if (completing++ == 0) sleep(10);
    free(buffer);
}

static void CUPTIAPI small_buffer(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *size = sizeof(CUpti_ActivityKernel10);
    *buffer = malloc(*size);
    *max_records = 0;
}

static void flush_at_exit(void)
{
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

/* The worker is completing a buffer (and will for seconds) when the program
 * exits; the exit handler's forced flush does not wait for it for ever. */
static int child_exit_while_completing(void)
{
    CUfunction quick = load_in_primary("quick");
    cuptiActivityRegisterCallbacks(small_buffer, slow_completion);
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    atexit(flush_at_exit);
    for (int i = 0; i < 3; i++)
        launch1(quick, NULL);
    cuCtxSynchronize();
    for (int tries = 0; !completing && tries < 500; tries++)
        usleep(10000);
    return completing ? 0 : 4;
}

static int child_sigint(void)
{
    CUfunction slow = load_in_primary("_Z4slowv");
    test_client_start(1 << 20);
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    launch1(slow, NULL);
    raise(SIGINT);
    return 5;
}

static void test_exit_with_work_pending(void **state)
{
    (void)state;
    uint64_t took;
    int status = run_child("exit-with-work", &took);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_true(took < 2500000000ULL); /* well before the 5 s of queued work */
}

static void test_exit_while_completing(void **state)
{
    (void)state;
    uint64_t took;
    int status = run_child("exit-while-completing", &took);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_true(took < 5000000000ULL); /* not the completion's 10 s */
}

static void test_sigint_kills(void **state)
{
    (void)state;
    uint64_t took;
    int status = run_child("sigint", &took);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT);
}

/* CUPTI set up before cuInit; a child forked then initialises CUDA, works
 * and gets its own records, and the parent only its own. */
static void test_child_forked_before_init_traces(void **state)
{
    (void)state;
    test_client_start(1 << 20);
    ok_cupti(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        CUfunction quick = load_in_primary("quick");
        for (int i = 0; i < 3; i++)
            launch1(quick, NULL);
        cuCtxSynchronize();
        cuptiActivityFlushAll(0);
        struct test_record k[4];
        _exit(test_records(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, k, 4) == 3 ? 0 : 1);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CUfunction quick = load_in_primary("quick");
    launch1(quick, NULL);
    ok_cu(cuCtxSynchronize());
    test_flush();
    struct test_record k[4];
    assert_int_equal(test_records(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, k, 4), 1);
}

static _Atomic int stop_launching;

static void *launch_loop(void *arg)
{
    CUfunction quick = arg;
    CUcontext ctx;
    CUdevice dev;
    cuDeviceGet(&dev, 0);
    cuDevicePrimaryCtxRetain(&ctx, dev);
    cuCtxSetCurrent(ctx);
    while (!stop_launching)
        cuLaunchKernel(quick, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
    cuDevicePrimaryCtxRelease(dev);
    return NULL;
}

/* Children forked while another thread records: CUPTI calls in them
 * return (no lock left held by a thread the child does not have). */
static void test_children_forked_while_recording(void **state)
{
    (void)state;
    CUfunction quick = load_in_primary("quick");
    test_client_start(1 << 20);
    ok_cupti(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    ok_cupti(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER));
    pthread_t launcher;
    assert_int_equal(pthread_create(&launcher, NULL, launch_loop, quick), 0);
    for (int i = 0; i < 20; i++) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            alarm(10);
            size_t dropped;
            bool ok = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) == CUPTI_SUCCESS &&
                      cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped) == CUPTI_SUCCESS &&
                      cuptiActivityDisable(CUPTI_ACTIVITY_KIND_DRIVER) == CUPTI_SUCCESS;
            _exit(ok ? 0 : 1);
        }
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        usleep(1000);
    }
    stop_launching = 1;
    assert_int_equal(pthread_join(launcher, NULL), 0);
    ok_cu(cuCtxSynchronize());
    test_flush();
    ok_cupti(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    ok_cupti(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_DRIVER));
    struct test_record k;
    assert_true(test_records(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, &k, 1) > 0);
}

int main(int argc, char **argv)
{
    self = argv[0];
    if (argc > 1) {
        if (!strcmp(argv[1], "exit-with-work")) return child_exit_with_work();
        if (!strcmp(argv[1], "exit-while-completing")) return child_exit_while_completing();
        if (!strcmp(argv[1], "sigint")) return child_sigint();
        return 2;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exit_with_work_pending),
        cmocka_unit_test(test_exit_while_completing),
        cmocka_unit_test(test_sigint_kills),
        cmocka_unit_test(test_child_forked_before_init_traces),
        cmocka_unit_test(test_children_forked_while_recording),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
