// evaluation_plan: what an evaluation compares, read from its JSON file
// (evaluation_file.hpp): the candidates and the reference among them, the
// prompts, how often each is sent, how the answers are scored and judged,
// what each candidate costs, and a latency schedule.
#pragma once

#include <cstdint>     // std::uint64_t
#include <filesystem>  // std::filesystem::path
#include <map>         // std::map
#include <string>      // std::string
#include <vector>      // std::vector

#include <boost/json/object.hpp>  // boost::json::object

#include "llmgate/backend/backend_config.hpp"  // backend_config
#include "llmgate/chat/chat.hpp"                 // chat_message

namespace llmgate::inline v0 {

/// What a candidate costs. An API model: a price per 1K input and output
/// tokens. A self-hosted one: an instance's price per hour, spread over the
/// tokens it processes per second as measured in the run, at `utilization`.
struct evaluation_price {
  double input_per_1k = 0;      ///< USD per 1K input tokens (API)
  double output_per_1k = 0;     ///< USD per 1K output tokens (API)
  double instance_per_hour = 0; ///< USD per hour (self-hosted); > 0 makes the candidate self-hosted
  double utilization = 0.8;     ///< the share of the hour the instance is busy

  bool self_hosted() const noexcept { return instance_per_hour > 0; }
};

/// One model under evaluation: a configured backend (and model), or a GGUF
/// file the kit serves itself with the local llama.cpp engine.
struct evaluation_candidate {
  std::string name;                 ///< unique; what the report calls it
  std::string backend = {};         ///< a name from evaluation_plan::backends; empty when gguf is set
  std::string model = {};           ///< sent upstream; empty: the backend's
  std::filesystem::path gguf = {};  ///< non-empty: served by the kit for the run, stopped at its end
  boost::json::object sampling = {};  ///< temperature, top_p, max_tokens, seed...: over the plan's
  evaluation_price price = {};
};

/// Messages with {{variable}} placeholders.
struct prompt_template {
  std::string name;
  std::vector<chat_message> messages;
};

/// One prompt of the set: a template and the values of its variables.
struct evaluation_prompt {
  std::string template_name;
  std::map<std::string, std::string> variables;
};

/// `requests` requests to every candidate every `every_seconds`, for
/// `duration_seconds` (10 an hour for 24 h: 10, 3600, 86400). Off when requests is 0.
struct latency_schedule {
  std::uint64_t requests = 0;
  double every_seconds = 3600;
  double duration_seconds = 0;

  bool enabled() const noexcept { return requests > 0 && duration_seconds > 0; }
};

/// The LLM judges (judge.hpp): scorer (0-10 with reasoning), comparer against
/// the reference with and without reasoning, multiple choice over anonymised,
/// shuffled answers.
enum class judge_kind { scorer, comparer, comparer_reasoning, choice };

struct judge_config {
  judge_kind kind = judge_kind::scorer;
  std::string candidate;             ///< the candidate whose model judges (it may also be evaluated)
  std::string template_text = {};    ///< empty: the kit's default template for the kind
  boost::json::object sampling = {};
  std::uint64_t max_answers = 0;     ///< > 0: judges only each candidate's first answers (choice: groups), in the run's order
};

/// An embedder whose cosine between an answer and the reference is a scoring
/// method of its own: the built-in hashing embedder (candidate empty), or the
/// /v1/embeddings of a candidate's backend.
struct evaluation_embedder {
  std::string name;               ///< the method is "embedding:<name>"
  std::string candidate = {};     ///< empty: the built-in hashing embedder
  std::string model = {};         ///< the embedding model to ask for; empty: the candidate's
};

struct evaluation_plan {
  std::vector<backend_config> backends;        ///< as in the gateway's config
  std::vector<evaluation_candidate> candidates;
  std::string reference;                       ///< a candidate's name: its answers are the reference
  std::vector<prompt_template> templates;
  std::vector<evaluation_prompt> prompts;
  std::uint64_t repetitions = 1;               ///< per prompt and candidate
  std::uint64_t warmup = 0;                    ///< requests per candidate before the run, not recorded as results
  std::uint64_t concurrency = 4;               ///< requests in flight at once, over all candidates
  std::uint64_t request_timeout_ms = 120'000;
  boost::json::object sampling = {};           ///< every candidate's, under its own
  std::vector<std::string> scorers = {"tfidf", "bleu", "embedding", "sem_bleu"};
  std::vector<evaluation_embedder> embedders = {{.name = "hashing"}};
  std::vector<judge_config> judges;
  std::uint64_t agreement_bottom_k = 2;        ///< k of the bottom-k Jaccard index against the human ranking
  latency_schedule schedule = {};

  const evaluation_candidate* find_candidate(std::string_view name) const {
    for (const auto& c : candidates)
      if (c.name == name) return &c;
    return nullptr;
  }
};

}  // namespace llmgate::inline v0
