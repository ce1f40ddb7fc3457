// Embedding requests and responses, with their OpenAI wire form
// (/v1/embeddings), which the gateway receives and the adapters speak.
#pragma once

#include <cstddef> // std::size_t
#include <string>  // std::string
#include <vector>  // std::vector

#include <boost/json/array.hpp>   // boost::json::array
#include <boost/json/object.hpp>  // boost::json::object
#include <boost/json/value.hpp>   // boost::json::value

#include "llmgate/chat/openai_wire.hpp"  // token_usage, parse_token_usage
#include "llmgate/chat/detail/json_fields.hpp"
#include "llmgate/error.hpp"

namespace llmgate::inline v0 {

/// How the HTTP embedders (http_embedder, async_http_embedder) ask an
/// embeddings endpoint for vectors.
struct http_embedder_options {
  std::string model;            ///< the embedding model to ask for
  std::size_t dimension = 0;    ///< the model's vector length; answers of another length are errors
  std::size_t max_batch = 64;   ///< texts per upstream request
  bool normalize = true;        ///< scale vectors to unit length
  std::string endpoint = {};    ///< how messages name the upstream (its URL)
};

struct embedding_request {
  std::string model;
  std::vector<std::string> input;  ///< one vector is returned per text, in order
  boost::json::object parameters;  ///< dimensions, user...: passed through
};

struct embedding_response {
  std::string model;
  std::vector<std::vector<float>> embeddings;  ///< one per input, in input order
  token_usage usage;                           ///< prompt_tokens only
  double cost_usd = 0;
  std::string backend;
};

/// Reads OpenAI's embeddings request. `input` is a string or an array of
/// strings (token-id arrays are not supported). encoding_format is dropped:
/// adapters always ask for floats. Throws llmgate::error
/// (errc::invalid_request) naming the field.
inline embedding_request parse_embedding_request(const boost::json::value& value) {
  constexpr auto code = errc::invalid_request;
  const auto& object = detail::as_object(value, "request", code);
  embedding_request request;
  request.model = detail::string_field(object, "model", "request", code);
  const auto* input = object.if_contains("input");
  if (input && input->is_string()) {
    request.input.emplace_back(input->get_string());
  } else if (input && input->is_array() && !input->get_array().empty()) {
    for (const auto& text : input->get_array()) {
      if (!text.is_string()) detail::fail(code, "request.input", "must hold strings only");
      request.input.emplace_back(text.get_string());
    }
  } else {
    detail::fail(code, "request.input", "must be a string or a non-empty array of strings");
  }
  for (const auto& field : object)
    if (field.key() != "model" && field.key() != "input" && field.key() != "encoding_format")
      request.parameters.insert(field);
  return request;
}

/// The request in OpenAI's wire form.
inline boost::json::object to_json(const embedding_request& request) {
  boost::json::array input;
  for (const auto& text : request.input) input.emplace_back(text);
  boost::json::object object{{"model", request.model}, {"input", std::move(input)},
                             {"encoding_format", "float"}};
  for (const auto& field : request.parameters) object.insert(field);
  return object;
}

/// The response in OpenAI's wire form ("object": "list"); a top-level
/// "cost" holds cost_usd where the model has a price.
inline boost::json::object to_json(const embedding_response& response) {
  boost::json::array data;
  for (std::size_t i = 0; i < response.embeddings.size(); ++i) {
    boost::json::array vector;
    vector.reserve(response.embeddings[i].size());
    for (const float x : response.embeddings[i]) vector.emplace_back(x);
    data.push_back(boost::json::object{{"object", "embedding"}, {"index", i},
                                       {"embedding", std::move(vector)}});
  }
  boost::json::object object{
      {"object", "list"},
      {"data", std::move(data)},
      {"model", response.model},
      {"usage", {{"prompt_tokens", response.usage.prompt_tokens},
                 {"total_tokens", response.usage.prompt_tokens}}}};
  if (response.cost_usd > 0) object["cost"] = response.cost_usd;
  return object;
}

namespace detail {

/// A JSON array of numbers as floats; errors name `where`.
inline std::vector<float> parse_vector(const boost::json::value& value, const std::string& where) {
  constexpr auto code = errc::upstream_protocol_error;
  const auto* numbers = value.if_array();
  if (!numbers) fail(code, where, "must be an array of numbers");
  std::vector<float> vector;
  vector.reserve(numbers->size());
  for (const auto& x : *numbers) {
    if (!x.is_number()) fail(code, where, "must be an array of numbers");
    vector.push_back(static_cast<float>(x.to_number<double>()));
  }
  return vector;
}

}  // namespace detail

/// Reads OpenAI's embeddings answer, placing each vector at its "index".
/// Throws llmgate::error(errc::upstream_protocol_error) on wrong types,
/// an index out of range or repeated, or a vector missing.
inline embedding_response parse_embedding_response(const boost::json::value& value,
                                                   std::size_t expected_count) {
  constexpr auto code = errc::upstream_protocol_error;
  const auto& object = detail::as_object(value, "response", code);
  embedding_response response;
  response.model = detail::string_field(object, "model", "response", code);
  const auto* data = detail::array_field(object, "data", "response", code);
  if (!data || data->size() != expected_count)
    detail::fail(code, "response.data", "must hold one embedding per input");
  response.embeddings.resize(expected_count);
  for (std::size_t i = 0; i < data->size(); ++i) {
    const std::string where = "response.data[" + std::to_string(i) + "]";
    const auto& item = detail::as_object((*data)[i], where, code);
    std::size_t index = i;
    if (item.contains("index")) index = detail::count_field(item, "index", where, code);
    const auto* embedding = item.if_contains("embedding");
    if (index >= expected_count || !response.embeddings[index].empty() || !embedding)
      detail::fail(code, where, "has a missing, repeated or out-of-range index or embedding");
    response.embeddings[index] = detail::parse_vector(*embedding, where + ".embedding");
  }
  if (const auto* usage = detail::object_field(object, "usage", "response", code))
    response.usage = parse_token_usage(*usage, code);
  return response;
}

}  // namespace llmgate::inline v0
