/* Command-line parsing of the examples: values, forms, and the one-line
 * reasons bad input is refused with. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ode_options.h"

#define ARGC(argv) ((int)(sizeof(argv) / sizeof(argv)[0]))

static enum ode_parse_result parse(struct ode_options *o, enum ode_program program, int argc,
                                   char **argv)
{
    enum ode_parse_result r = ode_options_parse(o, program, argc, argv);
    if (r == ODE_PARSE_ERROR) {
        assert_true(o->error[0] != '\0');
        assert_null(strchr(o->error, '\n'));
    }
    return r;
}

static void test_values_in_every_form(void **state)
{
    (void)state;
    struct ode_options o;
    char *argv[] = {"prog",
                    "-n",
                    "1000",
                    "--steps=50",
                    "-c3",
                    "--streams",
                    "2",
                    "--dt",
                    "0.005",
                    "-m",
                    "lotka-volterra",
                    "--check=0",
                    "--seed",
                    "18446744073709551615",
                    "--pin-all"};
    assert_int_equal(parse(&o, ODE_PROGRAM_COMPILED, ARGC(argv), argv), ODE_PARSE_RUN);
    assert_int_equal(o.systems, 1000);
    assert_int_equal(o.steps, 50);
    assert_int_equal(o.chunks, 3);
    assert_int_equal(o.streams, 2);
    assert_true(o.dt == 0.005);
    assert_string_equal(o.model->name, "lotka-volterra");
    assert_int_equal(o.check, 0);
    assert_true(o.seed == UINT64_MAX);
    assert_true(o.pin_all);
    assert_true(ode_options_rhs_is_model(&o));
}

static void test_defaults_run_a_sizeable_batch(void **state)
{
    (void)state;
    struct ode_options o;
    char *argv[] = {"prog"};
    assert_int_equal(parse(&o, ODE_PROGRAM_COMPILED, ARGC(argv), argv), ODE_PARSE_RUN);
    assert_string_equal(o.model->name, "oscillator");
    assert_true(o.systems >= 1 << 20);
    assert_true(o.chunks > 1 && o.streams > 1 && o.check > 0);
    assert_false(o.pin_all);
}

static void test_help_wins_over_later_arguments(void **state)
{
    (void)state;
    struct ode_options o;
    char *argv[] = {"prog", "--help", "--bogus"};
    assert_int_equal(parse(&o, ODE_PROGRAM_COMPILED, ARGC(argv), argv), ODE_PARSE_HELP);
}

/* Each bad argument list, and a phrase its message must contain. */
static void expect_error(enum ode_program program, int argc, char **argv, const char *phrase)
{
    struct ode_options o;
    assert_int_equal(parse(&o, program, argc, argv), ODE_PARSE_ERROR);
    if (!strstr(o.error, phrase)) fail_msg("'%s' does not say '%s'", o.error, phrase);
}

#define EXPECT_ERROR(program, phrase, ...)                                                         \
    do {                                                                                           \
        char *args_[] = {"prog", __VA_ARGS__};                                                     \
        expect_error(program, ARGC(args_), args_, phrase);                                         \
    } while (0)

static void test_bad_input_is_refused_with_a_reason(void **state)
{
    (void)state;
    const enum ode_program c = ODE_PROGRAM_COMPILED;
    EXPECT_ERROR(c, "got 'x'", "--steps", "x");
    EXPECT_ERROR(c, "got '12abc'", "-n", "12abc");
    EXPECT_ERROR(c, "from 1 to", "--systems", "0");
    EXPECT_ERROR(c, "from 1 to", "--streams", "65");
    EXPECT_ERROR(c, "got '99999999999999999999'", "--steps", "99999999999999999999");
    EXPECT_ERROR(c, "needs a value", "--chunks");
    EXPECT_ERROR(c, "must not exceed", "--systems", "8", "--chunks", "9");
    EXPECT_ERROR(c, "unknown model 'duffing'", "--model", "duffing");
    EXPECT_ERROR(c, "got '-1'", "--dt", "-1");
    EXPECT_ERROR(c, "got 'nan'", "--dt", "nan");
    EXPECT_ERROR(c, "non-negative", "--seed", "-3");
    EXPECT_ERROR(c, "takes no value", "--pin-all=yes");
    EXPECT_ERROR(c, "unknown option '--frobnicate'", "--frobnicate");
    EXPECT_ERROR(c, "unknown option '-x'", "-x");
    EXPECT_ERROR(c, "unexpected argument 'extra'", "extra");
    EXPECT_ERROR(c, "unexpected argument '-'", "-");
}

static void test_code_generation_options_belong_to_the_nvrtc_program(void **state)
{
    (void)state;
    struct ode_options o;
    char *argv[] = {"prog", "--dv", "-sin(u)", "--arch", "90", "--cubin", "--show-source"};
    EXPECT_ERROR(ODE_PROGRAM_COMPILED, "unknown option '--dv'", "--dv", "-sin(u)");
    EXPECT_ERROR(ODE_PROGRAM_COMPILED, "unknown option '--cubin'", "--cubin");
    assert_int_equal(parse(&o, ODE_PROGRAM_NVRTC, ARGC(argv), argv), ODE_PARSE_RUN);
    assert_string_equal(o.dv, "-sin(u)");
    assert_int_equal(o.arch, 90);
    assert_true(o.cubin && o.show_source);
    assert_false(ode_options_rhs_is_model(&o));
}

static void test_nvrtc_option_errors(void **state)
{
    (void)state;
    const enum ode_program n = ODE_PROGRAM_NVRTC;
    EXPECT_ERROR(n, "empty", "--du", " ");
    EXPECT_ERROR(n, "from 50 to", "--arch", "35");
    EXPECT_ERROR(n, "cannot be combined", "--compile-only", "--cubin");
}

/* Giving the model's own expression keeps the CPU check. */
static void test_the_models_own_expression_is_the_model(void **state)
{
    (void)state;
    struct ode_options o;
    char *argv[] = {"prog", "-m", "vanderpol", "--du", "v"};
    assert_int_equal(parse(&o, ODE_PROGRAM_NVRTC, ARGC(argv), argv), ODE_PARSE_RUN);
    assert_true(ode_options_rhs_is_model(&o));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values_in_every_form),
        cmocka_unit_test(test_defaults_run_a_sizeable_batch),
        cmocka_unit_test(test_help_wins_over_later_arguments),
        cmocka_unit_test(test_bad_input_is_refused_with_a_reason),
        cmocka_unit_test(test_code_generation_options_belong_to_the_nvrtc_program),
        cmocka_unit_test(test_nvrtc_option_errors),
        cmocka_unit_test(test_the_models_own_expression_is_the_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
