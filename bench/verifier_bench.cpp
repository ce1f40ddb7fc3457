// Verifier: how well the learned verifier separates duplicate questions
// from non-duplicates, against the embedder's similarity alone, and what it
// costs per candidate, for both model kinds in the same run.
//
//   llmgate_bench_verifier [--pairs FILE] [--fit-share S] [--trees N] [--depth D] [--rate R] [--seed S]
//
// Data: --pairs, JSON lines {"a","b","duplicate"} (default
// ../shared/data/qqp/pairs.dev.jsonl, read at run time; skipped with a
// message where absent). split_pairs cuts it into a fit part and a held-out
// part with no question in both (cache/verifier_training.hpp); the
// embedder observes the fit part's questions, as a cache storing them
// would; each kind is fitted on the fit part (fit_verifier) and evaluated
// on the held-out part.
//
// Measured, on the held-out pairs:
//   - ROC AUC of the logit of each kind (logistic, trees) and of the
//     similarity alone; the validation AUCs that fit_verifier's "best"
//     chooses the kind by (a slice of the fit part);
//   - nanoseconds per candidate, as a cache lookup spends them: the
//     request ("a") prepared once outside the clock, then per candidate
//     learned_verifier::probability(), the path a lookup takes (the stored
//     side's prepare into a reused buffer, the features and the logit; p50
//     and p99 over all held-out pairs, one thread), each of the three alone
//     (each figure includes a clock reading, some tens of nanoseconds), and the
//     features and logit together, what a candidate costs when the cache
//     keeps its stored requests prepared; and logit() over all held-out
//     pairs in a row (the mean of the fastest of five passes, no clock
//     reading inside: the model's own cost on a busy machine);
//   - the time each fit takes (features included).
// The first JSON line is the chosen kind's; one line per kind follows.

#include <algorithm>    // std::sort, std::min
#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint64_t
#include <exception>    // std::exception
#include <filesystem>   // std::filesystem::exists
#include <iostream>     // std::cout, std::cerr
#include <limits>       // std::numeric_limits
#include <optional>     // std::optional
#include <span>         // std::span
#include <string>       // std::string, std::stod, std::stoul
#include <string_view>  // std::string_view
#include <vector>       // std::vector

#include <llmgate/cache/learned_verifier.hpp>
#include <llmgate/cache/pair_features.hpp>
#include <llmgate/cache/verifier_model.hpp>
#include <llmgate/cache/verifier_training.hpp>
#include <llmgate/tools/labelled_pairs.hpp>

#include "bench_support.hpp"

#ifndef LLMGATE_SHARED_DATA_DIR
#define LLMGATE_SHARED_DATA_DIR "../shared/data"  // scripts/bench runs from the repository root
#endif

namespace {

using namespace llmgate_bench;

struct options {
  std::string pairs = LLMGATE_SHARED_DATA_DIR "/qqp/pairs.dev.jsonl";
  double fit_share = 0.5;
  llmgate::tree_options trees = {};
  std::uint64_t seed = 1;
};

const char* const usage =
    "usage: llmgate_bench_verifier [--pairs FILE] [--fit-share S] [--trees N] [--depth D] [--rate R] [--seed S]\n";

std::optional<options> parse(int argc, char** argv) {
  options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--pairs") o.pairs = value;
    else if (flag == "--fit-share") o.fit_share = std::stod(value);
    else if (flag == "--trees") o.trees.trees = std::stoul(value);
    else if (flag == "--depth") o.trees.depth = std::stoul(value);
    else if (flag == "--rate") o.trees.rate = std::stod(value);
    else if (flag == "--seed") o.seed = std::stoull(value);
    else return std::nullopt;
  }
  if (argc % 2 == 0 || !(o.fit_share > 0 && o.fit_share < 1) || o.trees.depth == 0 ||
      o.trees.depth > llmgate::max_fit_depth)
    return std::nullopt;
  o.trees.seed = o.seed;
  return o;
}

double percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0 : values[std::min(values.size() - 1, static_cast<std::size_t>(p * values.size()))];
}

struct kind_result {
  std::string name;
  llmgate::verifier_weights weights;
  double fit_seconds = 0;
  double auc = 0;
  double p50_ns = 0, p99_ns = 0;  // per candidate: learned_verifier::probability (prepare + features + logit)
  double stored_prepared_p50_ns = 0, stored_prepared_p99_ns = 0;  // features + logit (stored side prepared at insert)
  // Each part alone.
  double prepare_p50_ns = 0, prepare_p99_ns = 0, features_p50_ns = 0, features_p99_ns = 0;
  double logit_p50_ns = 0, logit_p99_ns = 0;
  double logit_mean_ns = 0;  // logit() over every held-out pair in a row, best of five passes
};

// Times each held-out pair as one candidate of a lookup whose request is
// `a`: the stored side's prepare, the features and the logit.
void time_candidates(kind_result& result, std::span<const llmgate::labelled_pair> pairs,
                     std::span<const float> similarity) {
  const llmgate::pair_featurizer featurizer(result.weights.idf);
  constexpr std::size_t count = llmgate::pair_featurizer::feature_count;
  std::vector<float> features(count);
  std::vector<double> total, prepare, featuring, logit, after_prepare;
  std::vector<float> rows;  // every pair's features, for logit() in a row
  float sink = 0;
  const auto ns = [](steady::time_point from, steady::time_point to) {
    return std::chrono::duration<double, std::nano>(to - from).count();
  };
  const llmgate::learned_verifier verifier(result.weights, {.learn = false});
  const llmgate::hash128 scope{};
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const auto request = verifier.prepare(pairs[i].a);
    const auto start = steady::now();
    sink += verifier.probability(scope, request, {pairs[i].b, similarity[i], 0});
    total.push_back(ns(start, steady::now()));
  }
  llmgate::prepared_text stored;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const auto request = featurizer.prepare(pairs[i].a);
    const auto start = steady::now();
    featurizer.prepare(pairs[i].b, stored);
    const auto prepared = steady::now();
    featurizer.features(request, stored, similarity[i], std::span<float, count>(features.data(), count));
    const auto featured = steady::now();
    sink += result.weights.model.logit(features);
    const auto end = steady::now();
    prepare.push_back(ns(start, prepared));
    featuring.push_back(ns(prepared, featured));
    logit.push_back(ns(featured, end));
    after_prepare.push_back(ns(prepared, end));
    rows.insert(rows.end(), features.begin(), features.end());
  }
  result.logit_mean_ns = std::numeric_limits<double>::infinity();
  for (int pass = 0; pass < 5; ++pass) {
    const auto start = steady::now();
    for (std::size_t i = 0; i < pairs.size(); ++i)
      sink += result.weights.model.logit(std::span<const float>(rows.data() + i * count, count));
    result.logit_mean_ns = std::min(result.logit_mean_ns, ns(start, steady::now()) / static_cast<double>(pairs.size()));
  }
  if (sink == 12345.678f) progress("(%g)", static_cast<double>(sink));  // keeps the logits computed
  result.p50_ns = percentile(total, 0.50);
  result.p99_ns = percentile(total, 0.99);
  result.stored_prepared_p50_ns = percentile(after_prepare, 0.50);
  result.stored_prepared_p99_ns = percentile(after_prepare, 0.99);
  result.prepare_p50_ns = percentile(prepare, 0.50);
  result.prepare_p99_ns = percentile(prepare, 0.99);
  result.features_p50_ns = percentile(featuring, 0.50);
  result.features_p99_ns = percentile(featuring, 0.99);
  result.logit_p50_ns = percentile(logit, 0.50);
  result.logit_p99_ns = percentile(logit, 0.99);
}

}  // namespace

int main(int argc, char** argv) try {
  const auto parsed = parse(argc, argv);
  if (!parsed) {
    std::cerr << usage;
    return 2;
  }
  const options& o = *parsed;
  if (!std::filesystem::exists(o.pairs)) {
    progress("verifier: %s not found (see ../shared/data/README.md); nothing to measure", o.pairs.c_str());
    return 0;
  }
  const auto pairs = llmgate::read_labelled_pairs(o.pairs);
  const auto split = llmgate::split_pairs(pairs, o.fit_share);
  progress("verifier: %zu pairs, %zu to fit on, %zu held out (fit share %g)", pairs.size(), split.fit.size(),
           split.held_out.size(), o.fit_share);
  const auto similarity = llmgate::pair_similarity::observing(split.fit);
  const auto held_out_similarity = llmgate::similarities(split.held_out, similarity);
  const llmgate::label_list held_out_labels(split.held_out);
  const double auc_similarity = llmgate::roc_auc(held_out_similarity, held_out_labels);

  // The kind fit_verifier would choose, with the validation AUCs it chose by.
  llmgate::verifier_fit_report choice;
  const llmgate::verifier_fit_options best{.kind = llmgate::verifier_fit_kind::best, .trees = o.trees, .seed = o.seed,
                                           .source = "QQP dev fit part"};
  const double choice_seconds = time_once([&] { (void)llmgate::fit_verifier(split.fit, similarity, best, &choice); });
  progress("verifier: validation AUC logistic %.4f, trees %.4f (%zu pairs); %.1f s", choice.auc_logistic,
           choice.auc_trees, choice.validation_pairs, choice_seconds);

  std::vector<kind_result> results;
  for (const auto kind : {llmgate::verifier_fit_kind::logistic, llmgate::verifier_fit_kind::trees}) {
    kind_result r;
    r.name = kind == llmgate::verifier_fit_kind::logistic ? "logistic" : "trees";
    auto fit = best;
    fit.kind = kind;
    r.fit_seconds = time_once([&] { r.weights = llmgate::fit_verifier(split.fit, similarity, fit); });
    r.auc = llmgate::roc_auc(llmgate::verifier_logits(r.weights, split.held_out, similarity), held_out_labels);
    time_candidates(r, split.held_out, held_out_similarity);
    progress("verifier: %s fitted in %.1f s, held-out AUC %.4f", r.name.c_str(), r.fit_seconds, r.auc);
    results.push_back(std::move(r));
  }
  const auto& chosen = results[choice.chosen == llmgate::verifier_model::kind::trees ? 1 : 0];

  std::cout << "\nVerifier on " << o.pairs << ": fitted on " << split.fit.size() << " pairs, evaluated on "
            << split.held_out.size() << " held-out pairs (no question in both)\n";
  table summary({"model", "auc_held_out", "auc_validation", "fit_s", "ns_per_candidate_p50", "ns_per_candidate_p99",
                 "prepare_ns_p50", "prepare_ns_p99", "features_ns_p50", "features_ns_p99", "logit_ns_p50",
                 "logit_ns_p99", "logit_ns_mean"});
  std::vector<json_line> lines;
  lines.push_back(json_line()
                      .add("bench", "verifier")
                      .add("auc", chosen.auc)
                      .add("auc_similarity_only", auc_similarity)
                      .add("p50_ns_per_candidate", chosen.p50_ns)
                      .add("p99_ns_per_candidate", chosen.p99_ns));
  for (const auto& r : results) {
    const double validation = r.name == "trees" ? choice.auc_trees : choice.auc_logistic;
    summary.add_row({r.name + (&r == &chosen ? " (chosen)" : ""), number(r.auc), number(validation),
                     number(r.fit_seconds, 3), number(r.p50_ns, 4), number(r.p99_ns, 4), number(r.prepare_p50_ns, 4),
                     number(r.prepare_p99_ns, 4), number(r.features_p50_ns, 4), number(r.features_p99_ns, 4),
                     number(r.logit_p50_ns, 3), number(r.logit_p99_ns, 3), number(r.logit_mean_ns, 3)});
    lines.push_back(json_line()
                        .add("bench", "verifier_model")
                        .add("model", r.name)
                        .add("chosen", static_cast<int>(&r == &chosen))
                        .add("auc", r.auc)
                        .add("auc_validation", validation)
                        .add("fit_seconds", r.fit_seconds)
                        .add("p50_ns_per_candidate", r.p50_ns)
                        .add("p99_ns_per_candidate", r.p99_ns)
                        .add("p50_ns_per_candidate_stored_prepared", r.stored_prepared_p50_ns)
                        .add("p99_ns_per_candidate_stored_prepared", r.stored_prepared_p99_ns)
                        .add("prepare_p50_ns", r.prepare_p50_ns)
                        .add("prepare_p99_ns", r.prepare_p99_ns)
                        .add("features_p50_ns", r.features_p50_ns)
                        .add("features_p99_ns", r.features_p99_ns)
                        .add("logit_p50_ns", r.logit_p50_ns)
                        .add("logit_p99_ns", r.logit_p99_ns)
                        .add("logit_mean_ns", r.logit_mean_ns)
                        .add("trees", r.name == "trees" ? r.weights.model.tree_count() : 0)
                        .add("depth", r.weights.model.depth()));
  }
  summary.add_row({"similarity only", number(auc_similarity), "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-"});
  summary.print(std::cout);
  std::cout << '\n';
  publish("verifier", summary, lines);
  return 0;
} catch (const std::exception& e) {
  std::cerr << "verifier: " << e.what() << '\n';
  return 1;
}
