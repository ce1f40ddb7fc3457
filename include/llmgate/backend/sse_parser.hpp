// sse_parser: Server-Sent Events (the WHATWG event-stream format) read
// incrementally, as OpenAI and Anthropic stream their answers. Bytes may be
// split anywhere, even inside a "\r\n"; an event is complete at its blank
// line. Comments (": keep-alive") are skipped; "retry" is ignored because
// llmgate never reconnects a stream (the caller has seen its output).
#pragma once

#include <cstddef>      // std::size_t
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <vector>       // std::vector

#include "llmgate/backend/detail/line_splitter.hpp"
#include "llmgate/error.hpp"

namespace llmgate::inline v0 {

struct sse_event {
  std::string event;  ///< the "event:" field; "" where absent (the spec's "message")
  std::string data;   ///< "data:" lines joined by "\n"
  std::string id;     ///< the last "id:" seen, which persists across events
};

class sse_parser {
 public:
  /// An event (its data plus its current line) above max_event_bytes is a
  /// protocol error: llmgate::error(errc::upstream_protocol_error).
  explicit sse_parser(std::size_t max_event_bytes = std::size_t{8} << 20)
      : max_event_bytes_(max_event_bytes), lines_(max_event_bytes) {}

  /// Appends to `events` every event that `bytes` completes.
  void feed(std::string_view bytes, std::vector<sse_event>& events) {
    lines_.feed(bytes, [&](std::string_view line) { on_line(line, events); });
  }

  /// Whether bytes of an unfinished event are waiting: at the end of a
  /// stream, a sign that it was cut short.
  bool has_partial_event() const noexcept {
    return lines_.has_partial_line() || !current_.data.empty() || !current_.event.empty();
  }

 private:
  void on_line(std::string_view line, std::vector<sse_event>& events) {
    if (line.empty()) return dispatch(events);
    if (line.front() == ':') return;  // a comment
    const std::size_t colon = line.find(':');
    const std::string_view field = line.substr(0, colon);
    std::string_view value = colon == std::string_view::npos ? "" : line.substr(colon + 1);
    if (value.starts_with(' ')) value.remove_prefix(1);
    if (field == "data") {
      if (current_.data.size() + value.size() + 1 > max_event_bytes_)
        throw error(errc::upstream_protocol_error,
                    "SSE event larger than " + std::to_string(max_event_bytes_) + " bytes");
      current_.data.append(value);
      current_.data.push_back('\n');
      has_data_ = true;
    } else if (field == "event") {
      current_.event.assign(value);
    } else if (field == "id" && value.find('\0') == std::string_view::npos) {
      current_.id.assign(value);
    }
  }

  // As the spec says: an event without data is not dispatched, and the
  // data's last "\n" is dropped.
  void dispatch(std::vector<sse_event>& events) {
    if (has_data_) {
      current_.data.pop_back();
      events.push_back(current_);
    }
    current_.data.clear();
    current_.event.clear();
    has_data_ = false;
  }

  std::size_t max_event_bytes_;
  detail::line_splitter lines_;
  sse_event current_;
  bool has_data_ = false;  ///< "data:" with an empty value still makes an event
};

}  // namespace llmgate::inline v0
