/* What reading inlined calls and tail calls from the debug information
 * costs the draining thread when it names native call sites
 * (dwarf_inline.c, dwarf_tailcall.c), on objects given on the command
 * line (built with -g):
 *   the first lookup in the object: the units' headers read, and one
 *     unit's functions;
 *   one lookup in the middle of every function of the symbol table, the
 *     first time: every unit's functions read (the most a run can ask);
 *   the same lookups again, from what is kept;
 *   a tail call looked up from the middle of every function, as from a
 *     return address there (its function's entries read, and the
 *     function its call there called, where there is one);
 *   the memory kept (malloc's count of bytes in use, before and after).
 * Medians of RUNS runs, each from nothing kept (the file's pages stay in
 * the page cache after the first). Rows of scripts/bench.sh's table.
 *   gt_bench_inline OBJECT... */
#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bench_median.h"
#include "dwarf_inline.h"
#include "dwarf_tailcall.h"
#include "elf_file.h"
#include "modules.h"

#define RUNS 5

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Looks up the middle of every function: how many calls were found. */
static unsigned every_function(gt_elf *e)
{
    gt_inlined got[GT_DWARF_INLINE_MAX_DEPTH];
    unsigned found = 0;
    for (size_t i = 0; i < e->nsyms; i++)
        found += gt_dwarf_inlined(e, e->syms[i].addr + e->syms[i].size / 2, got,
                                  GT_DWARF_INLINE_MAX_DEPTH);
    return found;
}

static int no_callee(const gt_inlined *callee, void *ctx)
{
    (void)callee, (void)ctx;
    return 0;
}

/* Looks a tail call up from the middle of every function. */
static void every_tail_call(gt_elf *e)
{
    for (size_t i = 0; i < e->nsyms; i++) {
        uint64_t at;
        gt_dwarf_tail_call(e, e->syms[i].addr + e->syms[i].size / 2 + 1, UINT64_MAX, no_callee,
                           NULL, &at);
    }
}

static int bench(const char *path)
{
    gt_module m = {.path = path, .cls = GT_MODULE_USER};
    gt_elf e = {0};
    if (gt_elf_open(&e, &m) != 0 || !e.nsyms) {
        fprintf(stderr, "gt_bench_inline: %s: not an object with symbols\n", path);
        return -1;
    }
    gt_inlined got[GT_DWARF_INLINE_MAX_DEPTH];
    double first[RUNS], every[RUNS], after[RUNS], tail[RUNS];
    size_t kept = 0;
    unsigned found = 0;
    for (int run = 0; run < RUNS; run++) {
        size_t before = mallinfo2().uordblks;
        double t0 = now_ms();
        gt_dwarf_inlined(&e, e.syms[0].addr + e.syms[0].size / 2, got, GT_DWARF_INLINE_MAX_DEPTH);
        double t1 = now_ms();
        found = every_function(&e);
        double t2 = now_ms();
        every_function(&e);
        double t3 = now_ms();
        kept = mallinfo2().uordblks - before;
        every_tail_call(&e);
        double t4 = now_ms();
        first[run] = t1 - t0;
        every[run] = t2 - t1;
        after[run] = (t3 - t2) * 1e3 / (double)e.nsyms;
        tail[run] = (t4 - t3) * 1e3 / (double)e.nsyms;
        gt_dwarf_inline_free(&e);
    }
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    char what[256];
    snprintf(what, sizeof what, "inlined calls in %s (.debug_info %.1f MiB, %zu functions)", base,
             (double)e.info_len / 1048576.0, e.nsyms);
    printf("| %s: the first lookup | %.2f ms | |\n", what, bench_median(first, RUNS));
    printf("| %s: a lookup in every function, the first time (%u inlined calls found) | %.1f ms "
           "| |\n",
           what, found, bench_median(every, RUNS));
    printf("| %s: a lookup after | %.2f µs | |\n", what, bench_median(after, RUNS));
    printf("| tail calls in %s: one looked up | %.2f µs | |\n", base, bench_median(tail, RUNS));
    printf("| %s: memory kept | %.2f MiB | |\n", what, (double)kept / 1048576.0);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: gt_bench_inline OBJECT...\n");
        return 2;
    }
    int failed = 0;
    for (int i = 1; i < argc; i++)
        failed |= bench(argv[i]) != 0;
    return failed;
}
