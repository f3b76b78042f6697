#!/usr/bin/env python3
"""Checks of the built example programs.

    check_examples.py --bin DIR --emu-lib DIR {build,cli,compile,emulated}

build     each program links the runtime it should, and carries sm_90 machine
          code plus compute_75 PTX for every CUDA source
cli       bad arguments: exit status 2, one line on stderr, nothing on stdout
compile   batch_ode_nvrtc --compile-only: PTX for good right-hand sides, the
          NVRTC log and exit status 2 for a bad one (NVRTC runs on the CPU)
emulated  the _shared programs on the CPU emulation of CUDA: they run the whole
          pipeline, skip the numeric check and exit 0; the static ones stop at
          CUDA initialisation with a one-line error
"""
import argparse
import os
import re
import struct
import subprocess
import sys

PROGRAMS = ["batch_ode", "batch_ode_shared", "batch_ode_nvrtc", "batch_ode_nvrtc_shared"]
NVRTC_PROGRAMS = [p for p in PROGRAMS if "nvrtc" in p]

FATBIN_MAGIC = 0xBA55ED50
FATBIN_PTX, FATBIN_ELF = 1, 2
# One fat binary per CUDA source (the program's own and ode_pipeline.cu), and
# one from nvcc's device-link step, which holds machine code only.
SOURCE_FATBINS = 2
SOURCE_MEMBERS = [(FATBIN_PTX, 75), (FATBIN_ELF, 90)]
DEVICE_LINK_MEMBERS = [(FATBIN_ELF, 90)]


class Checker:
    def __init__(self, bin_dir, emu_lib):
        self.bin_dir = bin_dir
        self.env = dict(os.environ)
        self.env["LD_LIBRARY_PATH"] = emu_lib + (
            ":" + os.environ["LD_LIBRARY_PATH"] if os.environ.get("LD_LIBRARY_PATH") else "")
        self.failures = []

    def path(self, program):
        return os.path.join(self.bin_dir, program)

    def run(self, program, *args):
        return subprocess.run([self.path(program), *args], env=self.env, capture_output=True,
                              text=True, timeout=60)

    def expect(self, condition, what):
        if not condition:
            self.failures.append(what)
        return condition


def elf_sections(data):
    """Maps section name -> bytes for a 64-bit little-endian ELF file."""
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize) for i in range(shnum)]
    strtab_off, strtab_size = headers[shstrndx][4], headers[shstrndx][5]
    strtab = data[strtab_off:strtab_off + strtab_size]
    sections = {}
    for name_off, _type, _flags, _addr, offset, size in headers:
        name = strtab[name_off:strtab.index(b"\0", name_off)].decode()
        sections[name] = data[offset:offset + size]
    return sections


def fatbin_members(section):
    """[(kind, arch), ...] of each fat binary in a .nv_fatbin section."""
    fatbins, pos = [], 0
    while pos + 16 <= len(section):
        magic, = struct.unpack_from("<I", section, pos)
        if magic != FATBIN_MAGIC:
            pos += 8  # fat binaries are 8-byte aligned; the gap is padding
            continue
        header_size, = struct.unpack_from("<H", section, pos + 6)
        entries_size, = struct.unpack_from("<Q", section, pos + 8)
        member, end, members = pos + header_size, pos + header_size + entries_size, []
        while member + 64 <= end:
            kind, = struct.unpack_from("<H", section, member)
            member_header, payload = struct.unpack_from("<IQ", section, member + 4)
            arch, = struct.unpack_from("<I", section, member + 28)
            members.append((kind, arch))
            member += member_header + payload
        fatbins.append(sorted(members))
        pos = (end + 7) & ~7
    return fatbins


def needed_libraries(path):
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True)
    return set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out.stdout))


def check_build(c):
    for program in PROGRAMS:
        path = c.path(program)
        if not c.expect(os.access(path, os.X_OK), f"{program}: not built"):
            continue
        needed = needed_libraries(path)
        shared = program.endswith("_shared")
        c.expect(("libcudart.so.13" in needed) == shared,
                 f"{program}: NEEDED {sorted(needed)}: libcudart.so.13 expected only with _shared")
        if program in NVRTC_PROGRAMS:
            c.expect({"libnvrtc.so.13", "libcuda.so.1"} <= needed,
                     f"{program}: NEEDED {sorted(needed)} lacks libnvrtc.so.13 or libcuda.so.1")
        with open(path, "rb") as f:
            sections = elf_sections(f.read())
        fatbins = fatbin_members(sections.get(".nv_fatbin", b""))
        expected = sorted([SOURCE_MEMBERS] * SOURCE_FATBINS + [DEVICE_LINK_MEMBERS])
        c.expect(sorted(fatbins) == expected,
                 f"{program}: fat binary members (kind, arch) {fatbins}, expected {expected}")


BAD_ARGUMENTS = [
    ["--steps", "x"],
    ["--systems", "0"],
    ["--systems", "8", "--chunks", "9"],
    ["--streams"],
    ["--model", "duffing"],
    ["--dt", "-0.1"],
    ["--pin-all=1"],
    ["--frobnicate"],
    ["stray"],
]


def check_cli(c):
    for program in PROGRAMS:
        help_run = c.run(program, "--help")
        c.expect(help_run.returncode == 0 and "--systems" in help_run.stdout,
                 f"{program} --help: status {help_run.returncode}, no option list")
        bad = BAD_ARGUMENTS + ([] if program in NVRTC_PROGRAMS else [["--du", "v"]])
        for args in bad:
            r = c.run(program, *args)
            what = f"{program} {' '.join(args)}"
            c.expect(r.returncode == 2, f"{what}: status {r.returncode}, expected 2")
            c.expect(r.stdout == "", f"{what}: wrote to stdout: {r.stdout!r}")
            lines = r.stderr.splitlines()
            c.expect(len(lines) == 1 and lines[0].startswith(program + ": ")
                     and lines[0].endswith("(see --help)"),
                     f"{what}: stderr is not one '{program}: ... (see --help)' line: {r.stderr!r}")


def check_compile(c):
    program = "batch_ode_nvrtc"
    cases = [
        ([], "compute_75 oscillator", ".target sm_75", "integrate_oscillator_nvrtc"),
        (["--arch", "90", "--model", "lotka-volterra"], "sm_90 lotka-volterra", ".target sm_90",
         "integrate_lotka_volterra_nvrtc"),
        (["--du", "v", "--dv", "-sin(u) - a*v"], "pendulum", ".target sm_75",
         "integrate_custom_nvrtc"),
    ]
    for args, what, target, entry in cases:
        r = c.run(program, "--compile-only", *args)
        ok = c.expect(r.returncode == 0, f"compile {what}: status {r.returncode}: {r.stderr}")
        if ok:
            c.expect(target in r.stdout, f"compile {what}: PTX without '{target}'")
            c.expect(f".entry {entry}(" in r.stdout, f"compile {what}: PTX without entry {entry}")

    r = c.run(program, "--compile-only", "--dv", "-a*w")
    c.expect(r.returncode == 2, f"bad expression: status {r.returncode}, expected 2")
    c.expect(r.stdout == "", f"bad expression: wrote to stdout: {r.stdout!r}")
    c.expect('identifier "w" is undefined' in r.stderr,
             f"bad expression: NVRTC's log is missing: {r.stderr!r}")
    c.expect(re.search(r"^\s+\d+\s+-a\*w$", r.stderr, re.M) is not None,
             f"bad expression: the numbered source is missing: {r.stderr!r}")


def summary_regex(program, model, systems, chunks, streams, kernel):
    plural = lambda n, word: f"{n} {word}" + ("" if n == 1 else "s")
    return re.compile(
        rf"^{program}: {systems} {model} systems x \d+ steps in {plural(chunks, 'chunk')} "
        rf"on {plural(streams, 'stream')} \({kernel}\): [0-9.]+ ms GPU, numeric check skipped: "
        rf"kernels do not run on the gputrace emulated GPU: OK$", re.M)


def check_emulated(c):
    runs = [
        ("batch_ode_shared", [], "oscillator", 1 << 20, 8, 4, "integrate_oscillator"),
        ("batch_ode_shared", ["-m", "vanderpol", "-n", "1000", "-c", "3", "-S", "1",
                              "--pin-all"], "vanderpol", 1000, 3, 1, "integrate_vanderpol"),
        ("batch_ode_nvrtc_shared", [], "oscillator", 1 << 20, 8, 4,
         "integrate_oscillator_nvrtc"),
        ("batch_ode_nvrtc_shared", ["--cubin", "--dv", "-sin(u)", "-n", "5000", "-c", "5"],
         "custom", 5000, 5, 4, "integrate_custom_nvrtc"),
    ]
    for program, args, model, systems, chunks, streams, kernel in runs:
        r = c.run(program, *args)
        what = f"{program} {' '.join(args)}"
        c.expect(r.returncode == 0,
                 f"{what}: status {r.returncode}\nstdout: {r.stdout}\nstderr: {r.stderr}")
        c.expect(summary_regex(program, model, systems, chunks, streams, kernel).search(r.stdout),
                 f"{what}: no summary line with the skipped check: {r.stdout!r}")
        if "nvrtc" in program:
            c.expect(f"{kernel} compiled by NVRTC for " in r.stdout,
                     f"{what}: no line about the NVRTC compilation: {r.stdout!r}")

    for program in ["batch_ode", "batch_ode_nvrtc"]:
        r = c.run(program)
        lines = r.stderr.splitlines()
        c.expect(r.returncode == 1 and len(lines) == 1 and "cudaSetDevice" in lines[0],
                 f"{program} (static runtime) on the emulator: status {r.returncode}, "
                 f"expected 1 and one line naming cudaSetDevice: {r.stderr!r}")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", required=True, help="directory of the built programs")
    parser.add_argument("--emu-lib", required=True, help="directory of the emulated libraries")
    parser.add_argument("check", choices=["build", "cli", "compile", "emulated"])
    args = parser.parse_args()

    checker = Checker(args.bin, args.emu_lib)
    {"build": check_build, "cli": check_cli, "compile": check_compile,
     "emulated": check_emulated}[args.check](checker)
    for failure in checker.failures:
        print("FAIL:", failure)
    if not checker.failures:
        print(f"{args.check}: all checks passed")
    return 1 if checker.failures else 0


if __name__ == "__main__":
    sys.exit(main())
