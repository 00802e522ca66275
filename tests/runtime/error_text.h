// What runtime tests check of a refused input: the text of the weft::Error it throws.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "weft/error.h"

namespace weft::testing {

// The message of the weft::Error that call() throws, or "" when it throws none.
std::string error_of(auto&& call) {
  try {
    call();
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

inline void expect_contains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "'" << part << "' is not in: " << text;
}

}  // namespace weft::testing
