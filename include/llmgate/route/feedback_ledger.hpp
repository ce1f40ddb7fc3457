// feedback_ledger: thumbs up and down that users gave a model's answers,
// counted per model, task type and domain. The router counts each vote as
// one request the model got right or wrong, beside what the registry and
// similar requests say, so that later choices for the same kind of task
// change. Kept by model name, so a ledger outlives changes to the registry;
// saved atomically with a version and a checksum (store/snapshot_file.hpp).
#pragma once

#include <cstddef>       // std::size_t
#include <cstdint>       // std::uint64_t
#include <filesystem>    // std::filesystem::path
#include <functional>    // std::hash
#include <mutex>         // std::mutex, std::lock_guard
#include <optional>      // std::optional
#include <string>        // std::string
#include <string_view>   // std::string_view
#include <system_error>  // std::error_code
#include <utility>       // std::move

#include <boost/unordered/unordered_flat_map.hpp>  // (model, task type, domain) -> votes

#include "llmgate/error.hpp"
#include "llmgate/store/snapshot_file.hpp"

namespace llmgate::inline v0 {

struct feedback_votes {
  std::uint64_t up = 0;
  std::uint64_t down = 0;
  friend bool operator==(const feedback_votes&, const feedback_votes&) = default;
};

class feedback_ledger {
 public:
  feedback_ledger() = default;
  /// A moved-from ledger may only be destroyed or assigned to.
  feedback_ledger(feedback_ledger&& other) noexcept : votes_(std::move(other.votes_)) {}
  feedback_ledger& operator=(feedback_ledger&& other) noexcept {
    std::lock_guard lock(mutex_);
    votes_ = std::move(other.votes_);
    return *this;
  }

  void record(std::string_view model, std::string_view task_type, std::string_view domain, bool thumbs_up) {
    std::lock_guard lock(mutex_);
    auto found = votes_.find(key_view{model, task_type, domain});
    if (found == votes_.end())
      found = votes_.emplace(key{std::string(model), std::string(task_type), std::string(domain)}, feedback_votes{})
                  .first;
    ++(thumbs_up ? found->second.up : found->second.down);
  }

  feedback_votes votes(std::string_view model, std::string_view task_type, std::string_view domain) const {
    std::lock_guard lock(mutex_);
    const auto found = votes_.find(key_view{model, task_type, domain});
    return found == votes_.end() ? feedback_votes{} : found->second;
  }

  /// Kinds of task (model, task type, domain) with votes.
  std::size_t size() const {
    std::lock_guard lock(mutex_);
    return votes_.size();
  }

  /// Writes the ledger to `path` atomically (new file, fsync, rename).
  [[nodiscard]] std::error_code save(const std::filesystem::path& path) const {
    return store::save_file(*this, path, file_kind, file_version);
  }

  /// Reads a ledger saved by save(). Throws llmgate::error naming the file
  /// and the cause when it is missing, truncated, corrupt or of another kind.
  static feedback_ledger load(const std::filesystem::path& path) {
    return store::load_file<feedback_ledger>(path, file_kind, file_version, "feedback_ledger");
  }

  void save_to(store::snapshot_writer& out) const {
    std::lock_guard lock(mutex_);
    out.write(static_cast<std::uint64_t>(votes_.size()));
    for (const auto& [k, v] : votes_) {
      out.write_string(k.model);
      out.write_string(k.task_type);
      out.write_string(k.domain);
      out.write(v.up);
      out.write(v.down);
    }
  }

  static std::optional<feedback_ledger> load_from(store::snapshot_reader& in, std::error_code& ec) {
    const auto count = in.read<std::uint64_t>();
    constexpr std::size_t smallest_entry = 3 * 8 + 2 * 8;  // three empty strings, two counts
    if (count > in.remaining() / smallest_entry) {
      ec = make_error_code(errc::corrupt_file);
      return std::nullopt;
    }
    feedback_ledger ledger;
    for (std::uint64_t i = 0; i < count; ++i) {
      key k{in.read_string(), in.read_string(), in.read_string()};
      const feedback_votes v{in.read<std::uint64_t>(), in.read<std::uint64_t>()};
      if (!ledger.votes_.emplace(std::move(k), v).second) {  // the same key twice
        ec = make_error_code(errc::corrupt_file);
        return std::nullopt;
      }
    }
    return ledger;
  }

  static constexpr store::kind_tag file_kind = {'R', 'F', 'B', 'K'};
  static constexpr std::uint32_t file_version = 1;

 private:
  struct key {
    std::string model, task_type, domain;
  };
  struct key_view {
    std::string_view model, task_type, domain;
  };
  static key_view view(const key& k) noexcept { return {k.model, k.task_type, k.domain}; }
  static key_view view(const key_view& k) noexcept { return k; }

  // Hashing and comparison that accept a key_view, so lookups need not
  // copy strings.
  struct key_hash {
    using is_transparent = void;
    template <class K>
    std::size_t operator()(const K& k) const noexcept {
      const auto v = view(k);
      const std::hash<std::string_view> h;
      std::size_t seed = h(v.model);
      for (const auto part : {v.task_type, v.domain}) seed ^= h(part) + 0x9E3779B97F4A7C15ull + (seed << 6) + (seed >> 2);
      return seed;
    }
  };
  struct key_equal {
    using is_transparent = void;
    template <class A, class B>
    bool operator()(const A& a, const B& b) const noexcept {
      const auto x = view(a), y = view(b);
      return x.model == y.model && x.task_type == y.task_type && x.domain == y.domain;
    }
  };

  boost::unordered_flat_map<key, feedback_votes, key_hash, key_equal> votes_;
  mutable std::mutex mutex_;
};

}  // namespace llmgate::inline v0
