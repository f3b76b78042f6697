# The CUDA toolkit's headers. Only the build needs them: the library finds the
# driver and the compilers at run time, as the traced program loads them.
# GPUTRACE_CUDA_ROOT (a CMake cache or an environment variable) names the
# toolkit; unset, the first of these that has every header is taken:
#   /usr/local/cuda
#   nvidia/cu13 in the Python environment running the build, where NVIDIA's
#   CUDA 13 wheels put their headers (nvidia-cuda-runtime, nvidia-cuda-nvrtc,
#   nvidia-nvjitlink, nvidia-nvvm, nvidia-nvtx)
# With the environment variable GPUTRACE_CUDA_WHEELS true, only the wheels
# (pyproject.toml then installs them into pip's build environment).
# Sets GPUTRACE_CUDA_ROOT and GPUTRACE_CUDA_INCLUDE (its include directory).

set(GPUTRACE_CUDA_HEADERS
    cuda.h cuda_runtime_api.h driver_types.h nvrtc.h nvvm.h nvJitLink.h nvtx3/nvToolsExt.h
    cupti.h cupti_activity.h cupti_callbacks.h cupti_driver_cbid.h cupti_runtime_cbid.h)

# gt_cuda_missing(<root> <out>): the headers <root>/include lacks, blank-separated.
# NVIDIA's toolkits keep nvvm.h apart, in nvvm/include; the wheels (and some
# repackaged toolkits) put it beside the rest.
function(gt_cuda_missing root out)
  set(missing)
  foreach(header IN LISTS GPUTRACE_CUDA_HEADERS)
    if(header STREQUAL "nvvm.h" AND EXISTS "${root}/nvvm/include/nvvm.h")
      continue()
    endif()
    if(NOT EXISTS "${root}/include/${header}")
      list(APPEND missing ${header})
    endif()
  endforeach()
  list(JOIN missing " " missing)
  set(${out} "${missing}" PARENT_SCOPE)
endfunction()

if(NOT GPUTRACE_CUDA_ROOT AND NOT "$ENV{GPUTRACE_CUDA_ROOT}" STREQUAL "")
  set(GPUTRACE_CUDA_ROOT "$ENV{GPUTRACE_CUDA_ROOT}")
endif()

if(GPUTRACE_CUDA_ROOT)
  gt_cuda_missing("${GPUTRACE_CUDA_ROOT}" _gt_missing)
  if(_gt_missing)
    message(FATAL_ERROR "GPUTRACE_CUDA_ROOT=${GPUTRACE_CUDA_ROOT}: ${GPUTRACE_CUDA_ROOT}/include "
                        "lacks ${_gt_missing}")
  endif()
else()
  execute_process(
    COMMAND "${GPUTRACE_PYTHON3}" "${CMAKE_CURRENT_LIST_DIR}/cuda_wheel_roots.py"
    OUTPUT_VARIABLE _gt_wheel_roots
    OUTPUT_STRIP_TRAILING_WHITESPACE
    ERROR_QUIET)
  set(_gt_places /usr/local/cuda ${_gt_wheel_roots})
  if("$ENV{GPUTRACE_CUDA_WHEELS}")
    set(_gt_places ${_gt_wheel_roots})
  endif()
  set(_gt_tried)
  foreach(_gt_root IN LISTS _gt_places)
    gt_cuda_missing("${_gt_root}" _gt_missing)
    if(NOT _gt_missing)
      set(GPUTRACE_CUDA_ROOT "${_gt_root}")
      break()
    endif()
    list(APPEND _gt_tried "${_gt_root}/include lacks ${_gt_missing}")
  endforeach()
  if(NOT GPUTRACE_CUDA_ROOT)
    if(NOT _gt_tried)
      set(_gt_tried "no CUDA 13 wheels in the environment of ${GPUTRACE_PYTHON3}")
    endif()
    list(JOIN _gt_tried "; " _gt_tried)
    message(FATAL_ERROR "CUDA headers not found: ${_gt_tried}. Install the CUDA 13 toolkit, "
                        "set GPUTRACE_CUDA_ROOT, or take NVIDIA's header wheels: "
                        "GPUTRACE_CUDA_WHEELS=1 pip install . (docs/install.md)")
  endif()
  message(STATUS "CUDA headers: ${GPUTRACE_CUDA_ROOT}/include")
endif()
set(GPUTRACE_CUDA_ROOT "${GPUTRACE_CUDA_ROOT}" CACHE PATH
    "CUDA toolkit root: headers (nvcc, NVRTC and NVVM too for the tests and examples)")
set(GPUTRACE_CUDA_INCLUDE "${GPUTRACE_CUDA_ROOT}/include")
# Where nvvm.h is apart from the other headers, every target may see it: the
# shim's NVVM hooks and the test programs that call NVVM include it.
if(NOT EXISTS "${GPUTRACE_CUDA_INCLUDE}/nvvm.h")
  include_directories(SYSTEM "${GPUTRACE_CUDA_ROOT}/nvvm/include")
endif()
