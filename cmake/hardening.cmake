# Hardening (docs/security.md says what each binary has; the test
# security.hardening reads the built ones with readelf):
#   every C source     -fstack-protector-strong (a canary in each function
#                      with an array or a local whose address is taken),
#                      -fstack-clash-protection (large stack frames probed
#                      page by page), -D_FORTIFY_SOURCE=3 (glibc's checked
#                      copies and formats where sizes are known; it needs
#                      optimisation, so not in Debug builds, and not under
#                      the sanitizers, which check the same calls their
#                      own way)
#   gt_harden_link()   full RELRO (-z relro -z now: every relocation
#                      resolved at load, then read-only), no executable
#                      stack, and a position-independent command
# Not -z nodlopen: NVTX loads the library with dlopen. A wheel build
# (pyproject.toml) turns this on as the default does.
option(GPUTRACE_HARDEN "Stack protection, _FORTIFY_SOURCE and full RELRO (docs/security.md)" ON)

include(CheckCCompilerFlag)
include(CheckPIESupported)

set(_gt_harden_c)
if(GPUTRACE_HARDEN)
  foreach(_flag -fstack-protector-strong -fstack-clash-protection)
    string(MAKE_C_IDENTIFIER "GT_HAVE${_flag}" _var)
    check_c_compiler_flag(${_flag} ${_var})
    if(${_var})
      list(APPEND _gt_harden_c ${_flag})
    endif()
  endforeach()
  add_compile_options("$<$<COMPILE_LANGUAGE:C>:${_gt_harden_c}>")
  if(NOT GPUTRACE_SANITIZE)
    # -U first: a compiler that defines a level of its own would warn of a
    # redefinition. glibc before 2.34 takes 3 as 2.
    add_compile_options(
      "$<$<AND:$<COMPILE_LANGUAGE:C>,$<NOT:$<CONFIG:Debug>>>:-U_FORTIFY_SOURCE;-D_FORTIFY_SOURCE=3>")
  endif()
  check_pie_supported(LANGUAGES C)
endif()

# gt_harden_link(target...): the link-time part, for the binaries that ship.
function(gt_harden_link)
  if(NOT GPUTRACE_HARDEN)
    return()
  endif()
  foreach(_target IN LISTS ARGN)
    target_link_options(${_target} PRIVATE LINKER:-z,relro LINKER:-z,now LINKER:-z,noexecstack)
    set_target_properties(${_target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  endforeach()
endfunction()
