"""The CPython interpreters of one version that this machine can run, for
check_callsites_versions.py and check_python_offsets.py: the ones
scripts/debian-pythons.py got from Debian's archive (its pythons.json),
the system's (/usr/bin, /usr/local/bin), and any on PATH, under pyenv's
root ($PYENV_ROOT, else ~/.pyenv) or named in GPUTRACE_TEST_PYTHONS (a
colon-separated list of executables). Each is run once to learn what it
is; two paths to one executable count once. Free-threaded builds are
left out: the call-site reader gives them no Python sites by design.
"""
import glob
import json
import os
import re
import shutil
import subprocess

# What an interpreter says about itself.
PROBE = r"""
import json, os, sys, sysconfig
inc = sysconfig.get_paths()["include"]
print(json.dumps({
    "version": "%d.%d" % sys.version_info[:2],
    "full": sys.version.split()[0],
    "executable": os.path.realpath(sys.executable),
    "include": [inc, os.path.dirname(sysconfig.get_config_h_filename())],
    "shared": any("/libpython" in line for line in open("/proc/self/maps")),
    "free_threaded": bool(sysconfig.get_config_var("Py_GIL_DISABLED")),
}))
"""

NOT_GOT = "scripts/debian-pythons.py gets no such version (it gets 3.9 and 3.13)"


class Interpreter:
    def __init__(self, origin, python, home=None, loader=None, library_path=(), include=()):
        self.origin = origin
        self.python = python
        self.home = home
        self.loader = loader
        self.library_path = list(library_path)
        self.include = list(include)
        self.about = {}

    def command(self, env, lib_dirs=()):
        """(argv, env) that run this interpreter with env and lib_dirs after
        its own library directories on its library path."""
        env = dict(env)
        env.pop("PYTHONHOME", None)
        if self.home:
            env["PYTHONHOME"] = self.home
        path = ":".join(self.library_path + list(lib_dirs))
        if self.loader:
            # A C library of its own: its loader's search path, never
            # LD_LIBRARY_PATH, which the processes around it would inherit.
            return [self.loader, "--library-path", path, self.python], env
        if path:
            env["LD_LIBRARY_PATH"] = path
        else:
            env.pop("LD_LIBRARY_PATH", None)
        return [self.python], env

    def probe(self):
        argv, env = self.command(os.environ)
        try:
            r = subprocess.run(argv + ["-c", PROBE], env=env, capture_output=True, text=True,
                               timeout=60)
            self.about = json.loads(r.stdout) if r.returncode == 0 else {}
        except (OSError, ValueError, subprocess.TimeoutExpired):
            self.about = {}
        return bool(self.about)

    def describe(self):
        kind = "shared libpython" if self.about.get("shared") else "libpython linked in"
        return f"CPython {self.about.get('full', '?')} ({self.origin}, {kind})"

    def headers(self):
        """The include directories, when they hold Python.h, else []."""
        include = self.include or self.about.get("include", [])
        if include and os.path.exists(os.path.join(include[0], "Python.h")):
            return include
        return []


def debian(version, debian_dir):
    """(the interpreter from Debian's archive or None, why there is none)."""
    try:
        with open(os.path.join(debian_dir, "pythons.json")) as f:
            entry = json.load(f).get(version)
    except (OSError, ValueError):
        return None, "scripts/debian-pythons.py made no list of interpreters"
    if entry is None:
        return None, NOT_GOT
    if "unavailable" in entry:
        return None, entry["unavailable"]
    return Interpreter(entry["origin"], entry["python"], entry["home"], entry["loader"],
                       entry["library_path"], entry["include"]), ""


def local_candidates(version):
    name = f"python{version}"
    found = [os.path.join(d, name) for d in ("/usr/bin", "/usr/local/bin")]
    on_path = shutil.which(name)
    if on_path:
        found.append(on_path)
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    for d in sorted(glob.glob(os.path.join(root, "versions", f"{version}.*"))):
        if re.fullmatch(re.escape(version) + r"\.\d+", os.path.basename(d)):
            found.append(os.path.join(d, "bin", name))
    found += [p for p in os.environ.get("GPUTRACE_TEST_PYTHONS", "").split(":") if p]
    return [p for p in found if os.access(p, os.X_OK)]


def interpreters(version, debian_dir):
    """(interpreters, why there is none): every distinct interpreter of the
    version found, and a one-line reason when the list is empty."""
    found, seen = [], set()
    deb, why = debian(version, debian_dir)
    candidates = [deb] if deb else []
    candidates += [Interpreter(os.path.dirname(p), p) for p in local_candidates(version)]
    for c in candidates:
        if not c.probe() or c.about["version"] != version or c.about["free_threaded"]:
            continue
        if c.about["executable"] in seen:
            continue
        seen.add(c.about["executable"])
        found.append(c)
    if found:
        return found, ""
    return [], (f"no CPython {version} here: {why or NOT_GOT}, and none is installed "
                f"(python{version} in /usr/bin, /usr/local/bin, on PATH, under pyenv's root, "
                "in GPUTRACE_TEST_PYTHONS)")


def check_each(version, debian_dir, check_one):
    """Runs check_one(interpreter) on every interpreter of the version
    found, printing "ok: ..." for each that added no failure (verdict.py);
    the exit status: 77 (skipped, with the reason) when there is none."""
    from verdict import failures, report
    found, why = interpreters(version, debian_dir)
    if not found:
        print(f"SKIP: {why}")
        return 77
    for interp in found:
        before = len(failures)
        check_one(interp)
        if len(failures) == before:
            print(f"ok: {interp.describe()}")
    return report()
