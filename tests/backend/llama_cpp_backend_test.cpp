// llama_cpp_backend against an in-test llama-server stand-in that records
// every request: plain requests sent as openai_backend sends them, a PML
// prompt's cache_prompt and id_slot (exact bodies), the slot chosen per
// prefix, the whole schema encoded once (apply-template, completion with
// n_predict 0, save) and restored into another slot, one request at a time
// per slot, the fallbacks (a server without slot files, a file that cannot
// be restored) counted with their reasons, timings.cache_n read as the
// cached count, the registry's "llama.cpp" kind sharing its slots
// between the backends of its workers, and a pool's replicas sharing their
// slot files where their servers share a slot directory. The stand-in answers as
// tools/server of llama.cpp does (its routes, bodies and error objects);
// llama_server_slots_test runs the real server.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "llmgate/backend/llama_cpp_backend.hpp"
#include "llmgate/backend/backend_registry.hpp"
#include "backend_fixture.hpp"

using namespace std::chrono_literals;
using llmgate::chat_request;
using llmgate::llama_cpp_backend;
using llmgate::llama_cpp_options;
using llmgate::prompt_layout;
using llmgate::test::backend_fixture;
using llmgate::test::received_request;
using llmgate::test::reply;
namespace json = boost::json;
namespace net = boost::asio;

namespace {

const std::string chat_path = "/v1/chat/completions";

const auto whole_schema = std::make_shared<const std::vector<llmgate::chat_message>>(
    std::vector<llmgate::chat_message>{{.role = "system", .content = "You tell stories. Cats. Dogs."}});

// A prompt of schema "story" 1 whose cacheable prefix path is `prefix`.
chat_request story(const std::string& prefix, const std::string& question = "Go on.") {
  auto layout = std::make_shared<prompt_layout>();
  layout->schema = "story";
  layout->version = "1";
  layout->prefix_path = prefix;
  layout->whole_schema = whole_schema;
  chat_request request;
  request.model = "m";
  request.messages = {{.role = "system", .content = "You tell stories. Cats."}, {.role = "user", .content = question}};
  request.layout = std::move(layout);
  return request;
}

std::string slot_file() { return llmgate::detail::llama_cpp_slot_file_name(*story("x").layout, "m"); }

// What each request went to (target) and, for chat completions, the id_slot sent.
std::vector<std::string> targets(const std::vector<received_request>& received) {
  std::vector<std::string> list;
  for (const auto& request : received) list.push_back(request.target);
  return list;
}

std::vector<std::int64_t> chat_slots(const std::vector<received_request>& received) {
  std::vector<std::int64_t> slots;
  for (const auto& request : received)
    if (request.target == chat_path) slots.push_back(request.json().at("id_slot").as_int64());
  return slots;
}

// llama-server's answer to a slot action.
reply slot_saved(int slot) {
  return reply::json({{"id_slot", slot}, {"filename", slot_file()}, {"n_saved", 12}, {"n_written", 4096}});
}

// Routes `server` as llama-server with 2 slots and slot files.
void serve_as_llama(llmgate::test::upstream_server& server) {
  server.on("/props", reply::json({{"total_slots", 2}, {"default_generation_settings", {{"n_ctx", 512}}}}));
  server.on("/apply-template", [](const received_request& request) {
    std::string prompt = "T:";
    const json::value body = request.json();
    for (const auto& message : body.at("messages").as_array())
      prompt += std::string(message.at("content").as_string()) + "|";
    return reply::json({{"prompt", prompt}});
  });
  server.on("/completion", reply::json({{"content", "."}, {"tokens_cached", 12}}));
  server.on("/slots/0", slot_saved(0));
  server.on("/slots/1", slot_saved(1));
  server.on(chat_path, reply::chat("ok", {20, 1, 12, 0}));
}

struct llama_fixture : backend_fixture {
  llama_fixture() { serve_as_llama(server); }

  llama_cpp_backend backend(llama_cpp_options options = {}) {
    options.base_url = server.url();
    if (!options.statistics) options.statistics = statistics;
    return llama_cpp_backend(client(), std::move(options));
  }

  std::shared_ptr<llmgate::prompt_statistics> statistics = std::make_shared<llmgate::prompt_statistics>();
};

}  // namespace

BOOST_AUTO_TEST_SUITE(llama_cpp_backend_test)

BOOST_FIXTURE_TEST_CASE(plain_requests_are_sent_as_openai_backend_sends_them, llama_fixture) {
  auto model = backend();
  auto plain = story("a");
  plain.layout = nullptr;
  run(model.complete(plain));
  BOOST_TEST(targets(server.received()) == std::vector<std::string>{chat_path});
  BOOST_TEST(server.received().at(0).body ==
             R"({"model":"m","messages":[{"role":"system","content":"You tell stories. Cats."},)"
             R"({"role":"user","content":"Go on."}],"stream":false})");
}

BOOST_FIXTURE_TEST_CASE(a_pml_prompt_asks_for_prompt_caching_in_its_slot, llama_fixture) {
  auto model = backend({.slots = 2, .slot_files = false});
  run(model.complete(story("story/1/cats")));
  // The slot count was given: the server is not asked.
  BOOST_TEST(targets(server.received()) == std::vector<std::string>{chat_path});
  BOOST_TEST(server.received().at(0).body ==
             R"({"model":"m","messages":[{"role":"system","content":"You tell stories. Cats."},)"
             R"({"role":"user","content":"Go on."}],"stream":false,"cache_prompt":true,"id_slot":0})");

  // With the option, n_cache_reuse too.
  auto reusing = backend({.slots = 2, .slot_files = false, .cache_reuse = 32});
  run(reusing.complete(story("story/1/cats")));
  BOOST_TEST(server.received().back().body ==
             R"({"model":"m","messages":[{"role":"system","content":"You tell stories. Cats."},)"
             R"({"role":"user","content":"Go on."}],"stream":false,"cache_prompt":true,"n_cache_reuse":32,"id_slot":0})");

  // Streamed, and with the client's own cache_prompt kept.
  server.on(chat_path, reply::chat_stream({"ok"}));
  auto own = story("story/1/cats");
  llmgate::set_field(own.parameters, "cache_prompt", "false");
  llmgate::test::chunk_log log;
  run(model.stream(own, log.handler()));
  BOOST_TEST(server.received().back().body ==
             R"({"model":"m","messages":[{"role":"system","content":"You tell stories. Cats."},)"
             R"({"role":"user","content":"Go on."}],"stream":true,"cache_prompt":false,)"
             R"("stream_options":{"include_usage":true},"id_slot":0})");
}

BOOST_FIXTURE_TEST_CASE(prompts_sharing_a_prefix_land_in_the_slot_that_holds_it, llama_fixture) {
  auto model = backend({.slot_files = false});
  for (const char* prefix : {"a", "b", "a", "a", "c", "b", "c"}) run(model.complete(story(prefix)));
  // Two slots (from /props, asked once): a and b take one each; c takes the
  // least recently used (b's), then b takes a's, and c keeps its own.
  BOOST_TEST(server.requests("/props") == 1u);
  BOOST_TEST(chat_slots(server.received()) == (std::vector<std::int64_t>{0, 1, 0, 0, 1, 0, 1}));
  BOOST_TEST(statistics->slots().fallbacks == 0u);
}

BOOST_FIXTURE_TEST_CASE(the_whole_schema_is_encoded_once_saved_and_restored_into_other_slots, llama_fixture) {
  auto model = backend();
  const std::string file = slot_file();
  BOOST_TEST(std::regex_match(file, std::regex("llmgate-[0-9a-f]{16}\\.bin")));

  run(model.complete(story("story/1/cats")));
  run(model.complete(story("story/1/cats", "And then?")));  // its slot holds it: nothing to restore
  run(model.complete(story("story/1/cats/dogs")));          // another prefix, another slot: restored there
  const auto received = server.received();
  BOOST_TEST(targets(received) ==
             (std::vector<std::string>{"/props", "/apply-template", "/completion", "/slots/0?action=save", chat_path,
                                       chat_path, "/slots/1?action=restore", chat_path}));
  BOOST_TEST(received.at(1).body ==
             R"({"model":"m","messages":[{"role":"system","content":"You tell stories. Cats. Dogs."}],"stream":false})");
  BOOST_TEST(received.at(2).json() ==
             json::parse(R"({"prompt":"T:You tell stories. Cats. Dogs.|","n_predict":0,"id_slot":0,"cache_prompt":true})"));
  BOOST_TEST(received.at(3).json() == json::value({{"filename", file}}));
  BOOST_TEST(received.at(6).json() == json::value({{"filename", file}}));
  BOOST_TEST(chat_slots(received) == (std::vector<std::int64_t>{0, 0, 1}));
  const auto slots = statistics->slots();
  BOOST_TEST(slots.saved == 1u);
  BOOST_TEST(slots.restored == 1u);
  BOOST_TEST(slots.fallbacks == 0u);

  // A changed schema is another file.
  auto changed = story("x");
  auto layout = std::make_shared<prompt_layout>(*changed.layout);
  layout->version = "2";
  BOOST_TEST(llmgate::detail::llama_cpp_slot_file_name(*layout, "m") != file);
  BOOST_TEST(llmgate::detail::llama_cpp_slot_file_name(*changed.layout, "other-model") != file);
}

BOOST_FIXTURE_TEST_CASE(a_server_without_slot_files_falls_back_to_prefix_caching_and_says_why, llama_fixture) {
  // What llama-server answers without --slot-save-path.
  const reply refused = reply::json(
      {{"error", {{"code", 501},
                  {"message", "This server does not support slots action. Start it with `--slot-save-path`"},
                  {"type", "not_supported_error"}}}},
      501);
  server.on("/slots/0", refused);
  server.on("/slots/1", refused);
  auto model = backend();
  const auto first = run(model.complete(story("a")));
  run(model.complete(story("b")));
  BOOST_TEST(first.content == "ok");
  // Refused once, not asked again; both prompts went with their slots.
  BOOST_TEST(targets(server.received()) ==
             (std::vector<std::string>{"/props", "/apply-template", "/completion", "/slots/0?action=save", chat_path,
                                       chat_path}));
  BOOST_TEST(chat_slots(server.received()) == (std::vector<std::int64_t>{0, 1}));
  BOOST_TEST(server.received().at(4).json().at("cache_prompt").as_bool());
  const auto slots = statistics->slots();
  BOOST_TEST(slots.saved == 0u);
  BOOST_TEST(slots.fallbacks == 2u);
  BOOST_TEST(slots.last_fallback ==
             "slot file " + slot_file() +
                 " not saved: llama.cpp: HTTP 501: This server does not support slots action. Start it with "
                 "`--slot-save-path`: model server answered with an error");
}

BOOST_FIXTURE_TEST_CASE(a_slot_file_that_cannot_be_restored_falls_back_and_is_encoded_again, llama_fixture) {
  // What llama-server answers when the file is gone.
  server.enqueue("/slots/1", reply::json({{"error", {{"code", 400},
                                                     {"message", "Unable to restore slot: No available space in KV "
                                                                 "cache or invalid slot save file"},
                                                     {"type", "invalid_request_error"}}}},
                                         400));
  auto model = backend();
  run(model.complete(story("a")));
  run(model.complete(story("b")));  // restore fails: plain prefix caching
  run(model.complete(story("c")));  // takes a's slot, and encodes the schema again
  BOOST_TEST(targets(server.received()) ==
             (std::vector<std::string>{"/props", "/apply-template", "/completion", "/slots/0?action=save", chat_path,
                                       "/slots/1?action=restore", chat_path, "/apply-template", "/completion",
                                       "/slots/0?action=save", chat_path}));
  BOOST_TEST(chat_slots(server.received()) == (std::vector<std::int64_t>{0, 1, 0}));
  const auto slots = statistics->slots();
  BOOST_TEST(slots.saved == 2u);
  BOOST_TEST(slots.restored == 0u);
  BOOST_TEST(slots.fallbacks == 1u);
  BOOST_TEST(slots.last_fallback ==
             "slot file " + slot_file() +
                 " not restored: llama.cpp: HTTP 400: Unable to restore slot: No available space in KV cache or "
                 "invalid slot save file: model server answered with an error");
}

BOOST_FIXTURE_TEST_CASE(a_template_the_server_cannot_apply_is_not_tried_again, llama_fixture) {
  server.on("/apply-template", reply::json({{"error", {{"code", 400},
                                                       {"message", "Conversation roles must alternate"},
                                                       {"type", "invalid_request_error"}}}},
                                           400));
  auto model = backend({.slots = 2});
  run(model.complete(story("a")));
  run(model.complete(story("b")));
  BOOST_TEST(targets(server.received()) == (std::vector<std::string>{"/apply-template", chat_path, chat_path}));
  const auto slots = statistics->slots();
  BOOST_TEST(slots.fallbacks == 2u);
  BOOST_TEST(slots.last_fallback == "slot file " + slot_file() +
                                        " not saved: llama.cpp: HTTP 400: Conversation roles must alternate: model "
                                        "server answered with an error");
}

BOOST_FIXTURE_TEST_CASE(an_unknown_slot_count_sends_cache_prompt_alone, llama_fixture) {
  server.on("/props", reply::openai_error(404, "invalid_request_error", "not_found", "File Not Found"));
  server.on("/slots", reply::openai_error(501, "not_supported_error", "not_supported",
                                          "This server does not support slots endpoint. Start it with `--slots`"));
  auto model = backend();
  run(model.complete(story("a")));
  BOOST_TEST(targets(server.received()) == (std::vector<std::string>{"/props", "/slots", chat_path}));
  BOOST_TEST(server.received().back().body ==
             R"({"model":"m","messages":[{"role":"system","content":"You tell stories. Cats."},)"
             R"({"role":"user","content":"Go on."}],"stream":false,"cache_prompt":true})");
  BOOST_TEST(statistics->slots().fallbacks == 1u);
  BOOST_TEST(statistics->slots().last_fallback ==
             "slot count unknown: llama.cpp: HTTP 501: This server does not support slots endpoint. Start it with "
             "`--slots`: model server answered with an error");
}

BOOST_FIXTURE_TEST_CASE(a_slot_serves_one_prompt_at_a_time, llama_fixture) {
  // One slot: b's restore must wait until a's completion is answered.
  reply held = reply::chat("first");
  held.hold = "first";
  server.enqueue(chat_path, held);
  auto model = backend({.slots = 1});
  int done = 0;
  const auto send = [&](std::string prefix) -> net::awaitable<void> {
    co_await model.complete(story(prefix));
    ++done;
  };
  net::co_spawn(io, send("a"), net::detached);
  net::co_spawn(io, send("b"), net::detached);
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (server.requests(chat_path) < 1 && std::chrono::steady_clock::now() < deadline) io.run_for(5ms);
  io.run_for(200ms);  // time for b to reach the server, were it not held back
  BOOST_TEST(targets(server.received()) ==
             (std::vector<std::string>{"/apply-template", "/completion", "/slots/0?action=save", chat_path}));
  BOOST_TEST(done == 0);
  server.release("first");
  io.restart();
  io.run();
  BOOST_TEST(done == 2);
  BOOST_TEST(targets(server.received()) ==
             (std::vector<std::string>{"/apply-template", "/completion", "/slots/0?action=save", chat_path,
                                       "/slots/0?action=restore", chat_path}));
}

BOOST_FIXTURE_TEST_CASE(a_busy_prefix_spreads_to_an_idle_slot_restored_from_its_file, llama_fixture) {
  // Two prompts of one prefix at once, two slots: the second does not queue
  // behind the first (held by the server) but restores the schema into slot 1.
  reply held = reply::chat("first");
  held.hold = "first";
  server.enqueue(chat_path, held);
  auto model = backend({.slots = 2});
  int done = 0;
  const auto send = [&]() -> net::awaitable<void> {
    co_await model.complete(story("a"));
    ++done;
  };
  net::co_spawn(io, send(), net::detached);
  net::co_spawn(io, send(), net::detached);
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (done < 1 && std::chrono::steady_clock::now() < deadline) io.run_for(5ms);
  BOOST_TEST(done == 1);
  BOOST_TEST(server.requests("/slots/1") == 1u);
  BOOST_TEST(server.received().back().target == chat_path);
  BOOST_TEST(server.received().back().json().at("id_slot").as_int64() == 1);
  server.release("first");
  io.restart();
  io.run();
  BOOST_TEST(done == 2);
  BOOST_TEST(server.requests("/apply-template") == 1u);
  BOOST_TEST(server.received().at(2).target == "/slots/0?action=save");
  const auto slots = statistics->slots();
  BOOST_TEST(slots.saved == 1u);
  BOOST_TEST(slots.restored == 1u);
}

BOOST_FIXTURE_TEST_CASE(timings_cache_n_is_the_cached_count_where_usage_has_none, llama_fixture) {
  // llama-server releases that put no prompt_tokens_details in the usage.
  server.enqueue(chat_path, reply::json(json::parse(R"({"id":"c","object":"chat.completion","created":1,"model":"m",
      "choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],
      "usage":{"prompt_tokens":40,"completion_tokens":2,"total_tokens":42},
      "timings":{"cache_n":37,"prompt_n":3,"predicted_n":2}})")));
  server.enqueue(chat_path, reply::json(json::parse(R"({"id":"c","object":"chat.completion","created":1,"model":"m",
      "choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],
      "usage":{"prompt_tokens":40,"completion_tokens":2,"total_tokens":42,"prompt_tokens_details":{"cached_tokens":30}},
      "timings":{"cache_n":37,"prompt_n":3,"predicted_n":2}})")));
  server.enqueue(chat_path, reply::sse({
      R"({"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]})",
      R"({"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],)"
      R"("usage":{"prompt_tokens":40,"completion_tokens":1,"total_tokens":41},"timings":{"cache_n":39,"prompt_n":1}})",
      "[DONE]"}));
  auto model = backend();
  auto plain = story("a");
  plain.layout = nullptr;
  BOOST_TEST((run(model.complete(plain)).usage == llmgate::token_usage{40, 2, 37, 0}));
  BOOST_TEST((run(model.complete(plain)).usage == llmgate::token_usage{40, 2, 30, 0}));
  llmgate::test::chunk_log log;
  BOOST_TEST((run(model.stream(plain, log.handler())).usage == llmgate::token_usage{40, 1, 39, 0}));
}

BOOST_FIXTURE_TEST_CASE(the_registrys_kind_shares_slots_between_workers, llama_fixture) {
  const auto registry = llmgate::backend_registry::builtin();
  BOOST_TEST(registry.contains("llama.cpp"));
  llmgate::backend_config config{.name = "local", .kind = "llama.cpp", .base_url = server.url(), .retries = 0,
                                 .options = {{"slots", 2}, {"slot_files", false}}};
  const llmgate::backend_setup setup{.executor = io.get_executor(), .client = client(), .prices = {}};
  auto one = registry.make(config, setup);  // as two workers would make it
  auto two = registry.make(config, setup);
  run(one.complete(story("a")));
  run(two.complete(story("b")));
  run(two.complete(story("a")));
  run(one.complete(story("b")));
  BOOST_TEST(chat_slots(server.received()) == (std::vector<std::int64_t>{0, 1, 0, 1}));
}

BOOST_FIXTURE_TEST_CASE(a_prefix_that_moves_to_a_replica_sharing_the_slot_directory_is_restored_there, llama_fixture) {
  // Two llama-servers as a pool's replicas, round robin: the schema's first
  // prompt is encoded and saved on the first, its second goes to the other.
  for (const bool shared : {true, false}) {
    llmgate::test::upstream_server first, second;
    for (auto* replica : {&first, &second}) {
      serve_as_llama(*replica);
      replica->start();
    }
    llmgate::backend_config config{.name = shared ? "shared" : "apart", .kind = "llama.cpp", .retries = 0,
                                   .options = {{"shared_slot_files", shared}}};
    config.replicas = {{.name = "a", .base_url = first.url()}, {.name = "b", .base_url = second.url()}};
    config.balance.policy = "round_robin";
    const auto registry = llmgate::backend_registry::builtin();
    auto pool = registry.make(config, {.executor = io.get_executor(), .client = client(), .prices = {}});
    BOOST_TEST(run(pool.complete(story("story/1/cats"))).backend == "a; round_robin");
    BOOST_TEST(targets(first.received()) == (std::vector<std::string>{"/props", "/apply-template", "/completion",
                                                                      "/slots/0?action=save", chat_path}));
    BOOST_TEST(run(pool.complete(story("story/1/cats"))).backend == "b; round_robin");
    if (shared)  // the other replica reads the file the first one wrote
      BOOST_TEST(targets(second.received()) ==
                 (std::vector<std::string>{"/props", "/slots/0?action=restore", chat_path}));
    else  // a directory of its own: it computes the schema again
      BOOST_TEST(targets(second.received()) == (std::vector<std::string>{"/props", "/apply-template", "/completion",
                                                                         "/slots/0?action=save", chat_path}));
  }
}

BOOST_AUTO_TEST_SUITE_END()
