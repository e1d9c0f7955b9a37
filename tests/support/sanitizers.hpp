#pragma once
// INTERPROBE_TESTS_INSTRUMENTED: the test is built under AddressSanitizer or ThreadSanitizer (time
// bounds scale). GCC says so with __SANITIZE_ADDRESS__; clang (before 17) only through __has_feature.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define INTERPROBE_TESTS_INSTRUMENTED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define INTERPROBE_TESTS_INSTRUMENTED 1
#endif
#endif
