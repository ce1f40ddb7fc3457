// The evaluation runner against in-test model servers: every planned
// request recorded once with what came back, a resumed run sending only
// what is not recorded (in-flight ones again, once, counted), failures
// classified, templates checked before anything is sent, the latency
// schedule, and the progress lines.
#include <boost/test/unit_test.hpp>

#include <chrono>   // std::chrono::system_clock, seconds
#include <cstdint>  // std::int64_t
#include <map>      // std::map
#include <memory>   // std::make_shared
#include <span>     // std::span
#include <sstream>  // std::ostringstream
#include <string>   // std::string
#include <vector>   // std::vector

#include <boost/asio/io_context.hpp>  // net::io_context
#include <boost/asio/ip/tcp.hpp>      // a port nothing listens on
#include <boost/json/value.hpp>       // boost::json::value

#include "../backend/upstream_server.hpp"        // upstream_server, reply
#include "llmgate/backend/blocking.hpp"          // run_blocking
#include "llmgate/backend/http_client.hpp"       // http_client
#include "llmgate/backend/openai_backend.hpp"    // openai_backend
#include "llmgate/backend/scripted_backend.hpp"  // scripted_backend
#include "llmgate/eval/run/run_store.hpp"        // run_store
#include "llmgate/eval/run/runner.hpp"           // evaluation_runner, plan_requests

namespace {

using namespace llmgate;
using llmgate::test::reply;
using llmgate::test::upstream_server;
namespace net = boost::asio;

std::int64_t unix_ms_now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Two candidates, two prompts of one template, two repetitions, one warm-up each.
evaluation_plan two_candidates() {
  evaluation_plan plan;
  plan.candidates = {{.name = "small", .model = "small-model", .sampling = {{"temperature", 0.5}}},
                     {.name = "big", .model = "big-model"}};
  plan.reference = "big";
  plan.templates = {{"ask", {{.role = "system", .content = "Be brief."},
                             {.role = "user", .content = "Tasks: {{tasks}} for {{ name }}"}}}};
  plan.prompts = {{"ask", {{"tasks", "a, b"}, {"name", "Ann"}}}, {"ask", {{"tasks", "c"}, {"name", "Bo"}}}};
  plan.repetitions = 2;
  plan.warmup = 1;
  plan.concurrency = 2;
  plan.sampling = {{"temperature", 0.0}, {"max_tokens", 16}};
  return plan;
}

std::vector<std::string> keys_of(const std::vector<planned_request>& requests) {
  std::vector<std::string> keys;
  for (const auto& r : requests) keys.push_back(r.key);
  return keys;
}

// Answers "<model> says: <last message>" in two pieces, with usage 12 in, 3 out.
reply answer_of(const llmgate::test::received_request& request) {
  const auto body = request.json().as_object();
  const std::string model(body.at("model").as_string());
  const auto& messages = body.at("messages").as_array();
  const std::string last(messages.back().as_object().at("content").as_string());
  return reply::chat_stream({model + " says:", " " + last}, {12, 3, 0, 0}, model);
}

struct runner_fixture {
  runner_fixture() {
    server.start();
    server.on("/v1/chat/completions", answer_of);
  }

  any_backend upstream(std::string name, const std::string& base_url) {
    return openai_backend(client, openai_options{.name = std::move(name), .base_url = base_url});
  }

  candidate_backends both() { return {{"small", upstream("small-upstream", server.url("/v1"))},
                                      {"big", upstream("big-upstream", server.url("/v1"))}}; }

  void run(const evaluation_plan& plan, candidate_backends backends) {
    evaluation_runner runner(plan, std::move(backends), store, progress);
    run_blocking(io, runner.run());
  }

  const request_result& result(const std::vector<request_result>& results, std::string_view key) {
    for (const auto& r : results)
      if (r.request.key == key) return r;
    BOOST_FAIL("no result " << key);
    return results.front();
  }

  net::io_context io;
  upstream_server server;
  std::shared_ptr<http_client> client = std::make_shared<http_client>(io.get_executor());
  run_store store = run_store::in_memory();
  std::ostringstream lines;
  run_progress progress{lines};
};

}  // namespace

BOOST_AUTO_TEST_SUITE(runner_test)

BOOST_AUTO_TEST_CASE(plans_every_request_with_candidates_taking_turns) {
  auto plan = two_candidates();
  plan.schedule = {.requests = 1, .every_seconds = 60, .duration_seconds = 120};
  const auto planned = plan_requests(plan);
  const std::vector<std::string> expected = {
      "warmup/small/0",         "warmup/big/0",
      "evaluation/small/0/0",   "evaluation/big/0/0",   "evaluation/small/1/0", "evaluation/big/1/0",
      "evaluation/small/0/1",   "evaluation/big/0/1",   "evaluation/small/1/1", "evaluation/big/1/1",
      "schedule/small/0/0",     "schedule/big/0/0",     "schedule/small/1/0",   "schedule/big/1/0"};
  BOOST_TEST(keys_of(planned) == expected, boost::test_tools::per_element());
  BOOST_TEST((planned[0].kind == request_kind::warmup));
  BOOST_TEST(planned[0].candidate == "small");
  BOOST_TEST(planned[0].prompt == 0);
  BOOST_TEST((planned[7].kind == request_kind::evaluation));
  BOOST_TEST(planned[7].candidate == "big");
  BOOST_TEST(planned[7].prompt == 0);
  BOOST_TEST(planned[7].repetition == 1);
  BOOST_TEST((planned[12].kind == request_kind::schedule));
  BOOST_TEST(planned[12].prompt == 1);  // the second tick's first request: prompts in turn
  BOOST_TEST(schedule_tick("schedule/a/b/17/3") == 17u);
}

BOOST_AUTO_TEST_CASE(schedule_ticks_cover_the_duration) {
  BOOST_TEST(schedule_ticks({.requests = 10, .every_seconds = 3600, .duration_seconds = 86400}) == 24u);
  BOOST_TEST(schedule_ticks({.requests = 1, .every_seconds = 60, .duration_seconds = 90}) == 2u);
  BOOST_TEST(schedule_ticks({.requests = 1, .every_seconds = 0.001, .duration_seconds = 0.003}) == 3u);
  BOOST_TEST(schedule_ticks({.requests = 0, .every_seconds = 60, .duration_seconds = 600}) == 0u);
}

BOOST_FIXTURE_TEST_CASE(records_every_request_once_with_what_came_back, runner_fixture) {
  const auto plan = two_candidates();
  const std::int64_t before = unix_ms_now();
  run(plan, both());
  const std::int64_t after = unix_ms_now();

  BOOST_TEST(server.requests("/v1/chat/completions") == 10u);
  const auto results = store.results();
  BOOST_TEST(keys_of([&] {
               std::vector<planned_request> r;
               for (const auto& x : results) r.push_back(x.request);
               return r;
             }()) == keys_of(plan_requests(plan)),
             boost::test_tools::per_element());
  for (const auto& r : results) {
    BOOST_TEST_CONTEXT(r.request.key) {
      BOOST_TEST(r.ok());
      BOOST_TEST(r.attempts == 1);
      BOOST_TEST(r.tokens_in == 12u);
      BOOST_TEST(r.tokens_out == 3u);
      BOOST_TEST(r.started_unix_ms >= before);
      BOOST_TEST(r.started_unix_ms <= after);
      BOOST_TEST(r.ttft_ms > 0);
      BOOST_TEST(r.ttft_ms <= r.latency_ms);
      BOOST_TEST(r.overhead_us > 0);
      BOOST_TEST(r.error_message == "");
    }
  }
  BOOST_TEST(result(results, "evaluation/small/0/1").response == "small-model says: Tasks: a, b for Ann");
  BOOST_TEST(result(results, "evaluation/big/1/0").response == "big-model says: Tasks: c for Bo");
  BOOST_TEST(result(results, "warmup/big/0").response == "big-model says: Tasks: a, b for Ann");
  const auto counts = store.counts();
  BOOST_TEST(counts.planned == 10u);
  BOOST_TEST(counts.recorded == 10u);
  BOOST_TEST(counts.errors == 0u);
  BOOST_TEST(counts.resent == 0u);

  // What went upstream: the rendered messages, the candidate's model and
  // sampling over the plan's, streamed.
  std::map<std::string, int> models;
  for (const auto& received : server.received()) {
    const auto body = received.json().as_object();
    const std::string model(body.at("model").as_string());
    ++models[model];
    BOOST_TEST(body.at("stream").as_bool());
    BOOST_TEST(body.at("max_tokens").to_number<int>() == 16);
    BOOST_TEST(body.at("temperature").to_number<double>() == (model == "small-model" ? 0.5 : 0.0));
    const auto& messages = body.at("messages").as_array();
    BOOST_TEST(messages.size() == 2u);
    BOOST_TEST(messages[0].as_object().at("content").as_string() == "Be brief.");
  }
  BOOST_TEST(models["small-model"] == 5);
  BOOST_TEST(models["big-model"] == 5);

  // Each phase's last progress line.
  BOOST_TEST(lines.str().find("warmup 2/2, 0 errors, 0 resent, done in ") != std::string::npos);
  BOOST_TEST(lines.str().find("evaluation 8/8, 0 errors, 0 resent, done in ") != std::string::npos);

  // A second run finds everything recorded and sends nothing.
  run(plan, both());
  BOOST_TEST(server.requests("/v1/chat/completions") == 10u);
  BOOST_TEST(store.results().size() == 10u);
}

BOOST_FIXTURE_TEST_CASE(a_resumed_run_sends_only_what_is_not_recorded, runner_fixture) {
  const auto plan = two_candidates();
  const auto planned = plan_requests(plan);
  store.plan(planned);
  // A killed run: the two warm-ups and two evaluation requests recorded,
  // the next two in flight, the rest pending.
  for (std::size_t i = 0; i < 4; ++i) {
    BOOST_TEST(store.begin(planned[i].key) == 1);
    store.finish({.request = planned[i], .latency_ms = 7, .response = "earlier"});
  }
  for (std::size_t i = 4; i < 6; ++i) BOOST_TEST(store.begin(planned[i].key) == 1);
  // A judge's question in the same store is the judges' to send.
  const planned_request judge_question{"judge/scorer/evaluation/small/0/0", request_kind::judge, "big", 0, 0};
  store.plan(std::span(&judge_question, 1));

  run(plan, both());

  BOOST_TEST(server.requests("/v1/chat/completions") == 6u);  // 10 planned, 4 recorded
  const auto results = store.results();
  BOOST_TEST(results.size() == 10u);
  BOOST_TEST(store.unfinished().size() == 1u);  // the judge's
  for (std::size_t i = 0; i < planned.size(); ++i) {
    const auto& r = result(results, planned[i].key);
    BOOST_TEST_CONTEXT(r.request.key) {
      BOOST_TEST(r.attempts == (i >= 4 && i < 6 ? 2 : 1));
      BOOST_TEST((r.response == "earlier") == (i < 4));
    }
  }
  BOOST_TEST(store.counts().resent == 2u);
  BOOST_TEST(!store.recorded(judge_question.key));
  BOOST_TEST(lines.str().find("warmup 2/2, 0 errors, 0 resent, done in ") != std::string::npos);
  BOOST_TEST(lines.str().find("evaluation 8/8, 0 errors, 2 resent, done in ") != std::string::npos);
}

BOOST_FIXTURE_TEST_CASE(failures_are_classified, runner_fixture) {
  server.on("/limited/v1/chat/completions", reply::rate_limited(std::chrono::milliseconds(1000)));
  server.on("/broken/v1/chat/completions",
            reply::openai_error(500, "server_error", "internal", "The server had an error"));
  server.on("/refusing/v1/chat/completions",
            reply::openai_error(400, "invalid_request_error", "bad_field", "Unknown field"));
  server.on("/silent/v1/chat/completions", reply{.hold = "never"});  // never answers
  auto cut = reply::chat_stream({"Half", " an", " answer"});
  cut.chunks.resize(2);
  cut.reset_after_chunks = true;
  server.on("/cut/v1/chat/completions", cut);
  // A port nothing listens on.
  unsigned short closed_port = 0;
  {
    net::ip::tcp::acceptor probe(io, {net::ip::make_address("127.0.0.1"), 0});
    closed_port = probe.local_endpoint().port();
  }

  evaluation_plan plan;
  plan.templates = {{"plain", {{.role = "user", .content = "Hello"}}}};
  plan.prompts = {{"plain", {}}};
  plan.concurrency = 6;
  candidate_backends backends;
  for (const std::string name : {"limited", "broken", "refusing", "cut"}) {
    plan.candidates.push_back({.name = name});
    backends.emplace(name, upstream(name, server.url("/" + name + "/v1")));
  }
  plan.candidates.push_back({.name = "down"});
  backends.emplace("down", upstream("down", "http://127.0.0.1:" + std::to_string(closed_port) + "/v1"));
  run(plan, std::move(backends));
  // The timeout alone, so that only the server that never answers meets it.
  plan.candidates = {{.name = "silent"}};
  plan.request_timeout_ms = 300;
  run(plan, {{"silent", upstream("silent", server.url("/silent/v1"))}});

  const auto results = store.results();
  BOOST_TEST(results.size() == 6u);
  const auto check = [&](std::string_view key, request_failure error, int status) {
    const auto& r = result(results, key);
    BOOST_TEST_CONTEXT(key) {
      BOOST_TEST(to_string(r.error) == to_string(error));
      BOOST_TEST(r.http_status == status);
      BOOST_TEST(!r.error_message.empty());
      BOOST_TEST(r.response == "");
      BOOST_TEST(r.attempts == 1);
    }
  };
  check("evaluation/limited/0/0", request_failure::rate_limited, 429);
  check("evaluation/broken/0/0", request_failure::server_error, 500);
  check("evaluation/refusing/0/0", request_failure::client_error, 400);
  check("evaluation/silent/0/0", request_failure::timeout, 0);
  check("evaluation/cut/0/0", request_failure::unreachable, 0);
  check("evaluation/down/0/0", request_failure::unreachable, 0);
  BOOST_TEST(result(results, "evaluation/silent/0/0").error_message == "no answer within 300 ms");
  BOOST_TEST(result(results, "evaluation/broken/0/0").error_message.find("The server had an error") != std::string::npos);
  BOOST_TEST(store.counts().errors == 6u);
  BOOST_TEST(lines.str().find("evaluation 5/5, 5 errors, 0 resent, done in ") != std::string::npos);
  BOOST_TEST(lines.str().find("evaluation 1/1, 1 error, 0 resent, done in ") != std::string::npos);
}

BOOST_FIXTURE_TEST_CASE(a_store_that_fails_ends_the_run_after_the_requests_in_flight, runner_fixture) {
  auto plan = two_candidates();
  plan.warmup = 0;
  plan.concurrency = 1;
  const auto planned = plan_requests(plan);
  // While the first request is out, someone else records the third: the
  // store refuses to send it (begin), and the run ends there.
  bool meddled = false;
  const auto meddling = scripted_backend("meddling", [&](const chat_request&) {
    if (!meddled) {
      meddled = true;
      store.begin(planned[2].key);
      store.finish({.request = planned[2], .response = "elsewhere"});
    }
    chat_response response;
    response.content = "fine";
    return response;
  });
  BOOST_CHECK_EXCEPTION(run(plan, {{"small", meddling}, {"big", meddling}}), error, [](const error& e) {
    return std::string(e.what()).find("evaluation/small/1/0") != std::string::npos;
  });
  const auto results = store.results();
  BOOST_TEST(results.size() == 3u);  // the two sent, and the one recorded elsewhere
  BOOST_TEST(result(results, "evaluation/small/0/0").response == "fine");
  BOOST_TEST(result(results, "evaluation/big/0/0").response == "fine");
  BOOST_TEST(lines.str().find("done in") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(failures_of_every_kind_of_exception) {
  const auto of = [](auto thrown) { return classify_failure(std::make_exception_ptr(thrown)); };
  const auto upstream = [](errc code, unsigned status) {
    return backend_error(code, "m: failed", {.backend = "m", .status = status});
  };
  BOOST_TEST(to_string(of(upstream(errc::upstream_error, 429)).error) == "rate_limited");
  BOOST_TEST(to_string(of(upstream(errc::upstream_error, 503)).error) == "server_error");
  BOOST_TEST(of(upstream(errc::upstream_error, 503)).http_status == 503);
  BOOST_TEST(to_string(of(upstream(errc::upstream_error, 404)).error) == "client_error");
  BOOST_TEST(to_string(of(upstream(errc::upstream_timeout, 0)).error) == "timeout");
  BOOST_TEST(to_string(of(upstream(errc::upstream_unreachable, 0)).error) == "unreachable");
  BOOST_TEST(to_string(of(upstream(errc::circuit_open, 0)).error) == "unreachable");
  BOOST_TEST(to_string(of(upstream(errc::upstream_protocol_error, 0)).error) == "server_error");
  BOOST_TEST(to_string(of(error(errc::upstream_unreachable, "connect")).error) == "unreachable");
  BOOST_TEST(to_string(of(std::runtime_error("odd")).error) == "server_error");
  BOOST_TEST(of(std::runtime_error("odd")).message == "odd");
}

BOOST_FIXTURE_TEST_CASE(templates_are_checked_before_anything_is_sent, runner_fixture) {
  auto plan = two_candidates();
  plan.prompts.push_back({"ask", {{"tasks", "d"}}});  // prompt 2 does not set "name"
  const auto refused = [](std::string expected) {
    return [expected](const error& e) {
      BOOST_TEST(std::string(e.what()).starts_with(expected));
      return e.code() == make_error_code(errc::invalid_request);
    };
  };
  BOOST_CHECK_EXCEPTION((void)evaluation_runner(plan, both(), store, progress), error,
                        refused("prompt 2: variable {{name}} is not set by the prompt"));
  plan.prompts.back() = {"answer", {}};
  BOOST_CHECK_EXCEPTION((void)evaluation_runner(plan, both(), store, progress), error,
                        refused("prompt 2: no template named \"answer\""));
  plan.prompts.pop_back();
  BOOST_CHECK_EXCEPTION((void)evaluation_runner(plan, {{"small", upstream("small", server.url("/v1"))}}, store, progress),
                        error, refused("candidate \"big\" has no backend to ask"));
  BOOST_TEST(server.requests() == 0u);
  BOOST_TEST(store.counts().planned == 0u);
}

BOOST_FIXTURE_TEST_CASE(candidate_backends_are_made_from_the_plans_backends, runner_fixture) {
  auto plan = two_candidates();
  plan.warmup = 0;
  plan.repetitions = 1;
  plan.backends = {{.name = "local", .kind = "openai", .base_url = server.url("/v1"), .model = "backend-model", .retries = 0},
                   {.name = "offline", .kind = "demo"}};
  plan.candidates = {{.name = "small", .backend = "local", .model = "small-model"},
                     {.name = "plain", .backend = "local"},
                     {.name = "canned", .backend = "offline"},
                     {.name = "served", .gguf = "model.gguf"}};
  auto made = make_candidate_backends(plan, backend_registry::builtin(), client, io.get_executor());
  BOOST_TEST(made.size() == 3u);
  BOOST_TEST(!made.contains("served"));  // the caller's to add
  made.emplace("served", upstream("engine", server.url("/v1")));

  run(plan, std::move(made));

  const auto results = store.results();
  BOOST_TEST(results.size() == 8u);
  BOOST_TEST(result(results, "evaluation/small/0/0").response == "small-model says: Tasks: a, b for Ann");
  BOOST_TEST(result(results, "evaluation/plain/1/0").response == "backend-model says: Tasks: c for Bo");
  BOOST_TEST(result(results, "evaluation/canned/0/0").ok());
  BOOST_TEST(!result(results, "evaluation/canned/0/0").response.empty());
  BOOST_TEST(server.requests("/v1/chat/completions") == 6u);  // small, plain, served: 2 prompts each

  plan.candidates.push_back({.name = "lost", .backend = "nowhere"});
  BOOST_CHECK_EXCEPTION(make_candidate_backends(plan, backend_registry::builtin(), client, io.get_executor()), error,
                        [](const error& e) {
                          return std::string(e.what()).starts_with("candidate \"lost\": no backend named \"nowhere\"");
                        });
}

BOOST_AUTO_TEST_CASE(render_template_text_fills_variables_once) {
  const std::map<std::string, std::string> variables{{"a", "{{b}}"}, {"b", "2"}};
  BOOST_TEST(render_template_text("x{{a}}y{{ b }}z", variables, 0) == "x{{b}}y2z");
  BOOST_TEST(render_template_text("no braces {{ here", variables, 0) == "no braces {{ here");
  BOOST_TEST(render_template_text("", variables, 0) == "");
}

BOOST_FIXTURE_TEST_CASE(the_schedule_sends_k_per_candidate_every_tick_and_resumes_the_ticks_left, runner_fixture) {
  auto plan = two_candidates();
  plan.warmup = 0;
  plan.repetitions = 0;  // the schedule alone
  plan.schedule = {.requests = 2, .every_seconds = 0.001, .duration_seconds = 0.003};
  const auto planned = plan_requests(plan);
  BOOST_TEST(planned.size() == 12u);  // 3 ticks x 2 requests x 2 candidates
  store.plan(planned);
  for (std::size_t i = 0; i < 4; ++i) {  // tick 0 recorded by an earlier run
    store.begin(planned[i].key);
    store.finish({.request = planned[i], .response = "earlier"});
  }

  run(plan, both());

  BOOST_TEST(server.requests("/v1/chat/completions") == 8u);
  const auto results = store.results();
  BOOST_TEST(results.size() == 12u);
  BOOST_TEST(result(results, "schedule/small/1/1").response == "small-model says: Tasks: c for Bo");  // prompt (1*2+1)%2
  BOOST_TEST(result(results, "schedule/big/2/1").response == "big-model says: Tasks: c for Bo");     // prompt (2*2+1)%2
  BOOST_TEST(result(results, "schedule/big/0/1").response == "earlier");
  for (const auto& r : results) BOOST_TEST((r.request.kind == request_kind::schedule));
  BOOST_TEST(lines.str().find("schedule 12/12, 0 errors, 0 resent, done in ") != std::string::npos);
  BOOST_TEST(lines.str().find("evaluation") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(progress_prints_at_most_a_line_a_second_with_an_eta) {
  using clock = run_progress::clock;
  const clock::time_point t0{};
  clock::time_point now = t0;
  std::ostringstream out;
  run_progress progress(out, [&] { return now; });
  const auto at = [&](double seconds) {
    now = t0 + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(seconds));
  };
  const request_result ok{};
  const request_result failed{.error = request_failure::server_error};
  const request_result resent{.attempts = 2};

  progress.start("evaluation", {.total = 10, .done = 1});
  at(0.5);
  progress.record(ok);
  BOOST_TEST(out.str() == "");
  at(2);
  progress.record(failed);  // 2 done in this run in 2 s: 1 s each, 7 left
  at(2.5);
  progress.record(resent);
  at(3);
  progress.record(ok);  // 4 in 3 s, 5 left: 3.75 s
  at(200);
  progress.finish();
  BOOST_TEST(out.str() ==
             "evaluation 3/10, 1 error, 0 resent, ETA 7s\n"
             "evaluation 5/10, 1 error, 1 resent, ETA 3s\n"
             "evaluation 5/10, 1 error, 1 resent, done in 3m20s\n");

  // The schedule cannot end before its last tick.
  std::ostringstream later;
  run_progress schedule(later, [&] { return now; });
  at(0);
  schedule.start("schedule", {.total = 4}, t0 + std::chrono::seconds(3600));
  BOOST_TEST(schedule.line(now) == "schedule 0/4, 0 errors, 0 resent, ETA 1h00m00s");
  at(1);
  schedule.record(ok);
  BOOST_TEST(later.str() == "schedule 1/4, 0 errors, 0 resent, ETA 59m59s\n");

  run_progress fresh(later, [&] { return now; });
  fresh.start("warmup", {.total = 2});
  BOOST_TEST(fresh.line(now) == "warmup 0/2, 0 errors, 0 resent, ETA ?");
  BOOST_TEST(run_progress::duration(std::chrono::seconds(3725)) == "1h02m05s");
  BOOST_TEST(run_progress::duration(std::chrono::milliseconds(59'999)) == "59s");
}

BOOST_AUTO_TEST_SUITE_END()
