// The TaskAnalyser concept: what a router needs to know about a request
// before it picks a model. Two models live beside it: the local analyser
// (text features and nearest labelled examples, no model call) and the LLM
// analyser (asks a model, falls back to a local analyser).
#pragma once

#include <concepts>     // std::same_as
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <vector>       // std::vector

#include "llmgate/version.hpp"

namespace llmgate::inline v0 {

/// How well one model did on the labelled requests most similar to this
/// one: `weight` is how much evidence there is (summed similarity of the
/// neighbours that recorded this model), `mean_score` what it scored on
/// them on average (0..1).
struct model_evidence {
  std::string_view model;  ///< the model's name, owned by the analyser
  float weight;
  float mean_score;
};

/// What a request asks for.
struct task_profile {
  std::string task_type;     ///< e.g. "coding", "math"; empty when unknown
  std::string domain;        ///< e.g. "programming", "medicine"; empty when unknown
  float complexity = 0.5f;   ///< 0 trivial .. 1 hardest
  std::vector<model_evidence> evidence;  ///< from analysers that know past outcomes; may be empty
  std::string fallback_reason;  ///< why the analyser fell back to another; empty when it did not
};

/// analyse(text) infers the task of a request. const, and safe to call
/// from many threads at once.
template <class A>
concept TaskAnalyser = requires(const A& analyser, std::string_view text) {
  { analyser.analyse(text) } -> std::same_as<task_profile>;
};

}  // namespace llmgate::inline v0
