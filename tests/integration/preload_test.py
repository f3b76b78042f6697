#!/usr/bin/env python3
"""Preloads libgputrace.so into a program with no CUDA in it and checks that
nothing about the program changes: stdout, exit status (a signal included),
and stderr (nothing there unless asked). One case per invocation:

    preload_test.py LIB PROG CASE
"""
import json
import os
import signal
import subprocess
import sys
import tempfile

LIB, PROG, CASE = sys.argv[1], sys.argv[2], sys.argv[3]
TIMEOUT = 60


def base_env():
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUTRACE_")}
    env.pop("LD_PRELOAD", None)
    return env


def run(args, preload, **gputrace):
    env = base_env()
    if preload:
        env["LD_PRELOAD"] = LIB
    env.update({"GPUTRACE_" + k.upper(): v for k, v in gputrace.items()})
    p = subprocess.run([PROG] + args, env=env, capture_output=True, timeout=TIMEOUT)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def check(cond, what):
    if not cond:
        print("FAIL:", what)
        sys.exit(1)


def same_as_bare(args, **gputrace):
    """Runs bare and preloaded; stdout and status must match. Returns the
    preloaded run."""
    bare = run(args, False)
    shim = run(args, True, **gputrace)
    check(bare[2] == "", "the bare program wrote to stderr: %r" % bare[2])
    check(shim[0] == bare[0], "%s %s: status %d under the shim, %d bare" % (args, gputrace, shim[0], bare[0]))
    check(shim[1] == bare[1], "%s %s: stdout differs:\n%s\n---\n%s" % (args, gputrace, shim[1], bare[1]))
    return shim


def quiet(args, **gputrace):
    shim = same_as_bare(args, **gputrace)
    check(shim[2] == "", "%s %s: stderr not empty: %r" % (args, gputrace, shim[2]))


def summary_lines(stderr):
    return [l for l in stderr.splitlines() if l.startswith("gputrace: ") and " | wall " in l]


def case_threads():
    for verbosity in ("none", "default", "verbose"):
        quiet(["threads", "8", "3"], verbosity=verbosity)
    quiet(["threads", "8", "0"])
    # debug: a report even without CUDA, and the program still unchanged
    shim = same_as_bare(["threads", "4", "0"], verbosity="debug")
    check(len(summary_lines(shim[2])) == 1, "one summary at debug: %r" % shim[2])


def reports_in(d):
    out = []
    for name in sorted(os.listdir(d)):
        if name.endswith(".json"):
            with open(os.path.join(d, name)) as f:
                out.append(json.load(f))
    return out


def case_fork():
    quiet(["fork"])
    with tempfile.TemporaryDirectory() as d:
        quiet(["fork"], output=os.path.join(d, "r.%p"))
        check(os.listdir(d) == [], "no files without CUDA: %r" % os.listdir(d))
        shim = same_as_bare(["fork"], verbosity="debug", output=os.path.join(d, "r.%p"))
        reports = reports_in(d)
        check(len(reports) == 2, "a report each for parent and child: %r" % os.listdir(d))
        pids = {r["process"]["pid"] for r in reports}
        check(len(pids) == 2, "distinct pids: %r" % pids)
        child = [r for r in reports if r["process"]["ppid"] in pids]
        check(len(child) == 1, "the child's ppid is the parent's pid")
        for r in reports:
            check(r["totals"]["events"] == 0 and r["totals"]["dropped"] == 0,
                  "no events in either: %r" % r["totals"])
        check(len(summary_lines(shim[2])) == 2, "two summaries: %r" % shim[2])


def case_sigterm():
    for verbosity in ("none", "default"):
        shim = same_as_bare(["sigterm"], verbosity=verbosity)
        check(shim[0] == -signal.SIGTERM, "killed by SIGTERM: %d" % shim[0])
        check(shim[2] == "", "stderr empty: %r" % shim[2])
    with tempfile.TemporaryDirectory() as d:
        shim = same_as_bare(["sigterm"], verbosity="debug", output=os.path.join(d, "r"))
        check("gputrace: debug: report made on signal 15" in shim[2], "report on signal: %r" % shim[2])
        check(len(summary_lines(shim[2])) == 1, "the summary before death: %r" % shim[2])
        reports = reports_in(d)
        check(len(reports) == 1 and reports[0]["tool"] == "gputrace", "the JSON report was written")


def case_handler():
    for verbosity in ("default", "debug"):
        shim = same_as_bare(["handler"], verbosity=verbosity)
        check(shim[0] == 7 and "caught SIGTERM" in shim[1], "the program's handler ran: %r" % (shim,))


def case_dispositions():
    bare = run(["dispositions"], False)
    check("SIGTERM default" in bare[1], "bare dispositions: %r" % bare[1])
    quiet(["dispositions"])
    # dispositions the program inherited are left alone
    env = base_env()
    env["LD_PRELOAD"] = LIB
    cmd = "trap '' INT; exec %s dispositions" % PROG
    shim = subprocess.run(["sh", "-c", cmd], env=env, capture_output=True, timeout=TIMEOUT)
    check(b"SIGINT ignored" in shim.stdout, "an ignored SIGINT stays ignored: %r" % shim.stdout)


def case_exits():
    # _exit makes its report first, as every other way out does
    for mode in ("exit", "return", "_exit", "thread-exit"):
        quiet([mode])
        shim = same_as_bare([mode], verbosity="debug")
        check(len(summary_lines(shim[2])) == 1, "%s: one summary at debug: %r" % (mode, shim[2]))


def case_command():
    # The report's command line is whole, however long (30,000 arguments).
    args = ["exit"] + ["argument-%05d" % i for i in range(30000)]
    with tempfile.TemporaryDirectory() as d:
        same_as_bare(args, verbosity="debug", output=os.path.join(d, "r"))
        reports = reports_in(d)
        check(len(reports) == 1, "one report: %r" % os.listdir(d))
        got = reports[0]["process"]["command"]
        want = " ".join([PROG] + args)
        check(got == want, "command of %d bytes, expected %d: ...%r" % (len(got), len(want), got[-40:]))


WARNINGS = [
    "gputrace: warning: GPUTRACE_VERBOSITY='loud' ignored: expected none, default, verbose, debug or 0-3",
    "gputrace: warning: GPUTRACE_FORMAT='json,xml' ignored: expected a comma list of text, json, csv, chrome, perfetto",
    "gputrace: warning: GPUTRACE_BUFFER_MB='\\x1b[2J0' ignored: expected a whole number of MiB from 1 to 16384",
]


def case_bad_config():
    shim = same_as_bare(["threads", "2", "0"], verbosity="loud", format="json,xml", buffer_mb="\x1b[2J0")
    check(shim[2].splitlines() == WARNINGS, "exactly one line per bad variable:\n%s" % shim[2])
    with tempfile.TemporaryDirectory() as d:
        log = os.path.join(d, "log")
        shim = same_as_bare(["fork"], verbosity="debug", log=log, gpu_timing="sometimes")
        check(shim[2] == "", "all on the log file: %r" % shim[2])
        with open(log) as f:
            lines = f.read().splitlines()
        check(lines[0] == "gputrace: warning: GPUTRACE_GPU_TIMING='sometimes' ignored: expected auto, cupti, events or off",
              "the warning first: %r" % lines[:2])
        check(len(summary_lines("\n".join(lines))) == 2, "parent and child both append: %r" % lines)


CASES = {name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}
if CASE not in CASES:
    print("unknown case", CASE)
    sys.exit(2)
CASES[CASE]()
print("ok:", CASE)
