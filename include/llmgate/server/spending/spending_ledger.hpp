// spending_ledger: what each tenant with spending limits (spending_limits.hpp)
// has spent, and whether its next request may pass.
//
// Each limit is a meter over windows of its period: the budget's (a day, a
// month, a duration), reset when the period ends; the per-minute limits'
// minutes, which slide: the previous minute counts for the part of it still
// inside the last 60 seconds (so a burst at a minute's edge cannot pass
// twice the limit). A request is checked before the caches (chat handler):
//   budget             refused once the period's spending reached the budget;
//   requests/minute    counted when admitted, refused past the limit;
//   input tokens/min   refused when the request's estimated prompt would
//                      pass the limit (one larger than the limit never can);
//   output tokens/min  refused once the minute's completions reached it.
// Spending is charged when an answer is made: its cost and the tokens of
// the model call (a cached answer costs nothing and counts no tokens).
// Requests under way when a limit is reached finish; they may pass it by
// what they spend.
//
// Across replicas (the shared tier, server/shared/spending_sync.hpp): each
// window holds this replica's spending in it ("mine") and the other
// replicas' as the store last gave it ("others"). The sync writes "mine"
// whole under this replica's name (so that a write repeated after a
// timeout counts once) and reads the others'; every replica's spending
// counts for all. While the store is away a replica counts what it spent
// since its last sync as if every replica last seen spent as much: it
// stops at its share of what remained, and the store has its spending
// when it is back.
//
// The ledger is saved in the snapshot directory and loaded at start, so
// that spending survives a restart: a replica that comes back under the
// name it synced as goes on with its own figure; under another name (the
// default one holds the process id) what it spent before counts as
// another replica's, as the store holds it.
#pragma once

#include <algorithm>    // std::max, std::any_of
#include <array>        // std::array
#include <chrono>       // std::chrono
#include <cstddef>      // std::size_t
#include <cstdint>      // std::int64_t, std::uint64_t
#include <filesystem>   // std::filesystem::path
#include <functional>   // std::equal_to
#include <limits>       // std::numeric_limits
#include <mutex>        // std::mutex, std::lock_guard
#include <optional>     // std::optional
#include <span>         // std::span
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <system_error>  // std::error_code
#include <utility>      // std::move
#include <vector>       // std::vector

#include <boost/json/array.hpp>                    // boost::json::array
#include <boost/json/object.hpp>                   // boost::json::object
#include <boost/unordered/unordered_flat_map.hpp>  // accounts by tenant name

#include "llmgate/detail/adjustable_clock.hpp"           // detail::adjustable_clock
#include "llmgate/detail/name_set.hpp"                   // detail::string_hash
#include "llmgate/server/http/access_config.hpp"         // tenant_config
#include "llmgate/server/spending/spending_limits.hpp"   // spending_limits, spending_period
#include "llmgate/store/snapshot_file.hpp"               // store::snapshot_writer, snapshot_reader

namespace llmgate::inline v0 {

/// Wall-clock time, which a test may move forward: budget periods are
/// calendar days and months.
using wall_clock = detail::adjustable_clock<std::chrono::system_clock>;

/// What a limit counts.
enum class spending_measure : unsigned char { usd, requests, input_tokens, output_tokens };

/// The limit's name as the config and the error messages spell it.
constexpr std::string_view limit_name(spending_measure m) noexcept {
  switch (m) {
    case spending_measure::usd: return "budget";
    case spending_measure::requests: return "requests_per_minute";
    case spending_measure::input_tokens: return "input_tokens_per_minute";
    case spending_measure::output_tokens: return "output_tokens_per_minute";
  }
  return "";
}

/// Why a request may not pass.
struct spending_refusal {
  spending_measure limit;
  double allowed;    ///< the limit
  double used;       ///< what its window holds now
  double requested;  ///< the request's own part (an input estimate, one request; 0 for spending)
  std::string period;  ///< "month", "1m"
  /// When it may pass, if nothing more is spent; none when it never can
  /// (a prompt larger than the input limit).
  std::optional<std::chrono::system_clock::time_point> retry_at;
  bool local_share;  ///< held to this replica's share while the shared store is away
};

class spending_ledger {
 public:
  /// This replica's spending in one window, for the shared store; see begin_sync.
  struct sync_entry {
    std::string tenant;
    spending_measure limit;
    std::int64_t window_start;  ///< Unix seconds
    std::int64_t keep_until;    ///< Unix seconds after which no replica reads it
    double mine;                ///< all this replica spent in the window
  };

  spending_ledger(std::span<const tenant_config> tenants, wall_clock clock) : clock_(std::move(clock)) {
    for (const auto& tenant : tenants) {
      const auto& l = tenant.limits;
      if (!l.any()) continue;
      account a{.name = tenant.name};
      if (l.budget_usd > 0) a.meters.push_back(meter{spending_measure::usd, l.budget_usd, *l.budget_period, false});
      const auto per_minute = [&](spending_measure m, std::uint64_t limit) {
        if (limit > 0) a.meters.push_back(meter{m, static_cast<double>(limit), spending_period::minute(), true});
      };
      per_minute(spending_measure::requests, l.requests_per_minute);
      per_minute(spending_measure::input_tokens, l.input_tokens_per_minute);
      per_minute(spending_measure::output_tokens, l.output_tokens_per_minute);
      index_.emplace(tenant.name, accounts_.size());
      accounts_.push_back(std::move(a));
    }
  }

  /// The time by the ledger's clock (a test's may stand still).
  wall_clock::time_point now() const { return clock_.now(); }

  /// Whether no tenant has a limit: then nothing is checked or counted.
  bool empty() const noexcept { return accounts_.empty(); }
  /// The tenants with limits.
  std::size_t tenants() const noexcept { return accounts_.size(); }

  /// Whether the tenant's requests need their prompt tokens estimated
  /// (it has an input token limit).
  bool counts_input(std::string_view tenant) const {
    const account* a = find(tenant);
    return a && std::any_of(a->meters.begin(), a->meters.end(),
                            [](const meter& m) { return m.what == spending_measure::input_tokens; });
  }

  /// Checks a request of `tenant` whose prompt is estimated at
  /// `input_tokens`; admitted, it counts as one request. A tenant with no
  /// limits always passes.
  std::optional<spending_refusal> admit(std::string_view tenant, std::uint64_t input_tokens) {
    account* a = find(tenant);
    if (!a) return std::nullopt;
    std::lock_guard lock(mutex_);
    const auto now = clock_.now();
    for (meter& m : a->meters) {
      roll(m, now);
      const double requested = m.what == spending_measure::requests       ? 1.0
                               : m.what == spending_measure::input_tokens ? static_cast<double>(input_tokens)
                                                                          : 0.0;
      const double used = used_in(m, now);
      if (requested > 0 ? used + requested > m.limit : used >= m.limit) {
        ++m.refusals;
        return spending_refusal{m.what, m.limit, used, requested, m.period.text(), retry_at(m, now, requested),
                                away_ && replicas_ > 1};
      }
    }
    for (meter& m : a->meters)
      if (m.what == spending_measure::requests) m.current.mine += 1;
    return std::nullopt;
  }

  /// Charges an answer's cost and the tokens of the model call that made it.
  void charge(std::string_view tenant, double usd, std::uint64_t input_tokens, std::uint64_t output_tokens) {
    account* a = find(tenant);
    if (!a || (usd <= 0 && input_tokens == 0 && output_tokens == 0)) return;
    std::lock_guard lock(mutex_);
    const auto now = clock_.now();
    for (meter& m : a->meters) {
      roll(m, now);
      switch (m.what) {
        case spending_measure::usd: m.current.mine += usd; break;
        case spending_measure::input_tokens: m.current.mine += static_cast<double>(input_tokens); break;
        case spending_measure::output_tokens: m.current.mine += static_cast<double>(output_tokens); break;
        case spending_measure::requests: break;
      }
    }
  }

  // --- the shared store (server/shared/spending_sync.hpp) ---------------------

  /// Names this replica as the shared store knows it; before load().
  void share_as(std::string replica) {
    std::lock_guard lock(mutex_);
    replica_ = std::move(replica);
  }

  /// This replica's spending in each window the limits still read (the
  /// current and the previous of every meter), to be written to the store.
  std::vector<sync_entry> begin_sync() {
    std::lock_guard lock(mutex_);
    const auto now = clock_.now();
    std::vector<sync_entry> entries;
    for (account& a : accounts_)
      for (meter& m : a.meters) {
        roll(m, now);
        for (const window* w : {&m.current, &m.previous}) {
          if (w->start == no_window) continue;
          const auto end = m.period.next(seconds_at(w->start));
          entries.push_back({a.name, m.what, w->start, unix_seconds(m.period.next(end)), w->mine});
        }
      }
    return entries;
  }

  /// The sync's outcome: for each entry, what the other replicas spent in
  /// its window, and how many replicas the store has seen lately; or, when
  /// it failed, none (the store is away).
  void end_sync(std::span<const sync_entry> entries, std::optional<std::span<const double>> others,
                std::size_t replicas) {
    std::lock_guard lock(mutex_);
    away_ = !others;
    if (!others) return;
    replicas_ = std::max<std::size_t>(1, replicas);
    for (std::size_t i = 0; i < entries.size(); ++i)
      if (window* w = window_of(entries[i])) {  // none: the window ended meanwhile
        w->others = (*others)[i];
        w->mine_stored = entries[i].mine;
      }
  }

  // --- what an operator sees --------------------------------------------------

  /// Per tenant with limits: each limit, what its window holds and when it
  /// resets; for /admin/stats.
  boost::json::object statistics() const {
    std::lock_guard lock(mutex_);
    const auto now = clock_.now();
    boost::json::array tenants;
    for (const account& a : accounts_) {
      boost::json::object limits;
      for (const meter& m : a.meters) {
        const double used = used_in(m, now);
        limits[limit_name(m.what)] = {{"limit", m.limit}, {"used", used}, {"remaining", std::max(0.0, m.limit - used)},
                                      {"period", m.period.text()},
                                      {"resets_at", unix_seconds(m.period.next(m.period.start_of(now)))},
                                      {"refusals", m.refusals}};
      }
      tenants.push_back({{"name", a.name}, {"limits", std::move(limits)}});
    }
    return {{"tenants", std::move(tenants)}, {"store_away", away_}, {"replicas", replicas_}};
  }

  /// One value per tenant and limit, for /metrics: `add(tenant, limit,
  /// allowed, used, refusals)`.
  template <class Add>
  void each_limit(Add add) const {
    std::lock_guard lock(mutex_);
    const auto now = clock_.now();
    for (const account& a : accounts_)
      for (const meter& m : a.meters) {
        add(std::string_view(a.name), m.what, m.limit, used_in(m, now), m.refusals);
      }
  }

  // --- the snapshot -----------------------------------------------------------

  /// Saves every window (its start, this replica's spending and the
  /// others') and the name this replica synced as to `path`, written whole
  /// or not at all.
  [[nodiscard]] std::error_code save(const std::filesystem::path& path) const {
    store::snapshot_writer out(snapshot_kind, snapshot_version);
    std::lock_guard lock(mutex_);
    out.write_string(replica_);
    out.write(static_cast<std::uint64_t>(accounts_.size()));
    for (const account& a : accounts_) {
      out.write_string(a.name);
      out.write(static_cast<std::uint64_t>(a.meters.size()));
      for (const meter& m : a.meters) {
        out.write(static_cast<std::uint8_t>(m.what));
        for (const window* w : {&m.current, &m.previous}) {
          out.write(w->start);
          out.write(w->mine);
          out.write(w->others);
          out.write(w->mine_stored);
        }
      }
    }
    return out.commit(path);
  }

  /// Loads what save() wrote: the windows of tenants and limits the config
  /// still has (others are dropped). Saved under another replica name than
  /// share_as gave (or with no shared store), this replica's spending
  /// counts as another's. Throws llmgate::error when the file cannot be
  /// read or is not whole.
  void load(const std::filesystem::path& path) {
    std::error_code ec;
    store::snapshot_reader in(path, snapshot_kind, snapshot_version, ec);
    if (ec) throw store::load_failure("loading spending from '" + path.string() + "'", path, ec);
    std::lock_guard lock(mutex_);
    const std::string saved_by = in.read_string();
    const bool same_replica = !replica_.empty() && saved_by == replica_;
    const auto count = in.read<std::uint64_t>();
    for (std::uint64_t i = 0; i < count && in.remaining() > 0; ++i) {
      const std::string name = in.read_string();
      account* a = find(name);
      const auto meters = in.read<std::uint64_t>();
      for (std::uint64_t j = 0; j < meters && in.remaining() > 0; ++j) {
        const auto what = static_cast<spending_measure>(in.read<std::uint8_t>());
        std::array<window, 2> saved;
        for (window& w : saved) {
          w.start = in.read<std::int64_t>();
          w.mine = in.read<double>();
          w.others = in.read<double>();
          w.mine_stored = in.read<double>();
          if (!same_replica) w = window{.start = w.start, .others = w.others + w.mine};
        }
        if (!a) continue;
        for (meter& m : a->meters)
          if (m.what == what) {
            m.current = saved[0];
            m.previous = saved[1];
          }
      }
    }
    if (const auto problem = in.finish())
      throw store::load_failure("loading spending from '" + path.string() + "'", path, problem);
  }

 private:
  static constexpr store::kind_tag snapshot_kind = {'S', 'P', 'N', 'D'};
  static constexpr std::uint32_t snapshot_version = 1;
  static constexpr std::int64_t no_window = std::numeric_limits<std::int64_t>::min();

  struct window {
    std::int64_t start = no_window;  // Unix seconds
    double mine = 0;         // this replica's spending
    double others = 0;       // the other replicas', as the store last gave it
    double mine_stored = 0;  // this replica's, as the store last took it
  };

  struct meter {
    spending_measure what;
    double limit;
    spending_period period;
    bool sliding;  // the per-minute limits: the previous window counts in part
    window current = {}, previous = {};
    std::uint64_t refusals = 0;
  };

  struct account {
    std::string name;
    std::vector<meter> meters = {};
  };

  static std::int64_t unix_seconds(spending_period::seconds t) { return t.time_since_epoch().count(); }
  static spending_period::seconds seconds_at(std::int64_t unix_time) { return spending_period::seconds(std::chrono::seconds(unix_time)); }

  account* find(std::string_view tenant) {
    if (accounts_.empty()) return nullptr;
    const auto found = index_.find(tenant);
    return found == index_.end() ? nullptr : &accounts_[found->second];
  }
  const account* find(std::string_view tenant) const { return const_cast<spending_ledger*>(this)->find(tenant); }

  window* window_of(const sync_entry& e) {
    account* a = find(e.tenant);
    if (!a) return nullptr;
    for (meter& m : a->meters)
      if (m.what == e.limit)
        for (window* w : {&m.current, &m.previous})
          if (w->start == e.window_start) return w;
    return nullptr;
  }

  struct window_pair {
    window current, previous;
  };

  // The meter's windows as they are at `now`: moved on when a window ended.
  static window_pair windows_at(const meter& m, wall_clock::time_point now) {
    const std::int64_t start = unix_seconds(m.period.start_of(now));
    if (m.current.start == start) return {m.current, m.previous};
    return {window{.start = start}, m.current};
  }

  static void roll(meter& m, wall_clock::time_point now) {
    const window_pair moved = windows_at(m, now);
    m.current = moved.current;
    m.previous = moved.previous;
  }

  // What a window holds: while the store is away, what this replica spent
  // since it last synced counts once for each replica last seen.
  double total(const window& w) const {
    const double unstored = w.mine - w.mine_stored;
    return w.others + w.mine_stored + unstored * static_cast<double>(away_ ? replicas_ : 1);
  }

  // The part of the previous window a sliding meter still counts at `now`.
  static double previous_weight(const meter& m, const window_pair& w, wall_clock::time_point now) {
    if (!m.sliding || w.previous.start == no_window) return 0;
    const auto start = seconds_at(w.current.start);
    if (m.period.next(seconds_at(w.previous.start)) != start) return 0;  // not adjacent: it ended long ago
    const std::chrono::duration<double> into = now - start, length = m.period.next(start) - start;
    return std::max(0.0, 1.0 - into / length);
  }

  double used_in(const meter& m, wall_clock::time_point now) const {
    const window_pair w = windows_at(m, now);
    return total(w.current) + total(w.previous) * previous_weight(m, w, now);
  }

  // When a refused request could pass if nothing more were spent: a fixed
  // window's end; for a sliding one, when the previous window's fading
  // part leaves room (in this window, or else in the next).
  std::optional<wall_clock::time_point> retry_at(const meter& m, wall_clock::time_point now, double requested) const {
    const window_pair w = windows_at(m, now);
    const auto start = seconds_at(w.current.start);
    const auto end = m.period.next(start);
    if (requested > m.limit) return std::nullopt;
    if (!m.sliding) return end;
    // Room for the request; with nothing requested, the count must fall
    // below the limit, not only to it.
    const double room = requested > 0 ? m.limit - requested : m.limit * (1 - 1e-9);
    const double current = total(w.current);
    const double previous = previous_weight(m, w, now) > 0 ? total(w.previous) : 0;
    const std::chrono::duration<double> length = end - start;
    const auto at = [](auto from, std::chrono::duration<double> after) {
      return std::chrono::time_point_cast<wall_clock::duration>(from + std::chrono::ceil<std::chrono::seconds>(after));
    };
    if (current <= room && previous > 0) return std::max(now, at(start, length * (1.0 - (room - current) / previous)));
    return at(end, length * (current > 0 ? std::max(0.0, 1.0 - room / current) : 0.0));
  }

  wall_clock clock_;
  std::vector<account> accounts_;  // fixed at construction: the index points into it
  boost::unordered_flat_map<std::string, std::size_t, detail::string_hash, std::equal_to<>> index_;
  mutable std::mutex mutex_;
  std::string replica_;       // this replica's name in the shared store; "" : none
  bool away_ = false;         // the last sync with the shared store failed
  std::size_t replicas_ = 1;  // replicas the store has seen syncing lately
};

}  // namespace llmgate::inline v0
