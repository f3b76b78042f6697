#!/usr/bin/env python3
"""The gputrace command (SPEC §9, §12): options mapped to the variables, the
preload set up, the program's exit status passed through (death by the
same signal for a signal, with no core dump of the command's own), signals
sent to gputrace passed on (stops mirrored, the program dying with the
command), bad usage answered with one line and status 2, the library found
next to the binary or in ../lib.

    cli_test.py GPUTRACE SHOW_ENV LIBRARY CASE [BUILD_DIR]
"""
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

GPUTRACE, SHOW_ENV, LIBRARY, CASE = sys.argv[1:5]
BUILD_DIR = sys.argv[5] if len(sys.argv) > 5 else None
LIBRARY = os.path.realpath(LIBRARY)
TIMEOUT = 60


def check(cond, what):
    if not cond:
        print("FAIL:", what)
        sys.exit(1)


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("GPUTRACE_") and k not in ("LD_PRELOAD", "NVTX_INJECTION64_PATH")}
    env.update(extra)
    return env


def no_core():
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


NO_CUDA = re.compile(r"gputrace: \S+ \(pid (\d+)\) made no CUDA calls; nothing recorded\n")


def run(args, env=None, cwd=None, gputrace=GPUTRACE, keep_no_cuda=False):
    """(status, stdout, stderr); the line that ends a run without CUDA (the
    programs here make none) is left out of stderr unless keep_no_cuda."""
    p = subprocess.run([gputrace] + args, env=env or clean_env(), cwd=cwd, capture_output=True,
                       timeout=TIMEOUT, preexec_fn=no_core)
    err = p.stderr.decode()
    return p.returncode, p.stdout.decode(), err if keep_no_cuda else NO_CUDA.sub("", err)


def variables(out):
    return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)


def case_mapping():
    with tempfile.TemporaryDirectory() as cwd:
        rc, out, err = run(["-v", "verbose", "-c", "kernel,memcpy", "-o", "out.%p",
                            "-f", "json,csv,perfetto", "--no-gpu-timing", "--", SHOW_ENV, "print"],
                           cwd=cwd)
        check(rc == 0 and err == "", f"status {rc}, stderr {err!r}")
        v = variables(out)
        check(v["GPUTRACE_VERBOSITY"] == "verbose", v)
        check(v["GPUTRACE_CATEGORIES"] == "kernel,memcpy", v)
        check(v["GPUTRACE_OUTPUT"] == os.path.join(os.path.realpath(cwd), "out.%p") or
              v["GPUTRACE_OUTPUT"] == os.path.join(cwd, "out.%p"), f"output {v}")
        check(v["GPUTRACE_FORMAT"] == "json,csv,perfetto", v)
        check(v["GPUTRACE_GPU_TIMING"] == "off", v)
        check(v["LD_PRELOAD"] == LIBRARY, f"LD_PRELOAD {v['LD_PRELOAD']} != {LIBRARY}")
        check(v["NVTX_INJECTION64_PATH"] == LIBRARY, v)
        check(v["GPUTRACE_LOG"] == "(unset)", v)

    # Long options with '=', absolute and %-led templates kept as given.
    rc, out, _ = run(["--verbosity=2", "--output=/tmp/x", "--categories", "all,-api",
                      SHOW_ENV, "print"])
    v = variables(out)
    check(rc == 0 and v["GPUTRACE_VERBOSITY"] == "2" and v["GPUTRACE_OUTPUT"] == "/tmp/x" and
          v["GPUTRACE_CATEGORIES"] == "all,-api", v)
    rc, out, _ = run(["-o", "/tmp/r.%q{HOME}", SHOW_ENV, "print"])
    check(variables(out)["GPUTRACE_OUTPUT"] == "/tmp/r.%q{HOME}", out)
    # A variable's value is one name, never a way elsewhere: with it the
    # template is still relative, so anchored in the working directory.
    rc, out, _ = run(["-o", "r.%q{HOME}", SHOW_ENV, "print"])
    check(variables(out)["GPUTRACE_OUTPUT"] == os.getcwd().replace("%", "%%") + "/r.%q{HOME}",
          out)

    # What the user exported stays, unless an option overrides it; the
    # preload goes in front of an existing one, once.
    env = clean_env(GPUTRACE_VERBOSITY="none", GPUTRACE_LOG="stdout",
                    LD_PRELOAD="/lib/other.so", NVTX_INJECTION64_PATH="/opt/nvtx.so")
    rc, out, _ = run([SHOW_ENV, "print"], env=env)
    v = variables(out)
    check(v["GPUTRACE_VERBOSITY"] == "none" and v["GPUTRACE_LOG"] == "stdout", v)
    check(v["LD_PRELOAD"] == LIBRARY + ":/lib/other.so", f"LD_PRELOAD {v['LD_PRELOAD']}")
    check(v["NVTX_INJECTION64_PATH"] == "/opt/nvtx.so", v)
    env["LD_PRELOAD"] = LIBRARY
    rc, out, _ = run(["-v", "default", SHOW_ENV, "print"], env=env)
    v = variables(out)
    check(v["LD_PRELOAD"] == LIBRARY and v["GPUTRACE_VERBOSITY"] == "default", v)
    rc, out, _ = run(["--no-nvtx", SHOW_ENV, "print"])
    check(variables(out)["NVTX_INJECTION64_PATH"] == "(unset)", out)

    # Capture windows and snapshots.
    rc, out, err = run(["--capture", "nvtx:train step@my lib", "--delay", "2.5", "--duration=0.75",
                        "--interval", "10", SHOW_ENV, "print"])
    v = variables(out)
    check(rc == 0 and err == "", f"capture options: status {rc}, stderr {err!r}")
    check(v["GPUTRACE_CAPTURE"] == "nvtx:train step@my lib" and v["GPUTRACE_DELAY"] == "2.5" and
          v["GPUTRACE_DURATION"] == "0.75" and v["GPUTRACE_INTERVAL"] == "10", v)
    # Call sites; a mode it does not know is a usage error.
    rc, out, err = run(["--callsites", "native", SHOW_ENV, "print"])
    check(rc == 0 and variables(out)["GPUTRACE_CALLSITES"] == "native", f"--callsites: {out}")
    rc, out, err = run(["--callsites", "lines", SHOW_ENV, "print"])
    check(rc == 2 and "--callsites" in err and "auto, python, native, all or off" in err,
          f"--callsites lines: status {rc}, stderr {err!r}")
    rc, out, _ = run([SHOW_ENV, "print"])
    v = variables(out)
    check(all(v[k] == "(unset)" for k in ("GPUTRACE_CAPTURE", "GPUTRACE_DELAY",
                                           "GPUTRACE_DURATION", "GPUTRACE_INTERVAL")), v)


def raw_status(args, cwd):
    """Runs gputrace with core dumps allowed, in cwd; its raw wait status."""
    def cores_allowed():
        resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    p = subprocess.Popen([GPUTRACE] + args, env=clean_env(), cwd=cwd, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, preexec_fn=cores_allowed)
    _, status = os.waitpid(p.pid, 0)
    p.returncode = 0  # reaped here
    return status


def case_status():
    for code in (0, 1, 42, 255):
        rc, _, err = run([SHOW_ENV, "exit", str(code)])
        check(rc == code and err == "", f"exit {code}: status {rc}, stderr {err!r}")
    # Death by the program's signal, as a parent sees it bare.
    for sig in (signal.SIGKILL, signal.SIGSEGV, signal.SIGUSR1, signal.SIGABRT, signal.SIGINT):
        rc, _, _ = run([SHOW_ENV, "raise", str(int(sig))])
        check(rc == -sig, f"death by {sig.name}: status {rc}")
    # No core dump of the command's own, whatever the limits.
    with tempfile.TemporaryDirectory() as cwd:
        status = raw_status([SHOW_ENV, "raise", str(int(signal.SIGSEGV))], cwd)
        check(os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGSEGV and
              not os.WCOREDUMP(status), f"SIGSEGV: wait status {status:#x}")
    # A program found through PATH; a shell script.
    rc, out, _ = run(["sh", "-c", "echo hi; exit 3"])
    check(rc == 3 and out == "hi\n", f"sh: {rc} {out!r}")


def state(pid):
    """The process's state letter (R, S, T, Z...); None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return None


def signal_state(pid):
    """What a failure needs to be understood: the process's signal masks and
    its process group and session (a stop sent into an orphaned process
    group is discarded by the kernel)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            masks = [l.replace("\t", " ") for l in f.read().splitlines()
                     if l.startswith(("SigPnd", "ShdPnd", "SigBlk", "SigIgn", "SigCgt"))]
        return f"{'; '.join(masks)}; pgrp {os.getpgid(pid)}, session {os.getsid(pid)}"
    except OSError as e:
        return str(e)


def wait_state(pid, wanted, what):
    """Waits until the process's state is among `wanted` (None: gone)."""
    deadline = time.monotonic() + TIMEOUT
    while state(pid) not in wanted and time.monotonic() < deadline:
        time.sleep(0.01)
    check(state(pid) in wanted, f"{what}: state {state(pid)!r}, expected one of {wanted} "
          f"({signal_state(pid)}; this test: pgrp {os.getpgrp()}, session {os.getsid(0)})")


GONE = (None, "Z", "X")


def own_group_no_core():
    os.setpgid(0, 0)
    no_core()


def start_waiting(mode="wait", own_group=False):
    """gputrace show_env MODE; returns it and the program's pid."""
    p = subprocess.Popen([GPUTRACE, SHOW_ENV, mode], env=clean_env(), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE,
                         preexec_fn=own_group_no_core if own_group else no_core)
    line = p.stdout.readline().split()
    check(len(line) == 2 and line[0] == b"ready", f"the program did not start: {line}")
    return p, int(line[1])


def ended(p, what):
    try:
        rc = p.wait(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        p.kill()
        check(False, f"{what}: gputrace did not end")
    p.stdout.close()
    p.stderr.close()
    return rc


def case_signals():
    """A signal sent to gputrace reaches the program, which dies of it, and
    gputrace with it."""
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1,
                signal.SIGUSR2, signal.SIGALRM, signal.SIGVTALRM, signal.SIGPIPE):
        p, pid = start_waiting()
        p.send_signal(sig)
        rc = ended(p, sig.name)
        check(rc == -sig, f"{sig.name}: status {rc}")
        wait_state(pid, GONE, f"{sig.name}: the program")

    # A hard kill of gputrace takes the program with it.
    p, pid = start_waiting()
    p.kill()
    ended(p, "SIGKILL")
    wait_state(pid, GONE, "SIGKILL of gputrace: the program")

    # A stop stops the program, then gputrace; SIGCONT goes on. In a process
    # group of their own, whose parent (this test) is in another group of
    # the session: the kernel discards SIGTSTP in an orphaned group, which
    # the one the test runs in may be, depending on what started it.
    p, pid = start_waiting(own_group=True)
    p.send_signal(signal.SIGTSTP)
    wait_state(pid, ("T",), "SIGTSTP: the program")
    wait_state(p.pid, ("T",), "SIGTSTP: gputrace")
    p.send_signal(signal.SIGCONT)
    wait_state(pid, ("S", "R"), "SIGCONT: the program")
    wait_state(p.pid, ("S", "R"), "SIGCONT: gputrace")
    p.send_signal(signal.SIGTERM)
    check(ended(p, "SIGTERM after SIGCONT") == -signal.SIGTERM, "SIGTERM after the stop")

    # A program driven by signals works as bare: a checkpoint per SIGUSR1.
    p, pid = start_waiting("checkpoint")
    for n in (1, 2):
        p.send_signal(signal.SIGUSR1)
        line = p.stdout.readline()
        check(line == f"checkpoint {n}\n".encode(), f"SIGUSR1 {n}: {line!r}")
    p.send_signal(signal.SIGTERM)
    check(ended(p, "checkpoint") == -signal.SIGTERM, "checkpoint: SIGTERM")


def case_shell_loop():
    """Ctrl-C in a shell loop of gputrace runs stops the loop, as it does
    bare: the terminal's SIGINT reaches the whole foreground group."""
    script = f"for i in 1 2 3; do {GPUTRACE} {SHOW_ENV} wait; echo next; done; echo after"
    p = subprocess.Popen(["bash", "-c", script], env=clean_env(), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=True, preexec_fn=no_core)
    line = p.stdout.readline().split()
    check(len(line) == 2 and line[0] == b"ready", f"the program did not start: {line}")
    os.killpg(p.pid, signal.SIGINT)
    try:
        out, _ = p.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        check(False, "the loop went on after Ctrl-C")
    check(p.returncode == -signal.SIGINT and out == b"",
          f"the shell: status {p.returncode}, output {out!r}")


def one_line_error(args, what, env=None):
    rc, out, err = run(args, env=env)
    check(rc == 2, f"{args}: status {rc}, want 2")
    check(out == "", f"{args}: stdout {out!r}")
    lines = err.splitlines()
    check(len(lines) == 1 and lines[0].startswith("gputrace: ") and what in lines[0],
          f"{args}: stderr {err!r}, want one line with {what!r}")


def case_usage():
    one_line_error([], "no program given")
    one_line_error(["--bogus", SHOW_ENV], "unknown option '--bogus'")
    one_line_error(["-x", SHOW_ENV], "unknown option '-x'")
    one_line_error(["-o"], "option '-o' needs a value")
    one_line_error(["-v", "loud", SHOW_ENV], "invalid --verbosity 'loud': expected none, default")
    one_line_error(["-c", "kernel,gpu", SHOW_ENV], "invalid --categories 'kernel,gpu'")
    one_line_error(["-f", "xml", SHOW_ENV], "invalid --format 'xml'")
    one_line_error(["-v", "", SHOW_ENV], "--verbosity needs a value")
    one_line_error(["--capture", "cudaProfilerApi", SHOW_ENV],
                   "invalid --capture 'cudaProfilerApi': expected all, profiler-api, nvtx:NAME")
    one_line_error(["--delay", "-1", SHOW_ENV], "invalid --delay '-1': expected seconds")
    one_line_error(["--duration", "0", SHOW_ENV], "invalid --duration '0': expected seconds above 0")
    one_line_error(["--interval", "0.01", SHOW_ENV], "invalid --interval '0.01': expected seconds")
    one_line_error(["-o", "   ", SHOW_ENV], "--output needs a value")
    one_line_error(["./no-such-program"], "./no-such-program: No such file or directory")
    one_line_error(["no-such-command-here"], "no-such-command-here: command not found")
    with tempfile.TemporaryDirectory() as d:
        script = os.path.join(d, "not-executable")
        open(script, "w").write("#!/bin/sh\n")
        one_line_error([script], "Permission denied")
        one_line_error([d], "not a program")
    rc, out, err = run(["--help"])
    check(rc == 0 and "usage: gputrace" in out and "examples:" in out and err == "", "--help")
    rc, out, _ = run(["--version"])
    check(rc == 0 and out.startswith("gputrace ") and out.count(".") == 2, f"--version {out!r}")
    # Options after the program are the program's.
    rc, out, _ = run([SHOW_ENV, "print", "-v", "bogus"])
    check(rc == 0 and variables(out)["GPUTRACE_VERBOSITY"] == "(unset)", out)


def case_layout():
    """Installed layout (bin/ and lib/) and side by side; neither: status 2."""
    with tempfile.TemporaryDirectory() as d:
        for rel in ("prefix/bin", "prefix/lib", "flat", "alone"):
            os.makedirs(os.path.join(d, rel))
        shutil.copy(GPUTRACE, os.path.join(d, "prefix/bin/gputrace"))
        shutil.copy(LIBRARY, os.path.join(d, "prefix/lib/libgputrace.so"))
        shutil.copy(GPUTRACE, os.path.join(d, "flat/gputrace"))
        shutil.copy(LIBRARY, os.path.join(d, "flat/libgputrace.so"))
        shutil.copy(GPUTRACE, os.path.join(d, "alone/gputrace"))
        real = os.path.realpath(d)
        for where, lib in (("prefix/bin", "prefix/lib"), ("flat", "flat")):
            rc, out, _ = run([SHOW_ENV, "print"], gputrace=os.path.join(d, where, "gputrace"))
            want = os.path.join(real, lib, "libgputrace.so")
            check(rc == 0 and variables(out)["LD_PRELOAD"] == want, f"{where}: {out}")
        rc, out, err = run([SHOW_ENV, "print"], gputrace=os.path.join(d, "alone/gputrace"))
        check(rc == 2 and out == "" and "cannot find libgputrace.so" in err, f"alone: {rc} {err}")


def case_install():
    """cmake --install puts the command in bin/ and the library in lib/."""
    with tempfile.TemporaryDirectory() as d:
        p = subprocess.run(["cmake", "--install", BUILD_DIR, "--prefix", d],
                           capture_output=True, timeout=TIMEOUT)
        check(p.returncode == 0, f"cmake --install: {p.stderr.decode()}")
        gputrace = os.path.join(d, "bin", "gputrace")
        check(os.access(gputrace, os.X_OK), "bin/gputrace")
        check(os.path.isfile(os.path.join(d, "lib", "libgputrace.so")), "lib/libgputrace.so")
        rc, out, _ = run([SHOW_ENV, "print"], gputrace=gputrace)
        want = os.path.join(os.path.realpath(d), "lib", "libgputrace.so")
        check(rc == 0 and variables(out)["LD_PRELOAD"] == want, out)


def case_first_hour():
    """Never silent: a run with no CUDA call ends with one line; the files
    written are named after the summary; %n numbers the runs; an unusable
    output directory is refused before the program runs."""
    emu = clean_env(LD_LIBRARY_PATH=os.path.join(BUILD_DIR, "emu", "lib"))
    app = os.path.join(BUILD_DIR, "tests", "apps", "rt_capi")
    rc, out, err = run([SHOW_ENV, "exit", "3"], keep_no_cuda=True)
    m = NO_CUDA.fullmatch(err)
    check(rc == 3 and m is not None, f"no CUDA: status {rc}, stderr {err!r}")
    check(os.path.basename(SHOW_ENV) in err, f"no CUDA: the program's name: {err!r}")
    rc, _, err = run(["-v", "none", SHOW_ENV, "exit", "0"], keep_no_cuda=True)
    check(rc == 0 and err == "", f"no CUDA at -v none: {err!r}")
    # CUDA in a process under the program counts as much as in the program.
    for cmd in ([app], ["sh", "-c", f"{app}; exit 0"]):
        rc, _, err = run(cmd, env=emu, keep_no_cuda=True)
        check(rc == 0 and "made no CUDA calls" not in err and "gputrace: " in err,
              f"{cmd}: status {rc}, stderr {err!r}")
    with tempfile.TemporaryDirectory() as d:
        for n in (1, 2):
            rc, _, err = run(["-o", os.path.join(d, "run.%n"), "-f", "text,json,csv", app],
                             env=emu)
            want = f"gputrace: wrote run.{n}.txt, run.{n}.json, run.{n}.csv in {d}\n"
            check(rc == 0 and err.endswith(want), f"run {n}: status {rc}, want {want!r} last in "
                  f"{err[-300:]!r}")
        check(sorted(os.listdir(d)) == [f"run.{n}.{e}" for n in (1, 2) for e in
                                        ("csv", "json", "txt")], os.listdir(d))
        rc, _, err = run(["-v", "none", "-o", os.path.join(d, "run.%n"), "-f", "json", app],
                         env=emu)
        check(rc == 0 and err == "" and os.path.isfile(os.path.join(d, "run.3.json")),
              f"-v none: {err!r} {os.listdir(d)}")
        open(os.path.join(d, "file"), "w").close()
        for where, why in (("nodir", "No such file or directory"), ("file", "not a directory")):
            tmpl = os.path.join(d, where, "run")
            one_line_error(["-o", tmpl, SHOW_ENV, "print"], f"cannot write report files in "
                           f"{os.path.join(d, where)}/: {why}")
            rc, out, err = run(["-v", "none", "-o", tmpl, SHOW_ENV, "print"])
            check(rc == 2 and out == "" and err == "", f"{where} at -v none: {rc} {err!r}")


CASES = {"first_hour": case_first_hour, "mapping": case_mapping, "status": case_status, "signals": case_signals,
         "shell_loop": case_shell_loop, "usage": case_usage, "layout": case_layout,
         "install": case_install}

if __name__ == "__main__":
    started = time.monotonic()
    CASES[CASE]()
    print(f"cli {CASE}: OK ({time.monotonic() - started:.1f} s)")
