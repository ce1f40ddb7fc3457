// train_verifier: fits a learned verifier on labelled question pairs and
// writes its weights file, which a learned_verifier (and the gateway) load.
//
//   train_verifier --pairs FILE.jsonl --out FILE [--model logistic|trees|best]
//                  [--fit-share 0.5] [--trees N] [--depth D] [--rate R] [--seed S]
//
// FILE.jsonl holds {"a","b","duplicate"} lines (QQP's format, e.g.
// ../shared/data/qqp/pairs.dev.jsonl). split_pairs cuts it into a fit part
// (--fit-share of the question components) and a held-out part with no
// question in both (cache/verifier_training.hpp says how). Both model kinds
// are fitted on the fit part; their ROC AUC and that of the embedder's
// similarity alone are printed for the held-out part, and the weights of
// --model written (best: the kind with the higher AUC on a validation
// slice of the fit part, never the held-out part). With --fit-share 1
// everything is fitted on and nothing is held out.
//
// Progress on stderr; the AUCs and the file written on stdout.
// Exit status: 0 written; 1 the pairs cannot be read or the file written;
// 2 bad options.

#include <cmath>        // std::isnan
#include <cstdint>      // std::uint64_t
#include <cstdio>       // std::printf, std::snprintf
#include <exception>    // std::exception
#include <filesystem>   // std::filesystem::path
#include <iostream>     // std::cerr
#include <map>          // std::map (CLI11's choices)
#include <string>       // std::string

#include <CLI/CLI.hpp>  // CLI::App

#include <llmgate/cache/verifier_training.hpp>  // read_labelled_pairs, split_pairs, fit_verifier, roc_auc
#include <llmgate/tools/labelled_pairs.hpp>  // read_labelled_pairs
#include <llmgate/cache/verifier_weights.hpp>   // save_verifier_weights

namespace {

struct options {
  std::filesystem::path pairs, out;
  llmgate::verifier_fit_kind model = llmgate::verifier_fit_kind::best;
  double fit_share = 0.5;
  llmgate::tree_options trees = {};
  std::uint64_t seed = 1;
};

const char* name_of(llmgate::verifier_model::kind kind) {
  return kind == llmgate::verifier_model::kind::trees ? "trees" : "logistic";
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  CLI::App app{"train_verifier: fits a learned verifier on labelled question pairs and writes its weights"};
  app.add_option("--pairs", o.pairs, "JSON lines {\"a\",\"b\",\"duplicate\"}")->required();
  app.add_option("--out", o.out, "the weights file to write")->required();
  const std::map<std::string, llmgate::verifier_fit_kind> kinds = {
      {"logistic", llmgate::verifier_fit_kind::logistic},
      {"trees", llmgate::verifier_fit_kind::trees},
      {"best", llmgate::verifier_fit_kind::best}};
  app.add_option("--model", o.model, "logistic, trees, or best (by validation AUC)")
      ->transform(CLI::CheckedTransformer(kinds, CLI::ignore_case))
      ->default_str("best");
  app.add_option("--fit-share", o.fit_share, "share of the question components fitted on; the rest is held out")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--trees", o.trees.trees, "trees in the ensemble")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--depth", o.trees.depth, "depth of each tree")->check(CLI::Range(1, 10))->capture_default_str();
  app.add_option("--rate", o.trees.rate, "learning rate of the trees")->check(CLI::Range(0.0, 1.0))->capture_default_str();
  app.add_option("--seed", o.seed, "seed of the row sampling and the validation slice")->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // --help is a ParseError too
  }
  o.trees.seed = o.seed;

  try {
    std::cerr << "train_verifier: reading " << o.pairs << '\n';
    const auto pairs = llmgate::read_labelled_pairs(o.pairs);
    const auto split = llmgate::split_pairs(pairs, o.fit_share);
    std::cerr << "train_verifier: " << pairs.size() << " pairs, " << split.fit.size() << " to fit on, "
              << split.held_out.size() << " held out\n";
    if (split.fit.empty()) {
      std::cerr << "train_verifier: nothing to fit on (raise --fit-share)\n";
      return 1;
    }
    std::cerr << "train_verifier: the embedder observes the fit part's questions\n";
    const auto similarity = llmgate::pair_similarity::observing(split.fit);

    char share[32];
    std::snprintf(share, sizeof share, "%g", o.fit_share);
    const std::string source = o.pairs.filename().string() + " (fit share " + share + ")";
    llmgate::verifier_fit_options fit{.kind = o.model, .trees = o.trees, .seed = o.seed, .source = source};
    llmgate::verifier_fit_report report;
    std::cerr << "train_verifier: fitting\n";
    const auto weights = llmgate::fit_verifier(split.fit, similarity, fit, &report);
    std::cerr << "train_verifier: fitted " << name_of(report.chosen) << " in " << report.seconds << " s\n";
    if (!std::isnan(report.auc_logistic))
      std::printf("validation AUC (%zu pairs of the fit part): logistic %.4f, trees %.4f -> %s\n",
                  report.validation_pairs, report.auc_logistic, report.auc_trees, name_of(report.chosen));

    if (!split.held_out.empty()) {
      const llmgate::label_list labels(split.held_out);
      // The kind not written is fitted too, so that both are measured.
      fit.kind = report.chosen == llmgate::verifier_model::kind::trees ? llmgate::verifier_fit_kind::logistic
                                                                      : llmgate::verifier_fit_kind::trees;
      std::cerr << "train_verifier: fitting the other kind for comparison\n";
      const auto other = llmgate::fit_verifier(split.fit, similarity, fit);
      const double chosen_auc = llmgate::roc_auc(llmgate::verifier_logits(weights, split.held_out, similarity), labels);
      const double other_auc = llmgate::roc_auc(llmgate::verifier_logits(other, split.held_out, similarity), labels);
      const double similarity_auc = llmgate::roc_auc(llmgate::similarities(split.held_out, similarity), labels);
      const bool trees_chosen = report.chosen == llmgate::verifier_model::kind::trees;
      std::printf("held-out AUC (%zu pairs): logistic %.4f, trees %.4f, similarity alone %.4f\n",
                  split.held_out.size(), trees_chosen ? other_auc : chosen_auc, trees_chosen ? chosen_auc : other_auc,
                  similarity_auc);
    }

    if (const auto ec = llmgate::save_verifier_weights(o.out, weights)) {
      std::cerr << "train_verifier: cannot write " << o.out << ": " << ec.message() << '\n';
      return 1;
    }
    std::printf("wrote %s: %s\n", o.out.c_str(), weights.fitted_on.c_str());
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "train_verifier: " << e.what() << '\n';
    return 1;
  }
}
