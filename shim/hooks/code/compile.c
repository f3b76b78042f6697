/* Recording compiler library calls (compile.h). */
#include "compile.h"
#include "handles.h"

#include <stdio.h>

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
    if (!info->name && in->name) info->name = gt_compile_intern(in->name);
    info->count++;
    info->bytes += in->bytes;
    return 1;
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
}

void gt_compile_forget(gt_handle_table *t, const void *handle)
{
    gt_handle_info info;
    gt_handle_take(t, (uint64_t)(uintptr_t)handle, &info);
}
