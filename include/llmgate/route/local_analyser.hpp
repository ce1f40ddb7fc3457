// local_analyser: a TaskAnalyser that needs no model call. It reads the
// text's own features (text_features.hpp), then looks up the labelled
// examples most similar to the request, embedded with the cache's embedder
// and found with a vector index, and lets them vote:
//   - task type and domain: the neighbours' label when it holds at least
//     `label_share` of their weight, else the text rules';
//   - complexity: the text rules' estimate, averaged with the neighbours'
//     labelled complexities (the estimate counting as one neighbour);
//   - evidence: how each model scored on the neighbours, for examples that
//     record outcomes (a router learns per-request accuracy from them).
// A neighbour weighs (similarity - min_similarity) / (1 - min_similarity),
// so that examples barely related to the request say nothing.
//
// A request longer than 2 * edge_words words is read (text rules, which
// still see its full length) and embedded by its first and last edge_words
// words: the instruction and, often, the question itself, at a bounded
// cost. An approximate index (HNSW) searches with breadth search_breadth,
// narrower than the index's own default, since only close neighbours count
// (see min_similarity) and those are what a narrow search finds first:
// on dcrouter's questions a narrow search found the weight an exact scan
// would at min_similarity 0.5 in a fraction of its time (the commit message
// that set the breadth has the figures; scripts/bench routing times it).
//
// With a LearningEmbedder (the hashing embedder), learn() first counts the
// new examples' words and refreshes the embedder's weights, then re-embeds
// every example, so words common to all examples (a shared few-shot
// preamble, "Write a function") weigh little.
//
// Thread safety: analyse() may run on many threads at once; learn() must
// not run while anything else does.
#pragma once

#include <algorithm>    // std::max
#include <concepts>     // std::constructible_from
#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint32_t
#include <deque>        // std::deque (model names whose addresses stay put)
#include <optional>     // std::optional
#include <span>         // std::span
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::move, std::pair
#include <vector>       // std::vector

#include <boost/unordered/unordered_flat_map.hpp>  // model name -> id

#include "llmgate/embed/embedder.hpp"
#include "llmgate/embed/hashing_embedder.hpp"
#include "llmgate/error.hpp"
#include "llmgate/index/flat_index.hpp"
#include "llmgate/index/metric.hpp"
#include "llmgate/index/vector_index.hpp"
#include "llmgate/route/task_analyser.hpp"
#include "llmgate/route/text_features.hpp"

namespace llmgate::inline v0 {

/// A request whose task is known, and optionally how models did on it.
struct labelled_example {
  std::string text;
  std::string task_type;  ///< empty: read off the text
  std::string domain;     ///< empty: read off the text
  std::optional<float> complexity;
  std::vector<std::pair<std::string, float>> outcomes;  ///< model name, its score 0..1 on this request
};

struct local_analyser_options {
  std::size_t neighbours = 16;   ///< labelled examples consulted per request
  float min_similarity = 0.2f;   ///< a neighbour less similar than this counts for nothing
  float label_share = 0.5f;      ///< share of the neighbours' weight a label needs to be taken
  std::size_t edge_words = 32;   ///< a longer request is read by its first and last this many words
  std::size_t search_breadth = 32;  ///< an approximate index's search breadth (HNSW ef, at least `neighbours`); exact ones ignore it
};

template <Embedder E = hashing_embedder, VectorIndex I = flat_index<cosine_metric>>
  requires std::constructible_from<I, std::size_t>
class basic_local_analyser {
 public:
  using embedder_type = E;
  using index_type = I;

  explicit basic_local_analyser(local_analyser_options options = {}, E embedder = E{})
      : options_(options), embedder_(std::move(embedder)), index_(embedder_.dimension()) {}

  /// Adds labelled examples (see the top of this file for what a learning
  /// embedder does first). Throws llmgate::error if the embedder fails.
  void learn(std::span<const labelled_example> examples) {
    if constexpr (LearningEmbedder<E>) {
      for (const auto& e : examples) embedder_.observe(pruned(e.text));
      embedder_.refresh();
      for (std::size_t id = 0; id < examples_.size(); ++id) {
        index_.remove(id);
        add_to_index(id, examples_[id].text);
      }
    }
    for (const auto& e : examples) {
      const auto read = read_request_features(e.text, options_.edge_words);
      stored_example s{e.text, e.task_type.empty() ? std::string(read.task_type) : e.task_type,
                       e.domain.empty() ? std::string(read.domain) : e.domain, e.complexity, {}};
      for (const auto& [model, score] : e.outcomes) s.outcomes.emplace_back(model_id(model), score);
      examples_.push_back(std::move(s));
      add_to_index(examples_.size() - 1, e.text);
    }
  }

  task_profile analyse(std::string_view text) const {
    auto& scratch = thread_scratch();
    const auto words = prune_request_into(text, options_.edge_words, 0, scratch.pruned);
    const auto read = read_text_features(scratch.pruned, words);  // as read_request_features does
    task_profile task{std::string(read.task_type), std::string(read.domain), read.complexity, {}, {}};
    if (examples_.empty()) return task;

    scratch.query.resize(embedder_.dimension());
    if (embedder_.embed(scratch.pruned, scratch.query)) return task;  // no vector: the text rules stand

    scratch.votes.clear();
    scratch.weight_of_model.assign(model_names_.size(), 0.0f);
    scratch.score_of_model.assign(model_names_.size(), 0.0f);
    float total = 0, complexity_sum = task.complexity, complexity_weight = 1;
    for (const auto& hit : neighbours(scratch.query)) {
      const float w = (hit.similarity - options_.min_similarity) / (1.0f - options_.min_similarity);
      if (!(w > 0)) continue;
      const auto& e = examples_[hit.id];
      total += w;
      vote(scratch.votes, e.task_type, 0, w);
      vote(scratch.votes, e.domain, 1, w);
      if (e.complexity) {
        complexity_sum += w * *e.complexity;
        complexity_weight += w;
      }
      for (const auto& [model, score] : e.outcomes) {
        scratch.weight_of_model[model] += w;
        scratch.score_of_model[model] += w * score;
      }
    }
    if (total == 0) return task;

    for (const int kind : {0, 1}) {
      const ballot* winner = nullptr;
      for (const auto& b : scratch.votes)
        if (b.kind == kind && (!winner || b.weight > winner->weight)) winner = &b;
      if (winner && winner->weight >= options_.label_share * total)
        (kind == 0 ? task.task_type : task.domain) = winner->label;
    }
    task.complexity = complexity_sum / complexity_weight;
    for (std::size_t m = 0; m < model_names_.size(); ++m)
      if (scratch.weight_of_model[m] > 0)
        task.evidence.push_back({model_names_[m], scratch.weight_of_model[m],
                                 scratch.score_of_model[m] / scratch.weight_of_model[m]});
    return task;
  }

  std::size_t size() const noexcept { return examples_.size(); }
  const E& embedder() const noexcept { return embedder_; }
  const local_analyser_options& options() const noexcept { return options_; }

 private:
  struct stored_example {
    std::string text;
    std::string task_type;
    std::string domain;
    std::optional<float> complexity;
    std::vector<std::pair<std::uint32_t, float>> outcomes;  // model id, score
  };

  struct ballot {
    std::string_view label;
    int kind;  // 0 task type, 1 domain
    float weight;
  };

  // Per-thread working memory of analyse(), reused between calls.
  struct scratch_space {
    std::string pruned;
    std::vector<float> query;
    std::vector<ballot> votes;
    std::vector<float> weight_of_model;
    std::vector<float> score_of_model;
  };

  static scratch_space& thread_scratch() {
    thread_local scratch_space scratch;
    return scratch;
  }

  static void vote(std::vector<ballot>& votes, std::string_view label, int kind, float weight) {
    for (auto& b : votes)
      if (b.kind == kind && b.label == label) {
        b.weight += weight;
        return;
      }
    votes.push_back({label, kind, weight});
  }

  // What is embedded of a request: its edges when it is long, which bounds
  // the time an embedding takes.
  std::string pruned(std::string_view text) const { return prune_request(text, options_.edge_words, 0); }

  // The labelled examples nearest to `query`; an index that takes a search
  // breadth gets search_breadth (at least `neighbours`).
  std::vector<search_hit> neighbours(std::span<const float> query) const {
    if constexpr (requires { index_.search(query, options_.neighbours, options_.search_breadth); })
      return index_.search(query, options_.neighbours, std::max(options_.search_breadth, options_.neighbours));
    else
      return index_.search(query, options_.neighbours);
  }

  void add_to_index(std::size_t id, std::string_view text) {
    std::vector<float> v(embedder_.dimension());
    if (const auto ec = embedder_.embed(pruned(text), v)) throw error(ec, "local_analyser: embedding a labelled example");
    if (const auto ec = index_.add(id, v)) throw error(ec, "local_analyser: indexing a labelled example");
  }

  std::uint32_t model_id(const std::string& name) {
    const auto [at, added] = model_ids_.try_emplace(name, static_cast<std::uint32_t>(model_names_.size()));
    if (added) model_names_.push_back(name);
    return at->second;
  }

  local_analyser_options options_;
  E embedder_;
  I index_;
  std::vector<stored_example> examples_;          // by vector id
  std::deque<std::string> model_names_;           // by model id; evidence points into it
  boost::unordered_flat_map<std::string, std::uint32_t> model_ids_;
};

using local_analyser = basic_local_analyser<>;

static_assert(TaskAnalyser<local_analyser>);

}  // namespace llmgate::inline v0
