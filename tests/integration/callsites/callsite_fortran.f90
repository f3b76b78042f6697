! A Fortran program that calls the CUDA driver API through ISO_C_BINDING:
! device allocations, memsets and copies from marked lines of two
! subroutines of a module and of the main program. check_callsites_fortran.py
! holds the report's call sites to the lines marked "SITE name".
module cuda_driver
  use iso_c_binding
  implicit none
  interface
    integer(c_int) function cuInit(flags) bind(C, name="cuInit")
      import :: c_int
      integer(c_int), value :: flags
    end function
    integer(c_int) function cuDeviceGet(dev, ordinal) bind(C, name="cuDeviceGet")
      import :: c_int
      integer(c_int) :: dev
      integer(c_int), value :: ordinal
    end function
    integer(c_int) function cuDevicePrimaryCtxRetain(ctx, dev) &
        bind(C, name="cuDevicePrimaryCtxRetain")
      import :: c_int, c_ptr
      type(c_ptr) :: ctx
      integer(c_int), value :: dev
    end function
    integer(c_int) function cuCtxSetCurrent(ctx) bind(C, name="cuCtxSetCurrent")
      import :: c_int, c_ptr
      type(c_ptr), value :: ctx
    end function
    integer(c_int) function cuMemAlloc(dptr, bytes) bind(C, name="cuMemAlloc_v2")
      import :: c_int, c_int64_t, c_size_t
      integer(c_int64_t) :: dptr
      integer(c_size_t), value :: bytes
    end function
    integer(c_int) function cuMemsetD8(dptr, value, count) bind(C, name="cuMemsetD8_v2")
      import :: c_int, c_int64_t, c_size_t, c_signed_char
      integer(c_int64_t), value :: dptr
      integer(c_signed_char), value :: value
      integer(c_size_t), value :: count
    end function
    integer(c_int) function cuMemcpyHtoD(dst, src, bytes) bind(C, name="cuMemcpyHtoD_v2")
      import :: c_int, c_int64_t, c_ptr, c_size_t
      integer(c_int64_t), value :: dst
      type(c_ptr), value :: src
      integer(c_size_t), value :: bytes
    end function
  end interface
end module cuda_driver

module solver
  use cuda_driver
  implicit none
  integer, parameter :: n = 4096
contains
  subroutine clear_field(d, times)
    integer(c_int64_t), intent(in) :: d
    integer, intent(in) :: times
    integer :: i
    do i = 1, times
      if (cuMemsetD8(d, 0_c_signed_char, int(n, c_size_t)) /= 0) stop 3 ! SITE clear_field
    end do
  end subroutine

  subroutine upload(d, host)
    integer(c_int64_t), intent(in) :: d
    real(c_float), intent(in), target :: host(n)
    if (cuMemcpyHtoD(d, c_loc(host), int(4 * n, c_size_t)) /= 0) stop 4 ! SITE upload
  end subroutine
end module solver

program callsite_fortran
  use cuda_driver
  use solver
  implicit none
  integer(c_int) :: dev
  type(c_ptr) :: ctx
  integer(c_int64_t) :: field, halo
  real(c_float), target :: host(n)
  host = 1.0
  if (cuInit(0) /= 0 .or. cuDeviceGet(dev, 0) /= 0) stop 1
  if (cuDevicePrimaryCtxRetain(ctx, dev) /= 0 .or. cuCtxSetCurrent(ctx) /= 0) stop 1
  if (cuMemAlloc(field, int(4 * n, c_size_t)) /= 0) stop 2 ! SITE alloc_field
  if (cuMemAlloc(halo, int(n, c_size_t)) /= 0) stop 2 ! SITE alloc_halo
  call clear_field(field, 3)
  call clear_field(halo, 2)
  call upload(field, host)
  print '(a)', 'ok'
end program callsite_fortran
