/* The site of a native call stack, named off the hot path.
 *
 * The stack holds the return addresses past the CUDA libraries and this
 * library (unwind.c). Its first frames may still be the CUDA toolchain's
 * code built into the program: with nvcc's default static runtime the
 * runtime itself is there, and every `kernel<<<...>>>` goes through a
 * launch stub nvcc generated (__device_stub__Z6kernelPf), called from the
 * host function named as the kernel (_Z6kernelPf) when that is not a tail
 * call. Those frames are passed over by their symbols' names; the first
 * frame left is the site: its function (demangled; a gfortran module
 * procedure, __solver_MOD_step, as solver::step, as gdb names it), and its
 * file and line
 * when the object has a line table. Without one, the site is the
 * function and the call's offset in the object.
 *
 * The site's frame is then marked (unwind.h), so that later walks through
 * it stop there. */
#include "native_site.h"

#include "callsite_table.h"
#include "dwarf_line.h"
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

int gt_native_glue(const char *sym)
{
    return strstr(sym, STUB_MARK) != NULL || strncmp(sym, "__cuda", 6) == 0 ||
           strncmp(sym, "libcudart_static_", 17) == 0 || strncmp(sym, "_ZN6cudart", 10) == 0 ||
           (strncmp(sym, "cuda", 4) == 0 && sym[4] >= 'A' && sym[4] <= 'Z');
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

void gt_native_site(const gt_stack *s, gt_site *out)
{
    memset(out, 0, sizeof *out);
    out->language = GT_SITE_NATIVE;
    if (!s->depth) return;
    unsigned pick = s->depth - 1; /* every frame glue: the outermost kept */
    int found = 0;
    const char *stub = NULL;
    for (unsigned i = 0; i < s->depth; i++) {
        const gt_module *m;
        gt_elf *e;
        const gt_elf_sym *sym = symbol_of(s->pc[i], &m, &e);
        if (m && m->cls != GT_MODULE_USER) continue;
        if (sym && (gt_native_glue(sym->name) || (stub && wrapper_of(stub, sym->name)))) {
            if (strstr(sym->name, STUB_MARK)) stub = sym->name;
            continue;
        }
        pick = i;
        found = 1;
        break;
    }
    uintptr_t pc = s->pc[pick];
    const gt_module *m;
    gt_elf *e;
    const gt_elf_sym *sym = symbol_of(pc, &m, &e);
    if (sym) out->function = function_name(sym->name);
    char file[4096];
    int line = 0;
    if (m && e && e->state > 0 &&
        gt_dwarf_line(e, pc - 1 - m->bias, file, sizeof file, &line) == 0) {
        out->file = intern(file);
        out->line = line;
        out->module = intern(m->path);
    } else if (m) {
        char module[4096 + 32];
        snprintf(module, sizeof module, "%s+0x%" PRIxPTR, m->path, pc - m->bias);
        out->module = intern(module);
    } else {
        char where[32];
        snprintf(where, sizeof where, "0x%" PRIxPTR, pc);
        out->module = intern(where);
    }
    if (found) gt_unwind_mark_user(pc);
}
