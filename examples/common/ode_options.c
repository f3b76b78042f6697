/* Command-line parsing for the batch ODE examples. One table drives both the
 * parser and --help, so they cannot disagree. Errors are one line: the
 * caller prints it and exits with status 2. */
#define _GNU_SOURCE /* program_invocation_short_name */
#include "ode_options.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

enum option_kind { OPT_INT, OPT_DOUBLE, OPT_SEED, OPT_MODEL, OPT_TEXT, OPT_FLAG, OPT_HELP };

struct option_spec {
    const char *long_name;
    char short_name; /* 0: none */
    enum option_kind kind;
    size_t offset; /* of the field in struct ode_options */
    double lo, hi; /* accepted range of OPT_INT and OPT_DOUBLE */
    bool nvrtc_only;
    const char *arg_name;
    const char *help;
};

#define FIELD(f) offsetof(struct ode_options, f)

static const struct option_spec specs[] = {
    {"systems", 'n', OPT_INT, FIELD(systems), 1, 1 << 25, false, "N",
     "independent systems to integrate (1048576)"},
    {"steps", 's', OPT_INT, FIELD(steps), 1, 10000000, false, "N", "RK4 steps per system (1000)"},
    {"dt", 0, OPT_DOUBLE, FIELD(dt), 1e-9, 1.0, false, "H", "step size (0.01)"},
    {"chunks", 'c', OPT_INT, FIELD(chunks), 1, 4096, false, "N",
     "pieces the batch is split into, each copied and integrated on its own (8)"},
    {"streams", 'S', OPT_INT, FIELD(streams), 1, 64, false, "N",
     "CUDA streams the chunks are spread over (4)"},
    {"model", 'm', OPT_MODEL, FIELD(model), 0, 0, false, "NAME",
     "oscillator, vanderpol or lotka-volterra (oscillator)"},
    {"check", 0, OPT_INT, FIELD(check), 0, 4096, false, "N",
     "systems compared with the CPU reference, 0 for none (64)"},
    {"seed", 0, OPT_SEED, FIELD(seed), 0, 0, false, "N",
     "seed of the initial states and parameters (1)"},
    {"pin-all", 0, OPT_FLAG, FIELD(pin_all), 0, 0, false, NULL,
     "copy status codes through pinned memory too (default: straight into pageable memory)"},
    {"du", 0, OPT_TEXT, FIELD(du), 0, 0, true, "EXPR",
     "du/dt as a C expression in t, u, v, a, b, c, d (the model's)"},
    {"dv", 0, OPT_TEXT, FIELD(dv), 0, 0, true, "EXPR", "dv/dt, likewise"},
    {"arch", 0, OPT_INT, FIELD(arch), 50, 999, true, "CC",
     "compute capability to compile for, e.g. 90 (the device's)"},
    {"cubin", 0, OPT_FLAG, FIELD(cubin), 0, 0, true, NULL,
     "compile to machine code instead of PTX (no JIT at load)"},
    {"compile-only", 0, OPT_FLAG, FIELD(compile_only), 0, 0, true, NULL,
     "compile the kernel, print its PTX and stop (no GPU needed; --arch or 75)"},
    {"show-source", 0, OPT_FLAG, FIELD(show_source), 0, 0, true, NULL,
     "print the generated kernel source"},
    {"help", 'h', OPT_HELP, 0, 0, 0, false, NULL, "this text"},
};

#define SPEC_COUNT (sizeof specs / sizeof specs[0])

static enum ode_parse_result fail(struct ode_options *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static enum ode_parse_result fail(struct ode_options *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(o->error, sizeof o->error, fmt, ap);
    va_end(ap);
    return ODE_PARSE_ERROR;
}

static void set_defaults(struct ode_options *o)
{
    memset(o, 0, sizeof *o);
    o->model = &ode_models[0];
    o->systems = 1 << 20;
    o->steps = 1000;
    o->dt = 0.01;
    o->chunks = 8;
    o->streams = 4;
    o->check = 64;
    o->seed = 1;
}

static const struct option_spec *find_long(const char *name, size_t len, enum ode_program program)
{
    for (size_t i = 0; i < SPEC_COUNT; i++) {
        const struct option_spec *s = &specs[i];
        if (s->nvrtc_only && program != ODE_PROGRAM_NVRTC) continue;
        if (strlen(s->long_name) == len && strncmp(s->long_name, name, len) == 0) return s;
    }
    return NULL;
}

static const struct option_spec *find_short(char name, enum ode_program program)
{
    for (size_t i = 0; i < SPEC_COUNT; i++) {
        const struct option_spec *s = &specs[i];
        if (s->nvrtc_only && program != ODE_PROGRAM_NVRTC) continue;
        if (s->short_name && s->short_name == name) return s;
    }
    return NULL;
}

static enum ode_parse_result set_value(struct ode_options *o, const struct option_spec *s,
                                       const char *value)
{
    void *field = (char *)o + s->offset;
    char *end;
    errno = 0;
    switch (s->kind) {
    case OPT_INT: {
        long n = strtol(value, &end, 10);
        if (errno || end == value || *end || n < s->lo || n > s->hi)
            return fail(o, "--%s: expected an integer from %.0f to %.0f, got '%s'", s->long_name,
                        s->lo, s->hi, value);
        *(int *)field = (int)n;
        return ODE_PARSE_RUN;
    }
    case OPT_DOUBLE: {
        double x = strtod(value, &end);
        if (errno || end == value || *end || !isfinite(x) || x < s->lo || x > s->hi)
            return fail(o, "--%s: expected a number from %g to %g, got '%s'", s->long_name, s->lo,
                        s->hi, value);
        *(double *)field = x;
        return ODE_PARSE_RUN;
    }
    case OPT_SEED: {
        unsigned long long n = strtoull(value, &end, 10);
        if (errno || end == value || *end || value[0] == '-')
            return fail(o, "--%s: expected a non-negative integer, got '%s'", s->long_name, value);
        *(uint64_t *)field = n;
        return ODE_PARSE_RUN;
    }
    case OPT_MODEL: {
        const struct ode_model *m = ode_model_find(value);
        if (!m)
            return fail(o, "--%s: unknown model '%s' (oscillator, vanderpol, lotka-volterra)",
                        s->long_name, value);
        *(const struct ode_model **)field = m;
        return ODE_PARSE_RUN;
    }
    case OPT_TEXT:
        if (!value[strspn(value, " \t")])
            return fail(o, "--%s: expected an expression, got an empty one", s->long_name);
        *(const char **)field = value;
        return ODE_PARSE_RUN;
    case OPT_FLAG:
    case OPT_HELP:
        break;
    }
    return fail(o, "--%s takes no value", s->long_name);
}

/* Applies argv[*i]; advances *i past a value taken from the next argument. */
static enum ode_parse_result parse_one(struct ode_options *o, enum ode_program program, int argc,
                                       char **argv, int *i)
{
    const char *arg = argv[*i];
    const struct option_spec *s;
    const char *value = NULL;

    if (arg[0] == '-' && arg[1] == '-' && arg[2]) {
        const char *name = arg + 2;
        const char *eq = strchr(name, '=');
        s = find_long(name, eq ? (size_t)(eq - name) : strlen(name), program);
        if (eq) value = eq + 1;
    } else if (arg[0] == '-' && arg[1] && arg[1] != '-') {
        s = find_short(arg[1], program);
        if (arg[2]) value = arg + 2;
    } else {
        return fail(o, "unexpected argument '%s'", arg);
    }
    if (!s) return fail(o, "unknown option '%s'", arg);

    if (s->kind == OPT_HELP || s->kind == OPT_FLAG) {
        if (value) return fail(o, "--%s takes no value", s->long_name);
        if (s->kind == OPT_HELP) return ODE_PARSE_HELP;
        *(bool *)((char *)o + s->offset) = true;
        return ODE_PARSE_RUN;
    }
    if (!value) {
        if (*i + 1 >= argc) return fail(o, "--%s needs a value", s->long_name);
        value = argv[++*i];
    }
    return set_value(o, s, value);
}

enum ode_parse_result ode_options_parse(struct ode_options *o, enum ode_program program, int argc,
                                        char **argv)
{
    set_defaults(o);
    for (int i = 1; i < argc; i++) {
        enum ode_parse_result r = parse_one(o, program, argc, argv, &i);
        if (r != ODE_PARSE_RUN) return r;
    }
    if (o->chunks > o->systems)
        return fail(o, "--chunks (%d) must not exceed --systems (%d)", o->chunks, o->systems);
    if (o->cubin && o->compile_only)
        return fail(o, "--compile-only prints PTX; it cannot be combined with --cubin");
    return ODE_PARSE_RUN;
}

void ode_options_usage(FILE *out, const char *program_name, enum ode_program program)
{
    fprintf(out, "usage: %s [options]\n\n", program_name);
    for (size_t i = 0; i < SPEC_COUNT; i++) {
        const struct option_spec *s = &specs[i];
        if (s->nvrtc_only && program != ODE_PROGRAM_NVRTC) continue;
        char lhs[40];
        if (s->short_name)
            snprintf(lhs, sizeof lhs, "-%c, --%s %s", s->short_name, s->long_name,
                     s->arg_name ? s->arg_name : "");
        else
            snprintf(lhs, sizeof lhs, "    --%s %s", s->long_name, s->arg_name ? s->arg_name : "");
        fprintf(out, "  %-24s %s\n", lhs, s->help);
    }
}

void ode_options_parse_or_exit(struct ode_options *o, enum ode_program program, int argc,
                               char **argv)
{
    switch (ode_options_parse(o, program, argc, argv)) {
    case ODE_PARSE_HELP:
        ode_options_usage(stdout, program_invocation_short_name, program);
        exit(0);
    case ODE_PARSE_ERROR:
        fprintf(stderr, "%s: %s (see --help)\n", program_invocation_short_name, o->error);
        exit(2);
    case ODE_PARSE_RUN:
        break;
    }
}

bool ode_options_rhs_is_model(const struct ode_options *o)
{
    return (!o->du || strcmp(o->du, o->model->du) == 0) &&
           (!o->dv || strcmp(o->dv, o->model->dv) == 0);
}
