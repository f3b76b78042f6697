/* The native call stack on the hot path.
 *
 * A frame is stepped to its caller by the rule of its address (cfi.h):
 * the canonical frame address from rsp or rbp plus an offset, the return
 * address just below it, rbp's saved slot if any. Rules are cached by
 * address in a lock-free map (ptrmap.h), packed in 64 bits with the
 * class of the object the address is in (the user's, this library's, a
 * CUDA library's) and the object's index (modules.h); a return address
 * is looked up at the address of its call (minus one), as unwinders do.
 * The first walk through an address works its rule out from the object's
 * .eh_frame, which costs a few microseconds and the loader's lock once.
 *
 * Every read is of the calling thread's own stack, between its stack
 * pointer and the top of its stack (found once per thread): a rule that
 * leads elsewhere ends the walk. */
#include "unwind.h"

#include "cfi.h"
#include "modules.h"
#include "ptrmap.h"
#include "stack_table.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#define R_PRESENT 0x1ull
#define R_KIND_SHIFT 1
#define R_CFA_RBP 0x8ull
#define R_CLASS_SHIFT 4
#define R_RBP_SAVED 0x40ull
#define R_USER_OWN 0x80ull
#define R_CFA_SHIFT 8
#define R_CFA_MAX 0xffffffu
#define R_RBP_SHIFT 32
#define R_MODULE_SHIFT 48

GT_PTRMAP_DEFINE(rules, 15); /* lookup address -> packed rule */

static uint64_t pack(const gt_cfi_rule *c, unsigned cls, uint32_t module)
{
    uint64_t kind = c->kind;
    if (kind == GT_CFI_STEP && ((uint32_t)c->cfa_off > R_CFA_MAX ||
                                (c->rbp_saved && (c->rbp_off < -0x7fff8 || c->rbp_off % 8))))
        kind = GT_CFI_UNKNOWN;
    uint64_t r = R_PRESENT | kind << R_KIND_SHIFT | (uint64_t)cls << R_CLASS_SHIFT |
                 (uint64_t)module << R_MODULE_SHIFT;
    if (kind != GT_CFI_STEP) return r;
    r |= (uint64_t)(uint32_t)c->cfa_off << R_CFA_SHIFT;
    if (c->cfa_rbp) r |= R_CFA_RBP;
    if (c->rbp_saved) r |= R_RBP_SAVED | (uint64_t)(uint16_t)(-c->rbp_off / 8) << R_RBP_SHIFT;
    return r;
}

static unsigned rule_kind(uint64_t r)
{
    return (unsigned)(r >> R_KIND_SHIFT) & 3u;
}

static unsigned rule_class(uint64_t r)
{
    return (unsigned)(r >> R_CLASS_SHIFT) & 3u;
}

/* The rule of an address not seen before, cached; 0 when no loaded
 * object holds it. A module another thread was registering at that moment
 * comes without its index: the rule serves this walk but is not cached, or
 * the address would never name its module (its site would stay a bare
 * address) when several threads first meet the program's code at once. */
static __attribute__((noinline)) uint64_t rule_slow(uintptr_t at)
{
    uint32_t index;
    gt_module scratch;
    const gt_module *m = gt_module_find(at, &index, &scratch);
    if (!m) return 0;
    gt_cfi_rule c = gt_cfi_find(m->eh_frame_hdr, at);
    uint64_t r = pack(&c, m->cls, index);
    if (index != GT_MODULE_NONE || gt_modules_full()) gt_ptrmap_put(&rules, at, r);
    return r;
}

static inline uint64_t rule_of(uintptr_t at)
{
    uint64_t r = gt_ptrmap_get(&rules, at);
    return r ? r : rule_slow(at);
}

static __thread uintptr_t stack_lo __attribute__((tls_model("initial-exec")));
static __thread uintptr_t stack_hi __attribute__((tls_model("initial-exec")));

/* The top of the thread's stack above sp; 0 when sp is not on the stack
 * the thread was given (a coroutine's, a signal stack): no walk there. */
static uintptr_t stack_top(uintptr_t sp)
{
    if (sp >= stack_lo && sp < stack_hi) return stack_hi;
    pthread_attr_t a;
    void *addr;
    size_t size;
    if (pthread_getattr_np(pthread_self(), &a) != 0) return 0;
    int ok = pthread_attr_getstack(&a, &addr, &size) == 0;
    pthread_attr_destroy(&a);
    if (!ok) return 0;
    stack_lo = (uintptr_t)addr;
    stack_hi = (uintptr_t)addr + size;
    return sp >= stack_lo && sp < stack_hi ? stack_hi : 0;
}

#if defined(__x86_64__)
void gt_unwind_native(gt_stack *s)
{
    uintptr_t pc, sp, bp;
    __asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
                     : "=r"(pc), "=r"(sp), "=r"(bp));
    s->lang = GT_STACK_NATIVE;
    s->depth = 0;
    uintptr_t top = stack_top(sp);
    if (!top) return;
    uintptr_t at = pc; /* the first frame's address is exact; a caller's is its call's */
    for (unsigned n = 0; n < GT_UNWIND_MAX_FRAMES; n++) {
        uint64_t r = rule_of(at);
        if (!r) return;
        if (s->depth || rule_class(r) == GT_MODULE_USER) {
            s->pc[s->depth++] = pc;
            if (s->depth == GT_STACK_FRAMES || (r & R_USER_OWN)) return;
        }
        if (rule_kind(r) != GT_CFI_STEP) return;
        uintptr_t cfa = ((r & R_CFA_RBP) ? bp : sp) + (uintptr_t)((r >> R_CFA_SHIFT) & R_CFA_MAX);
        if (cfa <= sp || cfa > top || (cfa & 7u)) return;
        uintptr_t ra = *(const uintptr_t *)(cfa - 8);
        if (r & R_RBP_SAVED) {
            uintptr_t slot = cfa - 8u * (uintptr_t)((r >> R_RBP_SHIFT) & 0xffffu);
            if (slot < sp) return;
            bp = *(const uintptr_t *)slot;
        }
        if (ra < 2) return;
        sp = cfa;
        pc = ra;
        at = ra - 1;
    }
}
#else
void gt_unwind_native(gt_stack *s)
{
    s->lang = GT_STACK_NATIVE;
    s->depth = 0;
}
#endif

void gt_unwind_mark_user(uintptr_t pc)
{
    if (pc < 2) return;
    uint64_t r = rule_of(pc - 1);
    if (r && !(r & R_USER_OWN)) gt_ptrmap_put(&rules, pc - 1, r | R_USER_OWN);
}

uint32_t gt_unwind_module_of(uintptr_t pc)
{
    uint64_t r = pc < 2 ? 0 : rule_of(pc - 1);
    return r ? (uint32_t)(r >> R_MODULE_SHIFT) & 0x7ffu : GT_MODULE_NONE;
}
