"""Device allocations a Python program makes through C code (ctypes) with
the GIL released (ctypes.CDLL), held (ctypes.PyDLL), released where gputrace
cannot see it, around a call back into Python, and from a thread of
threading: check_callsites_gil.py holds each to its line.

callsites_gil.py LIB
"""
import ctypes
import os
import sys
import threading

released = ctypes.CDLL(sys.argv[1])
held = ctypes.PyDLL(sys.argv[1])
for lib in (released, held):
    lib.gt_cs_alloc_here.argtypes = [ctypes.c_size_t]
    lib.gt_cs_alloc_unseen_release.argtypes = [ctypes.c_size_t]
    lib.gt_cs_alloc_after_callback.argtypes = [ctypes.CFUNCTYPE(ctypes.c_int), ctypes.c_size_t]

failures = []


def check(rc, what):
    if rc != 0:
        failures.append(what)


def inner():
    check(released.gt_cs_alloc_here(1 << 16), "inner")  # SITE inner
    return 0


def worker():
    check(released.gt_cs_alloc_here(1 << 24), "thread")  # SITE thread


def main():
    # First, before the process initializes CUDA (a child cannot use the
    # parent's).
    pid = os.fork()
    if pid == 0:
        check(released.gt_cs_alloc_here(1 << 25), "forked")  # SITE forked
        os._exit(1 if failures else 0)
    _, status = os.waitpid(pid, 0)
    check(status, "the forked child")
    check(released.gt_cs_alloc_here(1 << 20), "released")  # SITE released
    check(held.gt_cs_alloc_here(1 << 21), "held")  # SITE held
    check(held.gt_cs_alloc_unseen_release(1 << 22), "unseen")  # SITE unseen
    callback = ctypes.CFUNCTYPE(ctypes.c_int)(inner)
    check(released.gt_cs_alloc_after_callback(callback, 1 << 23), "outer")  # SITE outer
    t = threading.Thread(target=worker)
    t.start()
    t.join()
    print("failed: " + " ".join(failures) if failures else "ok")


main()
