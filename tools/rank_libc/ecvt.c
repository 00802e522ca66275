/* ecvt and fcvt with their static buffers per rank, through glibc's ecvt_r and fcvt_r. */
#define _GNU_SOURCE
#include <float.h>
#include <stdlib.h>

/* glibc's sizes: the digits of a double and a sign, point and terminator; fcvt also the integer
 * part of the largest double. */
enum { kDigits = DBL_DIG + 2 + 3, kFixedDigits = DBL_MAX_10_EXP + kDigits };

static char exponent_digits[kDigits];
static char fixed_digits[kFixedDigits];

__attribute__((weak)) char* ecvt(double value, int ndigit, int* decpt, int* sign) {
  ecvt_r(value, ndigit, decpt, sign, exponent_digits, sizeof exponent_digits);
  return exponent_digits;
}

__attribute__((weak)) char* fcvt(double value, int ndigit, int* decpt, int* sign) {
  fcvt_r(value, ndigit, decpt, sign, fixed_digits, sizeof fixed_digits);
  return fixed_digits;
}
