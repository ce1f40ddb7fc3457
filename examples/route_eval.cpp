// route_eval: does llmgate's router save money without losing accuracy?
// Routes queries whose outcome on every model is known (RouterBench and
// the DC-router data in ../shared/data/routing) and compares it with each
// single model, a random choice, always the cheapest, always the best and
// the oracle.
//
//   route_eval [--data DIR] [--eval DIR] [--out DIR] [--limit N] [--validation]
//              [--neighbours K] [--min-similarity S] [--edge-words W] [--char-ngram-max N] [--prior-strength P]
//              [--complexity-influence C] [--overall-weight O]
//
// Splits (nothing is learned from a query that is evaluated):
//   default       learn from the first 70% of every file of a format in
//                 --data, evaluate on the rest of each file;
//   --eval DIR    learn from all of --data, evaluate on every file of the
//                 same format in DIR (arc_challenge_test.csv is evaluated
//                 as arc_challenge; see route_eval/dataset.hpp);
//   --validation  only the first 70% of each file exists: learn from its
//                 first 70%, evaluate on the rest. The router's settings
//                 were chosen this way, never on the evaluation split.
// The routerbench files are also evaluated together as "routerbench".
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

#include "route_eval/dataset.hpp"
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
  bool validation = false;
  route_eval::router_settings router = route_eval::validated_settings();
};

// A file's queries between the shares `from` and `to` of it.
std::vector<const route_eval::query*> slice(const route_eval::dataset& d, double from, double to) {
  const auto n = static_cast<double>(d.queries.size());
  std::vector<const route_eval::query*> part;
  for (auto i = static_cast<std::size_t>(from * n); i < static_cast<std::size_t>(to * n); ++i)
    part.push_back(&d.queries[i]);
  return part;
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
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (o.validation && !o.eval.empty()) {
    std::fprintf(stderr, "route_eval: --validation and --eval exclude each other\n");
    return 2;
  }
  if (!std::filesystem::is_directory(o.data) || (!o.eval.empty() && !std::filesystem::is_directory(o.eval))) {
    std::fprintf(stderr,
                 "route_eval: no data folder at '%s'%s. Run from the repository root with ../shared/data/routing "
                 "in place (scripts/bench routing), or pass --data.\n",
                 (o.eval.empty() ? o.data : o.eval).c_str(), o.eval.empty() ? "" : " (--eval)");
    return 2;
  }

  std::vector<route_eval::dataset> learning_sets, evaluated_sets;
  try {
    const auto prices = std::filesystem::path(o.data) / "dcrouter" / "default_llm.json";
    learning_sets = route_eval::read_folder(o.data, prices);
    if (!o.eval.empty()) evaluated_sets = route_eval::read_folder(o.eval, prices);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "route_eval: %s\n", e.what());
    return 2;
  }
  if (learning_sets.empty()) {
    std::fprintf(stderr, "route_eval: no routing data under '%s'\n", o.data.c_str());
    return 2;
  }
  const bool held_out = o.eval.empty();
  if (held_out)
    for (const auto& d : learning_sets) evaluated_sets.push_back(d);  // same files, other queries
  const double end = o.validation ? learning_share : 1.0;
  const double cut = held_out ? learning_share * end : 1.0;

  std::map<std::string, std::vector<const route_eval::dataset*>> learning_by_format, evaluated_by_format;
  for (const auto& d : learning_sets) learning_by_format[d.format].push_back(&d);
  for (const auto& d : evaluated_sets) evaluated_by_format[d.format].push_back(&d);

  const auto sweep = route_eval::preference_sweep();
  std::vector<route_eval::dataset_result> results;
  std::vector<std::string> formats;
  for (const auto& [format, evaluated] : evaluated_by_format) {
    const auto& learning = learning_by_format[format];
    if (learning.empty()) {
      std::fprintf(stderr, "route_eval: nothing of format %s to learn from under '%s'; skipped\n", format.c_str(),
                   o.data.c_str());
      continue;
    }
    const auto& models = learning.front()->models;
    bool same_models = true;
    for (const auto* d : learning) same_models = same_models && d->models == models;
    for (const auto* d : evaluated) same_models = same_models && d->models == models;
    if (!same_models) {
      std::fprintf(stderr, "route_eval: the %s files do not share one list of models; skipped\n", format.c_str());
      continue;
    }

    std::vector<const route_eval::query*> learn;
    for (const auto* d : learning) {
      const auto part = slice(*d, 0.0, held_out ? cut : 1.0);
      learn.insert(learn.end(), part.begin(), part.end());
    }
    std::fprintf(stderr, "route_eval: %s: learning from %zu queries\n", format.c_str(), learn.size());
    const auto router = route_eval::learn_router(models, learn, o.router);

    std::vector<const route_eval::query*> together;
    for (const auto* d : evaluated) {
      auto part = slice(*d, held_out ? cut : 0.0, end);
      if (part.size() > o.limit) part.resize(o.limit);
      together.insert(together.end(), part.begin(), part.end());
      std::fprintf(stderr, "route_eval: %s: evaluating %zu queries\n", d->name.c_str(), part.size());
      results.push_back(route_eval::evaluate(d->name, models, learn, part, router, sweep));
      formats.push_back(format);
    }
    if (evaluated.size() > 1) {
      std::fprintf(stderr, "route_eval: %s: evaluating all %zu queries together\n", format.c_str(), together.size());
      results.push_back(route_eval::evaluate(format, models, learn, together, router, sweep));
      formats.push_back(format);
    }
  }

  for (std::size_t i = 0; i < results.size(); ++i) route_eval::print_table(std::cout, results[i], formats[i]);

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
