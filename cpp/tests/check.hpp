// The one assertion macro of the C++ test programs: counts failures instead of aborting, so
// one run reports every failed check; main() returns non-zero when `failures` is positive.
#pragma once

#include <cstdio>

namespace {

int failures = 0;

}  // namespace

#define CHECK(cond)                                                              \
    do {                                                                         \
        if (!(cond)) {                                                           \
            std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            ++failures;                                                          \
        }                                                                        \
    } while (0)
