// Embedding requests and responses, with their OpenAI wire form
// (/v1/embeddings), which the gateway receives and the adapters speak.
#pragma once

#include <bit>      // std::bit_cast
#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint32_t
#include <string>   // std::string
#include <vector>   // std::vector

#include <boost/beast/core/detail/base64.hpp>  // boost::beast::detail::base64 (Beast's, used by its WebSocket handshake)

#include <boost/json/array.hpp>   // boost::json::array
#include <boost/json/object.hpp>  // boost::json::object
#include <boost/json/value.hpp>   // boost::json::value

#include "llmgate/wire/openai_wire.hpp"  // token_usage, parse_token_usage
#include "llmgate/wire/detail/json_fields.hpp"
#include "llmgate/wire/detail/standard_parameters.hpp"  // wrong_type, wrong_value, missing_parameter
#include "llmgate/chat/request_error.hpp"                // request_error
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

/// How a vector is written in an embeddings answer: a JSON array of
/// numbers, or base64 of its little-endian float32 bytes (what OpenAI's
/// client libraries ask for by default: a quarter of the bytes to parse).
enum class embedding_encoding { float_array, base64 };

struct embedding_request {
  std::string model;
  std::vector<std::string> input;  ///< one vector is returned per text, in order
  embedding_encoding encoding = embedding_encoding::float_array;  ///< how the client wants vectors written
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
/// strings (token-id arrays are not supported); encoding_format is "float"
/// (the default) or "base64" (adapters always ask upstream for floats).
/// Throws request_error naming the field.
inline embedding_request parse_embedding_request(const boost::json::value& value) {
  if (!value.is_object()) throw request_error("", "The request body must be a JSON object.");
  const auto& object = value.get_object();
  embedding_request request;
  const auto* model = object.if_contains("model");
  if (!model || model->is_null() || (model->is_string() && model->get_string().empty()))
    throw request_error("model", "model is required: name the embedding model in the request's \"model\" field.");
  if (!model->is_string()) detail::wrong_type("model", "a string", *model);
  request.model = std::string(model->get_string());
  const auto* input = object.if_contains("input");
  if (!input || input->is_null()) detail::missing_parameter("input");
  if (input->is_string()) {
    request.input.emplace_back(input->get_string());
  } else if (input->is_array() && !input->get_array().empty()) {
    for (const auto& text : input->get_array()) {
      if (!text.is_string()) detail::wrong_type("input", "a string or an array of strings", text);
      request.input.emplace_back(text.get_string());
    }
  } else {
    detail::wrong_value("input", "a string or a non-empty array of strings", *input);
  }
  if (const auto* encoding = object.if_contains("encoding_format"); encoding && !encoding->is_null()) {
    const auto* name = encoding->if_string();
    if (name && *name == "base64") request.encoding = embedding_encoding::base64;
    else if (!name || *name != "float") detail::wrong_value("encoding_format", "\"float\" or \"base64\"", *encoding);
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

namespace detail {

/// A vector as base64 of its float32 bytes, little-endian whatever the host.
inline std::string base64_of(const std::vector<float>& vector) {
  std::string bytes(vector.size() * 4, '\0');
  for (std::size_t i = 0; i < vector.size(); ++i) {
    const auto bits = std::bit_cast<std::uint32_t>(vector[i]);
    for (std::size_t b = 0; b < 4; ++b) bytes[4 * i + b] = static_cast<char>((bits >> (8 * b)) & 0xFF);
  }
  std::string text(boost::beast::detail::base64::encoded_size(bytes.size()), '\0');
  text.resize(boost::beast::detail::base64::encode(text.data(), bytes.data(), bytes.size()));
  return text;
}

}  // namespace detail

/// The response in OpenAI's wire form ("object": "list"), each vector
/// written as `encoding` asks; a top-level "cost" holds cost_usd where the
/// model has a price.
inline boost::json::object to_json(const embedding_response& response,
                                   embedding_encoding encoding = embedding_encoding::float_array) {
  boost::json::array data;
  for (std::size_t i = 0; i < response.embeddings.size(); ++i) {
    boost::json::value vector;
    if (encoding == embedding_encoding::base64) {
      vector = detail::base64_of(response.embeddings[i]);
    } else {
      auto& numbers = vector.emplace_array();
      numbers.reserve(response.embeddings[i].size());
      for (const float x : response.embeddings[i]) numbers.emplace_back(x);
    }
    data.push_back(boost::json::object{{"object", "embedding"}, {"index", i}, {"embedding", std::move(vector)}});
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
