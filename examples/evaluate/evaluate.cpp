// evaluate: llmgate's evaluation kit as a program. It sends a product's own
// prompts to candidate models, scores their answers against a reference
// model's, asks LLM judges, costs each candidate, and writes a report.
//
//   evaluate --config FILE [--out DIR]            run (or resume) the evaluation, then report
//   evaluate --config FILE --rate --raters a,b    serve the blind rating page until Ctrl-C
//   evaluate --config FILE --export-ratings R --csv FILE / --import-ratings FILE
//
// Everything the run learns is in DIR/run.sqlite (the run store): a run
// stopped or killed at any point and started again resumes where it
// stopped, never sending a recorded request again. The evaluation file's
// form is described in include/llmgate/eval/evaluation_file.hpp;
// examples/evaluate/daily_briefing.json is one.
//
// Prints one JSON line per candidate ({"bench":"evaluation",...}) and, on
// the last line alone, the HTML report's absolute path. Progress on stderr.
//
// Exit status: 0 done; 1 the evaluation file is invalid or the run failed;
// 2 a usage error.
#include <csignal>     // std::signal, SIGINT, SIGTERM
#include <cstdio>      // std::printf, std::fprintf
#include <exception>   // std::exception
#include <filesystem>  // std::filesystem
#include <map>         // std::map
#include <memory>      // std::unique_ptr, std::make_shared
#include <string>      // std::string
#include <vector>      // std::vector

#include <CLI/CLI.hpp>  // command line (Debian libcli11-dev)

#include <boost/asio/co_spawn.hpp>    // net::co_spawn
#include <boost/asio/io_context.hpp>  // net::io_context
#include <boost/asio/use_future.hpp>  // net::use_future

#include <llmgate/embed/hashing_embedder.hpp>  // hashing_embedder: the built-in embedding method
#include <llmgate/eval.hpp>                    // the evaluation kit
#include <llmgate/server/backend_registry.hpp> // backend_registry: a backend of every configured kind

#include "local_engine.hpp"  // local_engine: GGUF candidates served by node-llama-cpp

namespace {

namespace fs = std::filesystem;
namespace net = boost::asio;
constexpr int done = 0, failed = 1, usage = 2;

// Runs `work` on `context` to its end and returns its result.
template <class T>
T run_to_end(net::io_context& context, net::awaitable<T> work) {
  auto future = net::co_spawn(context, std::move(work), net::use_future);
  context.restart();
  context.run();
  return future.get();
}

// The candidates' backends, by candidate name: a configured backend, or an
// OpenAI-compatible one on the engine serving the candidate's GGUF file.
struct candidate_backends {
  std::map<fs::path, std::unique_ptr<local_engine>> engines;  // one per GGUF file, shared by its candidates
  std::map<std::string, llmgate::any_backend, std::less<>> backends;
};

candidate_backends make_backends(const llmgate::evaluation_plan& plan, net::io_context& context, const fs::path& out,
                                 const fs::path& engine_script, const fs::path& node_dir) {
  candidate_backends made;
  llmgate::http_client_options options;
  options.first_byte_timeout = std::chrono::milliseconds(plan.request_timeout_ms);
  auto client = std::make_shared<llmgate::http_client>(context.get_executor(), options);
  const auto registry = llmgate::backend_registry::builtin();
  const auto prices = std::make_shared<const llmgate::price_table>();
  for (const auto& candidate : plan.candidates) {
    llmgate::backend_config config;
    if (candidate.gguf.empty()) {
      config = *std::find_if(plan.backends.begin(), plan.backends.end(),
                             [&](const auto& b) { return b.name == candidate.backend; });
    } else {
      auto& engine = made.engines[candidate.gguf];
      if (!engine) engine = std::make_unique<local_engine>(engine_script, node_dir, candidate.gguf,
                                                           out / (candidate.gguf.stem().string() + ".engine.log"));
      config = {.name = candidate.name, .kind = "openai", .base_url = engine->base_url(), .retries = 0};
    }
    const std::string model = candidate.model.empty() ? config.model : candidate.model;
    made.backends.emplace(candidate.name, registry.make(config, {.executor = context.get_executor(), .client = client,
                                                                 .prices = prices, .model = model}));
  }
  return made;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"llmgate evaluate: compare candidate models on your own prompts for quality, latency and cost"};
  app.footer("Exit status: 0 done; 1 invalid evaluation file or a failed run; 2 usage error.");
  std::string config_path;
  std::string out = "build/evaluate";
  std::string engine_script = LLMGATE_ENGINE_SCRIPT;
  std::string node_dir = LLMGATE_NODE_DIR;
  bool no_report = false;
  app.add_option("-c,--config", config_path, "the evaluation file (JSON)")->required()->check(CLI::ExistingFile);
  app.add_option("-o,--out", out, "where the run store, the report and the result files go")->capture_default_str();
  app.add_option("--engine-script", engine_script, "the llama.cpp engine serving GGUF candidates")->capture_default_str();
  app.add_option("--node-dir", node_dir, "the folder holding node_modules with node-llama-cpp")->capture_default_str();
  app.add_flag("--no-report", no_report, "run and score, but write no report");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? done : usage;
  }

  try {
    const auto file = llmgate::evaluation_file::load(config_path);
    const auto& plan = file.plan;
    fs::create_directories(out);
    llmgate::run_store store(fs::path(out) / "run.sqlite");
    store.bind_plan(file.fingerprint);

    net::io_context context;
    auto made = make_backends(plan, context, out, engine_script, node_dir);
    (void)no_report;
    (void)made;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "evaluate: %s\n", e.what());
    return failed;
  }
  return done;
}
