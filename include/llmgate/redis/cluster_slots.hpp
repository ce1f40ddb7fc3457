// cluster_slots: what a Redis Cluster client must know of the cluster's
// key space. A key lives in one of 16384 slots (key_slot); CLUSTER SLOTS
// says which master (and replicas) serve each range of slots
// (parse_cluster_slots); a node that does not serve a key's slot answers
// "MOVED <slot> <host>:<port>" (the map changed: refresh it) or
// "ASK <slot> <host>:<port>" (the slot is migrating: ask that node once,
// after ASKING), which redirect_of reads.
#pragma once

#include <algorithm>     // std::sort
#include <charconv>      // std::from_chars
#include <cstdint>       // std::uint16_t
#include <optional>      // std::optional
#include <string>        // std::string, std::to_string
#include <string_view>   // std::string_view
#include <system_error>  // std::errc
#include <vector>        // std::vector

#include <boost/crc.hpp>  // boost::crc_optimal

#include "llmgate/error.hpp"        // llmgate::error, errc::store_error
#include "llmgate/redis/reply.hpp"  // reply, endpoint

namespace llmgate::inline v0::redis {

/// How many slots a Redis Cluster divides its keys into.
inline constexpr std::uint16_t cluster_slot_count = 16384;

/// The slot of a key, as Redis computes it: CRC16/XMODEM of the key modulo
/// 16384. When the key holds a hash tag (a '{' with a later '}' and at
/// least one byte between the first '{' and the first '}' after it), only
/// the tag is hashed, so "{user1000}.following" and "{user1000}.followers"
/// share a slot (and a node, and may meet in one MULTI or Lua script).
inline std::uint16_t key_slot(std::string_view key) noexcept {
  if (const auto open = key.find('{'); open != std::string_view::npos) {
    const auto close = key.find('}', open + 1);
    if (close != std::string_view::npos && close > open + 1) key = key.substr(open + 1, close - open - 1);
  }
  boost::crc_optimal<16, 0x1021, 0, 0, false, false> crc;  // CRC16/XMODEM
  crc.process_bytes(key.data(), key.size());
  return static_cast<std::uint16_t>(crc.checksum() % cluster_slot_count);
}

/// One range of slots [first, last] and the nodes serving it.
struct slot_range {
  std::uint16_t first = 0;
  std::uint16_t last = 0;
  endpoint master = {};
  std::vector<endpoint> replicas = {};
  friend bool operator==(const slot_range&, const slot_range&) = default;
};

namespace detail {

[[noreturn]] inline void malformed_cluster_slots(const std::string& what) {
  throw error(errc::store_error, "redis: CLUSTER SLOTS reply " + what);
}

inline std::uint16_t cluster_slot_of(const reply& value, const std::string& where) {
  if (value.kind != reply_kind::integer) malformed_cluster_slots(where + " is not an integer");
  if (value.integer < 0 || value.integer >= cluster_slot_count)
    malformed_cluster_slots(where + " " + std::to_string(value.integer) + " is outside 0..16383");
  return static_cast<std::uint16_t>(value.integer);
}

/// [host, port, id, metadata]: only host and port are required (Redis
/// before 4.0 sent no id, before 7.0 no metadata) and only they are read.
inline endpoint cluster_node_of(const reply& node, const std::string& where) {
  if (!node.is_array()) malformed_cluster_slots(where + " is not an array");
  if (node.elements.size() < 2) malformed_cluster_slots(where + " has no host and port");
  const reply& host = node.elements[0];
  const reply& port = node.elements[1];
  // A nil host is Redis 7's "unknown endpoint": the host the client asked,
  // as an empty host means in a redirect.
  if (!host.is_string() && !host.is_nil()) malformed_cluster_slots(where + ": host is not a string");
  if (port.kind != reply_kind::integer) malformed_cluster_slots(where + ": port is not an integer");
  if (port.integer < 1 || port.integer > 65535)
    malformed_cluster_slots(where + ": port " + std::to_string(port.integer) + " is outside 1..65535");
  if (node.elements.size() > 2 && !node.elements[2].is_string())
    malformed_cluster_slots(where + ": node id is not a string");
  if (node.elements.size() > 3 && !node.elements[3].is_array())
    malformed_cluster_slots(where + ": metadata is not an array");
  return endpoint{host.text, static_cast<std::uint16_t>(port.integer)};
}

}  // namespace detail

/// The reply to CLUSTER SLOTS (Redis 7: each element is [first slot, last
/// slot, master, replicas...], each node [host, port, id, metadata]), as
/// ranges sorted by their first slot. Slots no master serves are in no
/// range. Throws llmgate::error(errc::store_error) naming what is wrong
/// when the reply is an error or has another shape, when a slot or port is
/// out of bounds, or when two ranges overlap.
inline std::vector<slot_range> parse_cluster_slots(const reply& slots) {
  if (slots.is_error()) detail::malformed_cluster_slots("is an error: " + slots.text);
  if (!slots.is_array()) detail::malformed_cluster_slots("is not an array");
  std::vector<slot_range> ranges;
  ranges.reserve(slots.elements.size());
  for (std::size_t i = 0; i < slots.elements.size(); ++i) {
    const reply& element = slots.elements[i];
    const std::string where = "range " + std::to_string(i);
    if (!element.is_array()) detail::malformed_cluster_slots(where + " is not an array");
    if (element.elements.size() < 3) detail::malformed_cluster_slots(where + " has no first slot, last slot and master");
    slot_range range;
    range.first = detail::cluster_slot_of(element.elements[0], where + ": first slot");
    range.last = detail::cluster_slot_of(element.elements[1], where + ": last slot");
    if (range.first > range.last)
      detail::malformed_cluster_slots(where + ": first slot " + std::to_string(range.first) + " is after last slot " +
                                      std::to_string(range.last));
    range.master = detail::cluster_node_of(element.elements[2], where + ": master");
    for (std::size_t r = 3; r < element.elements.size(); ++r)
      range.replicas.push_back(detail::cluster_node_of(element.elements[r], where + ": replica " + std::to_string(r - 3)));
    ranges.push_back(std::move(range));
  }
  std::sort(ranges.begin(), ranges.end(), [](const slot_range& a, const slot_range& b) { return a.first < b.first; });
  for (std::size_t i = 1; i < ranges.size(); ++i)
    if (ranges[i].first <= ranges[i - 1].last)
      detail::malformed_cluster_slots("has overlapping ranges " + std::to_string(ranges[i - 1].first) + ".." +
                                      std::to_string(ranges[i - 1].last) + " and " + std::to_string(ranges[i].first) +
                                      ".." + std::to_string(ranges[i].last));
  return ranges;
}

/// Where a node sends a command for a slot it does not serve.
struct redirect {
  bool ask = false;  ///< ASK: this one command, after ASKING; MOVED (false): the slot map changed
  std::uint16_t slot = 0;
  endpoint to = {};  ///< an empty host means the host of the node that answered
  friend bool operator==(const redirect&, const redirect&) = default;
};

namespace detail {

template <class Unsigned>
std::optional<Unsigned> decimal_of(std::string_view digits, Unsigned max) {
  Unsigned value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || ec != std::errc{} || end != digits.data() + digits.size() || value > max) return std::nullopt;
  return value;
}

}  // namespace detail

/// The redirect an error reply holds: "MOVED 3999 127.0.0.1:6381",
/// "ASK 3999 127.0.0.1:6381", with a host that may be empty ("MOVED 1 :6380")
/// or an IPv6 address, bracketed or not ("[::1]:7000", "::1:7000": the last
/// colon starts the port). Any other reply, or a redirect that is not
/// exactly this shape: nullopt.
inline std::optional<redirect> redirect_of(const reply& answer) {
  if (!answer.is_error()) return std::nullopt;
  std::string_view text = answer.text;
  redirect result;
  if (text.starts_with("MOVED ")) {
    text.remove_prefix(6);
  } else if (text.starts_with("ASK ")) {
    result.ask = true;
    text.remove_prefix(4);
  } else {
    return std::nullopt;
  }
  const auto space = text.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  const auto slot = detail::decimal_of<std::uint16_t>(text.substr(0, space), cluster_slot_count - 1);
  const std::string_view address = text.substr(space + 1);
  const auto colon = address.rfind(':');
  if (!slot || colon == std::string_view::npos || address.find(' ') != std::string_view::npos) return std::nullopt;
  const auto port = detail::decimal_of<std::uint16_t>(address.substr(colon + 1), 65535);
  if (!port || *port == 0) return std::nullopt;
  std::string_view host = address.substr(0, colon);
  if (host.starts_with('[') || host.ends_with(']')) {
    if (host.size() < 2 || !host.starts_with('[') || !host.ends_with(']')) return std::nullopt;
    host = host.substr(1, host.size() - 2);
  }
  result.slot = *slot;
  result.to = endpoint{std::string(host), *port};
  return result;
}

}  // namespace llmgate::inline v0::redis
