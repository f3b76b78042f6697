/* Snapshots (GPUTRACE_INTERVAL): a report made while the process runs says
 * so, and the gputrace command, which sees how its child ended, turns the
 * last one into the final report when the child died of a signal. The
 * forms written here are the ones the command looks for: the JSON's last
 * key, "snapshot", written compact, and one line of the text after the
 * header. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregate.h"
#include "callsite_table.h"
#include "format.h"
#include "memory_table.h"
#include "report.h"

#define JSON_KEY "\"snapshot\": {\"at_ns\": "
#define JSON_RUNNING ", \"final\": false, \"signal\": 0}"

void gt_report_set_snapshot(gt_report *r, uint64_t at_ns, bool final, int signal)
{
    r->snapshot = (gt_snapshot_info){.at_ns = at_ns, .final = final, .signal = signal, .set = true};
}

void gt_report_snapshot(const gt_report *r, const gt_process_info *p, gt_snapshot_info *out)
{
    if (r->snapshot.set) {
        *out = r->snapshot;
        return;
    }
    *out = (gt_snapshot_info){.at_ns = p ? p->end_ns : 0, .final = true};
}

void gt_report_settle(gt_report *r)
{
    gt_memory_finish(&r->memory);
    gt_callsites_settle(&r->callsites);
}

const char *gt_signal_name(int sig)
{
    switch (sig) {
    case SIGHUP:
        return "SIGHUP";
    case SIGINT:
        return "SIGINT";
    case SIGQUIT:
        return "SIGQUIT";
    case SIGILL:
        return "SIGILL";
    case SIGTRAP:
        return "SIGTRAP";
    case SIGABRT:
        return "SIGABRT";
    case SIGBUS:
        return "SIGBUS";
    case SIGFPE:
        return "SIGFPE";
    case SIGKILL:
        return "SIGKILL";
    case SIGUSR1:
        return "SIGUSR1";
    case SIGSEGV:
        return "SIGSEGV";
    case SIGUSR2:
        return "SIGUSR2";
    case SIGPIPE:
        return "SIGPIPE";
    case SIGALRM:
        return "SIGALRM";
    case SIGTERM:
        return "SIGTERM";
    case SIGXCPU:
        return "SIGXCPU";
    case SIGXFSZ:
        return "SIGXFSZ";
    case SIGSYS:
        return "SIGSYS";
    default:
        return "a signal";
    }
}

/* The line for a snapshot taken at `at` (len bytes, "2.00 s"): still
 * running, or (died_of) as the command finishes it. */
static int line_at(char *buf, size_t cap, int pid, const char *at, int len, int died_of)
{
    if (died_of)
        return snprintf(buf, cap,
                        "gputrace: pid %d died of signal %d (%s) after this snapshot at +%.*s: "
                        "what it did after that is not in this report\n",
                        pid, died_of, gt_signal_name(died_of), len, at);
    return snprintf(buf, cap,
                    "gputrace: snapshot of pid %d at +%.*s; the process was still running: what "
                    "it did after that is not in this report\n",
                    pid, len, at);
}

int gt_snapshot_line(char *buf, size_t cap, int pid, uint64_t since_start_ns, int died_of)
{
    char at[GT_FORMAT_CAP];
    gt_format_ns(since_start_ns, at, sizeof at);
    return line_at(buf, cap, pid, at, (int)strlen(at), died_of);
}

/* The first or last occurrence of needle in [s, s + len), NULL when none. */
static const char *find(const char *s, size_t len, const char *needle, bool last)
{
    size_t n = strlen(needle);
    if (len < n) return NULL;
    for (size_t k = 0; k <= len - n; k++) {
        size_t i = last ? len - n - k : k;
        if (memcmp(s + i, needle, n) == 0) return s + i;
    }
    return NULL;
}

char *gt_snapshot_json_finish(const char *json, size_t len, int pid, int sig, size_t *out_len)
{
    /* The process's own report: its pid is the report's first "pid". */
    char want_pid[40];
    snprintf(want_pid, sizeof want_pid, "\"pid\": %d,", pid);
    const char *first_pid = find(json, len, "\"pid\": ", false);
    if (!first_pid || (size_t)(json + len - first_pid) < strlen(want_pid) ||
        memcmp(first_pid, want_pid, strlen(want_pid)) != 0)
        return NULL;
    const char *key = find(json, len, JSON_KEY, true);
    if (!key) return NULL;
    const char *p = key + strlen(JSON_KEY), *end = json + len;
    while (p < end && *p >= '0' && *p <= '9')
        p++;
    size_t running = strlen(JSON_RUNNING);
    if (p == key + strlen(JSON_KEY) || (size_t)(end - p) < running ||
        memcmp(p, JSON_RUNNING, running) != 0)
        return NULL; /* not a snapshot (a final report), or not one this writer made */
    char died[64];
    int n = snprintf(died, sizeof died, ", \"final\": true, \"signal\": %d}", sig);
    size_t head = (size_t)(p - json), tail = (size_t)(end - p) - running;
    char *out = malloc(head + (size_t)n + tail + 1);
    if (!out) return NULL;
    memcpy(out, json, head);
    memcpy(out + head, died, (size_t)n);
    memcpy(out + head + (size_t)n, p + running, tail);
    *out_len = head + (size_t)n + tail;
    out[*out_len] = '\0';
    return out;
}

char *gt_snapshot_text_finish(const char *text, size_t len, int pid, int sig, size_t *out_len)
{
    char prefix[64];
    int np = snprintf(prefix, sizeof prefix, "\ngputrace: snapshot of pid %d at +", pid);
    const char *line = find(text, len, prefix, false);
    if (!line) return NULL;
    line++; /* after the header's newline */
    const char *end = memchr(line, '\n', (size_t)(text + len - line));
    const char *at = line + np - 1, *semi = end ? memchr(at, ';', (size_t)(end - at)) : NULL;
    if (!semi || semi - at >= GT_FORMAT_CAP) return NULL;
    char died[512];
    int nd = line_at(died, sizeof died, pid, at, (int)(semi - at), sig);
    if (nd < 0 || (size_t)nd >= sizeof died) return NULL;
    size_t head = (size_t)(line - text), tail = (size_t)(text + len - (end + 1));
    char *out = malloc(head + (size_t)nd + tail + 1);
    if (!out) return NULL;
    memcpy(out, text, head);
    memcpy(out + head, died, (size_t)nd);
    memcpy(out + head + (size_t)nd, end + 1, tail);
    *out_len = head + (size_t)nd + tail;
    out[*out_len] = '\0';
    return out;
}
