// replication_message: the bytes the shared tier keeps in Redis and sends
// between replicas, each framed as a snapshot (store/snapshot_file.hpp:
// magic, kind, version, size, CRC), so that bytes cut short, altered, or
// of another kind are refused before any field is read:
//
//   "SHEX"  an exact answer, the value under an exact key: the key's scope,
//           tenant and normalised text with the answer, so that a reader
//           compares all three before serving (two requests whose hashes
//           collide never see each other's answers, across tenants least of all);
//   "SHRM"  one change a replica made, the payload of a stream entry: to
//           its semantic cache an insert (with its vector, which a replica
//           whose embedder is remote stores as is), a feedback verdict or an
//           eviction; or an exact answer erased (a wrong verdict), which the
//           others' local exact caches may hold a copy of.
//
// Decoders take bytes from the network: they return an error for anything
// they cannot read whole, and never throw or read out of bounds.
// Also here: stream_id, the ids of the semantic stream's entries.
#pragma once

#include <charconv>      // std::from_chars
#include <cmath>         // std::isfinite
#include <compare>       // std::strong_ordering
#include <cstdint>       // std::uint8_t, std::uint64_t
#include <exception>     // std::exception
#include <optional>      // std::optional
#include <span>          // std::span
#include <string>        // std::string, std::to_string
#include <string_view>   // std::string_view
#include <system_error>  // std::error_code
#include <type_traits>   // std::is_same_v
#include <utility>       // std::move
#include <variant>       // std::variant, std::visit
#include <vector>        // std::vector

#include "llmgate/cache/exact_cache.hpp"       // exact_key
#include "llmgate/cache/scope.hpp"             // hash128
#include "llmgate/cache/semantic_cache.hpp"    // answer_cost
#include "llmgate/error.hpp"                   // errc, make_error_code
#include "llmgate/pipeline/cached_answer.hpp"  // cached_answer, cache_value_traits<cached_answer>
#include "llmgate/store/snapshot_file.hpp"     // snapshot_writer, snapshot_reader

namespace llmgate::inline v0 {

inline constexpr store::kind_tag exact_value_kind{'S', 'H', 'E', 'X'};
inline constexpr store::kind_tag semantic_change_kind{'S', 'H', 'R', 'M'};
inline constexpr std::uint32_t replication_format_version = 1;

/// An exact answer as stored in Redis.
struct exact_value {
  hash128 scope = {};
  std::string tenant = {};
  std::string text = {};
  cached_answer answer = {};

  /// Whether this is the answer for `key` (not merely one whose hash collides).
  bool answers(const exact_key& key) const noexcept {
    return scope == key.scope && tenant == key.tenant && text == key.text;
  }
};

/// An entry one replica inserted. An empty vector asks the receiver to embed
/// `text` itself (a learning embedder's weights differ between replicas).
struct replicated_insert {
  hash128 scope = {};
  std::string text = {};
  std::vector<float> vector = {};
  cached_answer answer = {};
  answer_cost cost = {};
};

/// A verdict on an answer one replica served (basic_semantic_cache::feedback).
struct replicated_feedback {
  hash128 scope = {};
  std::string request_text = {};
  std::string stored_text = {};
  float similarity = 0;
  float probability = 0;
  bool correct = false;
};

/// An entry one replica evicted (capacity or lifetime).
struct replicated_eviction {
  hash128 scope = {};
  std::string text = {};
};

/// An exact answer one replica erased: its whole key, so that a local
/// exact cache finds it as it was stored.
struct replicated_exact_erase {
  hash128 hash = {};
  hash128 scope = {};
  std::string tenant = {};
  std::string text = {};
};

using semantic_change =
    std::variant<replicated_insert, replicated_feedback, replicated_eviction, replicated_exact_erase>;

/// The stream's "k" field for a change: i, f, e or x.
inline char change_letter(const semantic_change& change) noexcept {
  constexpr char letters[] = {'i', 'f', 'e', 'x'};
  return letters[change.index()];
}

namespace detail {

inline void write_scope(store::snapshot_writer& out, const hash128& scope) {
  out.write(scope.low);
  out.write(scope.high);
}

inline hash128 read_scope(store::snapshot_reader& in) {
  hash128 scope = {};
  scope.low = in.read<std::uint64_t>();
  scope.high = in.read<std::uint64_t>();
  return scope;
}

// A float vector: its length, then its values; only finite values are read.
inline std::vector<float> read_vector(store::snapshot_reader& in) {
  const auto count = in.read<std::uint64_t>();
  if (count > in.remaining() / sizeof(float)) {
    in.mark_corrupt();
    return {};
  }
  std::vector<float> values(static_cast<std::size_t>(count));
  in.read_array(std::span<float>(values));
  for (const float v : values)
    if (!std::isfinite(v)) in.mark_corrupt();
  return values;
}

inline float read_finite(store::snapshot_reader& in) {
  const auto value = in.read<float>();
  if (!std::isfinite(value)) in.mark_corrupt();
  return value;
}

// Reads `bytes` of `kind` with `read(reader)`; any error, a read past the
// end or bytes left over give `ec` and nothing.
template <class T, class Read>
std::optional<T> decode_framed(std::string bytes, store::kind_tag kind, Read read, std::error_code& ec) noexcept {
  try {
    store::snapshot_reader in(std::move(bytes), kind, replication_format_version, ec);
    if (ec) return std::nullopt;
    std::optional<T> value = read(in);
    ec = in.finish();
    if (ec || !value) {
      if (!ec) ec = make_error_code(errc::corrupt_file);
      return std::nullopt;
    }
    return value;
  } catch (const std::exception&) {  // out of memory for a field: unreadable here, not a crash
    ec = make_error_code(errc::corrupt_file);
    return std::nullopt;
  }
}

}  // namespace detail

/// The bytes stored under an exact key: `key`'s scope, tenant and text with `answer`.
inline std::string encode_exact(const exact_key& key, const cached_answer& answer) {
  store::snapshot_writer out(exact_value_kind, replication_format_version);
  detail::write_scope(out, key.scope);
  out.write_string(key.tenant);
  out.write_string(key.text);
  cache_value_traits<cached_answer>::write(out, answer);
  return std::move(out).seal();
}

/// Reads what encode_exact wrote; on bad bytes `ec` says why and nothing is returned.
inline std::optional<exact_value> decode_exact(std::string bytes, std::error_code& ec) noexcept {
  return detail::decode_framed<exact_value>(
      std::move(bytes), exact_value_kind,
      [](store::snapshot_reader& in) {
        exact_value value;
        value.scope = detail::read_scope(in);
        value.tenant = in.read_string();
        value.text = in.read_string();
        value.answer = cache_value_traits<cached_answer>::read(in);
        return std::optional<exact_value>(std::move(value));
      },
      ec);
}

/// The payload of a stream entry for `change`.
inline std::string encode_change(const semantic_change& change) {
  store::snapshot_writer out(semantic_change_kind, replication_format_version);
  out.write(static_cast<std::uint8_t>(change_letter(change)));
  std::visit(
      [&](const auto& c) {
        using change_type = std::decay_t<decltype(c)>;
        detail::write_scope(out, c.scope);
        if constexpr (std::is_same_v<change_type, replicated_insert>) {
          out.write_string(c.text);
          out.write(static_cast<std::uint64_t>(c.vector.size()));
          out.write_array(std::span<const float>(c.vector));
          cache_value_traits<cached_answer>::write(out, c.answer);
          out.write(c.cost.prompt_tokens);
          out.write(c.cost.completion_tokens);
          out.write(c.cost.usd);
        } else if constexpr (std::is_same_v<change_type, replicated_feedback>) {
          out.write_string(c.request_text);
          out.write_string(c.stored_text);
          out.write(c.similarity);
          out.write(c.probability);
          out.write(static_cast<std::uint8_t>(c.correct));
        } else if constexpr (std::is_same_v<change_type, replicated_exact_erase>) {
          detail::write_scope(out, c.hash);
          out.write_string(c.tenant);
          out.write_string(c.text);
        } else {
          out.write_string(c.text);
        }
      },
      change);
  return std::move(out).seal();
}

/// Reads what encode_change wrote; on bad bytes `ec` says why and nothing is returned.
inline std::optional<semantic_change> decode_change(std::string bytes, std::error_code& ec) noexcept {
  return detail::decode_framed<semantic_change>(
      std::move(bytes), semantic_change_kind,
      [](store::snapshot_reader& in) -> std::optional<semantic_change> {
        const auto letter = static_cast<char>(in.read<std::uint8_t>());
        const hash128 scope = detail::read_scope(in);
        switch (letter) {
          case 'i': {
            replicated_insert insert{.scope = scope};
            insert.text = in.read_string();
            insert.vector = detail::read_vector(in);
            insert.answer = cache_value_traits<cached_answer>::read(in);
            insert.cost.prompt_tokens = in.read<std::uint64_t>();
            insert.cost.completion_tokens = in.read<std::uint64_t>();
            insert.cost.usd = in.read<double>();
            return insert;
          }
          case 'f': {
            replicated_feedback feedback{.scope = scope};
            feedback.request_text = in.read_string();
            feedback.stored_text = in.read_string();
            feedback.similarity = detail::read_finite(in);
            feedback.probability = detail::read_finite(in);
            const auto correct = in.read<std::uint8_t>();
            if (correct > 1) in.mark_corrupt();
            feedback.correct = correct == 1;
            return feedback;
          }
          case 'e': return replicated_eviction{scope, in.read_string()};
          case 'x': {
            replicated_exact_erase erase{.scope = scope};
            erase.hash = detail::read_scope(in);
            erase.tenant = in.read_string();
            erase.text = in.read_string();
            return erase;
          }
          default: return std::nullopt;
        }
      },
      ec);
}

/// The id of a stream entry, "<milliseconds>-<sequence>", ordered as Redis orders them.
struct stream_id {
  std::uint64_t milliseconds = 0;
  std::uint64_t sequence = 0;

  /// Parses "1700000000000-3" (or "0"); nothing for anything else.
  static std::optional<stream_id> parse(std::string_view text) noexcept {
    stream_id id;
    const auto dash = text.find('-');
    const auto number = [](std::string_view digits, std::uint64_t& out) {
      const auto [end, problem] = std::from_chars(digits.data(), digits.data() + digits.size(), out);
      return !digits.empty() && problem == std::errc() && end == digits.data() + digits.size();
    };
    if (dash == std::string_view::npos) {
      if (!number(text, id.milliseconds)) return std::nullopt;
    } else if (!number(text.substr(0, dash), id.milliseconds) || !number(text.substr(dash + 1), id.sequence)) {
      return std::nullopt;
    }
    return id;
  }

  std::string text() const { return std::to_string(milliseconds) + '-' + std::to_string(sequence); }

  friend auto operator<=>(const stream_id&, const stream_id&) = default;
};

}  // namespace llmgate::inline v0
