#!/usr/bin/env python3
"""Fatal signals under libgputrace.so: capture_prog's crash modes, bare and
preloaded, each in a directory of its own with core dumps allowed.

check_fatal.py --lib LIB --prog PROG --cli CLI --emu-dir DIR CASE

  segv, fpe, abort  the process dies of the signal with and without the
                    shim: same wait status (signal, core dump flag), a core
                    file in both directories or in neither, the same output;
                    under the shim a final report naming the signal, with
                    every launch, made within the bound (GPUTRACE's fatal
                    wait, 1 s) of the fault.
  handled           the program's own SIGSEGV handler: sigaction reports the
                    default disposition before it is installed, and the
                    handler runs as bare (its output, exit status 3).
  bound             the log blocks the final report (a FIFO whose pipe is
                    full): the process still dies of SIGSEGV, 1 s after the
                    fault and not much later.
"""
import json
import os
import resource
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from capture_cases import run_case  # noqa: E402
from verdict import check  # noqa: E402

LAUNCHES = 5
SLEEP = 0.7       # the program's pause between "ready" and the fault
FATAL_WAIT = 1.0  # GT_FATAL_WAIT_MS
TIMEOUT = 30


def env_for(args, **extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("GPUTRACE_") and k not in ("LD_PRELOAD", "NVTX_INJECTION64_PATH")}
    env["LD_LIBRARY_PATH"] = args.emu_dir
    env["GPUTRACE_EMU_KERNEL_NS"] = "vec_add=100000"
    env.update(extra)
    return env


def spawn(args, mode, cwd, env):
    """Runs the program in cwd with core dumps allowed; returns (wait status,
    stdout, seconds from "ready" to its end)."""
    out_path = os.path.join(cwd, "stdout")
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.chdir(cwd)
            resource.setrlimit(resource.RLIMIT_CORE,
                               (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
            os.close(read_fd)
            os.dup2(write_fd, 1)
            err = os.open(os.path.join(cwd, "stderr"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            os.dup2(err, 2)
            os.execve(args.prog, [args.prog, mode, str(LAUNCHES)], env)
        finally:
            os._exit(127)
    os.close(write_fd)
    out = b""
    ready_at = None
    with os.fdopen(read_fd, "rb") as r:
        for line in r:
            out += line
            if line == b"ready\n":
                ready_at = time.monotonic()
    _, status = os.waitpid(pid, 0)
    elapsed = time.monotonic() - ready_at if ready_at else None
    with open(out_path, "wb") as f:
        f.write(out)
    return status, out.decode(), elapsed


def cores(cwd):
    return any(name.startswith("core") for name in os.listdir(cwd))


def bare_and_traced(args, out, mode):
    runs = {}
    for how in ("bare", "traced"):
        cwd = os.path.join(out, how)
        os.makedirs(cwd)
        extra = {} if how == "bare" else {
            "LD_PRELOAD": args.lib, "GPUTRACE_OUTPUT": os.path.join(cwd, "rep"),
            "GPUTRACE_FORMAT": "json,text"}
        runs[how] = (cwd,) + spawn(args, mode, cwd, env_for(args, **extra))
    return runs


def fatal(args, out, mode, sig):
    runs = bare_and_traced(args, out, mode)
    (bare_dir, bare, bare_out, _), (dir_, traced, traced_out, elapsed) = runs["bare"], runs["traced"]
    check(os.WIFSIGNALED(bare) and os.WTERMSIG(bare) == sig,
          f"{mode}: bare status {bare:#x}, expected death by {sig}")
    check(traced == bare, f"{mode}: wait status {traced:#x} traced, {bare:#x} bare")
    check(cores(dir_) == cores(bare_dir),
          f"{mode}: core file traced {cores(dir_)}, bare {cores(bare_dir)}")
    check(traced_out == bare_out, f"{mode}: output {traced_out!r}, bare {bare_out!r}")
    check(elapsed is not None and elapsed < SLEEP + FATAL_WAIT + 0.5,
          f"{mode}: died {elapsed} s after ready")
    with open(os.path.join(dir_, "rep.json")) as f:
        rep = json.load(f)
    with open(os.path.join(dir_, "rep.txt")) as f:
        text = f.read()
    pid = rep["process"]["pid"]
    check(rep["snapshot"]["final"] is True and rep["snapshot"]["signal"] == sig,
          f"{mode}: snapshot {rep['snapshot']}")
    launches = sum(k["calls"] for k in rep["kernels"] if k["name"] == "vec_add")
    check(launches == LAUNCHES, f"{mode}: {launches} launches")
    line = (f"gputrace: pid {pid} ended on signal {sig} ({signal.Signals(sig).name}): "
            "this report was made then")
    check(text.splitlines()[1] == line, f"{mode}: text line {text.splitlines()[1]!r}")
    with open(os.path.join(dir_, "stderr")) as f:
        check(line in f.read(), f"{mode}: no summary on stderr")


def case_segv(args, out):
    fatal(args, out, "crash", signal.SIGSEGV)


def case_fpe(args, out):
    fatal(args, out, "crash_fpe", signal.SIGFPE)


def case_abort(args, out):
    fatal(args, out, "crash_abort", signal.SIGABRT)


def case_handled(args, out):
    runs = bare_and_traced(args, out, "crash_handled")
    (_, bare, bare_out, _), (_, traced, traced_out, _) = runs["bare"], runs["traced"]
    check(os.WIFEXITED(bare) and os.WEXITSTATUS(bare) == 3, f"handled: bare status {bare:#x}")
    check(traced == bare, f"handled: status {traced:#x} traced, {bare:#x} bare")
    check(bare_out == "default handler before: 1\nready\nown handler\n",
          f"handled: bare output {bare_out!r}")
    check(traced_out == bare_out, f"handled: output {traced_out!r}")


def case_bound(args, out):
    fifo = os.path.join(out, "log")
    os.mkfifo(fifo)
    fd = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
    try:
        while True:
            os.write(fd, b"x" * 4096)
    except BlockingIOError:
        pass  # full: the shim's summary cannot be written
    cwd = os.path.join(out, "run")
    os.makedirs(cwd)
    status, _, elapsed = spawn(args, "crash", cwd,
                               env_for(args, LD_PRELOAD=args.lib, GPUTRACE_LOG=fifo))
    os.close(fd)
    check(os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGSEGV,
          f"bound: status {status:#x}")
    check(elapsed is not None and SLEEP + FATAL_WAIT - 0.05 <= elapsed < SLEEP + FATAL_WAIT + 1.0,
          f"bound: died {elapsed} s after ready, expected {SLEEP + FATAL_WAIT} s")


CASES = {"segv": case_segv, "fpe": case_fpe, "abort": case_abort, "handled": case_handled,
         "bound": case_bound}

if __name__ == "__main__":
    sys.exit(run_case(CASES))
