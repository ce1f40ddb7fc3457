// The gateway's handlers and dispatch table as functions of a request,
// with no socket: a test builds the request, calls the handler and reads
// the response (or, for a streamed answer, the bytes it wrote).
#include <chrono>    // std::chrono::seconds
#include <future>    // std::future_status
#include <optional>  // std::optional
#include <string>    // std::string
#include <vector>    // std::vector

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "llmgate/backend/scripted_backend.hpp"
#include "llmgate/pipeline/backend_stage.hpp"
#include "llmgate/pipeline/pipeline.hpp"
#include "llmgate/server/http/dispatch.hpp"
#include "llmgate/server/http/response_bytes.hpp"  // append_header_bytes (what a session sends first)
#include "llmgate/server/handlers/chat.hpp"
#include "llmgate/server/handlers/health.hpp"
#include "llmgate/server/handlers/models.hpp"

namespace {

using namespace llmgate;
namespace http = boost::beast::http;

// A response_stream that keeps what it is sent.
struct recorded_stream final : response_stream {
  std::string bytes;
  boost::asio::awaitable<void> start(const http::response_header<>& head) override {
    append_header_bytes(head, bytes);
    co_return;
  }
  boost::asio::awaitable<void> write(std::string_view more) override {
    bytes.append(more);
    co_return;
  }
};

http_request request_of(http::verb method, std::string target, std::string body = {}, std::string key = {}) {
  http_request request(method, target, 11);
  if (!key.empty()) request.set(http::field::authorization, "Bearer " + key);
  request.body() = std::move(body);
  request.prepare_payload();
  return request;
}

gateway_config small_config() {
  gateway_config config;
  config.backends = {{.name = "scripted", .kind = "demo"}};
  config.models = {{.name = "m", .backends = {"scripted"}}};
  config.tenants = {{"acme", "key-acme"}};
  config.admin.api_key = "admin";
  return config;
}

// Runs `handler` on `e` to its end, as a session would (deadline bound).
// Until the handler is done, not until `io` runs out of work: the request
// deadline's timer stays armed after a request (exchange.hpp), as on a
// connection that serves more; stop() lets it go, as a session's end does.
template <class Handler>
std::optional<http_response> run(boost::asio::io_context& io, Handler& handler, exchange& e) {
  auto done = boost::asio::co_spawn(io, handler(e), boost::asio::use_future);
  io.restart();
  while (done.wait_for(std::chrono::seconds(0)) != std::future_status::ready) io.run_one();
  e.deadline.stop();
  io.run();
  return done.get();
}

struct fixture {
  boost::asio::io_context io;
  recorded_stream out;
  std::shared_ptr<request_deadline> deadline = request_deadline::make(io.get_executor());
  gateway_config config = small_config();
};

}  // namespace

BOOST_FIXTURE_TEST_SUITE(handlers_test, fixture)

// The request deadline keeps one timer wait and re-arms it only when it
// fires before the deadline of the request then answered: a deadline armed
// after an earlier request's (still waiting) expires at its own time, one
// disarmed in time never cancels anything, and after stop() (a session's
// end) an arm() waits again.
BOOST_AUTO_TEST_CASE(the_request_deadline_expires_at_the_deadline_of_the_request_answered) {
  using clock = std::chrono::steady_clock;
  std::optional<clock::time_point> cancelled;
  const auto listen = [&] {
    cancelled.reset();
    deadline->slot().assign([&](boost::asio::cancellation_type) { cancelled = clock::now(); });
  };
  const auto run_for = [&](std::chrono::milliseconds time) {
    io.restart();
    io.run_for(time);
  };
  listen();
  deadline->arm(std::chrono::milliseconds(100));
  run_for(std::chrono::milliseconds(20));
  BOOST_TEST(!deadline->disarm());  // answered in time
  run_for(std::chrono::milliseconds(30));
  const auto armed = clock::now();
  deadline->arm(std::chrono::milliseconds(100));  // the first wait ends at about 100 ms, this deadline at 150
  run_for(std::chrono::milliseconds(300));
  BOOST_TEST_REQUIRE(cancelled.has_value());
  BOOST_TEST((*cancelled - armed >= std::chrono::milliseconds(100)));
  BOOST_TEST((*cancelled - armed < std::chrono::milliseconds(250)));
  BOOST_TEST(deadline->disarm());  // timed out
  BOOST_TEST(!deadline->disarm());

  listen();
  deadline->arm(std::chrono::milliseconds(50));
  BOOST_TEST(!deadline->disarm());
  run_for(std::chrono::milliseconds(150));
  BOOST_TEST(!cancelled.has_value());  // disarmed: its wait ended with nothing to cancel

  deadline->arm(std::chrono::milliseconds(500));
  deadline->stop();
  listen();
  const auto restarted = clock::now();
  deadline->arm(std::chrono::milliseconds(50));
  run_for(std::chrono::milliseconds(300));
  BOOST_TEST_REQUIRE(cancelled.has_value());
  BOOST_TEST((*cancelled - restarted < std::chrono::milliseconds(250)));
  BOOST_TEST(deadline->disarm());
  deadline->stop();
  deadline->slot().clear();
}

BOOST_AUTO_TEST_CASE(models_and_health_answer_from_the_request_alone) {
  const auto request = request_of(http::verb::get, "/v1/models");
  exchange e{.request = request, .out = out, .deadline = *deadline};
  const auto models = models_handler(config)(e);
  BOOST_TEST(models.result_int() == 200u);
  BOOST_TEST(models.body() == R"({"object":"list","data":[{"id":"m","object":"model","created":0,"owned_by":"llmgate"},)"
                              R"({"id":"llmgate-hashing","object":"model","created":0,"owned_by":"llmgate"}]})");
  std::atomic<bool> draining{false};
  BOOST_TEST(health_handler{&draining}(e).body() == R"({"status":"ok"})");
  draining = true;
  BOOST_TEST(health_handler{&draining}(e).result_int() == 503u);
}

BOOST_AUTO_TEST_CASE(the_dispatch_table_checks_keys_paths_and_methods) {
  const access_keys keys(config.tenants, config.admin);
  dispatch_table routes(keys);
  routes.add(http::verb::get, "/v1/models", route_access::tenant,
             [](exchange& e) { return text_response("text/plain", "for " + *e.tenant); })
      .add(http::verb::get, "/admin/stats", route_access::admin, [](exchange&) { return text_response("text/plain", "stats"); })
      .add(http::verb::get, "/healthz", route_access::open, [](exchange&) { return text_response("text/plain", "ok"); });
  const auto answer = [&](http::verb method, std::string target, std::string key = {}) {
    const auto request = request_of(method, std::move(target), {}, std::move(key));
    exchange e{.request = request, .out = out, .deadline = *deadline};
    return *run(io, routes, e);
  };
  BOOST_TEST(answer(http::verb::get, "/v1/models", "key-acme").body() == "for acme");
  BOOST_TEST(answer(http::verb::get, "/v1/models?x=1", "key-acme").body() == "for acme");
  BOOST_TEST(answer(http::verb::get, "/v1/models", "key-nobody").result_int() == 401u);
  BOOST_TEST(answer(http::verb::post, "/v1/models", "key-acme").result_int() == 405u);
  BOOST_TEST(answer(http::verb::post, "/v1/models").result_int() == 401u);
  BOOST_TEST(answer(http::verb::get, "/v1/other", "key-acme").result_int() == 404u);
  BOOST_TEST(answer(http::verb::get, "/admin/stats", "key-acme").result_int() == 401u);
  BOOST_TEST(answer(http::verb::get, "/admin/stats?key=admin").body() == "stats");
  BOOST_TEST(answer(http::verb::get, "/healthz").body() == "ok");
}

BOOST_AUTO_TEST_CASE(the_chat_handler_answers_whole_and_streamed_without_a_socket) {
  scripted_backend model("scripted", [](const chat_request& request) {
    chat_response response;
    response.model = request.model;
    response.content = "Answer to: " + content_text(request.messages.back());
    response.finish_reason = "stop";
    response.usage = {.prompt_tokens = 3, .completion_tokens = 4};
    return response;
  });
  pipeline<backend_stage<scripted_backend>> answer{backend_stage(model)};
  const model_index models(config);
  admission_gate admission(4, 4);
  feedback_registry feedback;
  gateway_metrics metrics;
  request_log log(false, nullptr);
  response_ids ids;
  const chat_services services{&config, &models, &admission, &feedback, &metrics, &log, &ids};
  chat_handler<decltype(answer)> chat(services, answer);
  const std::string tenant = "acme";

  const auto whole_request = request_of(http::verb::post, "/v1/chat/completions",
                                        R"({"model": "m", "messages": [{"role": "user", "content": "hi"}]})");
  exchange whole{.request = whole_request, .out = out, .deadline = *deadline, .tenant = &tenant};
  const auto response = run(io, chat, whole);
  BOOST_REQUIRE(response.has_value());
  BOOST_TEST(response->result_int() == 200u);
  BOOST_TEST(response->at("x-llmgate-backend") == "scripted");
  const auto body = boost::json::parse(response->body());
  BOOST_TEST(body.at("choices").at(0).at("message").at("content").as_string() == "Answer to: hi");
  BOOST_TEST(out.bytes.empty());

  const auto streamed_request = request_of(http::verb::post, "/v1/chat/completions",
      R"({"model": "m", "stream": true, "messages": [{"role": "user", "content": "hi"}]})");
  exchange streamed{.request = streamed_request, .out = out, .deadline = *deadline, .tenant = &tenant};
  BOOST_TEST(!run(io, chat, streamed).has_value());  // it wrote its own response
  BOOST_TEST(out.bytes.starts_with("HTTP/1.1 200 OK\r\n"));
  BOOST_TEST(out.bytes.find("Transfer-Encoding: chunked\r\n") != std::string::npos);
  BOOST_TEST(out.bytes.find("data: [DONE]\n\n\r\n0\r\n\r\n") != std::string::npos);
  BOOST_TEST(out.bytes.find("Answer") != std::string::npos);

  const auto unknown = request_of(http::verb::post, "/v1/chat/completions",
                                  R"({"model": "nope", "messages": [{"role": "user", "content": "hi"}]})");
  exchange missing{.request = unknown, .out = out, .deadline = *deadline, .tenant = &tenant};
  BOOST_TEST(run(io, chat, missing)->result_int() == 404u);
  // What each request did goes to the session (which counts and logs it),
  // the cache's verdict only for those that reached the pipeline.
  BOOST_REQUIRE(whole.outcome && streamed.outcome && missing.outcome);
  BOOST_TEST(whole.outcome->status == 200u);
  BOOST_TEST((whole.outcome->cache == cache_outcome::miss));
  BOOST_TEST(whole.outcome->backend == "scripted");
  BOOST_TEST(whole.outcome->tenant == "acme");
  BOOST_TEST((streamed.outcome->cache == cache_outcome::miss));
  BOOST_TEST(missing.outcome->status == 404u);
  BOOST_TEST(!missing.outcome->cache.has_value());
}

BOOST_AUTO_TEST_SUITE_END()
