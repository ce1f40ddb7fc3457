// The router stage in a pipeline over the in-test upstream: a request
// without a model (or "auto") goes out with the router's choice, one that
// names its model keeps it, and feedback through the context reaches the
// router's ledger. A predictive_router in the same stage routes by what it
// learned from outcomes, and takes no feedback.
#include <boost/test/unit_test.hpp>

#include <string>

#include "llmgate/backend/openai_backend.hpp"
#include "llmgate/pipeline/backend_stage.hpp"
#include "llmgate/pipeline/pipeline.hpp"
#include "llmgate/pipeline/router_stage.hpp"
#include "llmgate/route/predictive_router.hpp"
#include "../backend/backend_fixture.hpp"

using llmgate::test::reply;
using llmgate::test::user_says;

namespace {

const std::string chat_path = "/v1/chat/completions";

struct stage_fixture : llmgate::test::backend_fixture {
  stage_fixture() {
    server.on(chat_path, [](const llmgate::test::received_request& request) {
      return reply::chat("answered by " + std::string(request.json().at("model").as_string()));
    });
  }

  llmgate::router router{llmgate::model_registry::from_json(R"({"models": [
      {"name": "cheap-chat", "accuracy": 0.7, "input_cost_per_million": 0.1},
      {"name": "code-model", "accuracy": 0.7, "task_accuracy": {"coding": 0.95},
       "input_cost_per_million": 1, "task_types": ["coding"]}]})"),
                         llmgate::local_analyser{}, llmgate::preferences::parse("accuracy=0.8,cost=0.2")};
  llmgate::openai_backend models{client(llmgate::http_client_options{}),
                                 llmgate::openai_options{.base_url = server.url("/v1"), .api_key = "sk-test"}};
  llmgate::pipeline<llmgate::router_stage<llmgate::router>, llmgate::backend_stage<llmgate::openai_backend>>
      answer{llmgate::router_stage(router), llmgate::backend_stage(models)};

  llmgate::chat_response ask(llmgate::chat_request request, llmgate::request_context& context) {
    return llmgate::complete_blocking(io, answer, std::move(request), context);
  }
};

}  // namespace

BOOST_FIXTURE_TEST_SUITE(router_stage_test, stage_fixture)

BOOST_AUTO_TEST_CASE(a_request_without_a_model_gets_the_routers_choice) {
  llmgate::request_context context;
  const auto coding = ask(user_says("Write a Python function that merges two sorted lists", ""), context);
  BOOST_TEST(coding.content == "answered by code-model");
  const auto chat = ask(user_says("tell me a joke", "auto"), context);
  BOOST_TEST(chat.content == "answered by cheap-chat");
  BOOST_TEST(server.requests(chat_path) == 2u);
}

BOOST_AUTO_TEST_CASE(a_request_that_names_its_model_keeps_it) {
  llmgate::request_context context;
  const auto response = ask(user_says("Write a Python function that merges two sorted lists", "my-model"), context);
  BOOST_TEST(response.content == "answered by my-model");
  BOOST_TEST(!context.feedback);
}

BOOST_AUTO_TEST_CASE(feedback_through_the_context_reaches_the_router) {
  llmgate::request_context context;
  ask(user_says("Write a Python function that merges two sorted lists", ""), context);
  BOOST_TEST_REQUIRE(static_cast<bool>(context.feedback));
  context.feedback(false);
  BOOST_TEST(router.ledger().votes("code-model", "coding", "programming").down == 1u);
}

// "coder" answered every coding request right and no geography one,
// "atlas" the reverse; both cost the same.
BOOST_AUTO_TEST_CASE(a_predictive_router_sends_each_request_to_the_model_that_gets_its_kind_right) {
  std::vector<llmgate::routing_outcome> outcomes;
  const char* coding[] = {"write a python function to sort a list", "return the longest string in an array",
                          "fix the loop in this function", "write a class for a stack in python"};
  const char* geography[] = {"what is the capital of peru", "which river crosses the city of cairo",
                             "name the highest mountain of the continent", "which country borders the ocean"};
  for (int i = 0; i < 40; ++i) {
    outcomes.push_back({coding[i % 4], {}, {1, 0}, {0.001, 0.001}, {}});
    outcomes.push_back({geography[i % 4], {}, {0, 1}, {0.001, 0.001}, {}});
  }
  const auto routing = llmgate::predictive_routing::learn({"coder", "atlas"}, outcomes);
  auto [predictive, choice] = routing.for_target(llmgate::routing_target::parse("match-best"));
  llmgate::pipeline<llmgate::router_stage<llmgate::predictive_router>, llmgate::backend_stage<llmgate::openai_backend>>
      predicted{llmgate::router_stage(predictive), llmgate::backend_stage(models)};
  llmgate::request_context context;
  const auto code = llmgate::complete_blocking(io, predicted, user_says("write a python function to sort a list", "auto"), context);
  BOOST_TEST(code.content == "answered by coder");
  BOOST_TEST(!context.feedback);
  const auto place = llmgate::complete_blocking(io, predicted, user_says("what is the capital of peru", ""), context);
  BOOST_TEST(place.content == "answered by atlas");
  BOOST_TEST(context.route->model == "atlas");
}

BOOST_AUTO_TEST_SUITE_END()
