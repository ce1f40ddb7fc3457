// response_ids: the ids of the gateway's chat responses,
// chatcmpl-llmgate-<this run's random prefix>-<answer number> (msg_... for
// an answer in Anthropic's form, resp_... for one of OpenAI's Responses
// API), and the answer number back from an id (/v1/feedback names an
// answer by its id).
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
    message_start_ = std::string("msg_llmgate-") + text + "-";
    response_start_ = std::string("resp_llmgate-") + text + "-";
  }

  /// The next answer's number (from 1).
  std::uint64_t next() noexcept { return ++answers_; }

  std::string id(std::uint64_t answer_number) const { return start_ + std::to_string(answer_number); }
  /// The id of an answer given as an Anthropic Message.
  std::string message_id(std::uint64_t answer_number) const { return message_start_ + std::to_string(answer_number); }
  /// The id of an answer given as a Responses API response.
  std::string response_id(std::uint64_t answer_number) const { return response_start_ + std::to_string(answer_number); }

  /// The answer number of one of this run's ids; 0 for another id.
  std::uint64_t number_of(std::string_view id) const {
    if (id.starts_with(start_)) id.remove_prefix(start_.size());
    else if (id.starts_with(message_start_)) id.remove_prefix(message_start_.size());
    else if (id.starts_with(response_start_)) id.remove_prefix(response_start_.size());
    else return 0;
    std::uint64_t number = 0;
    const auto [end, ec] = std::from_chars(id.data(), id.data() + id.size(), number);
    return ec == std::errc() && end == id.data() + id.size() ? number : 0;
  }

 private:
  std::string start_, message_start_, response_start_;
  std::atomic<std::uint64_t> answers_{0};
};

}  // namespace llmgate::inline v0
