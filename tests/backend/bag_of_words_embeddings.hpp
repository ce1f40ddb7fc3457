// bag_of_words_embeddings: an /embeddings handler for upstream_server that
// computes deterministic vectors: each lower-cased word (letters and digits)
// adds 1 at a position its FNV-1a hash picks. Texts that share most words
// land close (cosine), so a rephrasing can hit a semantic cache through
// embeddings "the model server" computed. Vectors are not normalised: the
// embedder must do that.
#pragma once

#include <cctype>       // std::isalnum, std::tolower
#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint64_t
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <vector>       // std::vector

#include <boost/json/array.hpp>   // json::array
#include <boost/json/object.hpp>  // json::object

#include "upstream_server.hpp"  // received_request, reply

namespace llmgate::test {

inline std::vector<double> bag_of_words(std::string_view text, std::size_t dimension) {
  std::vector<double> vector(dimension);
  std::string word;
  const auto add = [&] {
    if (word.empty()) return;
    std::uint64_t hash = 14695981039346656037ull;
    for (const char c : word) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    vector[hash % dimension] += 1;
    word.clear();
  };
  for (const char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c))) word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else add();
  }
  add();
  return vector;
}

/// OpenAI's embeddings answer for `request`, one bag of words per input.
inline reply bag_of_words_embeddings(const received_request& request, std::size_t dimension) {
  const auto body = request.json();
  const auto& input = body.at("input").as_array();
  boost::json::array data;
  for (std::size_t i = 0; i < input.size(); ++i) {
    boost::json::array vector;
    for (const double x : bag_of_words(input[i].as_string(), dimension)) vector.push_back(x);
    data.push_back(boost::json::object{{"object", "embedding"}, {"index", i}, {"embedding", std::move(vector)}});
  }
  return reply::json(boost::json::object{{"object", "list"}, {"model", body.at("model")}, {"data", std::move(data)},
                                         {"usage", {{"prompt_tokens", input.size()}, {"total_tokens", input.size()}}}});
}

}  // namespace llmgate::test
