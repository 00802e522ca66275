/* Each rank's own command line for Fortran's intrinsics. gfortran compiles GET_COMMAND_ARGUMENT,
 * GET_COMMAND, COMMAND_ARGUMENT_COUNT and GNU's GETARG and IARGC into calls of libgfortran, which
 * reads what the program's main handed to _gfortran_set_args, kept once per process. The ranks of
 * a process share libgfortran, so a spawned rank's arguments (MPI_COMM_SPAWN's argv, different
 * for each command of MPI_COMM_SPAWN_MULTIPLE) would replace those of every other rank. Defined
 * here, in libweft_fortran.a, they are linked into the rank image, whose data each rank has a copy
 * of (docs/fortran.md): main's call and the program's calls find these, and the command line they
 * keep is the rank's own. Same results as libgfortran's (libgfortran/intrinsics/args.c). */
#include <stdint.h>
#include <string.h>

/* GET_COMMAND(_ARGUMENT)'s STATUS values in libgfortran. */
enum { GC_SUCCESS = 0, GC_VALUE_TOO_SHORT = -1, GC_FAILURE = 42 };

static int saved_argc;
static char** saved_argv;

void _gfortran_set_args(int argc, char** argv) {
  saved_argc = argc;
  saved_argv = argv;
}

int32_t _gfortran_iargc(void) {
  return saved_argc > 0 ? saved_argc - 1 : 0;
}

static void getarg(int64_t position, char* value, size_t value_length) {
  memset(value, ' ', value_length);
  if (position < 0 || position >= saved_argc) return;
  size_t length = strlen(saved_argv[position]);
  memcpy(value, saved_argv[position], length < value_length ? length : value_length);
}

void _gfortran_getarg_i4(int32_t* position, char* value, size_t value_length) {
  getarg(*position, value, value_length);
}

void _gfortran_getarg_i8(int64_t* position, char* value, size_t value_length) {
  getarg(*position, value, value_length);
}

/* VALUE, LENGTH and STATUS are optional (null when absent). */
static void get_command_argument(int64_t number, char* value, int64_t* length, int* status,
                                 size_t value_length) {
  int result = GC_SUCCESS;
  size_t argument_length = 0;
  if (value != NULL) {
    if (value_length < 1) result = GC_FAILURE;
    memset(value, ' ', value_length);
  }
  if (number < 0 || number >= saved_argc) {
    result = GC_FAILURE;
  } else {
    argument_length = strlen(saved_argv[number]);
  }
  if (value != NULL && result != GC_FAILURE) {
    if (argument_length > value_length) result = GC_VALUE_TOO_SHORT;
    memcpy(value, saved_argv[number],
           argument_length < value_length ? argument_length : value_length);
  }
  if (length != NULL) *length = (int64_t)argument_length;
  if (status != NULL) *status = result;
}

void _gfortran_get_command_argument_i4(int32_t* number, char* value, int32_t* length,
                                       int32_t* status, size_t value_length) {
  int64_t full_length = 0;
  int result = GC_SUCCESS;
  get_command_argument(*number, value, &full_length, &result, value_length);
  if (length != NULL) *length = (int32_t)full_length;
  if (status != NULL) *status = result;
}

void _gfortran_get_command_argument_i8(int64_t* number, char* value, int64_t* length,
                                       int64_t* status, size_t value_length) {
  int result = GC_SUCCESS;
  get_command_argument(*number, value, length, &result, value_length);
  if (status != NULL) *status = result;
}

/* The arguments joined by single blanks. */
static void get_command(char* command, int64_t* length, int* status, size_t command_length) {
  int result = GC_SUCCESS;
  size_t total = 0;
  if (command != NULL) {
    if (command_length < 1) result = GC_FAILURE;
    memset(command, ' ', command_length);
  }
  for (int i = 0; i < saved_argc; ++i) {
    size_t argument_length = strlen(saved_argv[i]);
    if (command != NULL && result != GC_FAILURE) {
      size_t room = total < command_length ? command_length - total : 0;
      if (argument_length > room) result = GC_VALUE_TOO_SHORT;
      memcpy(command + total, saved_argv[i], argument_length < room ? argument_length : room);
    }
    total += argument_length + (i + 1 < saved_argc ? 1 : 0);
  }
  if (length != NULL) *length = (int64_t)total;
  if (status != NULL) *status = result;
}

void _gfortran_get_command_i4(char* command, int32_t* length, int32_t* status,
                              size_t command_length) {
  int64_t full_length = 0;
  int result = GC_SUCCESS;
  get_command(command, &full_length, &result, command_length);
  if (length != NULL) *length = (int32_t)full_length;
  if (status != NULL) *status = result;
}

void _gfortran_get_command_i8(char* command, int64_t* length, int64_t* status,
                              size_t command_length) {
  int result = GC_SUCCESS;
  get_command(command, length, &result, command_length);
  if (status != NULL) *status = result;
}
