// evaluate: llmgate's evaluation kit as a program. It sends a product's own
// prompts to candidate models, scores their answers against a reference
// model's, asks LLM judges, costs each candidate and writes a report; people
// rate the answers blind on a page it serves.
//
//   evaluate --config FILE [--out DIR]                 run (or resume) the evaluation, then report
//   evaluate --config FILE --rate --raters ann,bob     serve the rating page until Ctrl-C
//   evaluate --config FILE --export-ratings ann --csv FILE    a rater's batch, for rating offline
//   evaluate --config FILE --import-ratings FILE       the filled file, back into the run store
//
// Everything a run learns is in DIR/run.sqlite (the run store): a run
// stopped or killed at any point and started again resumes where it
// stopped, never sending a recorded request again (--fresh starts over).
// A run after people rated adds their ratings and each automatic method's
// agreement with them to the report. The evaluation file's form is
// described in include/llmgate/eval/plan/evaluation_file.hpp;
// examples/evaluate/daily_briefing.json is one.
//
// Prints one JSON line per candidate ({"bench":"evaluation",...}) and, on
// the last line alone, the HTML report's absolute path. Progress on stderr.
//
// Exit status: 0 done; 1 the evaluation file is invalid or the run failed;
// 2 a usage error.
#include <algorithm>   // std::find_if, std::min
#include <chrono>      // std::chrono
#include <cstdio>      // std::printf, std::fprintf
#include <exception>   // std::exception
#include <filesystem>  // std::filesystem
#include <fstream>     // std::ofstream
#include <map>         // std::map
#include <memory>      // std::unique_ptr, std::make_shared
#include <set>         // std::set
#include <string>      // std::string
#include <utility>     // std::pair
#include <vector>      // std::vector

#include <CLI/CLI.hpp>  // command line (Debian libcli11-dev)

#include <boost/asio/io_context.hpp>  // net::io_context
#include <boost/asio/signal_set.hpp>  // net::signal_set: the rating page serves until Ctrl-C

#include <llmgate/backend/blocking.hpp>          // run_blocking
#include <llmgate/eval.hpp>                      // the evaluation kit
#include <llmgate/backend/backend_registry.hpp>  // backend_registry: a backend of every configured kind

#include "local_engine.hpp"  // local_engine: GGUF candidates served by node-llama-cpp

namespace {

namespace fs = std::filesystem;
namespace net = boost::asio;
constexpr int done = 0, failed = 1, usage = 2;

std::int64_t now_unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The candidates' backends, and the engines serving the GGUF candidates
// (one per file, shared by the candidates that sample it differently).
struct served_candidates {
  std::map<fs::path, std::unique_ptr<local_engine>> engines;
  llmgate::candidate_backends backends;
};

served_candidates serve_candidates(const llmgate::evaluation_plan& plan, llmgate::run_store& store, net::io_context& context,
                                   const fs::path& out, const fs::path& engine_script, const fs::path& node_dir) {
  llmgate::http_client_options options;
  options.first_byte_timeout = std::chrono::milliseconds(plan.request_timeout_ms);
  const auto client = std::make_shared<llmgate::http_client>(context.get_executor(), options);
  const auto registry = llmgate::backend_registry::builtin();
  served_candidates served{.engines = {},
                           .backends = llmgate::make_candidate_backends(plan, registry, client, context.get_executor())};
  for (const auto& candidate : plan.candidates) {
    if (candidate.gguf.empty()) continue;
    auto& engine = served.engines[candidate.gguf];
    if (!engine) {
      engine = std::make_unique<local_engine>(engine_script, node_dir, candidate.gguf,
                                              out / (candidate.gguf.stem().string() + ".engine.log"));
      std::fprintf(stderr, "evaluate: serving %s at %s\n", candidate.gguf.c_str(), engine->base_url().c_str());
    }
    const llmgate::backend_config config{.name = candidate.name, .kind = "openai", .base_url = engine->base_url(), .retries = 0};
    served.backends.emplace(candidate.name, registry.make(config, {.executor = context.get_executor(), .client = client,
                                                                   .prices = {}, .model = candidate.model}));
    auto info = llmgate::served_model_from_gguf(candidate.name, candidate.gguf);
    info.rss_bytes = engine->resident_bytes();
    info.engine = "node-llama-cpp (scripts/llama_engine.mjs)";
    store.put_served_model(info);
  }
  return served;
}

// The vectors of `texts` by an embedder of the plan: the built-in hashing
// embedder, or the /v1/embeddings of a candidate's backend.
std::vector<std::vector<float>> embed(const llmgate::evaluation_embedder& embedder, std::span<const std::string> texts,
                                      served_candidates& served, net::io_context& context) {
  static const llmgate::hashing_embedder hashing;
  if (embedder.candidate.empty()) return llmgate::embed_with(hashing, texts);
  auto& backend = served.backends.at(embedder.candidate);
  std::vector<std::vector<float>> vectors;
  constexpr std::size_t batch = 64;
  for (std::size_t first = 0; first < texts.size(); first += batch) {
    llmgate::embedding_request request{.model = embedder.model, .input = {}, .parameters = {}};
    for (std::size_t i = first; i < std::min(texts.size(), first + batch); ++i) request.input.push_back(texts[i]);
    auto response = llmgate::run_blocking(context, backend.embed(request));
    for (auto& vector : response.embeddings) vectors.push_back(std::move(vector));
  }
  return vectors;
}

// Sends what is left to send, scores and judges what is not scored yet,
// and writes the report. Returns the report's path.
fs::path evaluate(const llmgate::evaluation_plan& plan, llmgate::run_store& store, const fs::path& out,
                  const fs::path& engine_script, const fs::path& node_dir, bool report) {
  net::io_context context;
  auto served = serve_candidates(plan, store, context, out, engine_script, node_dir);
  llmgate::run_progress progress;
  llmgate::evaluation_runner runner(plan, served.backends, store, progress);
  llmgate::run_blocking(context, runner.run());

  const auto results = store.results();
  const auto already_scored = [&](std::string_view key, std::string_view method) { return store.has_score(key, method); };
  const auto scores = llmgate::score_answers(
      plan, results,
      [&](const llmgate::evaluation_embedder& e, std::span<const std::string> texts) { return embed(e, texts, served, context); },
      already_scored);
  for (const auto& score : scores) store.put_score(score);
  std::fprintf(stderr, "evaluate: %zu answers scored\n", scores.size());
  if (!plan.judges.empty()) {
    // A verdict or an unparsed answer stands; a judge that erred (unreachable,
    // timed out) is asked again by the next run.
    std::set<std::pair<std::string, std::string>, std::less<>> judged;
    for (const auto& s : store.scores())
      if (llmgate::outcome_of(s) != llmgate::judge_outcome::error) judged.emplace(s.request_key, s.method);
    const auto verdicts = llmgate::run_blocking(
        context, llmgate::judge_answers(
                     plan, results, [&](std::string_view candidate) { return served.backends.at(std::string(candidate)); },
                     [&](std::string_view key, std::string_view method) {
                       return judged.contains(std::pair{std::string(key), std::string(method)});
                     },
                     [&](const llmgate::score_record& verdict) { store.put_score(verdict); }));
    std::fprintf(stderr, "evaluate: %zu judge verdicts\n", verdicts.size());
  }
  for (auto info : store.served_models()) {  // the engines' memory after the run
    const auto engine = served.engines.find(plan.find_candidate(info.candidate)->gguf);
    if (engine == served.engines.end()) continue;
    info.rss_bytes = engine->second->resident_bytes();
    store.put_served_model(info);
  }

  const auto all_scores = store.scores();
  const auto ratings = store.ratings();
  const auto served_models = store.served_models();
  const auto summary = llmgate::summarize(plan, results, all_scores, ratings);
  std::fputs(llmgate::evaluation_json_lines(plan, summary).c_str(), stdout);
  if (!report) return {};
  return llmgate::write_report_files(out, {.plan = plan, .summary = summary, .results = results, .scores = all_scores,
                                           .ratings = ratings, .served_models = served_models,
                                           .made_unix_ms = now_unix_ms()});
}

// The rating side: the page, or a batch out to CSV and back.
struct rating_request {
  bool serve = false;
  std::vector<std::string> raters;
  std::size_t per_answer = 1;
  unsigned short port = 0;
  std::string export_rater;
  std::string csv;
  std::string import_file;
};

int rate(const llmgate::evaluation_plan& plan, llmgate::run_store& store, const rating_request& asked) {
  const auto results = store.results();
  std::vector<std::string> prompt_texts;
  for (const auto& messages : llmgate::render_prompts(plan)) prompt_texts.push_back(llmgate::prompt_text(messages));
  const auto prompt_of = [&](const llmgate::planned_request& r) { return prompt_texts.at(static_cast<std::size_t>(r.prompt)); };
  llmgate::rating_catalog catalog(results, llmgate::rating_secret(store), prompt_of);
  if (catalog.size() == 0) {
    std::fprintf(stderr, "evaluate: nothing to rate yet: run the evaluation first\n");
    return failed;
  }
  auto batches = asked.raters.empty() ? std::vector<llmgate::rater_batch>{}
                                      : llmgate::assign_raters(store, results, asked.raters, asked.per_answer);
  if (batches.empty())
    for (const auto& rater : store.raters()) batches.push_back({rater, store.assignment(rater)});
  if (batches.empty()) {
    std::fprintf(stderr, "evaluate: no raters yet: name them with --raters\n");
    return usage;
  }
  if (!asked.import_file.empty()) {
    const auto imported = llmgate::import_rating_csv_file(store, catalog, batches, asked.import_file, "", now_unix_ms());
    std::printf("imported %zu ratings from %s\n", imported, asked.import_file.c_str());
    return done;
  }
  if (!asked.export_rater.empty()) {
    const auto batch = std::find_if(batches.begin(), batches.end(), [&](const auto& b) { return b.rater == asked.export_rater; });
    if (batch == batches.end()) {
      std::fprintf(stderr, "evaluate: no rater \"%s\" (name raters with --raters)\n", asked.export_rater.c_str());
      return usage;
    }
    std::ofstream(asked.csv, std::ios::binary) << llmgate::export_rating_csv(catalog, *batch, store.ratings());
    std::printf("%s: %zu answers for %s to rate\n", asked.csv.c_str(), batch->request_keys.size(), batch->rater.c_str());
    return done;
  }
  llmgate::rating_server server(llmgate::rating_site(store, std::move(catalog), batches), {.port = asked.port});
  server.start();
  std::printf("rating page: %s (raters:", server.url().c_str());
  for (const auto& b : batches) std::printf(" %s", b.rater.c_str());
  std::printf("); Ctrl-C to stop\n");
  std::fflush(stdout);
  net::io_context signals;
  net::signal_set stop(signals, SIGINT, SIGTERM);
  stop.async_wait([](auto, int) {});
  signals.run();
  server.stop();
  return done;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"llmgate evaluate: compare candidate models on your own prompts for quality, latency and cost"};
  app.footer("Exit status: 0 done; 1 invalid evaluation file or a failed run; 2 usage error.");
  std::string config_path;
  std::string out = "build/evaluate";
  std::string engine_script = LLMGATE_ENGINE_SCRIPT;
  std::string node_dir = LLMGATE_NODE_DIR;
  bool fresh = false, no_report = false;
  rating_request rating;
  app.add_option("-c,--config", config_path, "the evaluation file (JSON)")->required()->check(CLI::ExistingFile);
  app.add_option("-o,--out", out, "where the run store, the report and the result files go")->capture_default_str();
  app.add_flag("--fresh", fresh, "forget the run store's earlier run and start over");
  app.add_flag("--no-report", no_report, "run and score, but write no report");
  app.add_option("--engine-script", engine_script, "the llama.cpp engine serving GGUF candidates")->capture_default_str();
  app.add_option("--node-dir", node_dir, "the folder holding node_modules with node-llama-cpp")->capture_default_str();
  auto* serve = app.add_flag("--rate", rating.serve, "serve the blind rating page (on 127.0.0.1) until Ctrl-C");
  app.add_option("--raters", rating.raters, "the raters' ids, comma-separated (dealt the answers evenly)")->delimiter(',');
  app.add_option("--ratings-per-answer", rating.per_answer, "how many raters rate each answer")->check(CLI::Range(1, 100));
  app.add_option("--port", rating.port, "the rating page's port (0: any free one)")->needs(serve);
  auto* out_csv = app.add_option("--export-ratings", rating.export_rater, "write this rater's batch as CSV to --csv");
  app.add_option("--csv", rating.csv, "the file --export-ratings writes")->needs(out_csv);
  out_csv->needs("--csv");
  app.add_option("--import-ratings", rating.import_file, "read a filled CSV batch into the run store")->check(CLI::ExistingFile);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? done : usage;
  }

  try {
    const auto file = llmgate::evaluation_file::load(config_path);
    fs::create_directories(out);
    const fs::path store_path = fs::path(out) / "run.sqlite";
    if (fresh)
      for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(store_path.string() + suffix);
    llmgate::run_store store(store_path);
    store.bind_plan(file.fingerprint);
    if (rating.serve || !rating.export_rater.empty() || !rating.import_file.empty()) return rate(file.plan, store, rating);
    const auto report = evaluate(file.plan, store, out, engine_script, node_dir, !no_report);
    if (!report.empty()) std::printf("%s\n", report.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "evaluate: %s\n", e.what());
    return failed;
  }
  return done;
}
