// latency_histogram: counts durations in log-linear buckets (16 per power of
// two, so a percentile is off by at most 1/16), lock-free for many writers.
#pragma once

#include <array>    // std::array
#include <atomic>   // std::atomic
#include <bit>      // std::bit_width
#include <chrono>   // std::chrono::nanoseconds
#include <cstdint>  // std::uint64_t

#include "llmgate/store/snapshot_file.hpp"

namespace llmgate::inline v0 {

class latency_histogram {
 public:
  void record(std::chrono::nanoseconds duration) noexcept {
    const auto ns = static_cast<std::uint64_t>(duration.count() < 0 ? 0 : duration.count());
    counts_[bucket_of(ns)].fetch_add(1, std::memory_order_relaxed);
  }

  /// The duration below which a share `quantile` (0..1) of the recorded
  /// ones fall (the upper edge of that bucket); zero when none are recorded.
  std::chrono::nanoseconds percentile(double quantile) const noexcept {
    std::uint64_t total = 0;
    for (const auto& c : counts_) total += c.load(std::memory_order_relaxed);
    if (total == 0) return {};
    const auto wanted = static_cast<std::uint64_t>(quantile * static_cast<double>(total - 1)) + 1;
    std::uint64_t seen = 0;
    for (std::size_t b = 0; b < buckets; ++b) {
      seen += counts_[b].load(std::memory_order_relaxed);
      if (seen >= wanted) return std::chrono::nanoseconds(upper_edge(b));
    }
    return std::chrono::nanoseconds(upper_edge(buckets - 1));
  }

  std::uint64_t count() const noexcept {
    std::uint64_t total = 0;
    for (const auto& c : counts_) total += c.load(std::memory_order_relaxed);
    return total;
  }

  /// Appends the counts to a snapshot (e.g. a cache's statistics).
  void save_to(store::snapshot_writer& out) const {
    for (const auto& c : counts_) out.write(c.load(std::memory_order_relaxed));
  }

  /// Replaces the counts with the ones save_to() wrote.
  void restore_from(store::snapshot_reader& in) {
    for (auto& c : counts_) c.store(in.read<std::uint64_t>(), std::memory_order_relaxed);
  }

 private:
  static constexpr unsigned sub_bits = 4;  // 16 buckets per power of two
  static constexpr std::size_t buckets = (64 - sub_bits + 1) << sub_bits;

  static std::size_t bucket_of(std::uint64_t ns) noexcept {
    if (ns < (1u << sub_bits)) return ns;
    const unsigned shift = static_cast<unsigned>(std::bit_width(ns)) - 1 - sub_bits;
    return ((shift + 1) << sub_bits) + ((ns >> shift) & ((1u << sub_bits) - 1));
  }
  static std::uint64_t upper_edge(std::size_t bucket) noexcept {
    if (bucket < (1u << sub_bits)) return bucket;
    const unsigned shift = static_cast<unsigned>(bucket >> sub_bits) - 1;
    const std::uint64_t mantissa = (bucket & ((1u << sub_bits) - 1)) | (1u << sub_bits);
    return ((mantissa + 1) << shift) - 1;
  }

  std::array<std::atomic<std::uint64_t>, buckets> counts_{};
};

}  // namespace llmgate::inline v0
