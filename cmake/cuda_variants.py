#!/usr/bin/env python3
"""The exported variants of the CUDA driver's entry points, from the typedef
headers (cudaTypedefs.h, cudaProfilerTypedefs.h).

  cuda_variants.py TYPEDEFS_H...
      prints one line per variant: base name, CUDA version, 1 for a
      per-thread-default-stream variant else 0, exported symbol

Variant naming (CUDA programming guide, driver entry point access): the
first version of a function is exported under its base name, later ones as
<base>_v2, <base>_v3, ... in version order; a per-thread variant carries the
name of the default variant it belongs to, the newest ones pairing up. The
typedefs name each variant PFN_<base>_v<version>[_ptds|_ptsz].

Used by the emulated driver's cuGetProcAddress table and by the shim's
tests of which variants it wraps.
"""
import re
import sys
from collections import defaultdict

PFN_RE = re.compile(r"\bPFN_(cu\w+?)_v(\d+)(_ptds|_ptsz)?\)\s*\(")


def variants(typedefs_text):
    """[(base, version, per_thread, symbol)] sorted by base, then default
    before per-thread, then version."""
    groups = defaultdict(lambda: {"default": [], "ptds": []})
    for base, version, suffix in PFN_RE.findall(typedefs_text):
        key = "ptds" if suffix else "default"
        groups[base][key].append((int(version), suffix))
    rows = []
    for base, g in groups.items():
        defaults = sorted(set(g["default"]))
        names = [base if i == 0 else f"{base}_v{i + 1}" for i in range(len(defaults))]
        for (version, _), name in zip(defaults, names):
            rows.append((base, version, 0, name))
        ptds = sorted(set(g["ptds"]))
        if len(ptds) > len(names):
            sys.exit(f"cuda_variants.py: {base}: more per-thread than default variants")
        first = len(names) - len(ptds)
        for i, (version, suffix) in enumerate(ptds):
            rows.append((base, version, 1, names[first + i] + suffix))
    rows.sort(key=lambda r: (r[0], r[2], r[1]))
    return rows


def read_variants(paths):
    return variants("".join(open(path).read() for path in paths))


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    for base, version, per_thread, symbol in read_variants(argv[1:]):
        print(base, version, per_thread, symbol)


if __name__ == "__main__":
    main(sys.argv)
