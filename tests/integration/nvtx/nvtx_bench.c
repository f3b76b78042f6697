/* Host cost of an NVTX push/pop pair as the program sees it, through the
 * toolkit's nvtx3 headers and whatever injection NVTX_INJECTION64_PATH
 * names (none: NVTX's own no-op).
 *
 *     nvtx_bench [pairs]
 *
 * Prints one line per kind of message: a string literal (the same
 * pointer every time), a buffer rewritten with one of 16 texts before each
 * push (the message's content must be read every time), a registered
 * string, and a wide literal. The best of 5 rounds, in ns per pair. Each
 * round is followed by a pause in which the shim's drain thread takes
 * the records, so that the next round writes into recycled chunks as a
 * program in its steady state does. A round must fit the shim's buffer
 * (the default 50,000 pairs are 100,000 records, 12.8 MB), or dropped
 * records make the figures meaningless. With few cores, `taskset -c 0`
 * keeps the drain thread from running beside the loop on a sibling
 * hardware thread: the figures are then the calling thread's own cost.
 * Not a test: figures for the README and for comparing changes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nvtx3/nvToolsExt.h>

#define ROUNDS 5

static uint64_t now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

enum kind { LITERAL, REWRITTEN, REGISTERED, WIDE, KINDS };
static const char *const kind_names[KINDS] = {"literal", "rewritten buffer", "registered",
                                              "wide literal"};

static double round_ns(enum kind k, long pairs, nvtxDomainHandle_t d, nvtxStringHandle_t reg)
{
    static const char texts[16][16] = {"layer 0",  "layer 1",  "layer 2",  "layer 3",
                                       "layer 4",  "layer 5",  "layer 6",  "layer 7",
                                       "layer 8",  "layer 9",  "layer 10", "layer 11",
                                       "layer 12", "layer 13", "layer 14", "layer 15"};
    char buf[16];
    nvtxEventAttributes_t a;
    memset(&a, 0, sizeof a);
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = reg;
    uint64_t t0 = now();
    for (long i = 0; i < pairs; i++) {
        switch (k) {
        case LITERAL:
            nvtxRangePushA("forward");
            nvtxRangePop();
            break;
        case REWRITTEN:
            memcpy(buf, texts[i & 15], sizeof buf);
            nvtxRangePushA(buf);
            nvtxRangePop();
            break;
        case REGISTERED:
            nvtxDomainRangePushEx(d, &a);
            nvtxDomainRangePop(d);
            break;
        default:
            nvtxRangePushW(L"forward");
            nvtxRangePop();
        }
    }
    return (double)(now() - t0) / (double)pairs;
}

int main(int argc, char **argv)
{
    long pairs = argc > 1 ? atol(argv[1]) : 50000;
    if (pairs <= 0) return 2;
    nvtxDomainHandle_t d = nvtxDomainCreateA("bench");
    nvtxStringHandle_t reg = nvtxDomainRegisterStringA(d, "forward");
    for (int k = 0; k < KINDS; k++) {
        double best = 0;
        for (int r = 0; r <= ROUNDS; r++) {
            double ns = round_ns(k, pairs, d, reg);
            usleep(300000);
            if (r == 0) continue; /* warm-up */
            if (r == 1 || ns < best) best = ns;
        }
        printf("%-18s %8.1f ns per push/pop pair\n", kind_names[k], best);
    }
    return 0;
}
