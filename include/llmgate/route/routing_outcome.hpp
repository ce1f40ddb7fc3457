// routing_outcome: one request whose result on every model is known: the
// labelled data the router learns from (RouterBench's CSVs, the dcrouter
// JSON, or the gateway's own feedback), models in one list's order.
#pragma once

#include <string>  // std::string
#include <vector>  // std::vector

namespace llmgate::inline v0 {

struct routing_outcome {
  std::string text;
  std::string task;                 ///< the request's task label; empty where none is given
  std::vector<float> score;         ///< per model, 0 wrong .. 1 right
  std::vector<double> cost;         ///< per model, USD
  std::vector<std::string> answer;  ///< per model, the answer it gave; empty where not recorded
};

}  // namespace llmgate::inline v0
