#!/usr/bin/env python3
"""event_floor on the emulator: its event pairs read the work they bracket (an emulated
kernel of 50 us, within the emulator's 1 us event accuracy), before and after a pause,
and the floor it reports is the largest reading after a pause.

test_event_floor.py BUILD_DIR EMULATOR_LIB_DIR"""
import json
import os
import subprocess
import sys
import unittest

BUILD, EMU_LIB = (os.path.abspath(p) for p in sys.argv[1:3])
KERNEL_NS = 50000


class EventFloor(unittest.TestCase):
    def test_pairs_read_the_emulated_work(self):
        # The pairs are checked against the emulated work alone: no front-end latency.
        env = dict(os.environ, LD_LIBRARY_PATH=EMU_LIB, GPUTRACE_EMU_KERNEL_NS=f"*={KERNEL_NS}",
                   GPUTRACE_EMU_EVENT_LATENCY_NS="0")
        proc = subprocess.run([os.path.join(BUILD, "gpu", "event_floor"), "2", "3"], env=env,
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        figures = json.loads(proc.stdout)
        self.assertEqual((figures["pause_ms"], figures["repeats"]), (2, 3))
        for when in ("queued_ns", "after_pause_ns"):
            self.assertAlmostEqual(figures["kernel"][when], KERNEL_NS, delta=1000, msg=figures)
            for op in ("memset", "dtod"):  # 4 bytes: nothing to emulate
                self.assertLess(figures[op][when], 1000, figures)
        self.assertEqual(figures["floor_ns"],
                         max(figures[op]["after_pause_ns"] for op in ("kernel", "memset", "dtod")))


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
