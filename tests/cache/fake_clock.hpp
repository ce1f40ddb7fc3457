// A clock the test moves by hand. It is a fake on purpose: waiting for real
// time to pass would make the lifetime tests slow, and flaky on a loaded
// machine. Copies share one time, as every cache shard holds its own copy of
// the policy and so of the clock; the time is atomic so that the concurrency
// test may move it while other threads read it.
#pragma once

#include <atomic>   // std::atomic
#include <chrono>   // std::chrono::nanoseconds, std::chrono::time_point
#include <cstdint>  // std::int64_t
#include <memory>   // std::shared_ptr

namespace llmgate::test {

class fake_clock {
 public:
  using rep = std::int64_t;
  using period = std::nano;
  using duration = std::chrono::nanoseconds;
  using time_point = std::chrono::time_point<fake_clock>;
  static constexpr bool is_steady = true;

  time_point now() const { return time_point(duration(ticks_->load())); }
  void advance(duration by) const { ticks_->fetch_add(by.count()); }

 private:
  std::shared_ptr<std::atomic<rep>> ticks_ = std::make_shared<std::atomic<rep>>(0);
};

}  // namespace llmgate::test
