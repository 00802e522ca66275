/* OMP_PLACES as an explicit list, with intervals and exclusions, or an abstract name with a count
 * (omp.place_lists.*): the places the API reports, as processor lists, must be the registration's
 * OMP_TEST_PLACES ("{0,1},{2,3}"), the listed places mapped onto the rank's cores; and a team
 * bound close with a thread per place puts one thread on each. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "omp_check.h"

enum { kMaxPlaces = 64, kMaxText = 1024 };

/* The places as "{a,b},{c}". */
static void describe_places(char* text, size_t size) {
  size_t used = 0;
  text[0] = '\0';
  for (int place = 0; place < omp_get_num_places(); ++place) {
    int ids[kMaxPlaces];
    const int count = omp_get_place_num_procs(place);
    if (count > kMaxPlaces) return;
    omp_get_place_proc_ids(place, ids);
    used += (size_t)snprintf(text + used, size - used, "%s{", place == 0 ? "" : ",");
    for (int i = 0; i < count && used < size; ++i) {
      used += (size_t)snprintf(text + used, size - used, "%s%d", i == 0 ? "" : ",", ids[i]);
    }
    if (used < size) used += (size_t)snprintf(text + used, size - used, "}");
  }
}

int main(void) {
  const char* expected = getenv("OMP_TEST_PLACES");
  if (expected == NULL) {
    fprintf(stderr, "omp_place_lists: set OMP_TEST_PLACES to the places expected\n");
    return 1;
  }
  char got[kMaxText];
  describe_places(got, sizeof got);
  if (strcmp(got, expected) != 0) {
    fprintf(stderr, "places: got %s, expected %s\n", got, expected);
    check_equal(0, 1, "the places of OMP_PLACES", __LINE__);
  }
  const int places = omp_get_num_places();
  int seen[kMaxPlaces] = {0};
#pragma omp parallel num_threads(places) proc_bind(close)
  {
    const int place = omp_get_place_num();
    if (place >= 0 && place < kMaxPlaces) __atomic_add_fetch(&seen[place], 1, __ATOMIC_RELAXED);
  }
  for (int place = 0; place < places && place < kMaxPlaces; ++place) {
    check_equal(seen[place], 1, "threads of a close team on the place", __LINE__);
  }
  return omp_check_status("omp_place_lists");
}
