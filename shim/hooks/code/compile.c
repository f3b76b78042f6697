/* Recording compiler library calls (compile.h). */
#include "compile.h"
#include "handles.h"
#include "intercept.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void gt_compile_init(gt_compile_call *c, gt_hook *h, enum gt_event_kind kind)
{
    c->saved_errno = errno;
    c->hook = h;
    c->kind = (uint8_t)kind;
    c->name = 0;
    c->bytes = 0;
    c->inputs = 0;
    c->options = 0;
    c->first = 0;
    c->functions = 0;
}

void gt_compile_before(gt_compile_call *c)
{
    errno = c->saved_errno;
    c->t0 = gt_clock_ticks();
}

uint32_t gt_compile_intern(const char *s)
{
    gt_strtab *t = gt_names();
    return t && s ? gt_strtab_intern(t, s, strlen(s)) : 0;
}

const char *gt_compile_status_name(const void *real, const char *fn, const char *type, int status,
                                   char *buf, size_t size)
{
    typedef const char *(*status_string_fn)(int);
    const char *object;
    status_string_fn name_of = (status_string_fn)gt_object_symbol(real, fn, &object);
    const char *name = name_of ? name_of(status) : NULL;
    if (name) return name;
    snprintf(buf, size, "%s(%d)", type, status);
    return buf;
}

void gt_compile_after(const gt_compile_call *c, uint64_t t1, int status, gt_status_namer namer,
                      const void *real)
{
    /* The calls around a compilation count in `api` only. */
    if (c->kind == GT_EV_API && !(gt_hook_mode(c->hook) & GT_HOOK_API)) return;
    uint32_t error = 0;
    if (status != 0) {
        char buf[48];
        int entered = gt_guard_enter();
        error = gt_compile_intern(namer(status, real, buf, sizeof buf));
        if (entered) gt_guard_leave();
    }
    gt_event *ev = gt_ev_begin();
    if (!ev) return;
    ev->kind = c->kind;
    ev->device = GT_NO_DEVICE;
    ev->api = gt_hook_api(c->hook);
    ev->name = c->name;
    ev->result = status;
    ev->error = error;
    ev->host_start = c->t0;
    ev->host_end = t1;
    ev->bytes = c->bytes;
    ev->u.compile.inputs = c->inputs;
    ev->u.compile.options = c->options;
    ev->u.compile.first = c->first;
    ev->u.compile.functions = c->functions;
    if (!gt_capture_open()) ev->flags |= GT_EVF_UNCAPTURED;
    gt_ev_commit(ev);
}

typedef struct input_added {
    uint64_t bytes;
    const char *name;
} input_added;

static int add_input(gt_handle_info *info, void *ctx)
{
    const input_added *in = ctx;
    if (!info->name && in->name && in->name[0]) info->name = gt_compile_intern(in->name);
    info->count++;
    info->bytes += in->bytes;
    return 1;
}

#define FUNCTIONS_MAX 64u         /* functions listed per input */
#define FUNCTIONS_TEXT_MAX 16384u /* bytes of a compilation's list */

/* The functions an input defines, as gt_compile_add_code gathers them:
 * the first one's string id, the others' names a line each. */
typedef struct code_names {
    uint32_t first;
    uint32_t count;
    size_t len;
    char *text; /* FUNCTIONS_TEXT_MAX bytes */
} code_names;

static void append_line(char *text, size_t *len, const char *s, size_t n)
{
    if (!n || *len + n + 2 > FUNCTIONS_TEXT_MAX) return;
    if (*len) text[(*len)++] = '\n';
    memcpy(text + *len, s, n);
    *len += n;
}

static bool note_function(void *ctx, const char *mangled, size_t len, bool entry)
{
    (void)entry;
    code_names *n = ctx;
    char buf[1024];
    if (len >= sizeof buf) len = sizeof buf - 1;
    memcpy(buf, mangled, len);
    buf[len] = 0;
    uint32_t id = gt_kernel_name_of_mangled(buf);
    if (!n->first) {
        n->first = id;
    } else if (n->count < FUNCTIONS_MAX) {
        const char *text = gt_strtab_get(gt_names(), id);
        append_line(n->text, &n->len, text, strlen(text));
        n->count++;
    }
    return true;
}

/* The compilation's name (when it has none yet) and its list of
 * functions, which an input's first function joins when the compilation
 * has its name already. */
static int add_code(gt_handle_info *info, void *ctx)
{
    const code_names *n = ctx;
    char *all = malloc(FUNCTIONS_TEXT_MAX);
    if (!all) return 1;
    size_t len = 0;
    const char *before = info->other ? gt_strtab_get(gt_names(), (uint32_t)info->other) : "";
    append_line(all, &len, before, strlen(before));
    if (info->name) {
        const char *first = gt_strtab_get(gt_names(), n->first);
        append_line(all, &len, first, strlen(first));
    } else {
        info->name = n->first;
    }
    append_line(all, &len, n->text, n->len);
    if (len) info->other = gt_strtab_intern(gt_names(), all, len);
    free(all);
    return 1;
}

void gt_compile_add_code(gt_handle_table *t, const void *handle, const void *code, uint64_t bytes,
                         const char *name)
{
    gt_compile_add_input(t, handle, bytes, name);
    int saved = errno;
    code_names names = {.text = malloc(FUNCTIONS_TEXT_MAX)};
    if (names.text) gt_code_functions(code, bytes, note_function, &names);
    if (names.first) gt_handle_edit(t, (uint64_t)(uintptr_t)handle, 0, add_code, &names);
    free(names.text);
    errno = saved;
}

void gt_compile_add_input(gt_handle_table *t, const void *handle, uint64_t bytes, const char *name)
{
    int saved = errno;
    input_added in = {bytes, name};
    gt_handle_edit(t, (uint64_t)(uintptr_t)handle, 1, add_input, &in);
    errno = saved;
}

/* gt_handle_info.flags: a record of the handle's compilation was made. */
#define COMPILE_SEEN 0x1u

static int mark_seen(gt_handle_info *info, void *ctx)
{
    *(gt_handle_info *)ctx = *info;
    info->flags |= COMPILE_SEEN;
    return 1;
}

void gt_compile_describe(gt_compile_call *c, gt_handle_table *t, const void *handle)
{
    gt_handle_info info = {0};
    /* A handle the table could not keep counts as new each time. */
    int known = gt_handle_edit(t, (uint64_t)(uintptr_t)handle, 0, mark_seen, &info);
    c->first = !known || !(info.flags & COMPILE_SEEN);
    c->name = info.name;
    c->bytes = info.bytes;
    c->inputs = info.count;
    c->options = info.options;
    c->functions = (uint32_t)info.other;
}

void gt_compile_forget(gt_handle_table *t, const void *handle)
{
    gt_handle_info info;
    gt_handle_take(t, (uint64_t)(uintptr_t)handle, &info);
}
