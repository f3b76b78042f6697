#!/usr/bin/env python3
"""gputrace beside other copies of itself and beside other tools, on the
emulated driver. Each run's exit code and output are compared with the
program's bare run, and its report with the program's own manifest
(tests/integration/intercept/check_report.py).

check_copies.py --lib LIB --cli GPUTRACE [--PROGRAM PATH ...] CASE

Cases:
  copies       two copies of the library (the built one and a copy at
               another path) preloaded, in both orders, under programs that
               link the driver, dlopen+dlsym it and use cuGetProcAddress: the
               program runs as bare, the first copy writes the one report
               and it matches the manifest exactly, the second says at debug
               (once) that it passes every call through
  nvtx         the same with NVTX_INJECTION64_PATH naming the inactive copy:
               the ranges are recorded by the active one
  cli          the gputrace command with another copy already in LD_PRELOAD
               and NVTX_INJECTION64_PATH: the command's copy records all
  dlsym_chain  a dlsym interposer of our own (dlsym_counter.c) preloaded after
               and before the library: it sees every lookup the program
               makes, the library hands out its wrappers (the report counts
               every call), output unchanged; dlsym(RTLD_NEXT) keeps its
               meaning (intercept/dlsym_prog.c) in both orders
  asan         programs built with -fsanitize=address under gputrace: they run
               as bare (a heap overflow is reported the same), the sanitizer
               runtime comes first in LD_PRELOAD, the report matches
  config_once  bad values exported to gputrace -- sh -c '...': one warning per
               run of the command, whatever the number of processes; a value
               a child changes is warned about by that child; preloaded by
               hand, one warning per process as before
  long_values  the command's errors quote a 5,000-character value cut
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "intercept"))
import check_report as cr  # noqa: E402

ARGS = None
INACTIVE = re.compile(r"gputrace: debug: another copy of libgputrace\.so is active in this "
                      r"process \((.*)\): this copy \((.*)\) passes every call through")
WARNING = "gputrace: warning: "


def bare(command, directory, extra=None):
    env = cr.emu_env()
    env["GT_APP_MANIFEST"] = os.path.join(directory, "bare.%p.json")
    env.update(extra or {})
    return cr.run(command, env)


def traced_env(directory, preload, **extra):
    env = cr.emu_env()
    if preload:
        env["LD_PRELOAD"] = preload
    env["GT_APP_MANIFEST"] = os.path.join(directory, "m.%p.json")
    env["GPUTRACE_OUTPUT"] = os.path.join(directory, "r.%p")
    env["GPUTRACE_VERBOSITY"] = "debug"
    env["GPUTRACE_LOG"] = os.path.join(directory, "log")
    env.update(extra)
    return env


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def one_report(c, directory, what):
    """The program's one report and its manifest, or (None, None). Any other
    report is from a process that made no CUDA call (the gputrace command
    itself, when a copy of the library is preloaded into it, reports at
    debug verbosity)."""
    manifests = cr.manifests_by_pid(directory)
    if not c.expect(len(manifests) == 1, f"{what}: {len(manifests)} manifests"):
        return None, None
    pid, manifest = next(iter(manifests.items()))
    mine = os.path.join(directory, f"r.{pid}.json")
    for path in glob.glob(os.path.join(directory, "r.*.json")):
        if path != mine:
            other = cr.read_json(path)
            c.expect(not other["api"], f"{what}: another process reports CUDA calls ({path})")
    if not c.expect(os.path.exists(mine), f"{what}: no report of the program"):
        return None, None
    return cr.read_json(mine), manifest


def same_as_bare(c, bare_run, traced, what, compare_stderr=True):
    c.expect(traced[0] == bare_run[0], f"{what}: exit code {traced[0]}, bare {bare_run[0]}; "
                                       f"stderr {traced[2][-1500:]}")
    c.expect(traced[1] == bare_run[1], f"{what}: stdout differs:\n{traced[1]}\n--- bare\n"
                                       f"{bare_run[1]}")
    if compare_stderr:
        c.expect(traced[2] == bare_run[2], f"{what}: stderr differs:\n{traced[2][-1500:]}")


def inactive_lines(c, log, active, inactive, what):
    lines = [m.groups() for m in map(INACTIVE.search, log.splitlines()) if m]
    c.expect(lines == [(active, inactive)],
             f"{what}: the lines saying which copy passes calls through: {lines}")


def other_copy(directory):
    """The built library at another path: a second, different copy."""
    path = os.path.join(directory, "other", "libgputrace.so")
    os.makedirs(os.path.dirname(path))
    shutil.copy2(ARGS.lib, path)
    return path


def case_copies(c, tmp):
    other = other_copy(tmp)
    for program in (ARGS.drv_linked, ARGS.drv_dlopen, ARGS.drv_procaddr):
        command = [program, "3", "2", "4096"]
        name = os.path.basename(program)
        for first, second in ((ARGS.lib, other), (other, ARGS.lib)):
            what = f"{name} with {first}:{second}"
            with tempfile.TemporaryDirectory(dir=tmp) as d:
                bare_run = bare(command, d)
                traced = cr.run(command, traced_env(d, f"{first}:{second}"))
                same_as_bare(c, bare_run, traced, what)
                report, manifest = one_report(c, d, what)
                if report:
                    cr.check_report(c, report, manifest)
                inactive_lines(c, read(os.path.join(d, "log")), first, second, what)


def nvtx_rows(c, directory, what):
    """Each range of the NVTX program's manifest has its row, with its calls."""
    manifest = cr.read_json(os.path.join(directory, "nvtx.json"))
    reports = [r for r in map(cr.read_json, glob.glob(os.path.join(directory, "r.*.json")))
               if r["process"]["command"].startswith(ARGS.nvtx_prog)]
    if not c.expect(len(reports) == 1, f"{what}: {len(reports)} reports of the NVTX program"):
        return
    report = reports[0]
    rows = {(r["domain"], r["name"]): r["calls"] for r in report["nvtx"]}
    for m in manifest["ranges"]:
        key = (m["domain"], m["name"])
        c.expect(rows.get(key) == m["calls"],
                 f"{what}: range {key}: {rows.get(key)} calls, expected {m['calls']}")


def case_nvtx(c, tmp):
    other = other_copy(tmp)
    for first, second in ((ARGS.lib, other), (other, ARGS.lib)):
        what = f"NVTX injection {second}, preload {first}:{second}"
        with tempfile.TemporaryDirectory(dir=tmp) as d:
            env = traced_env(d, f"{first}:{second}", NVTX_INJECTION64_PATH=second)
            rc, out, err = cr.run([ARGS.nvtx_prog, os.path.join(d, "nvtx.json")], env)
            if not c.expect(rc == 0, f"{what}: exit code {rc}: {out} {err[-1500:]}"):
                continue
            nvtx_rows(c, d, what)
            inactive_lines(c, read(os.path.join(d, "log")), first, second, what)


def case_cli(c, tmp):
    other = other_copy(tmp)
    mine = os.path.realpath(ARGS.lib)
    with tempfile.TemporaryDirectory(dir=tmp) as d:
        command = [ARGS.drv_linked, "3", "2", "4096"]
        bare_run = bare(command, d)
        env = traced_env(d, other, NVTX_INJECTION64_PATH=other)
        traced = cr.run([ARGS.cli, "--"] + command, env)
        same_as_bare(c, bare_run, traced, "gputrace with a copy preloaded")
        report, manifest = one_report(c, d, "gputrace with a copy preloaded")
        if report:
            cr.check_report(c, report, manifest)
        inactive_lines(c, read(os.path.join(d, "log")), mine, other, "gputrace")
    with tempfile.TemporaryDirectory(dir=tmp) as d:
        env = traced_env(d, other, NVTX_INJECTION64_PATH=other)
        rc, out, err = cr.run([ARGS.cli, ARGS.nvtx_prog, os.path.join(d, "nvtx.json")], env)
        if c.expect(rc == 0, f"gputrace, NVTX program: exit code {rc}: {err[-1500:]}"):
            nvtx_rows(c, d, "gputrace with a copy preloaded and named for NVTX")


def counts(path):
    out = {}
    if os.path.exists(path):
        for line in read(path).splitlines():
            name, n = line.rsplit(" ", 1)
            out[name] = out.get(name, 0) + int(n)
    return out


def case_dlsym_chain(c, tmp):
    n = 5
    command = [ARGS.lookups, str(n)]
    bare_run = cr.run(command, cr.emu_env())
    c.expect(bare_run[0] == 0, f"lookups bare: exit code {bare_run[0]}: {bare_run[1]}")
    for order in ((ARGS.lib, ARGS.counter), (ARGS.counter, ARGS.lib)):
        what = "LD_PRELOAD=" + ":".join(os.path.basename(p) for p in order)
        with tempfile.TemporaryDirectory(dir=tmp) as d:
            counted = os.path.join(d, "counts")
            traced = cr.run(command, traced_env(d, ":".join(order), GT_COUNTER_OUT=counted))
            same_as_bare(c, bare_run, traced, what)
            seen = counts(counted)
            # The program's own name is looked up by nobody else; the CUDA
            # names may also be looked up by the library for itself.
            c.expect(seen.get("gt_lookups_probe") == n,
                     f"{what}: the interposer saw gt_lookups_probe {seen.get('gt_lookups_probe')} "
                     f"times, the program looked it up {n} times")
            for name in ("cuInit", "cuDriverGetVersion"):
                c.expect(seen.get(name, 0) >= n,
                         f"{what}: the interposer saw {name} {seen.get(name, 0)} times, the "
                         f"program looked it up {n} times")
            reports = glob.glob(os.path.join(d, "r.*.json"))
            if c.expect(len(reports) == 1, f"{what}: {len(reports)} reports"):
                api = {r["name"]: r["calls"] for r in cr.read_json(reports[0])["api"]}
                c.expect(api.get("cuInit") == n,
                         f"{what}: the report counts {api.get('cuInit')} cuInit calls, not {n}")
            rc, out, err = cr.run([ARGS.dlsym_prog],
                                  dict(cr.emu_env(), LD_PRELOAD=":".join(order),
                                       GPUTRACE_VERBOSITY="none", GT_COUNTER_OUT=counted))
            c.expect(rc == 0 and "FAIL" not in out, f"{what}: dlsym_prog: {rc} {out} {err}")


def case_asan(c, tmp):
    with tempfile.TemporaryDirectory(dir=tmp) as d:
        command = [ARGS.asan_drv, "3", "2", "4096"]
        bare_run = bare(command, d)
        c.expect(bare_run[0] == 0, f"the ASan program fails bare: {bare_run[2][-1500:]}")
        traced = cr.run([ARGS.cli, "--"] + command, traced_env(d, None))
        same_as_bare(c, bare_run, traced, "ASan driver program")
        report, manifest = one_report(c, d, "ASan driver program")
        if report:
            cr.check_report(c, report, manifest)
    # A heap overflow: reported by the sanitizer, the same status and lines.
    command = [ARGS.asan_prog, "overflow"]
    bare_run = cr.run(command, cr.emu_env())
    traced = cr.run([ARGS.cli, "-v", "none", "--"] + command, cr.emu_env())
    same_as_bare(c, bare_run, traced, "heap overflow", compare_stderr=False)
    for what, run in (("bare", bare_run), ("traced", traced)):
        c.expect("ERROR: AddressSanitizer: heap-buffer-overflow" in run[2],
                 f"{what}: no overflow report: {run[2][-1500:]}")
    # The runtime the program's loader picks, first, by its path.
    rc, out, err = cr.run([ARGS.cli, "-v", "none", ARGS.asan_prog, "preload"], cr.emu_env())
    entries = out.strip().split(":")
    c.expect(rc == 0 and os.path.isabs(entries[0]) and os.path.isfile(entries[0]) and
             os.path.basename(entries[0]).startswith("libasan.so") and
             entries[1] == os.path.realpath(ARGS.lib),
             f"LD_PRELOAD under gputrace: {out!r} ({rc}, {err[-500:]})")


def warnings(text):
    return [l for l in text.splitlines() if l.startswith(WARNING)]


def case_config_once(c, tmp):
    bad = {"GPUTRACE_FORMAT": "xml", "GPUTRACE_BUFFER_MB": "lots"}
    script = f"{ARGS.drv_linked} 1 1 1024; {ARGS.drv_linked} 1 1 1024; {ARGS.drv_linked} 1 1 1024"
    expected = sorted(f"{WARNING}{k}='{v}' ignored" for k, v in bad.items())

    def shown(lines):
        return sorted(l.split(": expected")[0] for l in lines)

    env = dict(cr.emu_env(), GPUTRACE_VERBOSITY="debug", **bad)
    rc, out, err = cr.run([ARGS.cli, "--", "sh", "-c", script], env)
    processes = len(re.findall(r"gputrace: debug: loaded in pid", err))
    c.expect(rc == 0 and processes >= 4, f"gputrace sh: {rc}, {processes} processes loaded it")
    c.expect(shown(warnings(err)) == expected,
             f"gputrace sh: warnings {warnings(err)}, expected each of {expected} once")

    # A value a child changes is that child's to warn about.
    rc, out, err = cr.run([ARGS.cli, "--", "sh", "-c", "export GPUTRACE_FORMAT=yaml; " + script],
                          dict(env, GPUTRACE_VERBOSITY="default"))
    yaml = [l for l in warnings(err) if "'yaml'" in l]
    c.expect(len(yaml) == 3 and len(warnings(err)) == 5,
             f"a changed value: {warnings(err)}, expected the command's 2 and 3 about yaml")

    # With GPUTRACE_LOG, the command's warnings go there too.
    with tempfile.TemporaryDirectory(dir=tmp) as d:
        log = os.path.join(d, "log")
        rc, out, err = cr.run([ARGS.cli, "--", "sh", "-c", script],
                              dict(cr.emu_env(), GPUTRACE_LOG=log, **bad))
        c.expect(rc == 0 and shown(warnings(read(log))) == expected and not warnings(err),
                 f"GPUTRACE_LOG: {warnings(read(log))}, stderr {warnings(err)}")

    # Preloaded by hand: each process warns, as it always has.
    rc, out, err = cr.run(["sh", "-c", script], dict(env, LD_PRELOAD=ARGS.lib))
    processes = len(re.findall(r"gputrace: debug: loaded in pid", err))
    c.expect(rc == 0 and processes >= 4 and len(warnings(err)) == len(bad) * processes,
             f"preloaded by hand: {len(warnings(err))} warnings from {processes} processes")


def case_long_values(c, tmp):
    long_value = "x" * 5000
    for args, what in ((["-v", long_value, ARGS.drv_linked], "invalid --verbosity"),
                       (["--" + long_value, ARGS.drv_linked], "unknown option"),
                       ([os.path.join(tmp, long_value)], "File name too long"),
                       ([long_value], "command not found")):
        rc, out, err = cr.run([ARGS.cli] + args, cr.emu_env())
        c.expect(rc == 2 and out == "" and err.count("\n") == 1 and what in err and
                 "..." in err and len(err) < 400,
                 f"{what}: status {rc}, {len(err)} bytes of error: {err[:300]!r}")


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    for name in ("lib", "cli", "drv-linked", "drv-dlopen", "drv-procaddr", "nvtx-prog", "counter",
                 "lookups", "dlsym-prog", "asan-drv", "asan-prog"):
        ap.add_argument("--" + name)
    ap.add_argument("case", choices=["copies", "nvtx", "cli", "dlsym_chain", "asan",
                                     "config_once", "long_values"])
    ARGS = ap.parse_args()
    ARGS.lib = os.path.realpath(ARGS.lib)
    c = cr.Checker()
    with tempfile.TemporaryDirectory(prefix="gt-copies-") as tmp:
        globals()["case_" + ARGS.case](c, tmp)
    for e in c.errors:
        print("FAIL:", e)
    print(("FAILED: " if c.errors else "ok: ") + ARGS.case)
    return 1 if c.errors else 0


if __name__ == "__main__":
    sys.exit(main())
