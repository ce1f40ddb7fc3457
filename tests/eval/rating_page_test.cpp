// The rating page in a real browser: headless Chromium (Debian's), driven
// over DevTools by puppeteer-core (tests/eval/rate_batch.mjs), rates one
// rater's batch through the page's own form and buttons, and the run store
// holds exactly the ratings it chose, in the order the page showed them,
// while no page named a model. Skipped, with the reason, where Node,
// puppeteer-core (scripts/setup) or Chromium are missing; CI
// (LLMGATE_REQUIRE_REAL_PARTS=1) fails instead.
#include <boost/test/unit_test.hpp>

#include <cstddef>     // std::size_t
#include <filesystem>  // std::filesystem
#include <sstream>     // std::istringstream
#include <string>      // std::string, std::getline
#include <utility>     // std::pair
#include <vector>      // std::vector

#include "llmgate/eval/rate/rating_server.hpp"  // rating_server, rating_site
#include "../node/node_process.hpp"             // node_unavailable, run_node, node_packages
#include "../skip_test.hpp"                     // skip_test
#include "rating_fixture.hpp"                   // record_rating_run, rating_candidates, rating_prompt

namespace fs = std::filesystem;

namespace {

const fs::path chromium = "/usr/bin/chromium";

/// What the scripted rater chooses for a response: its word count, modulo 11.
int chosen_score(const std::string& response) {
  std::istringstream words(response);
  std::size_t count = 0;
  for (std::string word; words >> word;) ++count;
  return static_cast<int>(count % 11);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(rating_page_test)

BOOST_AUTO_TEST_CASE(a_scripted_rater_rates_a_batch_in_headless_chromium) {
  if (const auto missing = llmgate::test::node_unavailable({"puppeteer-core"}))
    return llmgate::test::skip_test(*missing);
  if (!fs::exists(chromium)) return llmgate::test::skip_test("no browser at " + chromium.string() + " (scripts/setup installs chromium)");

  auto store = llmgate::run_store::in_memory();
  const auto results = llmgate::test::record_rating_run(store, 4);  // 12 answers
  const std::vector<std::string> raters = {"ann", "bob"};
  const auto batches = llmgate::assign_raters(store, results, raters);
  BOOST_REQUIRE(batches[0].request_keys.size() == 6u);
  llmgate::rating_catalog catalog(results, llmgate::rating_secret(store), llmgate::test::rating_prompt);
  llmgate::rating_server server(llmgate::rating_site(store, catalog, batches));
  server.start();

  std::vector<std::string> arguments = {(fs::path(LLMGATE_TESTS_DIR) / "eval/rate_batch.mjs").string(),
                                        llmgate::test::node_packages().string(), chromium.string(), server.url(), "ann"};
  for (const auto& candidate : llmgate::test::rating_candidates) arguments.push_back(candidate);
  arguments.push_back("evaluation/");
  const auto run = llmgate::test::run_node(arguments);
  BOOST_TEST_MESSAGE("rate_batch.mjs:\n" << run.output);
  BOOST_TEST(run.status == 0, run.output);

  std::vector<std::pair<std::string, int>> rated;  // item id, score, as the script chose them
  std::vector<std::string> leaks, done;
  std::istringstream lines(run.output);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("rated ")) {
      const auto space = line.find(' ', 6);
      rated.emplace_back(line.substr(6, space - 6), std::stoi(line.substr(space + 1)));
    } else if (line.starts_with("leak ")) {
      leaks.push_back(line);
    } else if (line.starts_with("done ")) {
      done.push_back(line);
    }
  }
  BOOST_TEST(leaks.empty(), run.output);
  BOOST_REQUIRE(done.size() == 1u);
  BOOST_TEST(done[0] == "done You have rated all 6 answers of your batch. You can close this page.");

  // The page showed ann's batch in its order, and the script read each response.
  BOOST_REQUIRE(rated.size() == 6u);
  for (std::size_t i = 0; i < rated.size(); ++i) {
    const auto* item = catalog.by_key(batches[0].request_keys[i]);
    BOOST_TEST(rated[i].first == item->id);
    BOOST_TEST(rated[i].second == chosen_score(item->response));
  }
  // The store holds exactly those ratings, ann's only.
  const auto ratings = store.ratings();
  BOOST_REQUIRE(ratings.size() == 6u);
  for (std::size_t i = 0; i < ratings.size(); ++i) {
    BOOST_TEST(ratings[i].rater == "ann");
    BOOST_TEST(ratings[i].request_key == batches[0].request_keys[i]);
    BOOST_TEST(ratings[i].score == rated[i].second);
    BOOST_TEST(ratings[i].at_unix_ms > 0);
  }
  server.stop();
}

BOOST_AUTO_TEST_SUITE_END()
