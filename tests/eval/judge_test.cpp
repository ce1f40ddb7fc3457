// The LLM judges: strict parsing of each kind's verdict, templates refused
// for a missing or foreign placeholder, and judge_answers against in-test
// judges that answer well, badly (malformed then good; malformed twice) and
// not at all (an error status, no connection, no answer in time), with the
// choice judge's anonymised, shuffled groups.
#include <boost/test/unit_test.hpp>  // BOOST_AUTO_TEST_SUITE, BOOST_TEST

#include <chrono>       // std::chrono_literals
#include <cstdint>      // std::int64_t
#include <optional>     // std::optional
#include <set>          // std::set
#include <stdexcept>    // std::logic_error, std::runtime_error
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::pair, std::move
#include <vector>       // std::vector

#include <boost/asio/bind_cancellation_slot.hpp>  // net::bind_cancellation_slot
#include <boost/asio/cancellation_signal.hpp>     // net::cancellation_signal
#include <boost/asio/co_spawn.hpp>                // net::co_spawn
#include <boost/asio/use_future.hpp>              // net::use_future
#include <boost/system/system_error.hpp>          // boost::system::system_error

#include "llmgate/backend/openai_backend.hpp"  // openai_backend: the judges' backend
#include "llmgate/eval/score/judge.hpp"        // judge_answers, choice_order, answer_label
#include "../backend/backend_fixture.hpp"      // backend_fixture, upstream_server, reply

using namespace std::chrono_literals;
using llmgate::evaluation_plan;
using llmgate::judge_config;
using llmgate::judge_kind;
using llmgate::judge_outcome;
using llmgate::request_result;
using llmgate::score_record;
using llmgate::test::reply;
namespace net = boost::asio;

namespace {

using llmgate::request_failure;

const std::string chat_path = "/v1/chat/completions";

request_result answer(std::string candidate, std::int64_t prompt, std::int64_t repetition, std::string text,
                      request_failure error = request_failure::none) {
  request_result result;
  result.request.key = "evaluation/" + candidate + "/" + std::to_string(prompt) + "/" + std::to_string(repetition);
  result.request.candidate = std::move(candidate);
  result.request.prompt = prompt;
  result.request.repetition = repetition;
  result.response = std::move(text);
  result.error = error;
  return result;
}

evaluation_plan plan_with(std::vector<judge_config> judges) {
  evaluation_plan plan;
  plan.candidates = {{.name = "alpha-model", .backend = "up", .model = "alpha-1"},
                     {.name = "beta-model", .backend = "up", .model = "beta-1"},
                     {.name = "gamma-model", .backend = "up", .model = "gamma-1"},
                     {.name = "judge-model", .backend = "up", .model = "judge-7b"}};
  plan.reference = "alpha-model";
  plan.templates = {{.name = "briefing", .messages = {{.role = "user", .content = "Summarise the tasks: {{tasks}}"}}}};
  plan.prompts = {{.template_name = "briefing", .variables = {{"tasks", "buy milk"}}},
                  {.template_name = "briefing", .variables = {{"tasks", "call Bob"}}},
                  {.template_name = "briefing", .variables = {{"tasks", "pay rent"}}},
                  {.template_name = "briefing", .variables = {{"tasks", "water plants"}}}};
  plan.concurrency = 1;
  plan.request_timeout_ms = 5000;
  plan.judges = std::move(judges);
  return plan;
}

std::string question_of(const llmgate::test::received_request& request) {
  return std::string(request.json().at("messages").at(0).at("content").as_string());
}

struct judge_fixture : llmgate::test::backend_fixture {
  llmgate::any_backend judge_backend(const std::string& url) {
    return llmgate::openai_backend(client({.first_byte_timeout = 2s, .idle_timeout = 2s}),
                                   {.name = "judge-up", .base_url = url, .api_key = "sk-test"});
  }

  /// Runs judge_answers against `url` (the fixture's server when empty),
  /// skipping the (key, method) pairs in `scored` and collecting what is recorded.
  std::vector<score_record> judge(const evaluation_plan& plan, const std::vector<request_result>& results,
                                  std::set<std::pair<std::string, std::string>> scored = {},
                                  llmgate::judge_options options = {}, std::string url = {}) {
    if (url.empty()) url = server.url("/v1");
    asked_for.clear();
    recorded.clear();
    return run(llmgate::judge_answers(
        plan, results,
        [&](std::string_view candidate) {
          asked_for.emplace_back(candidate);
          return judge_backend(url);
        },
        [&](std::string_view key, std::string_view method) { return scored.contains({std::string(key), std::string(method)}); },
        [&](const score_record& score) { recorded.push_back(score); }, options));
  }

  std::vector<std::string> asked_for;
  std::vector<score_record> recorded;
};

const std::vector<request_result> three_answers = {
    answer("alpha-model", 0, 0, "Buy milk today."),
    answer("beta-model", 0, 0, "Remember the milk."),
    answer("gamma-model", 0, 0, "gamma: milk, then rest."),
};

}  // namespace

BOOST_AUTO_TEST_SUITE(judge_test)

BOOST_AUTO_TEST_CASE(scorer_verdict_is_the_last_line_after_reasoning) {
  const auto verdict = llmgate::parse_judge_verdict(judge_kind::scorer, "It is clear.\nIt misses a step.\nScore: 7\n");
  BOOST_REQUIRE(verdict);
  BOOST_TEST(verdict->score == 7);
  BOOST_TEST(verdict->value == 0.7);
  BOOST_TEST(verdict->reasoning == "It is clear.\nIt misses a step.");
  BOOST_TEST(llmgate::parse_judge_verdict(judge_kind::scorer, "Good.\nScore: 0")->value == 0.0);
  BOOST_TEST(llmgate::parse_judge_verdict(judge_kind::scorer, "Good.\nScore: 10")->value == 1.0);
  BOOST_TEST(llmgate::parse_judge_verdict(judge_kind::scorer, "  Good.\r\n  Score: 3  \r\n")->value == 0.3);
}

BOOST_AUTO_TEST_CASE(scorer_refuses_every_other_form) {
  for (const std::string_view output :
       {"Good.\nScore: 7/10", "Good.\nScore: 11", "Good.\nScore: -1", "Good.\nScore: 07", "Good.\nScore: 7.5",
        "Good.\nscore: 7", "Good.\nScore:7", "Good.\nScore:  7", "Good.\n**Score: 7**", "Good.\nScore: 7 points",
        "Score: 7", "11", "7", "A fine answer, I would give it seven.", "", "   \n  ",
        "Good.\nScore: 7\nThanks!", "Score: 3\nOn reflection, better.\nScore: 7"}) {
    BOOST_TEST_CONTEXT("output: " << output) { BOOST_TEST(!llmgate::parse_judge_verdict(judge_kind::scorer, output)); }
  }
}

BOOST_AUTO_TEST_CASE(comparers_map_better_same_worse_to_one_half_zero) {
  BOOST_TEST(llmgate::parse_judge_verdict(judge_kind::comparer, "Verdict: better")->value == 1.0);
  BOOST_TEST(llmgate::parse_judge_verdict(judge_kind::comparer, "\nVerdict: same\n")->value == 0.5);
  BOOST_TEST(llmgate::parse_judge_verdict(judge_kind::comparer, "Verdict: worse")->value == 0.0);
  BOOST_TEST(llmgate::parse_judge_verdict(judge_kind::comparer, "Verdict: worse")->reasoning == "");
  // Without reasoning: one line and nothing else.
  BOOST_TEST(!llmgate::parse_judge_verdict(judge_kind::comparer, "It is shorter.\nVerdict: worse"));
  BOOST_TEST(!llmgate::parse_judge_verdict(judge_kind::comparer, "Verdict: Better"));
  BOOST_TEST(!llmgate::parse_judge_verdict(judge_kind::comparer, "Verdict: better."));
  BOOST_TEST(!llmgate::parse_judge_verdict(judge_kind::comparer, "better"));
  // With reasoning: reasoning first, the verdict last, once.
  const auto reasoned = llmgate::parse_judge_verdict(judge_kind::comparer_reasoning, "It is shorter but right.\nVerdict: same");
  BOOST_REQUIRE(reasoned);
  BOOST_TEST(reasoned->value == 0.5);
  BOOST_TEST(reasoned->reasoning == "It is shorter but right.");
  BOOST_TEST(!llmgate::parse_judge_verdict(judge_kind::comparer_reasoning, "Verdict: same"));
  BOOST_TEST(!llmgate::parse_judge_verdict(judge_kind::comparer_reasoning, "Verdict: worse\nNo, wait.\nVerdict: same"));
  BOOST_TEST(!llmgate::parse_judge_verdict(judge_kind::comparer_reasoning, "Shorter.\nVerdict: tie"));
}

BOOST_AUTO_TEST_CASE(choice_names_one_of_the_labels_shown) {
  const std::vector<std::string> labels = {"A", "B", "C"};
  const auto verdict = llmgate::parse_judge_verdict(judge_kind::choice, "Choice: B", labels);
  BOOST_REQUIRE(verdict);
  BOOST_TEST(verdict->choice == 1u);
  BOOST_TEST(verdict->value == 1.0);
  BOOST_TEST(!llmgate::parse_judge_verdict(judge_kind::choice, "Choice: D", labels));
  BOOST_TEST(!llmgate::parse_judge_verdict(judge_kind::choice, "Choice: b", labels));
  BOOST_TEST(!llmgate::parse_judge_verdict(judge_kind::choice, "Choice: A or B", labels));
  BOOST_TEST(!llmgate::parse_judge_verdict(judge_kind::choice, "B is best.\nChoice: B", labels));
  BOOST_TEST(!llmgate::parse_judge_verdict(judge_kind::choice, "B", labels));
}

BOOST_AUTO_TEST_CASE(labels_run_past_z) {
  BOOST_TEST(llmgate::answer_label(0) == "A");
  BOOST_TEST(llmgate::answer_label(25) == "Z");
  BOOST_TEST(llmgate::answer_label(26) == "AA");
  BOOST_TEST(llmgate::answer_label(27) == "AB");
  BOOST_TEST(llmgate::answer_label(701) == "ZZ");
  BOOST_TEST(llmgate::answer_label(702) == "AAA");
}

BOOST_AUTO_TEST_CASE(default_templates_pass_their_check_and_others_are_refused) {
  for (const auto kind : {judge_kind::scorer, judge_kind::comparer, judge_kind::comparer_reasoning, judge_kind::choice})
    BOOST_CHECK_NO_THROW(llmgate::check_judge_template(kind, llmgate::default_judge_template(kind), "judge 0"));
  const auto message = [](judge_kind kind, std::string_view text) -> std::string {
    try {
      llmgate::check_judge_template(kind, text, "judge 1 (x)");
    } catch (const llmgate::error& e) {
      BOOST_TEST(e.code() == llmgate::errc::invalid_request);
      return e.what();
    }
    return "accepted";
  };
  BOOST_TEST(message(judge_kind::scorer, "Rate {{answer}}.") ==
             "judge 1 (x): the template misses {{prompt}}, which a scorer judge needs: invalid request");
  BOOST_TEST(message(judge_kind::comparer, "{{prompt}} {{answer}}") ==
             "judge 1 (x): the template misses {{reference}}, which a comparer judge needs: invalid request");
  BOOST_TEST(message(judge_kind::scorer, "{{prompt}} {{answer}} {{reference}}") ==
             "judge 1 (x): the template holds {{reference}}, which a scorer judge does not fill: invalid request");
  BOOST_TEST(message(judge_kind::choice, "{{prompt}} {{answer}}") ==
             "judge 1 (x): the template holds {{answer}}, which a choice judge does not fill: invalid request");
  BOOST_TEST(message(judge_kind::choice, "{{prompt}}{{answers}} {{ not a placeholder }} {{}}") == "accepted");
}

BOOST_AUTO_TEST_CASE(placeholders_are_filled_in_one_pass) {
  const auto filled = llmgate::fill_placeholders(
      "[{{a}}] [{{b}}]", [](std::string_view name) -> std::optional<std::string_view> {
        if (name == "a") return "{{b}}";
        return "B";
      },
      [](std::string_view) { throw std::logic_error("unknown"); });
  BOOST_TEST(filled == "[{{b}}] [B]");
}

BOOST_AUTO_TEST_CASE(a_prompt_of_several_messages_is_shown_role_by_role) {
  evaluation_plan plan;
  plan.templates = {{.name = "brief", .messages = {{.role = "system", .content = "You brief."},
                                                   {.role = "user", .content = "Tasks for {{day}}: {{tasks}}."}}}};
  plan.prompts = {{.template_name = "brief", .variables = {{"day", "Monday"}, {"tasks", "a, {{b}}"}}}};
  BOOST_TEST(llmgate::prompt_text(llmgate::render_prompts(plan).at(0)) ==
             "system: You brief.\n\nuser: Tasks for Monday: a, {{b}}.");
  plan.prompts[0].template_name = "other";
  BOOST_CHECK_THROW(llmgate::render_prompts(plan), llmgate::error);
}

BOOST_AUTO_TEST_CASE(choice_order_is_fixed_by_seed_prompt_and_repetition) {
  // Computed apart, in Python, from SplitMix64 and Fisher-Yates as documented.
  using order = std::vector<std::size_t>;
  BOOST_TEST(llmgate::choice_order(3, 22, 0, 0) == (order{2, 0, 1}), boost::test_tools::per_element());
  BOOST_TEST(llmgate::choice_order(3, 22, 1, 0) == (order{0, 2, 1}), boost::test_tools::per_element());
  BOOST_TEST(llmgate::choice_order(3, 22, 2, 0) == (order{1, 2, 0}), boost::test_tools::per_element());
  BOOST_TEST(llmgate::choice_order(3, 22, 3, 0) == (order{2, 1, 0}), boost::test_tools::per_element());
  BOOST_TEST(llmgate::choice_order(3, 22, 1, 1) == (order{2, 0, 1}), boost::test_tools::per_element());
  BOOST_TEST(llmgate::choice_order(3, 23, 0, 0) == (order{1, 0, 2}), boost::test_tools::per_element());
}

BOOST_FIXTURE_TEST_CASE(a_scorer_that_answers_well_scores_every_answer_but_the_reference, judge_fixture) {
  server.on(chat_path, reply::chat("Clear, and it names the task.\nScore: 8"));
  auto plan = plan_with({{.kind = judge_kind::scorer, .candidate = "judge-model",
                          .sampling = {{"temperature", 0}, {"max_tokens", 200}}}});
  auto results = three_answers;
  results.push_back(answer("beta-model", 1, 0, "Phone Bob.", request_failure::server_error));  // failed: not judged
  const auto made = judge(plan, results);

  BOOST_TEST(asked_for == std::vector<std::string>{"judge-model"}, boost::test_tools::per_element());
  BOOST_REQUIRE(made.size() == 2u);
  BOOST_TEST(made[0].request_key == "evaluation/beta-model/0/0");
  BOOST_TEST(made[1].request_key == "evaluation/gamma-model/0/0");
  for (const auto& score : made) {
    BOOST_TEST(score.method == "judge:scorer");
    BOOST_TEST(*score.value == 0.8);
    BOOST_TEST(score.detail == "Clear, and it names the task.");
    BOOST_TEST((llmgate::outcome_of(score) == judge_outcome::verdict));
  }
  BOOST_TEST(recorded.size() == 2u);
  const auto sent = server.received();
  BOOST_REQUIRE(sent.size() == 2u);
  const auto body = sent[0].json().as_object();
  BOOST_TEST(body.at("model").as_string() == "judge-7b");
  BOOST_TEST(body.at("temperature").as_int64() == 0);
  BOOST_TEST(body.at("max_tokens").as_int64() == 200);
  BOOST_TEST(body.at("messages").as_array().size() == 1u);
  std::string question(llmgate::default_judge_template(judge_kind::scorer));
  question.replace(question.find("{{prompt}}"), 10, "Summarise the tasks: buy milk");
  question.replace(question.find("{{answer}}"), 10, "Remember the milk.");
  BOOST_TEST(question_of(sent[0]) == question);
}

BOOST_FIXTURE_TEST_CASE(a_malformed_verdict_is_asked_again_once, judge_fixture) {
  server.enqueue(chat_path, reply::chat("I would give it a 7/10."));
  server.on(chat_path, reply::chat("Fine.\nScore: 6"));
  auto plan = plan_with({{.kind = judge_kind::scorer, .candidate = "judge-model"}});
  const auto made = judge(plan, {three_answers[0], three_answers[1]});
  BOOST_REQUIRE(made.size() == 1u);
  BOOST_TEST(*made[0].value == 0.6);
  const auto sent = server.received();
  BOOST_REQUIRE(sent.size() == 2u);
  BOOST_TEST(sent[0].body == sent[1].body);  // the same question
}

BOOST_FIXTURE_TEST_CASE(malformed_twice_is_recorded_unparsed_never_scored, judge_fixture) {
  server.enqueue(chat_path, reply::chat("Score: 7/10"));
  server.on(chat_path, reply::chat("Seven."));
  auto plan = plan_with({{.kind = judge_kind::comparer_reasoning, .candidate = "judge-model"}});
  const auto made = judge(plan, {three_answers[0], three_answers[1]});
  BOOST_REQUIRE(made.size() == 1u);
  BOOST_TEST(made[0].method == "judge:comparer_reasoning");
  BOOST_TEST(!made[0].value.has_value());
  BOOST_TEST(made[0].detail == "unparsed: Seven.");
  BOOST_TEST((llmgate::outcome_of(made[0]) == judge_outcome::unparsed));
  BOOST_TEST(server.requests(chat_path) == 2u);
  BOOST_REQUIRE(recorded.size() == 1u);
  BOOST_TEST(recorded[0].detail == "unparsed: Seven.");
}

BOOST_FIXTURE_TEST_CASE(a_judge_that_refuses_is_recorded_as_an_error_and_not_asked_again, judge_fixture) {
  server.on(chat_path, reply::openai_error(500, "server_error", "internal", "the judge fell over"));
  auto plan = plan_with({{.kind = judge_kind::scorer, .candidate = "judge-model"}});
  const auto made = judge(plan, {three_answers[0], three_answers[1]});
  BOOST_REQUIRE(made.size() == 1u);
  BOOST_TEST(!made[0].value.has_value());
  BOOST_TEST(made[0].detail.starts_with("error: server_error: "));
  BOOST_TEST(made[0].detail.find("the judge fell over") != std::string::npos);
  BOOST_TEST((llmgate::outcome_of(made[0]) == judge_outcome::error));
  BOOST_TEST(server.requests(chat_path) == 1u);
}

BOOST_FIXTURE_TEST_CASE(a_rate_limited_judge_is_recorded_as_rate_limited, judge_fixture) {
  server.on(chat_path, reply::rate_limited(1000ms));
  auto plan = plan_with({{.kind = judge_kind::choice, .candidate = "judge-model"}});
  const auto made = judge(plan, three_answers);
  BOOST_REQUIRE(made.size() == 3u);  // every member of the group
  for (const auto& score : made) {
    BOOST_TEST(!score.value.has_value());
    BOOST_TEST(score.detail.starts_with("error: rate_limited: "));
  }
  BOOST_TEST(server.requests(chat_path) == 1u);
}

BOOST_FIXTURE_TEST_CASE(an_unreachable_judge_is_recorded_as_unreachable, judge_fixture) {
  llmgate::test::upstream_server gone;
  gone.start();
  const std::string url = gone.url("/v1");
  gone.stop();  // its port now refuses connections
  auto plan = plan_with({{.kind = judge_kind::comparer, .candidate = "judge-model"}});
  const auto made = judge(plan, three_answers, {}, {}, url);
  BOOST_REQUIRE(made.size() == 2u);
  for (const auto& score : made) {
    BOOST_TEST(!score.value.has_value());
    BOOST_TEST(score.detail.starts_with("error: unreachable: "));
    BOOST_TEST((llmgate::outcome_of(score) == judge_outcome::error));
  }
}

BOOST_FIXTURE_TEST_CASE(a_judge_that_never_answers_times_out, judge_fixture) {
  server.on(chat_path, reply{.body = "{}", .hold = "never"});
  auto plan = plan_with({{.kind = judge_kind::scorer, .candidate = "judge-model"}});
  plan.request_timeout_ms = 100;
  const auto made = judge(plan, {three_answers[0], three_answers[1]});
  BOOST_REQUIRE(made.size() == 1u);
  BOOST_TEST(!made[0].value.has_value());
  BOOST_TEST(made[0].detail == "error: timeout: no answer within 100 ms");
  BOOST_TEST(server.requests(chat_path) == 1u);
}

BOOST_FIXTURE_TEST_CASE(answers_already_scored_are_skipped, judge_fixture) {
  server.on(chat_path, reply::chat("Fine.\nScore: 5"));
  auto plan = plan_with({{.kind = judge_kind::scorer, .candidate = "judge-model"}});
  const auto made = judge(plan, three_answers, {{"evaluation/beta-model/0/0", "judge:scorer"}});
  BOOST_REQUIRE(made.size() == 1u);
  BOOST_TEST(made[0].request_key == "evaluation/gamma-model/0/0");
  BOOST_TEST(server.requests(chat_path) == 1u);
  BOOST_TEST(question_of(server.received()[0]).find("gamma: milk, then rest.") != std::string::npos);
}

BOOST_FIXTURE_TEST_CASE(comparers_see_the_reference_of_the_same_prompt_and_repetition, judge_fixture) {
  server.on(chat_path, [](const llmgate::test::received_request& request) {
    const auto question = question_of(request);
    if (question.find("Remember the milk.") != std::string::npos) return reply::chat("Verdict: worse");
    return reply::chat("Verdict: better");
  });
  auto plan = plan_with({{.kind = judge_kind::comparer, .candidate = "judge-model",
                          .template_text = "Q {{prompt}} | R {{reference}} | A {{answer}}"}});
  const std::vector<request_result> results = {
      answer("alpha-model", 0, 0, "ref 0/0"), answer("alpha-model", 0, 1, "ref 0/1"),
      answer("beta-model", 0, 0, "Remember the milk."), answer("beta-model", 0, 1, "beta 0/1"),
      answer("beta-model", 0, 2, "beta 0/2"),  // the reference has no repetition 2: its first answer stands in
      answer("gamma-model", 1, 0, "gamma 1/0"),  // no reference answer to prompt 1: not judged
  };
  const auto made = judge(plan, results);
  BOOST_REQUIRE(made.size() == 3u);
  BOOST_TEST(made[0].request_key == "evaluation/beta-model/0/0");
  BOOST_TEST(*made[0].value == 0.0);
  BOOST_TEST(*made[1].value == 1.0);
  BOOST_TEST(*made[2].value == 1.0);
  const auto sent = server.received();
  BOOST_REQUIRE(sent.size() == 3u);
  BOOST_TEST(question_of(sent[0]) == "Q Summarise the tasks: buy milk | R ref 0/0 | A Remember the milk.");
  BOOST_TEST(question_of(sent[1]) == "Q Summarise the tasks: buy milk | R ref 0/1 | A beta 0/1");
  BOOST_TEST(question_of(sent[2]) == "Q Summarise the tasks: buy milk | R ref 0/0 | A beta 0/2");
}

BOOST_FIXTURE_TEST_CASE(choice_groups_are_anonymised_shuffled_and_scored_one_and_zero, judge_fixture) {
  // The judge picks the answer written by gamma, wherever it is shown.
  server.on(chat_path, [](const llmgate::test::received_request& request) {
    const auto question = question_of(request);
    const auto at = question.rfind("Answer ", question.find("gamma's take"));
    return reply::chat("Choice: " + question.substr(at + 7, question.find(':', at) - at - 7));
  });
  auto plan = plan_with({{.kind = judge_kind::choice, .candidate = "judge-model"}});
  std::vector<request_result> results;
  for (std::int64_t prompt = 0; prompt < 4; ++prompt)
    for (const std::string candidate : {"alpha-model", "beta-model", "gamma-model"}) {
      const std::string who = candidate.substr(0, candidate.find('-'));
      results.push_back(answer(candidate, prompt, 0, who + "'s take on " + std::to_string(prompt)));
    }
  results.push_back(answer("alpha-model", 9, 0, "alone"));  // a group of one: nothing to choose from
  const auto made = judge(plan, results);

  BOOST_REQUIRE(made.size() == 12u);
  for (std::size_t i = 0; i < made.size(); ++i) {
    BOOST_TEST(made[i].method == "judge:choice");
    BOOST_TEST(made[i].request_key == results[i].request.key);
    BOOST_TEST(*made[i].value == (results[i].request.candidate == "gamma-model" ? 1.0 : 0.0));
  }
  // Group 0 is shown in the order {gamma, alpha, beta} (choice_order(3, 22, 0, 0) = {2, 0, 1}).
  BOOST_TEST(made[0].detail == "shown as B; chose A");
  BOOST_TEST(made[1].detail == "shown as C; chose A");
  BOOST_TEST(made[2].detail == "shown as A; chose A");

  const auto sent = server.received();
  BOOST_REQUIRE(sent.size() == 4u);
  std::set<std::string> orders;
  for (std::size_t g = 0; g < sent.size(); ++g) {
    const auto question = question_of(sent[g]);
    for (const std::string_view name : {"alpha-model", "beta-model", "gamma-model", "evaluation/"})
      BOOST_TEST(question.find(name) == std::string::npos);
    std::string order;
    for (const std::string_view who : {"alpha", "beta", "gamma"})
      order += std::to_string(question.find(std::string(who) + "'s take")) + ",";
    orders.insert(order);
  }
  BOOST_TEST(orders.size() == 4u);  // every group in an order of its own
  const auto question = question_of(sent[0]);
  BOOST_TEST(question.find("Answer A:\n<<<\ngamma's take on 0\n>>>\n\nAnswer B:\n<<<\nalpha's take on 0\n>>>\n\n"
                           "Answer C:\n<<<\nbeta's take on 0\n>>>") != std::string::npos);

  // The same seed asks the same questions; another seed shuffles otherwise.
  auto again = judge(plan, results);
  const auto resent = server.received();
  BOOST_REQUIRE(resent.size() == 8u);
  for (std::size_t g = 0; g < 4; ++g) BOOST_TEST(resent[4 + g].body == sent[g].body);
  judge(plan, results, {}, {.seed = 23});
  const auto reseeded = server.received();
  BOOST_REQUIRE(reseeded.size() == 12u);
  BOOST_TEST(reseeded[8].body != sent[0].body);
}

BOOST_FIXTURE_TEST_CASE(a_choice_group_fully_scored_is_skipped, judge_fixture) {
  server.on(chat_path, reply::chat("Choice: A"));
  auto plan = plan_with({{.kind = judge_kind::choice, .candidate = "judge-model"}});
  std::set<std::pair<std::string, std::string>> scored;
  for (const auto& result : three_answers) scored.emplace(result.request.key, "judge:choice");
  BOOST_TEST(judge(plan, three_answers, scored).empty());
  scored.erase({"evaluation/beta-model/0/0", "judge:choice"});  // a group cut short by a kill: asked again whole
  BOOST_TEST(judge(plan, three_answers, scored).size() == 3u);
  BOOST_TEST(server.requests(chat_path) == 1u);
}

BOOST_FIXTURE_TEST_CASE(max_answers_judges_each_candidates_first_answers_and_first_groups, judge_fixture) {
  server.on(chat_path, reply::chat("Fine.\nScore: 5"));
  auto plan = plan_with({{.kind = judge_kind::scorer, .candidate = "judge-model", .max_answers = 1}});
  std::vector<request_result> results;
  for (std::int64_t prompt = 0; prompt < 3; ++prompt)
    for (const char* candidate : {"alpha-model", "beta-model", "gamma-model"})
      results.push_back(answer(candidate, prompt, 0, std::string(candidate) + " on " + std::to_string(prompt)));
  auto made = judge(plan, results);
  BOOST_REQUIRE(made.size() == 2u);
  BOOST_TEST(made[0].request_key == "evaluation/beta-model/0/0");
  BOOST_TEST(made[1].request_key == "evaluation/gamma-model/0/0");
  // Resumed with those scored: the same first answer counts, and nothing more is asked.
  std::set<std::pair<std::string, std::string>> scored = {{"evaluation/beta-model/0/0", "judge:scorer"},
                                                          {"evaluation/gamma-model/0/0", "judge:scorer"}};
  BOOST_TEST(judge(plan, results, scored).empty());

  server.on(chat_path, reply::chat("Choice: B"));
  plan = plan_with({{.kind = judge_kind::choice, .candidate = "judge-model", .max_answers = 2}});
  made = judge(plan, results);
  BOOST_TEST(made.size() == 6u);  // two groups of three
  BOOST_TEST(made.back().request_key.ends_with("/1/0"));
}

BOOST_FIXTURE_TEST_CASE(a_bad_plan_is_refused_before_anything_is_sent, judge_fixture) {
  server.on(chat_path, reply::chat("Fine.\nScore: 5"));
  const auto refusal = [&](const evaluation_plan& plan) -> std::string {
    try {
      judge(plan, three_answers);
    } catch (const llmgate::error& e) {
      return e.what();
    }
    return "accepted";
  };
  BOOST_TEST(refusal(plan_with({{.kind = judge_kind::scorer, .candidate = "judge-model", .template_text = "{{answer}}"}})) ==
             "judge 0 (scorer): the template misses {{prompt}}, which a scorer judge needs: invalid request");
  BOOST_TEST(refusal(plan_with({{.kind = judge_kind::scorer, .candidate = "nobody"}})) ==
             "judge 0 (scorer): \"nobody\" is not a candidate of the plan: invalid request");
  auto plan = plan_with({{.kind = judge_kind::scorer, .candidate = "judge-model"}});
  plan.prompts[0].variables.clear();
  BOOST_TEST(refusal(plan) ==
             "prompt 0: variable {{tasks}} is not set by the prompt: invalid request");
  BOOST_TEST(server.requests() == 0u);
}

BOOST_FIXTURE_TEST_CASE(two_judges_of_one_kind_record_under_methods_of_their_own, judge_fixture) {
  server.on(chat_path, reply::chat("Fine.\nScore: 5"));
  auto plan = plan_with({{.kind = judge_kind::scorer, .candidate = "judge-model"},
                         {.kind = judge_kind::scorer, .candidate = "beta-model"},
                         {.kind = judge_kind::comparer, .candidate = "judge-model"}});
  BOOST_TEST(llmgate::judge_method(plan, 0) == "judge:scorer:judge-model");
  BOOST_TEST(llmgate::judge_method(plan, 1) == "judge:scorer:beta-model");
  BOOST_TEST(llmgate::judge_method(plan, 2) == "judge:comparer");
}

BOOST_FIXTURE_TEST_CASE(concurrent_questions_record_every_verdict_once, judge_fixture) {
  server.on(chat_path, reply::chat("Fine.\nScore: 9"));
  auto plan = plan_with({{.kind = judge_kind::scorer, .candidate = "judge-model"}});
  plan.concurrency = 4;
  std::vector<request_result> results;
  for (std::int64_t prompt = 0; prompt < 4; ++prompt)
    for (std::int64_t repetition = 0; repetition < 3; ++repetition)
      for (const std::string candidate : {"alpha-model", "beta-model", "gamma-model"})
        results.push_back(answer(candidate, prompt, repetition, candidate + " answer"));
  const auto made = judge(plan, results);
  BOOST_REQUIRE(made.size() == 24u);
  std::set<std::string> keys;
  for (const auto& score : recorded) keys.insert(score.request_key);
  BOOST_TEST(keys.size() == 24u);
  BOOST_TEST(recorded.size() == 24u);
  BOOST_TEST(server.requests(chat_path) == 24u);
  std::size_t i = 0;
  for (const auto& result : results)
    if (result.request.candidate != "alpha-model") BOOST_TEST(made[i++].request_key == result.request.key);
}

BOOST_FIXTURE_TEST_CASE(no_more_questions_in_flight_than_the_plan_allows, judge_fixture) {
  auto held = reply::chat("Fine.\nScore: 4");
  held.hold = "gate";
  server.on(chat_path, held);
  auto plan = plan_with({{.kind = judge_kind::scorer, .candidate = "judge-model"}});
  plan.concurrency = 2;
  std::vector<request_result> results;
  for (std::int64_t prompt = 0; prompt < 4; ++prompt) results.push_back(answer("beta-model", prompt, 0, "beta answer"));
  auto done = net::co_spawn(
      io,
      llmgate::judge_answers(
          plan, results, [&](std::string_view) { return judge_backend(server.url("/v1")); },
          [](std::string_view, std::string_view) { return false; }, [&](const score_record& s) { recorded.push_back(s); }),
      net::use_future);
  for (int turn = 0; turn < 500 && server.requests(chat_path) < 2; ++turn) io.run_for(10ms);
  io.run_for(100ms);  // time for a third question, were it sent
  BOOST_TEST(server.requests(chat_path) == 2u);
  BOOST_TEST(recorded.empty());
  server.release("gate");
  io.run();
  BOOST_TEST(done.get().size() == 4u);
  BOOST_TEST(recorded.size() == 4u);
  BOOST_TEST(server.requests(chat_path) == 4u);
}

BOOST_FIXTURE_TEST_CASE(a_failing_record_stops_the_judging, judge_fixture) {
  server.on(chat_path, reply::chat("Fine.\nScore: 4"));
  auto plan = plan_with({{.kind = judge_kind::scorer, .candidate = "judge-model"}});
  plan.concurrency = 2;
  BOOST_CHECK_EXCEPTION(
      run(llmgate::judge_answers(
          plan, three_answers, [&](std::string_view) { return judge_backend(server.url("/v1")); },
          [](std::string_view, std::string_view) { return false; },
          [](const score_record&) { throw std::runtime_error("disk full"); })),
      std::runtime_error, [](const std::runtime_error& e) { return std::string(e.what()) == "disk full"; });
}

BOOST_FIXTURE_TEST_CASE(a_cancelled_judging_records_nothing_for_the_questions_in_flight, judge_fixture) {
  auto held = reply::chat("Fine.\nScore: 4");
  held.hold = "never";
  server.on(chat_path, held);
  auto plan = plan_with({{.kind = judge_kind::scorer, .candidate = "judge-model"}});
  net::cancellation_signal cancel;
  auto done = net::co_spawn(
      io,
      llmgate::judge_answers(
          plan, three_answers, [&](std::string_view) { return judge_backend(server.url("/v1")); },
          [](std::string_view, std::string_view) { return false; }, [&](const score_record& s) { recorded.push_back(s); }),
      net::bind_cancellation_slot(cancel.slot(), net::use_future));
  for (int turn = 0; turn < 500 && server.requests(chat_path) < 1; ++turn) io.run_for(10ms);
  BOOST_REQUIRE(server.requests(chat_path) == 1u);
  cancel.emit(net::cancellation_type::terminal);
  io.run();
  BOOST_CHECK_THROW(done.get(), boost::system::system_error);
  BOOST_TEST(recorded.empty());
}

BOOST_AUTO_TEST_SUITE_END()
