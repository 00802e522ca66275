// glibc's list of exit functions (atexit, __cxa_atexit, static destructors) against fork.
//
// glibc guards the list with a lock (__exit_funcs_lock) that a forked child does not get back:
// a child forked while another thread was inside __cxa_atexit or __cxa_finalize waits on it for
// ever at its first registration or at exit. libweft defines __cxa_atexit and __cxa_finalize in
// front of glibc's (exit_functions.cpp), and a fork waits, in a pthread_atfork prepare handler,
// until no thread is inside glibc's list code. The functions registered are called through a
// trampoline that lets forks through while they run (a destructor may run for long, wait for
// another thread, or fork itself), as glibc releases its lock around them. docs/privatization.md,
// "Fork".
#pragma once

namespace weft::detail {

// For the thread that ends the process, before glibc's exit: its walk of the list (outside the
// functions it calls) keeps forks out until the process is gone.
void hold_exit_functions_until_the_end() noexcept;

// False in the sanitizer builds, which keep glibc's functions alone (exit_functions.cpp).
bool exit_functions_gated() noexcept;

}  // namespace weft::detail
