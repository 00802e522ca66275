// copy_bytes (mpi/util/copy_bytes.h) against memcpy's answer: every size around its 64-byte
// blocks and its 2 KiB threshold, at destinations just past the source modulo 4 KiB (where it
// copies backwards by blocks) and elsewhere (where it is memcpy), and no byte outside the
// destination written.
#include "util/copy_bytes.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace {

constexpr std::size_t kPage = 4096;

TEST(CopyBytes, CopiesEverySizeAtEveryDistance) {
  const std::size_t sizes[] = {0, 1, 63, 64, 65, 2047, 2048, 2049, 4096 + 17, 65536, 65536 + 5};
  const std::size_t distances[] = {0, 1, 8, 16, 31, 32, 63, 64, 100, 4080};
  std::vector<unsigned char> source(70000 + kPage);
  for (std::size_t i = 0; i < source.size(); ++i) {
    source[i] = static_cast<unsigned char>((i * 131 + 7) % 251);
  }
  // Page-aligned starts, so that the distance modulo 4 KiB is the one asked.
  const unsigned char* src =
      source.data() + (kPage - reinterpret_cast<std::uintptr_t>(source.data()) % kPage);
  for (const std::size_t distance : distances) {
    for (const std::size_t bytes : sizes) {
      std::vector<unsigned char> target(bytes + 3 * kPage, 0xee);
      unsigned char* base =
          target.data() + (kPage - reinterpret_cast<std::uintptr_t>(target.data()) % kPage);
      unsigned char* dst = base + distance;
      weft::mpi::copy_bytes(dst, src, bytes);
      for (std::size_t i = 0; i < bytes; ++i) {
        ASSERT_EQ(dst[i], src[i]) << "byte " << i << " of " << bytes << ", distance " << distance;
      }
      for (unsigned char* p = target.data(); p < dst; ++p) ASSERT_EQ(*p, 0xee);
      for (unsigned char* p = dst + bytes; p < target.data() + target.size(); ++p) {
        ASSERT_EQ(*p, 0xee) << "written past the end, " << bytes << " bytes, distance " << distance;
      }
    }
  }
}

}  // namespace
