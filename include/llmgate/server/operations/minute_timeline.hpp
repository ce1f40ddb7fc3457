// minute_timeline: the last hour of chat requests, minute by minute: the
// ones a cache answered (exact, semantic or coalesced), those a model
// answered, those that failed, and the money spent and saved, for the
// dashboard's chart. Sixty buckets in a ring, each taken over when its
// minute comes round again. Not locked: gateway_metrics reads and writes
// it under its own mutex.
#pragma once

#include <array>    // std::array
#include <chrono>   // std::chrono::system_clock
#include <cstddef>  // std::size_t
#include <cstdint>  // std::int64_t, std::uint64_t

#include <boost/json/array.hpp>  // boost::json::array

#include "llmgate/pipeline/request_context.hpp"  // cache_outcome
#include "llmgate/server/request_outcome.hpp"    // request_outcome

namespace llmgate::inline v0 {

class minute_timeline {
 public:
  static constexpr std::size_t minutes = 60;

  /// Counts a chat request's outcome in the minute `minute` (Unix minutes).
  void record(const request_outcome& r, std::int64_t minute = now()) {
    bucket& b = ring_[static_cast<std::size_t>(minute) % minutes];
    if (b.minute != minute) b = bucket{.minute = minute};
    if (r.status >= 400) ++b.errors;
    else if (r.cache == cache_outcome::miss) ++b.misses;
    else if (r.cache) ++b.hits;
    b.cost_usd += r.cost_usd;
    b.saved_usd += r.saved_usd;
  }

  /// The sixty minutes up to `minute`, oldest first, each
  /// {"minute": Unix seconds of its start, "hits", "misses", "errors",
  /// "cost_usd", "saved_usd"}; a minute with no request holds zeros.
  boost::json::array json(std::int64_t minute = now()) const {
    boost::json::array out;
    out.reserve(minutes);
    for (std::int64_t m = minute - static_cast<std::int64_t>(minutes) + 1; m <= minute; ++m) {
      const bucket& stored = ring_[static_cast<std::size_t>(m) % minutes];
      const bucket b = stored.minute == m ? stored : bucket{.minute = m};
      out.push_back({{"minute", m * 60}, {"hits", b.hits}, {"misses", b.misses}, {"errors", b.errors},
                     {"cost_usd", b.cost_usd}, {"saved_usd", b.saved_usd}});
    }
    return out;
  }

  /// This minute, in Unix minutes.
  static std::int64_t now() {
    return std::chrono::duration_cast<std::chrono::minutes>(std::chrono::system_clock::now().time_since_epoch()).count();
  }

 private:
  struct bucket {
    std::int64_t minute = -1;
    std::uint64_t hits = 0, misses = 0, errors = 0;
    double cost_usd = 0, saved_usd = 0;
  };

  std::array<bucket, minutes> ring_{};
};

}  // namespace llmgate::inline v0
