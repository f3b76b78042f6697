/* Process life: a child forked after cuInit cannot use CUDA; a process
 * exits (or dies of SIGINT) at once while workers still have work queued;
 * GPUTRACE_EMU_STATS and GPUTRACE_EMU_LOG are written; a bad setting
 * gives one warning. The cases that need a fresh process run this binary
 * again with a mode argument. */
#include "emu_test.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static const char *self;

/* Runs this program in `mode` with extra environment variables (NULL
 * terminated) and stderr to `err_path` (or inherited); returns its status. */
static int run_child(const char *mode, const char *const *env, const char *err_path,
                     uint64_t *took_ns)
{
    size_t n_env = 0, n_extra = 0;
    while (environ[n_env])
        n_env++;
    while (env && env[n_extra])
        n_extra++;
    char **child_env = calloc(n_env + n_extra + 1, sizeof *child_env);
    assert_non_null(child_env);
    for (size_t i = 0; i < n_env; i++)
        child_env[i] = environ[i];
    for (size_t i = 0; i < n_extra; i++)
        child_env[n_env + i] = (char *)env[i];
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    if (err_path)
        posix_spawn_file_actions_addopen(&actions, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    char *argv[] = {(char *)self, (char *)mode, NULL};
    pid_t pid;
    uint64_t t0 = test_now_ns();
    assert_int_equal(posix_spawn(&pid, self, &actions, NULL, argv, child_env), 0);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (took_ns) *took_ns = test_now_ns() - t0;
    posix_spawn_file_actions_destroy(&actions);
    free(child_env);
    return status;
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void temp_path(char *buf, size_t len, const char *what)
{
    snprintf(buf, len, "%s/gtemu_%s_%d", P_tmpdir, what, (int)getpid());
    unlink(buf);
}

/* ---- child modes ---- */

static int child_busy_then(bool crash)
{
    CUcontext ctx;
    CUfunction slow;
    if (cuInit(0) || cuDevicePrimaryCtxRetain(&ctx, 0) || cuCtxSetCurrent(ctx)) return 3;
    slow = load_test_function("_Z4slowv"); /* 100 ms each */
    CUstream s;
    void *pinned;
    CUdeviceptr d;
    if (cuStreamCreate(&s, 0) || cuMemAllocHost(&pinned, 1 << 20) || cuMemAlloc(&d, 1 << 20))
        return 4;
    for (int i = 0; i < 50; i++) {
        launch1(slow, s);
        cuMemcpyHtoDAsync(d, pinned, 1 << 20, s); /* keeps the worker queue busy */
    }
    if (crash) raise(SIGINT);
    return 0; /* 5 s of work still queued */
}

static int child_counts(void)
{
    CUcontext ctx;
    if (cuInit(0) || cuDevicePrimaryCtxRetain(&ctx, 0) || cuCtxSetCurrent(ctx)) return 3;
    CUfunction quick = load_test_function("quick");
    CUstream s;
    CUevent ev;
    CUgraph g;
    cuStreamCreate(&s, 0);
    cuEventCreate(&ev, 0);
    for (int i = 0; i < 3; i++)
        launch1(quick, s);
    cuEventRecord(ev, s);
    cuEventRecord(ev, NULL);
    cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL);
    cuEventRecord(ev, s);
    cuStreamEndCapture(s, &g);
    void *pfn;
    cuGetProcAddress("cuMemAlloc", &pfn, 3020, 0, NULL);
    cuGraphDestroy(g);
    cuEventDestroy(ev);
    return 0;
}

static int child_lookups(void)
{
    void *pfn;
    CUdriverProcAddressQueryResult status;
    cuGetProcAddress("cuMemAlloc", &pfn, 3020, 0, &status);
    cuGetProcAddress("cuLaunchKernel", &pfn, 7000, 2, &status);
    cuGetProcAddress("cuNoSuchFunction", &pfn, 12000, 0, &status);
    cuGetProcAddress("cuMemAllocAsync", &pfn, 11000, 0, &status);
    return 0;
}

static int child_bad_settings(void)
{
    CUcontext ctx;
    if (cuInit(0) || cuDevicePrimaryCtxRetain(&ctx, 0) || cuCtxSetCurrent(ctx)) return 3;
    /* The bad duration list is ignored: the default 1000 ns applies. */
    return gtemu_kernel_ns("quick") == 1000 ? 0 : 5;
}

/* ---- tests ---- */

static void test_fork_child_cannot_use_cuda(void **state)
{
    (void)state;
    CUcontext ctx;
    ok_cu(cuInit(0));
    ok_cu(cuDevicePrimaryCtxRetain(&ctx, 0));
    ok_cu(cuCtxSetCurrent(ctx));
    CUstream s;
    ok_cu(cuStreamCreate(&s, 0));
    launch1(load_test_function("quick"), s);
    pid_t pid = fork();
    if (pid == 0) {
        int n;
        bool ok = cuInit(0) == CUDA_ERROR_NOT_INITIALIZED &&
                  cuDeviceGetCount(&n) == CUDA_ERROR_NOT_INITIALIZED &&
                  cuStreamSynchronize(s) == CUDA_ERROR_NOT_INITIALIZED;
        _exit(ok ? 0 : 1);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ok_cu(cuStreamSynchronize(s)); /* the parent carries on */
    ok_cu(cuStreamDestroy(s));
}

static void test_exit_with_work_queued(void **state)
{
    (void)state;
    const char *env[] = {"GPUTRACE_EMU_KERNEL_NS=slow=100000000", NULL};
    uint64_t took;
    int status = run_child("busy-exit", env, NULL, &took);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_true(took < 3000000000ULL); /* did not wait for the 5 s of work */
    status = run_child("busy-sigint", env, NULL, &took);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT);
}

static void test_stats_file(void **state)
{
    (void)state;
    char path[256], var[300];
    temp_path(path, sizeof path, "stats");
    snprintf(var, sizeof var, "GPUTRACE_EMU_STATS=%s", path);
    const char *env[] = {var, NULL};
    int status = run_child("counts", env, NULL, NULL);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    const char *json = read_text(path);
    assert_non_null(strstr(json, "\"launches\": 3,"));
    assert_non_null(strstr(json, "\"event_records\": 2,"));
    assert_non_null(strstr(json, "\"capture_event_records\": 1,"));
    assert_non_null(strstr(json, "\"events_created\": 1,"));
    assert_non_null(strstr(json, "\"proc_address_requests\": 1,"));
    /* The test kernel's PTX, loaded once. */
    assert_non_null(strstr(json, "\"loads\": {\"cuModuleLoadData ptx\": 1}}"));
    unlink(path);
}

static void test_lookup_log(void **state)
{
    (void)state;
    char path[256], var[300];
    temp_path(path, sizeof path, "log");
    snprintf(var, sizeof var, "GPUTRACE_EMU_LOG=%s", path);
    const char *env[] = {var, NULL};
    for (int i = 0; i < 2; i++) {
        int status = run_child("lookups", env, NULL, NULL);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    const char *expected = "cuMemAlloc 3020 0 -> cuMemAlloc_v2\n"
                           "cuLaunchKernel 7000 2 -> cuLaunchKernel_ptsz\n"
                           "cuNoSuchFunction 12000 0 -> NOT_FOUND\n"
                           "cuMemAllocAsync 11000 0 -> VERSION_NOT_SUFFICIENT\n";
    char both[1024];
    snprintf(both, sizeof both, "%s%s", expected, expected); /* appended, not replaced */
    assert_string_equal(read_text(path), both);
    unlink(path);
}

static void test_bad_setting_warns_once(void **state)
{
    (void)state;
    char path[256];
    temp_path(path, sizeof path, "stderr");
    const char *env[] = {"GPUTRACE_EMU_KERNEL_NS=quick=fast", "GPUTRACE_EMU_DEVICES=99", NULL};
    int status = run_child("bad-settings", env, path, NULL);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    const char *err = read_text(path);
    assert_string_equal(err,
                        "gputrace-emu: warning: GPUTRACE_EMU_DEVICES='99' ignored: expected an "
                        "integer from 0 to 16\n"
                        "gputrace-emu: warning: GPUTRACE_EMU_KERNEL_NS='quick=fast' ignored: "
                        "expected name=ns[,name=ns...] with ns a whole number ('*' names the "
                        "default)\n");
    unlink(path);
}

int main(int argc, char **argv)
{
    self = argv[0];
    if (argc > 1) {
        if (!strcmp(argv[1], "busy-exit")) return child_busy_then(false);
        if (!strcmp(argv[1], "busy-sigint")) return child_busy_then(true);
        if (!strcmp(argv[1], "counts")) return child_counts();
        if (!strcmp(argv[1], "lookups")) return child_lookups();
        if (!strcmp(argv[1], "bad-settings")) return child_bad_settings();
        return 2;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fork_child_cannot_use_cuda),
        cmocka_unit_test(test_exit_with_work_queued),
        cmocka_unit_test(test_stats_file),
        cmocka_unit_test(test_lookup_log),
        cmocka_unit_test(test_bad_setting_warns_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
