// The run store: what a run records survives the store being closed and
// opened again (as after a kill), requests in flight come back as
// unfinished with their attempt counted, and files that are not run
// stores are refused.
#include <boost/test/unit_test.hpp>

#include <fstream>
#include <string>
#include <vector>

#include "llmgate/eval/run/run_store.hpp"
#include "../temporary_directory.hpp"

namespace llmgate {
namespace {

std::vector<planned_request> three_requests() {
  return {{"evaluation/a/0/0", request_kind::evaluation, "a", 0, 0},
          {"evaluation/b/0/0", request_kind::evaluation, "b", 0, 0},
          {"schedule/a/0/0", request_kind::schedule, "a", 1, 0}};
}

request_result answer(const planned_request& request, std::string text) {
  return {.request = request, .started_unix_ms = 1'700'000'000'123, .latency_ms = 12.5, .ttft_ms = 3.25,
          .tokens_in = 7, .tokens_out = 11, .response = std::move(text), .overhead_us = 40};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(run_store_test)

BOOST_AUTO_TEST_CASE(a_recorded_request_is_never_unfinished_again_and_in_flight_ones_count_their_attempts) {
  llmgate::test::temporary_directory dir;
  const auto path = dir.path() / "run.sqlite";
  const auto planned = three_requests();
  {
    run_store store(path);
    store.bind_plan("plan-1");
    store.plan(planned);
    BOOST_TEST(store.unfinished().size() == 3u);
    BOOST_TEST(store.begin("evaluation/a/0/0") == 1);
    store.finish(answer(planned[0], "first answer"));
    BOOST_TEST(store.begin("evaluation/b/0/0") == 1);  // then the "kill": never finished
  }
  run_store store(path);
  store.bind_plan("plan-1");
  store.plan(planned);  // planning again adds nothing
  const auto left = store.unfinished();
  BOOST_TEST_REQUIRE(left.size() == 2u);
  BOOST_TEST(left[0].key == "evaluation/b/0/0");
  BOOST_TEST(left[1].key == "schedule/a/0/0");
  BOOST_TEST((left[1].kind == request_kind::schedule));
  BOOST_TEST(left[1].prompt == 1);
  BOOST_TEST(store.begin("evaluation/b/0/0") == 2);  // resent, and counted
  auto second = answer(planned[1], "second answer");
  second.attempts = 2;
  store.finish(second);
  BOOST_CHECK_THROW(store.begin("evaluation/a/0/0"), llmgate::error);  // recorded: never sent again

  const auto results = store.results();
  BOOST_TEST_REQUIRE(results.size() == 2u);
  BOOST_TEST(results[0].request.key == "evaluation/a/0/0");
  BOOST_TEST(results[0].response == "first answer");
  BOOST_TEST(results[0].latency_ms == 12.5);
  BOOST_TEST(results[0].ttft_ms == 3.25);
  BOOST_TEST(results[0].tokens_in == 7u);
  BOOST_TEST(results[0].tokens_out == 11u);
  BOOST_TEST(results[0].started_unix_ms == 1'700'000'000'123);
  BOOST_TEST(results[0].attempts == 1);
  BOOST_TEST(results[1].attempts == 2);
  const auto counts = store.counts();
  BOOST_TEST(counts.planned == 3u);
  BOOST_TEST(counts.recorded == 2u);
  BOOST_TEST(counts.errors == 0u);
  BOOST_TEST(counts.resent == 1u);
}

BOOST_AUTO_TEST_CASE(errors_scores_ratings_assignments_and_served_models_round_trip) {
  auto store = run_store::in_memory();
  const auto planned = three_requests();
  store.plan(planned);
  store.begin(planned[0].key);
  request_result failed{.request = planned[0], .error = request_failure::rate_limited, .http_status = 429,
                        .error_message = "slow down"};
  store.finish(failed);
  const auto results = store.results();
  BOOST_TEST_REQUIRE(results.size() == 1u);
  BOOST_TEST((results[0].error == request_failure::rate_limited));
  BOOST_TEST(results[0].http_status == 429);
  BOOST_TEST(results[0].error_message == "slow down");
  BOOST_TEST(store.counts().errors == 1u);

  store.put_score({"evaluation/b/0/0", "bleu", 0.25, ""});
  store.put_score({"evaluation/b/0/0", "judge:scorer", std::nullopt, "no verdict"});
  store.put_score({"evaluation/b/0/0", "bleu", 0.5, ""});  // replaces
  const auto scores = store.scores();
  BOOST_TEST_REQUIRE(scores.size() == 2u);
  BOOST_TEST(store.has_score("evaluation/b/0/0", "bleu"));
  BOOST_TEST(!store.has_score("evaluation/a/0/0", "bleu"));
  for (const auto& s : scores) {
    if (s.method == "bleu") BOOST_TEST(*s.value == 0.5);
    else BOOST_TEST((!s.value && s.detail == "no verdict"));
  }

  const std::vector<std::string> batch = {"evaluation/b/0/0", "evaluation/a/0/0"};
  store.put_assignment("rita", batch);
  BOOST_TEST(store.assignment("rita") == batch, boost::test_tools::per_element());
  BOOST_TEST(store.assignment("nobody").empty());
  BOOST_TEST(store.raters() == std::vector<std::string>{"rita"}, boost::test_tools::per_element());
  store.put_rating({"rita", "evaluation/b/0/0", 7, 42});
  store.put_rating({"rita", "evaluation/b/0/0", 8, 43});  // replaces
  const auto ratings = store.ratings();
  BOOST_TEST_REQUIRE(ratings.size() == 1u);
  BOOST_TEST(ratings[0].score == 8);
  BOOST_TEST(ratings[0].at_unix_ms == 43);

  store.put_served_model({"tiny", "/m/tiny.gguf", 1185376, "F32", 292160, 52'000'000, "node-llama-cpp"});
  const auto models = store.served_models();
  BOOST_TEST_REQUIRE(models.size() == 1u);
  BOOST_TEST(models[0].quantization == "F32");
  BOOST_TEST(models[0].rss_bytes == 52'000'000u);

  store.set_meta("schedule_start", "123");
  BOOST_TEST(*store.meta("schedule_start") == "123");
  BOOST_TEST(!store.meta("absent"));
}

BOOST_AUTO_TEST_CASE(a_store_of_another_plan_or_a_file_that_is_no_store_is_refused) {
  llmgate::test::temporary_directory dir;
  {
    run_store store(dir.path() / "run.sqlite");
    store.bind_plan("plan-1");
  }
  run_store store(dir.path() / "run.sqlite");
  BOOST_CHECK_EXCEPTION(store.bind_plan("plan-2"), llmgate::error, [](const llmgate::error& e) {
    return std::string(e.what()).find("holds a run of another evaluation plan") != std::string::npos;
  });

  const auto garbage = dir.path() / "garbage.sqlite";
  std::ofstream(garbage) << std::string(4096, 'x');
  BOOST_CHECK_EXCEPTION(run_store{garbage}, llmgate::error, [](const llmgate::error& e) {
    return std::string(e.what()).find("garbage.sqlite") != std::string::npos &&
           std::string(e.what()).find("not a database") != std::string::npos;
  });
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace llmgate
