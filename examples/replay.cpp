// replay: the reference semantic-cache experiment on public data. Sends a
// stream of requests, in order, through llmgate's exact tier and semantic
// cache; each request either hits or is answered by the "LLM" (the
// dataset's own answer) and stored. Measures, per threshold policy, how
// many LLM calls the caches avoid, how often a hit is right, and what a
// lookup costs.
//
//   replay [--data FILE] [--fit-data FILE] [--price-per-call USD]
//          [--feedback-rate F] [--thresholds T,T,...] [--limit N]
//          [--out DIR] [--threads N] [--ef-construction N]
//          [--sample N] [--seed N] [--probabilities P,P,...] [--prefilter S]
//          [--neighbours N]
//
// Runs from the repository root (scripts/run replay does): the default
// data is the bundled stream examples/data/questions.jsonl; the QQP pairs
// and the paraphrase pairs are in ../shared/data. Formats: see
// replay/stream_reader.hpp.
//
// The QQP dev split (--fit-data, ../shared/data/qqp/pairs.dev.jsonl) is
// split by question components (split_pairs, cache/verifier_training.hpp):
// the verifier is fitted on its fit part, which is never replayed; given
// as --data, only its held-out part is replayed. Any other --data is
// replayed whole, with the verifier fitted on the same fit part. Without
// the fit data the verifier's configurations are left out.
//
// Configurations, each a full replay through fresh caches; the similarity
// policies decide on the embedder's similarity behind the lexical guard:
//   - a static threshold per --thresholds value, with no feedback: the
//     reference's experiment;
//   - the adaptive threshold at error bounds 0.01, 0.02, 0.05, 0.10, 0.20,
//     learning from the feedback on a share --feedback-rate of its hits and
//     on all of its explores (explores count as misses);
//   - policy "verifier": learned_verifier (cache/learned_verifier.hpp)
//     with the fitted weights, asked about the stored requests at least
//     --prefilter similar, the threshold on its probability: a static
//     one per --probabilities value and the adaptive one at the same error
//     bounds, each twice: learning online from the feedback on a share
//     --feedback-rate of its hits (and the explores), and with no online
//     learning at all (the verifier never learns, no hit is reported; the
//     adaptive threshold still learns from its explores, without which it
//     never serves).
//   - policy "error_bound": the learned verifier as above, behind
//     error_bound_threshold (cache/error_bound_threshold.hpp) at bounds
//     0.01, 0.02, 0.05 and 0.10: served where the estimated chance of a
//     wrong answer, per scope and entry, is within the bound; learning
//     online and not, as the verifier's lines. Each is printed beside the
//     bound it keeps or not, and beside the best static similarity
//     threshold at the same realised semantic precision.
// What the vetoes gain shows in each: the stored answers vetoed after the
// threshold had accepted them (by the lexical guard; a fitted verifier
// weighs the guard's checks as features and vetoes nothing), and how many
// of those were right.
// Replays run in parallel, one per thread. Lookup times are the looking-up
// thread's CPU time (see replay/experiment.hpp), so neither the other
// replays nor other processes on a shared machine inflate them.
//
// Outputs, under --out: replay-<data>.csv (the table), replay-<data>.svg
// (precision and hit rate against the similarity threshold),
// replay-<data>-curves.svg (precision against hit rate, a curve per
// policy), replay-<data>-records/<configuration>.csv (every request's
// decision, see replay/experiment.hpp's request_record) and
// replay-<data>-sample.{csv,html} (a seeded sample of each policy's served
// semantic hits, from its configuration with the most hits at precision
// >= 0.95, else its most precise one, for people to review).
//
// Exit status: 0 done; 2 bad options, or a data file missing or unreadable.
#include <algorithm>     // std::min, std::max
#include <atomic>        // std::atomic
#include <chrono>        // std::chrono::steady_clock
#include <cstdint>       // std::uint64_t
#include <cstdio>        // std::fprintf
#include <exception>     // std::exception
#include <filesystem>    // std::filesystem
#include <functional>    // std::function
#include <iostream>      // std::cout
#include <limits>        // std::numeric_limits
#include <optional>      // std::optional
#include <span>          // std::span
#include <string>        // std::string
#include <system_error>  // std::error_code
#include <thread>        // std::jthread
#include <vector>        // std::vector

#include <CLI/CLI.hpp>  // command line (Debian libcli11-dev)

#include <llmgate/cache/error_bound_threshold.hpp>  // error_bound_threshold
#include <llmgate/cache/learned_verifier.hpp>    // learned_verifier
#include <llmgate/cache/verifier_training.hpp>   // read_labelled_pairs, split_pairs, fit_verifier
#include <llmgate/tools/labelled_pairs.hpp>   // read_labelled_pairs

#include "replay/experiment.hpp"
#include "replay/report.hpp"
#include "replay/stream_reader.hpp"

namespace {

constexpr double error_bounds[] = {0.01, 0.02, 0.05, 0.10, 0.20};
constexpr double promised_bounds[] = {0.01, 0.02, 0.05, 0.10};  // the error_bound policy's
constexpr double target_precision = 0.95;

struct settings {
  std::string data = "examples/data/questions.jsonl";
  std::string fit_data = "../shared/data/qqp/pairs.dev.jsonl";
  double price_per_call = 0.002;
  double feedback_rate = 0.1;
  std::size_t sample = 100;
  std::uint64_t seed = 1;
  std::vector<double> thresholds = {0.99, 0.98, 0.95, 0.90, 0.85, 0.80};
  std::vector<double> probabilities = {0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95};
  std::size_t limit = std::numeric_limits<std::size_t>::max();
  std::string out = "build/replay-results";
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());  // 34 replays: more cores, sooner done
  // The breadth of the search that places each stored request in the HNSW
  // graph. Inserts are most of a replay's time, in proportion to it: on
  // the QQP dev split, on 2 threads, 40 (FAISS's default) replays in 51 s,
  // 100 in 95 s and the cache's default of 200 in 196 s. 40's graph finds
  // slightly fewer of the farther neighbours: the same hit rates at
  // thresholds 0.99 and 0.98, 0.1 points fewer hits at 0.95 and 0.3 to 0.7
  // at 0.90 to 0.80. --ef-construction 200 replays the cache as it ships.
  // Lookups keep the cache's ef_search.
  std::size_t ef_construction = 40;
  // Stored requests less similar than this are not put to the verifier:
  // the verifier was fitted on pairs that were all about one topic, and
  // is too sure of pairs far less alike than any it saw.
  double prefilter = llmgate::learned_verifier::advised_prefilter;
  std::size_t neighbours = llmgate::semantic_cache_options{}.neighbours;
};

using job = std::function<replay::replay_result()>;

// Runs jobs[i] into results[i] (sized already) on up to `threads` threads,
// taking the jobs in order of their index.
void run_all(const std::vector<job>& jobs, unsigned threads, std::vector<replay::replay_result>& results) {
  std::atomic<std::size_t> next{0};
  std::vector<std::jthread> workers;
  for (unsigned t = 0; t < std::min<std::size_t>(threads, jobs.size()); ++t)
    workers.emplace_back([&] {
      for (std::size_t i; (i = next++) < jobs.size();) results[i] = jobs[i]();
    });
}

job static_job(const replay::replay_input& input, double threshold, replay::progress_meter& progress) {
  return [&input, threshold, &progress] {
    auto r = replay::replay_once(input, llmgate::static_threshold{static_cast<float>(threshold)},
                                 replay::similarity_verifier(), 0.0f, 0.0, progress);
    r.policy = "static";
    return r;
  };
}

job adaptive_job(const replay::replay_input& input, double bound, double feedback_rate,
                 replay::progress_meter& progress) {
  return [&input, bound, feedback_rate, &progress] {
    llmgate::adaptive_threshold policy({.error_bound = static_cast<float>(bound)});
    auto r = replay::replay_once(input, std::move(policy), replay::similarity_verifier(), 0.0f, feedback_rate,
                                 progress);
    r.policy = "adaptive";
    r.error_bound = bound;
    return r;
  };
}

// The adaptive threshold on the verifier's probability. The similarity's
// defaults (start at 0.99, explore down to 0.94) would explore next to
// nothing: few probabilities come that near 1.
llmgate::adaptive_threshold_options probability_threshold(double bound) {
  return {.error_bound = static_cast<float>(bound), .start_threshold = 0.95f, .floor = 0.5f, .explore_band = 0.45f};
}

// A replay with the learned verifier: a static threshold at `probability`,
// else the adaptive one at `bound`.
job verifier_job(const replay::replay_input& input, const llmgate::verifier_weights& weights,
                 std::optional<double> probability, std::optional<double> bound, bool learning, const settings& o,
                 replay::progress_meter& progress) {
  return [=, &input, &weights, &o, &progress] {
    llmgate::learned_verifier verifier(weights, {.learn = learning});
    const double rate = learning ? o.feedback_rate : 0.0;
    const auto prefilter = static_cast<float>(o.prefilter);
    auto r = probability ? replay::replay_once(input, llmgate::static_threshold{static_cast<float>(*probability)},
                                               std::move(verifier), prefilter, rate, progress)
                         : replay::replay_once(input, llmgate::adaptive_threshold(probability_threshold(*bound)),
                                               std::move(verifier), prefilter, rate, progress);
    r.policy = "verifier";
    r.error_bound = bound;
    r.learning = learning;
    return r;
  };
}

// The learned verifier behind error_bound_threshold at `bound`.
job error_bound_job(const replay::replay_input& input, const llmgate::verifier_weights& weights, double bound,
                    bool learning, const settings& o, replay::progress_meter& progress) {
  return [=, &input, &weights, &o, &progress] {
    llmgate::learned_verifier verifier(weights, {.learn = learning});
    auto r = replay::replay_once(input, llmgate::error_bound_threshold({.bound = static_cast<float>(bound)}),
                                 std::move(verifier), static_cast<float>(o.prefilter),
                                 learning ? o.feedback_rate : 0.0, progress);
    r.policy = "error_bound";
    r.error_bound = bound;
    r.learning = learning;
    return r;
  };
}

// Each error_bound line: whether its semantic hits kept the bound, and its
// hits against the static similarity threshold's with the most hits at a
// semantic precision at least as high.
void print_bounds(std::span<const replay::replay_result> statics, std::span<const replay::replay_result> bounded) {
  for (const auto& r : bounded) {
    const auto precision = r.semantic_precision();
    if (!precision) {
      std::printf("%s: no semantic hit\n", r.configuration().c_str());
      continue;
    }
    std::printf("%s: semantic precision %.3f, the bound %s", r.configuration().c_str(), *precision,
                *precision >= 1 - *r.error_bound ? "kept" : "NOT kept");
    const replay::replay_result* best = nullptr;
    for (const auto& s : statics)
      if (s.semantic_precision().value_or(0) >= *precision && (!best || s.semantic_hits > best->semantic_hits)) best = &s;
    if (best)
      std::printf("; semantic hits %zu against %zu for %s at semantic precision %.3f: %.2fx\n", r.semantic_hits,
                  best->semantic_hits, best->configuration().c_str(), *best->semantic_precision(),
                  static_cast<double>(r.semantic_hits) / static_cast<double>(std::max<std::size_t>(best->semantic_hits, 1)));
    else
      std::printf("; no static threshold is as precise\n");
  }
}

// The line with the most hits at precision >= target, if any reaches it.
const replay::replay_result* best_at_target(std::span<const replay::replay_result> lines) {
  const replay::replay_result* best = nullptr;
  for (const auto& r : lines)
    if (r.precision().value_or(0) >= target_precision && (!best || r.hits() > best->hits())) best = &r;
  return best;
}

// What the guard did at the best static threshold (the one with the most
// hits at precision >= target, else the most precise).
void print_guard_effect(std::span<const replay::replay_result> statics) {
  const replay::replay_result* best = best_at_target(statics);
  if (!best)
    best = &*std::ranges::max_element(statics, {}, [](const auto& r) { return r.precision().value_or(0); });
  std::printf(
      "guard at threshold %.2f: vetoed %zu stored answers the threshold accepted: %zu wrong ones kept out, "
      "%zu right ones refused\n",
      best->threshold, best->vetoes, best->vetoes - best->right_vetoes, best->right_vetoes);
}

// The target line: the most hits at precision >= target of `lines`
// against those of the best static similarity threshold.
void print_target(const char* what, std::span<const replay::replay_result> statics,
                  std::span<const replay::replay_result> lines) {
  const auto* s = best_at_target(statics);
  const auto* a = best_at_target(lines);
  std::printf("target (%s >= 1.3x the total hit rate of the best static similarity threshold, at overall precision >= %.2f): ",
              what, target_precision);
  if (!a) {
    std::printf("not met: none reaches precision %.2f\n", target_precision);
    return;
  }
  if (!s) {
    std::printf("no static threshold reaches precision %.2f; %s hits %.1f%% at precision %.3f\n", target_precision,
                a->configuration().c_str(), 100 * a->share(a->hits()), *a->precision());
    return;
  }
  const double ratio = static_cast<double>(a->hits()) / static_cast<double>(std::max<std::size_t>(s->hits(), 1));
  std::printf("%s: %s hits %.1f%% at precision %.3f, %s hits %.1f%% at precision %.3f: %.2fx\n",
              ratio >= 1.3 ? "met" : "not met", a->configuration().c_str(), 100 * a->share(a->hits()), *a->precision(),
              s->configuration().c_str(), 100 * s->share(s->hits()), *s->precision(), ratio);
}

// Whether two paths name the same existing file.
bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  return std::filesystem::equivalent(a, b, ec);
}

// The stream to replay, and the pairs to fit the verifier on: the fit
// part of the fit data, which is replayed only when it is the data, and
// then only its held-out part. No pairs when the fit data is absent.
struct replay_data {
  replay::replay_stream stream;
  std::vector<llmgate::labelled_pair> fit;
};

replay_data read_data(const settings& o) {
  replay_data data;
  const bool data_is_fit_data = same_file(o.data, o.fit_data);
  if (!data_is_fit_data) data.stream = replay::read_stream(o.data, o.limit);
  if (!std::filesystem::is_regular_file(o.fit_data)) {
    std::fprintf(stderr, "replay: no fit data at '%s' (see ../shared/data/README.md): the verifier is left out\n",
                 o.fit_data.c_str());
    return data;
  }
  auto split = llmgate::split_pairs(llmgate::read_labelled_pairs(o.fit_data));
  std::fprintf(stderr, "replay: %s split by question components: %zu pairs to fit the verifier on%s, %zu held out\n",
               o.fit_data.c_str(), split.fit.size(), data_is_fit_data ? " (not replayed)" : "",
               split.held_out.size());
  if (data_is_fit_data)
    data.stream = replay::stream_of_pairs(split.held_out, "question pairs (QQP), held-out part", o.limit);
  data.fit = std::move(split.fit);
  return data;
}

// The verifier's weights, fitted on `pairs` (see the training header).
llmgate::verifier_weights fitted_weights(std::span<const llmgate::labelled_pair> pairs, const std::string& source) {
  const auto similarity = llmgate::pair_similarity::observing(pairs);
  llmgate::verifier_fit_report report;
  auto weights = llmgate::fit_verifier(pairs, similarity, {.source = source}, &report);
  std::fprintf(stderr,
               "replay: verifier fitted on %zu pairs of %s in %.1f s: %s model (validation AUC: logistic %.3f, "
               "trees %.3f)\n",
               report.pairs, source.c_str(), report.seconds,
               report.chosen == llmgate::verifier_model::kind::trees ? "trees" : "logistic", report.auc_logistic,
               report.auc_trees);
  return weights;
}

// Per family, the configuration whose served hits the sample shows: the
// one with the most hits at precision >= target, else the most precise.
std::vector<const replay::replay_result*> sampled_configurations(std::span<const replay::replay_result> results) {
  std::vector<const replay::replay_result*> chosen;
  for (const auto& r : results) {
    if (!r.semantic_hits) continue;
    auto at = std::ranges::find_if(chosen, [&](const auto* c) { return c->family() == r.family(); });
    if (at == chosen.end()) {
      chosen.push_back(&r);
      continue;
    }
    const auto* c = *at;
    const bool r_at = r.precision().value_or(0) >= target_precision, c_at = c->precision().value_or(0) >= target_precision;
    if (r_at != c_at ? r_at : r_at ? r.hits() > c->hits() : r.precision() > c->precision()) *at = &r;
  }
  return chosen;
}

// Writes every file under `out`; false after the first that failed.
bool write_files(const settings& o, const replay::replay_stream& stream,
                 std::span<const replay::replay_result> results, std::span<const replay::replay_result> statics,
                 std::span<const replay::replay_result> adaptives) {
  const std::string stem = std::filesystem::path(o.data).stem().string(), name = std::filesystem::path(o.data).filename().string();
  const auto base = std::filesystem::path(o.out) / ("replay-" + stem);
  const auto fail = [](const std::filesystem::path& path) {
    std::fprintf(stderr, "replay: cannot write %s\n", path.c_str());
    return false;
  };
  const std::filesystem::path csv = base.string() + ".csv", svg = base.string() + ".svg",
                              curves = base.string() + "-curves.svg", records = base.string() + "-records",
                              sample_csv = base.string() + "-sample.csv", sample_html = base.string() + "-sample.html";
  if (!replay::write_csv(csv, results, o.price_per_call)) return fail(csv);
  if (!replay::write_svg(svg, "llmgate replay: " + name, statics, adaptives)) return fail(svg);
  if (!replay::write_curves_svg(curves, "llmgate replay: " + name + ", precision against hit rate", results,
                                target_precision))
    return fail(curves);
  std::error_code ec;
  std::filesystem::create_directories(records, ec);
  for (const auto& r : results)
    if (const auto path = records / (r.slug() + ".csv"); ec || !replay::write_records_csv(path, stream, r))
      return fail(path);
  if (!replay::write_hit_sample(sample_csv, sample_html, "llmgate replay: " + name + ", served semantic hits",
                                stream, sampled_configurations(results), o.sample, o.seed))
    return fail(sample_html);
  std::printf("wrote %s, %s, %s, %s/*.csv, %s and %s\n", csv.c_str(), svg.c_str(), curves.c_str(), records.c_str(),
              sample_csv.c_str(), sample_html.c_str());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  settings o;
  CLI::App app{
      "Replays a request stream through llmgate's exact and semantic caches and reports hit rate, "
      "precision, recall, lookup latency and money saved per threshold policy."};
  app.add_option("--data", o.data,
                 "QQP pairs JSONL, paraphrase JSON list, or {\"scope\",\"text\",\"answer\"} JSONL stream")
      ->capture_default_str();
  app.add_option("--fit-data", o.fit_data,
                 "QQP pairs JSONL whose fit part is never replayed (given as --data, its held-out part is)")
      ->capture_default_str();
  app.add_option("--price-per-call", o.price_per_call, "USD one LLM call costs")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--feedback-rate", o.feedback_rate,
                 "share of the semantic hits whose rightness is reported through feedback() (adaptive "
                 "thresholds, learning verifiers)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--thresholds", o.thresholds, "static similarity thresholds, comma separated")
      ->delimiter(',')
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--probabilities", o.probabilities, "the verifier's static probability thresholds, comma separated")
      ->delimiter(',')
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--limit", o.limit, "replay at most N requests (of a pair file: its first N/2 pairs)")
      ->check(CLI::PositiveNumber);
  app.add_option("--out", o.out, "folder for the tables, plots, records and sample")->capture_default_str();
  app.add_option("--threads", o.threads, "replays run at once (each uses one core)")
      ->check(CLI::Range(1u, 256u))
      ->capture_default_str();
  app.add_option("--ef-construction", o.ef_construction, "HNSW breadth of each insert's search")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  app.add_option("--prefilter", o.prefilter,
                 "similarity below which a stored request is not put to the verifier (the semantic cache's "
                 "prefilter_similarity)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--neighbours", o.neighbours, "nearest stored requests each lookup examines")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_option("--sample", o.sample, "served semantic hits per policy in the sample for review")
      ->capture_default_str();
  app.add_option("--seed", o.seed, "seed of the sample's draw")->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // --help is a ParseError too
  }

  if (!std::filesystem::is_regular_file(o.data)) {
    std::fprintf(stderr,
                 "replay: no data file at '%s'. Run from the repository root (scripts/run replay), or pass "
                 "--data with a QQP pairs file (../shared/data/qqp/pairs.dev.jsonl), the paraphrase file "
                 "(../shared/data/paraphrase/pairs.json) or a {\"scope\",\"text\",\"answer\"} JSONL stream.\n",
                 o.data.c_str());
    return 2;
  }
  const auto started = std::chrono::steady_clock::now();
  replay_data data;
  try {
    data = read_data(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "replay: %s\n", e.what());
    return 2;
  }
  const replay::replay_stream& stream = data.stream;
  std::optional<llmgate::verifier_weights> weights;
  if (!data.fit.empty()) weights = fitted_weights(data.fit, "the fit part of " + o.fit_data);
  const std::size_t verifier_lines = weights ? o.probabilities.size() + std::size(error_bounds) : 0;
  const std::size_t bounded_lines = weights ? 2 * std::size(promised_bounds) : 0;
  const std::size_t replays = o.thresholds.size() + std::size(error_bounds) + 2 * verifier_lines + bounded_lines;
  std::fprintf(stderr, "replay: %s, %zu requests, %zu scopes, %zu distinct answers; %zu replays on %u threads\n",
               stream.format.c_str(), stream.requests.size(), stream.scopes.size(), stream.answers, replays,
               o.threads);

  llmgate::hnsw_parameters graph = llmgate::default_index_factory{}.parameters;
  graph.ef_construction = o.ef_construction;
  const replay::replay_input input(stream, graph, o.neighbours);
  replay::progress_meter progress(stream.requests.size() * replays);
  std::vector<job> jobs;
  for (const double t : o.thresholds) jobs.push_back(static_job(input, t, progress));
  for (const double bound : error_bounds) jobs.push_back(adaptive_job(input, bound, o.feedback_rate, progress));
  if (weights)
    for (const bool learning : {true, false}) {
      for (const double p : o.probabilities)
        jobs.push_back(verifier_job(input, *weights, p, std::nullopt, learning, o, progress));
      for (const double bound : error_bounds)
        jobs.push_back(verifier_job(input, *weights, std::nullopt, bound, learning, o, progress));
    }
  if (weights)
    for (const bool learning : {true, false})
      for (const double bound : promised_bounds)
        jobs.push_back(error_bound_job(input, *weights, bound, learning, o, progress));
  std::vector<replay::replay_result> results(jobs.size());
  run_all(jobs, o.threads, results);
  const std::span<const replay::replay_result> statics(results.data(), o.thresholds.size());
  const std::span<const replay::replay_result> adaptives(results.data() + o.thresholds.size(),
                                                         std::size(error_bounds));
  const std::span<const replay::replay_result> verifying(adaptives.data() + adaptives.size(), verifier_lines);
  const std::span<const replay::replay_result> fixed(verifying.data() + verifier_lines, verifier_lines);
  const std::span<const replay::replay_result> bounded(fixed.data() + verifier_lines, bounded_lines);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  const std::string name = std::filesystem::path(o.data).filename().string();
  std::printf(
      "replay of %s (%s): %zu requests, %zu scopes, %zu distinct answers; $%g per LLM call; "
      "feedback rate %g; %.1f s on %u threads\n",
      name.c_str(), stream.format.c_str(), stream.requests.size(), stream.scopes.size(), stream.answers,
      o.price_per_call, o.feedback_rate, seconds, o.threads);
  replay::print_table(std::cout, results, o.price_per_call);
  print_guard_effect(statics);
  double longest_insert_us = 0;
  for (const auto& r : results) longest_insert_us = std::max(longest_insert_us, r.longest_insert_us);
  std::printf(
      "lookup times: CPU time of embed + search + verifier; longest single insert: %.1f ms (the insert that "
      "re-embedded every stored request under new weights; other threads' lookups and inserts go on meanwhile)\n",
      longest_insert_us / 1000);
  print_target("adaptive + guard", statics, adaptives);
  if (weights) {
    print_target("verifier + threshold", statics, verifying);
    print_target("verifier + threshold, no online learning", statics, fixed);
    print_target("error_bound", statics, bounded);
    print_bounds(statics, bounded);
  }

  std::error_code ec;
  std::filesystem::create_directories(o.out, ec);
  if (ec)
    std::fprintf(stderr, "replay: cannot create '%s': %s\n", o.out.c_str(), ec.message().c_str());
  else
    write_files(o, stream, results, statics, adaptives);
  for (const auto& r : results) std::printf("%s\n", replay::json_line(r).c_str());
  return 0;
}
