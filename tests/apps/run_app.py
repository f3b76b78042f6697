#!/usr/bin/env python3
"""Runs a test program and checks its exit code, its output and its manifests.

run_app.py [options] -- program [args...]
  --rc N                 expected exit code (default 0)
  --stdout-file FILE     stdout must equal FILE exactly
  --output-regex RE      stdout+stderr must match RE (repeatable)
  --manifests FILE       expected manifests: a JSON object mapping each program name
                         to the manifest it must write (without "program" and "pid"),
                         or with --program, the one manifest program NAME must write;
                         exactly these manifests must be written
  --program NAME         the program name of a single expected manifest
  --no-manifest          the program must not write any manifest
  --emu-stats            cross-check the manifests with the emulated driver's own
                         counts (GPUTRACE_EMU_STATS): kernel launches that ran on
                         streams (calls less captured ones) and graph launches
The program runs with GT_APP_MANIFEST set to a fresh directory's m.%p.json.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile


def canonical(manifest):
    """The manifest with list order made irrelevant."""
    out = {}
    for key, value in manifest.items():
        if isinstance(value, list):
            out[key] = sorted(json.dumps(row, sort_keys=True) for row in value)
        else:
            out[key] = value
    return out


def describe_difference(expected, actual):
    lines = []
    for key in sorted(set(expected) | set(actual)):
        e, a = expected.get(key), actual.get(key)
        if e == a:
            continue
        if isinstance(e, list) and isinstance(a, list):
            for row in sorted(set(e) - set(a)):
                lines.append(f"  {key}: missing {row}")
            for row in sorted(set(a) - set(e)):
                lines.append(f"  {key}: unexpected {row}")
        else:
            lines.append(f"  {key}: expected {e!r}, got {a!r}")
    return "\n".join(lines)


def read_manifests(directory, errors):
    """Every manifest written, by program name (without "program" and "pid")."""
    written = {}
    for path in sorted(glob.glob(os.path.join(directory, "m.*.json"))):
        with open(path) as f:
            try:
                manifest = json.load(f)
            except json.JSONDecodeError as e:
                errors.append(f"{path}: not JSON: {e}")
                continue
        program = manifest.pop("program", None)
        manifest.pop("pid", None)
        if program in written:
            errors.append(f"program {program} wrote more than one manifest")
        written[program] = manifest
    return written


def check_emu_stats(stats_file, written, errors):
    try:
        with open(stats_file) as f:
            stats = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        errors.append(f"no emulator statistics: {e}")
        return
    launched = sum(k["calls"] - k["captured"] for m in written.values() for k in m["kernels"])
    graphs = sum(m["graph_launches"] for m in written.values())
    if stats.get("launches") != launched:
        errors.append(f"emulator ran {stats.get('launches')} launches, manifests say {launched}")
    if stats.get("graph_launches") != graphs:
        errors.append(f"emulator ran {stats.get('graph_launches')} graph launches, "
                      f"manifests say {graphs}")


def check_manifests(written, expected_file, program_name, errors):
    with open(expected_file) as f:
        expected = json.load(f)
    if program_name is not None:
        expected = {program_name: expected}
    for program in sorted(set(expected) - set(written)):
        errors.append(f"no manifest from {program}")
    for program in sorted(set(written) - set(expected)):
        errors.append(f"unexpected manifest from {program}")
    for program in sorted(set(expected) & set(written)):
        e, a = canonical(expected[program]), canonical(written[program])
        if e != a:
            errors.append(f"manifest of {program} differs:\n" + describe_difference(e, a))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rc", type=int, default=0)
    parser.add_argument("--stdout-file")
    parser.add_argument("--output-regex", action="append", default=[])
    parser.add_argument("--manifests")
    parser.add_argument("--program")
    parser.add_argument("--no-manifest", action="store_true")
    parser.add_argument("--emu-stats", action="store_true")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no program given")

    errors = []
    with tempfile.TemporaryDirectory(prefix="gt-app-") as directory:
        env = dict(os.environ, GT_APP_MANIFEST=os.path.join(directory, "m.%p.json"))
        stats_file = os.path.join(directory, "emu-stats.json")
        if args.emu_stats:
            env["GPUTRACE_EMU_STATS"] = stats_file
        proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
        sys.stdout.write(proc.stdout)
        sys.stderr.write(proc.stderr)
        if proc.returncode != args.rc:
            errors.append(f"exit code {proc.returncode}, expected {args.rc}")
        if args.stdout_file:
            with open(args.stdout_file) as f:
                expected = f.read()
            if proc.stdout != expected:
                errors.append("stdout differs from " + args.stdout_file)
        for regex in args.output_regex:
            if not re.search(regex, proc.stdout + proc.stderr, re.MULTILINE):
                errors.append(f"output does not match {regex!r}")
        written = read_manifests(directory, errors)
        if args.manifests:
            check_manifests(written, args.manifests, args.program, errors)
        if args.no_manifest and written:
            errors.append("a manifest was written")
        if args.emu_stats:
            check_emu_stats(stats_file, written, errors)
    for e in errors:
        print("run_app: " + e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
