#pragma once
// TUNEPROF_SANITIZED_ALLOCATOR is defined where a sanitizer's runtime replaces malloc and operator new to
// check every allocation (GCC says so with __SANITIZE_*__, clang with __has_feature): there the
// executables keep its operator new, and glibc's own arenas (malloc_trim) may never have been set up.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TUNEPROF_SANITIZED_ALLOCATOR 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define TUNEPROF_SANITIZED_ALLOCATOR 1
#endif
#endif
