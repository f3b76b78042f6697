#!/usr/bin/env python3
"""Gets CPython interpreters this machine does not have from Debian's
archive, for the tests that run Python call sites on each version
(tests/python/check_callsites_versions.py, check_python_offsets.py),
without installing anything or touching the system's package state:

  3.9   bullseye's python3.9, run on this machine's C library as it is,
        with only bullseye's libffi.so.7 (for ctypes) on its library path
  3.13  trixie's python3.13, which needs a newer C library than bookworm's:
        run through trixie's own dynamic loader, with trixie's libc6 and
        the libraries it links extracted beside it

debian-pythons.py DEST

Each suite's packages are fetched by `apt-get download` under a private
configuration (its own sources list, package lists and cache under DEST,
none of the system's configuration read), which checks the archive's
signatures with the Debian archive keyring, then unpacked with
`dpkg-deb -x` into DEST/SUITE/root. DEST/pythons.json then says, for each
version, how to run it and where its headers are:

  {"3.9": {"origin", "python", "home", "loader", "library_path",
           "include"} or {"unavailable": reason}, ...}

  loader        the dynamic loader to run python with (null: the system's)
  library_path  the directories to search first: LD_LIBRARY_PATH, or the
                loader's --library-path

A DEST made by the same script on the same architecture is reused as it
is. Every network step is bounded in time (NETWORK_BUDGET_S in all); when
a suite cannot be downloaded (no network, no Debian tools, the suite gone
from every mirror tried), the manifest says why in one line, this prints
it, and the exit status is 77, which ctest counts as skipped. A download
that arrived but does not unpack or run is a failure (exit 1).

GPUTRACE_DEBIAN_MIRROR names a mirror to try before deb.debian.org (and
archive.debian.org, where suites go when Debian stops supporting them).
"""
import glob
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time

SKIP = 77
NETWORK_BUDGET_S = 240
KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"
MIRRORS = ["http://deb.debian.org/debian", "http://archive.debian.org/debian"]

# version -> (suite, the interpreter's package, packages beside it)
SUITES = {
    "3.9": ("bullseye", "python3.9-minimal",
            ["libpython3.9-minimal", "libpython3.9-stdlib", "libpython3.9-dev", "libffi7"]),
    "3.13": ("trixie", "python3.13-minimal",
             ["libpython3.13-minimal", "libpython3.13-stdlib", "libpython3.13-dev", "libc6",
              "libffi8", "libexpat1", "zlib1g"]),
}


class Unavailable(Exception):
    """The suite could not be downloaded: a reason to skip, not to fail."""


def run(argv, deadline, cwd=None, env=None):
    """argv, killed with its children when the deadline passes."""
    left = deadline - time.monotonic()
    if left <= 1:
        raise Unavailable(f"out of time for {argv[0]} (the downloads' budget is "
                          f"{NETWORK_BUDGET_S} s)")
    p = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=left)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        raise Unavailable(f"{' '.join(argv[:3])} took longer than the downloads' budget "
                          f"({NETWORK_BUDGET_S} s)")
    return p.returncode, out


def first_error(out):
    """apt's first error, else its first warning (which says why an index
    was not fetched), else its last line."""
    lines = [s.strip() for s in out.splitlines() if s.strip()]
    for prefix in ("E:", "W:"):
        found = [s for s in lines if s.startswith(prefix)]
        if found:
            return " ".join(found[0].split())
    return (lines or ["no output"])[-1]


def apt_config(apt_dir, mirror, suite):
    """A configuration of its own: none of the system's files are read (its
    hooks, which may clean or refresh the system's caches, do not run)."""
    for d in ("lists/partial", "cache/archives/partial", "empty"):
        os.makedirs(os.path.join(apt_dir, d), exist_ok=True)
    sources = os.path.join(apt_dir, "sources.list")
    with open(sources, "w") as f:
        f.write(f"deb [signed-by={KEYRING}] {mirror} {suite} main\n")
    conf = os.path.join(apt_dir, "apt.conf")
    empty = os.path.join(apt_dir, "empty")
    arch = subprocess.run(["dpkg", "--print-architecture"], capture_output=True,
                          text=True).stdout.strip()
    with open(conf, "w") as f:
        f.write(f"""Dir::Etc::main "/dev/null";
Dir::Etc::parts "{empty}";
Dir::Etc::sourcelist "{sources}";
Dir::Etc::sourceparts "{empty}";
Dir::Etc::preferences "/dev/null";
Dir::Etc::preferencesparts "{empty}";
Dir::Etc::trustedparts "{empty}";
Dir::State "{apt_dir}";
Dir::State::lists "{apt_dir}/lists";
Dir::State::status "/dev/null";
Dir::Cache "{apt_dir}/cache";
Debug::NoLocking "true";
APT::Sandbox::User "root";
APT::Architecture "{arch}";
APT::Architectures {{ "{arch}"; }};
Acquire::Languages "none";
Acquire::Retries "1";
Acquire::http::Timeout "20";
Acquire::https::Timeout "20";
""")
    return dict(os.environ, APT_CONFIG=conf, LC_ALL="C")


def download(suite, packages, work, deadline):
    """The packages' .deb files into work/debs, from the first mirror that
    has the suite."""
    mirrors = MIRRORS[:]
    if os.environ.get("GPUTRACE_DEBIAN_MIRROR"):
        mirrors.insert(0, os.environ["GPUTRACE_DEBIAN_MIRROR"])
    debs = os.path.join(work, "debs")
    tried = []
    for mirror in mirrors:
        apt_dir = os.path.join(work, "apt")
        shutil.rmtree(apt_dir, ignore_errors=True)
        shutil.rmtree(debs, ignore_errors=True)
        os.makedirs(debs)
        env = apt_config(apt_dir, mirror, suite)
        rc, out = run(["apt-get", "-q", "update"], deadline, env=env)
        # apt-get update exits 0 when it fetched nothing, with a warning
        if rc == 0 and glob.glob(os.path.join(apt_dir, "lists", "*_Packages*")):
            rc, out = run(["apt-get", "-q", "download"] + packages, deadline, cwd=debs, env=env)
            if rc == 0:
                shutil.rmtree(apt_dir)
                return sorted(glob.glob(os.path.join(debs, "*.deb")))
        tried.append(f"{mirror}: {first_error(out)}")
    raise Unavailable(f"{suite} could not be downloaded ({'; '.join(tried)})")


def unpack(debs, root):
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    for deb in debs:
        r = subprocess.run(["dpkg-deb", "-x", deb, root], capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"FAIL: dpkg-deb -x {deb}: {r.stderr.strip()}")
    # The static libraries of the -dev packages are not needed: only headers.
    for a in glob.glob(os.path.join(root, "usr", "lib", "**", "libpython*.a"), recursive=True):
        os.remove(a)


def version_of(deb):
    """python3.9-minimal_3.9.2-1_amd64.deb -> 3.9.2-1"""
    return os.path.basename(deb).split("_")[1]


def interpreter(version, dest, deadline):
    suite, main, others = SUITES[version]
    work = os.path.join(dest, suite)
    debs = download(suite, [main] + others, work, deadline)
    root = os.path.join(work, "root")
    unpack(debs, root)
    shutil.rmtree(os.path.join(work, "debs"))
    python = os.path.join(root, "usr", "bin", f"python{version}")
    main_deb = [d for d in debs if os.path.basename(d).startswith(main + "_")]
    entry = {
        "origin": f"Debian {suite} {main} {version_of(main_deb[0]) if main_deb else ''}".strip(),
        "python": python,
        "home": os.path.join(root, "usr"),
        "include": [os.path.join(root, "usr", "include", f"python{version}"),
                    os.path.join(root, "usr", "include")],
    }
    loaders = glob.glob(os.path.join(root, "usr", "lib", "*", "ld-linux*.so.*"))
    if loaders:
        # The suite's own C library: its loader, and its libraries first.
        entry["loader"] = loaders[0]
        entry["library_path"] = [os.path.dirname(loaders[0])]
    else:
        # The system's C library: only libffi beside the interpreter.
        ffi = os.path.join(work, "ffi")
        os.makedirs(ffi, exist_ok=True)
        for lib in glob.glob(os.path.join(root, "usr", "lib", "*", "libffi.so.*")):
            link = os.path.join(ffi, os.path.basename(lib))
            if not os.path.lexists(link):
                os.symlink(lib, link)
        entry["loader"] = None
        entry["library_path"] = [ffi]
    check_runs(version, entry)
    return entry


def check_runs(version, entry):
    argv = [entry["python"]]
    env = dict(os.environ, PYTHONHOME=entry["home"])
    if entry["loader"]:
        argv = [entry["loader"], "--library-path", ":".join(entry["library_path"])] + argv
    else:
        env["LD_LIBRARY_PATH"] = ":".join(entry["library_path"])
    r = subprocess.run(argv + ["-c", "import ctypes, threading, sys; print(sys.version)"],
                       env=env, capture_output=True, text=True, timeout=60)
    if r.returncode != 0 or not r.stdout.startswith(version + "."):
        sys.exit(f"FAIL: {entry['origin']} does not run here: "
                 f"{(r.stderr.strip().splitlines() or ['exit ' + str(r.returncode)])[-1]}")


def wanted_stamp():
    with open(os.path.abspath(__file__), "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    machine = os.uname().machine
    return f"{digest} {machine}\n"


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: debian-pythons.py DEST")
    dest = os.path.abspath(sys.argv[1])
    manifest = os.path.join(dest, "pythons.json")
    stamp_file = os.path.join(dest, "stamp")
    stamp = wanted_stamp()
    try:
        with open(stamp_file) as f:
            if f.read() == stamp and os.path.exists(manifest):
                print(f"ok: {dest} reused")
                return 0
    except OSError:
        pass
    shutil.rmtree(dest, ignore_errors=True)
    os.makedirs(dest)
    started = time.monotonic()
    deadline = started + NETWORK_BUDGET_S
    pythons, skipped = {}, []
    missing = [t for t in ("apt-get", "dpkg-deb", "dpkg") if not shutil.which(t)]
    for version in SUITES:
        try:
            if missing:
                raise Unavailable(f"no {', '.join(missing)} here (not a Debian system)")
            if not os.path.exists(KEYRING):
                raise Unavailable(f"no {KEYRING} (Debian: apt-get install debian-archive-keyring)")
            pythons[version] = interpreter(version, dest, deadline)
            print(f"ok: CPython {version}: {pythons[version]['origin']}")
        except Unavailable as e:
            pythons[version] = {"unavailable": str(e)}
            skipped.append(f"CPython {version}: {e}")
    with open(manifest, "w") as f:
        json.dump(pythons, f, indent=1)
    if skipped:
        # Tried again on the next run.
        print("SKIP: " + "; ".join(skipped))
        return SKIP
    with open(stamp_file, "w") as f:
        f.write(stamp)
    print(f"ok: {dest} made in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
