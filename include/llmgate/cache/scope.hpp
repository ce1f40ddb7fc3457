// cache_scope: what a cached answer belongs to and is never shared across.
//
// The same request text can deserve different answers: for another tenant
// (whose data the answer may reveal), from another model, under generation
// parameters that change the answer (temperature, top_p, max_tokens, stop
// sequences, tools, response format...), or under another system prompt.
// A cache_scope names all four, and the namespace a client may name
// within its tenant's cache (HTTP header x-llmgate-cache-namespace in the
// gateway). Caches partition their entries by it and
// compare it exactly on every hit: it is a hard wall, never part of a
// similarity, so no threshold can let an answer through it.
//
// Its hash is xxh3-128 over a length-prefixed encoding of the fields
// (lengths keep "ab" + "c" apart from "a" + "bc"). xxh3's output is fixed
// by its specification, so the hash is the same across runs, builds and
// machines, which snapshots rely on: they store the hash, not the fields.
#pragma once

#include <algorithm>     // std::sort
#include <charconv>      // std::to_chars
#include <cstdint>       // std::uint64_t, std::int64_t
#include <map>           // std::map
#include <optional>      // std::optional
#include <span>          // std::span
#include <string>        // std::string, std::to_string
#include <string_view>   // std::string_view
#include <type_traits>   // std::is_floating_point_v
#include <utility>       // std::move
#include <vector>        // std::vector

#include "llmgate/detail/xxhash.hpp"  // XXH3_128bits_withSeed (Debian libxxhash-dev)

#include "llmgate/version.hpp"

namespace llmgate::inline v0 {

/// A 128-bit hash, as xxh3-128 gives it.
struct hash128 {
  std::uint64_t low = 0;
  std::uint64_t high = 0;
  friend bool operator==(const hash128&, const hash128&) = default;
};

/// Hashes a hash128 for the unordered containers keyed by scope.
struct hash128_hasher {
  std::size_t operator()(const hash128& h) const noexcept { return h.low ^ (h.high * 0x9e3779b97f4a7c15ull); }
};

/// The generation parameters that change an answer, written by canonical()
/// as one string in which equal settings always read the same: fields in a
/// fixed order, numbers in their shortest exact form, stop sequences sorted
/// (their order does not change the answer). An absent field is not the same
/// as the provider's default value; fill defaults in first if those requests
/// should share answers.
struct generation_parameters {
  std::optional<double> temperature = {};
  std::optional<double> top_p = {};
  std::optional<std::uint64_t> max_tokens = {};
  std::optional<std::int64_t> seed = {};
  std::vector<std::string> stop = {};         ///< stop sequences
  std::string tools = {};                     ///< tool definitions as sent (canonical JSON)
  std::string response_format = {};           ///< e.g. "json_object", or a JSON schema
  std::map<std::string, std::string> other = {};  ///< any other setting that changes the answer, by name

  /// E.g. "temperature=0.2;max_tokens=256;response_format=11:json_object;".
  /// Text is written as <length>:<bytes>, so no value can forge a separator.
  std::string canonical() const {
    std::string out;
    const auto number = [&out](std::string_view name, auto value) {
      if constexpr (std::is_floating_point_v<decltype(value)>) {
        if (value == 0) value = 0;  // -0.0 and 0.0 are the same setting
      }
      char digits[32];
      const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
      out.append(name).append("=").append(digits, end).append(";");
    };
    const auto text = [&out](std::string_view name, std::string_view value) {
      out.append(name).append("=").append(std::to_string(value.size())).append(":");
      out.append(value).append(";");
    };
    if (temperature) number("temperature", *temperature);
    if (top_p) number("top_p", *top_p);
    if (max_tokens) number("max_tokens", *max_tokens);
    if (seed) number("seed", *seed);
    std::vector<std::string> sorted_stop = stop;
    std::sort(sorted_stop.begin(), sorted_stop.end());
    for (const auto& sequence : sorted_stop) text("stop", sequence);
    if (!tools.empty()) text("tools", tools);
    if (!response_format.empty()) text("response_format", response_format);
    for (const auto& [name, value] : other) {
      text("other", name);
      text("value", value);
    }
    return out;
  }
};

/// The things a cached answer is scoped by, for designated initialisers
/// (every member has a default, so -Wextra says nothing of those left out):
/// cache_scope scope({.tenant = "acme", .model = "gpt-4o-mini",
///                    .parameters = params.canonical(), .system_prompt = system});
struct cache_scope_fields {
  std::string tenant = {};         ///< whose cache: answers never cross tenants
  std::string model = {};          ///< which model answers
  std::string parameters = {};     ///< generation_parameters::canonical() or the caller's own canonical form
  std::string system_prompt = {};  ///< the whole system prompt
  std::string cache_namespace = {};  ///< a partition within the tenant's cache; empty: none
};

/// An immutable scope whose hash is computed once; build one per tenant,
/// model and settings and reuse it, as the system prompt may be long.
class cache_scope {
 public:
  /// The scope of everything left empty: for a single-tenant application.
  cache_scope() : cache_scope(cache_scope_fields{}) {}
  explicit cache_scope(cache_scope_fields fields)
      : fields_(std::move(fields)), hash_(hash_of(fields_)) {}

  const std::string& tenant() const noexcept { return fields_.tenant; }
  const std::string& model() const noexcept { return fields_.model; }
  const std::string& parameters() const noexcept { return fields_.parameters; }
  const std::string& system_prompt() const noexcept { return fields_.system_prompt; }
  const std::string& cache_namespace() const noexcept { return fields_.cache_namespace; }

  hash128 hash() const noexcept { return hash_; }

  friend bool operator==(const cache_scope& a, const cache_scope& b) {
    return a.hash_ == b.hash_ && a.fields_.tenant == b.fields_.tenant &&
           a.fields_.model == b.fields_.model && a.fields_.parameters == b.fields_.parameters &&
           a.fields_.system_prompt == b.fields_.system_prompt && a.fields_.cache_namespace == b.fields_.cache_namespace;
  }

 private:
  // XXH3-128 of "llmgate.scope.1" then each field as its length (8 bytes,
  // little-endian on every host) and its bytes; the namespace only when
  // there is one, so that scopes without one hash as they did before it
  // existed (snapshots keep their hashes). Written into a buffer on
  // the stack when the scope is short, as most are: one-shot XXH3 over the
  // same bytes as before, with no string allocated per request; a longer
  // scope streams them through an XXH3 state, which hashes alike.
  static hash128 hash_of(const cache_scope_fields& fields) {
    // "llmgate.scope.1" names this encoding, so a future one hashes apart.
    constexpr std::string_view version = "llmgate.scope.1";
    const std::string_view all_parts[] = {fields.tenant, fields.model, fields.parameters, fields.system_prompt,
                                          fields.cache_namespace};
    const std::span<const std::string_view> parts(all_parts, fields.cache_namespace.empty() ? 4 : 5);
    std::size_t size = version.size();
    for (const auto part : parts) size += 8 + part.size();
    const auto length_of = [](std::string_view field, char* out) {
      for (int byte = 0; byte < 8; ++byte)  // the length, little-endian on every host
        out[byte] = static_cast<char>((std::uint64_t{field.size()} >> (8 * byte)) & 0xff);
    };
    XXH128_hash_t hash;
    if (char buffer[1024]; size <= sizeof buffer) {
      char* at = std::copy(version.begin(), version.end(), buffer);
      for (const auto part : parts) {
        length_of(part, at);
        at = std::copy(part.begin(), part.end(), at + 8);
      }
      hash = XXH3_128bits_withSeed(buffer, size, 0);
    } else {
      XXH3_state_t state;
      XXH3_INITSTATE(&state);
      XXH3_128bits_reset_withSeed(&state, 0);
      XXH3_128bits_update(&state, version.data(), version.size());
      for (const auto part : parts) {
        char length[8];
        length_of(part, length);
        XXH3_128bits_update(&state, length, sizeof length);
        XXH3_128bits_update(&state, part.data(), part.size());
      }
      hash = XXH3_128bits_digest(&state);
    }
    return {hash.low64, hash.high64};
  }

  cache_scope_fields fields_;
  hash128 hash_;
};

}  // namespace llmgate::inline v0
