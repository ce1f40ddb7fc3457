// request_log: one line for every request the gateway answers, whoever
// answered it (401, 404, 413 too), with its status; the cache's verdict
// only for requests that reached the pipeline; numbers as plain decimals,
// in the log and in response bodies (json_appender).
#include <charconv>  // std::from_chars
#include <cmath>     // NAN
#include <cstdio>    // std::tmpfile
#include <regex>     // std::regex
#include <string>    // std::string
#include <vector>    // std::vector

#include <boost/test/unit_test.hpp>

#include "demo_gateway.hpp"
#include "gateway_client.hpp"
#include "llmgate/wire/detail/json_appender.hpp"
#include "llmgate/server/gateway.hpp"

namespace {

using namespace llmgate;
using namespace llmgate::test;
namespace json = boost::json;

std::string plain(double d) {
  std::string text;
  detail::json_appender(text).number(d);
  return text;
}

// The request lines of a log (not its start and stop events).
std::vector<std::pair<std::string, json::object>> request_lines(const std::string& log) {
  std::vector<std::pair<std::string, json::object>> lines;
  for (std::size_t at = 0, end; (end = log.find('\n', at)) != std::string::npos; at = end + 1) {
    const std::string text = log.substr(at, end - at);
    auto line = json::parse(text).as_object();
    if (line.contains("path")) lines.emplace_back(text, std::move(line));
  }
  return lines;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(request_log_test)

BOOST_AUTO_TEST_CASE(doubles_are_plain_decimals) {
  BOOST_TEST(plain(1795692372.1728883) == "1795692372.1728883");
  BOOST_TEST(plain(0.0) == "0.0");
  BOOST_TEST(plain(-0.5) == "-0.5");
  BOOST_TEST(plain(12.0) == "12.0");
  BOOST_TEST(plain(0.9) == "0.9");
  BOOST_TEST(plain(3.5e-7) == "0.00000035");
  BOOST_TEST(plain(1.2345678901234567e-05) == "0.000012345678901234568");
  BOOST_TEST(plain(1e-300) == "1e-300");  // beyond what a decimal should spell out
  BOOST_TEST(plain(1e21) == "1e+21");
  BOOST_TEST(plain(NAN) == "null");
  std::string tree;
  detail::json_appender(tree).value(json::parse(R"({"a":0.9,"b":[1,-2,0.0,true,null],"c":"x\"y","d":{}})"));
  BOOST_TEST(tree == R"({"a":0.9,"b":[1,-2,0.0,true,null],"c":"x\"y","d":{}})");
  const std::string time = plain(1795692372.1728883);
  double read_back = 0;
  std::from_chars(time.data(), time.data() + time.size(), read_back);
  BOOST_TEST(read_back == 1795692372.1728883);  // the shortest digits that read back exactly
}

BOOST_AUTO_TEST_CASE(every_request_gets_one_line_with_its_status) {
  std::FILE* log = std::tmpfile();
  auto config = demo_config();
  config.limits.max_body_bytes = 1000;
  config.log.requests = true;
  std::string cost_text, stats_text;
  {
    gateway server(config, log);
    server.start();
    const auto port = server.port();
    const auto answered = post(port, "/v1/chat/completions", chat_body("hello"), "key-acme");
    cost_text = answered.body;
    post(port, "/v1/chat/completions", chat_body("hello"), "key-acme");  // an exact hit
    post(port, "/v1/chat/completions", chat_body("a stream", true), "key-acme");
    post(port, "/v1/chat/completions", "{not json", "key-acme");
    post(port, "/v1/chat/completions", chat_body("hello", false, "other"), "key-acme");
    post(port, "/v1/chat/completions", chat_body("hello"), "key-nobody");
    get(port, "/nowhere?key=secret-in-query");
    post(port, "/v1/chat/completions", chat_body(std::string(2000, 'x')), "key-acme");
    get(port, "/healthz");
    stats_text = get(port, "/admin/stats", "admin-key").body;
  }
  const auto lines = request_lines(contents(log));
  // A JSON number with an exponent (a value, not the hex of an id inside a string).
  const std::regex exponent("[:,\\[]-?[0-9.]+[eE][-+]?[0-9]");
  std::fclose(log);
  struct expected {
    std::string method, path;
    unsigned status;
    const char* tenant;  // nullptr: none
    const char* cache;   // nullptr: never reached the pipeline
    bool stream;
  };
  const std::vector<expected> wanted = {
      {"POST", "/v1/chat/completions", 200, "acme", "miss", false},
      {"POST", "/v1/chat/completions", 200, "acme", "exact", false},
      {"POST", "/v1/chat/completions", 200, "acme", "miss", true},
      {"POST", "/v1/chat/completions", 400, "acme", nullptr, false},
      {"POST", "/v1/chat/completions", 404, "acme", nullptr, false},
      {"POST", "/v1/chat/completions", 401, nullptr, nullptr, false},
      {"GET", "/nowhere", 404, nullptr, nullptr, false},
      {"POST", "/v1/chat/completions", 413, "acme", nullptr, false},
      {"GET", "/healthz", 200, nullptr, nullptr, false},
      {"GET", "/admin/stats", 200, nullptr, nullptr, false},
  };
  BOOST_TEST_REQUIRE(lines.size() == wanted.size());
  for (std::size_t i = 0; i < wanted.size(); ++i) {
    const auto& [text, line] = lines[i];
    BOOST_TEST_CONTEXT("line " << i << ": " << text) {
      BOOST_TEST(line.at("method").as_string() == wanted[i].method);
      BOOST_TEST(line.at("path").as_string() == wanted[i].path);
      BOOST_TEST(line.at("status").as_int64() == wanted[i].status);
      BOOST_TEST(line.at("stream").as_bool() == wanted[i].stream);
      BOOST_TEST(line.contains("tenant") == (wanted[i].tenant != nullptr));
      if (wanted[i].tenant) BOOST_TEST(line.at("tenant").as_string() == wanted[i].tenant);
      BOOST_TEST(line.contains("cache") == (wanted[i].cache != nullptr));
      if (wanted[i].cache) {
        BOOST_TEST(line.at("cache").as_string() == wanted[i].cache);
        BOOST_TEST(text.find("\"saved_usd\":0.0") != std::string::npos);
      }
      BOOST_TEST(line.at("time").is_double());
      BOOST_TEST(line.at("latency_ms").is_double());
      BOOST_TEST(!std::regex_search(text, exponent));  // no 1.79E9, no 0E0
      BOOST_TEST(text.find("secret") == std::string::npos);
      BOOST_TEST(text.find("key-") == std::string::npos);
    }
  }
  // Response bodies too: the demo answer's cost (21 + 21 tokens at the demo's prices).
  BOOST_TEST(lines[0].first.find("\"cost_usd\":0.00001575") != std::string::npos, lines[0].first);
  BOOST_TEST(cost_text.find("\"cost_usd\":0.00001575") != std::string::npos, cost_text);
  BOOST_TEST(!std::regex_search(cost_text, exponent), cost_text);
  // And JSON built as a tree (json_response): the dashboard's figures.
  BOOST_TEST(stats_text.find("\"semantic_hit_rate\":0.0,") != std::string::npos, stats_text);
  BOOST_TEST(!std::regex_search(stats_text, exponent), stats_text);
}

BOOST_AUTO_TEST_SUITE_END()
