// request_scope: canonical JSON and the exact cache's text of a request.
// The exact text is what the exact cache (and its snapshots) stores, so it
// is pinned to its definition: canonical_json of the conversation's
// messages in their wire form (chat_request_body), here built the slow
// way, by a serialisation per member. The scope's generation parameters
// are pinned to how they were read from a JSON tree before the vocabulary
// held JSON text.
#include <algorithm>  // std::sort
#include <string>     // std::string
#include <vector>     // std::vector

#include <boost/json/parse.hpp>      // boost::json::parse
#include <boost/json/serialize.hpp>  // boost::json::serialize

#include "llmgate/wire/detail/json_appender.hpp"  // json_appender
#include <boost/test/unit_test.hpp>

#include "llmgate/wire/openai_wire.hpp"  // parse_chat_request, chat_request_body
#include "llmgate/pipeline/request_scope.hpp"

namespace {

using namespace llmgate;

// The definition canonical_json meets: members sorted by name, each name
// and scalar as json_appender writes it (Boost.JSON's escapes, doubles as
// plain decimals).
std::string sorted_serialization(const boost::json::value& value) {
  if (const auto* object = value.if_object()) {
    std::vector<const boost::json::key_value_pair*> members;
    for (const auto& member : *object) members.push_back(&member);
    std::sort(members.begin(), members.end(), [](const auto* a, const auto* b) { return a->key() < b->key(); });
    std::string out = "{";
    for (const auto* member : members) {
      if (out.size() > 1) out += ',';
      out += boost::json::serialize(boost::json::value(member->key())) + ':' + sorted_serialization(member->value());
    }
    return out + '}';
  }
  if (const auto* array = value.if_array()) {
    std::string out = "[";
    for (const auto& element : *array) {
      if (out.size() > 1) out += ',';
      out += sorted_serialization(element);
    }
    return out + ']';
  }
  std::string scalar;
  detail::json_appender(scalar).value(value);
  return scalar;
}

std::string exact_text_by_definition(const chat_request& request) {
  const auto wire = boost::json::parse(chat_request_body(request));
  const auto& all = wire.at("messages").as_array();
  const auto system_prompt = static_cast<std::ptrdiff_t>(request.messages.size() - conversation_of(request).size());
  return sorted_serialization(boost::json::array(all.begin() + system_prompt, all.end()));
}

chat_request request_of(const char* json) { return parse_chat_request(boost::json::parse(json)); }

// generation_parameters_of as it read a request's parameters when they
// were a JSON object.
generation_parameters parameters_by_definition(const boost::json::object& fields) {
  static constexpr std::string_view answer_neutral[] = {"stream_options", "user", "metadata", "store",
                                                        "service_tier", "prompt_cache_key"};
  generation_parameters parameters;
  for (const auto& [name, value] : fields) {
    if (name == "model" || name == "messages" || name == "stream") continue;
    if (std::find(std::begin(answer_neutral), std::end(answer_neutral), name) != std::end(answer_neutral))
      continue;
    if ((name == "temperature" || name == "top_p") && value.is_number()) {
      (name == "temperature" ? parameters.temperature : parameters.top_p) = value.to_number<double>();
    } else if ((name == "max_tokens" || name == "max_completion_tokens") && value.is_uint64()) {
      parameters.max_tokens = value.get_uint64();
    } else if ((name == "max_tokens" || name == "max_completion_tokens") && value.is_int64() &&
               value.get_int64() >= 0) {
      parameters.max_tokens = static_cast<std::uint64_t>(value.get_int64());
    } else if (name == "seed" && value.is_int64()) {
      parameters.seed = value.get_int64();
    } else if (name == "stop" && value.is_string()) {
      parameters.stop.emplace_back(value.get_string());
    } else if (name == "stop" && value.is_array() &&
               std::all_of(value.get_array().begin(), value.get_array().end(),
                           [](const boost::json::value& v) { return v.is_string(); })) {
      for (const auto& sequence : value.get_array()) parameters.stop.emplace_back(sequence.get_string());
    } else if (name == "tools") {
      parameters.tools = canonical_json(value);
    } else if (name == "response_format") {
      parameters.response_format = canonical_json(value);
    } else {
      parameters.other[std::string(name)] = canonical_json(value);
    }
  }
  return parameters;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(request_scope_test)

BOOST_AUTO_TEST_CASE(canonical_json_sorts_members_at_every_depth) {
  const auto value = boost::json::parse(
      R"({"b": [3, {"z": null, "a": true}], "a": {"y": -1.5e300, "x": "q\"\\\n\u0001é"}, "": 18446744073709551615})");
  BOOST_TEST(canonical_json(value) == sorted_serialization(value));
  BOOST_TEST(canonical_json(value) ==
             R"({"":18446744073709551615,"a":{"x":"q\"\\\n\u0001é","y":-1.5e+300},"b":[3,{"a":true,"z":null}]})");
  BOOST_TEST(canonical_json(boost::json::parse("{}")) == "{}");
  BOOST_TEST(canonical_json(boost::json::parse("[]")) == "[]");
  BOOST_TEST(canonical_json(boost::json::parse("[[],{}]")) == "[[],{}]");
}

BOOST_AUTO_TEST_CASE(equal_values_read_the_same_whatever_the_member_order) {
  BOOST_TEST(canonical_json(boost::json::parse(R"({"type": "json_schema", "schema": {"b": 1, "a": 2}})")) ==
             canonical_json(boost::json::parse(R"({"schema": {"a": 2, "b": 1}, "type": "json_schema"})")));
}

BOOST_AUTO_TEST_CASE(exact_text_is_canonical_json_of_the_conversation) {
  const char* requests[] = {
      R"({"model": "m", "messages": [{"role": "user", "content": "What is the capital of France?"}]})",
      R"({"model": "m", "messages": [{"role": "system", "content": "Be brief."},
                                     {"role": "developer", "content": "Very brief."},
                                     {"role": "user", "content": "Hi \"there\"\n\t\u0007 ünïcødé"}]})",
      R"({"model": "m", "messages": [{"role": "user", "content": [{"type": "text", "text": "a"},
                                                                  {"type": "image_url", "image_url": {"url": "u"}}]},
                                     {"role": "assistant", "content": null, "tool_calls": [{"id": "c1",
                                      "type": "function", "function": {"name": "f", "arguments": "{\"x\":1}"}}]},
                                     {"role": "tool", "tool_call_id": "c1", "content": "42", "name": "f"},
                                     {"content": "", "role": "user", "a_field": 1, "zz": [1.5, false]}]})",
  };
  for (const char* json : requests) {
    const chat_request request = request_of(json);
    BOOST_TEST(exact_text_of(request) == exact_text_by_definition(request), json);
  }
  BOOST_TEST(exact_text_of(request_of(requests[0])) ==
             R"([{"content":"What is the capital of France?","role":"user"}])");
}

BOOST_AUTO_TEST_CASE(extra_fields_named_like_role_or_content_do_not_count) {
  // to_json of a message gives role and content from their members, not from extra.
  chat_request request;
  request.messages.push_back(
      {.role = "user", .content = "hello", .extra = {{"role", R"("system")"}, {"content", R"("x")"}}});
  BOOST_TEST(exact_text_of(request) == exact_text_by_definition(request));
  BOOST_TEST(exact_text_of(request) == R"([{"content":"hello","role":"user"}])");
}

BOOST_AUTO_TEST_CASE(only_the_conversation_after_the_system_prompt_counts) {
  chat_request request;
  request.messages.push_back({.role = "system", .content = "s", .extra = {}});
  BOOST_TEST(exact_text_of(request) == "[]");
  request.messages.push_back({.role = "user", .content = "u", .extra = {}});
  request.messages.push_back({.role = "system", .content = "late", .extra = {}});
  BOOST_TEST(exact_text_of(request) == R"([{"content":"u","role":"user"},{"content":"late","role":"system"}])");
}

BOOST_AUTO_TEST_CASE(generation_parameters_read_as_from_the_json_tree) {
  const char* requests[] = {
      R"({"model": "m", "messages": [{"role": "user", "content": "x"}]})",
      R"({"model": "m", "messages": [{"role": "user", "content": "x"}], "temperature": 0.2, "top_p": 1,
          "max_tokens": 256, "seed": -7, "stop": "END", "user": "ann", "stream_options": {"include_usage": true}})",
      R"({"model": "m", "messages": [{"role": "user", "content": "x"}], "temperature": -0.0, "top_p": 0.95,
          "max_completion_tokens": 18446744073709551615, "seed": 15.0, "stop": ["a", "b\n"],
          "tools": [{"type": "function", "function": {"name": "f", "parameters": {"b": 1, "a": [2.5e-300, null]}}}],
          "response_format": {"type": "json_schema", "json_schema": {"schema": {"z": {}, "y": []}}},
          "logit_bias": {"50256": -100, "1": 2}, "n": 1, "x_vendor": "ünï\u0001"})",
      R"({"model": "m", "messages": [{"role": "user", "content": "x"}], "temperature": 2e0, "max_tokens": 1,
          "stop": ["a", "1"], "metadata": {"k": "v"}, "store": true, "frequency_penalty": 0.5})",
  };
  for (const char* json : requests) {
    const auto tree = boost::json::parse(json);
    const chat_request request = parse_chat_request(tree);
    BOOST_TEST(generation_parameters_of(request).canonical() ==
                   parameters_by_definition(tree.as_object()).canonical(), json);
  }
}

BOOST_AUTO_TEST_SUITE_END()
