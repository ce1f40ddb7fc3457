// upstream: what every adapter does with its model server over HTTP: send
// JSON with its headers, read JSON or a stream back, and turn each failure
// into a backend_error that says whether to retry and when.
#pragma once

#include <algorithm>    // std::max
#include <array>        // std::array (a traceparent)
#include <charconv>     // std::from_chars
#include <chrono>       // std::chrono::milliseconds, system_clock
#include <ctime>        // std::tm, timegm
#include <cstdio>       // std::sscanf
#include <memory>       // std::shared_ptr
#include <optional>     // std::optional
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::pair
#include <vector>       // std::vector

#include <boost/asio/awaitable.hpp>  // net::awaitable
#include <boost/json/monotonic_resource.hpp>  // an arena for answers decoded at once
#include <boost/json/parse.hpp>      // boost::json::parse
#include <boost/json/serialize.hpp>  // boost::json::serialize
#include <boost/json/value.hpp>      // boost::json::value

#include "llmgate/backend/backend_error.hpp"
#include "llmgate/backend/detail/context_overflow.hpp"  // mark_context_overflow
#include "llmgate/chat/chat.hpp"  // chat_request, chat_response
#include "llmgate/backend/http_client.hpp"
#include "llmgate/backend/price_table.hpp"
#include "llmgate/backend/url.hpp"
#include "llmgate/error.hpp"

namespace llmgate::inline v0::detail {

using namespace std::chrono_literals;

/// A duration as rate-limit headers write it: "20ms", "1.5s", "6m0s",
/// "1h2m3s", or a plain number of seconds.
inline std::optional<std::chrono::milliseconds> parse_duration(std::string_view text) {
  double total_ms = 0;
  bool any = false;
  while (!text.empty()) {
    double number = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
    if (ec != std::errc() || number < 0) return std::nullopt;
    text.remove_prefix(static_cast<std::size_t>(end - text.data()));
    double unit_ms = 1000;  // bare number: seconds
    if (text.starts_with("ms")) unit_ms = 1, text.remove_prefix(2);
    else if (text.starts_with("s")) text.remove_prefix(1);
    else if (text.starts_with("m")) unit_ms = 60'000, text.remove_prefix(1);
    else if (text.starts_with("h")) unit_ms = 3'600'000, text.remove_prefix(1);
    else if (!text.empty()) return std::nullopt;
    total_ms += number * unit_ms;
    any = true;
  }
  if (!any || total_ms > 1e12) return std::nullopt;
  return std::chrono::milliseconds(static_cast<long long>(total_ms + 0.5));
}

/// How long until `text` (an RFC 3339 timestamp such as
/// "2024-05-01T12:00:30Z", or an HTTP date such as "Wed, 01 May 2024
/// 12:00:30 GMT"), from `now`; zero when it is past.
inline std::optional<std::chrono::milliseconds> parse_time_until(
    std::string_view text, std::chrono::system_clock::time_point now) {
  static constexpr std::string_view months = "JanFebMarAprMayJunJulAugSepOctNovDec";
  std::tm time{};
  const std::string copy(text);
  char month[4] = {};
  double seconds = 0;
  if (std::sscanf(copy.c_str(), "%4d-%2d-%2dT%2d:%2d:%lf", &time.tm_year, &time.tm_mon,
                  &time.tm_mday, &time.tm_hour, &time.tm_min, &seconds) == 6) {
    time.tm_mon -= 1;
  } else if (std::sscanf(copy.c_str(), "%*3s, %2d %3s %4d %2d:%2d:%lf", &time.tm_mday, month,
                         &time.tm_year, &time.tm_hour, &time.tm_min, &seconds) == 6 &&
             months.find(month) != std::string_view::npos && months.find(month) % 3 == 0) {
    time.tm_mon = static_cast<int>(months.find(month) / 3);
  } else {
    return std::nullopt;
  }
  time.tm_year -= 1900;
  time.tm_sec = 0;
  const std::time_t whole = timegm(&time);  // the timestamp is UTC ("Z" or GMT)
  if (whole == -1) return std::nullopt;
  const auto at = std::chrono::system_clock::from_time_t(whole) +
                  std::chrono::milliseconds(static_cast<long long>(seconds * 1000));
  return std::max(std::chrono::milliseconds(0),
                  std::chrono::duration_cast<std::chrono::milliseconds>(at - now));
}

/// How long a server asked us to wait, from (first match wins):
/// retry-after-ms (OpenAI), Retry-After in seconds or as an HTTP date, and
/// the reset time of a rate limit whose remaining count is 0 (OpenAI's
/// x-ratelimit-reset-requests/-tokens durations, Anthropic's
/// anthropic-ratelimit-*-reset timestamps).
inline std::optional<std::chrono::milliseconds> retry_delay(
    const http::fields& headers,
    std::chrono::system_clock::time_point now = std::chrono::system_clock::now()) {
  const auto header = [&](std::string_view name) -> std::optional<std::string_view> {
    const auto found = headers.find(name);
    if (found == headers.end()) return std::nullopt;
    return std::string_view(found->value().data(), found->value().size());
  };
  if (const auto ms = header("retry-after-ms")) {
    if (auto delay = parse_duration(std::string(*ms) + "ms")) return delay;
  }
  if (const auto after = header("retry-after")) {
    if (auto delay = parse_duration(*after)) return delay;
    if (auto delay = parse_time_until(*after, now)) return delay;
  }
  std::optional<std::chrono::milliseconds> longest;
  for (const std::string_view prefix : {"x-ratelimit-", "anthropic-ratelimit-"}) {
    for (const std::string_view limit :
         {"requests", "tokens", "input-tokens", "output-tokens"}) {
      const std::string name(prefix);
      const auto remaining = header(name + "remaining-" + std::string(limit));
      const auto reset = header(name + "reset-" + std::string(limit));
      const auto anthropic_remaining = header(name + std::string(limit) + "-remaining");
      const auto anthropic_reset = header(name + std::string(limit) + "-reset");
      const auto used_up = remaining ? remaining : anthropic_remaining;
      const auto when = reset ? reset : anthropic_reset;
      if (!used_up || *used_up != "0" || !when) continue;
      auto delay = parse_duration(*when);
      if (!delay) delay = parse_time_until(*when, now);
      if (delay && (!longest || *delay > *longest)) longest = delay;
    }
  }
  return longest;
}

/// The backend_error for an error status: the upstream's error object kept
/// as it sent it ({"error": {...}} of OpenAI and Anthropic; Ollama's
/// {"error": "text"} becomes {"message": "text"}; an object with a
/// "message" and no "error" (vLLM's) is the error object; a body that is not JSON
/// becomes {"message": <its first 512 bytes>}). 429, 408, 409 and 5xx are
/// retryable, except OpenAI's insufficient_quota and a prompt longer than
/// the model's context (code context_length_exceeded from then on), which
/// waiting never cures.
inline backend_error upstream_failure(std::string_view backend, const http_response& response) {
  const unsigned status = response.result_int();
  boost::json::object upstream;
  boost::system::error_code code;
  const auto body = boost::json::parse(response.body(), code);
  const auto* inner = !code && body.is_object() ? body.get_object().if_contains("error") : nullptr;
  if (inner && inner->is_object()) upstream = inner->get_object();
  else if (inner && inner->is_string()) upstream["message"] = inner->get_string();
  else if (!code && body.is_object() && body.get_object().contains("message")) upstream = body.get_object();
  else upstream["message"] = response.body().substr(0, 512);

  const auto text = [&](std::string_view key) -> std::string_view {
    const auto* field = upstream.if_contains(key);
    return field && field->is_string() ? std::string_view(field->get_string()) : "";
  };
  const bool out_of_quota = text("code") == "insufficient_quota" || text("type") == "insufficient_quota";
  const bool overflow = status != 429 && mark_context_overflow(upstream);
  const bool retryable =
      !out_of_quota && !overflow && (status == 429 || status == 408 || status == 409 || status >= 500);
  std::string message = std::string(backend) + ": HTTP " + std::to_string(status);
  if (!text("message").empty()) message += ": " + std::string(text("message"));
  return backend_error(errc::upstream_error, message,
                       {.backend = std::string(backend),
                        .status = status,
                        .upstream_error = std::move(upstream),
                        .retryable = retryable,
                        .retry_after = retryable ? retry_delay(response) : std::nullopt});
}

/// An error an adapter raised before or without an answer (network,
/// timeout, malformed reply) as a backend_error. Network failures and
/// timeouts are retryable; a malformed reply is not.
inline backend_error transport_failure(std::string_view backend, const error& failure) {
  const auto code = static_cast<errc>(failure.code().value());
  const bool retryable = code == errc::upstream_unreachable || code == errc::upstream_timeout;
  // what() ends with the code's message, which backend_error appends again.
  std::string_view context = failure.what();
  if (const std::string said = ": " + failure.code().message(); context.ends_with(said))
    context.remove_suffix(said.size());
  return backend_error(code, std::string(backend) + ": " + std::string(context),
                       {.backend = std::string(backend), .retryable = retryable});
}

/// What every adapter sets on an answer: the backend's name, the model
/// where the server named none, and the cost, priced by the server's
/// (often dated) model name, else by the name asked for.
inline void finish_response(chat_response& response, const chat_request& request,
                            std::string_view backend, std::string_view model_override,
                            const price_table* prices) {
  response.backend = backend;
  if (response.model.empty()) response.model = model_override.empty() ? request.model : model_override;
  if (!prices) return;
  const model_price* price = prices->find(response.model);
  if (!price) price = prices->find(model_override.empty() ? request.model : model_override);
  if (price) response.cost_usd = price_table::cost(*price, response.usage);
}

/// decode(the JSON tree of `answer`), the tree living only while decode
/// copies what it needs out; an answer that is not JSON is an
/// upstream_protocol_error. Not a coroutine: the arena's first block is on
/// the caller's stack, not in a coroutine frame.
template <class Decode>
auto decode_json_answer(std::string_view answer, const Decode& decode) -> decltype(decode(boost::json::value())) {
  unsigned char first_block[4096];
  boost::json::monotonic_resource memory(first_block, sizeof first_block);
  boost::system::error_code code;
  auto value = boost::json::parse(answer, code, &memory);
  if (code) throw error(errc::upstream_protocol_error, "answer is not JSON (" + code.message() + ")");
  return decode(value);
}

/// One model server: its base URL, the headers every request carries (and
/// a chat request's trace headers, where a POST is given them), and the
/// client that talks to it. (`trace` is a pointer, not a reference with a
/// default: GCC 12 destroys a default argument's temporary twice when the
/// call is co_awaited.) Every method throws backend_error only
/// (cancellation aside).
class upstream {
 public:
  upstream(std::shared_ptr<http_client> client, std::string backend, const std::string& base,
           std::vector<std::pair<std::string, std::string>> headers)
      : client_(std::move(client)),
        backend_(std::move(backend)),
        url_(base_url::parse(base)),
        headers_(std::move(headers)) {}

  const std::string& backend() const noexcept { return backend_; }
  http_client& client() const noexcept { return *client_; }

  /// POSTs `body` (JSON text) to base path + `path` and returns
  /// decode(JSON answer); the llmgate::errors decode throws become
  /// backend_errors.
  template <class Decode>
  auto post(std::string_view path, std::string body, Decode decode, const trace_context* trace = nullptr)
      -> net::awaitable<decltype(decode(boost::json::value()))> {
    return exchange(make_request(http::verb::post, path, std::move(body), trace),
                    tree_decoder<Decode>{std::move(decode)});
  }

  /// post() of a JSON object, serialised now (not a coroutine: the
  /// object need not outlive the call).
  template <class Decode>
  auto post(std::string_view path, const boost::json::object& body, Decode decode, const trace_context* trace = nullptr)
      -> net::awaitable<decltype(decode(boost::json::value()))> {
    return post(path, boost::json::serialize(body), std::move(decode), trace);
  }

  /// post() for a decoder of the answer's text, decode(std::string_view),
  /// that reads it without a tree (or with decode_json_answer).
  template <class Decode>
  auto post_text(std::string_view path, std::string body, Decode decode, const trace_context* trace = nullptr)
      -> net::awaitable<decltype(decode(std::string_view()))> {
    return exchange(make_request(http::verb::post, path, std::move(body), trace), std::move(decode));
  }

  /// GETs base path + `path` and returns decode(JSON answer).
  template <class Decode>
  auto get(std::string_view path, Decode decode)
      -> net::awaitable<decltype(decode(boost::json::value()))> {
    return exchange(make_request(http::verb::get, path, std::nullopt, nullptr), tree_decoder<Decode>{std::move(decode)});
  }

  /// POSTs `body` (JSON text) and hands each piece of the 2xx answer to
  /// `on_body`; exceptions on_body throws are converted like the client's own.
  net::awaitable<void> post_streaming(std::string_view path, std::string body, body_handler on_body,
                                      const trace_context* trace = nullptr) {
    try {
      const auto response = co_await client_->send_streaming(
          url_, make_request(http::verb::post, path, std::move(body), trace), std::move(on_body));
      if (response.result_int() / 100 != 2) throw upstream_failure(backend_, response);
    } catch (const backend_error&) {
      throw;
    } catch (const error& failure) {
      throw transport_failure(backend_, failure);
    }
  }

 private:
  http_request make_request(http::verb verb, std::string_view path, std::optional<std::string> body,
                            const trace_context* trace) const {
    std::string target;
    target.reserve(url_.path.size() + path.size());
    target.append(url_.path).append(path);
    http_request request(verb, target, 11);
    for (const auto& [name, value] : headers_) request.set(name, value);
    request.set(http::field::accept, "application/json, text/event-stream, application/x-ndjson");
    if (trace && !trace->empty()) {  // inserted, not set, and named, not looked up: new, and unknown to Beast
      const std::array<char, 55> traceparent = trace->traceparent();
      request.insert(http::field::unknown, "traceparent", std::string_view(traceparent.data(), traceparent.size()));
      if (!trace->state.empty()) request.insert(http::field::unknown, "tracestate", trace->state);
    }
    if (body) {
      request.set(http::field::content_type, "application/json");
      request.body() = std::move(*body);
    }
    return request;
  }

  // A decoder of the parsed answer as a decoder of its text.
  template <class Decode>
  struct tree_decoder {
    Decode decode;
    auto operator()(std::string_view text) const { return decode_json_answer(text, decode); }
  };

  // Returns decode(answer's text) (a 2xx answer; others are errors).
  template <class Decode>
  auto exchange(http_request request, Decode decode)
      -> net::awaitable<decltype(decode(std::string_view()))> {
    try {
      const auto response = co_await client_->send(url_, std::move(request));
      if (response.result_int() / 100 != 2) throw upstream_failure(backend_, response);
      co_return decode(std::string_view(response.body()));
    } catch (const backend_error&) {
      throw;
    } catch (const error& failure) {
      throw transport_failure(backend_, failure);
    }
  }

  std::shared_ptr<http_client> client_;
  std::string backend_;
  base_url url_;
  std::vector<std::pair<std::string, std::string>> headers_;
};

}  // namespace llmgate::inline v0::detail
