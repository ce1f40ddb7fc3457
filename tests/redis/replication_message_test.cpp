// replication_message: exact values and semantic changes come back exactly
// as written, and bytes cut at any length, with any byte flipped, of the
// other kind, or well framed around content that cannot be (an unknown
// change, a vector longer than its bytes, a NaN) are refused with an error,
// never half-read or thrown.
#include <boost/test/unit_test.hpp>

#include <cmath>    // std::nan
#include <limits>   // std::numeric_limits
#include <memory>   // std::make_shared
#include <string>
#include <vector>

#include "llmgate/server/shared/replication_message.hpp"

using llmgate::cached_answer;
using llmgate::chat_response;
using llmgate::exact_key;
using llmgate::hash128;

namespace {

cached_answer sample_answer() {
  auto answer = std::make_shared<chat_response>();
  answer->id = "chatcmpl-1";
  answer->model = "gpt-test";
  answer->content = "Paris is the capital of France.";
  answer->finish_reason = "tool_calls";
  answer->tool_calls_json = R"([{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}])";
  answer->usage = {.prompt_tokens = 12, .completion_tokens = 7, .cached_prompt_tokens = 3, .cache_write_tokens = 1};
  answer->cost_usd = 0.00125;
  answer->backend = "openai";
  answer->created = 1795692372;
  return answer;
}

exact_key sample_key() {
  return {.hash = {1, 2}, .scope = {0x1111, 0x2222}, .tenant = "tenant-a", .text = "what is the capital of france"};
}

llmgate::replicated_insert sample_insert() {
  return {.scope = {7, 8}, .text = "capital of france?", .vector = {0.25f, -1.0f, 3.5f}, .answer = sample_answer(),
          .cost = {.prompt_tokens = 12, .completion_tokens = 7, .usd = 0.00125}};
}

llmgate::replicated_feedback sample_feedback() {
  return {.scope = {7, 8}, .request_text = "france capital", .stored_text = "capital of france?",
          .similarity = 0.93f, .probability = 0.81f, .correct = false};
}

std::vector<llmgate::semantic_change> sample_changes() {
  return {sample_insert(), sample_feedback(), llmgate::replicated_eviction{{7, 8}, "capital of france?"},
          llmgate::replicated_exact_erase{{1, 2}, {0x1111, 0x2222}, "tenant-a", "what is the capital of france"}};
}

void check_same_answer(const cached_answer& read, const cached_answer& written) {
  BOOST_TEST_REQUIRE(read != nullptr);
  BOOST_TEST(read->id == written->id);
  BOOST_TEST(read->model == written->model);
  BOOST_TEST(read->content == written->content);
  BOOST_TEST(read->finish_reason == written->finish_reason);
  BOOST_TEST(read->tool_calls_json == written->tool_calls_json);
  BOOST_TEST((read->usage == written->usage));
  BOOST_TEST(read->cost_usd == written->cost_usd);
  BOOST_TEST(read->backend == written->backend);
  BOOST_TEST(read->created == written->created);
}

// Bytes framed as a semantic change whose payload `write` writes.
template <class Write>
std::string framed_change(Write write) {
  llmgate::store::snapshot_writer out(llmgate::semantic_change_kind, llmgate::replication_format_version);
  write(out);
  return std::move(out).seal();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(replication_message_test)

BOOST_AUTO_TEST_CASE(an_exact_value_round_trips_and_answers_only_its_own_key) {
  const exact_key key = sample_key();
  std::error_code ec;
  const auto value = llmgate::decode_exact(llmgate::encode_exact(key, sample_answer()), ec);
  BOOST_TEST_REQUIRE(!ec, ec.message());
  BOOST_TEST_REQUIRE(value.has_value());
  BOOST_TEST((value->scope == key.scope));
  BOOST_TEST(value->tenant == key.tenant);
  BOOST_TEST(value->text == key.text);
  check_same_answer(value->answer, sample_answer());
  BOOST_TEST(value->answers(key));

  exact_key other_tenant = key;
  other_tenant.tenant = "tenant-b";
  BOOST_TEST(!value->answers(other_tenant));
  exact_key other_text = key;
  other_text.text += "?";
  BOOST_TEST(!value->answers(other_text));
  exact_key other_scope = key;
  other_scope.scope.high ^= 1;
  BOOST_TEST(!value->answers(other_scope));
}

BOOST_AUTO_TEST_CASE(each_change_round_trips) {
  for (const auto& change : sample_changes()) {
    std::error_code ec;
    const auto read = llmgate::decode_change(llmgate::encode_change(change), ec);
    BOOST_TEST_REQUIRE(!ec, ec.message());
    BOOST_TEST_REQUIRE(read.has_value());
    BOOST_TEST_REQUIRE(read->index() == change.index());
    BOOST_TEST(llmgate::change_letter(*read) == llmgate::change_letter(change));
    if (const auto* insert = std::get_if<llmgate::replicated_insert>(&*read)) {
      const auto& written = std::get<llmgate::replicated_insert>(change);
      BOOST_TEST((insert->scope == written.scope));
      BOOST_TEST(insert->text == written.text);
      BOOST_TEST(insert->vector == written.vector, boost::test_tools::per_element());
      check_same_answer(insert->answer, written.answer);
      BOOST_TEST(insert->cost.prompt_tokens == written.cost.prompt_tokens);
      BOOST_TEST(insert->cost.completion_tokens == written.cost.completion_tokens);
      BOOST_TEST(insert->cost.usd == written.cost.usd);
    } else if (const auto* feedback = std::get_if<llmgate::replicated_feedback>(&*read)) {
      const auto& written = std::get<llmgate::replicated_feedback>(change);
      BOOST_TEST((feedback->scope == written.scope));
      BOOST_TEST(feedback->request_text == written.request_text);
      BOOST_TEST(feedback->stored_text == written.stored_text);
      BOOST_TEST(feedback->similarity == written.similarity);
      BOOST_TEST(feedback->probability == written.probability);
      BOOST_TEST(feedback->correct == written.correct);
    } else if (const auto* erase = std::get_if<llmgate::replicated_exact_erase>(&*read)) {
      const auto& written = std::get<llmgate::replicated_exact_erase>(change);
      BOOST_TEST((erase->hash == written.hash));
      BOOST_TEST((erase->scope == written.scope));
      BOOST_TEST(erase->tenant == written.tenant);
      BOOST_TEST(erase->text == written.text);
    } else {
      const auto& eviction = std::get<llmgate::replicated_eviction>(*read);
      const auto& written = std::get<llmgate::replicated_eviction>(change);
      BOOST_TEST((eviction.scope == written.scope));
      BOOST_TEST(eviction.text == written.text);
    }
  }
}

BOOST_AUTO_TEST_CASE(an_insert_without_a_vector_round_trips_empty) {
  auto insert = sample_insert();
  insert.vector.clear();
  std::error_code ec;
  const auto read = llmgate::decode_change(llmgate::encode_change(insert), ec);
  BOOST_TEST_REQUIRE(!ec, ec.message());
  BOOST_TEST(std::get<llmgate::replicated_insert>(*read).vector.empty());
}

BOOST_AUTO_TEST_CASE(bytes_cut_at_any_length_are_refused) {
  std::vector<std::string> messages = {llmgate::encode_exact(sample_key(), sample_answer())};
  for (const auto& change : sample_changes()) messages.push_back(llmgate::encode_change(change));
  for (std::size_t m = 0; m < messages.size(); ++m) {
    for (std::size_t length = 0; length < messages[m].size(); ++length) {
      std::error_code ec;
      const std::string cut = messages[m].substr(0, length);
      const bool read = m == 0 ? llmgate::decode_exact(cut, ec).has_value() : llmgate::decode_change(cut, ec).has_value();
      BOOST_TEST(!read, "message " << m << " cut at " << length);
      BOOST_TEST(static_cast<bool>(ec), "message " << m << " cut at " << length);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_flipped_byte_anywhere_is_refused) {
  std::vector<std::string> messages = {llmgate::encode_exact(sample_key(), sample_answer())};
  for (const auto& change : sample_changes()) messages.push_back(llmgate::encode_change(change));
  for (std::size_t m = 0; m < messages.size(); ++m) {
    for (std::size_t at = 0; at < messages[m].size(); ++at) {
      for (const unsigned char flip : {0x01, 0x80, 0xff}) {
        std::string altered = messages[m];
        altered[at] = static_cast<char>(static_cast<unsigned char>(altered[at]) ^ flip);
        std::error_code ec;
        const bool read =
            m == 0 ? llmgate::decode_exact(altered, ec).has_value() : llmgate::decode_change(altered, ec).has_value();
        BOOST_TEST(!read, "message " << m << " byte " << at << " ^ " << int{flip});
        BOOST_TEST(static_cast<bool>(ec));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(the_other_kind_is_refused) {
  std::error_code ec;
  BOOST_TEST(!llmgate::decode_change(llmgate::encode_exact(sample_key(), sample_answer()), ec).has_value());
  BOOST_TEST((ec == llmgate::make_error_code(llmgate::errc::wrong_kind_of_file)));
  ec.clear();
  BOOST_TEST(!llmgate::decode_exact(llmgate::encode_change(sample_insert()), ec).has_value());
  BOOST_TEST((ec == llmgate::make_error_code(llmgate::errc::wrong_kind_of_file)));
  ec.clear();
  BOOST_TEST(!llmgate::decode_exact("not a message at all", ec).has_value());
  BOOST_TEST(static_cast<bool>(ec));
}

BOOST_AUTO_TEST_CASE(well_framed_nonsense_is_refused) {
  const auto refused = [](const std::string& bytes, const char* what) {
    std::error_code ec;
    BOOST_TEST(!llmgate::decode_change(bytes, ec).has_value(), what);
    BOOST_TEST((ec == llmgate::make_error_code(llmgate::errc::corrupt_file)), what);
  };
  refused(framed_change([](auto& out) {
            out.write(std::uint8_t{'x'});
            out.write(std::uint64_t{1});
            out.write(std::uint64_t{2});
            out.write_string("text");
          }),
          "an unknown change");
  refused(framed_change([](auto& out) {
            out.write(std::uint8_t{'i'});
            out.write(std::uint64_t{1});
            out.write(std::uint64_t{2});
            out.write_string("text");
            out.write(std::numeric_limits<std::uint64_t>::max());  // a vector longer than the bytes left
          }),
          "a vector longer than its bytes");
  refused(framed_change([](auto& out) {
            out.write(std::uint8_t{'f'});
            out.write(std::uint64_t{1});
            out.write(std::uint64_t{2});
            out.write_string("request");
            out.write_string("stored");
            out.write(std::nanf(""));
            out.write(0.5f);
            out.write(std::uint8_t{1});
          }),
          "a NaN similarity");
  refused(framed_change([](auto& out) {
            out.write(std::uint8_t{'e'});
            out.write(std::uint64_t{1});
            out.write(std::uint64_t{2});
            out.write_string("text");
            out.write(std::uint8_t{0});  // a byte left over
          }),
          "bytes left over");
  refused(framed_change([](auto& out) {
            out.write(std::uint8_t{'e'});
            out.write(std::uint64_t{1});
          }),
          "a payload cut short");
}

BOOST_AUTO_TEST_CASE(stream_ids_parse_and_order_as_redis_orders_them) {
  const auto id = llmgate::stream_id::parse("1700000000000-3");
  BOOST_TEST_REQUIRE(id.has_value());
  BOOST_TEST(id->milliseconds == 1700000000000u);
  BOOST_TEST(id->sequence == 3u);
  BOOST_TEST(id->text() == "1700000000000-3");
  BOOST_TEST((llmgate::stream_id::parse("0") == llmgate::stream_id{}));
  BOOST_TEST((*llmgate::stream_id::parse("5-10") > *llmgate::stream_id::parse("5-9")));
  BOOST_TEST((*llmgate::stream_id::parse("6-0") > *llmgate::stream_id::parse("5-99")));
  for (const char* bad : {"", "-", "5-", "-5", "5-x", "x", "1-2-3", "99999999999999999999-0"})
    BOOST_TEST(!llmgate::stream_id::parse(bad).has_value(), bad);
}

BOOST_AUTO_TEST_SUITE_END()
