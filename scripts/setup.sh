# Sourced by the other scripts: installs missing Debian packages and builds.
# Usage: gt_need_packages pkg...; gt_configure_build BUILD_DIR [cmake args...]

gt_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# Packages every build needs; callers add their own. cJSON is the JSON
# parser of `gputrace report`, `diff` and `merge` (never of the shim).
# python3-venv: the `python` tests, the wheel test and the Perfetto tests
# build virtual environments. zlib: the tests inflate the Perfetto trace's
# compressed bundles with it (the library compresses them itself).
GT_BASE_PACKAGES=(cmake make gcc g++ libcmocka-dev python3 python3-venv libcjson-dev zlib1g-dev)
# What the test suite needs beyond a build: OpenMPI for the MPI test
# (tests/integration/tools/check_mpi.py); node to run Perfetto's trace
# processor on the traces (tests/perfetto/trace_processor_rpc.js); gfortran
# for the Fortran program of the call-site tests.
GT_TEST_PACKAGES=(openmpi-bin libopenmpi-dev nodejs gfortran)

gt_need_packages() {
    local missing=() p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
            missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    if [ "$(id -u)" -ne 0 ]; then
        echo "gputrace: missing packages: ${missing[*]}" >&2
        echo "gputrace: install them with: sudo apt-get install -y ${missing[*]}" >&2
        return 1
    fi
    echo "gputrace: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q "${missing[@]}" >/dev/null 2>&1 ||
        { apt-get update -q >/dev/null && apt-get install -y -q "${missing[@]}" >/dev/null; }
}

gt_check_cuda() {
    if [ ! -x /usr/local/cuda/bin/nvcc ]; then
        echo "gputrace: the CUDA toolkit is expected at /usr/local/cuda (nvcc not found)" >&2
        return 1
    fi
    export PATH="/usr/local/cuda/bin:$PATH"
}

gt_jobs() {
    nproc 2>/dev/null || echo 2
}

gt_configure_build() {
    local build=$1
    shift
    cmake -S "$gt_root" -B "$build" "$@" >/dev/null
    cmake --build "$build" -j "$(gt_jobs)"
}
