/* The site of a native call stack, named off the hot path.
 *
 * The stack holds the return addresses past the CUDA libraries and this
 * library (unwind.c). Its first frames may still be the CUDA toolchain's
 * code built into the program: with nvcc's default static runtime the
 * runtime itself is there, and every `kernel<<<...>>>` goes through a
 * launch stub nvcc generated (__device_stub__Z6kernelPf), called from the
 * host function named as the kernel (_Z6kernelPf) when that is not a tail
 * call. Those frames are passed over by their symbols' names.
 *
 * At -O2 that glue is inlined into the user's function: the return
 * address then lies in the inlined code, whose line is the kernel's
 * declaration (or a CUDA header's), not the user's launch. So a frame's
 * inlined calls (dwarf_inline.c) are passed over the same way, innermost
 * first, and the first function left is the site: the code at the return
 * address when that is the user's (the line table's line), else the line
 * where the glue was inlined. Functions are named demangled (a gfortran
 * module procedure, __solver_MOD_step, as solver::step, as gdb names it).
 * Without a line table the site is the function and the call's offset in
 * the object.
 *
 * A function whose last statement launches may jump to the launch code
 * (a tail call) and leave no frame: the first frame left is then its
 * caller's, at the call of that function. Where the debug information
 * describes the calls (dwarf_tailcall.c), the site is the tail call in
 * the function called there, when it has exactly one that goes into the
 * glue passed over.
 *
 * The site's frame is then marked (unwind.h), so that later walks through
 * it stop there. */
#include "native_site.h"

#include "callsite_table.h"
#include "dwarf_inline.h"
#include "dwarf_line.h"
#include "dwarf_tailcall.h"
#include "elf_file.h"
#include "intercept.h"
#include "modules.h"
#include "process.h"
#include "stack_table.h"
#include "strtab.h"
#include "unwind.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define STUB_MARK "__device_stub__"

/* The objects' files, by module index; the draining thread's alone. */
static gt_elf files[GT_MODULES_MAX];

/* A mangled function's own name: _Z10cudaMallocIfE9cudaErrorPPT_m names
 * cudaMalloc (cuda_runtime.h's template), _ZL25__cudaLaunchKernel_helper...
 * __cudaLaunchKernel_helper. */
static const char *own_name(const char *sym)
{
    if (strncmp(sym, "_Z", 2) != 0) return sym;
    const char *p = sym + 2 + (sym[2] == 'L');
    if (*p < '1' || *p > '9') return sym;
    while (*p >= '0' && *p <= '9')
        p++;
    return p;
}

int gt_native_glue(const char *sym)
{
    const char *own = own_name(sym);
    return strstr(sym, STUB_MARK) != NULL || strncmp(own, "__cuda", 6) == 0 ||
           strncmp(sym, "libcudart_static_", 17) == 0 || strncmp(sym, "_ZN6cudart", 10) == 0 ||
           (strncmp(own, "cuda", 4) == 0 && own[4] >= 'A' && own[4] <= 'Z');
}

static uint32_t intern(const char *s)
{
    gt_strtab *t = gt_names();
    return t && s[0] ? gt_strtab_intern(t, s, strlen(s)) : 0;
}

/* A frame's function symbol (mangled), NULL when not known. */
static const gt_elf_sym *symbol_of(uintptr_t pc, const gt_module **m, gt_elf **e)
{
    uint32_t index = gt_unwind_module_of(pc);
    *m = gt_module_get(index);
    *e = *m ? &files[index] : NULL;
    if (!*m || gt_elf_open(*e, *m) != 0) return NULL;
    return gt_elf_function(*e, pc - 1 - (*m)->bias);
}

/* The host function nvcc names as the kernel, which calls the stub: the
 * stub's name with the mark taken out (__device_stub__Z6kernelPf, in
 * _Z27__device_stub__Z6kernelPfPf, is called from _Z6kernelPf). */
static int wrapper_of(const char *stub, const char *sym)
{
    const char *at = strstr(stub, STUB_MARK);
    if (!at) return 0;
    const char *inner = at + strlen(STUB_MARK); /* "Z6kernelPfPf": "Z" + the kernel's name */
    size_t len = strlen(sym);
    return sym[0] == '_' && len > 1 && strncmp(inner, sym + 1, len - 1) == 0;
}

/* The function's name as the report shows it: C++ names demangled, a
 * gfortran module procedure as module::procedure. */
static uint32_t function_name(const char *sym)
{
    const char *mod = strstr(sym, "_MOD_");
    if (strncmp(sym, "__", 2) == 0 && mod && mod > sym + 2 && mod[5]) {
        char name[512];
        int n = snprintf(name, sizeof name, "%.*s::%s", (int)(mod - sym - 2), sym + 2, mod + 5);
        if (n > 0 && (size_t)n < sizeof name) return intern(name);
    }
    return gt_kernel_name_of_mangled(sym);
}

/* Whether a function is glue: by its names (a symbol's, or an inlined
 * function's mangled and plain names), or as the host function of the
 * last stub met (*stub, which a stub sets). */
static int glue(const char *const *names, unsigned n, const char **stub)
{
    for (unsigned i = 0; i < n; i++) {
        const char *name = names[i];
        if (!name || !name[0] || !(gt_native_glue(name) || (*stub && wrapper_of(*stub, name))))
            continue;
        if (strstr(name, STUB_MARK)) *stub = name;
        return 1;
    }
    return 0;
}

/* Where the site is in its frame: the code at its return address (level
 * 0), or the call of inl[level - 1], which was inlined there. */
typedef struct place {
    uintptr_t pc;
    const gt_module *m;
    gt_elf *e;
    const gt_elf_sym *sym;
    const gt_inlined *inl;
    unsigned level, ninl;
} place;

static int file_line(const place *p, char *file, size_t cap, int *line)
{
    if (!p->m || !p->e || p->e->state <= 0) return -1;
    if (p->level) {
        const gt_inlined *call = &p->inl[p->level - 1];
        if (call->call_line > 0 &&
            gt_dwarf_line_file(p->e, call->lines, call->call_file, file, cap) == 0) {
            *line = call->call_line;
            return 0;
        }
    }
    return gt_dwarf_line(p->e, p->pc - 1 - p->m->bias, file, cap, line);
}

static void name_place(const place *p, gt_site *out)
{
    /* An inlined function the debug information does not name is named as
     * the function it was inlined into. */
    const gt_inlined *f = p->level < p->ninl ? &p->inl[p->level] : NULL;
    const char *name = !f ? "" : f->linkage[0] ? f->linkage : f->name;
    if (!name[0] && p->sym) name = p->sym->name;
    if (name[0]) out->function = function_name(name);
    char file[4096];
    int line = 0;
    if (file_line(p, file, sizeof file, &line) == 0) {
        out->file = intern(file);
        out->line = line;
        out->module = intern(p->m->path);
    } else if (p->m) {
        char module[4096 + 32];
        snprintf(module, sizeof module, "%s+0x%" PRIxPTR, p->m->path, p->pc - p->m->bias);
        out->module = intern(module);
    } else {
        char where[32];
        snprintf(where, sizeof where, "0x%" PRIxPTR, p->pc);
        out->module = intern(where);
    }
}

/* What a tail call must lead to: glue, or the frame passed over last. */
typedef struct leads_ctx {
    const char *stub, *inner;
} leads_ctx;

static int leads_inside(const gt_inlined *callee, void *ctx)
{
    leads_ctx *c = ctx;
    const char *names[] = {callee->linkage, callee->name};
    for (unsigned i = 0; c->inner && i < 2; i++)
        if (names[i][0] && strcmp(names[i], c->inner) == 0) return 1;
    return glue(names, 2, &c->stub);
}

/* When the site frame's call was to a function that tail-called the glue
 * passed over (inner: the frame inside, 0 when none), the site moves to
 * that tail call. */
static void through_tail_call(place *p, uintptr_t inner, const char *stub)
{
    if (!p->m || !p->e || p->e->state <= 0) return;
    leads_ctx c = {stub, NULL};
    uint64_t in = UINT64_MAX;
    if (inner) {
        const gt_module *m;
        gt_elf *e;
        const gt_elf_sym *sym = symbol_of(inner, &m, &e);
        if (sym) c.inner = sym->name;
        if (m == p->m) in = inner - 1 - m->bias;
    }
    uint64_t at;
    if (gt_dwarf_tail_call(p->e, p->pc - p->m->bias, in, leads_inside, &c, &at) != 1) return;
    /* A place's code is at the byte before its pc, as a return address's. */
    p->pc = (uintptr_t)at + 1 + p->m->bias;
    p->sym = gt_elf_function(p->e, at);
}

void gt_native_site(const gt_stack *s, gt_site *out)
{
    memset(out, 0, sizeof *out);
    out->language = GT_SITE_NATIVE;
    if (!s->depth) return;
    const char *stub = NULL;
    gt_inlined inl[GT_DWARF_INLINE_MAX_DEPTH];
    place p = {.inl = inl};
    for (unsigned i = 0; i < s->depth; i++) {
        p.pc = s->pc[i];
        p.sym = symbol_of(p.pc, &p.m, &p.e);
        if (p.m && p.m->cls != GT_MODULE_USER) continue;
        if (p.sym && glue(&p.sym->name, 1, &stub)) continue;
        through_tail_call(&p, i ? s->pc[i - 1] : 0, stub);
        p.ninl = p.e && p.e->state > 0
                     ? gt_dwarf_inlined(p.e, p.pc - 1 - p.m->bias, inl, GT_DWARF_INLINE_MAX_DEPTH)
                     : 0;
        for (p.level = 0; p.level < p.ninl; p.level++) {
            const char *names[] = {inl[p.level].linkage, inl[p.level].name};
            if (!glue(names, 2, &stub)) break;
        }
        name_place(&p, out);
        gt_unwind_mark_user(s->pc[i]);
        return;
    }
    /* Every frame glue: the outermost kept, at its return address. */
    p = (place){.pc = s->pc[s->depth - 1], .inl = inl};
    p.sym = symbol_of(p.pc, &p.m, &p.e);
    name_place(&p, out);
}
