// The pipeline and its stages with an in-process backend: misses, exact
// and semantic hits, tenants, streaming through the caches, stages that
// answer or change the request, feedback, errors.
#include <atomic>     // std::atomic
#include <memory>     // std::make_shared, std::make_unique
#include <ostream>    // std::ostream
#include <stdexcept>  // std::runtime_error
#include <string>     // std::string
#include <vector>     // std::vector

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/test/unit_test.hpp>

#include "llmgate/backend/scripted_backend.hpp"
#include "llmgate/pipeline.hpp"
#include "../chunk_log.hpp"  // chunk_log

namespace llmgate::inline v0 {
std::ostream& operator<<(std::ostream& out, cache_outcome outcome) { return out << to_string(outcome); }
}  // namespace llmgate::inline v0

namespace {

using namespace llmgate;
using llmgate::test::chunk_log;
namespace net = boost::asio;

using answer_cache = exact_cache<cached_answer>;
using meaning_cache = basic_semantic_cache<cached_answer>;

chat_request ask(std::string question, std::string model = "m1") {
  chat_request request;
  request.model = std::move(model);
  request.messages.push_back({.role = "system", .content = "Be brief.", .extra = {}});
  request.messages.push_back({.role = "user", .content = std::move(question), .extra = {}});
  return request;
}

// Answers "answer N to: <question>", N counting the calls.
struct counting_script {
  std::shared_ptr<std::atomic<int>> calls = std::make_shared<std::atomic<int>>(0);
  chat_response operator()(const chat_request& request) const {
    chat_response response;
    response.id = "up-" + std::to_string(++*calls);
    response.model = request.model;
    response.content = "answer " + std::to_string(calls->load()) + " to: " +
                       content_text(request.messages.back());
    response.finish_reason = "stop";
    response.usage = {.prompt_tokens = 10, .completion_tokens = 5};
    response.cost_usd = 0.001;
    return response;
  }
};

struct fixture {
  net::io_context io;
  counting_script script;
  scripted_backend model{"scripted", script};
  answer_cache exact;
  meaning_cache semantic{{}, hashing_embedder(), static_threshold{0.8f}};
  pipeline<exact_cache_stage<answer_cache>, semantic_cache_stage<meaning_cache>, backend_stage<scripted_backend>>
      answer{exact_cache_stage(exact), semantic_cache_stage(semantic), backend_stage(model)};

  chat_response run(chat_request request, request_context& context) {
    return complete_blocking(io, answer, std::move(request), context);
  }
  int calls() const { return script.calls->load(); }
};


}  // namespace

BOOST_AUTO_TEST_SUITE(pipeline_test)

BOOST_FIXTURE_TEST_CASE(miss_then_exact_then_semantic_hit, fixture) {
  request_context first{.tenant = "acme"};
  const auto fresh = run(ask("What is the capital of France?"), first);
  BOOST_TEST(first.cache == cache_outcome::miss);
  BOOST_TEST(first.backend == "scripted");
  BOOST_TEST(fresh.cost_usd == 0.001);
  BOOST_TEST(calls() == 1);

  request_context again{.tenant = "acme"};
  const auto exact_hit = run(ask("what is the  capital of France?"), again);  // normalised alike
  BOOST_TEST(again.cache == cache_outcome::exact);
  BOOST_TEST(exact_hit.content == fresh.content);
  BOOST_TEST(exact_hit.cost_usd == 0);
  BOOST_TEST(again.saved_usd == 0.001);
  BOOST_TEST(again.backend.empty());

  request_context similar{.tenant = "acme"};
  const auto semantic_hit = run(ask("What is the capital of France"), similar);
  BOOST_TEST(similar.cache == cache_outcome::semantic);
  BOOST_TEST(similar.similarity >= 0.8f);
  BOOST_TEST(semantic_hit.content == fresh.content);
  BOOST_TEST(calls() == 1);
}

// A semantic hit is stored in the exact tier under the request's own
// text, at what the answer cost when it was made; a wrong verdict on it
// takes it out of both tiers.
BOOST_FIXTURE_TEST_CASE(a_semantic_hit_is_promoted_to_the_exact_tier, fixture) {
  request_context first{.tenant = "acme"};
  const auto fresh = run(ask("What is the capital of France?"), first);
  request_context similar{.tenant = "acme"};
  run(ask("What is the capital of France"), similar);
  BOOST_REQUIRE(similar.cache == cache_outcome::semantic);
  BOOST_TEST(exact.size() == 2u);

  request_context repeat{.tenant = "acme"};
  const auto promoted = run(ask("What is the capital of France"), repeat);
  BOOST_TEST(repeat.cache == cache_outcome::exact);
  BOOST_TEST(repeat.similarity == 1.0f);
  BOOST_TEST(promoted.content == fresh.content);
  BOOST_TEST(repeat.saved_usd == 0.001);
  request_context other_tenant{.tenant = "globex"};
  run(ask("What is the capital of France"), other_tenant);
  BOOST_TEST(other_tenant.cache == cache_outcome::miss);

  similar.feedback(false);  // the verdict on the semantic hit
  request_context after{.tenant = "acme"};
  run(ask("What is the capital of France"), after);
  BOOST_TEST(after.cache == cache_outcome::miss);
  BOOST_TEST(calls() == 3);
}

BOOST_FIXTURE_TEST_CASE(scope_keeps_tenants_models_parameters_and_system_prompts_apart, fixture) {
  request_context acme{.tenant = "acme"};
  run(ask("What is the capital of France?"), acme);

  request_context other_tenant{.tenant = "globex"};
  run(ask("What is the capital of France?"), other_tenant);
  BOOST_TEST(other_tenant.cache == cache_outcome::miss);

  request_context other_model{.tenant = "acme"};
  run(ask("What is the capital of France?", "m2"), other_model);
  BOOST_TEST(other_model.cache == cache_outcome::miss);

  auto hot = ask("What is the capital of France?");
  set_field(hot.parameters, "temperature", "0.9");
  request_context other_parameters{.tenant = "acme"};
  run(hot, other_parameters);
  BOOST_TEST(other_parameters.cache == cache_outcome::miss);

  auto pirate = ask("What is the capital of France?");
  pirate.messages.front().content = "Talk like a pirate.";
  request_context other_system{.tenant = "acme"};
  run(pirate, other_system);
  BOOST_TEST(other_system.cache == cache_outcome::miss);

  // Delivery settings do not change the answer.
  auto delivered = ask("What is the capital of France?");
  set_field(delivered.parameters, "user", R"("someone")");
  set_field(delivered.parameters, "stream_options", R"({"include_usage":true})");
  request_context same{.tenant = "acme"};
  run(delivered, same);
  BOOST_TEST(same.cache == cache_outcome::exact);
  BOOST_TEST(calls() == 5);
}

BOOST_FIXTURE_TEST_CASE(streamed_miss_is_relayed_then_stored_and_replayed, fixture) {
  chunk_log relayed;
  request_context first{.tenant = "acme", .on_chunk = relayed.handler()};
  const auto fresh = run(ask("Name three primary colours."), first);
  BOOST_TEST(first.cache == cache_outcome::miss);
  BOOST_TEST(relayed.text() == fresh.content);
  BOOST_TEST(exact.size() == 1u);
  BOOST_TEST(semantic.size() == 1u);

  chunk_log replayed;
  request_context again{.tenant = "acme", .on_chunk = replayed.handler()};
  run(ask("Name three primary colours."), again);
  BOOST_TEST(again.cache == cache_outcome::exact);
  BOOST_TEST(replayed.text() == fresh.content);
  BOOST_REQUIRE(replayed.chunks.size() >= 3u);
  BOOST_TEST(*replayed.chunks[replayed.chunks.size() - 2].finish_reason == "stop");
  BOOST_TEST(replayed.chunks.back().usage->completion_tokens == 5u);
  BOOST_TEST(calls() == 1);
}

BOOST_FIXTURE_TEST_CASE(wrong_answers_stop_serving, fixture) {
  request_context first{.tenant = "acme"};
  run(ask("What is the capital of France?"), first);

  request_context similar{.tenant = "acme"};
  run(ask("What is the capital of France"), similar);
  BOOST_REQUIRE(similar.cache == cache_outcome::semantic);
  similar.feedback(false);
  request_context after_semantic{.tenant = "acme"};
  run(ask("What is the capital of France"), after_semantic);
  BOOST_TEST(after_semantic.cache == cache_outcome::miss);

  request_context exact_hit{.tenant = "acme"};
  run(ask("What is the capital of France?"), exact_hit);
  BOOST_REQUIRE(exact_hit.cache == cache_outcome::exact);
  exact_hit.feedback(false);
  request_context after_exact{.tenant = "acme"};
  run(ask("What is the capital of France?"), after_exact);
  BOOST_TEST(after_exact.cache != cache_outcome::exact);
}

BOOST_FIXTURE_TEST_CASE(unfinished_answers_and_errors_are_not_stored, fixture) {
  scripted_backend filtered("filtered", [](const chat_request&) {
    chat_response response;
    response.content = "...";
    response.finish_reason = "content_filter";
    return response;
  });
  pipeline filtering{exact_cache_stage(exact), backend_stage(filtered)};
  complete_blocking(io, filtering, ask("Something filtered"));
  BOOST_TEST(exact.size() == 0u);

  scripted_backend failing("failing", [](const chat_request&) -> chat_response {
    throw std::runtime_error("upstream down");
  });
  pipeline failing_answer{exact_cache_stage(exact), backend_stage(failing)};
  BOOST_CHECK_THROW(complete_blocking(io, failing_answer, ask("Anything")), std::runtime_error);
  BOOST_TEST(exact.size() == 0u);
}

// A user's own stages: one that answers by itself, one that changes the request.
struct canned_greeting {
  template <class Next>
  net::awaitable<chat_response> handle(chat_request& request, request_context& context, Next& next) {
    if (content_text(request.messages.back()) != "hello") co_return co_await next(request, context);
    chat_response response;
    response.content = "hi!";
    response.finish_reason = "stop";
    co_return response;
  }
};

struct pin_model {
  std::string model;
  template <class Next>
  net::awaitable<chat_response> handle(chat_request& request, request_context& context, Next& next) {
    request.model = model;
    co_return co_await next(request, context);
  }
};

static_assert(Stage<canned_greeting> && Stage<pin_model>);
static_assert(!Stage<int>);

BOOST_FIXTURE_TEST_CASE(stages_may_answer_or_change_the_request, fixture) {
  pipeline custom{canned_greeting{}, pin_model{"pinned"}, backend_stage(model)};
  BOOST_TEST(complete_blocking(io, custom, ask("hello")).content == "hi!");
  BOOST_TEST(complete_blocking(io, custom, ask("What is 2+2?")).model == "pinned");
  BOOST_TEST(calls() == 1);
}

// A stage's `next` belongs to the pipeline it runs in: a copy passes
// requests on through its own stages, not the original's.
BOOST_FIXTURE_TEST_CASE(a_copied_pipeline_runs_its_own_stages, fixture) {
  answer_cache other_exact;
  using custom_pipeline = pipeline<pin_model, exact_cache_stage<answer_cache>, backend_stage<scripted_backend>>;
  auto original = std::make_unique<custom_pipeline>(pin_model{"pinned"}, exact_cache_stage(exact), backend_stage(model));
  custom_pipeline copy = *original;
  copy = custom_pipeline(pin_model{"pinned"}, exact_cache_stage(other_exact), backend_stage(model));
  original.reset();
  BOOST_TEST(complete_blocking(io, copy, ask("hello")).model == "pinned");
  BOOST_TEST(other_exact.size() == 1);
  BOOST_TEST(exact.size() == 0);
}

// Asks through `pinned`, whose pin_model stage sits between its two cache
// stages, then asks the pinned model straight away: the cache stage after
// the pin must have stored the answer under the pinned model, not under
// the scope the stage before it computed for "auto".
template <class Pipeline>
void expect_scope_of_the_pinned_model(fixture& f, Pipeline& pinned, cache_outcome repeat_from) {
  request_context first{.tenant = "acme"};
  BOOST_TEST(complete_blocking(f.io, pinned, ask("What is the capital of France?", "auto"), first).model == "pinned");
  BOOST_TEST_REQUIRE(first.scope.has_value());
  BOOST_TEST(first.scope->model() == "pinned");
  request_context again{.tenant = "acme"};
  f.run(ask("What is the capital of France?", "pinned"), again);
  BOOST_TEST(again.cache == repeat_from);
  BOOST_TEST(f.calls() == 1);
}

// The semantic stage reuses the scope the exact stage computed, but not
// when a stage between them picked another model.
BOOST_FIXTURE_TEST_CASE(a_scope_is_not_reused_across_a_model_change, fixture) {
  pipeline pinned{exact_cache_stage(exact), pin_model{"pinned"}, semantic_cache_stage(semantic), backend_stage(model)};
  expect_scope_of_the_pinned_model(*this, pinned, cache_outcome::semantic);
}

// The other way round: the exact stage after a model change does not
// take the semantic stage's scope either.
BOOST_FIXTURE_TEST_CASE(the_exact_stage_notices_a_model_change_too, fixture) {
  pipeline pinned{semantic_cache_stage(semantic), pin_model{"pinned"}, exact_cache_stage(exact), backend_stage(model)};
  expect_scope_of_the_pinned_model(*this, pinned, cache_outcome::exact);
}

BOOST_FIXTURE_TEST_CASE(optional_stages_switched_off_pass_requests_on, fixture) {
  pipeline switched{optional_stage(exact_cache_stage(exact), false), optional_stage(pin_model{"pinned"}, true),
                    backend_stage(model)};
  BOOST_TEST(complete_blocking(io, switched, ask("hello")).model == "pinned");
  BOOST_TEST(complete_blocking(io, switched, ask("hello")).model == "pinned");
  BOOST_TEST(calls() == 2);  // no exact cache
  BOOST_TEST(exact.size() == 0);

  // The error of a pipeline whose last stage passes the request on comes
  // where the pipeline is awaited, through stages that are not coroutines.
  pipeline unfinished{optional_stage(backend_stage(model), false)};
  BOOST_CHECK_THROW(complete_blocking(io, unfinished, ask("hello")), std::logic_error);
}

// Two pipelines (two gateway replicas) with their own exact caches over
// one second level: here a third exact cache, standing where the gateway
// puts its shared tier (Redis). What one answers fresh, the other serves
// from the second level and keeps; a wrong verdict erases it from both.
namespace {
struct shared_exact_cache {
  answer_cache* shared;
  net::awaitable<cached_answer> find(const exact_key& key) { co_return shared->find(key).value_or(nullptr); }
  void store(const exact_key& key, const cached_answer& answer) { shared->insert(key, answer); }
  void erase(const exact_key& key) { shared->erase(key); }
};
static_assert(ExactSecondLevel<shared_exact_cache>);
}  // namespace

BOOST_AUTO_TEST_CASE(a_second_level_serves_what_another_pipeline_answered) {
  net::io_context io;
  counting_script script;
  scripted_backend model{"scripted", script};
  answer_cache shared, local_a, local_b;
  pipeline replica_a{exact_cache_stage(local_a, shared_exact_cache{&shared}), backend_stage(model)};
  pipeline replica_b{exact_cache_stage(local_b, shared_exact_cache{&shared}), backend_stage(model)};

  request_context first{.tenant = "acme"};
  const auto fresh = complete_blocking(io, replica_a, ask("What is the capital of France?"), first);
  BOOST_TEST(first.cache == cache_outcome::miss);
  BOOST_TEST(shared.size() == 1u);
  BOOST_TEST(local_a.size() == 1u);

  request_context other_tenant{.tenant = "globex"};
  complete_blocking(io, replica_b, ask("What is the capital of France?"), other_tenant);
  BOOST_TEST(other_tenant.cache == cache_outcome::miss);  // a scope is never crossed
  BOOST_TEST(script.calls->load() == 2);

  request_context second{.tenant = "acme"};
  const auto served = complete_blocking(io, replica_b, ask("What is the capital of France?"), second);
  BOOST_TEST(second.cache == cache_outcome::exact);
  BOOST_TEST(served.content == fresh.content);
  BOOST_TEST(script.calls->load() == 2);
  BOOST_TEST(local_b.size() == 2u);  // globex's answer and the one it now keeps

  second.feedback(false);
  BOOST_TEST(local_b.size() == 1u);
  BOOST_TEST(shared.size() == 1u);  // globex's is left
  request_context third{.tenant = "acme"};
  complete_blocking(io, replica_b, ask("What is the capital of France?"), third);
  BOOST_TEST(third.cache == cache_outcome::miss);
  BOOST_TEST(script.calls->load() == 3);
}

BOOST_AUTO_TEST_SUITE_END()
