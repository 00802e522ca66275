/* The entry of weft's program loader, called by the main() of every program weftcc links. */
#ifndef WEFT_LOADER_H
#define WEFT_LOADER_H

#ifdef __cplusplus
extern "C" {
#endif

typedef int (*weft_main_function)(int argc, char** argv, char** envp);

/* Runs the program as an MPI job of mpi.ranks ranks and returns its exit status (that of
 * weft::mpi::run_job). With shared_main (a --no-privatize build) every rank calls it; without,
 * every rank loads its own copy of the image embedded in the executable and calls that copy's
 * main. Each rank gets its own copy of argv. A configuration or image that cannot run is reported
 * on stderr with exit status 2. */
int weft_loader_main(int argc, char** argv, char** envp, weft_main_function shared_main);

#ifdef __cplusplus
}
#endif

#endif
