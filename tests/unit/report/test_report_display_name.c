/* Kernel names for people: the readable form and its cuts, on the names
 * real programs launch (nvcc templates, Numba, CuPy, PyTorch, Triton). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "display_name.h"

#define NUMBA_CUBIE                                                                                \
    "cudapy::cubie::batchsolving::BatchSolverKernel::build_kernel::_3clocals_3e::"                 \
    "integration_kernel[abi:v1][abi:cw51cXTLSUwv1sDUaKthqqNgqKmkgKSB0z3ldGBVAA_3d_3d](Array<"      \
    "double, 2, C, mutable, aligned>, Array<double, 2, C, mutable, aligned>, int, int, long long)"
#define TORCH_ADD                                                                                  \
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "       \
    "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "                      \
    "at::detail::Array<char*, 3>)"

static void expect_display(const char *full, const char *want)
{
    char *got = gt_display_name(full);
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
}

static void expect_fit(const char *display, size_t width, const char *want)
{
    char *got = gt_display_name_fit(display, width);
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
}

static void test_plain_names_stay(void **unused)
{
    (void)unused;
    expect_display("vec_add", "vec_add");
    expect_display("triton_poi_fused_add_0", "triton_poi_fused_add_0");
    expect_display("[graph launch]", "[graph launch]");
    expect_display("", "");
    /* mangled (nothing could demangle it): left alone */
    expect_display("_Z6squarePfi", "_Z6squarePfi");
    /* not a signature the scanner understands: left alone */
    expect_display("odd)name(", "odd)name(");
    expect_display("f(int))", "f(int))");
}

/* The parameter list goes, and the return type template functions are
 * demangled with; the rest of the name stays whole. */
static void test_signature_dropped(void **unused)
{
    (void)unused;
    expect_display("scale(float*, float, int)", "scale");
    expect_display("apps::scale(float*, float, int)", "apps::scale");
    expect_display("void ode::rk4_integrate<double, ode::lorenz_rhs<double>, 4>(double const*, "
                   "double*, ode::params<double> const*, int*, int)",
                   "ode::rk4_integrate<double, ode::lorenz_rhs<double>, 4>");
    expect_display(TORCH_ADD, "at::native::vectorized_elementwise_kernel<4, "
                              "at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >");
    expect_display("void (anonymous namespace)::fill<unsigned int>(unsigned int*, unsigned int)",
                   "(anonymous namespace)::fill<unsigned int>");
    expect_display("void cub::DeviceForEachKernel<{lambda(int)#1}>(int, {lambda(int)#1})",
                   "cub::DeviceForEachKernel<{lambda(int)#1}>");
    expect_display("k(void (*)(int), int)", "k");
    expect_display("f[abi:cxx11](int)", "f");
}

/* Numba: escapes undone only in its names, ABI tags and Array
 * parameters gone. */
static void test_numba(void **unused)
{
    (void)unused;
    expect_display(NUMBA_CUBIE, "cudapy::cubie::batchsolving::BatchSolverKernel::build_kernel::"
                                "<locals>::integration_kernel");
    expect_display("cudapy::__main__::axpy[abi:v3](float, Array<float, 1, C, mutable, aligned>)",
                   "cudapy::__main__::axpy");
    /* a UTF-8 character, escaped byte by byte; a lone lead byte stays escaped */
    expect_display("cudapy::__main__::f_c3_a9e[abi:v3](float)", "cudapy::__main__::f\xc3\xa9" "e");
    expect_display("cudapy::__main__::f_c3e[abi:v3](float)", "cudapy::__main__::f_c3e");
    /* what Numba never escapes is no escape: letters, digits, '_' */
    expect_display("cudapy::m::x_41_5f_30[abi:v1](int)", "cudapy::m::x_41_5f_30");
    /* outside Numba's names the same text is left alone */
    expect_display("ns::a_3cb_3e(int)", "ns::a_3cb_3e");
    /* a kernel Numba compiled for link-time optimisation: no "cudapy::", no
     * ABI tag, but an escaped Python scope says whose name it is */
    expect_display("BatchSolverKernel::build_kernel::_3clocals_3e::rk45_unnamed_9_ltoon(double*)",
                   "BatchSolverKernel::build_kernel::<locals>::rk45_unnamed_9_ltoon");
    expect_display("mod::make::_3clambda_3e_2ex(int)", "mod::make::<lambda>.x");
    assert_true(gt_name_is_numba("a::_3cgenexpr_3e::k"));
    assert_false(gt_name_is_numba("ns::a_3cb_3e"));
}

static void expect_verbose(const char *full, const char *want)
{
    char *got = gt_verbose_name(full);
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
}

/* Verbose output keeps the signature; a Numba name loses its ABI tags
 * (their hash is most of its length) and its escapes. */
static void test_verbose(void **unused)
{
    (void)unused;
    expect_verbose(NUMBA_CUBIE, "cudapy::cubie::batchsolving::BatchSolverKernel::build_kernel::"
                                "<locals>::integration_kernel(Array<double, 2, C, mutable, "
                                "aligned>, Array<double, 2, C, mutable, aligned>, int, int, long "
                                "long)");
    expect_verbose(TORCH_ADD, TORCH_ADD);
    expect_verbose("f[abi:cxx11](int)", "f[abi:cxx11](int)");
    expect_verbose("k::_3clocals_3e::g(int)", "k::<locals>::g(int)");
}

/* Cut to a width: template arguments, then leading namespaces, as far as
 * needed; the function's own name is never cut here. */
static void test_fit(void **unused)
{
    (void)unused;
    const char *cubie = "cudapy::cubie::batchsolving::BatchSolverKernel::build_kernel::"
                        "<locals>::integration_kernel";
    expect_fit(cubie, 200, cubie);
    expect_fit(cubie, 66, "...::BatchSolverKernel::build_kernel::<locals>::integration_kernel");
    expect_fit(cubie, 65, "...::build_kernel::<locals>::integration_kernel");
    expect_fit(cubie, 40, "...::<locals>::integration_kernel");
    expect_fit(cubie, 10, "...::integration_kernel");
    const char *rk4 = "ode::rk4_integrate<double, ode::lorenz_rhs<double>, 4>";
    expect_fit(rk4, 55, rk4);
    expect_fit(rk4, 30, "ode::rk4_integrate");
    expect_fit(rk4, 16, "...::rk4_integrate");
    expect_fit("at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
               "at::detail::Array<char*, 3> >",
               50, "at::native::vectorized_elementwise_kernel");
    expect_fit("vec_add_with_a_very_long_name", 8, "vec_add_with_a_very_long_name");
    expect_fit("(anonymous namespace)::fill<unsigned int>", 30, "(anonymous namespace)::fill");
    expect_fit("(anonymous namespace)::fill<unsigned int>", 20, "...::fill");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_names_stay),
        cmocka_unit_test(test_signature_dropped),
        cmocka_unit_test(test_numba),
        cmocka_unit_test(test_verbose),
        cmocka_unit_test(test_fit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
