/* gmtime, localtime, asctime and ctime with their static results per rank. As in glibc, gmtime
 * and localtime share one struct tm, ctime is asctime(localtime(t)), and localtime reads TZ again
 * at every call. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <time.h>

static struct tm broken_down;
/* glibc's size: room for any int fields, beyond the 26 bytes of asctime_r. */
static char text[3 + 1 + 3 + 1 + 20 + 1 + 20 + 1 + 20 + 1 + 20 + 1 + 20 + 1 + 1];

__attribute__((weak)) struct tm* gmtime(const time_t* t) {
  return gmtime_r(t, &broken_down);
}

__attribute__((weak)) struct tm* localtime(const time_t* t) {
  tzset();
  return localtime_r(t, &broken_down);
}

/* asctime's format with the C locale's names (POSIX fixes it); "???" for a field out of range. */
__attribute__((weak)) char* asctime(const struct tm* tm) {
  static const char days[7][4] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static const char months[12][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                     "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  if (tm == NULL) {
    errno = EINVAL;
    return NULL;
  }
  if (tm->tm_year > INT_MAX - 1900) {
    errno = EOVERFLOW;
    return NULL;
  }
  const int written =
      snprintf(text, sizeof text, "%.3s %.3s%3d %.2d:%.2d:%.2d %d\n",
               tm->tm_wday < 0 || tm->tm_wday >= 7 ? "???" : days[tm->tm_wday],
               tm->tm_mon < 0 || tm->tm_mon >= 12 ? "???" : months[tm->tm_mon], tm->tm_mday,
               tm->tm_hour, tm->tm_min, tm->tm_sec, 1900 + tm->tm_year);
  if (written < 0) return NULL;
  if ((size_t)written >= sizeof text) {
    errno = EOVERFLOW;
    return NULL;
  }
  return text;
}

__attribute__((weak)) char* ctime(const time_t* t) {
  const struct tm* tm = localtime(t);
  return tm != NULL ? asctime(tm) : NULL;
}
