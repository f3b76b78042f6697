/* gputrace [options] [--] program [args...]
 * gputrace report|diff|merge ...  (tools.h: a first argument that is
 *                                  exactly one of these words)
 *
 * Each option sets one GPUTRACE_* variable for the program; a variable
 * the user exported stays as it is unless an option overrides it. Values
 * are checked by the shim's own configuration parser, so the command and
 * the library accept exactly the same words; here a bad value is an error
 * (exit 2) rather than the library's warning and default. A bad value the
 * user exported gets the library's warning here, once, and the processes
 * under the command stay quiet about it (common/config_warnings.c). */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"
#include "log.h"
#include "output_path.h"
#include "tools.h"

#ifndef PROJECT_VERSION
#error "PROJECT_VERSION must be defined by the build"
#endif

static const char usage[] =
    "usage: gputrace [options] [--] program [args...]\n"
    "       gputrace report FILE.json [-v LEVEL] [-c LIST] [-f text|csv|json] [-o TEMPLATE]\n"
    "       gputrace diff BASE.json NEW.json [--threshold PCT] [--min-ns NS] [-f text|json|csv]\n"
    "       gputrace merge FILE.json... -o TEMPLATE [-f LIST]\n"
    "\n"
    "Runs the program with libgputrace.so preloaded and reports where its GPU time\n"
    "goes: a summary on stderr at exit, and report files when asked.\n"
    "\n"
    "options:\n"
    "  -v, --verbosity LEVEL   none, default, verbose, debug (or 0-3)\n"
    "  -c, --categories LIST   comma list of kernel, memcpy, memset, memory, compile,\n"
    "                          module, sync, nvtx, api, all; -name removes one\n"
    "  -o, --output TEMPLATE   write report files TEMPLATE.json etc.; %p = pid,\n"
    "                          %h = host name, %q{VAR} = $VAR, %% = %\n"
    "  -f, --format LIST       comma list of text, json, csv, chrome, perfetto\n"
    "                          (default json)\n"
    "      --gpu-timing MODE   where GPU times come from: auto (default: CUPTI\n"
    "                          activity records where CUPTI can be used, else CUDA\n"
    "                          event pairs), cupti, events, off (host times only)\n"
    "      --no-gpu-timing     the same as --gpu-timing off\n"
    "      --no-nvtx           do not collect NVTX ranges\n"
    "      --callsites MODE    which lines of the program are named as call sites\n"
    "                          of GPU work and allocations: auto (default), python,\n"
    "                          native, all, off\n"
    "      --capture MODE      record only in windows: all (default), profiler-api\n"
    "                          (between cuProfilerStart/cudaProfilerStart and the\n"
    "                          stop), nvtx:NAME or nvtx:NAME@DOMAIN (while such an\n"
    "                          NVTX range is open; DOMAIN * for any)\n"
    "      --delay S           start recording S seconds after the program starts\n"
    "      --duration S        stop recording S seconds after it started\n"
    "      --interval S        rewrite the report files every S seconds while the\n"
    "                          program runs\n"
    "      --checksum MODE     hash what device-to-host copies bring back, for diff\n"
    "                          to tell whether results changed: off (default), dtoh,\n"
    "                          dtoh:f32:BITS or dtoh:f64:BITS (floats rounded to BITS\n"
    "                          mantissa bits first)\n"
    "      --version           print the version\n"
    "      --help              print this help\n"
    "\n"
    "examples:\n"
    "  gputrace ./solver --size 4096\n"
    "  gputrace -v verbose -c kernel,memcpy ./solver\n"
    "  gputrace -o run.%p -f json,perfetto ./solver       # run.<pid>.pftrace opens\n"
    "                                                    # in ui.perfetto.dev\n"
    "  gputrace -c all,-api python3 train.py\n"
    "  gputrace --capture nvtx:train_step --delay 30 ./trainer\n"
    "\n"
    "report, diff and merge read JSON reports again (gputrace report --help etc.);\n"
    "a program named like one of them runs as gputrace -- report or gputrace ./report.\n"
    "\n"
    "The exit status is the program's, and when signal N ended the program,\n"
    "gputrace ends by signal N too; 2 when gputrace itself could not start it.\n"
    "Signals sent to gputrace go on to the program. Every option is also an\n"
    "environment variable: GPUTRACE_VERBOSITY, GPUTRACE_CATEGORIES,\n"
    "GPUTRACE_OUTPUT, GPUTRACE_FORMAT, GPUTRACE_GPU_TIMING, GPUTRACE_CAPTURE,\n"
    "GPUTRACE_DELAY, GPUTRACE_DURATION, GPUTRACE_INTERVAL, GPUTRACE_CHECKSUM, and\n"
    "GPUTRACE_LOG (stderr, stdout or a file) for where the summary goes;\n"
    "GPUTRACE_CUPTI_PATH names the libcupti to use; GPUTRACE_CALLSITES_SKIP adds\n"
    "Python packages whose frames are not call sites.\n";

enum {
    OPT_NO_GPU_TIMING = 256,
    OPT_NO_NVTX,
    OPT_VERSION,
    OPT_HELP,
    OPT_CAPTURE,
    OPT_DELAY,
    OPT_DURATION,
    OPT_INTERVAL,
    OPT_GPU_TIMING,
    OPT_CHECKSUM,
    OPT_CALLSITES
};

static const struct option options[] = {
    {"verbosity", required_argument, NULL, 'v'},
    {"categories", required_argument, NULL, 'c'},
    {"output", required_argument, NULL, 'o'},
    {"format", required_argument, NULL, 'f'},
    {"gpu-timing", required_argument, NULL, OPT_GPU_TIMING},
    {"no-gpu-timing", no_argument, NULL, OPT_NO_GPU_TIMING},
    {"no-nvtx", no_argument, NULL, OPT_NO_NVTX},
    {"callsites", required_argument, NULL, OPT_CALLSITES},
    {"capture", required_argument, NULL, OPT_CAPTURE},
    {"delay", required_argument, NULL, OPT_DELAY},
    {"duration", required_argument, NULL, OPT_DURATION},
    {"interval", required_argument, NULL, OPT_INTERVAL},
    {"checksum", required_argument, NULL, OPT_CHECKSUM},
    {"version", no_argument, NULL, OPT_VERSION},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

/* The variable an option sets and the value it was given. */
typedef struct setting {
    const char *option;
    enum gt_config_var var;
    const char *value; /* NULL: not given */
} setting;

/* 0 when the shim's parser accepts the value; else an error line. */
static int validate(const setting *s)
{
    static gt_config cfg; /* large (paths): not on the stack */
    return gt_cli_parse_setting(s->option, s->var, s->value, &cfg);
}

/* A first argument that is exactly a subcommand's name (SPEC §11). */
static int subcommand(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*run)(int argc, char **argv);
    } commands[] = {{"report", gt_cli_report}, {"diff", gt_cli_diff}, {"merge", gt_cli_merge}};
    for (size_t i = 0; argc > 1 && i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0) return commands[i].run(argc - 1, argv + 1);
    return -1;
}

static const char *process_getenv(const char *name, void *ctx)
{
    (void)ctx;
    return getenv(name);
}

/* The variables as the program will see them: their warnings given once,
 * where GPUTRACE_LOG says, and the values listed as checked so that no
 * process under the command repeats them. */
static const gt_config *check_configuration(void)
{
    static gt_config cfg; /* large (paths): not on the stack */
    gt_config_parse(&cfg, process_getenv, NULL);
    gt_log_init(cfg.log_dest, cfg.log_path, cfg.verbosity);
    gt_config_give_warnings(&cfg, process_getenv, NULL);
    char list[GT_CONFIG_CHECKED_MAX];
    gt_config_checked_list(process_getenv, NULL, list);
    setenv(GT_CONFIG_CHECKED_VAR, list, 1);
    return &cfg;
}

/* A relative output template becomes absolute, so that a program that
 * changes directory (or a script that runs programs elsewhere) still
 * writes where gputrace was run. The test and the rule are the library's
 * own: a template that expands to an absolute path (%q{HOME}/r) stays as
 * it is, and a % in the directory stays a %. The program keeps this pid
 * (gputrace execs it), so %p expands to the same here. */
static const char *env_value(const char *name)
{
    return getenv(name);
}

static char *absolute_template(const char *tmpl)
{
    char host[256] = "", cwd[PATH_MAX], out[PATH_MAX];
    gethostname(host, sizeof host - 1);
    if (!gt_output_relative(tmpl, getpid(), host, env_value) || !getcwd(cwd, sizeof cwd) ||
        gt_output_anchor(tmpl, cwd, out, sizeof out) != 0)
        return strdup(tmpl);
    return strdup(out);
}

static int unknown_option(char **argv, int opt)
{
    char shown[GT_CLI_SHOWN_SIZE];
    const char *arg = gt_cli_shown(shown, sizeof shown, argv[optind - 1]);
    if (opt == ':')
        gt_cli_error("option '%s' needs a value (see gputrace --help)", arg);
    else if (optopt && optopt < 256)
        gt_cli_error("unknown option '-%c' (see gputrace --help)", optopt);
    else
        gt_cli_error("unknown option '%s' (see gputrace --help)", arg);
    return GT_CLI_USAGE_ERROR;
}

int main(int argc, char **argv)
{
    setting settings[] = {
        {"--verbosity", GT_VAR_VERBOSITY, NULL},   {"--categories", GT_VAR_CATEGORIES, NULL},
        {"--output", GT_VAR_OUTPUT, NULL},         {"--format", GT_VAR_FORMAT, NULL},
        {"--capture", GT_VAR_CAPTURE, NULL},       {"--delay", GT_VAR_DELAY, NULL},
        {"--duration", GT_VAR_DURATION, NULL},     {"--interval", GT_VAR_INTERVAL, NULL},
        {"--gpu-timing", GT_VAR_GPU_TIMING, NULL}, {"--checksum", GT_VAR_CHECKSUM, NULL},
        {"--callsites", GT_VAR_CALLSITES, NULL},
    };
    int tool = subcommand(argc, argv);
    if (tool >= 0) return tool;
    int no_gpu_timing = 0, no_nvtx = 0, opt;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "+:v:c:o:f:", options, NULL)) != -1) {
        switch (opt) {
        case 'v':
            settings[0].value = optarg;
            break;
        case 'c':
            settings[1].value = optarg;
            break;
        case 'o':
            settings[2].value = optarg;
            break;
        case 'f':
            settings[3].value = optarg;
            break;
        case OPT_CAPTURE:
        case OPT_DELAY:
        case OPT_DURATION:
        case OPT_INTERVAL:
            settings[4 + opt - OPT_CAPTURE].value = optarg;
            break;
        case OPT_GPU_TIMING:
            settings[8].value = optarg;
            break;
        case OPT_CHECKSUM:
            settings[9].value = optarg;
            break;
        case OPT_CALLSITES:
            settings[10].value = optarg;
            break;
        case OPT_NO_GPU_TIMING:
            no_gpu_timing = 1;
            break;
        case OPT_NO_NVTX:
            no_nvtx = 1;
            break;
        case OPT_VERSION:
            printf("gputrace %s\n", PROJECT_VERSION);
            return 0;
        case OPT_HELP:
            fputs(usage, stdout);
            return 0;
        default:
            return unknown_option(argv, opt);
        }
    }
    if (optind >= argc) {
        gt_cli_error("no program given (see gputrace --help)");
        return GT_CLI_USAGE_ERROR;
    }
    for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++)
        if (settings[i].value && validate(&settings[i]) != 0) return GT_CLI_USAGE_ERROR;
    char *program = gt_cli_find_program(argv[optind]);
    if (!program) return GT_CLI_USAGE_ERROR;
    char *runtime = gt_cli_sanitizer_runtime(program);
    free(program);
    char *lib = gt_cli_find_library();
    int preloaded = lib ? gt_cli_set_preload(lib, runtime, no_nvtx) : -1;
    free(lib);
    free(runtime);
    if (preloaded != 0) return GT_CLI_USAGE_ERROR;

    for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++) {
        if (!settings[i].value) continue;
        char *value = settings[i].var == GT_VAR_OUTPUT ? absolute_template(settings[i].value)
                                                       : strdup(settings[i].value);
        if (!value) {
            gt_cli_error("out of memory");
            return GT_CLI_USAGE_ERROR;
        }
        setenv(gt_config_var_name(settings[i].var), value, 1);
        free(value);
    }
    if (no_gpu_timing) setenv(gt_config_var_name(GT_VAR_GPU_TIMING), "off", 1);
    if (settings[3].value && !settings[2].value && !getenv("GPUTRACE_OUTPUT"))
        gt_cli_error("note: --format has no effect without --output");
    const gt_config *cfg = check_configuration();
    if (cfg->output[0] && gt_cli_check_output_dir(cfg->output, cfg->verbosity == GT_VERB_NONE))
        return GT_CLI_USAGE_ERROR;
    gt_cli_snapshots_begin(cfg);
    pid_t child;
    int status;
    int rc = gt_cli_run(argv + optind, &child, &status);
    gt_cli_child_summary_print(child);
    if (cfg->verbosity != GT_VERB_NONE) gt_cli_say_if_no_cuda(argv[optind], child);
    gt_cli_snapshots_end(cfg, child, status);
    /* As the program ended: a shell loop stops on Ctrl-C, a parent sees
     * the signal. */
    if (child > 0 && WIFSIGNALED(status)) gt_cli_die_of(WTERMSIG(status));
    return rc;
}
