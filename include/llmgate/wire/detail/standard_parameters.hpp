// The checks of the chat.completions fields the gateway reads or that
// change every answer (model, messages, max_tokens, max_completion_tokens,
// temperature, top_p, n, stream, stream_options, stop, seed), made as a
// request is read: a client's mistake is then a 400 that names the field,
// never an upstream's 400 turned into a 502 that SDKs retry, nor a value
// quietly ignored. Absent and null pass (OpenAI's defaults); the messages
// are worded as OpenAI words them.
#pragma once

#include <string>       // std::string
#include <string_view>  // std::string_view

#include <boost/json/object.hpp>     // boost::json::object
#include <boost/json/serialize.hpp>  // boost::json::serialize (a refused value, quoted)
#include <boost/json/value.hpp>      // boost::json::value

#include "llmgate/chat/request_error.hpp"  // request_error

namespace llmgate::inline v0::detail {

inline std::string_view kind_of(const boost::json::value& value) {
  switch (value.kind()) {
    case boost::json::kind::null: return "null";
    case boost::json::kind::bool_: return "a boolean";
    case boost::json::kind::string: return "a string";
    case boost::json::kind::array: return "an array";
    case boost::json::kind::object: return "an object";
    default: return "a number";
  }
}

[[noreturn]] inline void missing_parameter(std::string_view param) {
  throw request_error(std::string(param), "Missing required parameter: '" + std::string(param) + "'.");
}

[[noreturn]] inline void wrong_type(std::string_view param, std::string_view expected, const boost::json::value& got) {
  throw request_error(std::string(param), "Invalid type for '" + std::string(param) + "': expected " +
                                              std::string(expected) + ", but got " + std::string(kind_of(got)) +
                                              " instead.");
}

[[noreturn]] inline void wrong_value(std::string_view param, std::string_view expected, const boost::json::value& got) {
  throw request_error(std::string(param), "Invalid value for '" + std::string(param) + "': expected " +
                                              std::string(expected) + ", but got " + boost::json::serialize(got) +
                                              " instead.");
}

// Whether `value` is an integer as JSON writes one (12, or 12.0); its
// value, as a double, in `number`.
inline bool integral(const boost::json::value& value, double& number) {
  if (value.is_int64() || value.is_uint64()) {
    number = value.to_number<double>();
    return true;
  }
  if (!value.is_double()) return false;
  number = value.get_double();
  return number >= -9e18 && number <= 9e18 && number == static_cast<double>(static_cast<long long>(number));
}

inline void check_integer(const boost::json::object& request, std::string_view param, double least) {
  const auto* value = request.if_contains(param);
  if (!value || value->is_null()) return;
  double number = 0;
  if (!integral(*value, number)) wrong_type(param, "an integer", *value);
  if (number < least) wrong_value(param, "an integer >= " + std::to_string(static_cast<long long>(least)), *value);
}

inline void check_number(const boost::json::object& request, std::string_view param, double least, double most,
                         std::string_view range) {
  const auto* value = request.if_contains(param);
  if (!value || value->is_null()) return;
  if (!value->is_number()) wrong_type(param, "a number", *value);
  const double number = value->to_number<double>();
  if (!(number >= least && number <= most)) wrong_value(param, range, *value);
}

inline void check_boolean(const boost::json::object& object, std::string_view param, std::string_view name) {
  const auto* value = object.if_contains(name);
  if (value && !value->is_null() && !value->is_bool()) wrong_type(param, "a boolean", *value);
}

// stop: a string, or an array of one to four strings.
inline void check_stop(const boost::json::object& request) {
  const auto* value = request.if_contains("stop");
  if (!value || value->is_null() || value->is_string()) return;
  const auto* stops = value->if_array();
  if (!stops) wrong_type("stop", "a string or an array of strings", *value);
  if (stops->empty() || stops->size() > 4) wrong_value("stop", "an array of 1 to 4 strings", *value);
  for (const auto& stop : *stops)
    if (!stop.is_string()) wrong_type("stop", "a string or an array of strings", stop);
}

/// Checks the request's standard fields (the messages' own fields are
/// checked as they are read). Throws request_error naming the first
/// field at fault.
inline void check_standard_parameters(const boost::json::object& request) {
  const auto* model = request.if_contains("model");
  if (!model || model->is_null() || (model->is_string() && model->get_string().empty()))
    throw request_error("model", "model is required: name the model to answer in the request's \"model\" field.");
  if (!model->is_string()) wrong_type("model", "a string", *model);
  const auto* messages = request.if_contains("messages");
  if (!messages || messages->is_null()) missing_parameter("messages");
  if (!messages->is_array()) wrong_type("messages", "an array", *messages);
  if (messages->get_array().empty()) wrong_value("messages", "a non-empty array", *messages);
  check_integer(request, "max_tokens", 1);
  check_integer(request, "max_completion_tokens", 1);
  check_number(request, "temperature", 0, 2, "a number from 0 to 2");
  check_number(request, "top_p", 0, 1, "a number from 0 to 1");
  check_integer(request, "n", 1);
  // The gateway answers, caches and streams one choice.
  if (const auto* n = request.if_contains("n"); n && !n->is_null() && n->to_number<double>() != 1)
    throw request_error("n", "This gateway answers with one choice: 'n' must be 1, not " + boost::json::serialize(*n) +
                                 ". Send n requests instead.");
  check_boolean(request, "stream", "stream");
  if (const auto* options = request.if_contains("stream_options"); options && !options->is_null()) {
    if (!options->is_object()) wrong_type("stream_options", "an object", *options);
    check_boolean(options->get_object(), "stream_options.include_usage", "include_usage");
  }
  check_stop(request);
  if (const auto* seed = request.if_contains("seed"); seed && !seed->is_null()) {
    double number = 0;
    if (!integral(*seed, number)) wrong_type("seed", "an integer", *seed);
  }
}

}  // namespace llmgate::inline v0::detail
