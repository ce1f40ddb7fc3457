// backend_health: what the gateway last heard from each configured backend,
// for readiness (GET /readyz). Every call a model's fallback list makes to a
// backend passes through watched_backend, which tells the result here:
//
//   up       its last call succeeded;
//   down     its last `failures_to_down` calls failed for its availability
//            (what a circuit breaker counts: retryable errors, lost
//            connections, timeouts, malformed answers; not a 400 for the
//            caller's own input), within the last `down_for`;
//   unknown  no call yet, or `down_for` has passed since it was found
//            down: the next request tells (as a circuit breaker's half-open
//            probe would), so that a gateway taken out of rotation while
//            its upstream was away is let back in.
//
// Passive: it never calls a backend of its own accord.
#pragma once

#include <chrono>       // std::chrono::steady_clock, milliseconds
#include <functional>   // std::less
#include <map>          // std::map
#include <mutex>        // std::mutex, std::lock_guard
#include <optional>     // std::optional
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::move
#include <vector>       // std::vector

#include <boost/asio/awaitable.hpp>  // boost::asio::awaitable

#include "llmgate/backend/any_backend.hpp"    // any_backend
#include "llmgate/backend/backend_error.hpp"  // backend_error
#include "llmgate/backend/backend.hpp"        // chat_request, chat_response, chunk_handler, embedding_request

namespace llmgate::inline v0 {

enum class backend_state { unknown, up, down };

constexpr std::string_view to_string(backend_state state) noexcept {
  switch (state) {
    case backend_state::up: return "up";
    case backend_state::down: return "down";
    case backend_state::unknown: break;
  }
  return "unknown";
}

struct backend_health_options {
  unsigned failures_to_down = 3;                 ///< failures in a row that make a backend down
  std::chrono::milliseconds down_for{30'000};    ///< how long it stays down without news
};

class backend_health {
 public:
  using clock = std::chrono::steady_clock;

  /// What is known of one backend.
  struct report {
    std::string name;
    backend_state state = backend_state::unknown;
    std::optional<bool> last_succeeded;  ///< empty: never called
    unsigned failures = 0;               ///< in a row
    std::optional<clock::duration> since_last;  ///< since its last result
  };

  /// `names`: the backends to report, known from the start (never called yet).
  explicit backend_health(const std::vector<std::string>& names, backend_health_options options = {})
      : options_(options) {
    for (const auto& name : names) entries_.emplace(name, entry{});
  }

  void succeeded(std::string_view name) { tell(name, true); }
  void failed(std::string_view name) { tell(name, false); }

  backend_state state(std::string_view name, clock::time_point now = clock::now()) const {
    std::lock_guard lock(mutex_);
    const auto found = entries_.find(name);
    return found == entries_.end() ? backend_state::unknown : state_of(found->second, now);
  }

  /// Every backend, by name.
  std::vector<report> reports(clock::time_point now = clock::now()) const {
    std::lock_guard lock(mutex_);
    std::vector<report> all;
    for (const auto& [name, e] : entries_) {
      report r{.name = name, .state = state_of(e, now), .last_succeeded = e.last_succeeded, .failures = e.failures,
               .since_last = {}};
      if (e.last_succeeded) r.since_last = now - e.last;
      all.push_back(std::move(r));
    }
    return all;
  }

 private:
  struct entry {
    std::optional<bool> last_succeeded;
    unsigned failures = 0;
    clock::time_point last{};
  };

  backend_state state_of(const entry& e, clock::time_point now) const {
    if (!e.last_succeeded) return backend_state::unknown;
    if (*e.last_succeeded) return backend_state::up;
    if (e.failures < options_.failures_to_down) return backend_state::up;  // a failure or two: still up
    return now - e.last < options_.down_for ? backend_state::down : backend_state::unknown;
  }

  void tell(std::string_view name, bool success) {
    std::lock_guard lock(mutex_);
    auto found = entries_.find(name);
    if (found == entries_.end()) found = entries_.emplace(std::string(name), entry{}).first;
    auto& e = found->second;
    e.last_succeeded = success;
    e.failures = success ? 0 : e.failures + 1;
    e.last = clock::now();
  }

  backend_health_options options_;
  mutable std::mutex mutex_;
  std::map<std::string, entry, std::less<>> entries_;
};

/// A backend whose results reach a backend_health under `name`.
class watched_backend {
 public:
  watched_backend(any_backend backend, backend_health& health, std::string name)
      : backend_(std::move(backend)), health_(&health), name_(std::move(name)) {}

  std::string_view name() const { return backend_.name(); }

  boost::asio::awaitable<chat_response> complete(const chat_request& request) {
    co_return co_await watched([&] { return backend_.complete(request); });
  }

  boost::asio::awaitable<chat_response> stream(const chat_request& request, chunk_handler on_chunk) {
    co_return co_await watched([&] { return backend_.stream(request, std::move(on_chunk)); });
  }

  boost::asio::awaitable<embedding_response> embed(const embedding_request& request) {
    return backend_.embed(request);
  }

 private:
  template <class Call>
  auto watched(Call call) -> decltype(call()) {
    try {
      auto result = co_await call();
      health_->succeeded(name_);
      co_return result;
    } catch (const backend_error& failure) {
      // As circuit_breaker.hpp counts: the backend's availability, not the caller's input.
      if (failure.retryable() || failure.status() == 0) health_->failed(name_);
      throw;
    }
  }

  any_backend backend_;
  backend_health* health_;
  std::string name_;
};

}  // namespace llmgate::inline v0
