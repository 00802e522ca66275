/* getopt, getopt_long, getopt_long_only and their globals, one set per rank.
 *
 * This file goes into every rank image that calls one of them (libweft_rank_libc.a), so each
 * rank's copy of the program has its own optind, optarg, opterr, optopt and scanning position,
 * as each process of a process-based MPI has. -Bsymbolic binds the program's references to
 * these definitions rather than to the C library's single set.
 *
 * The behaviour is that of glibc's GNU getopt: argument permutation unless the option string
 * starts with '+' or POSIXLY_CORRECT is set, "-" for options and operands in order, a leading
 * ':' silencing the messages, "::" for optional arguments, "W;" for -W foo, unambiguous
 * abbreviations of long options, optind = 0 to rescan, and glibc's messages, translated by
 * glibc's own catalog. */
#define _GNU_SOURCE
#include <getopt.h>
#include <libintl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((weak)) char* optarg;
__attribute__((weak)) int optind = 1;
__attribute__((weak)) int opterr = 1;
__attribute__((weak)) int optopt = '?';

enum ordering { PERMUTE, REQUIRE_ORDER, RETURN_IN_ORDER };

/* What glibc keeps hidden between calls. */
static struct {
  char* next_char;   /* inside a group of short options ("-abc"), or NULL */
  int first_operand; /* argv[first_operand, last_operand) are operands skipped so far */
  int last_operand;
  int initialized;
  enum ordering ordering;
  int optopt; /* copied to optopt after every call, as glibc does */
} scan;

static const char* message(const char* text) {
  return dgettext("libc", text);
}

static void reverse(char** begin, char** end) {
  for (; begin < --end; ++begin) {
    char* kept = *begin;
    *begin = *end;
    *end = kept;
  }
}

/* Moves the options found after the skipped operands, argv[last_operand, optind), in front of
 * them, both blocks keeping their order. */
static void move_options_before_operands(char** argv) {
  reverse(argv + scan.first_operand, argv + scan.last_operand);
  reverse(argv + scan.last_operand, argv + optind);
  reverse(argv + scan.first_operand, argv + optind);
  scan.first_operand += optind - scan.last_operand;
  scan.last_operand = optind;
}

static const char* start_scan(const char* optstring, int posixly_correct) {
  if (optind == 0) optind = 1;
  scan.first_operand = scan.last_operand = optind;
  scan.next_char = NULL;
  if (optstring[0] == '-') {
    scan.ordering = RETURN_IN_ORDER;
    ++optstring;
  } else if (optstring[0] == '+') {
    scan.ordering = REQUIRE_ORDER;
    ++optstring;
  } else if (posixly_correct || getenv("POSIXLY_CORRECT") != NULL) {
    scan.ordering = REQUIRE_ORDER;
  } else {
    scan.ordering = PERMUTE;
  }
  scan.initialized = 1;
  return optstring;
}

static int is_operand(char* const* argv, int index) {
  return argv[index][0] != '-' || argv[index][1] == '\0';
}

static int missing_argument(const char* optstring) {
  return optstring[0] == ':' ? ':' : '?';
}

/* Whether long option `candidate` would act differently from `first`. */
static int differs(const struct option* first, const struct option* candidate) {
  return first->has_arg != candidate->has_arg || first->flag != candidate->flag ||
         first->val != candidate->val;
}

/* The long option scan.next_char names (up to an '='), written after `prefix` ("--", "-" or
 * "-W "). Returns -1 when getopt_long_only should read it as short options instead. */
static int long_option(int argc, char** argv, const char* optstring, const struct option* longopts,
                       int* longind, int long_only, int print_errors, const char* prefix) {
  char* name = scan.next_char;
  char* name_end = name;
  while (*name_end != '\0' && *name_end != '=') ++name_end;
  const size_t length = (size_t)(name_end - name);

  const struct option* found = NULL;
  int found_index = -1;
  int ambiguous = 0;
  for (int i = 0; longopts[i].name != NULL; ++i) {
    if (strncmp(longopts[i].name, name, length) != 0) continue;
    if (strlen(longopts[i].name) == length) {
      found = &longopts[i];
      found_index = i;
      ambiguous = 0;
      break;
    }
    if (found == NULL) {
      found = &longopts[i];
      found_index = i;
    } else if (long_only || differs(found, &longopts[i])) {
      ambiguous = 1;
    }
  }

  if (ambiguous) {
    if (print_errors) {
      flockfile(stderr);
      fprintf(stderr, message("%s: option '%s%s' is ambiguous; possibilities:"), argv[0], prefix,
              name);
      for (int i = found_index; longopts[i].name != NULL; ++i) {
        if (strncmp(longopts[i].name, name, length) != 0) continue;
        if (i == found_index || long_only || differs(found, &longopts[i])) {
          fprintf(stderr, " '%s%s'", prefix, longopts[i].name);
        }
      }
      fprintf(stderr, "\n");
      funlockfile(stderr);
    }
    scan.next_char += strlen(scan.next_char);
    ++optind;
    scan.optopt = 0;
    return '?';
  }

  if (found == NULL) {
    if (!long_only || argv[optind][1] == '-' || strchr(optstring, *name) == NULL) {
      if (print_errors) {
        fprintf(stderr, message("%s: unrecognized option '%s%s'\n"), argv[0], prefix, name);
      }
      scan.next_char = NULL;
      ++optind;
      scan.optopt = 0;
      return '?';
    }
    return -1;
  }

  ++optind;
  scan.next_char = NULL;
  if (*name_end == '=') {
    if (found->has_arg == no_argument) {
      if (print_errors) {
        fprintf(stderr, message("%s: option '%s%s' doesn't allow an argument\n"), argv[0], prefix,
                found->name);
      }
      scan.optopt = found->val;
      return '?';
    }
    optarg = name_end + 1;
  } else if (found->has_arg == required_argument) {
    if (optind >= argc) {
      if (print_errors) {
        fprintf(stderr, message("%s: option '%s%s' requires an argument\n"), argv[0], prefix,
                found->name);
      }
      scan.optopt = found->val;
      return missing_argument(optstring);
    }
    optarg = argv[optind++];
  }
  if (longind != NULL) *longind = found_index;
  if (found->flag != NULL) {
    *found->flag = found->val;
    return 0;
  }
  return found->val;
}

/* Moves to the next element of argv, permuting operands behind options as the ordering says.
 * Returns 0 when it holds short options (scan.next_char on the first); otherwise returns 1 with
 * the call's answer in *result: -1 at the end of the options, 1 for an operand returned in
 * order, or the result of the long option the element names. */
static int next_element(int argc, char** argv, const char* optstring, const struct option* longopts,
                        int* longind, int long_only, int print_errors, int* result) {
  if (scan.last_operand > optind) scan.last_operand = optind;
  if (scan.first_operand > optind) scan.first_operand = optind;
  if (scan.ordering == PERMUTE) {
    if (scan.first_operand != scan.last_operand && scan.last_operand != optind) {
      move_options_before_operands(argv);
    } else if (scan.last_operand != optind) {
      scan.first_operand = optind;
    }
    while (optind < argc && is_operand(argv, optind)) ++optind;
    scan.last_operand = optind;
  }
  /* "--" ends the options; the operands skipped so far go in front of those after it. */
  if (optind != argc && strcmp(argv[optind], "--") == 0) {
    ++optind;
    if (scan.first_operand != scan.last_operand && scan.last_operand != optind) {
      move_options_before_operands(argv);
    } else if (scan.first_operand == scan.last_operand) {
      scan.first_operand = optind;
    }
    scan.last_operand = argc;
    optind = argc;
  }
  if (optind == argc) {
    if (scan.first_operand != scan.last_operand) optind = scan.first_operand;
    *result = -1;
    return 1;
  }
  if (is_operand(argv, optind)) {
    if (scan.ordering == REQUIRE_ORDER) {
      *result = -1;
      return 1;
    }
    optarg = argv[optind++];
    *result = 1;
    return 1;
  }
  if (longopts != NULL) {
    if (argv[optind][1] == '-') {
      scan.next_char = argv[optind] + 2;
      *result =
          long_option(argc, argv, optstring, longopts, longind, long_only, print_errors, "--");
      return 1;
    }
    /* With getopt_long_only, "-f" where f is a short option stays that option; "-fu" may
     * abbreviate a long option "fubar". */
    if (long_only && (argv[optind][2] != '\0' || strchr(optstring, argv[optind][1]) == NULL)) {
      scan.next_char = argv[optind] + 1;
      const int code =
          long_option(argc, argv, optstring, longopts, longind, long_only, print_errors, "-");
      if (code != -1) {
        *result = code;
        return 1;
      }
    }
  }
  scan.next_char = argv[optind] + 1;
  return 0;
}

static int next_option(int argc, char** argv, const char* optstring, const struct option* longopts,
                       int* longind, int long_only, int posixly_correct) {
  int print_errors = opterr;
  if (argc < 1) return -1;
  optarg = NULL;
  if (optind == 0 || !scan.initialized) {
    optstring = start_scan(optstring, posixly_correct);
  } else if (optstring[0] == '-' || optstring[0] == '+') {
    ++optstring;
  }
  if (optstring[0] == ':') print_errors = 0;

  if (scan.next_char == NULL || *scan.next_char == '\0') {
    int result = 0;
    if (next_element(argc, argv, optstring, longopts, longind, long_only, print_errors, &result)) {
      return result;
    }
  }

  const char c = *scan.next_char++;
  const char* spec = strchr(optstring, c);
  if (*scan.next_char == '\0') ++optind;
  if (spec == NULL || c == ':' || c == ';') {
    if (print_errors) fprintf(stderr, message("%s: invalid option -- '%c'\n"), argv[0], c);
    scan.optopt = c;
    return '?';
  }
  if (spec[0] == 'W' && spec[1] == ';' && longopts != NULL) {
    /* "-W foo" is "--foo". */
    if (*scan.next_char != '\0') {
      /* "-Wfoo": the long option follows in the same element. */
    } else if (optind == argc) {
      if (print_errors) {
        fprintf(stderr, message("%s: option requires an argument -- '%c'\n"), argv[0], c);
      }
      scan.optopt = c;
      return missing_argument(optstring);
    } else {
      scan.next_char = argv[optind];
    }
    return long_option(argc, argv, optstring, longopts, longind, 0, print_errors, "-W ");
  }
  if (spec[1] == ':') {
    if (*scan.next_char != '\0') {
      optarg = scan.next_char;
      ++optind;
    } else if (spec[2] == ':') {
      optarg = NULL; /* an optional argument must be attached */
    } else if (optind == argc) {
      if (print_errors) {
        fprintf(stderr, message("%s: option requires an argument -- '%c'\n"), argv[0], c);
      }
      scan.optopt = c;
      scan.next_char = NULL;
      return missing_argument(optstring);
    } else {
      optarg = argv[optind++];
    }
    scan.next_char = NULL;
  }
  return c;
}

static int scan_options(int argc, char** argv, const char* optstring, const struct option* longopts,
                        int* longind, int long_only, int posixly_correct) {
  const int result =
      next_option(argc, argv, optstring, longopts, longind, long_only, posixly_correct);
  optopt = scan.optopt;
  return result;
}

__attribute__((weak)) int getopt(int argc, char* const argv[], const char* optstring) {
  return scan_options(argc, (char**)argv, optstring, NULL, NULL, 0, 0);
}

/* What getopt is named in programs that ask for strict POSIX (unistd.h redirects it). */
int __posix_getopt(int argc, char* const argv[], const char* optstring);
__attribute__((weak)) int __posix_getopt(int argc, char* const argv[], const char* optstring) {
  return scan_options(argc, (char**)argv, optstring, NULL, NULL, 0, 1);
}

__attribute__((weak)) int getopt_long(int argc, char* const argv[], const char* optstring,
                                      const struct option* longopts, int* longind) {
  return scan_options(argc, (char**)argv, optstring, longopts, longind, 0, 0);
}

__attribute__((weak)) int getopt_long_only(int argc, char* const argv[], const char* optstring,
                                           const struct option* longopts, int* longind) {
  return scan_options(argc, (char**)argv, optstring, longopts, longind, 1, 0);
}
