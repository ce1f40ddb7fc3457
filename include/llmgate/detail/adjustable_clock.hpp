// adjustable_clock: a clock's time plus an offset that only moves forward,
// so that a test moves time (a cache entry's lifetime, a budget's period)
// instead of sleeping; or a clock that stands still until moved, for a test
// that checks figures measured in time exactly. Copies share the offset; a
// default one is the clock itself.
#pragma once

#include <atomic>  // std::atomic
#include <memory>  // std::shared_ptr, std::make_shared

#include "llmgate/error.hpp"    // llmgate::error
#include "llmgate/version.hpp"  // the inline versioned namespace

namespace llmgate::inline v0::detail {

template <class Base>
struct adjustable_clock {
  using duration = typename Base::duration;
  using rep = typename duration::rep;
  using period = typename duration::period;
  using time_point = typename Base::time_point;
  static constexpr bool is_steady = Base::is_steady;

  /// A clock a test can move (advance); a default one cannot.
  static adjustable_clock adjustable() { return adjustable_clock{std::make_shared<std::atomic<rep>>(0)}; }
  /// A clock that reads `t` until it is moved (advance).
  static adjustable_clock stopped_at(time_point t) {
    return adjustable_clock{std::make_shared<std::atomic<rep>>(t.time_since_epoch().count()), true};
  }

  time_point now() const noexcept {
    if (!offset) return Base::now();
    const duration moved(offset->load(std::memory_order_relaxed));
    return stopped ? time_point(moved) : Base::now() + moved;
  }
  /// Moves an adjustable clock forward by `by`.
  void advance(duration by) const {
    if (!offset) throw error(errc::invalid_request, "only an adjustable() clock can be moved");
    offset->fetch_add(by.count(), std::memory_order_relaxed);
  }

  std::shared_ptr<std::atomic<rep>> offset = {};
  bool stopped = false;  ///< the offset is the time itself
};

}  // namespace llmgate::inline v0::detail
