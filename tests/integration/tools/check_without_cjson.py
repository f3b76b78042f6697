#!/usr/bin/env python3
"""A build without cJSON (GPUTRACE_REPORT_TOOLS=OFF): the command is built
without linking libcjson, runs programs as always, and its report, diff and
merge each say in one line what the build lacks, with exit status 2.

check_without_cjson.py SOURCE_DIR BUILD_DIR"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from verdict import check, report  # noqa: E402

SOURCE, BUILD = sys.argv[1:3]


def run(command, **kw):
    return subprocess.run(command, capture_output=True, text=True, timeout=600, **kw)


def main():
    configure = run(["cmake", "-S", SOURCE, "-B", BUILD, "-DCMAKE_BUILD_TYPE=Release",
                     "-DBUILD_TESTING=OFF", "-DGPUTRACE_REPORT_TOOLS=OFF"])
    if not check(configure.returncode == 0, f"configure failed: {configure.stderr[-2000:]}"):
        return report()
    build = run(["cmake", "--build", BUILD, "--target", "gputrace_cli", "-j", "2"])
    if not check(build.returncode == 0, f"build failed: {build.stdout[-2000:]}"):
        return report()
    cli = os.path.join(BUILD, "bin", "gputrace")
    needed = run(["readelf", "-d", cli]).stdout
    check("libcjson" not in needed, f"the command still needs libcjson: {needed}")
    for command in (["report", "r.json"], ["diff", "a.json", "b.json"],
                    ["merge", "a.json", "-o", "m"]):
        p = run([cli, *command])
        check(p.returncode == 2, f"{command[0]}: exit status {p.returncode}")
        lines = p.stderr.splitlines()
        check(len(lines) == 1 and f"gputrace: {command[0]}: this gputrace was built without "
              "cJSON" in lines[0] and "install libcjson-dev" in lines[0],
              f"{command[0]}: stderr {p.stderr!r}")
    version = run([cli, "--version"])
    check(version.returncode == 0 and version.stdout.startswith("gputrace "),
          f"--version: {version.returncode} {version.stdout!r}")
    traced = run([cli, "-v", "none", "--", "sh", "-c", "exit 7"])
    check(traced.returncode == 7, f"a program run under it exited {traced.returncode}, not 7")
    return report()


if __name__ == "__main__":
    sys.exit(main())
