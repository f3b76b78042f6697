/* SPEC §3 and later sections: the environment variables, parsed once at
 * load (config.c) and read-only after; the gputrace command parses them
 * with the same code. */
#ifndef GT_CONFIG_H
#define GT_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "checksum_mode.h"
#include "log.h"
#include "output_path.h"
#include "settings.h"

#define GT_FMT_BIT(f) (1u << (f)) /* f: enum gt_output_format (output_path.h) */

enum gt_config_var {
    GT_VAR_VERBOSITY,
    GT_VAR_CATEGORIES,
    GT_VAR_OUTPUT,
    GT_VAR_FORMAT,
    GT_VAR_GPU_TIMING,
    GT_VAR_LOG,
    GT_VAR_BUFFER_MB,
    GT_VAR_CAPTURE,
    GT_VAR_DELAY,
    GT_VAR_DURATION,
    GT_VAR_INTERVAL,
    GT_VAR_CUPTI_PATH,
    GT_VAR_CHECKSUM,
    GT_VAR_CALLSITES,
    GT_VAR_CALLSITES_SKIP,
    GT_VAR_COUNT
};

/* GPUTRACE_CAPTURE: enum gt_capture_mode (settings.h;
 * shim/process/capture_window.h says what each records). */
#define GT_CAPTURE_NAME_MAX 1024u /* bytes of an NVTX range name or domain, NUL included */
/* Seconds in GPUTRACE_DELAY, _DURATION and _INTERVAL: at most this many
 * (a year), with up to 9 decimals (nanoseconds). */
#define GT_SECONDS_MAX 31536000u
#define GT_INTERVAL_MIN_NS 100000000u /* snapshots at most ten times a second */

#define GT_PATH_MAX 4096 /* paths (with their NUL) longer than this are refused */
#define GT_BUFFER_MB_DEFAULT 64u
#define GT_BUFFER_MB_MIN 1u
#define GT_BUFFER_MB_MAX 16384u
#define GT_WARNING_MAX 640    /* one warning line, NUL included */
#define GT_SHOWN_VALUE_MAX 64 /* bytes of a bad value quoted in its warning */
#define GT_CALLSITES_SKIP_MAX 1024u /* GPUTRACE_CALLSITES_SKIP, NUL included */

typedef struct gt_config {
    unsigned categories; /* GT_CAT_BIT mask */
    enum gt_verbosity verbosity;
    enum gt_gpu_timing gpu_timing;
    unsigned formats; /* GT_FMT_BIT mask; used only with an output template */
    enum gt_log_dest log_dest;
    size_t buffer_bytes;
    char output[GT_PATH_MAX]; /* report file template; "" = no files */
    char log_path[GT_PATH_MAX];
    char cupti_path[GT_PATH_MAX]; /* GPUTRACE_CUPTI_PATH; "" = found as DESIGN §5 says */
    enum gt_capture_mode capture;
    /* nvtx:NAME[@DOMAIN]: the range's name and domain; "" for the default
     * domain, "*" for any. */
    char capture_name[GT_CAPTURE_NAME_MAX];
    char capture_domain[GT_CAPTURE_NAME_MAX];
    uint64_t delay_ns;    /* recording starts this long after load */
    uint64_t duration_ns; /* and lasts this long; 0: unlimited */
    uint64_t interval_ns; /* snapshots of the report files; 0: none */

    gt_checksum_mode checksum; /* GPUTRACE_CHECKSUM */
    enum gt_callsites callsites;
    /* GPUTRACE_CALLSITES_SKIP: Python packages whose frames are not the
     * user's, beyond those the library knows (shim/callsite/python_paths.c),
     * as a comma list without blanks; "" for none. */
    char callsites_skip[GT_CALLSITES_SKIP_MAX];
    /* One line per rejected variable (at most one each), without newline,
     * kept until the log is set up so that they go where GPUTRACE_LOG says. */
    unsigned n_warnings;
    char warnings[GT_VAR_COUNT][GT_WARNING_MAX];
    uint8_t warning_var[GT_VAR_COUNT]; /* the enum gt_config_var each warning is about */
} gt_config;

typedef const char *(*gt_getenv_fn)(const char *name, void *ctx);

/* Fills *cfg from the variables `get` returns (NULL = unset). Never fails:
 * a bad value leaves the default and adds a warning line. */
void gt_config_parse(gt_config *cfg, gt_getenv_fn get, void *ctx);

const char *gt_config_var_name(enum gt_config_var v);

/* config_warnings.c. The gputrace command checks the variables once and
 * gives their warnings; it lists the values it checked in
 * GPUTRACE_CONFIG_CHECKED (gt_config_checked_list), so that no process
 * under it repeats a warning about a value it still has. */
#define GT_CONFIG_CHECKED_VAR "GPUTRACE_CONFIG_CHECKED"
/* With --interval, the command's path template for the summary of each
 * snapshot (cli/snapshot_finish.c, shim/sink/snapshot_summary.c). */
#define GT_SNAPSHOT_SUMMARY_VAR "GPUTRACE_SNAPSHOT_SUMMARY"
/* Set by the command in its child: "PID:PATH", the file where process PID
 * leaves its final summary for the command to print once it has ended
 * (cli/child_summary.c, shim/sink/command_summary.c). */
#define GT_CHILD_SUMMARY_VAR "GPUTRACE_CHILD_SUMMARY"
/* Made in that file's directory by the first CUDA call of any process
 * under the command, so that the command can say when none made one. */
#define GT_CUDA_MARK_NAME "cuda-used"
#define GT_CONFIG_CHECKED_MAX (GT_VAR_COUNT * 17) /* a 16-hex-digit hash and a comma each */

/* The list of the values the variables have now (NUL-terminated). */
void gt_config_checked_list(gt_getenv_fn get, void *ctx, char out[GT_CONFIG_CHECKED_MAX]);

/* Writes cfg's warning lines to the log (gt_log_init first) unless its
 * verbosity is none, except those about a value that `get` shows already
 * checked (listed in its GPUTRACE_CONFIG_CHECKED). */
void gt_config_give_warnings(const gt_config *cfg, gt_getenv_fn get, void *ctx);

/* The process's configuration. Hooks read gt_cfg.categories and
 * gt_cfg.gpu_timing directly: plain loads, written once before any thread
 * of the shim exists. */
extern gt_config gt_cfg;

#endif
