#!/usr/bin/env python3
"""Checksums of what device-to-host copies bring back (GPUTRACE_CHECKSUM),
against the truth the test program writes (checksum_prog.c: the hash of
each copy's data, computed by the program itself), and `gputrace diff`,
`merge` and `report` on the reports.

check_checksum.py --lib LIB --cli GPUTRACE --prog PROG CASE

  truth_SCENARIO       the report's copies are the program's, hash for hash
                       and status for status (threads: each worker's copies
                       are one thread's, whatever its number); the summary
                       says how many were hashed and why the rest were not;
                       `gputrace report -f json` gives the JSON back byte for
                       byte
  off                  no checksums key, no summary line, without the variable
  categories_off       with only the kernel category, driver and runtime: every copy
                       still hashed, at its synchronize, and no copy or synchronize
                       recorded (the same events as without checksums)
  diff_same            two runs: diff passes (0) and says the copies are the same
  diff_changed         one element of copy 3 changed (call sites off): diff exits 3
                       naming thread 0 copy 3, its size and both hashes
  diff_not_comparable  one copy more, or another mode: diff exits 4 and says why
  float_tolerant       dtoh:f32:16 passes a last-bit change and fails a larger
                       one; dtoh fails the last-bit change
  threads_diff         four threads: two runs are the same; a change in one
                       worker's copy 1 is found (exit 3, index 1)
  merge                two runs merged keep each run's copies under its rank;
                       two merges diff to the changed rank; the merge reads back
  sites                call sites on (the default): each copy's site is the
                       line of checksum_prog.c marked "SITE" for it, in the
                       scenario's function (driver, runtime, and with only
                       the kernel category, when no copy is recorded); diff
                       of two runs matches the copies by site and passes,
                       and names the site of a changed copy;
                       GPUTRACE_CALLSITES=off leaves every site null
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

STATUS_WORDS = {"overwritten": "overwritten before a synchronize",
                "unsynchronized": "never synchronized"}


class Case:
    def __init__(self, args, tmp):
        self.args = args
        self.tmp = tmp
        self.failures = []
        self.runs = 0

    def expect(self, ok, what):
        if not ok:
            self.failures.append(what)

    def run(self, scenario, mode="dtoh", env=None, name=None):
        """Runs the program under the library; returns (report, truth, log)."""
        self.runs += 1
        name = name or f"run{self.runs}"
        base = os.path.join(self.tmp, name)
        e = {k: v for k, v in os.environ.items() if not k.startswith(("GPUTRACE_", "CK_"))}
        e.update({"LD_PRELOAD": self.args.lib, "GPUTRACE_OUTPUT": base,
                  "GPUTRACE_LOG": base + ".log", "CK_TRUTH": base + ".truth"})
        # off: the library hashes nothing, the program's truth is dtoh's.
        e["GPUTRACE_CHECKSUM"] = mode or "off"
        e.update(env or {})
        p = subprocess.run([self.args.prog, scenario], env=e, capture_output=True, text=True,
                           timeout=120)
        if p.returncode != 0:
            sys.exit(f"FAIL: {scenario} exited {p.returncode}: {p.stderr}")
        with open(base + ".json") as f:
            report = json.load(f)
        with open(base + ".truth") as f:
            truth = [json.loads(line) for line in f if line.strip()]
        with open(base + ".log") as f:
            log = f.read()
        return base + ".json", report, truth, log

    def cli(self, *argv):
        return subprocess.run([self.args.cli, *argv], capture_output=True, text=True, timeout=60)

    def diff(self, a, b, *more):
        """GPU-timed rows only: the emulator's times are exact, the host's are not."""
        return self.cli("diff", a, b, "-c", "kernel,memcpy,memset", *more)

    def diff_json(self, a, b):
        p = self.diff(a, b, "-f", "json")
        return p.returncode, json.loads(p.stdout)["checksums"]


def copies_by_thread(report):
    threads = {}
    for c in report["checksums"]["copies"]:
        threads.setdefault((c.get("rank", 0), c["thread"]), []).append(
            (c["index"], c["bytes"], c["hash"], c["status"]))
    return threads


def truth_by_worker(truth):
    workers = {}
    for t in truth:
        workers.setdefault(t["worker"], []).append((t["index"], t["bytes"], t["hash"], t["status"]))
    return {w: sorted(v) for w, v in workers.items()}


def check_truth(c, scenario):
    path, report, truth, log = c.run(scenario)
    ck = report.get("checksums")
    c.expect(ck is not None, "no checksums in the report")
    if ck is None:
        return
    c.expect(ck["mode"] == "dtoh" and ck["hash"] == "xxh3-64", f"mode/hash {ck['mode']} {ck['hash']}")
    got = sorted(sorted(v) for v in copies_by_thread(report).values())
    want = sorted(truth_by_worker(truth).values())
    c.expect(got == want, f"copies {got}\nexpected {want}")
    hashed = sum(t["status"] == "hashed" for t in truth)
    c.expect(ck["hashed"] == hashed, f"hashed {ck['hashed']}, expected {hashed}")
    c.expect(ck["unhashed"] == len(truth) - hashed, f"unhashed {ck['unhashed']}")
    c.expect(ck["hashed_bytes"] == sum(t["bytes"] for t in truth if t["status"] == "hashed"),
             f"hashed_bytes {ck['hashed_bytes']}")
    for word in STATUS_WORDS:
        n = sum(t["status"] == word for t in truth)
        c.expect(ck["unhashed_by"][word] == n, f"unhashed_by.{word} {ck['unhashed_by'][word]}, "
                 f"expected {n}")
    c.expect(0 < ck["cost_ns"] < 1_000_000_000, f"cost_ns {ck['cost_ns']}")
    threads = {t["thread"]: t for t in ck["threads"]}
    for (rank, thread), copies in copies_by_thread(report).items():
        t = threads.get(thread)
        c.expect(t is not None and t["copies"] == len(copies)
                 and t["bytes"] == sum(b for _, b, _, _ in copies),
                 f"thread {thread} summary {t}")
    noun = "copy" if hashed == 1 else "copies"
    line = f"checksums (dtoh, xxh3-64): {hashed} {noun} hashed"
    c.expect(line in log, f"no '{line}' in the summary:\n{log}")
    for word, reason in STATUS_WORDS.items():
        n = sum(t["status"] == word for t in truth)
        if n:
            c.expect(f"{n} {reason}" in log, f"no '{n} {reason}' in the summary")
    again = c.cli("report", path, "-f", "json")
    with open(path) as f:
        c.expect(again.returncode == 0 and again.stdout == f.read(),
                 f"gputrace report -f json does not give the JSON back: {again.stderr}")


def check_off(c):
    _, report, truth, log = c.run("mixed", mode=None)
    c.expect("checksums" not in report, "checksums in a report made without them")
    c.expect("checksums (" not in log, "a checksums line in the summary without them")
    c.expect(len(truth) == 6, f"the program made {len(truth)} copies")


def check_categories_off(c):
    only = {"GPUTRACE_CATEGORIES": "kernel"}
    for scenario in ("mixed", "runtime"):
        _, report, truth, _ = c.run(scenario, env=only)
        got = [(x["index"], x["bytes"], x["hash"], x["status"])
               for x in report["checksums"]["copies"]]
        want = [(t["index"], t["bytes"], t["hash"], t["status"]) for t in truth]
        c.expect(got == want, f"{scenario}: copies {got}\nexpected {want}")
        _, bare, _, _ = c.run(scenario, mode=None, env=only)
        c.expect(report["memcpy"] == [] and report["sync"] == [] and report["api"] == [],
                 f"{scenario}: tables of categories that are off")
        c.expect(report["totals"]["events"] == bare["totals"]["events"],
                 f"{scenario}: {report['totals']['events']} events with checksums, "
                 f"{bare['totals']['events']} without")


def check_diff_same(c):
    a, *_ = c.run("mixed")
    b, *_ = c.run("mixed")
    p = c.diff(a, b)
    c.expect(p.returncode == 0, f"diff exited {p.returncode}:\n{p.stdout}{p.stderr}")
    c.expect("checksums (dtoh): same: 6 copies compared" in p.stdout, p.stdout)
    rc, ck = c.diff_json(a, b)
    c.expect(ck["verdict"] == "same" and ck["compared"] == 6 and ck["first"] is None, ck)


def check_diff_changed(c):
    # Without call sites, copies are matched by index (sites: check_sites).
    nosite = {"GPUTRACE_CALLSITES": "off"}
    a, _, truth_a, _ = c.run("mixed", env=nosite)
    b, _, truth_b, _ = c.run("mixed", env={"CK_CHANGE": "3:17", **nosite})
    p = c.diff(a, b)
    c.expect(p.returncode == 3, f"diff exited {p.returncode}:\n{p.stdout}{p.stderr}")
    ha, hb = truth_a[3]["hash"], truth_b[3]["hash"]
    line = (f"checksums (dtoh): DIVERGED: the first copy that brought back other data is "
            f"thread 0 copy 3 (16.0 KiB, site -): {ha} -> {hb}")
    c.expect(line in p.stdout, f"no '{line}' in:\n{p.stdout}")
    rc, ck = c.diff_json(a, b)
    first = ck["first"] or {}
    c.expect(rc == 3 and ck["verdict"] == "diverged", ck)
    c.expect(first.get("thread") == 0 and first.get("index") == 3 and first.get("bytes") == 16384
             and first.get("base_hash") == ha and first.get("new_hash") == hb
             and first.get("site") is None, first)
    csv = c.diff(a, b, "-f", "csv").stdout
    c.expect('checksums,"thread 0 copy 3",diverged,true' in csv, csv)
    # Diverged results fail before a slowdown: 3 even when rows are slower
    # (the host times of two runs differ).
    slow = c.cli("diff", a, b, "-c", "all", "--threshold", "0")
    c.expect(slow.returncode == 3, f"with --threshold 0 diff exited {slow.returncode}")


def check_not_comparable(c):
    a, *_ = c.run("mixed")
    b, *_ = c.run("mixed", env={"CK_EXTRA": "1"})
    p = c.diff(a, b)
    c.expect(p.returncode == 4, f"diff exited {p.returncode}:\n{p.stdout}")
    why = "thread 0 made 6 device-to-host copies in BASE, 7 in NEW"
    c.expect(f"checksums (dtoh): NOT COMPARABLE: {why}" in p.stdout, p.stdout)
    f, *_ = c.run("mixed", mode="dtoh:f32:16")
    p = c.diff(a, f)
    c.expect(p.returncode == 4 and "different modes, dtoh and dtoh:f32:16" in p.stdout, p.stdout)
    # One run without checksums: nothing to compare, no verdict of its own.
    o, *_ = c.run("mixed", mode=None)
    p = c.diff(a, o)
    c.expect(p.returncode == 0 and "checksums: not compared: only BASE has checksums" in p.stdout,
             f"{p.returncode}\n{p.stdout}")


def check_float(c):
    base, *_ = c.run("mixed", mode="dtoh:f32:16")
    ulp, *_ = c.run("mixed", mode="dtoh:f32:16", env={"CK_CHANGE": "2:100:ulp"})
    big, *_ = c.run("mixed", mode="dtoh:f32:16", env={"CK_CHANGE": "2:100"})
    p = c.diff(base, ulp)
    c.expect(p.returncode == 0, f"a last-bit change failed dtoh:f32:16: {p.stdout}")
    p = c.diff(base, big)
    c.expect(p.returncode == 3 and "thread 0 copy 2 " in p.stdout,
             f"a change of 1.0 passed dtoh:f32:16 ({p.returncode}): {p.stdout}")
    exact, *_ = c.run("mixed")
    exact_ulp, *_ = c.run("mixed", env={"CK_CHANGE": "2:100:ulp"})
    p = c.diff(exact, exact_ulp)
    c.expect(p.returncode == 3 and "thread 0 copy 2 " in p.stdout,
             f"a last-bit change passed dtoh ({p.returncode}): {p.stdout}")


def check_threads_diff(c):
    a, ra, _, _ = c.run("threads")
    b, *_ = c.run("threads")
    p = c.diff(a, b)
    c.expect(p.returncode == 0 and "same: 24 copies compared" in p.stdout, p.stdout)
    changed, rc_, truth, _ = c.run("threads", env={"CK_CHANGE": "1:5"})
    rc, ck = c.diff_json(a, changed)
    first = ck.get("first") or {}
    c.expect(rc == 3 and first.get("index") == 1, f"{rc} {ck}")
    # The thread named is the one whose copies are worker 0's.
    want = {t["hash"] for t in truth if t["worker"] == 0 and t["index"] == 1}
    c.expect(first.get("new_hash") in want, f"{first} not worker 0's copy 1")


def check_merge(c):
    a1, *_ = c.run("mixed", name="a1")
    a2, *_ = c.run("mixed", name="a2")
    b2, *_ = c.run("mixed", name="b2", env={"CK_CHANGE": "4:9"})
    out_a = os.path.join(c.tmp, "merged_a")
    out_b = os.path.join(c.tmp, "merged_b")
    for out, files in ((out_a, (a1, a2)), (out_b, (a1, b2))):
        p = c.cli("merge", *files, "-o", out, "-f", "json")
        c.expect(p.returncode == 0, f"merge exited {p.returncode}: {p.stderr}")
    with open(out_a + ".json") as f:
        merged = json.load(f)
    ck = merged["checksums"]
    ranks = sorted({x["rank"] for x in ck["copies"]})
    c.expect(ranks == [0, 1] and len(ck["copies"]) == 12 and ck["hashed"] == 12,
             f"merged: ranks {ranks}, {len(ck['copies'])} copies, hashed {ck['hashed']}")
    c.expect(sorted((t["rank"], t["thread"]) for t in ck["threads"]) == [(0, 0), (1, 0)],
             ck["threads"])
    rc, d = c.diff_json(out_a + ".json", out_b + ".json")
    first = d.get("first") or {}
    c.expect(rc == 3 and first.get("rank") == 1 and first.get("index") == 4, f"{rc} {d}")
    again = c.cli("report", out_a + ".json", "-f", "json")
    with open(out_a + ".json") as f:
        c.expect(again.returncode == 0 and again.stdout == f.read(),
                 "the merged report does not read back as written")
    f32, *_ = c.run("mixed", mode="dtoh:f32:20", name="f32")
    p = c.cli("merge", a1, f32, "-o", os.path.join(c.tmp, "bad"), "-f", "json")
    c.expect(p.returncode == 2 and "different modes (dtoh, dtoh:f32:20)" in p.stderr, p.stderr)


def marked_sites(scenario):
    """The lines marked SITE in scenario_SCENARIO of the program, in order."""
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "checksum_prog.c")
    lines, inside = [], False
    with open(source) as f:
        for number, text in enumerate(f, 1):
            if text.startswith("static void scenario_"):
                inside = text.startswith(f"static void scenario_{scenario}(")
            elif inside and "/* SITE */" in text:
                lines.append(number)
    return lines


def check_site(c, what, site, line):
    c.expect(site is not None and site.get("language") == "native"
             and os.path.basename(site.get("file", "")) == "checksum_prog.c"
             and site.get("line") == line and "gt_checksum_prog" in site.get("module", ""),
             f"{what}: site {site}, expected checksum_prog.c:{line}")


def check_sites(c):
    # With only kernels recorded, no copy has a record whose site it could
    # share: the site is taken for the checksum alone (as for a copy the
    # call site sampling passed over).
    for scenario, env in (("mixed", {}), ("runtime", {}),
                          ("mixed", {"GPUTRACE_CATEGORIES": "kernel"})):
        lines = marked_sites(scenario)
        _, report, _, _ = c.run(scenario, env={"GPUTRACE_CALLSITES": "native", **env})
        copies = sorted(report["checksums"]["copies"], key=lambda x: x["index"])
        c.expect(len(copies) == len(lines), f"{scenario}: {len(copies)} copies, "
                 f"{len(lines)} marked")
        for copy, line in zip(copies, lines):
            check_site(c, f"{scenario} {env} copy {copy['index']}", copy["site"], line)
    # Two runs: the copies are matched by site; a changed one is named by it.
    a, *_ = c.run("mixed")
    b, *_ = c.run("mixed")
    rc, ck = c.diff_json(a, b)
    c.expect(rc == 0 and ck["verdict"] == "same" and ck["compared"] == 6, f"{rc} {ck}")
    changed, *_ = c.run("mixed", env={"CK_CHANGE": "3:17"})
    p = c.diff(a, changed)
    line = marked_sites("mixed")[3]
    c.expect(p.returncode == 3 and re.search(
        rf"thread 0 copy 3 \(16.0 KiB, site scenario_mixed \(\S*checksum_prog.c:{line}\)\)",
        p.stdout), f"diff exited {p.returncode}, no site of copy 3 in:\n{p.stdout}")
    rc, ck = c.diff_json(a, changed)
    check_site(c, "diff's first", (ck.get("first") or {}).get("site"), line)
    _, off, _, _ = c.run("mixed", env={"GPUTRACE_CALLSITES": "off"})
    c.expect(all(x["site"] is None for x in off["checksums"]["copies"]),
             "sites with GPUTRACE_CALLSITES=off")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--cli", required=True)
    ap.add_argument("--prog", required=True)
    ap.add_argument("case")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        c = Case(args, tmp)
        if args.case.startswith("truth_"):
            check_truth(c, args.case[len("truth_"):])
        else:
            {"off": check_off, "categories_off": check_categories_off,
             "diff_same": check_diff_same, "diff_changed": check_diff_changed,
             "diff_not_comparable": check_not_comparable, "float_tolerant": check_float,
             "threads_diff": check_threads_diff, "merge": check_merge,
             "sites": check_sites}[args.case](c)
    if c.failures:
        for f in c.failures:
            print("FAIL:", f)
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
