/* Report file names from the GPUTRACE_OUTPUT template, values that stay
 * names, and the atomic replacement of report files that no planted link
 * redirects. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "output_path.h"
#include "safe_file.h"

static const char *fake_env(const char *name)
{
    if (strcmp(name, "JOB") == 0) return "job42";
    if (strcmp(name, "RANK") == 0) return "3";
    if (strcmp(name, "SCRATCH") == 0) return "/scratch";
    if (strcmp(name, "UP") == 0) return "../../etc";
    if (strcmp(name, "DOT") == 0) return ".";
    if (strcmp(name, "PCT") == 0) return "50%p";
    if (strcmp(name, "LONG") == 0) {
        static char big[PATH_MAX];
        memset(big, 'x', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        return big;
    }
    return NULL;
}

static void expect(const char *tmpl, const char *want)
{
    char out[PATH_MAX];
    assert_int_equal(gt_output_expand(tmpl, 1234, "node7", fake_env, out, sizeof(out)), 0);
    assert_string_equal(out, want);
}

static void test_tokens(void **unused)
{
    (void)unused;
    expect("plain/path", "plain/path");
    expect("run.%p", "run.1234");
    expect("%h-%p", "node7-1234");
    expect("out/%q{JOB}.r%q{RANK}", "out/job42.r3");
    expect("100%%", "100%");
    expect("%%p", "%p");
    expect("", "");
}

/* %n (SPEC §12): the run's number where one is given, kept as written
 * where none is (gt_output_expand), and never read into a %%n. */
static void test_number(void **unused)
{
    (void)unused;
    char out[64];
    assert_int_equal(gt_output_expand_numbered("run.%n.%p", 1234, "h", NULL, 7, out, sizeof out),
                     0);
    assert_string_equal(out, "run.7.1234");
    assert_int_equal(gt_output_expand_numbered("100%%n", 1, "h", NULL, 7, out, sizeof out), 0);
    assert_string_equal(out, "100%n");
    expect("run.%n", "run.%n");
    assert_true(gt_output_numbered("out/run%n"));
    assert_true(gt_output_numbered("%%%n"));
    assert_false(gt_output_numbered("out/run%%n"));
    assert_false(gt_output_numbered("run.%p"));
}

static void test_odd_templates(void **unused)
{
    (void)unused;
    expect("a%q{UNSET}b", "ab"); /* unset variable: empty */
    expect("trail%", "trail%");  /* trailing percent kept */
    expect("x%zy%", "x%zy%");    /* unknown letter kept */
    expect("%q", "%q");          /* no braces */
    expect("%qJOB", "%qJOB");
    expect("%q{JOB", "%q{JOB"); /* never closed */
    expect("%q{}x", "%q{}x");   /* empty name */
    expect("%q{A}%q{JOB}", "job42");
    char out[64];
    assert_int_equal(gt_output_expand("%q{JOB}", 1, "h", NULL, out, sizeof(out)), 0);
    assert_string_equal(out, ""); /* no lookup function: every variable unset */
    assert_int_equal(gt_output_expand("%h", 1, NULL, NULL, out, sizeof(out)), 0);
    assert_string_equal(out, "");
}

/* A host name (a report's, in `gputrace report -o '%h.%p'`) and the
 * variables' values are each one name: no '/', no control byte, no
 * component "." or ".." made of them, so they never lead outside the
 * directory the template names. */
static void test_values_stay_names(void **unused)
{
    (void)unused;
    char out[PATH_MAX];
    assert_int_equal(
        gt_output_expand("out/%h.%p", 7, "/../../../../tmp/x/pwned", NULL, out, sizeof out), 0);
    assert_string_equal(out, "out/_.._.._.._.._tmp_x_pwned.7");
    assert_int_equal(gt_output_expand("out/%h/r", 7, "..", NULL, out, sizeof out), 0);
    assert_string_equal(out, "out/_./r");
    assert_int_equal(gt_output_expand("out/%h%q{DOT}/r", 7, ".", fake_env, out, sizeof out), 0);
    assert_string_equal(out, "out/__/r");
    assert_int_equal(gt_output_expand("a.%h", 7, "x\x1b]0;t\x07\n", NULL, out, sizeof out), 0);
    assert_string_equal(out, "a.x_]0;t__");
    expect("out/%q{UP}/r", "out/_._.._etc/r");
    expect("%q{SCRATCH}/r", "_scratch/r");
    expect("r.%q{PCT}", "r.50%p");   /* a value's % is not a token */
    expect("../r.%h", "../r.node7"); /* the template's own text is the user's */
}

/* %q{VAR} taken once (the library does at load): the result is a template
 * whose later expansion gives what the whole one gave then. */
static void test_expand_vars(void **unused)
{
    (void)unused;
    char tmpl[PATH_MAX], out[PATH_MAX];
    assert_int_equal(gt_output_expand_vars("o/%q{JOB}.%p.%h.%%p.%q{PCT}.%q{UP}.%q{JOB", fake_env,
                                           tmpl, sizeof tmpl),
                     0);
    assert_string_equal(tmpl, "o/job42.%p.%h.%%p.50%%p._._.._etc.%q{JOB");
    assert_int_equal(gt_output_expand(tmpl, 12, "n", NULL, out, sizeof out), 0);
    assert_string_equal(out, "o/job42.12.n.%p.50%p._._.._etc.%q{JOB");
    assert_int_equal(gt_output_expand("o/%q{JOB}.%p.%h.%%p.%q{PCT}.%q{UP}.%q{JOB", 12, "n",
                                      fake_env, tmpl, sizeof tmpl),
                     0);
    assert_string_equal(tmpl, out);
    assert_int_equal(gt_output_expand_vars("trail%", fake_env, tmpl, sizeof tmpl), 0);
    assert_string_equal(tmpl, "trail%");
    assert_int_equal(gt_output_expand_vars("/%q{LONG}", fake_env, tmpl, sizeof tmpl), -1);
    assert_string_equal(tmpl, "");
}

static void test_too_long(void **unused)
{
    (void)unused;
    char out[PATH_MAX];
    /* the variable alone fills PATH_MAX - 1; one more byte is too many */
    assert_int_equal(gt_output_expand("%q{LONG}", 1, "h", fake_env, out, sizeof(out)), 0);
    assert_int_equal(strlen(out), PATH_MAX - 1);
    assert_int_equal(gt_output_expand("/%q{LONG}", 1, "h", fake_env, out, sizeof(out)), -1);
    assert_string_equal(out, "");
    char small[8];
    assert_int_equal(gt_output_expand("abcdefg", 1, "h", NULL, small, sizeof(small)), 0);
    assert_int_equal(gt_output_expand("abcdefgh", 1, "h", NULL, small, sizeof(small)), -1);
    assert_string_equal(small, "");
    assert_int_equal(gt_output_expand("%p%p", 1234, "h", NULL, small, sizeof(small)), -1);
    /* a larger buffer does not lift the PATH_MAX limit */
    static char huge[PATH_MAX * 2];
    assert_int_equal(gt_output_expand("/%q{LONG}", 1, "h", fake_env, huge, sizeof(huge)), -1);
}

static void test_file_names(void **unused)
{
    (void)unused;
    char out[PATH_MAX];
    const char *want[] = {"r.txt", "r.json", "r.csv", "r.trace.json", "r.pftrace"};
    for (int f = 0; f < GT_OUTPUT_FORMAT_COUNT; f++) {
        assert_int_equal(gt_output_file_name("r", f, out, sizeof(out)), 0);
        assert_string_equal(out, want[f]);
    }
    assert_string_equal(gt_output_format_name(GT_OUTPUT_CHROME), "chrome");
    assert_string_equal(gt_output_format_name(GT_OUTPUT_PERFETTO), "perfetto");
    char small[7]; /* "r.json" and its NUL */
    assert_int_equal(gt_output_file_name("r", GT_OUTPUT_JSON, small, sizeof(small)), 0);
    assert_int_equal(gt_output_file_name("r", GT_OUTPUT_CSV, small, sizeof(small)), 0);
    assert_int_equal(gt_output_file_name("rr", GT_OUTPUT_JSON, small, sizeof(small)), -1);
}

/* Relative templates get the directory in front, its % kept a %. */
static void test_anchor(void **unused)
{
    (void)unused;
    assert_true(gt_output_relative("out/r.%p", 1, "h", fake_env));
    assert_true(gt_output_relative("%q{JOB}/r", 1, "h", fake_env));
    assert_true(gt_output_relative("%p", 1, "h", fake_env));
    assert_false(gt_output_relative("/abs/r", 1, "h", fake_env));
    assert_true(gt_output_relative("%q{SCRATCH}/r", 1, "h", fake_env)); /* a value is one name */
    assert_false(gt_output_relative("%q{LONG}x", 1, "h", fake_env)); /* refused later */

    char out[PATH_MAX], expanded[PATH_MAX];
    assert_int_equal(gt_output_anchor("out/r.%p", "/home/a%p%", out, sizeof out), 0);
    assert_string_equal(out, "/home/a%%p%%/out/r.%p");
    assert_int_equal(gt_output_expand(out, 1234, "h", NULL, expanded, sizeof expanded), 0);
    assert_string_equal(expanded, "/home/a%p%/out/r.1234");
    assert_int_equal(gt_output_anchor("r", "/", out, sizeof out), 0);
    assert_string_equal(out, "/r");
    assert_int_equal(gt_output_anchor("r", "/tmp/", out, sizeof out), 0);
    assert_string_equal(out, "/tmp/r");
    char small[8];
    assert_int_equal(gt_output_anchor("rr", "/tmp", small, sizeof small), 0); /* "/tmp/rr" */
    assert_int_equal(gt_output_anchor("r", "/tm%", small, sizeof small), 0);  /* "/tm%%/r" */
    assert_int_equal(gt_output_anchor("rr", "/tm%", small, sizeof small), -1);
    assert_string_equal(small, "");
}

static char dir[64];

static int make_dir(void **unused)
{
    (void)unused;
    snprintf(dir, sizeof(dir), "/tmp/gt_output_test.XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

/* Entries in a directory: a temporary file left behind shows here. */
static int count_entries(const char *path)
{
    DIR *d = opendir(path);
    if (!d) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

static int remove_dir(void **unused)
{
    (void)unused;
    char path[PATH_MAX];
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        unlink(path);
    }
    if (d) closedir(d);
    return rmdir(dir);
}

static int write_text(FILE *out, void *arg)
{
    return fputs(arg, out) < 0 ? -1 : 0;
}

static int write_half_then_fail(FILE *out, void *arg)
{
    fputs(arg, out);
    return -1;
}

static void read_file(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, cap - 1, f);
    buf[n] = '\0';
    fclose(f);
}

static void test_write_replaces(void **unused)
{
    (void)unused;
    char path[PATH_MAX], buf[64], err[256] = "";
    snprintf(path, sizeof(path), "%s/report.json", dir);
    assert_int_equal(gt_output_write(path, write_text, "first version\n", err, sizeof(err)), 0);
    read_file(path, buf, sizeof(buf));
    assert_string_equal(buf, "first version\n");
    errno = 1234;
    assert_int_equal(gt_output_write(path, write_text, "second\n", err, sizeof(err)), 0);
    assert_int_equal(errno, 1234); /* the program's errno is left alone */
    read_file(path, buf, sizeof(buf));
    assert_string_equal(buf, "second\n");
    assert_int_equal(count_entries(dir), 1);
}

/* A failing writer leaves the previous file whole and no temporary. */
static void test_failed_write_keeps_old_file(void **unused)
{
    (void)unused;
    char path[PATH_MAX], buf[64], err[256] = "";
    snprintf(path, sizeof(path), "%s/report.json", dir);
    assert_int_equal(gt_output_write(path, write_text, "good\n", err, sizeof(err)), 0);
    assert_int_equal(gt_output_write(path, write_half_then_fail, "partial", err, sizeof(err)), -1);
    assert_non_null(strstr(err, path));
    read_file(path, buf, sizeof(buf));
    assert_string_equal(buf, "good\n");
    assert_int_equal(count_entries(dir), 1);
}

static void test_unwritable_places(void **unused)
{
    (void)unused;
    char path[PATH_MAX], err[256] = "";
    snprintf(path, sizeof(path), "%s/missing/report.json", dir);
    assert_int_equal(gt_output_write(path, write_text, "x", err, sizeof(err)), -1);
    assert_non_null(strstr(err, "No such file or directory"));
    /* a regular file where a directory should be */
    snprintf(path, sizeof(path), "%s/plain", dir);
    assert_int_equal(gt_output_write(path, write_text, "x", err, sizeof(err)), 0);
    snprintf(path, sizeof(path), "%s/plain/report.json", dir);
    assert_int_equal(gt_output_write(path, write_text, "x", err, sizeof(err)), -1);
    /* the final name is a directory: the rename fails, the temporary goes */
    snprintf(path, sizeof(path), "%s/adir", dir);
    assert_int_equal(mkdir(path, 0700), 0);
    assert_int_equal(gt_output_write(path, write_text, "x", err, sizeof(err)), -1);
    assert_non_null(strstr(err, "cannot replace"));
    rmdir(path);
    assert_int_equal(count_entries(dir), 1);
}

/* A link planted where the temporary file used to be ("<path>.<pid>.tmp",
 * a name anyone could foresee) and one at the final name: neither is
 * written through; the final link is replaced by the report. */
static void test_planted_links_not_followed(void **unused)
{
    (void)unused;
    char path[PATH_MAX], victim[PATH_MAX], planted[PATH_MAX + 32], buf[64], err[256] = "";
    snprintf(path, sizeof(path), "%s/run.json", dir);
    snprintf(victim, sizeof(victim), "%s/victim", dir);
    snprintf(planted, sizeof(planted), "%s.%d.tmp", path, (int)getpid());
    FILE *v = fopen(victim, "w");
    assert_non_null(v);
    fputs("precious\n", v);
    fclose(v);
    assert_int_equal(symlink(victim, planted), 0);
    assert_int_equal(gt_output_write(path, write_text, "report\n", err, sizeof(err)), 0);
    read_file(victim, buf, sizeof(buf));
    assert_string_equal(buf, "precious\n");
    read_file(path, buf, sizeof(buf));
    assert_string_equal(buf, "report\n");
    unlink(planted);
    unlink(path);
    assert_int_equal(symlink(victim, path), 0);
    assert_int_equal(gt_output_write(path, write_text, "again\n", err, sizeof(err)), 0);
    read_file(victim, buf, sizeof(buf));
    assert_string_equal(buf, "precious\n");
    struct stat st;
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(count_entries(dir), 2); /* the report and the victim, no temporary */
}

/* Modes by one rule: GT_FILE_MODE (0644) less the umask, never 0666 even
 * with a umask of 0; a private file 0600. */
static void test_modes(void **unused)
{
    (void)unused;
    char path[PATH_MAX], err[256] = "";
    struct stat st;
    mode_t old = umask(0);
    snprintf(path, sizeof(path), "%s/report.json", dir);
    assert_int_equal(gt_output_write(path, write_text, "x", err, sizeof(err)), 0);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0644);
    umask(077);
    assert_int_equal(gt_output_write(path, write_text, "x", err, sizeof(err)), 0);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    umask(0);
    int d = open(dir, O_RDONLY | O_DIRECTORY);
    assert_true(d >= 0);
    assert_int_equal(gt_output_write_at(d, "private.txt", GT_FILE_PRIVATE_MODE, write_text, "x",
                                        err, sizeof err),
                     0);
    close(d);
    umask(old);
    snprintf(path, sizeof(path), "%s/private.txt", dir);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tokens),
        cmocka_unit_test(test_number),
        cmocka_unit_test(test_odd_templates),
        cmocka_unit_test(test_values_stay_names),
        cmocka_unit_test(test_expand_vars),
        cmocka_unit_test(test_too_long),
        cmocka_unit_test(test_file_names),
        cmocka_unit_test(test_anchor),
        cmocka_unit_test_setup_teardown(test_write_replaces, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_failed_write_keeps_old_file, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_unwritable_places, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_planted_links_not_followed, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_modes, make_dir, remove_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
