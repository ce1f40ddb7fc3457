// chat_response_reader: a chat.completion answer read straight from its
// text, with no JSON tree: Boost.JSON's tokenizer (basic_parser) hands each
// key and value to a handler that keeps the fields parse_chat_response reads
// and skips the rest. It covers the answer every OpenAI-compatible server
// sends for a plain completion; whatever it does not cover (tool calls,
// content given as parts, llama.cpp's timings, a duplicated key, a field of
// an unexpected type, text that is not JSON) it declines, and the caller
// reads the answer as a tree with parse_chat_response, which then gives the
// result or the error it always gave. So the reader never decides an
// outcome parse_chat_response would decide differently.
//
// Why: the adapter reads one answer per request, and building the tree,
// then copying strings out of it, cost more than the rest of the decoding
// (scripts/bench backend).
#pragma once

#include <cstddef>      // std::size_t
#include <cstdint>      // std::int64_t, std::uint64_t, std::uint32_t
#include <string>       // std::string
#include <string_view>  // std::string_view

#include <boost/json/array.hpp>              // boost::json::array::max_size
#include <boost/json/basic_parser_impl.hpp>  // boost::json::basic_parser and its definitions
#include <boost/json/error.hpp>              // boost::json::error
#include <boost/json/object.hpp>             // boost::json::object::max_size
#include <boost/json/parse_options.hpp>      // boost::json::parse_options, as boost::json::parse takes them
#include <boost/json/string.hpp>             // boost::json::string::max_size

#include "llmgate/chat/chat.hpp"  // chat_response

namespace llmgate::inline v0::detail {

class chat_response_handler {
 public:
  // As Boost.JSON's own tree builder (detail/handler.hpp), so that the same
  // texts are refused.
  static constexpr std::size_t max_object_size = boost::json::object::max_size();
  static constexpr std::size_t max_array_size = boost::json::array::max_size();
  static constexpr std::size_t max_key_size = boost::json::string::max_size();
  static constexpr std::size_t max_string_size = boost::json::string::max_size();

  explicit chat_response_handler(chat_response& out) noexcept : out_(out) {}

  /// Whether the whole document was read and the answer is complete.
  bool finished() const noexcept { return finished_; }

  using error_code = boost::json::error_code;
  using string_view = boost::json::string_view;

  bool on_document_begin(error_code&) { return true; }
  bool on_document_end(error_code&) { return true; }

  bool on_object_begin(error_code& ec) {
    if (skip_) return ++skip_, true;
    if (depth_ == 0) return push(frame::top), true;
    switch (top()) {
      case frame::choices:
        if (choices_seen_++ == 0) return push(frame::choice), true;
        return ++skip_, true;
      case frame::tool_calls: return decline(ec);
      default: break;
    }
    switch (slot_) {
      case slot::message: return push(frame::message), true;
      case slot::usage: return push(frame::usage), true;
      case slot::details: return push(frame::details), true;
      case slot::skip:
      case slot::created: return ++skip_, true;
      default: return decline(ec);
    }
  }

  bool on_object_end(std::size_t, error_code&) {
    if (skip_) return --skip_, true;
    if (top() == frame::top) finished_ = choice_read_;
    if (top() == frame::choice) choice_read_ = true;
    --depth_;
    return true;
  }

  bool on_array_begin(error_code& ec) {
    if (skip_) return ++skip_, true;
    if (depth_ == 0) return decline(ec);
    switch (top()) {
      case frame::choices:
        if (choices_seen_++ == 0) return decline(ec);  // a first choice that is not an object
        return ++skip_, true;
      case frame::tool_calls: return decline(ec);
      default: break;
    }
    switch (slot_) {
      case slot::choices: return push(frame::choices), true;
      case slot::tool_calls: return push(frame::tool_calls), true;
      case slot::skip:
      case slot::created: return ++skip_, true;
      default: return decline(ec);
    }
  }

  bool on_array_end(std::size_t, error_code& ec) {
    if (skip_) return --skip_, true;
    if (top() == frame::choices && choices_seen_ == 0) return decline(ec);  // no choice
    --depth_;
    return true;
  }

  bool on_key_part(string_view s, std::size_t, error_code&) {
    if (!skip_) key_.append(s.data(), s.size());
    return true;
  }

  bool on_key(string_view s, std::size_t, error_code& ec) {
    if (skip_) return true;
    std::string_view key(s.data(), s.size());
    if (!key_.empty()) {
      key_.append(s.data(), s.size());
      key = key_;
    }
    const bool known = name(key);
    key_.clear();
    if (!known) return true;
    // A key twice: parse_chat_response decides which one counts.
    const std::uint32_t bit = std::uint32_t{1} << static_cast<unsigned>(slot_);
    if (seen_[depth_ - 1] & bit) return decline(ec);
    seen_[depth_ - 1] |= bit;
    return true;
  }

  bool on_string_part(string_view s, std::size_t, error_code& ec) { return text(s, ec); }
  bool on_string(string_view s, std::size_t, error_code& ec) { return text(s, ec); }
  bool on_number_part(string_view, error_code&) { return true; }

  bool on_int64(std::int64_t i, string_view, error_code& ec) {
    if (const auto verdict = scalar(); verdict != take) return verdict == skipped || decline(ec);
    if (slot_ == slot::created) return out_.created = i, true;
    if (is_count() && i >= 0) return count(static_cast<std::uint64_t>(i)), true;
    return decline(ec);
  }

  bool on_uint64(std::uint64_t u, string_view, error_code& ec) {
    if (const auto verdict = scalar(); verdict != take) return verdict == skipped || decline(ec);
    if (slot_ == slot::created) return true;  // not an int64: not read
    if (is_count()) return count(u), true;
    return decline(ec);
  }

  bool on_double(double d, string_view, error_code& ec) {
    if (const auto verdict = scalar(); verdict != take) return verdict == skipped || decline(ec);
    if (slot_ == slot::created) return true;  // not an int64: not read
    // count_field's rule: a whole, non-negative number within 9e15.
    if (is_count() && d >= 0 && d <= 9e15 && d == static_cast<double>(static_cast<std::uint64_t>(d)))
      return count(static_cast<std::uint64_t>(d)), true;
    return decline(ec);
  }

  bool on_bool(bool, error_code& ec) {
    if (const auto verdict = scalar(); verdict != take) return verdict == skipped || decline(ec);
    return slot_ == slot::created || decline(ec);
  }

  bool on_null(error_code& ec) {
    if (const auto verdict = scalar(); verdict != take) return verdict == skipped || decline(ec);
    switch (slot_) {
      case slot::choices: return decline(ec);  // no choice: parse_chat_response's error
      default: return true;                    // absent for every other field read
    }
  }

  bool on_comment_part(string_view, error_code&) { return true; }
  bool on_comment(string_view, error_code&) { return true; }

 private:
  enum class frame : unsigned char { top, choices, choice, message, tool_calls, usage, details };
  enum class slot : unsigned char {
    skip, id, model, created, choices, finish_reason, message, content, tool_calls, timings,
    usage, prompt_tokens, completion_tokens, details, cached_tokens, cache_write_tokens
  };
  enum verdict { take, skipped, refused };

  frame top() const noexcept { return frames_[depth_ - 1]; }

  void push(frame f) {
    frames_[depth_] = f;
    seen_[depth_] = 0;
    ++depth_;
  }

  bool decline(error_code& ec) {
    ec = boost::json::error::exception;  // any error: the caller falls back
    return false;
  }

  // Sets slot_ for `key` in the current object; false for a key not read.
  // The length picks the candidates: most keys an answer has are compared
  // with one name or none.
  bool name(std::string_view key) {
    slot_ = slot::skip;
    const auto is = [&](std::string_view name, slot named) {
      if (key == name) slot_ = named;
    };
    switch (top()) {
      case frame::top:
        switch (key.size()) {
          case 2: is("id", slot::id); break;
          case 5: is("model", slot::model); is("usage", slot::usage); break;
          case 7:
            is("created", slot::created); is("choices", slot::choices);
            is("timings", slot::timings);  // llama.cpp's cache_n: the tree reads it
            break;
          default: break;
        }
        break;
      case frame::choice:
        switch (key.size()) {
          case 7: is("message", slot::message); break;
          case 13: is("finish_reason", slot::finish_reason); break;
          default: break;
        }
        break;
      case frame::message:
        switch (key.size()) {
          case 7: is("content", slot::content); break;
          case 10: is("tool_calls", slot::tool_calls); break;
          default: break;
        }
        break;
      case frame::usage:
        switch (key.size()) {
          case 13: is("prompt_tokens", slot::prompt_tokens); break;
          case 17: is("completion_tokens", slot::completion_tokens); break;
          case 21: is("prompt_tokens_details", slot::details); break;
          default: break;
        }
        break;
      case frame::details:
        switch (key.size()) {
          case 13: is("cached_tokens", slot::cached_tokens); break;
          case 18: is("cache_write_tokens", slot::cache_write_tokens); break;
          default: break;
        }
        break;
      default: break;
    }
    return slot_ != slot::skip;
  }

  // Where a scalar goes: skipped (inside a skipped value, a later choice,
  // a key not read), refused (a first choice or tool call that is a
  // scalar, llama.cpp's timings), or taken by slot_.
  verdict scalar() {
    if (skip_) return skipped;
    if (depth_ == 0) return refused;  // the answer is not an object
    switch (top()) {
      case frame::choices: return choices_seen_++ == 0 ? refused : skipped;
      case frame::tool_calls: return refused;
      default: break;
    }
    if (slot_ == slot::skip) return skipped;
    if (slot_ == slot::timings) return refused;
    return take;
  }

  bool is_count() const noexcept {
    return slot_ == slot::prompt_tokens || slot_ == slot::completion_tokens ||
           slot_ == slot::cached_tokens || slot_ == slot::cache_write_tokens;
  }

  void count(std::uint64_t n) {
    switch (slot_) {
      case slot::prompt_tokens: out_.usage.prompt_tokens = n; break;
      case slot::completion_tokens: out_.usage.completion_tokens = n; break;
      case slot::cached_tokens: out_.usage.cached_prompt_tokens = n; break;
      case slot::cache_write_tokens: out_.usage.cache_write_tokens = n; break;
      default: break;
    }
  }

  // A string value, whole or in parts.
  bool text(string_view s, error_code& ec) {
    if (skip_) return true;
    if (depth_ == 0) return decline(ec);
    // A string as a later choice is skipped; as the first, refused.
    if (top() == frame::choices) return choices_seen_ != 0 || decline(ec);
    if (top() == frame::tool_calls) return decline(ec);
    std::string* target = nullptr;
    switch (slot_) {
      case slot::skip: return true;
      case slot::id: target = &out_.id; break;
      case slot::model: target = &out_.model; break;
      case slot::finish_reason: target = &out_.finish_reason; break;
      case slot::content: target = &out_.content; break;
      default: return decline(ec);  // a string where a number, object or array is read
    }
    target->append(s.data(), s.size());
    return true;
  }

 private:
  chat_response& out_;
  std::string key_;               // a key given in parts
  frame frames_[8] = {};          // the objects and arrays read, outermost first
  std::uint32_t seen_[8] = {};    // per object: the keys read so far, by slot
  std::size_t depth_ = 0;         // how many of frames_ are open
  std::size_t skip_ = 0;          // depth inside a value skipped whole
  std::size_t choices_seen_ = 0;  // elements of "choices" so far
  slot slot_ = slot::skip;        // what the value after the last key is
  bool choice_read_ = false;      // choices[0] was an object, read to its end
  bool finished_ = false;
};

/// Reads `text`, a chat.completion answer, into `out` (default-constructed)
/// when it has the common form; false when the caller must read it with
/// parse_chat_response of the parsed tree instead (`out` is then unspecified).
inline bool read_chat_response(std::string_view text, chat_response& out) {
  boost::json::basic_parser<chat_response_handler> parser(boost::json::parse_options{}, out);
  boost::json::error_code ec;
  const std::size_t used = parser.write_some(false, text.data(), text.size(), ec);
  return !ec && used == text.size() && parser.handler().finished();
}

}  // namespace llmgate::inline v0::detail
