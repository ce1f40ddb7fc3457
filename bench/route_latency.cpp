// Routing-decision latency: one interactive route() call (local analyser:
// text features, embedding, kNN over labelled examples; kNN over the model
// vectors; filters; scoring) with 100 models in the registry.
//
//   llmgate_bench_route_latency [--requests N] [--examples E]
//
// Models: 100 with seeded random ratings, prices and latencies; one in four
// tagged for a few task types, one in five for a few domains, one in ten a
// generalist, each with accuracies for four task types. Labelled examples:
// the first E (2,000) questions of ../shared/data/routing/dcrouter/train.json
// (seeded synthetic questions where absent), each recording the scores of
// 20 models; requests: the next questions, routed under the balanced
// profile. The analyser's examples are searched with llmgate's HNSW index
// and, for comparison, with the exact flat scan. The router is set up as
// route_eval validated it (examples/route_eval/settings.hpp): 8 neighbours
// counting from similarity 0.5, so the HNSW search is 8 wide; character
// trigrams only in the embedding; prior strength 16; no complexity lean.
// The per-model correctness predictors (route/correctness_predictor.hpp)
// are timed too, fitted on the same questions with seeded random outcomes
// for all 100 models: a decision is predict() and the trade-off at a cost
// weight (route_eval's "predictor" policy), with the fitting settings
// route_eval's tests use, since only the decision is timed.
// Each call is timed alone, on one thread after a warm-up pass, in the
// thread's CPU time (as the replay times lookups), so that other processes
// on a shared machine do not inflate it; wall-clock p50 and p99 are
// printed beside it.
#include <algorithm>    // std::sort, std::min
#include <chrono>       // std::chrono::steady_clock
#include <cmath>        // std::pow
#include <cstddef>      // std::size_t
#include <cstdio>       // std::printf
#include <cstdlib>      // std::strtoull
#include <cstring>      // std::strcmp
#include <ctime>        // clock_gettime, CLOCK_THREAD_CPUTIME_ID (POSIX)
#include <filesystem>   // std::filesystem::exists
#include <fstream>      // std::ifstream
#include <iostream>     // std::cout
#include <iterator>     // std::istreambuf_iterator
#include <random>       // std::mt19937_64
#include <string>       // std::string
#include <vector>       // std::vector

#include <boost/json.hpp>  // boost::json::parse

#include <llmgate/index/hnsw_index.hpp>
#include <llmgate/route/correctness_predictor.hpp>
#include <llmgate/route/router.hpp>
#include <llmgate/route/routing_target.hpp>  // best_trade_off

#include "../examples/route_eval/settings.hpp"  // route_eval::validated_settings
#include "bench_support.hpp"

namespace {

using namespace llmgate_bench;

constexpr std::size_t model_count = 100;
constexpr const char* task_types[] = {"coding", "math", "reasoning", "question_answering", "chat", "summarization"};
constexpr const char* domains[] = {"programming", "mathematics", "science", "medicine", "law", "general"};

llmgate::model_registry random_registry(std::mt19937_64& random) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<llmgate::model_card> cards(model_count);
  for (std::size_t m = 0; m < model_count; ++m) {
    auto& c = cards[m];
    c.name = "model-" + std::to_string(m);
    c.accuracy = 0.4 + 0.5 * unit(random);
    for (std::size_t t = 0; t < 4; ++t) c.task_accuracy[task_types[(m + t) % 6]] = 0.3 + 0.7 * unit(random);
    c.latency_ms = 100 * std::pow(100.0, unit(random));
    c.input_cost_per_million = 0.05 * std::pow(1000.0, unit(random));
    c.output_cost_per_million = 4 * *c.input_cost_per_million;
    c.helpfulness = 5 + 5 * unit(random);
    c.harmlessness = 5 + 5 * unit(random);
    c.honesty = 5 + 5 * unit(random);
    if (m % 4 == 1) c.task_types = {task_types[m % 6], task_types[(m + 1) % 6]};
    if (m % 5 == 2) c.domains = {domains[m % 6], domains[(m + 3) % 6]};
    c.generalist = m % 10 == 0;
  }
  return llmgate::model_registry(std::move(cards));
}

// dcrouter's questions, else seeded sentences of a small vocabulary.
std::vector<std::string> questions(std::size_t wanted) {
  std::vector<std::string> texts;
  const std::string path = std::string(LLMGATE_SHARED_DATA_DIR) + "/routing/dcrouter/train.json";
  if (std::filesystem::exists(path)) {
    std::ifstream in(path);
    const auto document = boost::json::parse(std::string(std::istreambuf_iterator<char>(in), {}));
    for (const auto& entry : document.as_array()) {
      if (texts.size() == wanted) break;
      texts.emplace_back(entry.at("question").as_string());
    }
    progress("route_latency: %zu questions from %s", texts.size(), path.c_str());
    return texts;
  }
  progress("route_latency: %s absent; synthetic questions", path.c_str());
  const char* words[] = {"how", "do", "I", "write", "a", "function", "that", "sorts", "the", "list", "what",
                         "is", "capital", "of", "France", "explain", "why", "sky", "blue", "solve", "equation",
                         "for", "x", "patient", "dose", "contract", "law", "invest", "stock", "poem"};
  std::mt19937_64 random(7);
  while (texts.size() < wanted) {
    std::string text;
    for (std::size_t w = 0, n = 6 + random() % 20; w < n; ++w) text.append(text.empty() ? "" : " ").append(words[random() % 30]);
    texts.push_back(text + "?");
  }
  return texts;
}

std::vector<llmgate::labelled_example> labelled(const std::vector<std::string>& texts, std::mt19937_64& random) {
  std::vector<llmgate::labelled_example> examples;
  for (const auto& text : texts) {
    llmgate::labelled_example e{text, {}, {}, {}, {}};
    for (std::size_t k = 0; k < 20; ++k)
      e.outcomes.emplace_back("model-" + std::to_string(random() % model_count), static_cast<float>(random() % 2));
    examples.push_back(std::move(e));
  }
  return examples;
}

struct timing {
  double p50_us, p99_us, max_us;        // thread CPU time
  double wall_p50_us, wall_p99_us;      // steady_clock
};

double thread_cpu_us() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) * 1e6 + static_cast<double>(now.tv_nsec) / 1e3;
}

double percentile(std::vector<double>& sorted, double q) {
  return sorted[std::min(sorted.size() - 1, static_cast<std::size_t>(q * static_cast<double>(sorted.size())))];
}

// `decide(request)` gives a model index; each call timed alone.
template <class Decide>
timing time_decisions(const Decide& decide, const std::vector<std::string>& requests) {
  std::size_t sink = 0;
  for (const auto& r : requests) sink += decide(r);  // warm-up
  std::vector<double> cpu, wall;
  for (const auto& r : requests) {
    const auto start = steady::now();
    const double cpu_start = thread_cpu_us();
    sink += decide(r);
    cpu.push_back(thread_cpu_us() - cpu_start);
    wall.push_back(seconds_since(start) * 1e6);
  }
  if (sink == 0) progress("route_latency: every request chose model 0");
  std::sort(cpu.begin(), cpu.end());
  std::sort(wall.begin(), wall.end());
  return {percentile(cpu, 0.50), percentile(cpu, 0.99), cpu.back(), percentile(wall, 0.50), percentile(wall, 0.99)};
}

template <class Router>
timing time_routes(const Router& router, const std::vector<std::string>& requests) {
  const auto wanted = llmgate::preferences::profile("balanced");
  return time_decisions([&](const std::string& r) { return router.route(r, wanted).model_index; }, requests);
}

// Every learned question with a seeded random outcome for every model.
std::vector<llmgate::routing_outcome> outcomes(const std::vector<std::string>& texts, const llmgate::model_registry& registry,
                                               std::mt19937_64& random) {
  std::vector<llmgate::routing_outcome> all;
  for (const auto& text : texts) {
    llmgate::routing_outcome o{text, {}, {}, {}, {}};
    for (std::size_t m = 0; m < registry.size(); ++m) {
      o.score.push_back(static_cast<float>(random() % 2));
      o.cost.push_back(*registry.card(m).blended_price() / 1e6);
    }
    all.push_back(std::move(o));
  }
  return all;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t request_count = 2000, example_count = 2000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--requests") == 0) request_count = std::strtoull(argv[i + 1], nullptr, 10);
    if (std::strcmp(argv[i], "--examples") == 0) example_count = std::strtoull(argv[i + 1], nullptr, 10);
  }
  if (request_count == 0 || example_count == 0 || argc % 2 == 0) {
    std::fprintf(stderr, "usage: llmgate_bench_route_latency [--requests N] [--examples E]\n");
    return 2;
  }

  const auto settings = route_eval::validated_settings();
  std::mt19937_64 random(42);
  const auto registry = random_registry(random);
  const auto texts = questions(example_count + request_count);
  const std::vector<std::string> learned(texts.begin(), texts.begin() + std::min(example_count, texts.size()));
  std::vector<std::string> requests(texts.begin() + static_cast<std::ptrdiff_t>(learned.size()), texts.end());
  if (requests.empty()) requests = learned;
  const auto examples = labelled(learned, random);

  table results({"analyser_index", "models", "examples", "requests", "p50_us", "p99_us", "max_us", "wall_p50_us",
                 "wall_p99_us"});
  std::vector<json_line> lines;
  const auto report = [&](const char* index, const timing& t) {
    results.add_row({index, std::to_string(model_count), std::to_string(examples.size()), std::to_string(requests.size()),
                     number(t.p50_us), number(t.p99_us), number(t.max_us), number(t.wall_p50_us),
                     number(t.wall_p99_us)});
    lines.push_back(json_line()
                        .add("bench", "route_latency")
                        .add("models", model_count)
                        .add("p99_us", t.p99_us)
                        .add("p50_us", t.p50_us)
                        .add("wall_p99_us", t.wall_p99_us)
                        .add("analyser_index", index)
                        .add("examples", examples.size()));
  };

  {
    progress("route_latency: learning %zu examples (HNSW)", examples.size());
    llmgate::basic_local_analyser<llmgate::hashing_embedder, llmgate::hnsw_index<>> analyser(
        settings.analyser, llmgate::hashing_embedder(settings.embedder));
    analyser.learn(examples);
    const llmgate::basic_router<decltype(analyser)> router(registry, std::move(analyser), {}, {}, settings.router);
    report("hnsw", time_routes(router, requests));
  }
  {
    progress("route_latency: learning %zu examples (flat)", examples.size());
    llmgate::local_analyser analyser(settings.analyser, llmgate::hashing_embedder(settings.embedder));
    analyser.learn(examples);
    const llmgate::router router(registry, std::move(analyser), {}, {}, settings.router);
    report("flat", time_routes(router, requests));
  }

  {
    progress("route_latency: fitting correctness predictors for %zu models on %zu questions", model_count, learned.size());
    llmgate::correctness_predictor_options options;
    options.l2_grid = {0.1};
    options.fitting.passes = 5;
    std::vector<std::string> names;
    for (std::size_t m = 0; m < model_count; ++m) names.push_back(std::string(registry.card(m).name));
    const auto fit = llmgate::correctness_predictor::fit(names, outcomes(learned, registry, random), options);
    std::vector<double> price(model_count);
    for (std::size_t m = 0; m < model_count; ++m) price[m] = *registry.card(m).blended_price() / 1e6;
    report("predictor", time_decisions(
                            [&](const std::string& r) {
                              return llmgate::best_trade_off(fit.predictor.predict(r, ""), price, 100.0);
                            },
                            requests));
  }

  results.print(std::cout);
  std::cout << "target: p99 <= 50 us for 100 models (HNSW analyser; the predictor's decision)\n";
  publish("route_latency", results, lines);
  return 0;
}
