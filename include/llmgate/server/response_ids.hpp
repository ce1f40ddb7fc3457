// response_ids: the ids of the gateway's chat responses,
// chatcmpl-llmgate-<this run's random prefix>-<answer number>, and the
// answer number back from an id (/v1/feedback names an answer by its id).
#pragma once

#include <atomic>       // std::atomic
#include <charconv>     // std::from_chars
#include <cstdint>      // std::uint64_t
#include <cstdio>       // std::snprintf
#include <random>       // std::random_device
#include <string>       // std::string
#include <string_view>  // std::string_view

namespace llmgate::inline v0 {

class response_ids {
 public:
  response_ids() {
    std::random_device entropy;
    char text[17];
    std::snprintf(text, sizeof text, "%016llx",
                  static_cast<unsigned long long>(static_cast<std::uint64_t>(entropy()) << 32 | entropy()));
    start_ = std::string("chatcmpl-llmgate-") + text + "-";
  }

  /// The next answer's number (from 1).
  std::uint64_t next() noexcept { return ++answers_; }

  std::string id(std::uint64_t answer_number) const { return start_ + std::to_string(answer_number); }

  /// The answer number of one of this run's ids; 0 for another id.
  std::uint64_t number_of(std::string_view id) const {
    if (!id.starts_with(start_)) return 0;
    id.remove_prefix(start_.size());
    std::uint64_t number = 0;
    const auto [end, ec] = std::from_chars(id.data(), id.data() + id.size(), number);
    return ec == std::errc() && end == id.data() + id.size() ? number : 0;
  }

 private:
  std::string start_;
  std::atomic<std::uint64_t> answers_{0};
};

}  // namespace llmgate::inline v0
