// request_scope: canonical JSON and the exact cache's text of a request.
// The exact text is what the exact cache (and its snapshots) stores, so it
// is pinned to its definition: canonical_json of the conversation's
// messages as to_json writes them, here built the slow way, by a
// serialisation per member.
#include <algorithm>  // std::sort
#include <string>     // std::string
#include <vector>     // std::vector

#include <boost/json/parse.hpp>      // boost::json::parse
#include <boost/json/serialize.hpp>  // boost::json::serialize
#include <boost/test/unit_test.hpp>

#include "llmgate/pipeline/request_scope.hpp"

namespace {

using namespace llmgate;

// The definition canonical_json meets: members sorted by name, each name
// and scalar as boost::json::serialize writes it.
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
  return boost::json::serialize(value);
}

std::string exact_text_by_definition(const chat_request& request) {
  boost::json::array messages;
  for (const auto& message : conversation_of(request)) messages.push_back(detail::to_json(message, {}));
  return sorted_serialization(messages);
}

chat_request request_of(const char* json) { return parse_chat_request(boost::json::parse(json)); }

}  // namespace

BOOST_AUTO_TEST_SUITE(request_scope_test)

BOOST_AUTO_TEST_CASE(canonical_json_sorts_members_at_every_depth) {
  const auto value = boost::json::parse(
      R"({"b": [3, {"z": null, "a": true}], "a": {"y": -1.5e300, "x": "q\"\\\n\u0001é"}, "": 18446744073709551615})");
  BOOST_TEST(canonical_json(value) == sorted_serialization(value));
  BOOST_TEST(canonical_json(value) ==
             R"({"":18446744073709551615,"a":{"x":"q\"\\\n\u0001é","y":-1.5E300},"b":[3,{"a":true,"z":null}]})");
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
  request.messages.push_back({.role = "user", .content = "hello", .extra = {{"role", "system"}, {"content", "x"}}});
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

BOOST_AUTO_TEST_SUITE_END()
