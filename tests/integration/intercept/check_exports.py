#!/usr/bin/env python3
"""Checks what libgputrace.so exports for the programs it interposes on.

check_exports.py LIB GLIBC_BASE_VERSION CUDART_SO TYPEDEFS_H...

  - dlsym under GLIBC_2.34 (the default version) and GLIBC_BASE_VERSION;
  - every exported driver name is a variant the typedef headers declare,
    and a wrapped entry point is wrapped in every one of its variants (a
    program may be handed any of them);
  - every exported runtime name is one libcudart.so.13 exports, and each
    one's per-thread-default-stream twin there (_ptds/_ptsz) is wrapped too;
  - every exported CUPTI name (the calls a program starts CUPTI with, which
    hand CUPTI over) is a function the CUPTI headers beside the typedef
    headers declare.
"""
import glob
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                                "cmake"))
from cuda_variants import read_variants  # noqa: E402


def dynamic_symbols(path):
    """[(name, version)] of the defined dynamic symbols (objdump -T)."""
    out = subprocess.run(["objdump", "-T", path], capture_output=True, text=True,
                         check=True).stdout
    symbols = []
    for line in out.splitlines():
        m = re.match(r"^[0-9a-f]+ .{7} (\S+)\s+[0-9a-f]+\s+(\S+)\s+(\S+)$", line)
        if m and m.group(1) != "*UND*":
            symbols.append((m.group(3), m.group(2)))
    return symbols


def main(argv):
    if len(argv) < 5:
        sys.exit(__doc__)
    lib, base_version, cudart, typedefs = argv[1], argv[2], argv[3], argv[4:]
    errors = []
    exported = dynamic_symbols(lib)
    names = {n for n, _ in exported}

    versions = sorted(v for n, v in exported if n == "dlsym")
    want = sorted(["GLIBC_2.34", f"({base_version})"])
    if versions != want:
        errors.append(f"dlsym exported under {versions}, expected {want}")

    rows = read_variants(typedefs)
    by_base = {}
    for base, _, _, symbol in rows:
        by_base.setdefault(base, set()).add(symbol)
    variant_names = {symbol for _, _, _, symbol in rows}
    driver = {n for n in names if n.startswith("cu") and not n.startswith(("cuda", "cupti"))}
    for n in sorted(driver - variant_names):
        errors.append(f"{n} is exported but is no driver entry point variant")
    wrapped_bases = {base for base, symbols in by_base.items() if symbols & driver}
    for base in sorted(wrapped_bases):
        for n in sorted(by_base[base] - driver):
            errors.append(f"{base} is wrapped but its variant {n} is not")

    real = {n for n, _ in dynamic_symbols(cudart)}
    runtime = {n for n in names if n.startswith(("cuda", "__cuda"))}
    for n in sorted(runtime - real):
        errors.append(f"{n} is exported but libcudart.so.13 has no such function")
    for n in sorted(runtime):
        for twin in (n + "_ptds", n + "_ptsz"):
            if twin in real and twin not in runtime:
                errors.append(f"{n} is wrapped but its per-thread variant {twin} is not")

    declared = set()
    for header in glob.glob(os.path.join(os.path.dirname(typedefs[0]), "cupti*.h")):
        with open(header, encoding="utf-8", errors="replace") as h:
            declared |= set(re.findall(r"CUptiResult\s+CUPTIAPI\s+(cupti\w+)\s*\(", h.read()))
    cupti = {n for n in names if n.startswith("cupti")}
    if not declared:
        errors.append("no CUPTI header beside the typedef headers")
    for n in sorted(cupti - declared):
        errors.append(f"{n} is exported but no CUPTI header declares it")

    for e in errors:
        print("FAIL:", e)
    print(f"{len(driver)} driver and {len(runtime)} runtime entry points exported, "
          f"{len(errors)} problems")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
