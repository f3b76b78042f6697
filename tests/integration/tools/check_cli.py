#!/usr/bin/env python3
"""The subcommands as a user meets them (SPEC §11).

check_cli.py --cli GPUTRACE CASE -- program [args...]

The program runs once under gputrace to give a real report, then CASE:
  dispatch   a first argument exactly report/diff/merge is a subcommand; a
             program of that name runs as `gputrace -- report` or
             `gputrace ./report`
  report     -c, -v, -f, -o (with %h from the report), standard input
  refuse     not a report, another schema, cut short, a directory, deep
             nesting, huge numbers, wrong types, bad options: exit 2, one
             line on stderr, nothing on stdout (report, diff and merge)
  hostile    names with invalid UTF-8 and a 100 MB name are shown safely
  diff       exit 0 for the same report, 1 when a kernel got slower, 0
             again under --min-ns, 2 on a bad threshold
  merge      files from a template, read back by report and diff
  width      the library's summary fits COLUMNS, the program by its base name
"""
import argparse
import json
import os
import re
import stat
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from verdict import check, report  # noqa: E402


class Tool:
    def __init__(self, cli, directory):
        self.cli = cli
        self.dir = directory

    def run(self, *argv, stdin=None, env=None, timeout=120):
        p = subprocess.run([self.cli, *argv], input=stdin, capture_output=True, timeout=timeout,
                           env=env)
        return p.returncode, p.stdout, p.stderr.decode(errors="replace")

    def path(self, name):
        return os.path.join(self.dir, name)

    def write(self, name, data):
        with open(self.path(name), "wb") as f:
            f.write(data if isinstance(data, bytes) else data.encode())
        return self.path(name)


def refused(t, what, *argv, stdin=None):
    rc, out, err = t.run(*argv, stdin=stdin)
    lines = err.splitlines()
    check(rc == 2 and not out and len(lines) == 1 and lines[0].startswith("gputrace: "),
          f"{what}: exit {rc}, stdout {out[:200]!r}, stderr {err[:400]!r}; expected exit 2 "
          "and one error line")
    return lines[0] if lines else ""


def case_dispatch(t, base):
    script = t.write("report", "#!/bin/sh\nexit 7\n")
    os.chmod(script, os.stat(script).st_mode | stat.S_IXUSR)
    env = dict(os.environ, PATH=t.dir + os.pathsep + os.environ.get("PATH", ""),
               GPUTRACE_VERBOSITY="none")
    for argv in (["--", "report"], [script]):
        rc, _, err = t.run(*argv, env=env)
        check(rc == 7, f"gputrace {' '.join(argv)}: exit {rc} ({err}), expected the program's 7")
    line = refused(t, "gputrace report (no file)", "report")
    check("no report file given" in line, f"report with no file: {line}")
    for command in ("report", "diff", "merge"):
        rc, out, _ = t.run(command, "--help")
        check(rc == 0 and out.startswith(f"usage: gputrace {command}".encode()),
              f"gputrace {command} --help: exit {rc}, {out[:80]!r}")
    rc, out, _ = t.run("--help")
    check(b"gputrace diff BASE.json NEW.json" in out, "gputrace --help does not name diff")


def case_report(t, base):
    with open(base, "rb") as f:
        data = f.read()
    rc, out, err = t.run("report", base, "-c", "kernel")
    text = out.decode()
    check(rc == 0 and "\nkernel:" in text and "\nmemcpy:" not in text and "\napi:" not in text,
          f"report -c kernel: exit {rc}: {text[:600]}{err}")
    rc, out, _ = t.run("report", "-v", "verbose", base)
    check(rc == 0 and b"RestAvg" in out, "report -v verbose has no RestAvg column")
    rc, out, _ = t.run("report", base, "-f", "csv")
    check(rc == 0 and out.startswith(b"category,name,calls,total_ns"), f"report -f csv: {out[:80]!r}")
    rc, out, err = t.run("report", base, "-o", t.path("again.%h"), "-f", "json,csv")
    host = json.loads(data)["process"]["hostname"]
    again = t.path(f"again.{host}")
    check(rc == 0 and not out and os.path.exists(again + ".json") and os.path.exists(again + ".csv"),
          f"report -o again.%h -f json,csv: exit {rc} {err}; files {os.listdir(t.dir)}")
    if os.path.exists(again + ".json"):
        with open(again + ".json", "rb") as f:
            check(f.read() == data, "report -f json -o: not the same JSON")
    rc, out, _ = t.run("report", "-", stdin=data)
    rc2, out2, _ = t.run("report", base)
    check(rc == 0 and out == out2 and out, "report - (standard input) differs from the file")
    refused(t, "report -f chrome", "report", base, "-f", "chrome")
    refused(t, "report -f json,csv without -o", "report", base, "-f", "json,csv")
    refused(t, "report -v loud", "report", base, "-v", "loud")
    refused(t, "report -c bogus", "report", base, "-c", "bogus")
    refused(t, "report two files", "report", base, base)
    refused(t, "report --nonsense", "report", base, "--nonsense")


def case_refuse(t, base):
    with open(base) as f:
        doc = json.load(f)
    with open(base, "rb") as f:
        raw = f.read()
    inputs = {
        "a directory": (t.dir, "is a directory"),
        "a missing file": (t.path("missing.json"), "No such file"),
        "an empty file": (t.write("empty.json", ""), "empty file"),
        "text": (t.write("text.json", "hello\n"), "not valid JSON at line 1, column 1"),
        "a JSON array": (t.write("array.json", "[1, 2, 3]"), "not a gputrace report"),
        "another tool's JSON": (t.write("nsys.json", '{"tool": "nsys", "schema": 1}'),
                                "not a gputrace report"),
        "schema 2": (t.write("schema2.json", json.dumps(dict(doc, schema=2))),
                     "schema 2 is not supported"),
        "a file cut short": (t.write("cut.json", raw[:len(raw) // 2]), "truncated"),
        "deep nesting": (t.write("deep.json", "[" * 100000), "nested deeper than 1000"),
        "a huge number": (t.write("huge.json", raw.replace(b'"events": ', b'"events": 1e999', 1)),
                          "totals.events"),
        "a negative count": (t.write("neg.json", json.dumps(dict(doc, totals=dict(doc["totals"], dropped=-3)))),
                             "totals.dropped"),
        "a wrong type": (t.write("type.json", json.dumps(dict(doc, kernels={"a": 1}))),
                         "kernels: expected an array"),
    }
    for what, (path, says) in inputs.items():
        for argv in (["report", path], ["diff", base, path], ["diff", path, base],
                     ["merge", base, path]):
            line = refused(t, f"{' '.join(argv[:1])} of {what}", *argv)
            check(says in line and (path in line or what == "a directory"),
                  f"{argv[0]} of {what}: '{line}' does not say '{says}' of {path}")


def case_hostile(t, base):
    with open(base) as f:
        doc = json.load(f)
    check(doc["kernels"], "the program recorded no kernel")
    bad = json.dumps(doc).replace(json.dumps(doc["kernels"][0]["name"]), '"bad \\u001b[31m NAME"', 1)
    bad = bad.encode().replace(b"NAME", b"\xff\xfe\xc3(", 1)
    rc, out, err = t.run("report", t.write("bad.json", bad), "-v", "verbose")
    check(rc == 0 and b"\x1b" not in out, f"invalid UTF-8 and an escape in a name: exit {rc} {err}")
    try:
        out.decode("utf-8")
    except UnicodeDecodeError as e:
        check(False, f"the summary of a name with invalid UTF-8 is not UTF-8: {e}")
    long_name = "k" * (100 << 20)
    doc["kernels"][0]["name"] = long_name
    path = t.write("long.json", json.dumps(doc))
    rc, out, err = t.run("report", path, timeout=60)
    lines = out.decode().splitlines()
    check(rc == 0 and max(len(line) for line in lines) <= 120 and "k...k" in out.decode(),
          f"a 100 MB name: exit {rc} {err[:200]}; widest line {max(map(len, lines), default=0)}")
    rc, out, err = t.run("report", path, "-f", "json", timeout=60)
    check(rc == 0 and json.loads(out)["kernels"][0]["name"] == long_name,
          f"a 100 MB name in JSON: exit {rc} {err[:200]}")


def edited(t, base, name, scale):
    """base with its first kernel's times multiplied by scale."""
    with open(base) as f:
        doc = json.load(f)
    stats = doc["kernels"][0]["gpu_ns"]
    for k in stats:
        stats[k] = int(stats[k] * scale)
    return t.write(name, json.dumps(doc)), stats["total"]


def case_diff(t, base):
    rc, out, _ = t.run("diff", base, base)
    check(rc == 0 and b"pass, nothing slower" in out, f"diff of a report with itself: exit {rc}")
    slower, total = edited(t, base, "slower.json", 2)
    rc, out, _ = t.run("diff", base, slower)
    check(rc == 1 and re.search(rb"\n  slower +\+100\.0%", out),
          f"diff with a kernel twice as slow: exit {rc}: {out.decode()[:800]}")
    rc, _, _ = t.run("diff", base, slower, "--min-ns", str(total + 1))
    check(rc == 0, f"diff under --min-ns {total + 1}: exit {rc}, expected 0")
    rc, _, _ = t.run("diff", base, slower, "--threshold", "150")
    check(rc == 0, f"diff with --threshold 150: exit {rc}, expected 0")
    rc, _, _ = t.run("diff", slower, base)
    check(rc == 0, f"diff towards the faster report: exit {rc}, expected 0")
    rc, out, _ = t.run("diff", base, slower, "-f", "json")
    check(rc == 1 and json.loads(out)["failing"] == 1, f"diff -f json: exit {rc}")
    rc, out, _ = t.run("diff", base, slower, "-f", "csv")
    check(rc == 1 and out.startswith(b"category,name,verdict"), f"diff -f csv: exit {rc}")
    refused(t, "diff --threshold abc", "diff", base, slower, "--threshold", "abc")
    refused(t, "diff --min-ns -5", "diff", base, slower, "--min-ns", "-5")
    refused(t, "diff of one file", "diff", base)
    refused(t, "diff -f json,csv", "diff", base, slower, "-f", "json,csv")


def case_merge(t, base):
    slower, _ = edited(t, base, "slower.json", 2)
    rc, out, err = t.run("merge", base, slower, "-o", t.path("m"), "-f", "json,text,csv")
    check(rc == 0 and not out, f"merge -o m: exit {rc} {err}")
    for ext in ("json", "txt", "csv"):
        check(os.path.exists(t.path("m." + ext)), f"merge -o m wrote no m.{ext}")
    rc, out, err = t.run("report", t.path("m.json"))
    check(rc == 0 and b"inputs: 2 reports" in out and b"MaxIn" in out,
          f"report of the merge: exit {rc} {err}")
    with open(t.path("m.txt"), "rb") as f:
        check(f.read() == out, "report of the merged JSON differs from the merged text")
    rc, out, _ = t.run("merge", base, slower)
    check(rc == 0 and out.startswith(b"gputrace: "), "merge without -o prints no summary")
    # the terminal's width (COLUMNS): the spread and StdDev, Min, Max columns
    # go before names are cut, and every table row fits
    for columns, stddev in (("80", False), ("200", True)):
        env = dict(os.environ, COLUMNS=columns)
        rc, out, _ = t.run("report", t.path("m.json"), env=env)
        rows = [line for line in out.decode().splitlines()
                if line.startswith("  ") and "%" in line and "CUDA_ERROR" not in line
                and "more," not in line]
        check(rc == 0 and rows and all(len(line) <= int(columns) for line in rows),
              f"COLUMNS={columns}: rows wider: {[line for line in rows if len(line) > int(columns)]}")
        check((b"StdDev" in out) == stddev, f"COLUMNS={columns}: StdDev shown {b'StdDev' in out}")
        if stddev:
            check(not any("..." in line for line in rows),
                  f"COLUMNS={columns}: a name cut: {[line for line in rows if '...' in line]}")
    rc, _, _ = t.run("diff", t.path("m.json"), t.path("m.json"))
    check(rc == 0, f"diff of the merge with itself: exit {rc}")
    refused(t, "merge of nothing", "merge", "-o", t.path("x"))
    refused(t, "merge -f chrome", "merge", base, "-o", t.path("x"), "-f", "chrome")


def case_width(t, base):
    """The summary the library prints fits COLUMNS; the header starts with
    the program's base name."""
    program = os.path.basename(t.command[0])
    for columns, stddev in (("80", False), ("200", True)):
        env = dict(os.environ, COLUMNS=columns)
        rc, _, err = t.run("--", *t.command, env=env)
        lines = err.splitlines()
        rows = [line for line in lines if line.startswith("  ") and "%" in line and
                "CUDA_ERROR" not in line and "more," not in line]
        check(rc == 0 and rows and all(len(line) <= int(columns) for line in rows),
              f"COLUMNS={columns}: rows wider: {[line for line in rows if len(line) > int(columns)]}")
        headers = [line for line in lines if line.startswith("  Time%")]
        check(headers and all(("StdDev" in line) == stddev for line in headers) if stddev else
              any("StdDev" not in line for line in headers),
              f"COLUMNS={columns}: table headers {headers}")
        check(any(line.startswith(f"gputrace: {program} ") for line in lines),
              f"COLUMNS={columns}: the header does not start with {program}: {lines[:1]}")


CASES = {"dispatch": case_dispatch, "width": case_width, "report": case_report, "refuse": case_refuse,
         "hostile": case_hostile, "diff": case_diff, "merge": case_merge}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("case", choices=sorted(CASES))
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    os.environ.pop("COLUMNS", None)  # the text compared is a file's width
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    with tempfile.TemporaryDirectory(prefix="gt-tools-") as d:
        t = Tool(args.cli, d)
        t.command = command
        env = dict(os.environ, GPUTRACE_VERBOSITY="none", GT_APP_MANIFEST=t.path("m.%p.json"))
        subprocess.run([args.cli, "-o", t.path("base"), "--", *command], env=env,
                       capture_output=True, timeout=120)
        base = t.path("base.json")
        if not check(os.path.exists(base), f"{' '.join(command)} wrote no report"):
            return report()
        CASES[args.case](t, base)
    return report()


if __name__ == "__main__":
    sys.exit(main())
