"""The programs the GPU check runs, with arguments sized for a GPU: kernels of tens of
microseconds or more and copies of tens of MiB, so that the 5% tolerance, not the
per-operation floor, is what their GPU times are held to (see compare.py). The test
programs run on one stream where they can, so that their times are held to both bounds;
those whose streams overlap are held to the lower bound. Paths are relative to the
build directory."""
from dataclasses import dataclass


@dataclass(frozen=True)
class Program:
    name: str
    path: str
    args: tuple = ()
    same_stdout: bool = False  # output must not change under gputrace (no timings in it)
    overlap: bool = False  # streams run work side by side (compare.py --overlap)


# 16 Mi floats: 64 MiB buffers, about 40 us per pass over one at the H200's bandwidth.
_ELEMENTS = str(16 << 20)
# 20 iterations on 3 streams of 4 Mi elements each, 5 graph launches.
_STREAMS_ARGS = ("20", "3", str(12 << 20), "5")

PROGRAMS = (
    # The driver API workload reached three ways: linked, dlopen + dlsym, cuGetProcAddress.
    Program("drv_linked", "tests/apps/drv_linked", ("20", "1", _ELEMENTS)),
    Program("drv_dlopen", "tests/apps/drv_dlopen", ("20", "1", _ELEMENTS)),
    Program("drv_procaddr", "tests/apps/drv_procaddr", ("20", "1", _ELEMENTS)),
    Program("rt_capi", "tests/apps/rt_capi", ("20", "1", _ELEMENTS)),
    Program("nvrtc_launch", "tests/apps/nvrtc_launch", ("50", _ELEMENTS)),
    # Kernels of a few microseconds on one stream: what an event pair adds to each, which
    # the floor must cover (the notes give it per operation).
    Program("nvrtc_launch_small", "tests/apps/nvrtc_launch", ("500", "4096")),
    Program("fork_after_init", "tests/apps/fork_after_init", ("20", _ELEMENTS)),
    Program("cu_streams", "tests/apps/cu_streams", _STREAMS_ARGS, overlap=True),
    Program("cu_streams_static", "tests/apps/cu_streams_static", _STREAMS_ARGS, overlap=True),
    Program("capture", "tests/apps/capture", ("10", "4", _ELEMENTS)),
    # Empty kernels: the floor is what their times can be held to; the counts are the test.
    Program("mt_launcher", "tests/apps/mt_launcher", ("4", "2000"), overlap=True),
    Program("errors", "tests/apps/errors", ("50",), same_stdout=True),
    # The examples as users run them: 8 chunks on 4 streams.
    Program("batch_ode", "examples/batch_ode", overlap=True),
    Program("batch_ode_shared", "examples/batch_ode_shared", overlap=True),
    Program("batch_ode_nvrtc", "examples/batch_ode_nvrtc", overlap=True),
    Program("batch_ode_nvrtc_shared", "examples/batch_ode_nvrtc_shared", overlap=True),
)

# What else the check needs from the build.
SHIM = "lib/libgputrace.so"
CUPTI_REF = "gpu/libcupti_ref.so"
LAUNCH_COST = "gpu/launch_cost"  # launch_cost.py's program
EVENT_FLOOR = "gpu/event_floor"  # run.py's measure of the per-operation floor
ARTIFACTS = (SHIM, CUPTI_REF, LAUNCH_COST, EVENT_FLOOR) + tuple(p.path for p in PROGRAMS)
