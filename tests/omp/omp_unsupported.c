/* A feature weft's OpenMP runtime does not provide (target offload) must end the program with a
 * message naming it, never run silently wrong. */
int main(void) {
  int x = 0;
#pragma omp target map(tofrom : x)
  x = 1;
  return x - 1;
}
