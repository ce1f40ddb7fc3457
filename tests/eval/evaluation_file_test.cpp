// The evaluation file: a good one reads into the plan field by field, and
// each kind of mistake is refused naming its field.
#include <boost/test/unit_test.hpp>

#include <fstream>
#include <string>

#include <boost/json/parse.hpp>

#include "llmgate/eval/plan/evaluation_file.hpp"
#include "../temporary_directory.hpp"

namespace llmgate {
namespace {

const char* const good = R"({
  "backends": [{"name": "demo", "kind": "demo"}],
  "candidates": [
    {"name": "large", "backend": "demo", "model": "demo-large", "price": {"input_per_1k": 0.0025, "output_per_1k": 0.01}},
    {"name": "small", "gguf": "tiny.gguf", "sampling": {"temperature": 0.7, "seed": 7},
     "price": {"instance_per_hour": 0.5, "utilization": 0.5}}],
  "reference": "large",
  "templates": [{"name": "briefing", "messages": [{"role": "system", "content": "Be brief."},
                                                  {"role": "user", "content": "Plan my day: {{tasks}}"}]}],
  "prompts": [{"template": "briefing", "variables": {"tasks": "call mum"}}, {"variables": {"tasks": "gym"}}],
  "repetitions": 3, "warmup": 2, "concurrency": 5,
  "sampling": {"max_tokens": 64},
  "embedders": [{"name": "hashing"}, {"name": "tiny", "candidate": "small"}],
  "judges": [{"kind": "comparer_reasoning", "candidate": "large", "max_answers": 10}],
  "schedule": {"requests": 2, "every_seconds": 5, "duration_seconds": 20}
})";

// Reads `json` with `folder` holding tiny.gguf; returns the refusal's text ("" when none).
std::string refusal(const std::string& json, const std::filesystem::path& folder) {
  try {
    (void)evaluation_file::from_json(boost::json::parse(json), folder);
  } catch (const config_error& e) {
    return e.what();
  }
  return "";
}

std::string with(std::string json, const std::string& from, const std::string& to) {
  const auto at = json.find(from);
  BOOST_TEST_REQUIRE(at != std::string::npos, from);
  return json.replace(at, from.size(), to);
}

struct folder_with_model {
  llmgate::test::temporary_directory dir;
  folder_with_model() { std::ofstream(dir.path() / "tiny.gguf") << "GGUF"; }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(evaluation_file_test)

BOOST_FIXTURE_TEST_CASE(a_good_file_reads_into_the_plan, folder_with_model) {
  const auto file = evaluation_file::from_json(boost::json::parse(good), dir.path());
  const auto& plan = file.plan;
  BOOST_TEST_REQUIRE(plan.candidates.size() == 2u);
  BOOST_TEST(plan.candidates[0].backend == "demo");
  BOOST_TEST(plan.candidates[0].model == "demo-large");
  BOOST_TEST(plan.candidates[0].price.output_per_1k == 0.01);
  BOOST_TEST(!plan.candidates[0].price.self_hosted());
  BOOST_TEST(plan.candidates[1].gguf == dir.path() / "tiny.gguf");
  BOOST_TEST(plan.candidates[1].price.self_hosted());
  BOOST_TEST(plan.candidates[1].price.utilization == 0.5);
  BOOST_TEST(plan.candidates[1].sampling.at("temperature").as_double() == 0.7);
  BOOST_TEST(plan.reference == "large");
  BOOST_TEST_REQUIRE(plan.templates.size() == 1u);
  BOOST_TEST(plan.templates[0].messages[1].content == "Plan my day: {{tasks}}");
  BOOST_TEST_REQUIRE(plan.prompts.size() == 2u);
  BOOST_TEST(plan.prompts[1].template_name == "briefing");  // the only template, when none is named
  BOOST_TEST(plan.prompts[1].variables.at("tasks") == "gym");
  BOOST_TEST(plan.repetitions == 3u);
  BOOST_TEST(plan.warmup == 2u);
  BOOST_TEST(plan.concurrency == 5u);
  BOOST_TEST(plan.sampling.at("max_tokens").as_int64() == 64);
  BOOST_TEST(plan.scorers.size() == 4u);
  BOOST_TEST_REQUIRE(plan.embedders.size() == 2u);
  BOOST_TEST(plan.embedders[1].candidate == "small");
  BOOST_TEST_REQUIRE(plan.judges.size() == 1u);
  BOOST_TEST((plan.judges[0].kind == judge_kind::comparer_reasoning));
  BOOST_TEST(plan.judges[0].max_answers == 10u);
  BOOST_TEST(plan.schedule.enabled());
  BOOST_TEST(plan.schedule.every_seconds == 5.0);
  BOOST_TEST(file.fingerprint.size() == 16u);
  const auto again = evaluation_file::from_json(boost::json::parse(good), dir.path());
  BOOST_TEST(again.fingerprint == file.fingerprint);
  const auto other = evaluation_file::from_json(boost::json::parse(with(good, "\"repetitions\": 3", "\"repetitions\": 4")), dir.path());
  BOOST_TEST(other.fingerprint != file.fingerprint);
}

BOOST_FIXTURE_TEST_CASE(each_mistake_is_refused_naming_its_field, folder_with_model) {
  const auto& d = dir.path();
  BOOST_TEST(refusal(with(good, "\"repetitions\"", "\"repetitons\""), d) ==
             "config: repetitons is not a known key; did you mean repetitions?");
  BOOST_TEST(refusal(with(good, "\"backend\": \"demo\"", "\"backend\": \"gpt\""), d) ==
             "config: candidates[0].backend names \"gpt\", which is not in backends");
  BOOST_TEST(refusal(with(good, "\"gguf\": \"tiny.gguf\"", "\"gguf\": \"absent.gguf\""), d) ==
             "config: candidates[1].gguf cannot read '" + (d / "absent.gguf").string() + "'");
  BOOST_TEST(refusal(with(good, "\"reference\": \"large\"", "\"reference\": \"huge\""), d) ==
             "config: reference names \"huge\", which is not in candidates");
  BOOST_TEST(refusal(with(good, "{\"template\": \"briefing\",", "{\"template\": \"memo\","), d) ==
             "config: prompts[0].template names \"memo\", which is not in templates");
  BOOST_TEST(refusal(with(good, "\"temperature\": 0.7", "\"temperature\": 3"), d) ==
             "config: candidates[1].sampling.temperature must be between 0 and 2, not 3");
  BOOST_TEST(refusal(with(good, "\"utilization\": 0.5", "\"utilization\": 1.5"), d) ==
             "config: candidates[1].price.utilization must be greater than 0 and at most 1, not 1.5");
  BOOST_TEST(refusal(with(good, "\"kind\": \"comparer_reasoning\"", "\"kind\": \"referee\""), d) ==
             "config: judges[0].kind must be one of scorer, comparer, comparer_reasoning, choice (not \"referee\")");
  BOOST_TEST(refusal(with(good, "\"role\": \"system\"", "\"role\": \"narrator\""), d) ==
             "config: templates[0].messages[0].role must be \"system\", \"user\" or \"assistant\" (not \"narrator\")");
  BOOST_TEST(refusal(with(good, "\"concurrency\": 5", "\"concurrency\": 0"), d) ==
             "config: concurrency must be between 1 and 1024, not 0");
  BOOST_TEST(refusal(with(good, "\"name\": \"small\", \"gguf\"", "\"name\": \"large\", \"gguf\""), d) ==
             "config: candidates[1].name repeats \"large\"");
  BOOST_TEST(refusal(with(good, "\"name\": \"large\", \"backend\": \"demo\",", "\"name\": \"large\","), d) ==
             "config: candidates[0] must name either a backend or a gguf file, one of them");
}

BOOST_FIXTURE_TEST_CASE(a_prompt_set_file_is_read_line_by_line_and_its_mistakes_name_the_line, folder_with_model) {
  std::ofstream(dir.path() / "set.jsonl") << "{\"variables\": {\"tasks\": \"a\"}}\n\n{\"variables\": {\"tasks\": \"b\"}}\n";
  std::ofstream(dir.path() / "eval.json")
      << with(good, "\"prompts\": [{\"template\": \"briefing\", \"variables\": {\"tasks\": \"call mum\"}}, {\"variables\": {\"tasks\": \"gym\"}}]",
              "\"prompts_file\": \"set.jsonl\"");
  const auto file = evaluation_file::load(dir.path() / "eval.json");
  BOOST_TEST_REQUIRE(file.plan.prompts.size() == 2u);
  BOOST_TEST(file.plan.prompts[1].variables.at("tasks") == "b");

  std::ofstream(dir.path() / "set.jsonl") << "{\"variables\": {\"tasks\": \"a\"}}\n{\"variables\": \n";
  BOOST_CHECK_EXCEPTION(evaluation_file::load(dir.path() / "eval.json"), config_error, [](const config_error& e) {
    return std::string(e.what()).starts_with("eval.json: set.jsonl line 2 is not JSON: ");
  });
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace llmgate
