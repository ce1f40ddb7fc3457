// trace_context: the W3C Trace Context (https://www.w3.org/TR/trace-context/)
// of a request the gateway answers, so that one request can be followed
// from the client, across gateway replicas, into a model server's logs.
//
// A client's traceparent ("00-<trace-id>-<parent-id>-<flags>") is
// continued: the same trace id, the client's span as parent, a new span id
// for the gateway's part; a missing or malformed one begins a new trace
// (as the specification asks: a bad header is not an error). What goes
// upstream names the gateway's span as the parent, with the client's
// flags; tracestate is passed on unchanged.
//
// Ids are kept as numbers and written as hex only where they are sent or
// logged: a request answered from a cache, and not logged, formats none.
#pragma once

#include <array>        // std::array
#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint64_t, std::uint8_t
#include <cstring>      // std::memcpy
#include <initializer_list>  // std::initializer_list
#include <random>       // std::random_device
#include <string>       // std::string
#include <string_view>  // std::string_view

#include "llmgate/version.hpp"  // the inline versioned namespace

namespace llmgate::inline v0 {

struct trace_context {
  std::uint64_t trace_high = 0, trace_low = 0;  ///< the 128-bit trace id; both 0: no trace
  std::uint64_t parent_id = 0;                  ///< the client's span; 0 when the trace began here
  std::uint64_t span_id = 0;                    ///< the gateway's span
  std::uint8_t flags = 0;                       ///< the client's trace flags (1: sampled)
  std::string state = {};                       ///< the client's tracestate, passed on as it came

  bool empty() const noexcept { return trace_high == 0 && trace_low == 0; }

  std::string trace_id() const { return hex({trace_high, trace_low}); }
  std::string span() const { return hex({span_id}); }
  std::string parent() const { return hex({parent_id}); }
  /// The traceparent to send upstream: the gateway's span as the parent.
  /// Formatted for every call upstream, so in place, not allocated.
  std::array<char, 55> traceparent() const {
    std::array<char, 55> text;  // 00-<trace id>-<span id>-<flags>
    text[2] = text[35] = text[52] = '-';
    write_hex(0, 2, text.data());
    write_hex(trace_high, 16, text.data() + 3);
    write_hex(trace_low, 16, text.data() + 19);
    write_hex(span_id, 16, text.data() + 36);
    write_hex(flags, 2, text.data() + 53);
    return text;
  }

  /// Continues the trace of a client's traceparent and tracestate
  /// headers, or begins one when `traceparent` is empty or malformed.
  static trace_context continue_or_begin(std::string_view traceparent, std::string_view tracestate) {
    trace_context trace;
    if (read(traceparent, trace)) {
      trace.state = tracestate;
    } else {
      trace = {};
      do {
        trace.trace_high = random();
        trace.trace_low = random();
      } while (trace.empty());
    }
    do trace.span_id = random();
    while (trace.span_id == 0);
    return trace;
  }

 private:
  // The last `digits` (an even number) hex digits of `value`, written at
  // `out` a byte, two digits, at a time.
  static void write_hex(std::uint64_t value, int digits, char* out) noexcept {
    static constexpr auto byte_digits = [] {
      constexpr char hex_digits[] = "0123456789abcdef";
      std::array<std::array<char, 2>, 256> pairs{};
      for (std::size_t byte = 0; byte < pairs.size(); ++byte) pairs[byte] = {hex_digits[byte >> 4], hex_digits[byte & 0xf]};
      return pairs;
    }();
    for (int i = digits - 2; i >= 0; i -= 2, value >>= 8) std::memcpy(out + i, byte_digits[value & 0xff].data(), 2);
  }
  static std::string hex(std::initializer_list<std::uint64_t> words) {
    std::string text(16 * words.size(), '0');
    char* at = text.data();
    for (const std::uint64_t word : words) at += (write_hex(word, 16, at), 16);
    return text;
  }

  // `digits` lowercase hex digits as a number; false for anything else.
  static bool hex_number(std::string_view digits, std::uint64_t& value) {
    value = 0;
    for (const char c : digits) {
      if (c >= '0' && c <= '9') value = value << 4 | static_cast<std::uint64_t>(c - '0');
      else if (c >= 'a' && c <= 'f') value = value << 4 | static_cast<std::uint64_t>(c - 'a' + 10);
      else return false;
    }
    return true;
  }

  // Version 00 is exactly 55 characters; a later version may append
  // fields after a dash (read as 00, as the specification says); ff is
  // invalid. Hex is lowercase; neither id may be all zeros.
  static bool read(std::string_view h, trace_context& trace) {
    if (h.size() < 55 || h[2] != '-' || h[35] != '-' || h[52] != '-') return false;
    std::uint64_t version = 0, flags = 0;
    if (!hex_number(h.substr(0, 2), version) || version == 0xff || !hex_number(h.substr(3, 16), trace.trace_high) ||
        !hex_number(h.substr(19, 16), trace.trace_low) || !hex_number(h.substr(36, 16), trace.parent_id) ||
        !hex_number(h.substr(53, 2), flags))
      return false;
    if (trace.empty() || trace.parent_id == 0) return false;
    if (version == 0 ? h.size() != 55 : h.size() > 55 && h[55] != '-') return false;
    trace.flags = static_cast<std::uint8_t>(flags);
    return true;
  }

  // splitmix64 over a per-thread seed: ids need to be unpredictable
  // enough not to collide, not secret.
  static std::uint64_t random() noexcept {
    thread_local std::uint64_t state = (std::uint64_t{std::random_device{}()} << 32) ^ std::random_device{}();
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
};

}  // namespace llmgate::inline v0
