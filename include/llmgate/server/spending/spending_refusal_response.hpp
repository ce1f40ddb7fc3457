// The answer to a request over its tenant's spending limits: 429, as
// OpenAI answers an exhausted quota (type "insufficient_quota") and a rate
// limit (type "rate_limit_error"), so that clients' existing handling of
// both applies; 402 would reach OpenAI's SDKs as an unknown status. The
// message names the limit, what was used and when it resets; Retry-After
// says in how many seconds (none when the request can never pass: a prompt
// larger than the input limit), and x-llmgate-limit names the limit. The
// body is OpenAI's error object, or what `write_error` makes of it (the
// chat handler's dialect: Anthropic's rate_limit_error, say).
#pragma once

#include <algorithm>    // std::max, std::min
#include <chrono>       // std::chrono
#include <cmath>        // std::ceil, std::floor, std::log10
#include <cstdio>       // std::snprintf
#include <ctime>        // std::time_t, gmtime_r, std::strftime
#include <string>       // std::string
#include <string_view>  // std::string_view

#include <boost/beast/http/field.hpp>  // boost::beast::http::field
#include <boost/json/object.hpp>       // boost::json::object

#include "llmgate/server/http/responses.hpp"            // json_response, openai_error, http_response
#include "llmgate/server/spending/spending_ledger.hpp"  // spending_refusal, limit_name

namespace llmgate::inline v0 {

namespace detail {

// "2026-12-01T00:00:00Z"
inline std::string utc_text(std::chrono::system_clock::time_point t) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(t);
  std::tm parts{};
  gmtime_r(&seconds, &parts);
  char text[32];
  return std::string(text, std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts));
}

// US dollars to four significant digits (two decimals at least), never in
// exponent form: "0.000045", "0.012", "25.00".
inline std::string dollars(double usd) {
  int decimals = 2;
  if (usd > 0 && usd < 1) decimals = std::min(12, 3 - static_cast<int>(std::floor(std::log10(usd))));
  char text[64];
  std::string out(text, static_cast<std::size_t>(std::max(0, std::snprintf(text, sizeof text, "%.*f", decimals, usd))));
  const std::size_t keep = out.find('.') + 3;
  while (out.size() > keep && out.back() == '0') out.pop_back();
  return out;
}

// Six significant digits at most: "50", "1234.5", "59.99".
inline std::string short_number(double value) {
  char text[32];
  const int n = std::snprintf(text, sizeof text, "%.6g", value);
  return std::string(text, static_cast<std::size_t>(std::max(0, n)));
}

}  // namespace detail

template <class WriteError = http_response (*)(http_status, const boost::json::object&)>
http_response spending_refusal_response(std::string_view tenant, const spending_refusal& refused,
                                        std::chrono::system_clock::time_point now,
                                        WriteError write_error = &json_response) {
  using detail::short_number;
  const std::string who = "Tenant `" + std::string(tenant) + "`";
  const std::string share = refused.local_share ? " (this replica's share while the shared store is away)" : "";
  std::string message;
  if (refused.limit == spending_measure::usd) {
    message = who + " has spent $" + detail::dollars(refused.used) + " of its budget of $" + detail::dollars(refused.allowed) +
              " per " + refused.period + share + "; the budget resets at " + detail::utc_text(*refused.retry_at) + ".";
  } else {
    const std::string unit = refused.limit == spending_measure::requests       ? "requests"
                             : refused.limit == spending_measure::input_tokens ? "input tokens"
                                                                               : "output tokens";
    const std::string limit = short_number(refused.allowed) + " " + unit + " per minute";
    if (!refused.retry_at)
      message = "This request's prompt is about " + short_number(refused.requested) + " input tokens, more than " +
                std::string(tenant) + "'s limit of " + limit + ": it cannot pass as it is.";
    else
      message = who + " is at its limit of " + limit + share + ": " + short_number(refused.used) +
                " used in the last minute" +
                (refused.limit == spending_measure::input_tokens
                     ? " and this request's prompt is about " + short_number(refused.requested) + " more"
                     : std::string()) +
                ".";
  }
  const bool budget = refused.limit == spending_measure::usd;
  auto response = write_error(http_status::too_many_requests,
                              openai_error(message, budget ? "insufficient_quota" : "rate_limit_error",
                                           budget ? "budget_exceeded" : "rate_limit_exceeded"));
  if (refused.retry_at) {
    const std::chrono::duration<double> wait = *refused.retry_at - now;
    response.set(boost::beast::http::field::retry_after,
                 std::to_string(std::max<long long>(1, static_cast<long long>(std::ceil(wait.count())))));
  }
  response.set("x-llmgate-limit", limit_name(refused.limit));
  return response;
}

}  // namespace llmgate::inline v0
