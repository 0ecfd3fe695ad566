// The one assertion macro of the C++ test programs: counts failures instead of aborting, so
// one run reports every failed check; main() returns non-zero when `failures` is positive
// (run_tests: a program's tests in order, then that exit code).
#pragma once

#include <cstdio>
#include <initializer_list>

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

namespace {

/// Runs `tests` in order, then says so if every check passed: main()'s exit code, 0 or 1.
inline int run_tests(const char* what, std::initializer_list<void (*)()> tests) {
    for (void (*test)() : tests) test();
    if (failures == 0) std::printf("all C++ %s tests passed\n", what);
    return failures == 0 ? 0 : 1;
}

}  // namespace
