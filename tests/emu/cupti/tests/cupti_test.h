/* What the emulated CUPTI's tests share (cmocka): CUPTI calls that
 * must succeed, and a client that keeps a copy of every record delivered,
 * with the thread and buffer each came in. */
#ifndef GT_CUPTI_TEST_H
#define GT_CUPTI_TEST_H

#include <cupti.h>

#include "emu_test.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define expect_cupti(expected, call)                                                               \
    do {                                                                                           \
        CUptiResult got_ = (call);                                                                 \
        CUptiResult want_ = (expected);                                                            \
        if (got_ != want_) {                                                                       \
            const char *g_ = "?", *w_ = "?";                                                       \
            cuptiGetResultString(got_, &g_);                                                       \
            cuptiGetResultString(want_, &w_);                                                      \
            fail_msg("%s returned %s (%d), expected %s (%d)", #call, g_, (int)got_, w_,            \
                     (int)want_);                                                                  \
        }                                                                                          \
    } while (0)

#define ok_cupti(call) expect_cupti(CUPTI_SUCCESS, call)

/* Room for every record a test makes. */
#define TEST_MAX_RECORDS 4096
#define TEST_RECORD_BYTES 256

struct test_record {
    union {
        CUpti_Activity base;
        CUpti_ActivityKernel10 kernel;
        CUpti_ActivityMemcpy6 memcpy;
        CUpti_ActivityMemcpyPtoP4 peer;
        CUpti_ActivityMemset4 memset;
        CUpti_ActivityAPI api;
        CUpti_ActivityExternalCorrelation external;
        CUpti_ActivityGraphTrace2 graph;
        unsigned char bytes[TEST_RECORD_BYTES];
    } r;
    pthread_t thread; /* that completed its buffer */
    unsigned buffer;  /* which completed buffer, from 1 */
};

/* What the client saw; guarded by `lock`. */
struct test_client {
    pthread_mutex_t lock;
    struct test_record records[TEST_MAX_RECORDS];
    size_t count;
    unsigned buffers; /* buffers completed */
    unsigned empty_buffers;
    bool overrun;        /* a buffer's valid size went past its size */
    bool misplaced;      /* a record was not 8-byte aligned */
    size_t buffer_bytes; /* what each request hands out; 0: refuse */
    size_t max_records;
    unsigned misalign; /* the buffer handed out starts this many bytes past an aligned one */
    size_t requests;
    bool zero_size;          /* hand out a buffer of size 0 */
    unsigned per_buffer[64]; /* records in each completed buffer */
};

extern struct test_client test_client;

static void CUPTIAPI test_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    pthread_mutex_lock(&test_client.lock);
    test_client.requests++;
    size_t bytes = test_client.buffer_bytes;
    unsigned misalign = test_client.misalign;
    bool zero_size = test_client.zero_size;
    *max_records = test_client.max_records;
    pthread_mutex_unlock(&test_client.lock);
    *buffer = NULL;
    *size = 0;
    if (zero_size) {
        static uint8_t none[8];
        *buffer = none;
        return;
    }
    if (bytes == 0) return;
    uint8_t *block = NULL;
    if (posix_memalign((void **)&block, 64, bytes + 64) != 0) return;
    /* How far the buffer lies into the allocation is kept just before it. */
    *buffer = block + 8 + misalign;
    (*buffer)[-1] = (uint8_t)(8 + misalign);
    *size = bytes;
}

static void CUPTIAPI test_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
                                           size_t size, size_t valid)
{
    (void)ctx;
    (void)stream;
    pthread_mutex_lock(&test_client.lock);
    unsigned n = ++test_client.buffers;
    if (valid > size) test_client.overrun = true;
    if (valid == 0) test_client.empty_buffers++;
    CUpti_Activity *rec = NULL;
    while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
        if ((uintptr_t)rec % 8 != 0) test_client.misplaced = true;
        if (test_client.count == TEST_MAX_RECORDS) break;
        struct test_record *t = &test_client.records[test_client.count++];
        memset(t, 0, sizeof *t);
        size_t copy = (size_t)((buffer + valid) - (uint8_t *)rec);
        memcpy(t->r.bytes, rec, copy < TEST_RECORD_BYTES ? copy : TEST_RECORD_BYTES);
        t->thread = pthread_self();
        t->buffer = n;
        if (n < 64) test_client.per_buffer[n]++;
    }
    pthread_mutex_unlock(&test_client.lock);
    free(buffer - buffer[-1]);
}

/* Registers the client with buffers of `bytes` (0: every request refused).
 * A forced flush first takes back the buffers CUPTI still holds from before
 * (before any registration it fails, holding none). */
static inline void test_client_start(size_t bytes)
{
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    pthread_mutex_lock(&test_client.lock);
    test_client.count = 0;
    test_client.buffers = test_client.empty_buffers = 0;
    test_client.overrun = test_client.misplaced = false;
    test_client.buffer_bytes = bytes;
    test_client.max_records = 0;
    test_client.misalign = 0;
    test_client.requests = 0;
    test_client.zero_size = false;
    memset(test_client.per_buffer, 0, sizeof test_client.per_buffer);
    pthread_mutex_unlock(&test_client.lock);
    ok_cupti(cuptiActivityRegisterCallbacks(test_buffer_requested, test_buffer_completed));
}

/* Records of `kind` delivered so far, copied into out (at most max). */
static inline size_t test_records(CUpti_ActivityKind kind, struct test_record *out, size_t max)
{
    size_t n = 0;
    memset(out, 0, max * sizeof *out);
    pthread_mutex_lock(&test_client.lock);
    for (size_t i = 0; i < test_client.count; i++)
        if (test_client.records[i].r.base.kind == kind) {
            if (n < max) out[n] = test_client.records[i];
            n++;
        }
    pthread_mutex_unlock(&test_client.lock);
    return n;
}

static inline void test_flush(void)
{
    ok_cupti(cuptiActivityFlushAll(0));
}

#define TEST_CLIENT_DEFINE struct test_client test_client = {.lock = PTHREAD_MUTEX_INITIALIZER}

#endif
