/* cuGetProcAddress: base name + CUDA version + flags pick the variant.
 * The newest variant introduced at or before the requested version wins;
 * with CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM the newest _ptds/_ptsz
 * variant does, falling back to the legacy one. GPUTRACE_EMU_LOG appends
 * one line per request: "symbol version flags -> variant|NOT_FOUND|
 * VERSION_NOT_SUFFICIENT|INVALID_VALUE". */
#include "procaddr.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int log_fd = -1;
static pthread_once_t log_once = PTHREAD_ONCE_INIT;

static void open_log(void)
{
    const char *path = gt_config_get()->log_path;
    if (path) log_fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
}

static void log_request(const char *symbol, int version, cuuint64_t flags, const char *answer)
{
    pthread_once(&log_once, open_log);
    if (log_fd < 0) return;
    char line[512];
    int n = snprintf(line, sizeof line, "%s %d %llu -> %s\n", symbol ? symbol : "(null)", version,
                     (unsigned long long)flags, answer);
    if (n > 0) {
        /* One write per line: lines from threads and processes never mix. */
        ssize_t written =
            write(log_fd, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
        (void)written;
    }
}

/* First entry of `base`, or NULL. */
static const struct gt_proc_entry *find_base(const char *base)
{
    size_t lo = 0, hi = gt_proc_table_len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(gt_proc_table[mid].base, base) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < gt_proc_table_len && strcmp(gt_proc_table[lo].base, base) == 0)
        return &gt_proc_table[lo];
    return NULL;
}

static const struct gt_proc_entry *pick(const struct gt_proc_entry *first, int version, bool ptds)
{
    const struct gt_proc_entry *best_default = NULL, *best_ptds = NULL;
    const struct gt_proc_entry *end = gt_proc_table + gt_proc_table_len;
    for (const struct gt_proc_entry *e = first; e < end && !strcmp(e->base, first->base); e++) {
        if (e->version > version) continue;
        if (e->ptds)
            best_ptds = e;
        else
            best_default = e;
    }
    return ptds && best_ptds ? best_ptds : best_default;
}

static CUresult get_proc_address(const char *symbol, void **pfn, int version, cuuint64_t flags,
                                 CUdriverProcAddressQueryResult *status)
{
    gt_count(&gt_counters.proc_address_requests);
    cuuint64_t valid =
        CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
    if (!symbol || !pfn || (flags & ~valid) || version > GT_DRIVER_VERSION) {
        if (pfn) *pfn = NULL;
        log_request(symbol, version, flags, "INVALID_VALUE");
        return CUDA_ERROR_INVALID_VALUE;
    }
    CUdriverProcAddressQueryResult result = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    const char *answer = "NOT_FOUND";
    *pfn = NULL;
    const struct gt_proc_entry *first = find_base(symbol);
    if (first) {
        const struct gt_proc_entry *e =
            pick(first, version, flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
        if (!e) {
            result = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
            answer = "VERSION_NOT_SUFFICIENT";
        } else if (e->fn) {
            *pfn = e->fn;
            result = CU_GET_PROC_ADDRESS_SUCCESS;
            answer = e->symbol;
        }
    }
    if (status) *status = result;
    log_request(symbol, version, flags, answer);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                                     cuuint64_t flags, CUdriverProcAddressQueryResult *symbolStatus)
{
    return get_proc_address(symbol, pfn, cudaVersion, flags, symbolStatus);
}

CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    return get_proc_address(symbol, pfn, cudaVersion, flags, NULL);
}
