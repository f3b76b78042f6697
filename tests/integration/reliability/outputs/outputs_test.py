#!/usr/bin/env python3
"""The shim's outputs never harm the program: outputs_prog run bare and
under libgputrace.so on the emulated driver, one case per invocation:

    outputs_test.py LIB PROG CASE CLI

takeover         the program closes 3..1023 and fills every number with its
                 own file: that file stays exactly the program's, the trace
                 is not written, one warning says why, the JSON is written
stderr_closed    2>&- (and 1>&- with GPUTRACE_LOG=stdout): the file the
                 program then opens on that number stays its own; a stderr
                 that is a file still gets the summary
fifo_log         GPUTRACE_LOG names a FIFO with no reader: no wait, the
                 summary on stderr after one warning; a FIFO whose reader
                 never reads: exit within the log's bound
full_pipe        stderr a pipe that is full and never read: exit within the
                 log's bound
sigpipe          GPUTRACE_LOG=stdout with the reader gone: the exit status is
                 the bare program's (killed by SIGPIPE at its own flush, or 0
                 when it has nothing left to write); the program's output is
                 whole
summary_last     stdout and stderr one pipe: the summary comes after the
                 output the program held in its buffer until exit, under the
                 library alone and under the command, and a reader that
                 stops after 10 bytes (`| head -c 10`) leaves the exit status
                 as bare, each of 10 times
killed           SIGKILL while the Chrome trace is being written: nothing
                 left in the output directory
relative_output  a relative GPUTRACE_OUTPUT (or gputrace -o) and chdir: the
                 files land where the template pointed at load (a % in that
                 directory stays a %); an absolute template is kept; a
                 variable's value that holds a path is one name there
blank_log        GPUTRACE_LOG of blanks: the summary on stderr, no file
"""
import errno
import fcntl
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
from verdict import check, report  # noqa: E402

LIB, PROG, CASE, CLI = sys.argv[1:5]
TIMEOUT = 60
LOG_WAIT_S = 2.0  # the log's bound (GT_LOG_WAIT_MS)
SLACK_S = 1.5     # a loaded machine's start-up and scheduling, on top of it


def env_for(preload, **gputrace):
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUTRACE_")}
    env.pop("LD_PRELOAD", None)
    if preload:
        env["LD_PRELOAD"] = LIB
    env.update({"GPUTRACE_" + k.upper(): v for k, v in gputrace.items()})
    return env


def run(args, preload, cwd=None, **gputrace):
    """(status, stdout, stderr, seconds)."""
    start = time.monotonic()
    p = subprocess.run([PROG] + args, env=env_for(preload, **gputrace), capture_output=True,
                       timeout=TIMEOUT, cwd=cwd)
    return (p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace"),
            time.monotonic() - start)


def summary_lines(text):
    return [l for l in text.splitlines() if l.startswith("gputrace: ") and " | wall " in l]


def warnings(text):
    return [l for l in text.splitlines() if l.startswith("gputrace: warning: ")]


def read(path):
    with open(path, "rb") as f:
        return f.read()


def run_takeover(data, d, preload, **gputrace):
    """takeover DATA, told to go on once the shim's trace has been open in d
    for a while (at once when bare): (status, stdout, stderr)."""
    p = subprocess.Popen([PROG, "takeover", data], env=env_for(preload, **gputrace),
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        first = p.stdout.readline()
        if preload:
            deadline = time.monotonic() + 20
            while not holds_file_in(p.pid, d) and time.monotonic() < deadline:
                time.sleep(0.02)
            check(holds_file_in(p.pid, d), "the trace was open before the takeover")
            time.sleep(0.2)
        out, err = p.communicate(b"go\n", timeout=TIMEOUT)
    finally:
        p.kill()
    return p.returncode, (first + out).decode(errors="replace"), err.decode(errors="replace")


def case_takeover():
    with tempfile.TemporaryDirectory() as d:
        bare_data, shim_data = os.path.join(d, "bare.data"), os.path.join(d, "shim.data")
        bare = run_takeover(bare_data, d, False)
        shim = run_takeover(shim_data, d, True, output=os.path.join(d, "rep"),
                            format="chrome,json", buffer_mb="1")
        check(bare[0] == 0 and "failed writes: 0" in bare[1] and "child: all written" in bare[1],
              "the bare program: %r" % (bare,))
        check(shim[:2] == bare[:2], "status and stdout as bare: %r / %r" % (shim[:2], bare[:2]))
        check(read(shim_data) == read(bare_data),
              "the program's file is its own: %d bytes, %d bare, starting %r"
              % (len(read(shim_data)), len(read(bare_data)), read(shim_data)[:80]))
        names = sorted(os.listdir(d))
        check(names == ["bare.data", "rep.json", "shim.data"],
              "the JSON report only, no trace and no temporary file: %r" % names)
        with open(os.path.join(d, "rep.json")) as f:
            check(json.load(f)["totals"]["events"] > 0, "the JSON report has the events")
        w = warnings(shim[2])
        check(len(w) == 1 and "trace" in w[0] and "descriptor" in w[0],
              "one warning, about the trace's descriptor: %r" % shim[2])
        check(len(summary_lines(shim[2])) == 1, "the summary: %r" % shim[2])


def run_shell(script, preload, cwd, **gputrace):
    p = subprocess.run(["sh", "-c", script, PROG], env=env_for(preload, **gputrace),
                       capture_output=True, timeout=TIMEOUT, cwd=cwd)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def case_stderr_closed():
    with tempfile.TemporaryDirectory() as d:
        for stream, log in (("2", "stderr"), ("1", "stdout")):
            script = 'exec "$0" reopen data %s>&-' % stream
            bare = run_shell(script, False, d)
            check(bare[0] == 0 and read(os.path.join(d, "data")) == b"program data",
                  "the bare program with %s closed: %r" % (stream, bare))
            shim = run_shell(script, True, d, log=log)
            check(shim[0] == 0, "status 0 with %s closed: %r" % (stream, shim))
            data = read(os.path.join(d, "data"))
            check(data == b"program data", "%s>&-: the program's file is its own: %r"
                  % (stream, data[:200]))
        # A stderr that stays what it was at load still gets the summary.
        err = os.path.join(d, "stderr")
        shim = run_shell('exec "$0" reopen data 2>stderr', True, d)
        check(shim[0] == 0 and read(os.path.join(d, "data")) == b"program data",
              "with stderr a file: %r" % (shim,))
        check(len(summary_lines(read(err).decode())) == 1,
              "the summary in the stderr file: %r" % read(err)[:300])


def fill(fd):
    """Writes into the pipe at fd (non-blocking) until it is full."""
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_NONBLOCK)
    chunk = b"x" * 4096
    while True:
        try:
            os.write(fd, chunk)
        except BlockingIOError:
            break
    # whatever is less than a page also fills the last one
    while True:
        try:
            os.write(fd, b"x")
        except BlockingIOError:
            return


def check_bounded(what, shim, bare):
    check(shim[3] <= bare[3] + LOG_WAIT_S + SLACK_S,
          "%s: %.2f s to exit, %.2f s bare (bound %.1f s)" % (what, shim[3], bare[3], LOG_WAIT_S))


def case_fifo_log():
    with tempfile.TemporaryDirectory() as d:
        fifo = os.path.join(d, "fifo")
        os.mkfifo(fifo)
        bare = run(["work", "5"], False)
        shim = run(["work", "5"], True, log=fifo)
        check(shim[:2] == bare[:2], "no reader: status and stdout as bare: %r" % (shim,))
        check(shim[3] <= bare[3] + SLACK_S, "no reader: no wait (%.2f s, %.2f s bare)"
              % (shim[3], bare[3]))
        w = warnings(shim[2])
        check(len(w) == 1 and "GPUTRACE_LOG" in w[0] and "stderr" in w[0],
              "one warning that the log goes to stderr: %r" % shim[2])
        check(len(summary_lines(shim[2])) == 1, "the summary on stderr: %r" % shim[2])
        # A reader that never reads, the FIFO already full.
        reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        try:
            fill(writer)
            shim = run(["work", "5"], True, log=fifo)
        finally:
            os.close(writer)
            os.close(reader)
        check(shim[:2] == bare[:2], "full FIFO: status and stdout as bare: %r" % (shim,))
        check_bounded("full FIFO", shim, bare)


def case_full_pipe():
    bare = run(["work", "5"], False)
    rd, wr = os.pipe()
    try:
        fill(wr)
        fcntl.fcntl(wr, fcntl.F_SETFL, fcntl.fcntl(wr, fcntl.F_GETFL) & ~os.O_NONBLOCK)
        start = time.monotonic()
        p = subprocess.run([PROG, "work", "5"], env=env_for(True), stdout=subprocess.PIPE,
                           stderr=wr, timeout=TIMEOUT)
        shim = (p.returncode, p.stdout.decode(), "", time.monotonic() - start)
    finally:
        os.close(wr)
        os.close(rd)
    check(shim[:2] == bare[:2], "status and stdout as bare: %r / %r" % (shim[:2], bare[:2]))
    check_bounded("stderr a full pipe", shim, bare)


def run_reader_gone(preload, after):
    """lines AFTER with stdout a pipe whose reader goes after the first
    line: (status, that line)."""
    rd, wr = os.pipe()
    p = subprocess.Popen([PROG, "lines", str(after)], env=env_for(preload, log="stdout"),
                         stdin=subprocess.PIPE, stdout=wr, stderr=subprocess.DEVNULL)
    os.close(wr)
    with os.fdopen(rd, "rb") as r:
        first = r.readline()
    p.stdin.write(b"go\n")
    p.stdin.close()
    return p.wait(timeout=TIMEOUT), first


def case_sigpipe():
    for after in (20, 0):
        bare = run_reader_gone(False, after)
        shim = run_reader_gone(True, after)
        check(bare[0] == (-signal.SIGPIPE if after else 0), "bare, %d lines after: %r"
              % (after, bare))
        check(shim == bare, "%d lines after the reader left: %r under the shim, %r bare"
              % (after, shim, bare))
    # The reader stays: the program's output is all there, around the summary.
    with tempfile.TemporaryDirectory() as d:
        outs = []
        for preload in (False, True):
            out = os.path.join(d, "out%d" % preload)
            with open(out, "wb") as f:
                p = subprocess.run([PROG, "lines", "20"], env=env_for(preload, log="stdout"),
                                   input=b"go\n", stdout=f, stderr=subprocess.PIPE,
                                   timeout=TIMEOUT)
            check(p.returncode == 0 and p.stderr == b"", "lines 20: %r" % (p,))
            outs.append(read(out).decode().splitlines())
        program = [l for l in outs[1] if l.startswith(("first ", "line "))]
        check(len(summary_lines("\n".join(outs[1]))) == 1, "the summary on stdout: %r" % outs[1])
        check(program == outs[0], "the program's lines, whole and in order: %r" % outs[1])


def summary_last_command(how):
    """outputs_prog work 5 under the library alone or the command."""
    args = [PROG, "work", "5"]
    return ([CLI] + args, env_for(False)) if how == "command" else (args, env_for(True))


def case_summary_last():
    bare = subprocess.run([PROG, "work", "5"], env=env_for(False), capture_output=True,
                          timeout=TIMEOUT)
    check(bare.returncode == 0 and bare.stdout.startswith(b"work "), "bare: %r" % (bare,))
    for how in ("preload", "command"):
        cmd, env = summary_last_command(how)
        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=TIMEOUT)
        lines = p.stdout.decode(errors="replace").splitlines()
        program = [i for i, l in enumerate(lines) if l.startswith("work ")]
        summary = [i for i, l in enumerate(lines) if l in summary_lines(l)]
        check(p.returncode == 0 and program and summary and program[-1] < summary[0],
              "%s: status %d, the program's line then the summary: %r" % (how, p.returncode, lines))
        for _ in range(10):
            p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            first = p.stdout.read(10)
            p.stdout.close()
            status = p.wait(timeout=TIMEOUT)
            check(status == 0 and first == bare.stdout[:10],
                  "%s, the reader gone after 10 bytes: status %d, it read %r" % (how, status, first))


def holds_file_in(pid, d):
    """Whether process pid holds a file of directory d open."""
    fds = "/proc/%d/fd" % pid
    for fd in os.listdir(fds):
        try:
            target = os.readlink(os.path.join(fds, fd))
        except OSError:
            continue
        if target.startswith(d + "/"):
            return True
    return False


def case_killed():
    with tempfile.TemporaryDirectory() as d:
        p = subprocess.Popen([PROG, "wait"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env=env_for(True, output=os.path.join(d, "rep"),
                                         format="chrome,json", buffer_mb="1"))
        try:
            check(p.stdout.readline().startswith(b"work "), "the program started")
            deadline = time.monotonic() + 20
            while not holds_file_in(p.pid, d) and time.monotonic() < deadline:
                time.sleep(0.02)
            check(holds_file_in(p.pid, d), "the trace was being written when killed")
        finally:
            p.kill()
            p.communicate(timeout=TIMEOUT)
        check(p.returncode == -signal.SIGKILL, "killed: %r" % p.returncode)
        check(os.listdir(d) == [], "nothing left behind: %r" % os.listdir(d))


def case_relative_output():
    with tempfile.TemporaryDirectory() as d:
        start = os.path.join(d, "start%p")
        elsewhere = os.path.join(d, "elsewhere")
        for where in (start, elsewhere):
            os.makedirs(os.path.join(where, "out"))
            os.makedirs(os.path.join(where, "cli"))
        bare = run(["chdir", elsewhere], False, cwd=start)
        shim = run(["chdir", elsewhere], True, cwd=start, output="out/rep",
                   format="json,chrome,csv")
        check(shim[:2] == bare[:2] and len(summary_lines(shim[2])) == 1 and not warnings(shim[2]),
              "as bare, one summary, no warning: %r" % (shim,))
        p = subprocess.run([CLI, "-o", "cli/rep", "-f", "json,chrome", PROG, "chdir", elsewhere],
                           env=env_for(False), capture_output=True, timeout=TIMEOUT, cwd=start)
        check(p.returncode == 0 and p.stdout.decode() == bare[1], "gputrace -o: %r" % (p,))
        for sub, want in (("out", ["rep.csv", "rep.json", "rep.trace.json"]),
                          ("cli", ["rep.json", "rep.trace.json"])):
            got = sorted(os.listdir(os.path.join(start, sub)))
            check(got == want, "%s: every file where the template pointed at load: %r" % (sub, got))
            check(os.listdir(os.path.join(elsewhere, sub)) == [], "nothing in the new directory: %r"
                  % os.listdir(os.path.join(elsewhere, sub)))
            for name in got:
                if name.endswith("json"):
                    with open(os.path.join(start, sub, name)) as f:
                        check(isinstance(json.load(f), dict), "%s/%s is whole" % (sub, name))
        # An absolute template stays as it is; a variable's value is one
        # name (a path in it no way elsewhere), taken at load.
        env_dir = os.path.join(d, "from_env")
        os.mkdir(env_dir)
        os.environ["GT_TEST_OUTPUT_DIR"] = env_dir
        os.environ["GT_TEST_TAG"] = "t"
        shim = run(["chdir", elsewhere], True, cwd=start, output=env_dir + "/rep.%q{GT_TEST_TAG}")
        check(shim[0] == 0 and os.listdir(env_dir) == ["rep.t.json"],
              "an absolute template: %r %r" % (shim, os.listdir(env_dir)))
        shim = run(["chdir", elsewhere], True, cwd=start, output="%q{GT_TEST_OUTPUT_DIR}.rep")
        named = env_dir.replace("/", "_") + ".rep.json"
        check(shim[0] == 0 and os.listdir(env_dir) == ["rep.t.json"] and
              os.path.exists(os.path.join(start, named)),
              "a path in a variable: %r %r" % (shim, os.listdir(start)))


def case_blank_log():
    with tempfile.TemporaryDirectory() as d:
        shim = run(["work", "3"], True, cwd=d, log="   ")
        check(shim[0] == 0 and len(summary_lines(shim[2])) == 1 and not warnings(shim[2]),
              "the summary on stderr, no warning: %r" % (shim,))
        check(os.listdir(d) == [], "no file: %r" % os.listdir(d))


CASES = {name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}
if CASE not in CASES:
    print("unknown case", CASE)
    sys.exit(2)
CASES[CASE]()
status = report()
if status == 0:
    print("ok:", CASE)
sys.exit(status)
