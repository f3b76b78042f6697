"""Perfetto's protobuf definitions for the tests that decode .pftrace files:
the `perfetto` and `protobuf` packages from PyPI, at the versions pinned in
requirements.txt beside this file, in a virtual environment under the build
directory. The first test to need it makes it (one at a time, under a
lock); later tests and later runs reuse it while the pins are unchanged.

A checker calls run_in_venv(build_dir) first thing: it returns in the
environment's python (re-running the script there when needed), or, when
the packages cannot be had (no network to PyPI, no venv module), prints
one line saying so and exits SKIP, which ctest reports as skipped. A
failed attempt is remembered for RETRY_S so that one ctest run does not
wait on PyPI once per test.
"""
import fcntl
import os
import subprocess
import sys
import time

SKIP = 77
RETRY_S = 900
HERE = os.path.dirname(os.path.abspath(__file__))
REQUIREMENTS = os.path.join(HERE, "requirements.txt")
MARK = "GPUTRACE_PERFETTO_VENV"


def _pins():
    with open(REQUIREMENTS) as f:
        return "".join(line for line in f if line.strip() and not line.startswith("#"))


def skip_line(why):
    """One line saying why the test cannot run, and the skip status."""
    print(f"SKIPPED: {why}", flush=True)
    sys.exit(SKIP)


def _skip(why):
    skip_line(f"Perfetto's protobuf definitions are not available ({why})")


def _make(venv, pins):
    """Creates the environment; None, or why it could not."""
    python = os.path.join(venv, "bin", "python")
    steps = [
        ("python3 -m venv", [sys.executable, "-m", "venv", "--clear", venv]),
        (f"pip install {' '.join(pins.split())} from PyPI",
         [python, "-m", "pip", "install", "--quiet", "--no-input", "--disable-pip-version-check",
          "--timeout", "20", "--retries", "1", "-r", REQUIREMENTS]),
        ("importing perfetto_trace_pb2",
         [python, "-c", "from perfetto.protos.perfetto.trace import perfetto_trace_pb2"]),
    ]
    for what, cmd in steps:
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        except (OSError, subprocess.TimeoutExpired) as e:
            return f"{what}: {e}"
        if p.returncode != 0:
            last = (p.stderr.strip() or p.stdout.strip() or "failed").splitlines()[-1]
            return f"{what}: {last}"
    with open(os.path.join(venv, "gputrace-pins"), "w") as f:
        f.write(pins)
    return None


def venv_python(build_dir):
    """The environment's python, made when missing; exits SKIP when it cannot be."""
    venv = os.path.join(build_dir, "perfetto-venv")
    failed = venv + ".failed"
    pins = _pins()
    os.makedirs(build_dir, exist_ok=True)
    with open(venv + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            with open(os.path.join(venv, "gputrace-pins")) as f:
                if f.read() == pins:
                    return os.path.join(venv, "bin", "python")
        except OSError:
            pass
        try:
            with open(failed) as f:
                when, why = f.read().split("\n", 1)
            if time.time() - float(when) < RETRY_S:
                _skip(why.strip())
        except (OSError, ValueError):
            pass
        why = _make(venv, pins)
        if why:
            with open(failed, "w") as f:
                f.write(f"{time.time()}\n{why}\n")
            _skip(why)
        if os.path.exists(failed):
            os.unlink(failed)
    return os.path.join(venv, "bin", "python")


def run_in_venv(build_dir):
    """Returns when running in the environment; else runs this script again there."""
    if os.environ.get(MARK) == build_dir:
        return
    python = venv_python(build_dir)
    env = dict(os.environ)
    env[MARK] = build_dir
    os.execve(python, [python] + sys.argv, env)
