#pragma once
// Whether this build replaces operator new (operator_new.cc): not where a sanitizer's runtime does, to
// check every allocation itself (GCC says so with __SANITIZE_*__, clang with __has_feature).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TUNEPROF_SANITIZED_ALLOCATOR 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define TUNEPROF_SANITIZED_ALLOCATOR 1
#endif
#endif

namespace tuneprof::cli {

#ifdef TUNEPROF_SANITIZED_ALLOCATOR
inline constexpr bool kOperatorNewReplaced = false;
#else
inline constexpr bool kOperatorNewReplaced = true;
#endif

}  // namespace tuneprof::cli
