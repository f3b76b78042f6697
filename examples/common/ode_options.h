/* Command-line options of the batch ODE examples. */
#ifndef ODE_OPTIONS_H
#define ODE_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ode_models.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Which program parses: the code-generating one accepts more options. */
enum ode_program { ODE_PROGRAM_COMPILED, ODE_PROGRAM_NVRTC };

struct ode_options {
    const struct ode_model *model;
    int systems;
    int steps;
    double dt;
    int chunks;
    int streams;
    int check;     /* systems compared with the CPU reference */
    uint64_t seed; /* initial states and parameters */
    bool pin_all;  /* stage status codes through pinned memory too */

    /* Code generation (ODE_PROGRAM_NVRTC). */
    const char *du, *dv; /* right-hand side text: the model's unless given */
    int arch;            /* compute capability * 10 to compile for; 0: the device's */
    bool cubin;          /* compile to machine code instead of PTX */
    bool compile_only;   /* compile and print the PTX, touch no GPU */
    bool show_source;    /* print the generated kernel source */

    char error[256]; /* why parsing failed, one line without a newline */
};

enum ode_parse_result {
    ODE_PARSE_RUN,
    ODE_PARSE_HELP,
    ODE_PARSE_ERROR, /* the reason is in options->error */
};

/* Fills *o with the defaults, then applies argv[1..argc-1]. */
enum ode_parse_result ode_options_parse(struct ode_options *o, enum ode_program program, int argc,
                                        char **argv);

void ode_options_usage(FILE *out, const char *program_name, enum ode_program program);

/* ode_options_parse for main(): prints --help and exits 0, or prints the
 * error as "<program>: <reason> (see --help)" and exits 2. */
void ode_options_parse_or_exit(struct ode_options *o, enum ode_program program, int argc,
                               char **argv);

/* True when the right-hand side is the model's own, so that the host
 * reference computes the same thing as the device. */
bool ode_options_rhs_is_model(const struct ode_options *o);

#ifdef __cplusplus
}
#endif

#endif
