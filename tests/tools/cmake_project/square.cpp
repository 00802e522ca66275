// A C++ shared library of the project: built by weftcxx -shared, linked into the rank image.
#include <string>

extern "C" int square(int value) {
  return std::stoi(std::to_string(value * value));
}
