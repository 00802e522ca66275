# `cpack -G DEB` (scripts/package): weft_<version>_amd64.deb, the install of cmake/install.cmake
# under /opt/weft (docs/install.md). /usr would collide with Open MPI's and MPICH's mpicc, mpirun,
# mpi.pc ... (Debian's `mpi` alternatives); /usr/bin gets links for weft's own names only.
set(weft_package_prefix /opt/weft)

# Links in /usr/bin to the tools that bear weft's name. A component of its own, left out of a
# plain `cmake --install` (which must write under its prefix only) and added by CPack below.
file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/install-staging/usr-bin)
foreach(tool IN ITEMS weftcc weftcxx weftfort weftrun weft-info)
  if(tool STREQUAL "weftfort" AND NOT TARGET weft_fortran)
    continue()
  endif()
  file(CREATE_LINK ${weft_package_prefix}/${CMAKE_INSTALL_BINDIR}/${tool}
       ${CMAKE_BINARY_DIR}/install-staging/usr-bin/${tool} SYMBOLIC)
  install(FILES ${CMAKE_BINARY_DIR}/install-staging/usr-bin/${tool} DESTINATION /usr/bin
          COMPONENT system_links EXCLUDE_FROM_ALL)
endforeach()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME weft)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "MPI ranks, OpenMP workers and progress threads as user-level threads of one scheduler")
set(CPACK_PACKAGE_DESCRIPTION
    "weft runs MPI ranks and OpenMP workers as user-level threads of one M:N scheduler: a \
thread-based MPI with single-copy messages inside a process and UCX between processes, and a \
GOMP-ABI OpenMP runtime on the same threads. Installed under /opt/weft; weftcc, weftcxx and \
weftrun are linked from /usr/bin. Clusters: module use /opt/weft/share/modulefiles.")
set(CPACK_PACKAGE_CONTACT "weft developers <weft@localhost>")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
# Staged with DESTDIR (CPACK_SET_DESTDIR) so that the /usr/bin links land in the package.
set(CPACK_SET_DESTDIR ON)
set(CPACK_INSTALL_PREFIX ${weft_package_prefix})
set(CPACK_PACKAGING_INSTALL_PREFIX ${weft_package_prefix})
set(CPACK_INSTALL_CMAKE_PROJECTS
    "${CMAKE_BINARY_DIR};weft;ALL;/;${CMAKE_BINARY_DIR};weft;system_links;/")
# Depends: the libraries its programs and libraries link (dpkg-shlibdeps reads them: libucx0,
# libhwloc15, libpmix2, libnuma1, libtomlplusplus3, libboost-context1.74.0, libstdc++6 ...),
# and what the wrappers run: the compilers, the C library's headers and objcopy.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${CMAKE_BINARY_DIR}/lib)
set(weft_package_depends "gcc, g++, libc6-dev, binutils")
if(TARGET weft_fortran)
  string(APPEND weft_package_depends ", gfortran")
endif()
set(CPACK_DEBIAN_PACKAGE_DEPENDS ${weft_package_depends})
# What the modulefile, find_package(weft) and the .pc files are read by; weft works without them.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "environment-modules | lmod, cmake, pkgconf")
include(CPack)
