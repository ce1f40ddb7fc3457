// The automatic scorers: TF-IDF cosine and sentence BLEU against values
// worked out by hand or published with NLTK's sentence_bleu, and
// score_answers' choice of reference answers, methods and embedders.
#include <boost/test/unit_test.hpp>  // BOOST_AUTO_TEST_SUITE, BOOST_TEST

#include <cmath>        // std::exp, std::log, std::sqrt, std::pow
#include <cstddef>      // std::size_t
#include <map>          // std::map
#include <span>         // std::span
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <vector>       // std::vector

#include "llmgate/embed/hashing_embedder.hpp"    // hashing_embedder
#include "llmgate/error.hpp"                     // llmgate::error
#include "llmgate/eval/score/answer_scores.hpp"  // score_answers, embed_texts, embed_with
#include "llmgate/eval/score/bleu.hpp"           // sentence_bleu, modified_precision
#include "llmgate/eval/score/score_tokens.hpp"   // score_tokens
#include "llmgate/eval/score/tfidf.hpp"          // tfidf_model

using namespace llmgate;
namespace tt = boost::test_tools;

namespace {

using words = std::vector<std::string>;

words split(std::string_view text) {
  words out;
  std::string word;
  for (const char c : text) {
    if (c == ' ') {
      if (!word.empty()) out.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) out.push_back(word);
  return out;
}

// NLTK's sentence_bleu docstring sentences (tokens as given: case matters).
const words hypothesis1 = split("It is a guide to action which ensures that the military always obeys the commands of the party");
const words hypothesis2 = split("It is to insure the troops forever hearing the activity guidebook that party direct");
const words reference1 = split("It is a guide to action that ensures that the military will forever heed Party commands");
const words reference2 = split("It is the guiding principle which guarantees the military forces always being under the command of the Party");
const words reference3 = split("It is the practical guide for the army always to heed the directions of the party");

request_result answer(std::string candidate, std::int64_t prompt, std::int64_t repetition, std::string response,
                      request_kind kind = request_kind::evaluation) {
  request_result r;
  r.request.key = std::string(to_string(kind)) + "/" + candidate + "/" + std::to_string(prompt) + "/" +
                  std::to_string(repetition);
  r.request.kind = kind;
  r.request.candidate = std::move(candidate);
  r.request.prompt = prompt;
  r.request.repetition = repetition;
  r.response = std::move(response);
  return r;
}

request_result failed(std::string candidate, std::int64_t prompt, std::int64_t repetition) {
  auto r = answer(std::move(candidate), prompt, repetition, "");
  r.error = request_failure::timeout;
  return r;
}

evaluation_plan plan_of(std::vector<std::string> scorers) {
  evaluation_plan plan;
  plan.candidates = {{.name = "ref"}, {.name = "a"}, {.name = "b"}};
  plan.reference = "ref";
  plan.scorers = std::move(scorers);
  plan.embedders = {{.name = "fake"}};
  return plan;
}

// A deterministic embedder: fixed vectors by text, and a record of what it was asked.
struct fake_embedder {
  std::map<std::string, std::vector<float>> vectors;
  std::vector<std::vector<std::string>> calls;

  embed_texts function() {
    return [this](const evaluation_embedder&, std::span<const std::string> texts) {
      calls.emplace_back(texts.begin(), texts.end());
      std::vector<std::vector<float>> out;
      for (const auto& t : texts) out.push_back(vectors.at(t));
      return out;
    };
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(text_scores_test)

BOOST_AUTO_TEST_CASE(score_tokens_are_llmgates_folded_words) {
  BOOST_TEST((score_tokens("The Cat, don't SIT!  iPhone7") == words{"the", "cat", "dont", "sit", "iphone", "7"}));
  BOOST_TEST(score_tokens(" ... ").empty());
}

BOOST_AUTO_TEST_CASE(tfidf_idf_is_smooth_as_scikit_learns) {
  const std::vector<std::string> collection{"the cat sat", "the dog sat", "a cat"};
  const tfidf_model model(collection);
  BOOST_TEST(model.documents() == 3u);
  BOOST_TEST(model.vocabulary_size() == 5u);
  // ln((1 + N) / (1 + df)) + 1 with N = 3: df 2 for the, cat, sat; 1 for dog, a.
  BOOST_TEST(model.idf("the") == std::log(4.0 / 3.0) + 1, tt::tolerance(1e-12));
  BOOST_TEST(model.idf("the") == 1.2876820724517808, tt::tolerance(1e-12));
  BOOST_TEST(model.idf("dog") == 1.6931471805599454, tt::tolerance(1e-12));
  BOOST_TEST(model.idf("a") == model.idf("dog"));
  BOOST_TEST(model.idf("zebra") == 0.0);
}

BOOST_AUTO_TEST_CASE(tfidf_cosine_by_hand) {
  const std::vector<std::string> collection{"the cat sat", "the dog sat", "a cat"};
  const tfidf_model model(collection);
  const double x = std::log(4.0 / 3.0) + 1;  // idf of the, cat, sat
  const double y = std::log(2.0) + 1;        // idf of dog, a
  // (x, x, x) . (x, y, x) over their lengths.
  BOOST_TEST(model.similarity("the cat sat", "the dog sat") == 2 * x * x / (std::sqrt(3 * x * x) * std::sqrt(2 * x * x + y * y)),
             tt::tolerance(1e-12));
  BOOST_TEST(model.similarity("the cat sat", "the dog sat") == 0.5979687361418285, tt::tolerance(1e-12));
  // Raw counts: "cat cat" is the cat axis alone; "a cat" is (y, x).
  BOOST_TEST(model.similarity("cat cat", "a cat") == x / std::sqrt(x * x + y * y), tt::tolerance(1e-12));
  BOOST_TEST(model.similarity("cat cat", "a cat") == 0.6053485081062916, tt::tolerance(1e-12));
  const auto v = model.vectorize("cat cat the zebra");  // zebra: not in the vocabulary, dropped
  BOOST_REQUIRE(v.terms.size() == 2u);
  BOOST_TEST(v.terms[0].second == 1 / std::sqrt(5.0), tt::tolerance(1e-12));  // "the" was seen first
  BOOST_TEST(v.terms[1].second == 2 / std::sqrt(5.0), tt::tolerance(1e-12));
  BOOST_TEST(model.similarity("The CAT sat.", "the cat sat") == 1.0, tt::tolerance(1e-12));
  BOOST_TEST(model.similarity("zebra", "the cat") == 0.0);
  BOOST_TEST(model.similarity("", "the cat") == 0.0);
}

BOOST_AUTO_TEST_CASE(bleu_matches_nltks_published_values) {
  // sentence_bleu([reference1], hypothesis1) == 0.4118... in NLTK's
  // SmoothingFunction docstring (method1 gives the same: no order lacks a
  // match). Counts by hand: 11/18, 8/17, 6/16, 4/15; c = 18 > r = 16, BP 1.
  const std::vector<words> one{reference1};
  const double single = sentence_bleu(one, hypothesis1);
  BOOST_TEST(single == 0.4118, tt::tolerance(1e-4 / 0.4118));
  BOOST_TEST(single == std::exp(0.25 * (std::log(11.0 / 18) + std::log(8.0 / 17) + std::log(6.0 / 16) + std::log(4.0 / 15))),
             tt::tolerance(1e-12));
  // Three references: 0.5045... (sentence_bleu's docstring); 17/18, 10/17, 7/16, 4/15.
  const std::vector<words> three{reference1, reference2, reference3};
  BOOST_TEST(sentence_bleu(three, hypothesis1) == 0.5045, tt::tolerance(1e-4 / 0.5045));
  BOOST_TEST(sentence_bleu(three, hypothesis1) ==
                 std::exp(0.25 * (std::log(17.0 / 18) + std::log(10.0 / 17) + std::log(7.0 / 16) + std::log(4.0 / 15))),
             tt::tolerance(1e-12));
  // Up to 5-grams at weight 0.1666 each: 0.45838627164939455, published to the last digit.
  bleu_options five;
  five.weights = {0.1666, 0.1666, 0.1666, 0.1666, 0.1666};
  BOOST_TEST(sentence_bleu(three, hypothesis1, five) == 0.45838627164939455, tt::tolerance(1e-14));
}

BOOST_AUTO_TEST_CASE(bleu_modified_precision_clips_counts) {
  // modified_precision's docstring: "the" seven times, at most twice in a reference: 2/7.
  const std::vector<words> references{split("the cat is on the mat"), split("there is a cat on the mat")};
  const auto p = modified_precision(references, split("the the the the the the the"), 1);
  BOOST_TEST(p.matches == 2u);
  BOOST_TEST(p.total == 7u);
  // A hypothesis shorter than n has no n-gram: 0 of at least 1.
  const auto q = modified_precision(references, split("of the"), 3);
  BOOST_TEST(q.matches == 0u);
  BOOST_TEST(q.total == 1u);
}

BOOST_AUTO_TEST_CASE(bleu_smooths_orders_without_a_match) {
  // hypothesis2 against the three: 8/14, 1/13, then no 3- or 4-gram match,
  // which method1 turns into 0.1/12 and 0.1/11; c = 14, closest r = 16:
  // BP = exp(1 - 16/14).
  const std::vector<words> three{reference1, reference2, reference3};
  BOOST_TEST(sentence_bleu(three, hypothesis2) ==
                 std::exp(1 - 16.0 / 14) *
                     std::exp(0.25 * (std::log(8.0 / 14) + std::log(1.0 / 13) + std::log(0.1 / 12) + std::log(0.1 / 11))),
             tt::tolerance(1e-12));
  BOOST_TEST(sentence_bleu(three, hypothesis2) == 0.03703131191121491, tt::tolerance(1e-12));
  // "the cat sat" against "the cat sat down": 3/3, 2/2, 1/1, then 0.1/1; BP exp(1 - 4/3).
  BOOST_TEST(sentence_bleu("the cat sat down", "The cat sat.") == std::exp(-1.0 / 3) * std::pow(0.1, 0.25),
             tt::tolerance(1e-12));
  BOOST_TEST(sentence_bleu("the cat sat down", "The cat sat.") == 0.40293516672844226, tt::tolerance(1e-12));
}

BOOST_AUTO_TEST_CASE(bleu_edge_cases) {
  BOOST_TEST(sentence_bleu("a b c d e", "a b c d e") == 1.0, tt::tolerance(1e-12));
  BOOST_TEST(sentence_bleu("a b c d e", "v w x y z") == 0.0);  // no unigram match
  BOOST_TEST(sentence_bleu("a b c d e", "") == 0.0);
  // Brevity penalty, NLTK's docstring cases: hypothesis 12 against 13 and
  // 11 (equally close: the shorter, 11, so no penalty); 7 against 11 and 8: exp(1 - 8/7) = 0.8668...
  const std::vector<words> tie{words(13, "a"), words(11, "a")};
  BOOST_TEST(sentence_bleu(tie, words(12, "a")) == 1.0, tt::tolerance(1e-12));
  const std::vector<words> longer{words(11, "a"), words(8, "a")};
  BOOST_TEST(sentence_bleu(longer, words(7, "a")) == std::exp(1 - 8.0 / 7), tt::tolerance(1e-12));
  BOOST_TEST(sentence_bleu(longer, words(7, "a")) == 0.8668, tt::tolerance(1e-4 / 0.8668));
}

BOOST_AUTO_TEST_CASE(score_answers_against_the_references_answer) {
  fake_embedder fake;
  fake.vectors = {{"the cat sat on the mat", {1, 0}}, {"the cat sat", {3, 4}}, {"a dog ran", {-1, 0}},
                  {"a cat ran", {1, 0}}};
  const std::vector<request_result> results{
      answer("ref", 0, 0, "the cat sat on the mat"),
      failed("ref", 0, 1),
      answer("ref", 1, 0, "a cat ran"),
      answer("a", 0, 0, "the cat sat on the mat"),  // the same as the reference's
      answer("a", 0, 1, "the cat sat"),             // the reference failed here: its p0 r0 instead
      failed("a", 1, 0),                            // failed: not scored
      answer("b", 1, 0, "a dog ran"),               // cosine -1: 0
      answer("b", 2, 0, "no reference"),            // the reference never answered prompt 2
      answer("a", 0, 0, "a schedule answer", request_kind::schedule),
      answer("a", 0, 0, "a warm-up answer", request_kind::warmup),
  };
  const auto plan = plan_of({"tfidf", "bleu", "embedding", "sem_bleu"});
  const auto scores = score_answers(plan, results, fake.function());

  // One call, each distinct text once: the answers and their references.
  BOOST_REQUIRE(fake.calls.size() == 1u);
  BOOST_TEST((fake.calls[0] == words{"the cat sat on the mat", "the cat sat", "a dog ran", "a cat ran"}));

  BOOST_REQUIRE(scores.size() == 12u);
  const std::vector<std::string> collection{"the cat sat on the mat", "a cat ran", "the cat sat on the mat",
                                            "the cat sat", "a dog ran", "no reference"};
  const tfidf_model model(collection);
  const double bleu_short = std::exp(1 - 6.0 / 3) * std::pow(0.1, 0.25);  // 3/3, 2/2, 1/1, 0.1/1; BP exp(1 - 6/3)
  // 2/3, then 0.1/2, 0.1/1, 0.1/1; c = r = 3: BP 1.
  const double bleu_dog = std::exp(0.25 * (std::log(2.0 / 3) + std::log(0.1 / 2) +
                                           std::log(0.1 / 1) + std::log(0.1 / 1)));
  struct expected {
    std::string key, method;
    double value;
  };
  const std::vector<expected> want{
      {"evaluation/a/0/0", "tfidf", 1.0},
      {"evaluation/a/0/0", "bleu", 1.0},
      {"evaluation/a/0/0", "embedding:fake", 1.0},
      {"evaluation/a/0/0", "sem_bleu:fake", 1.0},
      {"evaluation/a/0/1", "tfidf", model.similarity("the cat sat", "the cat sat on the mat")},
      {"evaluation/a/0/1", "bleu", bleu_short},
      {"evaluation/a/0/1", "embedding:fake", 0.6},  // (3, 4) . (1, 0) / 5
      {"evaluation/a/0/1", "sem_bleu:fake", (0.6 + bleu_short) / 2},
      {"evaluation/b/1/0", "tfidf", model.similarity("a dog ran", "a cat ran")},
      {"evaluation/b/1/0", "bleu", bleu_dog},
      {"evaluation/b/1/0", "embedding:fake", 0.0},
      {"evaluation/b/1/0", "sem_bleu:fake", bleu_dog / 2},
  };
  for (std::size_t i = 0; i < want.size(); ++i) {
    BOOST_TEST_CONTEXT("record " << i) {
      BOOST_TEST(scores[i].request_key == want[i].key);
      BOOST_TEST(scores[i].method == want[i].method);
      BOOST_REQUIRE(scores[i].value.has_value());
      BOOST_TEST(*scores[i].value == want[i].value, tt::tolerance(1e-6));
    }
  }
  BOOST_TEST(model.similarity("a dog ran", "a cat ran") > 0.0);
  BOOST_TEST(model.similarity("a dog ran", "a cat ran") < 1.0);
}

BOOST_AUTO_TEST_CASE(score_answers_skips_what_is_scored_and_asks_no_embedder_then) {
  fake_embedder fake;
  fake.vectors = {{"x y", {1, 0}}, {"x z", {0, 1}}};
  const std::vector<request_result> results{answer("ref", 0, 0, "x y"), answer("a", 0, 0, "x z")};
  const auto plan = plan_of({"bleu", "embedding:fake"});
  const auto scores = score_answers(plan, results, fake.function(), [](std::string_view key, std::string_view method) {
    return key == "evaluation/a/0/0" && method == "embedding:fake";
  });
  BOOST_TEST(fake.calls.empty());
  BOOST_REQUIRE(scores.size() == 1u);
  BOOST_TEST(scores[0].method == "bleu");
}

BOOST_AUTO_TEST_CASE(score_answers_methods_per_embedder) {
  fake_embedder fake;
  fake.vectors = {{"x y", {1, 0}}, {"x z", {0, 1}}};
  const std::vector<request_result> results{answer("ref", 0, 0, "x y"), answer("a", 0, 0, "x z")};
  auto plan = plan_of({"embedding", "embedding:two", "sem_bleu:two"});
  plan.embedders = {{.name = "one"}, {.name = "two"}};
  const auto scores = score_answers(plan, results, fake.function());
  BOOST_REQUIRE(scores.size() == 3u);  // "embedding:two" listed twice, scored once
  BOOST_TEST(scores[0].method == "embedding:one");
  BOOST_TEST(scores[1].method == "embedding:two");
  BOOST_TEST(scores[2].method == "sem_bleu:two");
  BOOST_TEST(fake.calls.size() == 2u);  // once per embedder
}

BOOST_AUTO_TEST_CASE(score_answers_refuses_unknown_scorers_and_bad_embedders) {
  fake_embedder fake;
  fake.vectors = {{"x y", {1, 0}}, {"x z", {0, 1, 2}}};
  const std::vector<request_result> results{answer("ref", 0, 0, "x y"), answer("a", 0, 0, "x z")};
  BOOST_CHECK_THROW(score_answers(plan_of({"rouge"}), results, fake.function()), llmgate::error);
  BOOST_CHECK_THROW(score_answers(plan_of({"judge:scorer"}), results, fake.function()), llmgate::error);
  BOOST_CHECK_THROW(score_answers(plan_of({"embedding:nope"}), results, fake.function()), llmgate::error);
  // Vectors of two dimensions: refused, never compared.
  BOOST_CHECK_THROW(score_answers(plan_of({"embedding"}), results, fake.function()), llmgate::error);
  const embed_texts too_few = [](const evaluation_embedder&, std::span<const std::string>) {
    return std::vector<std::vector<float>>{{1, 0}};
  };
  BOOST_CHECK_THROW(score_answers(plan_of({"embedding"}), results, too_few), llmgate::error);
}

BOOST_AUTO_TEST_CASE(score_answers_with_the_hashing_embedder) {
  const hashing_embedder embedder;
  const embed_texts hashing = [&](const evaluation_embedder&, std::span<const std::string> texts) {
    return embed_with(embedder, texts);
  };
  const std::vector<request_result> results{answer("ref", 0, 0, "Buy milk, then call Anna at 5."),
                                            answer("a", 0, 0, "buy milk then call anna at 5"),
                                            answer("b", 0, 0, "Quarterly revenue grew strongly.")};
  const auto scores = score_answers(plan_of({"embedding"}), results, hashing);
  BOOST_REQUIRE(scores.size() == 2u);
  BOOST_TEST(*scores[0].value == 1.0, tt::tolerance(1e-6));  // the same tokens
  BOOST_TEST(*scores[1].value >= 0.0);
  BOOST_TEST(*scores[1].value < 0.5);
}

BOOST_AUTO_TEST_SUITE_END()
