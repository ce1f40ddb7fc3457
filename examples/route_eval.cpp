// route_eval: does llmgate's router save money without losing accuracy?
// Routes queries whose outcome on every model is known (RouterBench and
// the DC-router data in ../shared/data/routing) by each policy llmgate
// learns (the gateway's router, the per-model correctness predictors and,
// where the models' answers are recorded, the agreement cascade; see
// route_eval/evaluation.hpp) and compares them with each single model, a
// random choice, always the cheapest, always the best and the oracle.
//
//   route_eval [--data DIR] [--eval DIR | --folds K | --validation] [--out DIR] [--limit N]
//              [--neighbours K] [--min-similarity S] [--edge-words W] [--char-ngram-max N] [--prior-strength P]
//              [--complexity-influence C] [--overall-weight O]
//
// Splits (nothing is learned from a query that is evaluated):
//   default       learn from the first 70% of every file of a format in
//                 --data, evaluate on the rest of each file;
//   --folds K     cross-validation: every query of --data is evaluated
//                 once, by policies learned from the other K - 1 folds of
//                 its format (the figures issue targets are measured by);
//   --eval DIR    learn from all of --data, evaluate on every file of the
//                 same format in DIR, which may hold test files only
//                 (arc_challenge_test.csv is evaluated as arc_challenge;
//                 the models are the learning data's, in its order);
//   --validation  only the first 70% of each file exists: learn from its
//                 first 70%, evaluate on the rest. The router's settings
//                 were chosen this way, never on the evaluation split.
// The routerbench files are also evaluated together as "routerbench". The
// predictor's and the cascade's cost weight for "match-best" and "95%" is
// chosen on the learning queries alone, and applied once.
//
// Prints a table per dataset, then JSON lines; writes routing.csv and one
// routing-<dataset>.svg per dataset under --out. Progress goes to stderr.
// Exit status: 0 done; 2 bad options or no data.
#include <cstddef>     // std::size_t
#include <cstdio>      // std::fprintf
#include <exception>   // std::exception
#include <filesystem>  // std::filesystem
#include <iostream>    // std::cout
#include <limits>      // std::numeric_limits
#include <map>         // std::map
#include <string>      // std::string
#include <system_error> // std::error_code
#include <vector>      // std::vector

#include <CLI/CLI.hpp>  // command line (Debian libcli11-dev)

#include "route_eval/evaluation.hpp"
#include "route_eval/report.hpp"
#include "route_eval/settings.hpp"  // validated_settings

namespace {

constexpr double learning_share = 0.7;

struct settings {
  std::string data = "../shared/data/routing";
  std::string eval;
  std::string out = "build/route-eval";
  std::size_t limit = std::numeric_limits<std::size_t>::max();
  std::size_t folds = 0;
  bool validation = false;
  route_eval::router_settings router = route_eval::validated_settings();
};

// A file's queries between the shares `from` and `to` of it.
std::vector<const route_eval::query*> slice(const llmgate::routing_dataset& d, double from, double to) {
  const auto n = static_cast<double>(d.outcomes.size());
  std::vector<const route_eval::query*> part;
  for (auto i = static_cast<std::size_t>(from * n); i < static_cast<std::size_t>(to * n); ++i)
    part.push_back(&d.outcomes[i]);
  return part;
}

// One learning: what is learned from, and what is evaluated with it (each
// query with its dataset's name).
struct run {
  std::vector<route_eval::query> learning;
  std::vector<const route_eval::query*> evaluated;
  std::vector<std::string> evaluated_from;
};

// The runs of one format (the splits of the file comment).
std::vector<run> runs_of(const settings& o, const std::vector<const llmgate::routing_dataset*>& learning_sets,
                         const std::vector<const llmgate::routing_dataset*>& evaluated_sets) {
  const auto limited = [&](std::vector<const route_eval::query*> part) {
    if (part.size() > o.limit) part.resize(o.limit);
    return part;
  };
  if (o.folds >= 2) {
    std::vector<const route_eval::query*> all;
    std::vector<std::string> from;
    for (const auto* d : learning_sets)
      for (const auto& q : d->outcomes) all.push_back(&q), from.push_back(d->name);
    const auto fold = llmgate::fold_assignment(all.size(), o.folds, 0);
    std::vector<run> runs(o.folds);
    std::map<std::string, std::size_t> taken;  // per dataset, for --limit
    for (std::size_t i = 0; i < all.size(); ++i) {
      for (std::size_t f = 0; f < o.folds; ++f)
        if (fold[i] != f) runs[f].learning.push_back(*all[i]);
      if (taken[from[i]]++ >= o.limit) continue;
      runs[fold[i]].evaluated.push_back(all[i]);
      runs[fold[i]].evaluated_from.push_back(from[i]);
    }
    return runs;
  }
  const bool held_out = o.eval.empty();
  const double end = o.validation ? learning_share : 1.0;
  const double cut = held_out ? learning_share * end : 1.0;
  run one;
  for (const auto* d : learning_sets)
    for (const auto* q : slice(*d, 0.0, held_out ? cut : 1.0)) one.learning.push_back(*q);
  for (const auto* d : evaluated_sets)
    for (const auto* q : limited(slice(*d, held_out ? cut : 0.0, end)))
      one.evaluated.push_back(q), one.evaluated_from.push_back(d->name);
  return {std::move(one)};
}

}  // namespace

int main(int argc, char** argv) {
  settings o;
  CLI::App app{"Evaluates llmgate's router on per-query outcomes of real models (accuracy and cost per policy)."};
  app.add_option("--data", o.data, "folder of routing data to learn from (routerbench CSV, dcrouter JSON)")
      ->capture_default_str();
  app.add_option("--eval", o.eval, "learn from all of --data and evaluate on the files of this folder");
  app.add_option("--out", o.out, "folder for routing.csv and the SVG plots")->capture_default_str();
  app.add_option("--limit", o.limit, "evaluate at most N queries per dataset")->check(CLI::PositiveNumber);
  app.add_flag("--validation", o.validation, "learn and evaluate within the first 70% of each file only");
  app.add_option("--folds", o.folds, "cross-validate on --data: every query evaluated once, learned from the other folds")
      ->check(CLI::Range(std::size_t{2}, std::size_t{20}));
  app.add_option("--neighbours", o.router.analyser.neighbours, "similar labelled queries consulted per request")
      ->capture_default_str();
  app.add_option("--min-similarity", o.router.analyser.min_similarity, "neighbours less similar count for nothing")
      ->capture_default_str();
  app.add_option("--edge-words", o.router.analyser.edge_words,
                 "a longer query is read and embedded by its first and last this many words")
      ->capture_default_str();
  app.add_option("--char-ngram-max", o.router.embedder.char_ngram_max,
                 "longest character n-gram of a word in the analyser's embedding (from 3)")
      ->check(CLI::Range(std::size_t{3}, std::size_t{8}))
      ->capture_default_str();
  app.add_option("--prior-strength", o.router.router.prior_strength,
                 "how many neighbours' worth a model's accuracy at the task counts for")
      ->capture_default_str();
  app.add_option("--overall-weight", o.router.router.overall_accuracy_weight,
                 "how many queries' worth of a model's overall accuracy a per-task figure is pulled towards")
      ->capture_default_str();
  app.add_option("--complexity-influence", o.router.router.complexity_influence,
                 "how far complexity leans the weights towards accuracy")
      ->capture_default_str();
  app.add_option("--predictor-dimension", o.router.predictor.features.text.dimension,
                 "dimensions of the correctness predictors' hashed text features")
      ->capture_default_str();
  app.add_option("--predictor-char-ngram-max", o.router.predictor.features.text.char_ngram_max,
                 "longest character n-gram in the correctness predictors' text features (from 3)")
      ->check(CLI::Range(std::size_t{3}, std::size_t{8}))
      ->capture_default_str();
  app.add_option("--predictor-passes", o.router.predictor.fitting.passes, "passes of the predictors' fitting")
      ->capture_default_str();
  app.add_option("--predictor-l2", o.router.predictor.l2_grid,
                 "the penalties the predictors' cross-validation chooses from")
      ->delimiter(',')
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (int{o.validation} + int{!o.eval.empty()} + int{o.folds > 0} > 1) {
    std::fprintf(stderr, "route_eval: --validation, --eval and --folds exclude each other\n");
    return 2;
  }
  if (!std::filesystem::is_directory(o.data) || (!o.eval.empty() && !std::filesystem::is_directory(o.eval))) {
    std::fprintf(stderr,
                 "route_eval: no data folder at '%s'%s. Run from the repository root with ../shared/data/routing "
                 "in place (scripts/bench routing), or pass --data.\n",
                 (o.eval.empty() ? o.data : o.eval).c_str(), o.eval.empty() ? "" : " (--eval)");
    return 2;
  }

  std::vector<llmgate::routing_dataset> learning_sets, evaluated_sets;
  try {
    const auto prices = std::filesystem::path(o.data) / "dcrouter" / "default_llm.json";
    learning_sets = llmgate::read_routing_folder(o.data, prices);
    if (!o.eval.empty()) evaluated_sets = llmgate::read_routing_folder(o.eval, prices);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "route_eval: %s\n", e.what());
    return 2;
  }
  if (learning_sets.empty()) {
    std::fprintf(stderr, "route_eval: no routing data under '%s'\n", o.data.c_str());
    return 2;
  }
  if (o.eval.empty())
    for (const auto& d : learning_sets) evaluated_sets.push_back(d);  // same files, other queries
  std::map<std::string, std::vector<std::string>> models_of;  // format -> its first learning file's models
  for (const auto& d : learning_sets) models_of.emplace(d.format, d.models);
  try {
    for (auto* sets : {&learning_sets, &evaluated_sets})
      for (auto& d : *sets)
        if (models_of.contains(d.format)) llmgate::order_models_as(d, models_of.at(d.format));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "route_eval: %s\n", e.what());
    return 2;
  }

  std::map<std::string, std::vector<const llmgate::routing_dataset*>> learning_by_format, evaluated_by_format;
  for (const auto& d : learning_sets) learning_by_format[d.format].push_back(&d);
  for (auto& d : evaluated_sets) evaluated_by_format[d.format].push_back(&d);

  std::vector<route_eval::dataset_result> results;
  for (const auto& [format, evaluated] : evaluated_by_format) {
    const auto& learning = learning_by_format[format];
    if (learning.empty()) {
      std::fprintf(stderr, "route_eval: nothing of format %s to learn from under '%s'; skipped\n", format.c_str(),
                   o.data.c_str());
      continue;
    }
    const auto& models = models_of.at(format);
    std::vector<route_eval::query> all_learning;
    for (const auto* d : learning) all_learning.insert(all_learning.end(), d->outcomes.begin(), d->outcomes.end());
    const auto ladder = llmgate::cost_weight_ladder(all_learning);  // one for every run: their curves add up

    route_eval::routed_queries routed;
    routed.models = models.size();
    std::vector<const route_eval::query*> evaluated_queries;
    std::size_t learned_from = 0;
    const auto runs = runs_of(o, learning, evaluated);
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const auto& r = runs[i];
      std::fprintf(stderr, "route_eval: %s: learning from %zu queries (%zu of %zu)\n", format.c_str(),
                   r.learning.size(), i + 1, runs.size());
      const route_eval::learned_policies learned(models, r.learning, ladder, o.router);
      for (const auto& report : learned.predictor_report())
        std::fprintf(stderr, "route_eval:   predictor %s: out-of-fold Brier %.4f (base rate %.4f), l2 %g\n",
                     report.model.c_str(), report.brier, report.base_rate_brier, report.l2);
      for (const auto* choices : {&learned.predictor_choices(), &learned.cascade_choices()})
        for (std::size_t t = 0; t < choices->size(); ++t)
          std::fprintf(stderr, "route_eval:   %s for %s: lambda %g (on the learning queries: accuracy %.4f, "
                               "$%.6f a query; %s)\n",
                       choices == &learned.predictor_choices() ? "predictor" : "cascade",
                       route_eval::chosen_targets()[t].describe().c_str(), (*choices)[t].weight,
                       (*choices)[t].result.accuracy, (*choices)[t].result.cost,
                       (*choices)[t].met ? "met" : "not met: the most accurate taken");
      if (routed.policies.empty()) routed.policies = learned.policy_names(models);
      std::fprintf(stderr, "route_eval: %s: evaluating %zu queries\n", format.c_str(), r.evaluated.size());
      for (std::size_t q = 0; q < r.evaluated.size(); ++q) routed.add(learned, r.evaluated_from[q], *r.evaluated[q]);
      evaluated_queries.insert(evaluated_queries.end(), r.evaluated.begin(), r.evaluated.end());
      learned_from = r.learning.size();
    }
    for (const auto* d : evaluated)
      results.push_back(route_eval::summarise(d->name, false, routed, learned_from, evaluated_queries));
    if (evaluated.size() > 1) results.push_back(route_eval::summarise(format, true, routed, learned_from, evaluated_queries));
  }

  for (const auto& r : results) route_eval::print_table(std::cout, r);

  std::error_code ec;
  std::filesystem::create_directories(o.out, ec);
  const std::filesystem::path out(o.out);
  bool written = !ec && route_eval::write_csv(out / "routing.csv", results);
  for (const auto& r : results) written = route_eval::write_svg(out / ("routing-" + r.name + ".svg"), r) && written;
  if (written)
    std::fprintf(stderr, "route_eval: wrote %s/routing.csv and routing-<dataset>.svg\n", o.out.c_str());
  else
    std::fprintf(stderr, "route_eval: warning: could not write everything under '%s'\n", o.out.c_str());

  std::cout << '\n';
  for (const auto& r : results)
    for (const auto& line : route_eval::json_lines(r)) std::cout << line << '\n';
  return 0;
}
