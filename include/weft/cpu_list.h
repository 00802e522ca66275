// Lists of processing units as Linux writes them (taskset -c, /sys/.../cpulist): "0-3,8,10-11",
// operating-system indices.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace weft {

// The indices of `text`, sorted, without duplicates. Throws weft::Error quoting the text and the
// part that is not an index or a range "a-b" with a <= b.
std::vector<int> parse_cpu_list(std::string_view text);

// "0-3,8,10-11" for {0, 1, 2, 3, 8, 10, 11}; `sorted` must be sorted and without duplicates.
std::string format_cpu_list(const std::vector<int>& sorted);

}  // namespace weft
