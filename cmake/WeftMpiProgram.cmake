# Building MPI programs the way a user does, with build/bin/weftcc or weftcxx, and running them
# under build/bin/weftrun. Included by tests/ and examples/.
include_guard(GLOBAL)

# weft_mpi_executable(<target> OUTPUT <path> SOURCES <files...> [CXX | FORTRAN] [NO_PRIVATIZE] [OPENMP]
#                     [COMPILE_OPTIONS <flags...>] [LINK_LIBRARIES <targets or flags...>])
# Builds <path> from <files> (relative to the current source directory) with weftcc, or weftcxx
# with CXX, or weftfort with FORTRAN; NO_PRIVATIZE builds it with --no-privatize (one copy of the globals for all ranks).
# LINK_LIBRARIES entries that are targets are linked by file and built first. <target> must not be
# <path>'s file name when <path> is in the current binary directory (Ninja would see a cycle).
# OPENMP builds with -fopenmp, through GCC even in a build whose compiler is clang (GCC's GOMP
# calls; the program then tests this build's libweft all the same); COMPILE_OPTIONS --cc=clang
# builds it with clang's __kmpc_* calls instead.
function(weft_mpi_executable target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "CXX;FORTRAN;NO_PRIVATIZE;OPENMP" "OUTPUT"
                        "SOURCES;COMPILE_OPTIONS;LINK_LIBRARIES")
  set(wrapper ${CMAKE_BINARY_DIR}/bin/weftcc)
  if(arg_CXX)
    set(wrapper ${CMAKE_BINARY_DIR}/bin/weftcxx)
  endif()
  set(language_toolchain)
  if(arg_FORTRAN)
    set(wrapper ${CMAKE_BINARY_DIR}/bin/weftfort)
    set(language_toolchain $<TARGET_FILE:weft_fortran>)
  endif()
  set(mode)
  if(arg_NO_PRIVATIZE)
    set(mode --no-privatize)
  endif()
  set(sources)
  foreach(source IN LISTS arg_SOURCES)
    get_filename_component(source ${source} ABSOLUTE)
    list(APPEND sources ${source})
  endforeach()
  set(libraries)
  set(library_targets)
  foreach(library IN LISTS arg_LINK_LIBRARIES)
    if(TARGET ${library})
      list(APPEND libraries $<TARGET_FILE:${library}> -Wl,-rpath,$<TARGET_FILE_DIR:${library}>)
      list(APPEND library_targets ${library})
    else()
      list(APPEND libraries ${library})
    endif()
  endforeach()
  set(warnings -Wall -Wextra)
  if(WEFT_WERROR)
    list(APPEND warnings -Werror)
  endif()
  # The toolchain's files, so that a rebuilt loader or library rebuilds the program.
  set(toolchain $<TARGET_FILE:weft> $<TARGET_FILE:weft_loader> $<TARGET_FILE:weft-stub>
                $<TARGET_FILE:weft_wrap_main> $<TARGET_FILE:weft_rank_libc> ${wrapper} ${PROJECT_SOURCE_DIR}/include/mpi.h
                ${language_toolchain})
  set(launcher)
  if(arg_OPENMP)
    list(APPEND mode -fopenmp)
    # The wrapper compiles with this build's compiler of the program's language.
    set(compiler_id ${CMAKE_C_COMPILER_ID})
    if(arg_CXX)
      set(compiler_id ${CMAKE_CXX_COMPILER_ID})
    endif()
    if(NOT compiler_id STREQUAL "GNU")
      find_program(WEFT_OPENMP_GCC NAMES gcc gcc-12 REQUIRED)
      find_program(WEFT_OPENMP_GXX NAMES g++ g++-12 REQUIRED)
      set(launcher ${CMAKE_COMMAND} -E env WEFT_CC=${WEFT_OPENMP_GCC} WEFT_CXX=${WEFT_OPENMP_GXX})
    endif()
  endif()
  # gfortran writes a source's modules (.mod) into its working directory: two programs built from
  # one source in parallel (fortran_privatize and fortran_privatize_shared) raced on one file and
  # failed a build now and then. Each Fortran program compiles in a folder of its own.
  set(prepare)
  if(arg_FORTRAN)
    set(folder ${arg_OUTPUT}.modules)
    set(prepare COMMAND ${CMAKE_COMMAND} -E make_directory ${folder})
    list(PREPEND launcher ${CMAKE_COMMAND} -E chdir ${folder})
  endif()
  add_custom_command(
    OUTPUT ${arg_OUTPUT}
    ${prepare}
    COMMAND ${launcher} ${wrapper} ${mode} -O2 -g ${warnings} ${arg_COMPILE_OPTIONS} -o ${arg_OUTPUT}
            ${sources} ${libraries}
    DEPENDS ${sources} ${toolchain} ${library_targets}
    COMMENT "Building MPI program ${arg_OUTPUT} with ${wrapper} ${mode}"
    VERBATIM)
  add_custom_target(${target} ALL DEPENDS ${arg_OUTPUT})
  add_dependencies(${target} weft_toolchain)
endfunction()

# weft_mpi_program(NAME <name> SOURCES <files...> [CXX | FORTRAN] [NO_PRIVATIZE] [OPENMP] RANKS <n>...
#                  [ARGS <program arguments...>] [WEFTRUN_ARGS <weftrun options...>]
#                  [COMPILE_OPTIONS <flags...>] [LINK_LIBRARIES <targets or flags...>]
#                  [PROPERTIES <test properties...>])
# Builds the program <name> into the current binary directory (see weft_mpi_executable; the
# target is <name>.build) and registers one test per rank count, <name>.np<n>, running
#   weftrun -n <n> --set scheduler.vps=2 <WEFTRUN_ARGS> <program> <ARGS>
# A test passes when the job exits 0; PROPERTIES are set on every test (e.g. WILL_FAIL TRUE or
# PASS_REGULAR_EXPRESSION "...").
function(weft_mpi_program)
  cmake_parse_arguments(PARSE_ARGV 0 arg "CXX;FORTRAN;NO_PRIVATIZE;OPENMP" "NAME"
                        "SOURCES;RANKS;ARGS;WEFTRUN_ARGS;COMPILE_OPTIONS;LINK_LIBRARIES;PROPERTIES")
  if(NOT arg_NAME OR NOT arg_SOURCES OR NOT arg_RANKS)
    message(FATAL_ERROR "weft_mpi_program needs NAME, SOURCES and RANKS")
  endif()
  set(flags)
  foreach(flag IN ITEMS CXX FORTRAN NO_PRIVATIZE OPENMP)
    if(arg_${flag})
      list(APPEND flags ${flag})
    endif()
  endforeach()
  set(program ${CMAKE_CURRENT_BINARY_DIR}/${arg_NAME})
  weft_mpi_executable(${arg_NAME}.build OUTPUT ${program} SOURCES ${arg_SOURCES} ${flags}
                      COMPILE_OPTIONS ${arg_COMPILE_OPTIONS} LINK_LIBRARIES ${arg_LINK_LIBRARIES})
  foreach(ranks IN LISTS arg_RANKS)
    set(test ${arg_NAME}.np${ranks})
    add_test(NAME ${test}
             COMMAND ${CMAKE_BINARY_DIR}/bin/weftrun -n ${ranks} --set scheduler.vps=2
                     ${arg_WEFTRUN_ARGS} ${program} ${arg_ARGS})
    set_tests_properties(${test} PROPERTIES TIMEOUT 300)
    if(arg_PROPERTIES)
      set_tests_properties(${test} PROPERTIES ${arg_PROPERTIES})
    endif()
  endforeach()
endfunction()
