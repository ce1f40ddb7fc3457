// The composed gateway end to end over real sockets: a request for each
// backend kind against the in-test upstream, models with their own
// backends, model "auto" routed by the router (inline cards, and a
// registry learned from the shared routing data where it is present, and
// predictors learned from an outcomes file),
// feedback reaching the router's ledger and the cache, cache lifetimes on
// a clock the test moves, a stage of the program's own, and configs the
// gateway refuses to start with.
#include <cctype>      // std::toupper
#include <chrono>      // std::chrono
#include <cstdio>      // std::tmpfile
#include <filesystem>  // std::filesystem::exists
#include <fstream>     // std::ofstream
#include <map>         // std::map
#include <memory>      // std::make_shared
#include <string>      // std::string
#include <vector>      // std::vector

#include <boost/test/unit_test.hpp>

#include "../backend/upstream_server.hpp"
#include "llmgate/server/gateway.hpp"
#include "gateway_client.hpp"
#include "../temporary_directory.hpp"
#include "llmgate/tools/routing_outcomes.hpp"  // read_routerbench

namespace {

using namespace llmgate;
using namespace llmgate::test;
namespace json = boost::json;

// The model the upstream was asked for, as its answer.
reply echo_model(const received_request& request) {
  return reply::chat("answered by " + std::string(request.json().at("model").as_string()));
}

gateway_config base_config() {
  gateway_config config;
  config.listen.port = 0;
  config.listen.threads = 1;
  config.tenants = {{"acme", "key-acme"}};
  config.log.requests = false;
  config.limits.request_timeout_ms = 5000;
  return config;
}

std::string ask(unsigned short port, std::string_view question, std::string_view model,
                std::map<std::string, std::string>* headers = nullptr, std::string* id = nullptr) {
  const auto reply = post(port, "/v1/chat/completions", chat_body(question, false, model), "key-acme");
  BOOST_TEST_REQUIRE(reply.status == 200u, reply.body);
  if (headers) *headers = reply.headers;
  if (id) *id = std::string(reply.json().at("id").as_string());
  return std::string(reply.json().at("choices").at(0).at("message").at("content").as_string());
}

std::string refusal(gateway_config config, gateway_parts parts = {}) {
  parts.log = nullptr;
  try {
    gateway server(std::move(config), std::move(parts));
    return {};
  } catch (const std::exception& e) {
    return e.what();
  }
}

// Two models on their own backends, routed with the cards router_stage_test uses.
gateway_config routed_config(const std::string& upstream_url) {
  auto config = base_config();
  config.backends = {{.name = "big", .base_url = upstream_url, .retries = 0},
                     {.name = "small", .base_url = upstream_url, .retries = 0}};
  config.models = {
      {.name = "cheap-chat", .backends = {"small"},
       .routing = json::parse(R"({"accuracy": 0.7, "input_cost_per_million": 0.1})").as_object()},
      {.name = "code-model", .backends = {"big"}, .upstream_model = "code-model-v2",
       .routing = json::parse(R"({"accuracy": 0.7, "task_accuracy": {"coding": 0.95},
                                  "input_cost_per_million": 1, "task_types": ["coding"]})").as_object()}};
  config.router = router_config{.preferences = "accuracy=0.8,cost=0.2"};
  return config;
}

const std::string coding_question = "Write a Python function that merges two sorted lists";
const std::string chit_chat = "tell me a joke";

}  // namespace

BOOST_AUTO_TEST_SUITE(gateway_compose_test)

BOOST_AUTO_TEST_CASE(every_backend_kind_answers_through_its_model) {
  upstream_server upstream;
  upstream.on("/v1/chat/completions", echo_model);
  upstream.on("/v1/messages", reply::json(json::parse(R"({"id":"msg_1","type":"message","role":"assistant",
      "model":"claude-x","content":[{"type":"text","text":"from anthropic"}],"stop_reason":"end_turn",
      "usage":{"input_tokens":20,"output_tokens":4}})")));
  upstream.on("/api/chat", reply::json(json::parse(R"({"model":"llama3.2","created_at":"2024-01-01T00:00:00Z",
      "message":{"role":"assistant","content":"from ollama"},"done":true,"done_reason":"stop",
      "prompt_eval_count":26,"eval_count":3})")));
  upstream.start();
  auto config = base_config();
  config.backends = {{.name = "oa", .kind = "openai", .base_url = upstream.url("/v1"), .retries = 0},
                     {.name = "an", .kind = "anthropic", .base_url = upstream.url(), .api_key = "sk-ant", .retries = 0},
                     {.name = "ol", .kind = "ollama", .base_url = upstream.url(), .retries = 0},
                     {.name = "de", .kind = "demo"}};
  config.models = {{.name = "m-openai", .backends = {"oa"}, .upstream_model = "gpt-upstream"},
                   {.name = "m-anthropic", .backends = {"an"}, .upstream_model = "claude-x"},
                   {.name = "m-ollama", .backends = {"ol"}},
                   {.name = "m-demo", .backends = {"de"}}};
  gateway server(config, nullptr);
  server.start();
  std::map<std::string, std::string> headers;
  BOOST_TEST(ask(server.port(), "one", "m-openai", &headers) == "answered by gpt-upstream");
  BOOST_TEST(headers["x-llmgate-backend"] == "oa");
  BOOST_TEST(headers.count("x-llmgate-model") == 0u);  // not routed
  BOOST_TEST(ask(server.port(), "two", "m-anthropic", &headers) == "from anthropic");
  BOOST_TEST(headers["x-llmgate-backend"] == "an");
  BOOST_TEST(upstream.received().at(1).json().at("model").as_string() == "claude-x");
  BOOST_TEST(upstream.received().at(1).header("x-api-key") == "sk-ant");
  BOOST_TEST(ask(server.port(), "three", "m-ollama", &headers) == "from ollama");
  BOOST_TEST(headers["x-llmgate-backend"] == "ol");
  BOOST_TEST(upstream.received().at(2).json().at("model").as_string() == "m-ollama");
  BOOST_TEST(ask(server.port(), "four", "m-demo", &headers).starts_with("(offline demo backend)"));
  BOOST_TEST(headers["x-llmgate-backend"] == "de");
  BOOST_TEST(upstream.requests() == 3u);
  const auto models = get(server.port(), "/v1/models", "key-acme").json().at("data").as_array();
  BOOST_TEST(models.size() == 5u);  // the four and the embedding model
  BOOST_TEST(models.at(1).at("id").as_string() == "m-anthropic");
}

BOOST_AUTO_TEST_CASE(a_models_fallback_list_is_its_own) {
  upstream_server upstream;
  upstream.on("/v1/chat/completions", reply::openai_error(503, "server_error", "overloaded", "busy"));
  upstream.start();
  auto config = base_config();
  config.backends = {{.name = "flaky", .base_url = upstream.url("/v1"), .retries = 0}, {.name = "demo", .kind = "demo"}};
  config.models = {{.name = "resilient", .backends = {"flaky", "demo"}}, {.name = "fragile", .backends = {"flaky"}}};
  gateway server(config, nullptr);
  server.start();
  std::map<std::string, std::string> headers;
  BOOST_TEST(ask(server.port(), "hello", "resilient", &headers).starts_with("(offline demo backend)"));
  BOOST_TEST(headers["x-llmgate-backend"] == "demo");
  BOOST_TEST(post(server.port(), "/v1/chat/completions", chat_body("hello", false, "fragile"), "key-acme").status == 502u);
}

BOOST_AUTO_TEST_CASE(auto_routes_coding_and_chit_chat_to_different_models) {
  upstream_server upstream;
  upstream.on("/v1/chat/completions", echo_model);
  upstream.start();
  auto config = routed_config(upstream.url("/v1"));
  config.admin.metrics_token = "scraper-token";  // /metrics needs it
  gateway server(std::move(config), nullptr);
  server.start();
  std::map<std::string, std::string> headers;
  BOOST_TEST(ask(server.port(), coding_question, "auto", &headers) == "answered by code-model-v2");
  BOOST_TEST(headers["x-llmgate-model"] == "code-model");
  BOOST_TEST(headers["x-llmgate-backend"] == "big");
  BOOST_TEST(headers["x-llmgate-route"].find("task coding") != std::string::npos, headers["x-llmgate-route"]);
  BOOST_TEST(ask(server.port(), chit_chat, "auto", &headers) == "answered by cheap-chat");
  BOOST_TEST(headers["x-llmgate-model"] == "cheap-chat");
  BOOST_TEST(headers["x-llmgate-backend"] == "small");

  // The routed model is part of the cache scope: the repeat hits, still saying which model answered.
  ask(server.port(), coding_question, "auto", &headers);
  BOOST_TEST(headers["x-llmgate-cache"] == "exact");
  BOOST_TEST(headers["x-llmgate-model"] == "code-model");
  BOOST_TEST(upstream.requests() == 2u);

  // A request's own preferences, by header: cost alone sends coding to the cheap model? It is filtered
  // out of coding (task_types), so the code model stays; chit-chat goes to the cheap one either way.
  const auto own = call(server.port(), boost::beast::http::verb::post, "/v1/chat/completions",
                        chat_body("tell me another joke", false, "auto"), "key-acme",
                        {{"x-llmgate-preferences", "cost=1"}});
  BOOST_TEST(own.header("x-llmgate-model") == "cheap-chat");
  const auto bad = call(server.port(), boost::beast::http::verb::post, "/v1/chat/completions",
                        chat_body("tell me a joke", false, "auto"), "key-acme", {{"x-llmgate-preferences", "speed=1"}});
  BOOST_TEST(bad.status == 400u);
  BOOST_TEST(bad.json().at("error").at("param").as_string() == "x-llmgate-preferences");

  // Or by the request's own field, which is not sent upstream.
  const auto field = post(server.port(), "/v1/chat/completions",
                          R"({"model": "auto", "llmgate_preferences": "cost=1",
                              "messages": [{"role": "user", "content": "tell me a third joke"}]})", "key-acme");
  BOOST_TEST(field.header("x-llmgate-model") == "cheap-chat");
  BOOST_TEST(!upstream.received().back().json().as_object().contains("llmgate_preferences"));

  const auto metrics = get(server.port(), "/metrics", "scraper-token").body;
  BOOST_TEST(metrics.find("llmgate_routed_requests_total{model=\"code-model\"} 2\n") != std::string::npos, metrics);
  BOOST_TEST(metrics.find("llmgate_routed_requests_total{model=\"cheap-chat\"} 3\n") != std::string::npos);
}


// The registry learned from real models' outcomes (../shared/data/routing,
// RouterBench): each model's accuracy on MBPP as its coding accuracy, on
// the commonsense sets as its overall accuracy, and its mean cost per
// query as its price. The best coder and the cheapest model are served.
BOOST_AUTO_TEST_CASE(auto_routes_by_a_registry_learned_from_the_shared_routing_data) {
  const std::filesystem::path folder = std::filesystem::path(LLMGATE_SHARED_DATA_DIR) / "routing" / "routerbench";
  if (!std::filesystem::exists(folder / "mbpp_train.csv") || !std::filesystem::exists(folder / "winograde_train.csv")) {
    BOOST_TEST_MESSAGE("skipped: " << folder << " is absent (evaluation data lives in ../shared/data)");
    return;
  }
  const auto coding = llmgate::read_routerbench(folder / "mbpp_train.csv");
  const auto commonsense = llmgate::read_routerbench(folder / "winograde_train.csv");
  struct figures { double coding = 0, overall = 0, usd_per_token = 0; };
  std::map<std::string, figures> by_model;
  for (std::size_t m = 0; m < coding.models.size(); ++m) {
    double right = 0, cost = 0, tokens = 0;
    for (const auto& q : coding.outcomes) right += q.score[m], cost += q.cost[m], tokens += q.text.size() / 4.0 + 256;
    by_model[coding.models[m]].coding = right / coding.outcomes.size();
    by_model[coding.models[m]].usd_per_token = cost / tokens;
  }
  for (std::size_t m = 0; m < commonsense.models.size(); ++m) {
    double right = 0;
    for (const auto& q : commonsense.outcomes) right += q.score[m];
    by_model[commonsense.models[m]].overall = right / commonsense.outcomes.size();
  }
  std::string coder = by_model.begin()->first, cheapest = coder;
  for (const auto& [name, f] : by_model) {
    if (f.coding > by_model[coder].coding) coder = name;
    if (f.usd_per_token < by_model[cheapest].usd_per_token) cheapest = name;
  }
  BOOST_TEST_MESSAGE("routerbench: best coder " << coder << " (" << by_model[coder].coding << "), cheapest " << cheapest
                                                << " (" << by_model[cheapest].coding << " on coding)");
  BOOST_TEST_REQUIRE(coder != cheapest);

  upstream_server upstream;
  upstream.on("/v1/chat/completions", echo_model);
  upstream.start();
  auto config = base_config();
  config.backends = {{.name = "coder-backend", .base_url = upstream.url("/v1"), .retries = 0},
                     {.name = "cheap-backend", .base_url = upstream.url("/v1"), .retries = 0}};
  const auto card = [&](const std::string& name) {
    const auto& f = by_model[name];
    return json::object{{"accuracy", f.overall}, {"task_accuracy", {{"coding", f.coding}}},
                        {"input_cost_per_million", f.usd_per_token * 1e6}, {"output_cost_per_million", f.usd_per_token * 1e6}};
  };
  config.models = {{.name = coder, .backends = {"coder-backend"}, .routing = card(coder)},
                   {.name = cheapest, .backends = {"cheap-backend"}, .routing = card(cheapest)}};
  config.router = router_config{.preferences = "balanced"};
  gateway server(config, nullptr);
  server.start();
  std::map<std::string, std::string> headers;
  BOOST_TEST(ask(server.port(), coding_question, "auto", &headers) == "answered by " + coder);
  BOOST_TEST(headers["x-llmgate-model"] == coder, headers["x-llmgate-route"]);
  BOOST_TEST(headers["x-llmgate-backend"] == "coder-backend");
  BOOST_TEST(ask(server.port(), "hi! how are you doing today?", "auto", &headers) == "answered by " + cheapest);
  BOOST_TEST(headers["x-llmgate-model"] == cheapest, headers["x-llmgate-route"]);
  BOOST_TEST(headers["x-llmgate-backend"] == "cheap-backend");
}

// Mode "predictor": an outcomes file in RouterBench's shape (written here)
// where the code model answered every coding request right and the cheap
// model none, both answered every chat request right, and the code model
// costs ten times as much. Learned to match the best model, the router
// sends coding to the code model and chat to the cheap one.
BOOST_AUTO_TEST_CASE(auto_routes_by_predictors_learned_from_an_outcomes_file) {
  temporary_directory folder;
  const auto outcomes = folder.path() / "outcomes.csv";
  {
    std::ofstream out(outcomes);
    out << ",sample_id,prompt,eval_name,code-model,cheap-chat,code-model|model_response,cheap-chat|model_response,"
           "code-model|total_cost,cheap-chat|total_cost,oracle_model_to_route_to\n";
    const char* coding[] = {"Write a Python function that merges two sorted lists", "Fix the loop in this function",
                            "Write a class for a stack in Python", "Return the longest string in an array"};
    const char* chat[] = {"tell me a joke", "how are you today", "say something nice", "tell me a story"};
    for (int i = 0; i < 40; ++i) {
      out << i << ",c" << i << ",\"['" << coding[i % 4] << "']\",code,1.0,0.0,['def'],['no'],0.01,0.001,code-model\n";
      out << i << ",t" << i << ",\"['" << chat[i % 4] << "']\",chat,1.0,1.0,['hi'],['hi'],0.01,0.001,cheap-chat\n";
    }
  }
  upstream_server upstream;
  upstream.on("/v1/chat/completions", echo_model);
  upstream.start();
  auto config = routed_config(upstream.url("/v1"));
  config.router = router_config{.mode = "predictor", .outcomes = outcomes, .target = "match-best"};
  gateway server(std::move(config), nullptr);
  BOOST_TEST(server.router()->registry_router() == nullptr);
  BOOST_TEST(server.router()->description().starts_with("predictor over 2 models learned from 80 outcomes in '"),
             server.router()->description());
  server.start();
  std::map<std::string, std::string> headers;
  BOOST_TEST(ask(server.port(), coding_question, "auto", &headers) == "answered by code-model-v2");
  BOOST_TEST(headers["x-llmgate-route"].starts_with("predictor; chance right 0.9"), headers["x-llmgate-route"]);
  BOOST_TEST(ask(server.port(), "tell me a joke", "auto", &headers) == "answered by cheap-chat");
  BOOST_TEST(headers["x-llmgate-model"] == "cheap-chat");
}

BOOST_AUTO_TEST_CASE(a_routed_request_is_logged_with_its_model_and_reasons) {
  upstream_server upstream;
  upstream.on("/v1/chat/completions", echo_model);
  upstream.start();
  std::FILE* log = std::tmpfile();
  auto config = routed_config(upstream.url("/v1"));
  config.log.requests = true;
  {
    gateway server(config, log);
    server.start();
    ask(server.port(), coding_question, "auto");
    ask(server.port(), coding_question, "code-model");
  }
  std::rewind(log);
  std::string text;
  for (int c; (c = std::fgetc(log)) != EOF;) text += static_cast<char>(c);
  std::fclose(log);
  std::vector<json::object> requests;
  for (std::size_t at = 0, end; (end = text.find('\n', at)) != std::string::npos; at = end + 1) {
    auto line = json::parse(text.substr(at, end - at)).as_object();
    if (line.contains("path")) requests.push_back(std::move(line));
  }
  BOOST_REQUIRE(requests.size() == 2u);
  BOOST_TEST(requests[0].at("model").as_string() == "code-model");
  BOOST_TEST(requests[0].at("route").as_string().starts_with("chose code-model"));
  BOOST_TEST(!requests[1].contains("model"));  // named its model: not routed
}

BOOST_AUTO_TEST_CASE(without_a_router_auto_is_no_model) {
  upstream_server upstream;
  upstream.on("/v1/chat/completions", echo_model);
  upstream.start();
  auto config = routed_config(upstream.url("/v1"));
  config.router.reset();
  gateway server(config, nullptr);
  server.start();
  BOOST_TEST(post(server.port(), "/v1/chat/completions", chat_body("hi", false, "auto"), "key-acme").status == 404u);
  BOOST_TEST(ask(server.port(), coding_question, "cheap-chat") == "answered by cheap-chat");
}

BOOST_AUTO_TEST_CASE(feedback_on_a_fresh_answer_reaches_the_router_and_on_a_hit_the_cache) {
  upstream_server upstream;
  upstream.on("/v1/chat/completions", echo_model);
  upstream.start();
  gateway server(routed_config(upstream.url("/v1")), nullptr);
  server.start();
  std::string miss_id, hit_id;
  std::map<std::string, std::string> headers;
  ask(server.port(), coding_question, "auto", &headers, &miss_id);
  const auto feedback = [&](const std::string& id, bool correct) {
    return post(server.port(), "/v1/feedback", json::serialize(json::object{{"id", id}, {"correct", correct}}),
                "key-acme").status;
  };
  BOOST_TEST(feedback(miss_id, true) == 200u);  // a miss: the router alone hears it
  const auto& ledger = server.router()->registry_router()->ledger();
  const auto task = server.router()->registry_router()->analyser().analyse(coding_question);
  BOOST_TEST(ledger.votes("code-model", task.task_type, task.domain).up == 1u);

  ask(server.port(), coding_question, "auto", &headers, &hit_id);
  BOOST_REQUIRE(headers["x-llmgate-cache"] == "exact");
  BOOST_TEST(feedback(hit_id, false) == 200u);  // a hit: the exact cache alone (it judges the match, not the model)
  BOOST_TEST(ledger.votes("code-model", task.task_type, task.domain).up == 1u);
  BOOST_TEST(ledger.votes("code-model", task.task_type, task.domain).down == 0u);
  ask(server.port(), coding_question, "auto", &headers);
  BOOST_TEST(headers["x-llmgate-cache"] != "exact");  // the wrong answer stopped serving from there
}

BOOST_AUTO_TEST_CASE(answers_expire_after_ttl_seconds_on_the_caches_clock) {
  upstream_server upstream;
  upstream.on("/v1/chat/completions", echo_model);
  upstream.start();
  auto config = base_config();
  config.backends = {{.name = "up", .base_url = upstream.url("/v1"), .retries = 0}};
  config.models = {{.name = "m", .backends = {"up"}}};
  config.exact_cache.eviction = {.policy = "lru", .ttl_seconds = 60};
  config.semantic_cache.eviction = {.policy = "lfu", .ttl_seconds = 60};
  const auto clock = cache_clock::adjustable();
  gateway server(config, gateway_parts{.log = nullptr, .clock = clock});
  server.start();
  std::map<std::string, std::string> headers;
  ask(server.port(), "What is the capital of France?", "m", &headers);
  BOOST_TEST(headers["x-llmgate-cache"] == "miss");
  ask(server.port(), "What is the capital of France?", "m", &headers);
  BOOST_TEST(headers["x-llmgate-cache"] == "exact");
  clock.advance(std::chrono::seconds(59));
  ask(server.port(), "what is the capital city of France", "m", &headers);
  BOOST_TEST(headers["x-llmgate-cache"] == "semantic");
  clock.advance(std::chrono::seconds(2));
  ask(server.port(), "What is the capital of France?", "m", &headers);
  BOOST_TEST(headers["x-llmgate-cache"] == "miss");  // both tiers' answers are older than 60 s
  BOOST_TEST(upstream.requests() == 2u);
}

BOOST_AUTO_TEST_CASE(the_adaptive_threshold_starts_where_the_config_says) {
  auto config = base_config();
  config.backends = {{.name = "demo", .kind = "demo"}};
  config.models = {{.name = "m", .backends = {"demo"}}};
  config.semantic_cache.threshold = {.policy = "adaptive", .value = 0.97, .value_given = true, .error_bound = 0.01};
  gateway server(config, nullptr);
  BOOST_TEST((server.semantic().threshold_policy().kind() == threshold_kind::adaptive));
  BOOST_TEST(server.semantic().threshold_policy().threshold() == 0.97f);
}

BOOST_AUTO_TEST_CASE(configs_it_cannot_serve_keep_it_from_starting) {
  auto config = base_config();
  config.backends = {{.name = "x", .kind = "bedrock"}};
  config.models = {{.name = "m", .backends = {"x"}}};
  BOOST_TEST(refusal(config) ==
             "config: backends[0].kind must be one of \"anthropic\", \"demo\", \"llama.cpp\", \"ollama\", \"openai\" (not \"bedrock\")");
  // Registered in C++, the kind is known.
  gateway_parts parts;
  parts.backends.add("bedrock", [](const backend_config& b, const backend_setup&) { return any_backend(make_demo_backend(b.name)); });
  BOOST_TEST(refusal(config, std::move(parts)) == "");

  config.backends = {{.name = "demo", .kind = "demo"}};
  config.models = {{.name = "m", .backends = {}}};
  BOOST_TEST(refusal(config).starts_with("config: models[0].backend must name a backend"), refusal(config));
  config.models = {{.name = "m", .backends = {"elsewhere"}}};
  BOOST_TEST(refusal(config).starts_with("config: models[0].backend names \"elsewhere\""), refusal(config));

  config.models = {{.name = "m", .backends = {"demo"}}};
  config.router = router_config{};
  BOOST_TEST(refusal(config).starts_with("config: router has no models to route over"), refusal(config));
  config.router->registry = "/nonexistent/registry.json";
  BOOST_TEST(refusal(config).starts_with("config: router.registry cannot be used"), refusal(config));
  config.router = router_config{.mode = "predictor"};
  BOOST_TEST(refusal(config).starts_with("config: router.outcomes is needed with mode \"predictor\""), refusal(config));
  config.router->outcomes = "/nonexistent/outcomes.csv";
  BOOST_TEST(refusal(config).starts_with("config: router.outcomes cannot be used: cannot read routing outcomes from"),
             refusal(config));
  config.router->target = "most";
  BOOST_TEST(refusal(config).starts_with("config: router.target cannot be read"), refusal(config));
  config.router->mode = "oracle";
  BOOST_TEST(refusal(config) == "config: router.mode is \"oracle\"; expected \"registry\" or \"predictor\"");
  {
    temporary_directory folder;
    std::ofstream(folder.path() / "outcomes.json")
        << R"([{"question": "q", "scores": {"m": 1.0, "stranger": 0.0}}])";
    auto prices = std::make_shared<price_table>();
    prices->set("stranger", {});
    prices->set("m", {});
    config.prices = prices;
    config.router = router_config{.mode = "predictor", .outcomes = folder.path() / "outcomes.json"};
    BOOST_TEST(refusal(config) == "config: router.outcomes has outcomes of model \"stranger\", which is not in models");
  }
  config.router.reset();

  // A "shared" section needs a program that gives the gateway a shared tier.
  config.shared = shared_config{};
  BOOST_TEST(refusal(config) ==
             "config: shared needs a gateway built with a shared tier (gateway_parts::shared, "
             "e.g. llmgate::make_shared_tier); this program has none");
  config.shared.reset();

  config.semantic_cache.embedder = {.kind = "openai", .base_url = "http://127.0.0.1:1/v1", .model = "e"};
  BOOST_TEST(refusal(config).starts_with("config: semantic_cache.embedder.base_url http://127.0.0.1:1/v1 does not answer"),
             refusal(config));
  upstream_server upstream;
  upstream.start();
  config.semantic_cache.embedder.base_url = upstream.url("/v1");
  // It answers, but not with embeddings (gateway_embedder_test serves them).
  BOOST_TEST(refusal(config).starts_with("config: semantic_cache.embedder.base_url " + config.semantic_cache.embedder.base_url +
                                         " does not answer with embeddings"),
             refusal(config));
}

// A stage of the program's own, first in the pipeline: what it changes is
// what the caches key on and what the backend is sent.
struct shout_stage {
  template <class Next>
  boost::asio::awaitable<chat_response> handle(chat_request& request, request_context& context, Next& next) {
    for (auto& message : request.messages)
      if (message.role == "user")
        for (auto& c : message.content) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    co_return co_await next(request, context);
  }
};

BOOST_AUTO_TEST_CASE(a_programs_own_stage_runs_before_the_caches_and_the_backend) {
  upstream_server upstream;
  upstream.on("/v1/chat/completions", [](const received_request& request) {
    const auto chat = parse_chat_request(request.json());
    return reply::chat("heard " + content_text(chat.messages.back()));
  });
  upstream.start();
  auto config = base_config();
  config.backends = {{.name = "up", .base_url = upstream.url("/v1"), .retries = 0}};
  config.models = {{.name = "m", .backends = {"up"}}};
  basic_gateway<shout_stage> server(config, nullptr, shout_stage{});
  server.start();
  std::map<std::string, std::string> headers;
  BOOST_TEST(ask(server.port(), "hello there", "m", &headers) == "heard HELLO THERE");
  BOOST_TEST(ask(server.port(), "HELLO THERE", "m", &headers) == "heard HELLO THERE");
  BOOST_TEST(headers["x-llmgate-cache"] == "exact");  // the caches saw the stage's text
}

BOOST_AUTO_TEST_SUITE_END()
