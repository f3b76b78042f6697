#!/usr/bin/env python3
"""scripts/gpu_check/launch_cost.py on the emulator (without CUPTI, which needs a GPU):
every mode and configuration measured, gputrace saw every launch, and runs that fail
are reported in their cells.

test_launch_cost.py REPO BUILD_DIR EMULATOR_LIB_DIR"""
import glob
import json
import os
import subprocess
import sys
import tempfile
import unittest

REPO, BUILD, EMU_LIB = (os.path.abspath(p) for p in sys.argv[1:4])
SCRIPT = os.path.join(REPO, "scripts", "gpu_check", "launch_cost.py")
LAUNCHES = 4000


class LaunchCost(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def run_script(self, *options):
        proc = subprocess.run([sys.executable, SCRIPT, "--build-dir", BUILD, "--no-cupti",
                               "--library-path", EMU_LIB, "--output-dir", self.tmp.name,
                               "--launches", str(LAUNCHES), "--runs", "1", *options],
                              capture_output=True, text=True, timeout=60)
        return proc.returncode, proc.stdout + proc.stderr

    def results(self):
        with open(os.path.join(self.tmp.name, "launch_cost.json")) as f:
            return json.load(f)["results"]

    def gputrace_launches(self, mode, config):
        reports = glob.glob(os.path.join(self.tmp.name, "launch-cost", mode, config,
                                         "ours.*.json"))
        self.assertEqual(len(reports), 1, reports)
        with open(reports[0]) as f:
            return {k["name"]: k["calls"] for k in json.load(f)["kernels"]}

    def gputrace_source(self, mode, config):
        reports = glob.glob(os.path.join(self.tmp.name, "launch-cost", mode, config,
                                         "ours.*.json"))
        with open(reports[0]) as f:
            return json.load(f)["gpu_timing"]["source"]

    def warmup(self, mode):
        run_dir = os.path.join(self.tmp.name, "launch-cost", mode, "bare")
        with open(os.path.join(run_dir, "stdout")) as f:
            return json.loads(f.read())["warmup"]

    def test_every_configuration_is_measured_and_every_launch_seen(self):
        rc, out = self.run_script()
        self.assertEqual(rc, 0, out)
        results = self.results()
        self.assertEqual(sorted(results), ["event", "four", "one"])
        for mode in ("one", "four"):
            self.assertEqual(sorted(results[mode]),
                             ["bare", "timing_cupti", "timing_off", "timing_on"])
        for mode, configs in results.items():
            for config, cell in configs.items():
                self.assertIsNone(cell["error"], (mode, config))
                self.assertGreater(cell["median"], 0, (mode, config))
        for mode in ("one", "four"):
            for config in ("timing_off", "timing_on", "timing_cupti"):
                self.assertEqual(self.gputrace_launches(mode, config),
                                 {"empty_kernel()": self.warmup(mode) + LAUNCHES},
                                 (mode, config))
        self.assertEqual(self.gputrace_source("one", "timing_cupti"), "cupti")
        self.assertEqual(self.gputrace_source("one", "timing_on"), "events")
        self.assertRegex(out, r"\| one stream \| \d+ \| [+-]\d+ \| [+-]\d+ \| [+-]\d+ \|")
        self.assertRegex(out,
                         r"\| 4 threads, 4 streams \| \d+ \| [+-]\d+ \| [+-]\d+ \| [+-]\d+ \|")
        self.assertRegex(out, r"cuEventRecord: \d+ ns per call")

    def test_runs_past_their_limit_are_reported_in_their_cells(self):
        # A billion launches (records) cannot end in half a second, however fast the
        # machine starts a process: every run is stopped at its limit.
        rc, out = self.run_script("--timeout", "0.5", "--launches", "1000000000")
        self.assertEqual(rc, 1, out)
        self.assertIn("| one stream | failed | failed | failed | failed |", out)
        self.assertIn("failed: one stream, timing_on: ran past its limit", out)
        self.assertIn("cuEventRecord: failed: ran past its limit", out)
        self.assertIsNotNone(self.results()["one"]["bare"]["error"])


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
