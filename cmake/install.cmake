# `cmake --install build --prefix P`: weft's tools, libraries, headers, CMake and pkg-config
# files, modulefile and documentation under P (docs/install.md). Nothing installed names P or
# the build tree: the wrappers find P from their own place, the programs and libraries through
# $ORIGIN, the CMake, pkg-config and module files from theirs, so that the tree may move.
# Included at the end of the top-level CMakeLists.txt, once every target exists.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Paths between the installed directories, the same for every prefix.
function(weft_relative_path variable from to)
  file(RELATIVE_PATH relative /prefix/${from} /prefix/${to})
  string(REGEX REPLACE "/$" "" relative "${relative}")
  if(relative STREQUAL "")
    set(relative .)
  endif()
  set(${variable} ${relative} PARENT_SCOPE)
endfunction()
weft_relative_path(weft_bin_to_prefix ${CMAKE_INSTALL_BINDIR} "")
weft_relative_path(weft_bin_to_lib ${CMAKE_INSTALL_BINDIR} ${CMAKE_INSTALL_LIBDIR})
set(weft_fortran_module_dir ${CMAKE_INSTALL_LIBDIR}/weft/fortran)
set(weft_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/weft)
set(weft_pkgconfig_dir ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
set(weft_modulefile_dir ${CMAKE_INSTALL_DATADIR}/modulefiles/weft)
set(weft_staging ${CMAKE_BINARY_DIR}/install-staging)
file(MAKE_DIRECTORY ${weft_staging}/bin)

# Libraries and programs. weftrun and weft-info find libweft beside them; libweft_loader
# finds libweft in its own directory. The PMIx run path some systems need comes from pmix's
# pkg-config link flags and stays.
install(TARGETS weft weft_loader LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
set_target_properties(weft_loader PROPERTIES INSTALL_RPATH "$ORIGIN")
install(TARGETS weft_stub weft_wrap_main weft_rank_libc ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS weftrun weft-info RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
set_target_properties(weftrun weft-info PROPERTIES INSTALL_RPATH "$ORIGIN/${weft_bin_to_lib}")
# weftcc -fopenmp's replacements of libgomp's spec and of libomp (omp_bridge/CMakeLists.txt).
install(FILES ${CMAKE_BINARY_DIR}/lib/openmp/libgomp.spec ${CMAKE_BINARY_DIR}/lib/openmp/libomp.so
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/openmp)

# Headers: mpi.h, omp.h and the C++ API under weft/.
install(FILES ${PROJECT_SOURCE_DIR}/include/mpi.h ${PROJECT_SOURCE_DIR}/include/omp.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/weft DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

# Fortran: mpif.h and omp_lib.h with the C headers; the modules, which only the compiler that
# wrote them reads, in lib/weft/fortran; the Fortran-callable layer weftfort links into images.
if(TARGET weft_fortran)
  install(TARGETS weft_fortran ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(FILES ${WEFT_FORTRAN_INCLUDE_DIR}/mpif.h ${WEFT_FORTRAN_INCLUDE_DIR}/omp_lib.h
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(FILES ${WEFT_FORTRAN_INCLUDE_DIR}/mpi.mod ${WEFT_FORTRAN_INCLUDE_DIR}/mpi_f08.mod
                ${WEFT_FORTRAN_INCLUDE_DIR}/omp_lib.mod
          DESTINATION ${weft_fortran_module_dir})
endif()

# The compiler wrappers (tools/CMakeLists.txt lists them): the same script as build/bin's, with
# the prefix found from the script's own place (through its links: mpicc, /usr/bin/weftcc).
set(WEFT_PATHS_NOTE "found from this script's own place, so that the installed tree may move.")
set(WEFT_FIND_PREFIX
    "prefix=$(cd \"$(dirname \"$(readlink -f \"\${BASH_SOURCE[0]}\")\")/${weft_bin_to_prefix}\" && pwd)")
set(WEFT_INCLUDE_DIR "$prefix/${CMAKE_INSTALL_INCLUDEDIR}")
set(WEFT_LIB_DIR "$prefix/${CMAKE_INSTALL_LIBDIR}")
set(WEFT_STUB "") # the stub is linked per program (libweft_stub.a)
set(WEFT_VERSION ${PROJECT_VERSION})
get_property(weft_wrappers GLOBAL PROPERTY WEFT_COMPILER_WRAPPERS)
foreach(record IN LISTS weft_wrappers)
  string(REPLACE "|" ";" record "${record}")
  list(GET record 0 WEFT_WRAPPER)
  list(GET record 1 WEFT_COMPILER_VARIABLE)
  list(GET record 2 WEFT_DEFAULT_COMPILER)
  list(GET record 3 compiler_id)
  set(WEFT_DEFAULT_IS_GCC 0)
  if(compiler_id STREQUAL "GNU")
    set(WEFT_DEFAULT_IS_GCC 1)
  endif()
  set(WEFT_LANGUAGE_INCLUDE)
  set(WEFT_LANGUAGE_LIBS)
  if(WEFT_COMPILER_VARIABLE STREQUAL "WEFT_FC")
    set(WEFT_LANGUAGE_INCLUDE "-I\"$prefix/${weft_fortran_module_dir}\"")
    set(WEFT_LANGUAGE_LIBS "\"$prefix/${CMAKE_INSTALL_LIBDIR}/libweft_fortran.a\"")
  endif()
  configure_file(${PROJECT_SOURCE_DIR}/tools/weftcc.in ${weft_staging}/bin/${WEFT_WRAPPER} @ONLY)
  install(PROGRAMS ${weft_staging}/bin/${WEFT_WRAPPER} DESTINATION ${CMAKE_INSTALL_BINDIR})
endforeach()
# The other names of the wrappers and of weftrun, as build/bin has them (relative links).
foreach(alias IN ITEMS mpicc mpicxx mpifort mpif90 mpif77 mpiexec mpirun)
  if(IS_SYMLINK ${CMAKE_BINARY_DIR}/bin/${alias})
    file(READ_SYMLINK ${CMAKE_BINARY_DIR}/bin/${alias} target)
    file(CREATE_LINK ${target} ${weft_staging}/bin/${alias} SYMBOLIC)
    install(FILES ${weft_staging}/bin/${alias} DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endforeach()

# find_package(weft): imported targets and the wrappers' paths (cmake/weft-config.cmake.in).
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/weft-config.cmake.in
                              ${weft_staging}/weft-config.cmake
                              INSTALL_DESTINATION ${weft_cmake_dir}
                              PATH_VARS CMAKE_INSTALL_BINDIR CMAKE_INSTALL_LIBDIR
                                        CMAKE_INSTALL_INCLUDEDIR)
# 0.x: a minor version may break what the one before offered.
write_basic_package_version_file(${weft_staging}/weft-config-version.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${weft_staging}/weft-config.cmake ${weft_staging}/weft-config-version.cmake
        DESTINATION ${weft_cmake_dir})

# pkg-config: weft.pc, and Open MPI's names mpi.pc and ompi-c.pc for build systems that ask for
# those. The prefix is the .pc file's own directory's (${pcfiledir}), so that the tree may move.
weft_relative_path(weft_pkgconfig_to_prefix ${weft_pkgconfig_dir} "")
set(WEFT_PC_PREFIX "\${pcfiledir}/${weft_pkgconfig_to_prefix}")
foreach(name IN ITEMS weft mpi ompi-c)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/weft.pc.in ${weft_staging}/${name}.pc @ONLY)
  install(FILES ${weft_staging}/${name}.pc DESTINATION ${weft_pkgconfig_dir})
endforeach()

# The environment-modules / Lmod modulefile: `module use P/share/modulefiles; module load weft`.
weft_relative_path(weft_modulefile_to_prefix ${weft_modulefile_dir} "")
configure_file(${PROJECT_SOURCE_DIR}/cmake/weft.modulefile.in
               ${weft_staging}/modulefiles/${PROJECT_VERSION} @ONLY)
install(FILES ${weft_staging}/modulefiles/${PROJECT_VERSION} DESTINATION ${weft_modulefile_dir})

# Documentation, and the two examples the README builds.
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)
install(FILES ${PROJECT_SOURCE_DIR}/examples/ring.c ${PROJECT_SOURCE_DIR}/examples/hybrid.c
        DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)
