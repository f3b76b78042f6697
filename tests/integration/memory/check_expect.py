#!/usr/bin/env python3
"""Runs a test program under libgputrace.so and checks the JSON report
against what the program expected of it (expect.h: the file GT_EXPECT).

check_expect.py --lib LIB [--same] [--categories LIST] -- program [args...]

  memory   the device rows, exactly (allocs, frees, peak, current, leaks,
           unknown frees, memory released with its context), when the
           program expected any
  module   rows by (api, kind): calls and bytes, exactly; the ptx-jit
           advice counts the loads of kind ptx
  compile  rows by (api, name, ok): calls and bytes; the wall time within
           30% of the program's own measurement around the calls; when the
           program said which records were its programs' first, each row's
           "programs" and the summary's title ("4 programs, 4 compiles, 4
           verifies, 2 links")
  api      calls per name (0: no row), and failed calls by status name
  kernel   rows by name: calls, exactly, when the program expected any
  --same   the program's exit code, stdout and stderr are also the same as
           without the shim (its output goes to GPUTRACE_LOG)
  --categories LIST   GPUTRACE_CATEGORIES; the tables of disabled
           categories are empty, the others as expected
"""
import argparse
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "intercept"))
from check_report import Checker, run  # noqa: E402

WALL_TOLERANCE = 0.30


def base_env():
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUTRACE_", "GT_"))}
    env.pop("LD_PRELOAD", None)
    return env


def by_key(rows, keys):
    return {tuple(r[k] for k in keys): r for r in rows}


def compare_rows(c, what, got, want, keys, fields):
    """Rows keyed by `keys`: the same keys, and `fields` equal in each.
    Returns {key: (got row, wanted row)}."""
    got_rows, want_rows = by_key(got, keys), by_key(want, keys)
    c.expect(sorted(got_rows) == sorted(want_rows),
             f"{what} rows {sorted(got_rows)}, expected {sorted(want_rows)}")
    pairs = {k: (got_rows[k], w) for k, w in want_rows.items() if k in got_rows}
    for key, (g, w) in pairs.items():
        for f in fields:
            c.expect(g[f] == w[f], f"{what} {key} {f}: {g[f]}, expected {w[f]}")
    return pairs


def check_memory(c, report, want, on):
    got = report["memory"]["devices"]
    if not on("memory"):
        c.expect(got == [], f"memory disabled, yet devices {got}")
    elif want:
        compare_rows(c, "memory", got, want, ["device"],
                     ["allocs", "frees", "peak_bytes", "current_bytes", "leaked_allocs",
                      "leaked_bytes", "unknown_frees", "context_released_allocs",
                      "context_released_bytes"])


def check_modules(c, report, want, on):
    got = report["module"]
    if not on("module"):
        c.expect(got == [], f"module disabled, yet rows {got}")
    else:
        compare_rows(c, "module", got, want, ["api", "kind"], ["calls", "bytes"])
        # Every load of PTX feeds the ptx-jit advice.
        jit = sum(w["calls"] for w in want if w["kind"] == "ptx")
        advised = {a["rule"]: a["count"] for a in report["advice"]}.get("ptx-jit", 0)
        c.expect(advised == jit, f"ptx-jit advice counts {advised} loads, expected {jit}")


def compile_title(rows):
    """The summary's compile title for these rows, as far as the counts go."""
    count = {"program": 0, "compile": 0, "verify": 0, "link": 0}
    for r in rows:
        kind = "verify" if "Verify" in r["api"] else "link" if "Link" in r["api"] else "compile"
        count[kind] += r["calls"]
        if kind != "link":
            count["program"] += r["programs"]
    plural = {"program": "programs", "compile": "compiles", "verify": "verifies", "link": "links"}
    return "compile: " + ", ".join(f"{n} {plural[k] if n != 1 else k}"
                                   for k, n in count.items() if n) + ", "


def check_compiles(c, report, want, on, programs, text):
    got = report["compile"]
    if not on("compile"):
        c.expect(got == [], f"compile disabled, yet rows {got}")
        return
    fields = ["calls", "bytes"] + (["programs"] if programs else [])
    pairs = compare_rows(c, "compile", got, want, ["api", "name", "ok"], fields)
    if programs:
        title = compile_title(want)
        c.expect(any(line.startswith(title) for line in text.splitlines()),
                 f"no summary title {title!r}")
    for key, (g, w) in pairs.items():
        if w["wall_ns"]:
            wall = g["wall_ns"]["total"]
            c.expect(abs(wall - w["wall_ns"]) <= WALL_TOLERANCE * w["wall_ns"],
                     f"compile {key}: {wall} ns, the program measured {w['wall_ns']} ns "
                     f"(+-{WALL_TOLERANCE:.0%})")


def check_api(c, report, want, want_errors, on):
    if not on("api"):
        c.expect(report["api"] == [], "api disabled, yet rows")
        return
    got = {r["name"]: r for r in report["api"]}
    for name, calls in want.items():
        n = got[name]["calls"] if name in got else 0
        c.expect(n == calls, f"api {name}: {n} calls, expected {calls}")
    errors = {}
    for r in report["api"]:
        for error, n in r["errors"].items():
            errors[(r["name"], error)] = n
    expected = {(e["api"], e["error"]): e["calls"] for e in want_errors}
    c.expect(errors == expected, f"api errors {errors}, expected {expected}")


def check_kernels(c, report, want, on):
    if not want or not on("kernel"):
        return
    got = {r["name"]: r["calls"] for r in report["kernels"]}
    c.expect(got == want, f"kernels {got}, expected {want}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--same", action="store_true")
    ap.add_argument("--categories")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    command = a.command[1:] if a.command[:1] == ["--"] else a.command
    c = Checker()
    with tempfile.TemporaryDirectory() as tmp:
        env = base_env()
        expect_path = os.path.join(tmp, "expect.json")
        env["GT_EXPECT"] = expect_path
        if a.same:
            bare = run(command, env)
        traced_env = dict(env, LD_PRELOAD=a.lib, GPUTRACE_OUTPUT=os.path.join(tmp, "report"),
                          GPUTRACE_FORMAT="json,text", GPUTRACE_LOG=os.path.join(tmp, "log"))
        if a.categories:
            traced_env["GPUTRACE_CATEGORIES"] = a.categories
        traced = run(command, traced_env)
        if a.same:
            c.expect(traced == bare, f"with the shim: exit {traced[0]}, stdout {traced[1]!r}, "
                     f"stderr {traced[2]!r}; without: exit {bare[0]}, stdout {bare[1]!r}, "
                     f"stderr {bare[2]!r}")
        elif traced[0] != 0:
            sys.exit(f"FAIL: {command[0]} exited {traced[0]}: {traced[1]}{traced[2]}")
        with open(os.path.join(tmp, "report.json")) as f:
            report = json.load(f)
        with open(os.path.join(tmp, "report.txt"), encoding="utf-8") as f:
            text = f.read()
        with open(expect_path) as f:
            want = json.load(f)
    enabled = set(a.categories.split(",")) if a.categories else None
    on = lambda cat: enabled is None or cat in enabled  # noqa: E731
    c.expect(report["totals"]["dropped"] == 0, f"{report['totals']['dropped']} events dropped")
    check_memory(c, report, want["memory"], on)
    check_modules(c, report, want["module"], on)
    check_compiles(c, report, want["compile"], on, want["programs_expected"], text)
    check_api(c, report, want["api"], want["api_errors"], on)
    check_kernels(c, report, want["kernels"], on)
    for e in c.errors:
        print("FAIL:", e)
    if c.errors:
        sys.exit(1)
    print("ok:", " ".join(command))


if __name__ == "__main__":
    main()
