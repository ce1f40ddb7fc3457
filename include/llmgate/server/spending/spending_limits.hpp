// spending_limits: what a tenant may spend, from its entry in the config's
// "tenants" list, and the periods spending is counted over:
//
//   {"name": "team-a", "api_key_env": "TEAM_A_KEY",
//    "budget": {"usd": 25, "period": "month"},
//    "rate_limits": {"requests_per_minute": 600, "input_tokens_per_minute": 200000,
//                    "output_tokens_per_minute": 40000}}
//
// A budget's period is "day" or "month" (UTC calendar days and months) or
// a duration ("12h", "7d", "90m", "3600s"), whose periods are counted from
// the Unix epoch, so that every replica's periods begin at the same
// instants. Spending over a period is the sum of what was spent in it and
// resets when it ends; the per-minute limits count a minute that slides
// (server/spending/spending_ledger.hpp). 0 or absent: no such limit.
#pragma once

#include <charconv>     // std::from_chars
#include <chrono>       // std::chrono
#include <cstdint>      // std::int64_t, std::uint64_t
#include <optional>     // std::optional
#include <string>       // std::string
#include <string_view>  // std::string_view

#include <boost/json/object.hpp>  // boost::json::object

#include "llmgate/config/config_reader.hpp"  // config_reader, refuse, only_known_keys
#include "llmgate/version.hpp"               // the inline versioned namespace

namespace llmgate::inline v0 {

/// A stretch of time spending is counted over: a UTC calendar day or
/// month, or a fixed duration counted from the Unix epoch.
class spending_period {
 public:
  using seconds = std::chrono::sys_seconds;

  /// "day", "month", or a whole number followed by s, m, h or d; nullopt
  /// for anything else.
  static std::optional<spending_period> parse(std::string_view text) {
    if (text == "day") return spending_period(unit::day, std::chrono::days(1), text);
    if (text == "month") return spending_period(unit::month, std::chrono::days(31), text);
    if (text.size() < 2) return std::nullopt;
    std::int64_t count = 0;
    const std::string_view digits = text.substr(0, text.size() - 1);
    const auto [end, problem] = std::from_chars(digits.data(), digits.data() + digits.size(), count);
    if (problem != std::errc{} || end != digits.data() + digits.size() || count <= 0 || count > 3660 * 86'400)
      return std::nullopt;
    const std::int64_t scale = text.back() == 's' ? 1 : text.back() == 'm' ? 60 : text.back() == 'h' ? 3600 : text.back() == 'd' ? 86'400 : 0;
    if (scale == 0 || count > 3660 * 86'400 / scale) return std::nullopt;
    return spending_period(unit::duration, std::chrono::seconds(count * scale), text);
  }

  static spending_period minute() { return spending_period(unit::duration, std::chrono::minutes(1), "1m"); }

  /// The period holding `t`: its first second.
  seconds start_of(std::chrono::system_clock::time_point t) const {
    const auto second = std::chrono::floor<std::chrono::seconds>(t);
    switch (unit_) {
      case unit::day:
        return std::chrono::floor<std::chrono::days>(second);
      case unit::month: {
        const std::chrono::year_month_day date(std::chrono::floor<std::chrono::days>(second));
        return std::chrono::sys_days(date.year() / date.month() / 1);
      }
      case unit::duration:
        break;
    }
    const auto since_epoch = second.time_since_epoch();
    return seconds(since_epoch - (since_epoch % length_ + length_) % length_);
  }

  /// The period after the one beginning at `start`.
  seconds next(seconds start) const {
    if (unit_ != unit::month) return start + length_;
    const std::chrono::year_month_day date(std::chrono::floor<std::chrono::days>(start));
    return std::chrono::sys_days(date.year() / date.month() / 1 + std::chrono::months(1));
  }

  /// As the config spells it ("month", "12h").
  const std::string& text() const noexcept { return text_; }

 private:
  enum class unit : unsigned char { day, month, duration };

  spending_period(unit u, std::chrono::seconds length, std::string_view text) : unit_(u), length_(length), text_(text) {}

  unit unit_;
  std::chrono::seconds length_;  // a month's is only an upper bound: next() counts months
  std::string text_;
};

/// A tenant's limits: a budget in US dollars per period, and requests and
/// tokens per minute.
struct spending_limits {
  double budget_usd = 0;  ///< 0: no budget
  std::optional<spending_period> budget_period = {};
  std::uint64_t requests_per_minute = 0;
  std::uint64_t input_tokens_per_minute = 0;
  std::uint64_t output_tokens_per_minute = 0;

  bool any() const noexcept {
    return budget_usd > 0 || requests_per_minute > 0 || input_tokens_per_minute > 0 || output_tokens_per_minute > 0;
  }

  /// A tenant entry's "budget" and "rate_limits", at `where` ("tenants[i]").
  static spending_limits read(const boost::json::object& tenant, std::string_view where) {
    using read = detail::config_reader;
    spending_limits limits;
    if (const auto* budget = read::object(tenant, "budget", where)) {
      const std::string path = detail::config_path(where, "budget");
      detail::only_known_keys(*budget, path, {"usd", "period"});
      limits.budget_usd = read::number(*budget, "usd", path, 0);
      if (!(limits.budget_usd > 0) || limits.budget_usd > 1e12)
        detail::refuse(detail::config_path(path, "usd"), "must be a number of US dollars above 0");
      const std::string period = read::string(*budget, "period", path);
      limits.budget_period = spending_period::parse(period);
      if (!limits.budget_period)
        detail::refuse(detail::config_path(path, "period"),
                       "must be \"day\", \"month\" or a duration such as \"12h\", \"7d\", \"90m\" or \"3600s\"" +
                           (period.empty() ? std::string() : " (not \"" + period + "\")"));
    }
    if (const auto* rates = read::object(tenant, "rate_limits", where)) {
      const std::string path = detail::config_path(where, "rate_limits");
      detail::only_known_keys(*rates, path,
                              {"requests_per_minute", "input_tokens_per_minute", "output_tokens_per_minute"});
      limits.requests_per_minute = read::count(*rates, "requests_per_minute", path, 0);
      limits.input_tokens_per_minute = read::count(*rates, "input_tokens_per_minute", path, 0);
      limits.output_tokens_per_minute = read::count(*rates, "output_tokens_per_minute", path, 0);
      for (const auto key : {"requests_per_minute", "input_tokens_per_minute", "output_tokens_per_minute"})
        detail::within<std::uint64_t>(detail::config_path(path, key), read::count(*rates, key, path, 0), 0,
                                      std::uint64_t{1} << 50);
    }
    return limits;
  }
};

}  // namespace llmgate::inline v0
