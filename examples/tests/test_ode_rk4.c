/* The host side of the shared RK4 (the CPU reference the examples check the
 * GPU against) against closed-form solutions of the built-in models. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "ode_models.h"

/* RK4's global error is O(h^4): at h = 0.01 over ten time units the models
 * below stay within 1e-8 of the exact solution (measured: under 1e-9). */
#define CLOSED_FORM_TOLERANCE 1e-8

/* Underdamped free oscillator u'' + 2 zeta w u' + w^2 u = 0. */
static void damped_exact(const double p[ODE_NPARAM], const double y0[ODE_DIM], double t,
                         double y[ODE_DIM])
{
    const double w = p[0], zeta = p[1];
    const double decay = zeta * w, wd = w * sqrt(1.0 - zeta * zeta);
    const double A = y0[0], B = (y0[1] + decay * y0[0]) / wd;
    const double e = exp(-decay * t), cs = cos(wd * t), sn = sin(wd * t);
    y[0] = e * (A * cs + B * sn);
    y[1] = e * ((wd * B - decay * A) * cs - (wd * A + decay * B) * sn);
}

/* Undamped oscillator driven off resonance: u'' + w^2 u = F cos(W t). */
static void driven_exact(const double p[ODE_NPARAM], const double y0[ODE_DIM], double t,
                         double y[ODE_DIM])
{
    const double w = p[0], F = p[2], W = p[3];
    const double k = F / (w * w - W * W);
    y[0] = (y0[0] - k) * cos(w * t) + y0[1] / w * sin(w * t) + k * cos(W * t);
    y[1] = -(y0[0] - k) * w * sin(w * t) + y0[1] * cos(w * t) - k * W * sin(W * t);
}

static double max_error(void (*exact)(const double *, const double *, double, double *),
                        const double p[ODE_NPARAM], const double y0[ODE_DIM], double h, int steps)
{
    double y[ODE_DIM] = {y0[0], y0[1]}, e[ODE_DIM];
    ode_rk4_integrate(ode_rhs_oscillator, 0.0, h, steps, y, p);
    exact(p, y0, h * steps, e);
    return fmax(fabs(y[0] - e[0]), fabs(y[1] - e[1]));
}

static void test_damped_oscillator_matches_closed_form(void **state)
{
    (void)state;
    const double p[ODE_NPARAM] = {1.3, 0.2, 0.0, 0.0};
    const double y0[ODE_DIM] = {1.0, -0.5};
    double err = max_error(damped_exact, p, y0, 0.01, 1000);
    assert_true(err < CLOSED_FORM_TOLERANCE);
}

/* The forcing term depends on t: this fails if a stage is evaluated at the
 * wrong time. */
static void test_driven_oscillator_matches_closed_form(void **state)
{
    (void)state;
    const double p[ODE_NPARAM] = {1.0, 0.0, 0.8, 2.5};
    const double y0[ODE_DIM] = {0.3, 0.7};
    double err = max_error(driven_exact, p, y0, 0.01, 1000);
    assert_true(err < CLOSED_FORM_TOLERANCE);
}

/* Halving the step divides a fourth-order method's error by about 16. */
static void test_error_shrinks_at_fourth_order(void **state)
{
    (void)state;
    const double p[ODE_NPARAM] = {1.0, 0.0, 0.8, 2.5};
    const double y0[ODE_DIM] = {0.3, 0.7};
    double coarse = max_error(driven_exact, p, y0, 0.1, 100);
    double fine = max_error(driven_exact, p, y0, 0.05, 200);
    double ratio = coarse / fine;
    assert_true(ratio > 14.0 && ratio < 18.0);
}

/* Lotka-Volterra has no closed form, but conserves
 * c u - d ln u + b v - a ln v along every orbit. */
static double lotka_volterra_invariant(const double p[ODE_NPARAM], const double y[ODE_DIM])
{
    return p[2] * y[0] - p[3] * log(y[0]) + p[1] * y[1] - p[0] * log(y[1]);
}

static void test_lotka_volterra_keeps_its_invariant(void **state)
{
    (void)state;
    const double p[ODE_NPARAM] = {1.1, 0.4, 0.3, 0.9};
    double y[ODE_DIM] = {2.0, 1.5};
    const double before = lotka_volterra_invariant(p, y);
    ode_rk4_integrate(ode_rhs_lotka_volterra, 0.0, 0.01, 1000, y, p);
    const double after = lotka_volterra_invariant(p, y);
    assert_true(fabs(after - before) < CLOSED_FORM_TOLERANCE * fabs(before));
    /* ...and actually moved along the orbit. */
    assert_true(fabs(y[0] - 2.0) > 0.01);
}

/* Each table entry's host right-hand side is its model's, checked at a
 * point worked out by hand. */
static void check_rhs(const char *model, double t, double u, double v, const double p[ODE_NPARAM],
                      double du, double dv)
{
    const struct ode_model *m = ode_model_find(model);
    const double y[ODE_DIM] = {u, v};
    double dydt[ODE_DIM];
    assert_non_null(m);
    m->host_rhs(t, y, p, dydt);
    assert_true(fabs(dydt[0] - du) < 1e-12);
    assert_true(fabs(dydt[1] - dv) < 1e-12);
}

static void test_model_table_right_hand_sides(void **state)
{
    (void)state;
    /* du = v; dv = 0.5 cos(0) - 2 * 0.25 * 2 * 3 - 4 * 1 */
    check_rhs("oscillator", 0.0, 1.0, 3.0, (const double[]){2.0, 0.25, 0.5, 7.0}, 3.0, -6.5);
    /* du = v; dv = 0.5 (1 - 4) 1 - 2 */
    check_rhs("vanderpol", 5.0, 2.0, 1.0, (const double[]){0.5, 0.0, 0.0, 0.0}, 1.0, -3.5);
    /* du = 1 * 2 - 0.5 * 2 * 3; dv = 0.25 * 2 * 3 - 2 * 3 */
    check_rhs("lotka-volterra", 0.0, 2.0, 3.0, (const double[]){1.0, 0.5, 0.25, 2.0}, -1.0, -4.5);
    assert_null(ode_model_find("Oscillator"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_damped_oscillator_matches_closed_form),
        cmocka_unit_test(test_driven_oscillator_matches_closed_form),
        cmocka_unit_test(test_error_shrinks_at_fourth_order),
        cmocka_unit_test(test_lotka_volterra_keeps_its_invariant),
        cmocka_unit_test(test_model_table_right_hand_sides),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
