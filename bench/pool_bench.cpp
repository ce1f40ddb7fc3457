// pool_bench: one model served by several real engine replicas behind a
// backend_pool, each balancing policy in turn on the same prompts at the
// same fixed request rate. The replicas are node-llama-cpp engines
// (scripts/llama_engine.mjs: llama.cpp on one thread, 4 slots that keep
// the tokens they last evaluated and a request taking the slot that shares
// the longest prefix with it, as llama-server does) serving
// ../shared/data's stories260K; the prompts are the prompt bench's use
// cases (bench/prompt/: code_generation, personalization, trip_plan),
// each schema registered --schemas times under its own name with its own
// first sentence (as many products or tenants would each have theirs),
// drawn with a fixed seed and compiled by llmgate's PML compiler, so that
// their prefix paths name what a replica can reuse. Each policy gets fresh
// engines, so that none inherits another's slots.
//
// Per policy: reused_token_fraction (the engines' own count of prompt
// tokens they did not compute, usage.prompt_tokens_details.cached_tokens,
// over all prompt tokens), TTFT p50/p99 (from the request's scheduled send
// time to its first content chunk, so a request waiting behind others
// counts its wait), max_over_mean_load (the busiest replica's requests
// over the mean), and errors; then each policy's ratios to round_robin's.
//
//   llmgate_bench_pool [--replicas 3] [--schemas 4] [--requests 240] [--rate 8] [--seed 5]
//       [--policies round_robin,least_busy,latency,prefix] [--max-tokens 4] [--context 8192]
//       [--adapter openai|llama.cpp]
#include <algorithm>    // std::sort, std::max_element
#include <chrono>       // std::chrono::steady_clock
#include <cstdio>       // std::printf
#include <cstdlib>      // std::atoi, std::atof
#include <filesystem>   // std::filesystem::path
#include <fstream>      // std::ifstream
#include <memory>       // std::make_shared, std::unique_ptr
#include <optional>     // std::optional: a ratio to a baseline that did not run
#include <random>       // std::mt19937_64
#include <sstream>      // std::stringstream
#include <stdexcept>    // std::runtime_error
#include <string>       // std::string
#include <vector>       // std::vector

#include <boost/asio/co_spawn.hpp>     // net::co_spawn
#include <boost/asio/detached.hpp>     // net::detached
#include <boost/asio/io_context.hpp>   // net::io_context
#include <boost/asio/steady_timer.hpp> // the request schedule
#include <boost/asio/use_awaitable.hpp>

#include "../examples/evaluate/local_engine.hpp"     // local_engine: an engine process on a loopback port
#include "llmgate/backend/any_backend.hpp"           // any_backend
#include "llmgate/backend/blocking.hpp"              // run_blocking
#include "llmgate/backend/llama_cpp_backend.hpp"     // each replica's adapter, or
#include "llmgate/backend/openai_backend.hpp"        // each replica's adapter
#include "llmgate/backend/pool/backend_pool.hpp"     // backend_pool
#include "llmgate/backend/pool/pool_config.hpp"      // configured_balancing, balancing_config
#include "llmgate/prompt/compiler.hpp"               // compile_prompt
#include "llmgate/prompt/pml_parser.hpp"             // parse_schema
#include "llmgate/prompt/schema_registry.hpp"        // schema_registry
#include "llmgate/prompt/tokenizer.hpp"              // estimated_tokenizer
#include "bench_support.hpp"
#include "prompt_use_cases.hpp"                      // use_cases

namespace {

namespace fs = std::filesystem;
namespace net = boost::asio;
using llmgate_bench::progress;
using steady = std::chrono::steady_clock;

struct options {
  int replicas = 3;
  int schemas = 4;  // copies of each use case's schema
  int requests = 240;
  double rate = 8;  // requests per second, over the whole pool
  unsigned seed = 5;
  int max_tokens = 4;
  int context = 8192;  // each engine slot's tokens: code_generation's prompts need several thousand
  // "openai": plain requests, the engine picks the slot; "llama.cpp": each
  // replica through llama_cpp_backend, which gives each prefix its slot
  // (id_slot), as a gateway configured with llama.cpp replicas does.
  std::string adapter = "openai";
  std::vector<std::string> policies = {"round_robin", "least_busy", "latency", "prefix"};
};

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--replicas") o.replicas = std::atoi(value.c_str());
    else if (flag == "--schemas") o.schemas = std::atoi(value.c_str());
    else if (flag == "--requests") o.requests = std::atoi(value.c_str());
    else if (flag == "--rate") o.rate = std::atof(value.c_str());
    else if (flag == "--seed") o.seed = static_cast<unsigned>(std::atoi(value.c_str()));
    else if (flag == "--max-tokens") o.max_tokens = std::atoi(value.c_str());
    else if (flag == "--context") o.context = std::atoi(value.c_str());
    else if (flag == "--adapter") {
      if (value != "openai" && value != "llama.cpp") throw std::runtime_error("--adapter is openai or llama.cpp, not " + value);
      o.adapter = value;
    }
    else if (flag == "--policies") {
      o.policies.clear();
      std::stringstream list(value);
      for (std::string name; std::getline(list, name, ',');) o.policies.push_back(name);
    } else {
      throw std::runtime_error("unknown option " + flag);
    }
  }
  return o;
}

// `text` with its first `from` replaced by `to`.
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  if (const auto at = text.find(from); at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// The prompts: a use case and one of its schema's copies drawn at random
// for each, compiled.
std::vector<llmgate::chat_request> draw_prompts(const options& o) {
  llmgate::schema_registry registry;
  for (const auto& use : llmgate_bench::use_cases) {
    const fs::path path = fs::path(LLMGATE_BENCH_PROMPT_DIR) / use.schema_file;
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    for (int copy = 0; copy < o.schemas; ++copy) {
      const std::string tag = std::to_string(copy);
      std::string schema = replaced(text.str(), "name=\"" + use.name + "\"", "name=\"" + use.name + "_" + tag + "\"");
      schema = replaced(std::move(schema), "<system>", "<system>This is deployment " + tag + ". ");
      // src= files are the project's headers: paths from the repository's root, two folders up.
      registry.add(llmgate::parse_schema(schema, path.parent_path() / ".." / ".."));
    }
  }
  llmgate::estimated_tokenizer estimate;
  std::mt19937_64 rng(o.seed);
  std::vector<llmgate::chat_request> prompts;
  for (int i = 0; i < o.requests; ++i) {
    const auto& use = llmgate_bench::use_cases[llmgate_bench::uniform(rng, llmgate_bench::use_cases.size())];
    const std::string copy = std::to_string(llmgate_bench::uniform(rng, static_cast<std::size_t>(o.schemas)));
    const std::string document = replaced(use.draw(rng), "schema=\"" + use.name + "\"",
                                          "schema=\"" + use.name + "_" + copy + "\"");
    auto request = llmgate::compile_prompt(registry, document, estimate);
    request.model = "stories260K";
    llmgate::set_field(request.parameters, "max_tokens", std::to_string(o.max_tokens));
    llmgate::set_field(request.parameters, "temperature", "0");
    prompts.push_back(std::move(request));
  }
  return prompts;
}

// The reuse no balancing can beat: each prompt's longest common prefix with
// any earlier one (as one engine with unbounded slots that had served them
// all would reuse), in bytes of its messages, over all prompts' bytes.
double reusable_prefix_fraction(const std::vector<llmgate::chat_request>& prompts) {
  std::vector<std::string> texts;
  for (const auto& request : prompts) {
    std::string text;
    for (const auto& message : request.messages) text += message.role + '\n' + message.content + '\n';
    texts.push_back(std::move(text));
  }
  std::size_t reusable = 0, total = 0;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    std::size_t longest = 0;
    for (std::size_t j = 0; j < i; ++j) {
      const auto differs = std::mismatch(texts[i].begin(), texts[i].end(), texts[j].begin(), texts[j].end()).first;
      longest = std::max(longest, static_cast<std::size_t>(differs - texts[i].begin()));
    }
    reusable += longest;
    total += texts[i].size();
  }
  return total ? static_cast<double>(reusable) / static_cast<double>(total) : 0;
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1, static_cast<std::size_t>(p * static_cast<double>(values.size())))];
}

struct policy_result {
  std::string policy;
  double reused_token_fraction = 0, ttft_p50_ms = 0, ttft_p99_ms = 0, max_over_mean_load = 0;
  int errors = 0;
  std::vector<std::uint64_t> per_replica;
};

using pool_type = llmgate::backend_pool<llmgate::any_backend, llmgate::configured_balancing>;

policy_result run_policy(const options& o, const std::string& policy, const std::vector<llmgate::chat_request>& prompts) {
  // Fresh engines: no slot holds anything yet.
  std::vector<std::unique_ptr<local_engine>> engines;
  for (int i = 0; i < o.replicas; ++i)
    engines.push_back(std::make_unique<local_engine>(
        LLMGATE_ENGINE_SCRIPT, LLMGATE_NODE_DIR, fs::path(LLMGATE_SHARED_DATA_DIR) / "models/stories260K/stories260K-ctx512.gguf",
        fs::temp_directory_path() / ("llmgate-pool-engine-" + std::to_string(i) + ".log"), std::to_string(o.context)));
  net::io_context io;
  auto client = std::make_shared<llmgate::http_client>(io.get_executor());
  std::vector<llmgate::any_backend> replicas;
  std::vector<llmgate::replica_spec> specs;
  for (int i = 0; i < o.replicas; ++i) {
    const std::string name = "engine#" + std::to_string(i);
    if (o.adapter == "openai")
      replicas.emplace_back(llmgate::openai_backend(client, {.name = name, .base_url = engines[i]->base_url()}));
    else  // the engine has llama-server's 4 slots and no slot-file endpoints
      replicas.emplace_back(llmgate::llama_cpp_backend(
          client, {.name = name, .base_url = engines[i]->base_url(), .slots = 4, .slot_files = false}));
    specs.push_back({.name = name});
  }
  llmgate::balancing_config balance;
  balance.policy = policy;
  auto state = std::make_shared<pool_type::shared_state>(std::move(specs), llmgate::configured_balancing(balance));
  pool_type pool("engines", std::move(replicas), state);

  // A warm connection to each engine, outside the pool's counts.
  for (int i = 0; i < o.replicas; ++i) {
    llmgate::openai_backend hello(client, {.name = "hello", .base_url = engines[i]->base_url()});
    llmgate::chat_request request{.model = "stories260K", .messages = {{"user", "Once upon a time"}}};
    llmgate::set_field(request.parameters, "max_tokens", "1");
    (void)llmgate::run_blocking(io, hello.complete(request));
  }

  std::vector<double> ttft_ms;
  std::uint64_t prompt_tokens = 0, reused_tokens = 0;
  int errors = 0, done = 0;
  const auto start = steady::now();
  const auto gap = std::chrono::duration_cast<steady::duration>(std::chrono::duration<double>(1.0 / o.rate));
  const auto send = [&](std::size_t i) -> net::awaitable<void> {
    const auto due = start + gap * static_cast<long>(i);
    net::steady_timer timer(io, due);
    co_await timer.async_wait(net::use_awaitable);
    bool first = true;
    llmgate::chunk_handler on_chunk = [&, due](const llmgate::chat_chunk& chunk) -> net::awaitable<void> {
      if (first && !chunk.content_delta.empty()) {
        first = false;
        ttft_ms.push_back(std::chrono::duration<double, std::milli>(steady::now() - due).count());
      }
      co_return;
    };
    try {
      const auto answer = co_await pool.stream(prompts[i], on_chunk);
      prompt_tokens += answer.usage.prompt_tokens;
      reused_tokens += answer.usage.cached_prompt_tokens;
    } catch (const std::exception& e) {
      if (errors++ == 0) progress("%s: first error: %s", policy.c_str(), e.what());
    }
    if (++done % 60 == 0) progress("%s: %d of %zu", policy.c_str(), done, prompts.size());
  };
  for (std::size_t i = 0; i < prompts.size(); ++i) net::co_spawn(io, send(i), net::detached);
  io.restart();  // run_blocking's run ended when the warm-up did
  io.run();

  policy_result result;
  result.policy = policy;
  result.reused_token_fraction = prompt_tokens ? static_cast<double>(reused_tokens) / static_cast<double>(prompt_tokens) : 0;
  result.ttft_p50_ms = percentile(ttft_ms, 0.50);
  result.ttft_p99_ms = percentile(ttft_ms, 0.99);
  result.errors = errors;
  std::uint64_t total = 0;
  for (const auto& r : state->reports()) result.per_replica.push_back(r.requests), total += r.requests;
  const double mean = static_cast<double>(total) / o.replicas;
  result.max_over_mean_load =
      mean > 0 ? static_cast<double>(*std::max_element(result.per_replica.begin(), result.per_replica.end())) / mean : 0;
  return result;
}

int run(int argc, char** argv) {
  const options o = parse(argc, argv);
  const auto prompts = draw_prompts(o);
  const double ceiling = reusable_prefix_fraction(prompts);
  progress("%zu prompts of %zu use cases x %d schemas, %d replicas (%s), %.1f requests/s; %.3f of their bytes are a prefix "
           "some earlier prompt shares (the reuse of one engine with unbounded slots)",
           prompts.size(), llmgate_bench::use_cases.size(), o.schemas, o.replicas, o.adapter.c_str(), o.rate, ceiling);
  std::vector<policy_result> results;
  for (const auto& policy : o.policies) results.push_back(run_policy(o, policy, prompts));

  llmgate_bench::table table({"policy", "reused_token_fraction", "ttft_p50_ms", "ttft_p99_ms", "max_over_mean_load",
                              "requests_per_replica", "errors", "reused_vs_rr", "ttft_p50_vs_rr"});
  std::vector<llmgate_bench::json_line> lines;
  lines.push_back(llmgate_bench::json_line()
                      .add("bench", "prefix_routing_ceiling")
                      .add("adapter", o.adapter)
                      .add("schemas", o.schemas)
                      .add("prompts", prompts.size())
                      .add("reusable_prefix_byte_fraction", ceiling));
  const policy_result* baseline = nullptr;
  for (const auto& r : results)
    if (r.policy == "round_robin") baseline = &r;
  for (const auto& r : results) {
    std::string spread;
    for (const auto n : r.per_replica) spread += (spread.empty() ? "" : "/") + std::to_string(n);
    std::optional<double> reused_ratio, ttft_ratio;
    if (baseline && baseline->reused_token_fraction > 0) reused_ratio = r.reused_token_fraction / baseline->reused_token_fraction;
    if (baseline && baseline->ttft_p50_ms > 0) ttft_ratio = r.ttft_p50_ms / baseline->ttft_p50_ms;
    table.add_row({r.policy, llmgate_bench::number(r.reused_token_fraction), llmgate_bench::number(r.ttft_p50_ms),
                   llmgate_bench::number(r.ttft_p99_ms), llmgate_bench::number(r.max_over_mean_load), spread,
                   std::to_string(r.errors), llmgate_bench::number(reused_ratio), llmgate_bench::number(ttft_ratio)});
    lines.push_back(llmgate_bench::json_line()
                        .add("bench", "prefix_routing")
                        .add("adapter", o.adapter)
                        .add("schemas", o.schemas)
                        .add("policy", r.policy)
                        .add("reused_token_fraction", r.reused_token_fraction)
                        .add("ttft_p50_ms", r.ttft_p50_ms)
                        .add("ttft_p99_ms", r.ttft_p99_ms)
                        .add("max_over_mean_load", r.max_over_mean_load)
                        .add("errors", r.errors)
                        .add("reused_vs_round_robin", reused_ratio)
                        .add("ttft_p50_vs_round_robin", ttft_ratio));
  }
  table.print(std::cout);
  llmgate_bench::publish("pool", table, lines);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "llmgate_bench_pool: %s\n", e.what());
    return 1;
  }
}
