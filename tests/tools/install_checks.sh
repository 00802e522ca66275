#!/usr/bin/env bash
# Checks of an installed weft, one per ctest (tests/tools/CMakeLists.txt):
#
#   install_checks.sh <check> <build dir> <work dir> <cmake> <generator>
#
# install (the fixture of the others) installs the build into <work dir>/install/first, moves the
# tree to <work dir>/install/prefix (an installed weft must work from any place) and checks that
# nothing in it names the build tree. The other checks build programs from the moved tree only:
# its wrappers, its find_package(weft) files and its pkg-config files (docs/install.md).
set -uo pipefail

check=$1
build=$(cd "$2" && pwd)
root=$(realpath -m "$3")/install
work=$root/$check
cmake=$4
generator=$5
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source=$(cd "$here/../.." && pwd)
prefix=$root/prefix
rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1

source "$(dirname "${BASH_SOURCE[0]}")/check_helpers.sh"

expect_in() { # <file> <extended regex>
  grep -Eq -- "$2" "$1" || fail "std$1 lacks /$2/"
}

# The ring of examples/ring.c run by the moved tree's weftrun: every rank's token arrives.
expect_ring() { # <program> <ranks>
  expect_run 0 "$prefix/bin/weftrun" -n "$2" --set scheduler.vps=2 "$1"
  expect_in out "rank $(($2 - 1)) of $2"
  local sum=$((3 * $2 * ($2 - 1) / 2))
  expect_in out "reads $sum \(expected $sum\)"
}

expect_hybrid() { # <program>
  expect_run 0 env OMP_NUM_THREADS=2 "$prefix/bin/weftrun" -n 2 -c 1 --set scheduler.vps=2 "$1"
  expect_in out "sum 500000500000 \(expected 500000500000\)"
}

[[ $check == install || -x $prefix/bin/weftcc ]] ||
  fail "no installed tree in $prefix (Tools.install)"

case $check in
  install)
    rm -rf "$root/first" "$prefix"
    expect_run 0 "$cmake" --install "$build" --prefix "$root/first"
    mv "$root/first" "$prefix" || fail "cannot move the installed tree"
    for file in bin/weftcc bin/weftcxx bin/mpicc bin/mpicxx bin/weftrun bin/mpiexec bin/mpirun \
      bin/weft-info lib/libweft.so lib/libweft_loader.so lib/libweft_stub.a \
      lib/libweft_wrap_main.a lib/libweft_rank_libc.a lib/openmp/libgomp.spec lib/openmp/libomp.so \
      include/mpi.h include/omp.h include/weft/thread.h lib/cmake/weft/weft-config.cmake \
      lib/cmake/weft/weft-config-version.cmake lib/pkgconfig/weft.pc lib/pkgconfig/mpi.pc \
      lib/pkgconfig/ompi-c.pc share/modulefiles/weft share/doc/weft/README.md \
      share/doc/weft/examples/ring.c; do
      [[ -e $prefix/$file ]] || fail "the installed tree lacks $file"
    done
    if [[ -e $build/bin/weftfort ]]; then
      for file in bin/weftfort bin/mpifort bin/mpif90 bin/mpif77 include/mpif.h \
        lib/weft/fortran/mpi.mod lib/weft/fortran/mpi_f08.mod lib/libweft_fortran.a; do
        [[ -e $prefix/$file ]] || fail "the installed tree lacks $file"
      done
    fi
    # No test program, nothing of the build's own in the installed tree.
    [[ -n $(find "$prefix" -name '*_test*' -o -name '*tools_common*') ]] &&
      fail "test files installed: $(find "$prefix" -name '*_test*' -o -name '*tools_common*')"
    # Neither the text files nor the run paths of the programs and libraries name the build
    # tree (or the source tree: the wrappers' headers are the installed ones).
    while IFS= read -r -d '' file; do
      if [[ $(head -c 4 "$file" | tr -d '\0') == $'\x7fELF' ]]; then
        readelf -d "$file" | grep -E 'R(UN)?PATH' | grep -qF -e "$build" -e "$source" &&
          fail "$file's run path names the build: $(readelf -d "$file" | grep -E 'R(UN)?PATH')"
        readelf -p .rodata "$file" 2> /dev/null | grep -qF "$build" &&
          fail "$file's constants name the build tree"
      elif [[ $file != *.a && $file != *.mod ]]; then
        grep -qF -e "$build" -e "$source" "$file" && fail "$file names the build or source tree"
      fi
    done < <(find "$prefix" -type f -print0)
    # The modulefile, read by Tcl with the commands of environment-modules stubbed: it adds the
    # moved tree's directories and sets no WEFT_* variable (weft reads those as configuration).
    if command -v tclsh > /dev/null; then
      modulefile=$(echo "$prefix"/share/modulefiles/weft/*)
      printf '%s\n' 'proc prepend-path {variable value} { puts "$variable=$value" }' \
        'proc setenv {variable value} { puts "setenv $variable=$value" }' \
        'proc conflict {args} {}' 'proc module-whatis {args} {}' \
        "set ModulesCurrentModulefile {$modulefile}" "source {$modulefile}" > module.tcl
      expect_run 0 tclsh module.tcl
      expect_in out "^PATH=$prefix/bin$"
      expect_in out "^PKG_CONFIG_PATH=$prefix/lib/pkgconfig$"
      expect_in out "^CMAKE_PREFIX_PATH=$prefix$"
      grep -q WEFT_ out && fail "the modulefile sets a WEFT_ variable"
    fi ;;
  installed_wrappers)
    # examples/ring.c and the hybrid example, with the moved tree's wrappers and launcher.
    expect_run 0 "$prefix/bin/mpicc" -O2 -o ring "$prefix/share/doc/weft/examples/ring.c"
    expect_ring ./ring 4
    [[ $(readelf -d ring | grep RUNPATH) == *"[$prefix/lib]" ]] ||
      fail "the program's run path is not the moved tree's lib/: $(readelf -d ring | grep RUNPATH)"
    expect_run 0 "$prefix/bin/weftcc" -fopenmp -O2 -o hybrid \
      "$prefix/share/doc/weft/examples/hybrid.c"
    expect_hybrid ./hybrid
    expect_run 0 "$prefix/bin/mpicc" -showme:incdirs
    expect_in out "^$prefix/include$"
    # Fortran: the installed mpi module and mpif.h.
    if [[ -x $prefix/bin/weftfort ]]; then
      printf '%s\n' 'program ranks' '  use mpi' '  implicit none' \
        '  integer :: rank, size, ierror' \
        '  call MPI_Init(ierror)' '  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierror)' \
        '  call MPI_Comm_size(MPI_COMM_WORLD, size, ierror)' \
        "  print '(a,i0,a,i0)', 'fortran rank ', rank, ' of ', size" '  call MPI_Finalize(ierror)' \
        'end program ranks' > ranks.f90
      expect_run 0 "$prefix/bin/mpifort" -O2 -o ranks ranks.f90
      expect_run 0 "$prefix/bin/weftrun" -n 2 --set scheduler.vps=2 ./ranks
      expect_in out "fortran rank 1 of 2"
      printf '%s\n' "      program old" "      include 'mpif.h'" "      integer ierr" \
        "      call MPI_Init(ierr)" "      call MPI_Finalize(ierr)" "      end" > old.f
      expect_run 0 "$prefix/bin/mpif77" -o old old.f
      expect_run 0 ./old
    fi ;;
  installed_cmake_project)
    # The project of Tools.cmake_project, with the moved tree's wrappers as its compilers.
    expect_run 0 "$cmake" -S "$here/cmake_project" -B project -G "$generator" \
      -DCMAKE_C_COMPILER="$prefix/bin/weftcc" -DCMAKE_CXX_COMPILER="$prefix/bin/weftcxx"
    expect_run 0 "$cmake" --build project
    expect_run 0 "$prefix/bin/weftrun" -n 3 project/hello
    expect_in out "hello from rank 2 of 3"
    # find_package(weft) with the plain compilers: weft::mpi, weft::omp and weft::weft.
    expect_run 0 "$cmake" -S "$here/find_package_project" -B package -G "$generator" \
      -DCMAKE_PREFIX_PATH="$prefix" -DWEFT_EXAMPLES="$prefix/share/doc/weft/examples"
    expect_in out "weft 0\.[0-9.]+ at $prefix/bin/weftrun"
    expect_run 0 "$cmake" --build package
    expect_ring package/ring 3
    expect_hybrid package/hybrid
    expect_run 0 package/threads
    expect_in out "an mpi_task thread ran on virtual processor 0" ;;
  installed_pkg_config)
    # pkg-config's flags for weft, and Open MPI's names for them, with the plain compiler.
    export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
    for name in mpi ompi-c; do
      [[ $(pkg-config --cflags --libs $name) == $(pkg-config --cflags --libs weft) ]] ||
        fail "pkg-config $name differs from weft"
    done
    expect_run 0 pkg-config --modversion weft
    expect_in out "^0\.[0-9.]+$"
    read -ra cflags < <(pkg-config --cflags weft)
    read -ra libs < <(pkg-config --libs weft)
    expect_run 0 cc "${cflags[@]}" -O2 -o ring "$prefix/share/doc/weft/examples/ring.c" "${libs[@]}"
    expect_ring ./ring 3 ;;
  *) fail "unknown check" ;;
esac
echo "PASSED $check"
