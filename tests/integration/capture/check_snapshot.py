#!/usr/bin/env python3
"""Reports of runs that never end cleanly: capture_prog serve and crash with
GPUTRACE_INTERVAL snapshots.

check_snapshot.py --lib LIB --prog PROG --cli CLI --emu-dir DIR CASE

  kill       preloaded, --interval 0.3: SIGKILL after two intervals leaves
             a snapshot (final false, taken after 0.6 s) with at least the
             first interval's launches and no more than were made, the
             text saying the process was still running, and no other file.
  kill_cli   the same under the gputrace command: the command marks the
             snapshot final with signal 9, in the JSON and the text, and
             prints its summary with that line; it dies of SIGKILL too;
             its private directory is gone.
  kill_cli_percent  the same with a TMPDIR whose name has % signs in it.
  segv_cli   a program that dies of SIGSEGV after a snapshot, under the
             command: death by SIGSEGV, the report final and naming signal 11
             (made by the library as the process died, so the command
             leaves it), the summary printed once.
  term_cli   a server run until SIGTERM, under the command with snapshots:
             its own final report (signal 15) with every launch it made,
             which the command leaves as it is.
"""
import json
import os
import resource
import select
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from capture_cases import run_case  # noqa: E402
from verdict import check  # noqa: E402

LAUNCHES = 5
INTERVAL = 0.3
TIMEOUT = 30


def no_core():
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def env_for(args, tmp, **extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("GPUTRACE_") and k not in ("LD_PRELOAD", "NVTX_INJECTION64_PATH")}
    env["LD_LIBRARY_PATH"] = args.emu_dir
    env["GPUTRACE_EMU_KERNEL_NS"] = "vec_add=100000"
    env["TMPDIR"] = tmp
    env.update(extra)
    return env


def start(args, out, mode, cli, tmp_name="tmp"):
    template = os.path.join(out, "rep")
    tmp = os.path.join(out, tmp_name)
    os.makedirs(tmp, exist_ok=True)
    if cli:
        cmd = [args.cli, "--interval", str(INTERVAL), "-o", template, "-f", "json,text",
               args.prog, mode, str(LAUNCHES)]
        env = env_for(args, tmp)
    else:
        cmd = [args.prog, mode, str(LAUNCHES)]
        env = env_for(args, tmp, LD_PRELOAD=args.lib, GPUTRACE_INTERVAL=str(INTERVAL),
                      GPUTRACE_OUTPUT=template, GPUTRACE_FORMAT="json,text")
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, preexec_fn=no_core)
    return p, template, tmp


def read_line(p, deadline):
    ready, _, _ = select.select([p.stdout], [], [], max(0.0, deadline - time.monotonic()))
    return p.stdout.readline().strip() if ready else ""


def load(template):
    with open(template + ".json") as f:
        rep = json.load(f)
    with open(template + ".txt") as f:
        text = f.read()
    return rep, text


def launches(rep):
    return sum(k["calls"] for k in rep["kernels"] if k["name"] == "vec_add")


def serve_then_kill(args, out, cli, tmp_name="tmp"):
    """Runs serve, SIGKILLs it after two intervals; returns what is needed."""
    p, template, tmp = start(args, out, "serve", cli, tmp_name)
    t0 = time.monotonic()
    first = read_line(p, t0 + TIMEOUT)
    pid = int(first.split()[-1]) if first.startswith("serving pid ") else 0
    batches = 0
    while time.monotonic() < t0 + 2 * INTERVAL + 0.25:
        if read_line(p, t0 + TIMEOUT).startswith("batch "):
            batches += 1
    check(pid > 0 and os.path.exists(template + ".json"),
          f"no snapshot after two intervals (pid line {first!r})")
    os.kill(pid, signal.SIGKILL)
    rest, err = p.communicate(timeout=TIMEOUT)
    batches += rest.count("batch ")
    return p, template, tmp, pid, batches, err


def expect_snapshot_of(rep, pid, batches, what):
    check(rep["process"]["pid"] == pid, f"{what}: the report of pid {rep['process']['pid']}")
    snap = rep["snapshot"]
    since = snap["at_ns"] - rep["process"]["start_ns"]
    check(since >= 2 * INTERVAL * 1e9 - 5e7, f"{what}: the last snapshot at +{since} ns")
    got = launches(rep)
    # The first interval held at least its batches (one every 100 ms).
    first = LAUNCHES * int(INTERVAL / 0.1)
    check(first <= got <= LAUNCHES * batches,
          f"{what}: {got} launches, expected {first} to {LAUNCHES * batches}")
    return snap


def case_kill(args, out):
    p, template, _, pid, batches, _ = serve_then_kill(args, out, cli=False)
    check(p.returncode == -signal.SIGKILL, f"kill: status {p.returncode}")
    rep, text = load(template)
    snap = expect_snapshot_of(rep, pid, batches, "kill")
    check(snap == {"at_ns": snap["at_ns"], "final": False, "signal": 0}, f"kill: snapshot {snap}")
    line = text.splitlines()[1]
    check(line.startswith(f"gputrace: snapshot of pid {pid} at +") and
          "the process was still running" in line, f"kill: text line {line!r}")
    files = sorted(os.listdir(out))
    check(files == ["rep.json", "rep.txt", "tmp"], f"kill: files left {files}")


def case_kill_cli(args, out, tmp_name="tmp"):
    p, template, tmp, pid, batches, err = serve_then_kill(args, out, cli=True, tmp_name=tmp_name)
    check(p.returncode == -signal.SIGKILL, f"kill_cli: status {p.returncode}")
    rep, text = load(template)
    snap = expect_snapshot_of(rep, pid, batches, "kill_cli")
    check(snap["final"] is True and snap["signal"] == 9, f"kill_cli: snapshot {snap}")
    died = f"gputrace: pid {pid} died of signal 9 (SIGKILL) after this snapshot at +"
    check(text.splitlines()[1].startswith(died), f"kill_cli: text {text.splitlines()[1]!r}")
    check(died in err and "vec_add" in err, f"kill_cli: no summary printed: {err!r}")
    check(not os.listdir(tmp), f"kill_cli: left in TMPDIR {os.listdir(tmp)}")


def case_kill_cli_percent(args, out):
    case_kill_cli(args, out, tmp_name="tmp%p%%h%q{HOME}%")


def case_segv_cli(args, out):
    p, template, tmp = start(args, out, "crash", cli=True)
    _, err = p.communicate(timeout=TIMEOUT)
    check(p.returncode == -signal.SIGSEGV, f"segv_cli: status {p.returncode}: {err}")
    rep, text = load(template)
    pid = rep["process"]["pid"]
    check(rep["snapshot"]["final"] is True and rep["snapshot"]["signal"] == 11,
          f"segv_cli: snapshot {rep['snapshot']}")
    check(launches(rep) == LAUNCHES, f"segv_cli: {launches(rep)} launches")
    ended = f"gputrace: pid {pid} ended on signal 11 (SIGSEGV): this report was made then"
    check(text.splitlines()[1] == ended, f"segv_cli: text {text.splitlines()[1]!r}")
    check(err.count(ended) == 1 and "vec_add" in err and "died of" not in err,
          f"segv_cli: summary {err!r}")
    check(not any(a["rule"] == "leak" for a in rep["advice"]),
          "segv_cli: memory held at the snapshot called a leak")
    check(not os.listdir(tmp), f"segv_cli: left in TMPDIR {os.listdir(tmp)}")


def case_term_cli(args, out):
    p, template, tmp = start(args, out, "serve", cli=True)
    t0 = time.monotonic()
    batches = 0
    while batches < 8:
        line = read_line(p, t0 + TIMEOUT)
        if not line:
            break
        batches += line.startswith("batch ")
    # Right after a batch: the server sleeps 100 ms before the next.
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=TIMEOUT)
    check(p.returncode == -signal.SIGTERM, f"term_cli: status {p.returncode}")
    rep, text = load(template)
    check(rep["snapshot"]["final"] is True and rep["snapshot"]["signal"] == 15,
          f"term_cli: snapshot {rep['snapshot']}")
    check(launches(rep) == LAUNCHES * batches,
          f"term_cli: {launches(rep)} launches, {LAUNCHES * batches} made")
    check("died of" not in text and "snapshot of pid" not in text, "term_cli: text says snapshot")
    check(err.count("gputrace: ") >= 1 and "died of" not in err, f"term_cli: summary {err!r}")
    check(not os.listdir(tmp), f"term_cli: left in TMPDIR {os.listdir(tmp)}")


CASES = {"kill": case_kill, "kill_cli": case_kill_cli,
         "kill_cli_percent": case_kill_cli_percent, "segv_cli": case_segv_cli,
         "term_cli": case_term_cli}


if __name__ == "__main__":
    sys.exit(run_case(CASES))
