/* The Python call site of the calling thread, read from memory while the
 * thread holds the GIL.
 *
 * The frames are read as a debugger would (faulthandler does the same),
 * through the offsets of the interpreter's structures, and never by
 * calling into the interpreter: no Python object made, no reference count
 * or exception state touched, no lock taken. They are read only while the
 * calling thread holds the GIL: then no other thread can end the
 * interpreter and free the thread states and the frames' memory under the
 * walk. A thread that released the GIL around its CUDA call (the Python
 * CUDA stack does, around every driver call) gets the site taken when it
 * released it (python_gil.c).
 *
 * The interpreter is reached only through symbols the process already has,
 * looked up at run time: Py_GetVersion (which layout), Py_IsInitialized
 * and the finalizing flag's getter (never during start-up or the end,
 * when thread states are made and freed), PyGILState_GetThisThreadState
 * (the thread's own state: thread-specific data, no lock) and the state
 * attached now (_PyThreadState_UncheckedGet, 3.13's
 * PyThreadState_GetUnchecked: the thread holds the GIL when the two are
 * one), PyCode_Type and PyUnicode_Type and PyBytes_Type (each object read
 * is checked to be what it should). The layouts (python_layouts.h): 3.13's
 * own debug offsets (_PyRuntime's _Py_DebugOffsets, stable within the
 * minor version), and for 3.9 to 3.12 the offsets of their headers. The
 * tests hold the table against the headers of each version they can get
 * (tests/python/check_python_offsets.py) and read sites on each
 * (check_callsites_versions.py); docs/testing.md says which versions run.
 * Other versions, and free-threaded builds, get no Python sites.
 *
 * Code objects are classified once (python_paths.c) and cached by address
 * in a table whose entries carry a sequence number (seqlock): a reader
 * takes an entry only when its number was even and unchanged around the
 * read; a writer takes a try-lock, so no thread ever waits here. An
 * entry is trusted only while the code object at its address still has
 * the file, name and first line it was cached with. */
#include "python_walk.h"

#include "compiler.h"
#include "intercept.h"
#include "process.h"
#include "python_layouts.h"
#include "python_lines.h"
#include "python_paths.h"
#include "stack_table.h"
#include "strtab.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FRAMES_MAX 256u
#define TEXT_MAX 1024u /* bytes of a file name or a qualified name read */
#define FRAME_OWNED_BY_CSTACK 3u

typedef int (*int_fn)(void);
typedef void *(*ptr_fn)(void);

static struct {
    layout l;
    int_fn initialized, finalizing;
    ptr_fn this_thread_state, attached;
    const void *code_type, *str_type, *bytes_type;
} py;

static int present; /* written once under `once` */
static _Atomic int looked_up; /* set after `present`: the lookup's fast path */
static pthread_once_t once = PTHREAD_ONCE_INIT;
static const char *skip_extra;

void gt_python_set_skip(const char *extra)
{
    skip_extra = extra && extra[0] ? extra : NULL;
}

static void *symbol(const char *name)
{
    gt_dlsym_fn lookup = gt_libc_dlsym();
    return lookup ? lookup(RTLD_DEFAULT, name) : NULL;
}

static int layout_313(layout *l)
{
    const debug_offsets_313 *d = symbol("_PyRuntime");
    if (!d || memcmp(d->cookie, "xdebugpy", 8) != 0 || (d->version >> 16) != 0x030d ||
        d->free_threaded)
        return -1;
    *l = (layout){.minor = 13,
                  .lines = GT_PY_LOCATIONS,
                  .ts_frame = d->thread_state[4],
                  .frame_back = d->interpreter_frame[1],
                  .frame_code = d->interpreter_frame[2],
                  .frame_instr = d->interpreter_frame[3],
                  .frame_owner = d->interpreter_frame[5],
                  .code_filename = d->code_object[1],
                  .code_name = d->code_object[3],
                  .code_firstlineno = d->code_object[5],
                  .code_linetable = d->code_object[4],
                  .code_adaptive = d->code_object[9],
                  .ascii_data = 40,
                  .compact_data = 56};
    return 0;
}

static void look_up(void)
{
    const char *(*version)(void) = (const char *(*)(void))symbol("Py_GetVersion");
    py.initialized = (int_fn)symbol("Py_IsInitialized");
    py.finalizing = (int_fn)symbol("Py_IsFinalizing");
    if (!py.finalizing) py.finalizing = (int_fn)symbol("_Py_IsFinalizing");
    py.this_thread_state = (ptr_fn)symbol("PyGILState_GetThisThreadState");
    py.attached = (ptr_fn)symbol("PyThreadState_GetUnchecked");
    if (!py.attached) py.attached = (ptr_fn)symbol("_PyThreadState_UncheckedGet");
    py.code_type = symbol("PyCode_Type");
    py.str_type = symbol("PyUnicode_Type");
    py.bytes_type = symbol("PyBytes_Type");
    if (!version || !py.initialized || !py.finalizing || !py.this_thread_state || !py.attached ||
        !py.code_type || !py.str_type || !py.bytes_type)
        return;
    int major = 0, minor = 0;
    if (sscanf(version(), "%d.%d", &major, &minor) != 2 || major != 3) return;
    if (minor == 13) {
        present = layout_313(&py.l) == 0;
        return;
    }
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (known[i].minor == minor) {
            py.l = known[i];
            present = 1;
        }
}

int gt_python_present(void)
{
    if (GT_LIKELY(atomic_load_explicit(&looked_up, memory_order_acquire))) return present;
    pthread_once(&once, look_up);
    atomic_store_explicit(&looked_up, 1, memory_order_release);
    return present;
}

#define AT(p, off, type) (*(const type *)(const void *)((const char *)(p) + (off)))

static const void *type_of(const void *obj)
{
    return AT(obj, 8, const void *);
}

enum gt_py_thread gt_python_thread(void)
{
    if (!gt_python_present() || !py.initialized() || py.finalizing()) return GT_PY_NO_PYTHON;
    const void *ts = py.this_thread_state();
    if (!ts) return GT_PY_NO_PYTHON;
    /* Before 3.12 the state attached is the GIL holder's, whichever thread
     * that is; from 3.12 the calling thread's. Either way it is this
     * thread's own state only when this thread holds the GIL. */
    return py.attached() == ts ? GT_PY_HOLDS_GIL : GT_PY_RELEASED_GIL;
}

/* The innermost frame of thread state ts, NULL when it runs no Python
 * code. Only for the state of a thread that holds the GIL. */
static const void *current_frame(const void *ts)
{
    const void *f = AT(ts, py.l.ts_frame, const void *);
    if (f && py.l.through_cframe) f = AT(f, py.l.cframe_current, const void *);
    return f;
}

/* A str object's text as UTF-8 into buf (cut to cap - 1 bytes); its
 * length, 0 when it is not a compact, ready str. */
static size_t str_text(const void *obj, char *buf, size_t cap)
{
    if (!obj || type_of(obj) != py.str_type) return 0;
    uint32_t state = AT(obj, 32, uint32_t);
    unsigned kind = (state >> 2) & 7, compact = (state >> 5) & 1, ascii = (state >> 6) & 1;
    if (!compact || (py.l.has_ready_bit && !((state >> 7) & 1))) return 0;
    int64_t n = AT(obj, 16, int64_t);
    const uint8_t *data = (const uint8_t *)obj + (ascii ? py.l.ascii_data : py.l.compact_data);
    size_t len = 0;
    for (int64_t i = 0; i < n && len + 4 < cap; i++) {
        uint32_t c = kind == 1   ? data[i]
                     : kind == 2 ? ((const uint16_t *)(const void *)data)[i]
                                 : ((const uint32_t *)(const void *)data)[i];
        if (c < 0x80) {
            buf[len++] = (char)c;
        } else if (c < 0x800) {
            buf[len++] = (char)(0xc0 | c >> 6);
            buf[len++] = (char)(0x80 | (c & 0x3f));
        } else if (c < 0x10000) {
            buf[len++] = (char)(0xe0 | c >> 12);
            buf[len++] = (char)(0x80 | ((c >> 6) & 0x3f));
            buf[len++] = (char)(0x80 | (c & 0x3f));
        } else {
            buf[len++] = (char)(0xf0 | c >> 18);
            buf[len++] = (char)(0x80 | ((c >> 12) & 0x3f));
            buf[len++] = (char)(0x80 | ((c >> 6) & 0x3f));
            buf[len++] = (char)(0x80 | (c & 0x3f));
        }
    }
    buf[len] = '\0';
    return len;
}

static uint32_t intern(const char *s, size_t len)
{
    gt_strtab *t = gt_names();
    return t && len ? gt_strtab_intern(t, s, len) : 0;
}

/* What a code object is, cached by its address. */
typedef struct code_info {
    uintptr_t code, filename, name;
    int32_t firstlineno;
    uint32_t file, function, via; /* string ids; via: "package.function" of a skipped frame */
    uint8_t skip, stdlib;
    int64_t line_offset; /* the last offset whose line was worked out, -2 none */
    int32_t line;
} code_info;

#define CODE_CACHE_SLOTS 4096u

typedef struct code_slot {
    _Atomic uint32_t seq; /* odd while being written */
    _Atomic uintptr_t code, filename, name;
    _Atomic int32_t firstlineno, line;
    _Atomic uint32_t file, function, via;
    _Atomic uint8_t skip, stdlib;
    _Atomic int64_t line_offset;
} code_slot;

static code_slot code_cache[CODE_CACHE_SLOTS];
static atomic_flag code_writing = ATOMIC_FLAG_INIT;

void gt_python_fork_child(void)
{
    atomic_flag_clear_explicit(&code_writing, memory_order_relaxed);
}

static code_slot *slot_of(uintptr_t code)
{
    return &code_cache[((code >> 4) * 0x9e3779b97f4a7c15ull) >> 52];
}

/* The cached entry of the code object, if it is still the code object it
 * was cached for. */
static int cached(const code_info *want, code_info *out)
{
    code_slot *s = slot_of(want->code);
    uint32_t before = atomic_load_explicit(&s->seq, memory_order_acquire);
    if (before & 1) return 0;
    out->code = atomic_load_explicit(&s->code, memory_order_relaxed);
    out->filename = atomic_load_explicit(&s->filename, memory_order_relaxed);
    out->name = atomic_load_explicit(&s->name, memory_order_relaxed);
    out->firstlineno = atomic_load_explicit(&s->firstlineno, memory_order_relaxed);
    out->file = atomic_load_explicit(&s->file, memory_order_relaxed);
    out->function = atomic_load_explicit(&s->function, memory_order_relaxed);
    out->via = atomic_load_explicit(&s->via, memory_order_relaxed);
    out->skip = atomic_load_explicit(&s->skip, memory_order_relaxed);
    out->stdlib = atomic_load_explicit(&s->stdlib, memory_order_relaxed);
    out->line_offset = atomic_load_explicit(&s->line_offset, memory_order_relaxed);
    out->line = atomic_load_explicit(&s->line, memory_order_relaxed);
    atomic_thread_fence(memory_order_acquire);
    if (atomic_load_explicit(&s->seq, memory_order_relaxed) != before) return 0;
    return out->code == want->code && out->filename == want->filename && out->name == want->name &&
           out->firstlineno == want->firstlineno;
}

static void cache(const code_info *c)
{
    if (atomic_flag_test_and_set_explicit(&code_writing, memory_order_acquire)) return;
    code_slot *s = slot_of(c->code);
    uint32_t seq = atomic_load_explicit(&s->seq, memory_order_relaxed);
    atomic_store_explicit(&s->seq, seq + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&s->code, c->code, memory_order_relaxed);
    atomic_store_explicit(&s->filename, c->filename, memory_order_relaxed);
    atomic_store_explicit(&s->name, c->name, memory_order_relaxed);
    atomic_store_explicit(&s->firstlineno, c->firstlineno, memory_order_relaxed);
    atomic_store_explicit(&s->file, c->file, memory_order_relaxed);
    atomic_store_explicit(&s->function, c->function, memory_order_relaxed);
    atomic_store_explicit(&s->via, c->via, memory_order_relaxed);
    atomic_store_explicit(&s->skip, c->skip, memory_order_relaxed);
    atomic_store_explicit(&s->stdlib, c->stdlib, memory_order_relaxed);
    atomic_store_explicit(&s->line_offset, c->line_offset, memory_order_relaxed);
    atomic_store_explicit(&s->line, c->line, memory_order_relaxed);
    atomic_store_explicit(&s->seq, seq + 2, memory_order_release);
    atomic_flag_clear_explicit(&code_writing, memory_order_release);
}

/* Reads and classifies a code object not in the cache. */
static void classify(code_info *c)
{
    char path[TEXT_MAX], name[TEXT_MAX], package[256], via[TEXT_MAX + 256];
    size_t plen = str_text((const void *)c->filename, path, sizeof path);
    size_t nlen = str_text((const void *)c->name, name, sizeof name);
    c->skip = (uint8_t)gt_python_path_skipped(path, plen, skip_extra, package, sizeof package);
    c->stdlib = c->skip && !package[0];
    c->file = intern(path, plen);
    c->function = intern(name, nlen);
    c->via = 0;
    /* A wrapper a decorator made (its qualified name has "<locals>", as
     * numba's require_context) is not what the user called: the function
     * it wraps names the call. */
    if (c->skip && !strstr(name, "<locals>")) {
        int n = snprintf(via, sizeof via, "%s%s%s", package, package[0] ? "." : "", name);
        c->via = n > 0 ? intern(via, (size_t)n < sizeof via ? (size_t)n : sizeof via - 1) : 0;
    }
    c->line_offset = -2;
}

static int code_of(const void *code, code_info *c)
{
    if (!code || type_of(code) != py.code_type) return 0;
    code_info want = {.code = (uintptr_t)code,
                      .filename = AT(code, py.l.code_filename, uintptr_t),
                      .name = AT(code, py.l.code_name, uintptr_t),
                      .firstlineno = AT(code, py.l.code_firstlineno, int32_t)};
    if (cached(&want, c)) return 1;
    *c = want;
    classify(c);
    cache(c);
    return 1;
}

static int line_of(const void *code, code_info *c, int64_t offset)
{
    if (c->line_offset == offset) return c->line;
    const void *table = AT(code, py.l.code_linetable, const void *);
    int line = c->firstlineno;
    if (table && type_of(table) == py.bytes_type) {
        int64_t len = AT(table, 16, int64_t);
        line = gt_python_line(py.l.lines, (const uint8_t *)table + 32, len > 0 ? (size_t)len : 0,
                              c->firstlineno, offset);
    }
    c->line_offset = offset;
    c->line = line;
    cache(c);
    return line;
}

/* One frame: its code object and the byte offset of its instruction. */
typedef struct frame {
    const void *code;
    int64_t offset;
} frame;

static const void *frame_read(const void *f, frame *out)
{
    const layout *l = &py.l;
    out->code = AT(f, l->frame_code, const void *);
    if (l->frame_objects) {
        int lasti = AT(f, l->frame_lasti, int);
        out->offset = l->minor == 9 ? lasti : (int64_t)lasti * 2;
    } else {
        if (AT(f, l->frame_owner, uint8_t) == FRAME_OWNED_BY_CSTACK) out->code = NULL;
        const char *instr = AT(f, l->frame_instr, const char *);
        out->offset = out->code ? instr - ((const char *)out->code + l->code_adaptive) : -1;
    }
    return AT(f, l->frame_back, const void *);
}

static void fill(gt_stack *s, const void *code, code_info *c, int64_t offset, uint32_t via)
{
    s->lang = GT_STACK_PYTHON;
    s->file = c->file;
    s->function = c->function;
    s->line = line_of(code, c, offset);
    s->via = via;
}

/* The frames a walk passed, from the innermost to the user's: when the
 * next walk of the thread meets the same frames running the same code
 * objects (each still with its file and name) at the same instructions, its
 * site is the same. A loop releasing the GIL from one line (python_gil.c)
 * is then a few loads a call. */
#define MEMO_FRAMES 4u

typedef struct memo_frame {
    const void *frame, *code, *filename, *name;
    int64_t offset;
} memo_frame;

static __thread struct {
    memo_frame f[MEMO_FRAMES];
    uint32_t n, id;
} memo __attribute__((tls_model("initial-exec")));

static memo_frame memo_of(const void *f, const frame *fr)
{
    memo_frame m = {.frame = f, .code = fr->code, .offset = fr->offset};
    if (fr->code) {
        m.filename = AT(fr->code, py.l.code_filename, const void *);
        m.name = AT(fr->code, py.l.code_name, const void *);
    }
    return m;
}

static int memo_holds(const void *f)
{
    for (uint32_t i = 0; i < memo.n; i++) {
        if (!f) return 0;
        frame fr;
        const void *back = frame_read(f, &fr);
        memo_frame m = memo_of(f, &fr);
        const memo_frame *was = &memo.f[i];
        if (m.frame != was->frame || m.code != was->code || m.offset != was->offset ||
            m.filename != was->filename || m.name != was->name)
            return 0;
        f = back;
    }
    return memo.n != 0;
}

/* The walk from frame f; *passed: the frames passed to the user's, or
 * MEMO_FRAMES + 1 when the site is not within the first MEMO_FRAMES or is
 * not the user's. */
static int walk(const void *f, gt_stack *s, memo_frame *passed, uint32_t *n_passed)
{
    uint32_t via = 0;
    frame fallback = {NULL, 0};
    code_info fallback_info, c;
    frame innermost = {NULL, 0};
    code_info innermost_info;
    *n_passed = MEMO_FRAMES + 1;
    for (unsigned n = 0; f && n < FRAMES_MAX; n++) {
        frame fr;
        const void *here = f;
        f = frame_read(f, &fr);
        memo_frame m = memo_of(here, &fr);
        if (n < MEMO_FRAMES) passed[n] = m;
        if (!code_of(fr.code, &c)) continue;
        if (!c.skip) {
            fill(s, fr.code, &c, fr.offset, via);
            if (n < MEMO_FRAMES) *n_passed = n + 1;
            return 1;
        }
        if (!innermost.code) innermost = fr, innermost_info = c;
        if (!fallback.code && !c.stdlib) fallback = fr, fallback_info = c;
        if (c.via) via = c.via;
    }
    /* No frame is the user's: the innermost library frame, else the
     * innermost frame. */
    if (fallback.code) {
        fill(s, fallback.code, &fallback_info, fallback.offset, 0);
        return 1;
    }
    if (innermost.code) {
        fill(s, innermost.code, &innermost_info, innermost.offset, 0);
        return 1;
    }
    return 0;
}

static uint32_t site_id(const void *ts)
{
    const void *f = current_frame(ts);
    if (!f) return 0;
    if (memo_holds(f)) return memo.id;
    gt_stack s;
    memset(&s, 0, sizeof s);
    memo_frame passed[MEMO_FRAMES];
    uint32_t n = 0;
    if (!walk(f, &s, passed, &n)) return 0;
    uint32_t id = gt_stack_id(&s);
    memo.n = 0;
    if (id && id != GT_STACK_OVERFLOW && n <= MEMO_FRAMES) {
        memcpy(memo.f, passed, n * sizeof *passed);
        memo.id = id;
        memo.n = n;
    }
    return id;
}

uint32_t gt_python_site_id(void)
{
    return gt_python_thread() == GT_PY_HOLDS_GIL ? site_id(py.this_thread_state()) : 0;
}

const void *gt_python_attached(void)
{
    return gt_python_present() ? py.attached() : NULL;
}

uint32_t gt_python_site_id_releasing(void)
{
    if (!gt_python_present() || !py.initialized() || py.finalizing()) return 0;
    const void *ts = py.attached();
    return ts ? site_id(ts) : 0;
}
