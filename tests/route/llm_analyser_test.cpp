// The LLM analyser: a valid reply is taken, anything else (not JSON, an
// unknown label, a complexity out of range, extra fields, a failed call)
// falls back to the local analyser with a clear reason; long requests are
// pruned to their edges and a sample of the middle; latency is recorded.
#include <boost/test/unit_test.hpp>

#include <memory>
#include <stdexcept>
#include <string>

#include "llmgate/route/llm_analyser.hpp"

using llmgate::llm_analyser;
using llmgate::local_analyser;
using llmgate::parse_task_reply;
using llmgate::prune_request;

namespace {

// A model that always answers `reply` and remembers the last prompt.
struct scripted_model {
  std::string reply;
  std::shared_ptr<std::string> last_prompt = std::make_shared<std::string>();
  std::string operator()(const std::string& prompt) const {
    *last_prompt = prompt;
    if (reply == "throw") throw std::runtime_error("connection refused");
    return reply;
  }
};

llm_analyser<scripted_model> analyser_answering(std::string reply) {
  return llm_analyser<scripted_model>(scripted_model{std::move(reply)}, local_analyser{});
}

bool refused_because(std::string_view reply, std::string_view reason) {
  std::string problem;
  const bool refused = !parse_task_reply(reply, problem);
  return refused && problem.find(reason) != std::string::npos;
}

}  // namespace

static_assert(llmgate::TaskAnalyser<llm_analyser<scripted_model>>);

BOOST_AUTO_TEST_SUITE(llm_analyser_test)

BOOST_AUTO_TEST_CASE(a_valid_reply_is_taken_as_it_is) {
  const auto analyser = analyser_answering(R"({"task_type": "math", "domain": "finance", "complexity": 0.8})");
  const auto task = analyser.analyse("Write a Python function that sorts a list");
  BOOST_TEST(task.task_type == "math");  // the model's word, not the text rules'
  BOOST_TEST(task.domain == "finance");
  BOOST_TEST(task.complexity == 0.8f);
  BOOST_TEST(task.fallback_reason.empty());
  BOOST_TEST(analyser.fallbacks() == 0u);
  BOOST_TEST(analyser.latency().count() == 1u);
}

BOOST_AUTO_TEST_CASE(bad_replies_are_refused_with_the_reason) {
  BOOST_TEST(refused_because("Sure! It is a coding task.", "not JSON"));
  BOOST_TEST(refused_because(R"(["coding", "programming", 0.5])", "not a JSON object"));
  BOOST_TEST(refused_because(R"({"task_type": "coding", "domain": "programming"})", "complexity"));
  BOOST_TEST(refused_because(R"({"task_type": "poetry", "domain": "general", "complexity": 0.5})",
                             "\"task_type\" is \"poetry\""));
  BOOST_TEST(refused_because(R"({"task_type": "coding", "domain": 7, "complexity": 0.5})", "\"domain\""));
  BOOST_TEST(refused_because(R"({"task_type": "coding", "domain": "programming", "complexity": 1.5})",
                             "complexity"));
  BOOST_TEST(refused_because(R"({"task_type": "coding", "domain": "programming", "complexity": 0.5, "why": "x"})",
                             "unexpected field \"why\""));
  BOOST_TEST(refused_because(R"({"task_type": "coding", "domain": "programming", "complexity": 0.5} trailing)",
                             "not JSON"));
}

BOOST_AUTO_TEST_CASE(bad_json_falls_back_to_the_local_analyser_with_a_clear_error) {
  const auto analyser = analyser_answering("I think this is about coding.");
  const auto task = analyser.analyse("Write a Python function that sorts a list");
  BOOST_TEST(task.task_type == "coding");  // the local analyser's reading
  BOOST_TEST(task.fallback_reason.find("not JSON") != std::string::npos);
  BOOST_TEST(task.fallback_reason.find("fallback analyser") != std::string::npos);
  BOOST_TEST(analyser.fallbacks() == 1u);
}

BOOST_AUTO_TEST_CASE(a_failed_call_falls_back_too) {
  const auto analyser = analyser_answering("throw");
  const auto task = analyser.analyse("How many apples are left if Sam eats 3 of 12?");
  BOOST_TEST(task.task_type == "math");
  BOOST_TEST(task.fallback_reason.find("connection refused") != std::string::npos);
  BOOST_TEST(analyser.latency().count() == 1u);
}

BOOST_AUTO_TEST_CASE(long_requests_are_pruned_to_edges_and_a_middle_sample) {
  std::string text;
  for (int i = 0; i < 1000; ++i) text.append("w").append(std::to_string(i)).append(" ");
  const auto pruned = prune_request(text, 3, 4);
  BOOST_TEST(prune_request(text, 2, 0) == "w0 w1 ... w998 w999");
  BOOST_TEST(pruned == "w0 w1 w2 ... w3 w251 w500 w748 ... w997 w998 w999");
  BOOST_TEST(prune_request("just a few words", 3, 4) == "just a few words");

  const scripted_model model{R"({"task_type": "chat", "domain": "general", "complexity": 0.1})"};
  const llm_analyser<scripted_model> analyser(model, local_analyser{});
  analyser.analyse(text);
  const auto& prompt = *model.last_prompt;
  BOOST_TEST(prompt.size() < text.size() / 4);
  BOOST_TEST(prompt.find("w0 w1") != std::string::npos);
  BOOST_TEST(prompt.find("w998 w999") != std::string::npos);
  BOOST_TEST(prompt.find("\"task_type\"") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
