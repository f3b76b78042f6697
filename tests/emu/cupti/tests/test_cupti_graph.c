/* Work run by graph launches: one record per node and launch, with the
 * graph's id, the node's id (the same at every launch of an instantiation,
 * new for another instantiation) and the launch's correlation id; with
 * GRAPH_TRACE one record per launch instead. Configuration (CMakeLists.txt):
 * GPUTRACE_EMU_KERNEL_NS=busy=2000000,quick=0,*=1000, memset 1000 GB/s. */
#include "cupti_test.h"

TEST_CLIENT_DEFINE;

#define BUSY_NS 2000000ULL
#define MEMSET_BYTES 1000000
#define MEMSET_NS 1000ULL
#define LAUNCHES 3

static CUfunction busy, quick;
static CUdeviceptr buffer;
static uint32_t launch_ids[LAUNCHES];
static size_t n_launch_ids;
static CUpti_SubscriberHandle subscriber;

static void CUPTIAPI on_call(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                             const void *data)
{
    (void)userdata;
    const CUpti_CallbackData *cb = data;
    if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch &&
        cb->callbackSite == CUPTI_API_ENTER && n_launch_ids < LAUNCHES)
        launch_ids[n_launch_ids++] = cb->correlationId;
}

static int setup(void **state)
{
    if (setup_primary(state) != 0) return -1;
    busy = load_test_function("_Z4busyPfi");
    quick = load_test_function("quick");
    return cuMemAlloc(&buffer, MEMSET_BYTES) == CUDA_SUCCESS ? 0 : -1;
}

/* busy, then a memset, then quick, captured from a stream. */
static CUgraph capture_graph(void)
{
    CUstream s;
    CUgraph g;
    ok_cu(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    ok_cu(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    launch1(busy, s);
    ok_cu(cuMemsetD8Async(buffer, 1, MEMSET_BYTES, s));
    launch1(quick, s);
    ok_cu(cuStreamEndCapture(s, &g));
    ok_cu(cuStreamDestroy(s));
    return g;
}

static void run(CUgraphExec exec, int times, CUpti_ActivityKind extra)
{
    n_launch_ids = 0;
    test_client_start(1 << 20);
    ok_cupti(cuptiSubscribe(&subscriber, on_call, NULL));
    ok_cupti(cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
                                 CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch));
    ok_cupti(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    ok_cupti(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET));
    if (extra) ok_cupti(cuptiActivityEnable(extra));
    for (int i = 0; i < times; i++)
        ok_cu(cuGraphLaunch(exec, NULL));
    ok_cu(cuCtxSynchronize());
    test_flush();
    ok_cupti(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    ok_cupti(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMSET));
    if (extra) ok_cupti(cuptiActivityDisable(extra));
    ok_cupti(cuptiUnsubscribe(subscriber));
}

static void test_nodes_by_name_with_graph_ids(void **state)
{
    (void)state;
    CUgraph g = capture_graph();
    CUgraphExec exec;
    ok_cu(cuGraphInstantiateWithFlags(&exec, g, 0));
    run(exec, LAUNCHES, CUPTI_ACTIVITY_KIND_INVALID);

    struct test_record k[2 * LAUNCHES + 1], m[LAUNCHES + 1];
    assert_int_equal(test_records(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, k, 2 * LAUNCHES + 1),
                     2 * LAUNCHES);
    assert_int_equal(test_records(CUPTI_ACTIVITY_KIND_MEMSET, m, LAUNCHES + 1), LAUNCHES);
    assert_int_equal(n_launch_ids, LAUNCHES);
    uint32_t graph_id = k[0].r.kernel.graphId;
    uint64_t busy_node = 0, quick_node = 0;
    for (int i = 0; i < 2 * LAUNCHES; i++) {
        const CUpti_ActivityKernel10 *r = &k[i].r.kernel;
        assert_true(graph_id != 0 && r->graphId == graph_id);
        bool is_busy = !strcmp(r->name, "_Z4busyPfi");
        assert_true(is_busy || !strcmp(r->name, "quick"));
        uint64_t *node = is_busy ? &busy_node : &quick_node;
        if (!*node) *node = r->graphNodeId;
        assert_int_equal(r->graphNodeId, *node); /* the same node at every launch */
        assert_int_equal(r->end - r->start, is_busy ? BUSY_NS : 0);
        /* Records of launch n carry launch n's correlation id. */
        bool found = false;
        for (int l = 0; l < LAUNCHES; l++)
            found |= r->correlationId == launch_ids[l];
        assert_true(found && r->correlationId != 0);
    }
    assert_true(busy_node != 0 && quick_node != 0 && busy_node != quick_node);
    for (int i = 0; i < LAUNCHES; i++) {
        assert_int_equal(m[i].r.memset.graphId, graph_id);
        assert_int_equal(m[i].r.memset.correlationId, launch_ids[i]);
        assert_int_equal(m[i].r.memset.end - m[i].r.memset.start, MEMSET_NS);
        assert_true(m[i].r.memset.graphNodeId != busy_node && m[i].r.memset.graphNodeId != 0);
    }

    /* Another instantiation of the graph: the same graph, other nodes. */
    CUgraphExec again;
    ok_cu(cuGraphInstantiateWithFlags(&again, g, 0));
    run(again, 1, CUPTI_ACTIVITY_KIND_INVALID);
    assert_int_equal(test_records(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, k, 2), 2);
    assert_int_equal(k[0].r.kernel.graphId, graph_id);
    assert_true(k[0].r.kernel.graphNodeId != busy_node && k[0].r.kernel.graphNodeId != quick_node);
    ok_cu(cuGraphExecDestroy(again));
    ok_cu(cuGraphExecDestroy(exec));
    ok_cu(cuGraphDestroy(g));
}

static void test_graph_trace_records_each_launch(void **state)
{
    (void)state;
    CUgraph g = capture_graph();
    CUgraphExec exec;
    ok_cu(cuGraphInstantiateWithFlags(&exec, g, 0));
    run(exec, LAUNCHES, CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
    struct test_record r[LAUNCHES + 1];
    assert_int_equal(test_records(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, r, 1), 0);
    assert_int_equal(test_records(CUPTI_ACTIVITY_KIND_MEMSET, r, 1), 0);
    assert_int_equal(test_records(CUPTI_ACTIVITY_KIND_GRAPH_TRACE, r, LAUNCHES + 1), LAUNCHES);
    for (int i = 0; i < LAUNCHES; i++) {
        const CUpti_ActivityGraphTrace2 *t = &r[i].r.graph;
        assert_int_equal(t->correlationId, launch_ids[i]);
        assert_true(t->graphId != 0);
        /* The nodes run one after another. */
        assert_int_equal(t->end - t->start, BUSY_NS + MEMSET_NS);
    }
    ok_cu(cuGraphExecDestroy(exec));
    ok_cu(cuGraphDestroy(g));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nodes_by_name_with_graph_ids),
        cmocka_unit_test(test_graph_trace_records_each_launch),
    };
    return cmocka_run_group_tests(tests, setup, teardown_primary);
}
