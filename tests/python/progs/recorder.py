"""What a test program did, written at exit as JSON to the file named by
GT_PY_MANIFEST (nothing without it), for check_python.py to hold the
report against:

  kernels   {name: launches}: the function name without parameters or ABI
            tags (`numba_defs::scale` for a Numba kernel, `saxpy`)
  memcpy    [{direction, host_memory, async, calls, bytes}]
  memset    [{async, calls, bytes}]
  memory    {"device": [allocs, frees], "pinned": [allocs, frees]}
  compile   [{api, name, ok, calls, bytes, functions}]: an NVVM program
            named after its first named module, else after the first
            function its modules define (`module::name`, as function_name
            in check_python.py shortens a demangled name), with the other
            functions they define (null: not known)
  links     {"cuLinkComplete KIND": n}: driver links the program completed,
            by the kind of their inputs (ptx: the driver JIT-compiles them)
  nvtx      [{domain, name, calls, work, payload, fields}]: work is the GPU
            work launched while the range was open, as [kind, key, count]
            items (["kernel", name, n], ["copy", rate, bytes]); payload the
            sum of the numbers its ranges carried (null: none), fields the
            sums of named payload fields; the programs open ranges on one
            thread while no other thread launches
  timings   [{ms, rate, bytes}]: the program's own event timings of copies
  libs      the CUDA libraries in the process at exit (/proc/self/maps)

The program states its own work as it does it. What libraries do for it
(Numba's NVVM compiles and nvJitLink links) is noted by wrapping the Python
functions Numba calls (watch_numba), so the manifest never guesses at a
library's internals.
"""
import atexit
import json
import os
import re
import threading

_lock = threading.Lock()
_kernels = {}
_memcpy = {}
_memset = {}
_memory = {"device": [0, 0], "pinned": [0, 0]}
_compile = {}
_links = {}
_nvtx = {}
_open = []  # the NVTX ranges open now, as keys of _nvtx
_timings = []


def _add_work(item):
    for key in _open:
        _nvtx[key]["work"].append(item)


def launch(name, n=1):
    with _lock:
        _kernels[name] = _kernels.get(name, 0) + n
        _add_work(["kernel", name, n])


def copy(direction, host_memory, is_async, nbytes, n=1):
    """n copies of nbytes each; their rate follows from the host memory
    (pageable, pinned) or, device to device, dtod."""
    rate = "dtod" if direction == "DtoD" else host_memory
    with _lock:
        row = _memcpy.setdefault((direction, host_memory, is_async), [0, 0])
        row[0] += n
        row[1] += n * nbytes
        for _ in range(n):
            _add_work(["copy", rate, nbytes])


def memset(is_async, nbytes, n=1):
    with _lock:
        row = _memset.setdefault(is_async, [0, 0])
        row[0] += n
        row[1] += n * nbytes
        for _ in range(n):
            _add_work(["copy", "memset", nbytes])


def alloc(kind="device", n=1):
    with _lock:
        _memory[kind][0] += n


def free(kind="device", n=1):
    with _lock:
        _memory[kind][1] += n


def compiled(api, name, ok, nbytes, functions=None):
    with _lock:
        row = _compile.setdefault((api, name, ok), [0, 0, functions])
        row[0] += 1
        row[1] += nbytes


def qualified(mangled):
    """`_ZN10numba_defs5scaleB2v1B..E5ArrayIfLi1E...` -> `numba_defs::scale`:
    the nested name of an Itanium-mangled function, without ABI tags."""
    if not mangled.startswith("_ZN"):
        return mangled
    i, parts = 3, []
    while i < len(mangled) and mangled[i] != "E":
        abi = mangled[i] == "B"
        i += abi
        j = i
        while j < len(mangled) and mangled[j].isdigit():
            j += 1
        if j == i:
            break
        n = int(mangled[i:j])
        if not abi:
            parts.append(mangled[j:j + n])
        i = j + n
    return "::".join(parts)


def defined_functions(buffer):
    """The functions an LLVM IR text module defines, in order."""
    text = bytes(buffer) if not isinstance(buffer, bytes) else buffer
    if text[:4] in (b"BC\xc0\xde", b"\xde\xc0\x17\x0b"):
        return []
    return [qualified(m.decode()) for m in
            re.findall(rb'^define [^@\n]*@"?([^"(\s]+)', text, re.M)]


def linked(kind, api="cuLinkComplete"):
    key = f"{api} {kind}"
    with _lock:
        _links[key] = _links.get(key, 0) + 1


def range_begin(domain, name):
    """A range opens: the work from now until range_end counts in it."""
    key = (domain, name)
    with _lock:
        row = _nvtx.setdefault(key, {"calls": 0, "work": [], "payload": None, "fields": {}})
        row["calls"] += 1
        _open.append(key)


def payload(domain, name, value):
    """The range (domain, name) carried a plain payload of value."""
    with _lock:
        row = _nvtx[(domain, name)]
        row["payload"] = (row["payload"] or 0) + value


def fields(domain, name, values):
    """The range carried an extended payload: {field: value}."""
    with _lock:
        row = _nvtx[(domain, name)]["fields"]
        for k, v in values.items():
            row[k] = row.get(k, 0) + v


def range_end(domain, name):
    with _lock:
        _open.remove((domain, name))


def timing(ms, rate, nbytes):
    with _lock:
        _timings.append({"ms": ms, "rate": rate, "bytes": nbytes})


def watch_numba():
    """Notes the NVVM programs Numba verifies and compiles (through
    cuda.bindings.nvvm, with the bytes of every module added to the
    program) and the links it completes with nvJitLink (through its
    _Linker, with the bytes of every input)."""
    from cuda.bindings import nvvm
    from numba.cuda.cudadrv import driver

    inputs = {}
    names = {}  # program -> [name, functions]

    def track(fn):
        def added(program, buffer, size, name):
            inputs[program] = inputs.get(program, 0) + size
            entry = names.setdefault(program, ["", []])
            defined = defined_functions(buffer[:size])
            if name and not entry[0]:
                entry[0] = name
            elif defined and not entry[0]:
                entry[0], defined = defined[0], defined[1:]
            entry[1].extend(defined)
            return fn(program, buffer, size, name)
        return added

    def note(fn, api):
        def called(program, *args):
            name, functions = names.get(program, ["", []])
            try:
                result = fn(program, *args)
            except Exception:
                compiled(api, name, False, inputs.get(program, 0), functions)
                raise
            compiled(api, name, True, inputs.get(program, 0), functions)
            return result
        return called

    def forget(fn):
        def destroyed(program):
            inputs.pop(program, None)  # the handle's value may come back
            names.pop(program, None)
            return fn(program)
        return destroyed

    nvvm.add_module_to_program = track(nvvm.add_module_to_program)
    nvvm.lazy_add_module_to_program = track(nvvm.lazy_add_module_to_program)
    nvvm.verify_program = note(nvvm.verify_program, "nvvmVerifyProgram")
    nvvm.compile_program = note(nvvm.compile_program, "nvvmCompileProgram")
    nvvm.destroy_program = forget(nvvm.destroy_program)

    complete = driver._Linker.complete

    def complete_noted(self):
        codes = list(self._object_codes)
        nbytes = sum(len(c.code) for c in codes)
        try:
            result = complete(self)
        except Exception:
            compiled("nvJitLinkComplete", codes[0].name, False, nbytes)
            raise
        compiled("nvJitLinkComplete", codes[0].name, True, nbytes)
        return result

    driver._Linker.complete = complete_noted


def _libs():
    names = ("libcuda.so", "libcudart.so", "libnvrtc.so", "libnvvm.so", "libnvJitLink.so")
    found = set()
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1]
            if any(os.path.basename(path).startswith(n) for n in names):
                found.add(path)
    return sorted(found)


def _write():
    path = os.environ.get("GT_PY_MANIFEST")
    if not path:
        return
    with _lock:
        manifest = {
            "kernels": _kernels,
            "memcpy": [{"direction": d, "host_memory": h, "async": a, "calls": c, "bytes": b}
                       for (d, h, a), (c, b) in sorted(_memcpy.items())],
            "memset": [{"async": a, "calls": c, "bytes": b}
                       for a, (c, b) in sorted(_memset.items())],
            "memory": _memory,
            "compile": [{"api": a, "name": n, "ok": o, "calls": c, "bytes": b, "functions": f}
                        for (a, n, o), (c, b, f) in sorted(_compile.items())],
            "links": _links,
            "nvtx": [{"domain": d, "name": n, "calls": r["calls"], "work": r["work"],
                      "payload": r["payload"], "fields": r["fields"]}
                     for (d, n), r in sorted(_nvtx.items())],
            "timings": _timings,
            "libs": _libs(),
        }
    with open(path, "w") as f:
        json.dump(manifest, f, indent=1)


atexit.register(_write)
