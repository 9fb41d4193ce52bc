// A minimal check harness for the host-only tests: each failed CHECK prints its line and the
// program exits non-zero at the end (main returns checkFailures()).
#pragma once
#include <cstdio>

inline int& checkFailures() {
  static int n = 0;
  return n;
}

#define CHECK(cond, what)                                                         \
  do {                                                                            \
    if (!(cond)) {                                                                \
      std::printf("FAIL %s:%d: %s (%s)\n", __FILE__, __LINE__, what, #cond);     \
      ++checkFailures();                                                          \
    }                                                                             \
  } while (0)
