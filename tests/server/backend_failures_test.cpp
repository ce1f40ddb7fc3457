// client_failure_of for every kind of backend failure: the status a
// client gets, its error object's four fields, Retry-After, and that no
// message carries the backend's name or URL that the error's what() has.
#include <chrono>  // std::chrono
#include <string>  // std::string

#include <boost/json/parse.hpp>      // boost::json::parse
#include <boost/json/serialize.hpp>  // boost::json::serialize
#include <boost/test/unit_test.hpp>

#include "llmgate/server/client_failure.hpp"

namespace {

using namespace llmgate;
using namespace std::chrono_literals;
using boost::beast::http::status;

backend_error status_error(unsigned code, const char* upstream, bool retryable = false,
                           std::optional<std::chrono::milliseconds> after = {}) {
  return backend_error(errc::upstream_error, "local: HTTP " + std::to_string(code),
                       {.backend = "local", .status = code,
                        .upstream_error = boost::json::parse(upstream).as_object(),
                        .retryable = retryable, .retry_after = after});
}

backend_error transport_error(errc code) {
  return backend_error(code, "local: POST http://10.0.0.7:8080/v1/chat/completions: connecting: refused",
                       {.backend = "local", .retryable = true});
}

const boost::json::object& error_of(const client_failure& failure) { return failure.body.at("error").as_object(); }

}  // namespace

BOOST_AUTO_TEST_SUITE(backend_failures_test)

BOOST_AUTO_TEST_CASE(a_refused_request_keeps_its_status_and_the_upstreams_fields) {
  const auto refused = client_failure_of(status_error(
      413, R"({"message": "body too large", "type": "invalid_request_error", "param": "messages", "code": "too_big", "n": 1})"));
  BOOST_TEST(static_cast<unsigned>(refused.status) == 413u);
  BOOST_TEST(error_of(refused).size() == 4u);  // OpenAI's four, no more
  BOOST_TEST(error_of(refused).at("message").as_string() == "body too large");
  BOOST_TEST(error_of(refused).at("param").as_string() == "messages");
  BOOST_TEST(error_of(refused).at("code").as_string() == "too_big");
  BOOST_TEST(!refused.retry_after.has_value());

  // llama.cpp's numeric code is not OpenAI's string one: null.
  const auto bare = client_failure_of(status_error(400, R"({"message": "bad", "code": 400})"));
  BOOST_TEST(static_cast<unsigned>(bare.status) == 400u);
  BOOST_TEST(error_of(bare).at("type").as_string() == "invalid_request_error");
  BOOST_TEST(error_of(bare).at("code").is_null());
  BOOST_TEST(error_of(bare).at("param").is_null());

  const auto silent = client_failure_of(status_error(422, "{}"));
  BOOST_TEST(static_cast<unsigned>(silent.status) == 422u);
  BOOST_TEST(error_of(silent).at("message").as_string() == "The upstream model server refused the request (HTTP 422).");
  BOOST_TEST(static_cast<unsigned>(client_failure_of(status_error(418, "{}")).status) == 400u);  // no name in Beast

  const auto overflow = client_failure_of(status_error(413, R"({"message": "too long", "code": "context_length_exceeded"})"));
  BOOST_TEST(static_cast<unsigned>(overflow.status) == 400u);
}

BOOST_AUTO_TEST_CASE(waiting_and_configuration_errors_are_502_naming_no_backend) {
  for (const unsigned code : {401u, 403u, 404u, 408u, 409u, 500u, 503u}) {
    const auto failed = client_failure_of(status_error(code, R"({"message": "nope"})", code >= 408));
    BOOST_TEST(static_cast<unsigned>(failed.status) == 502u);
    BOOST_TEST(error_of(failed).at("message").as_string() ==
               "The upstream model server failed: HTTP " + std::to_string(code) + ": nope");
    BOOST_TEST(error_of(failed).at("type").as_string() == "upstream_error");
    BOOST_TEST(error_of(failed).at("code").as_string() == "upstream_error");
  }
  const auto in_stream = client_failure_of(status_error(0, R"({"message": "slot unavailable"})"));
  BOOST_TEST(error_of(in_stream).at("message").as_string() ==
             "The upstream model server failed: it reported an error: slot unavailable");
  // Out of quota: waiting never cures it, and it is the gateway's account, not the client's.
  const auto quota = client_failure_of(status_error(429, R"({"message": "quota", "code": "insufficient_quota"})"));
  BOOST_TEST(static_cast<unsigned>(quota.status) == 502u);
}

BOOST_AUTO_TEST_CASE(a_rate_limit_is_429_with_the_wait_rounded_up) {
  const auto limited = client_failure_of(status_error(429, R"({"message": "slow down"})", true, 2500ms));
  BOOST_TEST(static_cast<unsigned>(limited.status) == 429u);
  BOOST_TEST(limited.retry_after.value().count() == 3);
  BOOST_TEST(error_of(limited).at("code").as_string() == "rate_limit_exceeded");
  BOOST_TEST(error_of(limited).at("message").as_string() ==
             "The upstream model server is rate limiting requests; retry later. It said: slow down");
  BOOST_TEST(!client_failure_of(status_error(429, "{}", true)).retry_after.has_value());
}

BOOST_AUTO_TEST_CASE(an_overloaded_upstream_is_529_overloaded_error) {
  const auto overloaded = client_failure_of(status_error(529, R"({"message": "Overloaded"})", true, 1200ms));
  BOOST_TEST(static_cast<unsigned>(overloaded.status) == 529u);
  BOOST_TEST(overloaded.retry_after.value().count() == 2);
  BOOST_TEST(error_of(overloaded).at("type").as_string() == "overloaded_error");
  BOOST_TEST(error_of(overloaded).at("code").as_string() == "upstream_overloaded");
  BOOST_TEST(error_of(overloaded).at("message").as_string() ==
             "The upstream model server is overloaded; retry later. It said: Overloaded");
}

BOOST_AUTO_TEST_CASE(network_timeout_and_circuit_failures_say_what_without_where) {
  const auto unreachable = client_failure_of(transport_error(errc::upstream_unreachable));
  BOOST_TEST(static_cast<unsigned>(unreachable.status) == 502u);
  BOOST_TEST(error_of(unreachable).at("message").as_string() ==
             "The upstream model server failed: it could not be reached, or closed the connection.");
  BOOST_TEST(error_of(unreachable).at("code").as_string() == "upstream_unreachable");

  const auto timeout = client_failure_of(transport_error(errc::upstream_timeout));
  BOOST_TEST(static_cast<unsigned>(timeout.status) == 504u);
  BOOST_TEST(error_of(timeout).at("code").as_string() == "upstream_timeout");

  const auto malformed = client_failure_of(transport_error(errc::upstream_protocol_error));
  BOOST_TEST(static_cast<unsigned>(malformed.status) == 502u);
  BOOST_TEST(error_of(malformed).at("code").as_string() == "upstream_protocol_error");

  const auto open = client_failure_of(transport_error(errc::circuit_open));
  BOOST_TEST(static_cast<unsigned>(open.status) == 502u);
  BOOST_TEST(error_of(open).at("code").as_string() == "circuit_open");

  for (const auto* failure : {&unreachable, &timeout, &malformed, &open}) {
    const std::string text = boost::json::serialize(failure->body);
    BOOST_TEST(text.find("10.0.0.7") == std::string::npos);
    BOOST_TEST(text.find("local") == std::string::npos);
  }
}

BOOST_AUTO_TEST_SUITE_END()
