// verifier_training: the AUC of hand-made lists, JSON lines read or refused
// with the file and line named, the component split, and fits with known
// answers (a separable set fits to AUC 1, XOR needs the trees, the same
// seed gives the same model).
#include <boost/test/unit_test.hpp>

#include <cmath>        // std::isnan
#include <set>          // std::set
#include <stdexcept>    // std::invalid_argument
#include <string>       // std::string
#include <vector>       // std::vector

#include "llmgate/cache/verifier_training.hpp"
#include "llmgate/tools/labelled_pairs.hpp"
#include "llmgate/embed/text.hpp"
#include "../file_bytes.hpp"
#include "../temporary_directory.hpp"

using llmgate::labelled_features;
using llmgate::labelled_pair;
using llmgate::roc_auc;
using llmgate::verifier_model;

namespace {

double auc(const std::vector<float>& scores, const std::vector<int>& labels) {
  std::unique_ptr<bool[]> flags(new bool[labels.size()]);
  for (std::size_t i = 0; i < labels.size(); ++i) flags[i] = labels[i] != 0;
  return roc_auc(scores, std::span<const bool>(flags.get(), labels.size()));
}

double auc_of(const verifier_model& model, const labelled_features& data) {
  std::vector<float> logits(data.rows());
  for (std::size_t r = 0; r < data.rows(); ++r) logits[r] = model.logit(data.row(r));
  return roc_auc(logits, data.labels());
}

// Rows whose label is feature 0 > 0 (with two noise features), separable;
// few values of feature 0, so that the histograms keep its gap.
labelled_features separable(std::size_t rows) {
  labelled_features data(3, rows);
  std::uint64_t state = 12345;
  const auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<float>(state >> 40) / static_cast<float>(1 << 24) - 0.5f;  // [-0.5, 0.5)
  };
  for (std::size_t r = 0; r < rows; ++r) {
    const bool positive = r % 3 == 0;
    data.row(r)[0] = positive ? 1.0f + static_cast<float>(r % 4) : -1.0f - static_cast<float>(r % 5);
    data.row(r)[1] = next();
    data.row(r)[2] = 10.0f * next();
    data.label(r) = positive;
  }
  return data;
}

// label = x0 xor x1, a quarter of the (1, 1) rows dropped so that a first
// split has something to gain: a linear model ranks it poorly.
labelled_features exclusive_or() {
  std::vector<std::pair<bool, bool>> cells;
  for (std::size_t r = 0; r < 400; ++r)
    if (r % 4 != 3 || r % 8 == 3) cells.emplace_back(r % 2, (r / 2) % 2);
  labelled_features data(2, cells.size());
  for (std::size_t r = 0; r < cells.size(); ++r) {
    const auto [x0, x1] = cells[r];
    data.row(r)[0] = x0;
    data.row(r)[1] = x1;
    data.label(r) = x0 != x1;
  }
  return data;
}

std::string normal_form(const std::string& text) {
  return llmgate::normalize_text(text, {.case_fold = true, .letters_and_digits_only = true});
}

}  // namespace

BOOST_AUTO_TEST_SUITE(verifier_training_test)

BOOST_AUTO_TEST_CASE(roc_auc_of_hand_made_lists) {
  BOOST_TEST(auc({0.1f, 0.4f, 0.35f, 0.8f}, {0, 0, 1, 1}) == 0.75);
  BOOST_TEST(auc({0.1f, 0.2f, 0.3f, 0.4f}, {0, 0, 1, 1}) == 1.0);
  BOOST_TEST(auc({0.4f, 0.3f, 0.2f, 0.1f}, {0, 0, 1, 1}) == 0.0);
  // Ties count half: the 0.5s are two ties (1/2 each), 0.9 beats both.
  BOOST_TEST(auc({0.5f, 0.5f, 0.5f, 0.9f}, {0, 1, 0, 1}) == 0.75);
  BOOST_TEST(auc({1.0f, 1.0f, 1.0f}, {1, 0, 0}) == 0.5);
  BOOST_TEST(std::isnan(auc({0.1f, 0.2f}, {1, 1})));
  BOOST_TEST(std::isnan(auc({}, {})));
}

BOOST_AUTO_TEST_CASE(labelled_pairs_are_read_from_json_lines) {
  llmgate::test::temporary_directory dir;
  llmgate::test::write_bytes(dir / "pairs.jsonl",
                             "{\"a\": \"How old is Paris?\", \"b\": \"What is the age of Paris?\", \"duplicate\": 1}\n"
                             "\n"
                             "{\"a\": \"x\", \"b\": \"y\", \"duplicate\": 0, \"id\": 7}\n"
                             "{\"b\": \"\\u00e9t\\u00e9\", \"a\": \"summer\", \"duplicate\": true}\r\n");
  const auto pairs = llmgate::read_labelled_pairs(dir / "pairs.jsonl");
  BOOST_TEST_REQUIRE(pairs.size() == 3u);
  BOOST_TEST(pairs[0].a == "How old is Paris?");
  BOOST_TEST(pairs[0].b == "What is the age of Paris?");
  BOOST_TEST(pairs[0].duplicate);
  BOOST_TEST(pairs[1].a == "x");
  BOOST_TEST(!pairs[1].duplicate);
  BOOST_TEST(pairs[2].b == "\xc3\xa9t\xc3\xa9");
  BOOST_TEST(pairs[2].duplicate);
}

BOOST_AUTO_TEST_CASE(bad_lines_are_refused_naming_the_file_and_line) {
  llmgate::test::temporary_directory dir;
  const auto check = [&](const std::string& third_line, const std::string& cause) {
    const auto path = dir / "bad.jsonl";
    llmgate::test::write_bytes(path, "{\"a\": \"x\", \"b\": \"y\", \"duplicate\": 0}\n\n" + third_line + "\n");
    try {
      (void)llmgate::read_labelled_pairs(path);
      BOOST_ERROR("read " << third_line);
    } catch (const llmgate::error& e) {
      const std::string what = e.what();
      BOOST_TEST((e.code() == llmgate::errc::corrupt_file));
      BOOST_TEST(what.find(path.string() + "' line 3") != std::string::npos, what);
      BOOST_TEST(what.find(cause) != std::string::npos, what);
    }
  };
  check("{\"a\": \"x\", \"b\": ", "not JSON");
  check("[1, 2]", "not a JSON object");
  check("{\"a\": 1, \"b\": \"y\", \"duplicate\": 0}", "\"a\" is missing or not a string");
  check("{\"a\": \"x\", \"duplicate\": 0}", "\"b\" is missing");
  check("{\"a\": \"x\", \"b\": \"y\", \"duplicate\": 2}", "\"duplicate\" is missing or not 0, 1");
  check("{\"a\": \"x\", \"b\": \"y\"}", "\"duplicate\"");
  try {
    (void)llmgate::read_labelled_pairs(dir / "absent.jsonl");
    BOOST_ERROR("read a missing file");
  } catch (const llmgate::error& e) {
    BOOST_TEST((e.code() == llmgate::errc::io_failure));
    BOOST_TEST(std::string(e.what()).find((dir / "absent.jsonl").string()) != std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(the_split_keeps_each_component_whole) {
  // Chains of questions joined by pairs (the same question in other case
  // or punctuation is the same question), many of them.
  std::vector<labelled_pair> pairs;
  for (int c = 0; c < 200; ++c) {
    const std::string topic = "topic " + std::to_string(c);
    pairs.push_back({"What is " + topic + "?", "Tell me about " + topic, true});
    pairs.push_back({"tell me ABOUT " + topic + "!", "Why " + topic + "?", false});
    pairs.push_back({"Why " + topic, "Who made " + topic, c % 2 == 0});
  }
  const auto split = llmgate::split_pairs(pairs);
  BOOST_TEST(split.fit.size() + split.held_out.size() == pairs.size());
  BOOST_TEST(split.fit.size() % 3 == 0u);  // each chain whole
  BOOST_TEST(split.fit.size() > 150u);
  BOOST_TEST(split.held_out.size() > 150u);
  std::set<std::string> fit_questions;
  for (const auto& p : split.fit) fit_questions.insert({normal_form(p.a), normal_form(p.b)});
  for (const auto& p : split.held_out) {
    BOOST_TEST(!fit_questions.contains(normal_form(p.a)));
    BOOST_TEST(!fit_questions.contains(normal_form(p.b)));
  }
  // Deterministic, in input order, and the shares' ends are whole parts.
  const auto again = llmgate::split_pairs(pairs);
  BOOST_TEST_REQUIRE(again.fit.size() == split.fit.size());
  for (std::size_t i = 0; i < split.fit.size(); ++i) BOOST_TEST(again.fit[i].a == split.fit[i].a);
  BOOST_TEST(llmgate::split_pairs(pairs, 0.0).fit.empty());
  BOOST_TEST(llmgate::split_pairs(pairs, 1.0).held_out.empty());
  BOOST_TEST(llmgate::split_pairs(pairs, 1.0).fit[5].a == pairs[5].a);
}

BOOST_AUTO_TEST_CASE(a_separable_set_fits_to_auc_one) {
  const auto data = separable(300);
  BOOST_TEST(auc_of(llmgate::fit_logistic(data), data) == 1.0);
  const auto trees = llmgate::fit_trees(data, {.trees = 20, .depth = 3});
  BOOST_TEST(auc_of(trees, data) == 1.0);
  BOOST_TEST(trees.tree_count() == 20u);
  BOOST_CHECK_THROW(llmgate::fit_trees(data, {.depth = llmgate::max_fit_depth + 1}), std::invalid_argument);
  BOOST_CHECK_THROW(llmgate::fit_trees(data, {.bins = 1}), std::invalid_argument);
  // The logistic weights put the label's feature first.
  const auto logistic = llmgate::fit_logistic(data);
  BOOST_TEST(logistic.weights()[0] > 0.0f);
  BOOST_TEST(std::abs(logistic.weights()[0]) > 10 * std::abs(logistic.weights()[2]));
}

BOOST_AUTO_TEST_CASE(exclusive_or_needs_the_trees) {
  const auto data = exclusive_or();
  BOOST_TEST(auc_of(llmgate::fit_trees(data, {.trees = 30, .depth = 2, .subsample = 1.0}), data) == 1.0);
  BOOST_TEST(auc_of(llmgate::fit_logistic(data), data) < 0.7);
}

BOOST_AUTO_TEST_CASE(the_same_seed_gives_the_same_trees) {
  const auto data = separable(200);
  const llmgate::tree_options options{.trees = 10, .depth = 3, .seed = 7};
  BOOST_TEST((llmgate::fit_trees(data, options) == llmgate::fit_trees(data, options)));
  auto other = options;
  other.seed = 8;
  BOOST_TEST(!(llmgate::fit_trees(data, options) == llmgate::fit_trees(data, other)));
}

BOOST_AUTO_TEST_CASE(a_fitted_verifier_ranks_held_out_rewordings_first) {
  // Duplicates: a question and itself reworded a little; non-duplicates:
  // two questions on different topics.
  const std::vector<std::string> topics = {"paris", "rust", "whales", "tax returns", "coffee", "the moon",
                                           "chess", "tomatoes", "jazz", "volcanoes", "bitcoin", "yoga"};
  std::vector<labelled_pair> pairs;
  for (std::size_t i = 0; i < 60; ++i) {
    const std::string t = topics[i % topics.size()] + " " + std::to_string(i / topics.size());
    const std::string u = topics[(i + 5) % topics.size()] + " " + std::to_string(i / topics.size());
    pairs.push_back({"How do I learn about " + t + "?", "how can I learn about " + t, true});
    pairs.push_back({"What is the history of " + t + "?", "Where can I buy " + u + "?", false});
  }
  const auto split = llmgate::split_pairs(pairs);
  const auto similarity = llmgate::pair_similarity::observing(split.fit);
  llmgate::verifier_fit_report report;
  const auto weights = llmgate::fit_verifier(
      split.fit, similarity, {.trees = {.trees = 20, .depth = 3}, .source = "synthetic"}, &report);
  BOOST_TEST(report.pairs == split.fit.size());
  BOOST_TEST(report.validation_pairs > 0u);
  BOOST_TEST(!std::isnan(report.auc_logistic));
  BOOST_TEST(!std::isnan(report.auc_trees));
  BOOST_TEST((weights.model.model_kind() == report.chosen));
  BOOST_TEST(weights.fitted_on.starts_with("synthetic: " + std::to_string(split.fit.size()) + " labelled pairs"));
  const auto logits = llmgate::verifier_logits(weights, split.held_out, similarity);
  BOOST_TEST(roc_auc(logits, llmgate::label_list(split.held_out)) > 0.95);

  // Deterministic: the same fit again gives the same model.
  const auto again = llmgate::fit_verifier(split.fit, similarity, {.trees = {.trees = 20, .depth = 3}, .source = "again"});
  BOOST_TEST((again.model == weights.model));
}

BOOST_AUTO_TEST_SUITE_END()
