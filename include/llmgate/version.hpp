// llmgate's version, as macros for the preprocessor and as the inline
// namespace that keeps two versions from mixing in one program.
#pragma once

#define LLMGATE_VERSION_MAJOR 0
#define LLMGATE_VERSION_MINOR 1
#define LLMGATE_VERSION_PATCH 0
#define LLMGATE_VERSION                                                       \
  (LLMGATE_VERSION_MAJOR * 10000 + LLMGATE_VERSION_MINOR * 100 +             \
   LLMGATE_VERSION_PATCH)

namespace llmgate::inline v0 {

/// The version this header belongs to, e.g. for logging at start-up.
inline constexpr int version_major = LLMGATE_VERSION_MAJOR;
inline constexpr int version_minor = LLMGATE_VERSION_MINOR;
inline constexpr int version_patch = LLMGATE_VERSION_PATCH;

}  // namespace llmgate::inline v0
