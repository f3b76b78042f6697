"""What the capture checkers share: their command line (--lib, --prog,
--cli, --emu-dir, then the case) and running one case in a fresh
directory, with the verdict as the exit status."""
import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from verdict import report  # noqa: E402


def run_case(cases):
    """Parses the command line and runs cases[CASE](args, directory)."""
    ap = argparse.ArgumentParser()
    for opt in ("--lib", "--prog", "--cli", "--emu-dir"):
        ap.add_argument(opt, required=True)
    ap.add_argument("case", choices=sorted(cases))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as out:
        cases[args.case](args, out)
    return report()
