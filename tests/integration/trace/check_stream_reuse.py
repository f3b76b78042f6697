#!/usr/bin/env python3
"""Runs stream_reuse (streams made one after another, each destroyed
before the next, so that later ones get earlier ones' handles) under
libgputrace.so on the emulated driver and holds its timeline to it: each
stream's memset on a track of its own, named by the driver's number of
that stream, however its handle was reused.

check_stream_reuse.py --lib LIB --prog PROG

Exit status 0 when every check holds, 1 otherwise.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from verdict import check, report  # noqa: E402

STREAMS = 4  # stream_reuse.c


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--prog", required=True)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GPUTRACE_")}
        env.update(LD_PRELOAD=a.lib, GPUTRACE_OUTPUT=os.path.join(tmp, "r"),
                   GPUTRACE_FORMAT="chrome", GPUTRACE_VERBOSITY="none")
        p = subprocess.run([a.prog], env=env, capture_output=True, text=True, timeout=60)
        if not check(p.returncode == 0, f"the program failed ({p.returncode}): {p.stderr}"):
            return report()
        with open(os.path.join(tmp, "r.trace.json")) as f:
            events = json.load(f)["traceEvents"]
    reused = int(p.stdout)
    check(reused >= 1, f"the driver reused no stream handle ({reused}): nothing is tested")
    names = {e["tid"]: e["args"]["name"] for e in events
             if e.get("ph") == "M" and e.get("name") == "thread_name"}
    tracks = {names.get(e["tid"], "") for e in events
              if e.get("ph") == "X" and e.get("cat") == "memset" and
              re.match(r"^GPU \d+ stream \d+$", names.get(e["tid"], ""))}
    check(len(tracks) == STREAMS,
          f"{STREAMS} streams ({reused} at a reused handle) drawn on {len(tracks)} tracks: "
          f"{sorted(tracks)}")
    return report()


if __name__ == "__main__":
    sys.exit(main())
