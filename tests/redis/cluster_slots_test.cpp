// The cluster's key space as llmgate reads it: key slots equal Redis's
// (values from the Cluster specification and CLUSTER KEYSLOT's page), a
// CLUSTER SLOTS reply becomes sorted ranges or is refused with a message
// saying what is wrong, and MOVED/ASK errors become redirects.
#include <boost/test/unit_test.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "llmgate/redis/cluster_slots.hpp"

using llmgate::errc;
using llmgate::redis::endpoint;
using llmgate::redis::key_slot;
using llmgate::redis::parse_cluster_slots;
using llmgate::redis::redirect;
using llmgate::redis::redirect_of;
using llmgate::redis::reply;
using llmgate::redis::reply_kind;
using llmgate::redis::slot_range;

namespace {

reply integer(long long value) { return reply{.kind = reply_kind::integer, .integer = value}; }
reply string(std::string text) { return reply{.kind = reply_kind::string, .text = std::move(text)}; }
reply error(std::string text) { return reply{.kind = reply_kind::error, .text = std::move(text)}; }
reply array(std::vector<reply> elements) { return reply{.kind = reply_kind::array, .elements = std::move(elements)}; }

/// A node as Redis 7 lists it: host, port, id, metadata (a map, sent as a
/// flat array in RESP2).
reply node(std::string host, long long port, std::string id) {
  return array({string(std::move(host)), integer(port), string(std::move(id)),
                array({string("hostname"), string("")})});
}

reply range(long long first, long long last, std::vector<reply> nodes) {
  std::vector<reply> elements = {integer(first), integer(last)};
  for (auto& n : nodes) elements.push_back(std::move(n));
  return array(std::move(elements));
}

/// What a 3-master cluster with one replica each answers (ranges out of
/// slot order, as a node may send them).
reply three_masters() {
  return array({
      range(5461, 10922, {node("127.0.0.1", 7001, "b"), node("127.0.0.1", 7004, "e")}),
      range(0, 5460, {node("127.0.0.1", 7000, "a"), node("127.0.0.1", 7003, "d")}),
      range(10923, 16383, {node("127.0.0.1", 7002, "c"), node("127.0.0.1", 7005, "f")}),
  });
}

/// The message parse_cluster_slots throws for `slots`, checking that it
/// throws store_error, without the ": <error code's message>" that
/// std::system_error appends; "" when it does not throw.
std::string refusal_of(const reply& slots) {
  try {
    (void)parse_cluster_slots(slots);
  } catch (const llmgate::error& e) {
    BOOST_TEST((e.code() == errc::store_error));
    const std::string what = e.what();
    const std::string suffix = ": " + e.code().message();
    BOOST_TEST(what.ends_with(suffix));
    return what.substr(0, what.size() - suffix.size());
  }
  return "";
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cluster_slots_test)

BOOST_AUTO_TEST_CASE(key_slot_equals_redis_documented_values) {
  BOOST_TEST(key_slot("foo") == 12182);
  BOOST_TEST(key_slot("bar") == 5061);
  BOOST_TEST(key_slot("somekey") == 11058);     // CLUSTER KEYSLOT's page
  BOOST_TEST(key_slot("123456789") == 12739);  // CRC16/XMODEM's check value 0x31C3
  BOOST_TEST(key_slot("") == 0);
  BOOST_TEST(key_slot(std::string_view("\0\xff", 2)) == 7920);  // binary-safe
}

BOOST_AUTO_TEST_CASE(a_hash_tag_alone_is_hashed) {
  BOOST_TEST(key_slot("foo{hash_tag}") == 2515);  // CLUSTER KEYSLOT's page
  BOOST_TEST(key_slot("bar{hash_tag}") == 2515);
  BOOST_TEST(key_slot("{user1000}.following") == key_slot("{user1000}.followers"));
  BOOST_TEST(key_slot("{user1000}.following") == key_slot("user1000"));
  // The specification's examples: only the first '{' and the first '}'
  // after it count.
  BOOST_TEST(key_slot("foo{{bar}}zap") == key_slot("{bar"));
  BOOST_TEST(key_slot("foo{bar}{zap}") == key_slot("bar"));
  BOOST_TEST(key_slot("a{b}") == key_slot("b"));
}

BOOST_AUTO_TEST_CASE(an_empty_or_unclosed_tag_hashes_the_whole_key) {
  BOOST_TEST(key_slot("{}") == 15257);
  BOOST_TEST(key_slot("{") == 4092);
  BOOST_TEST(key_slot("}{") == 12793);
  BOOST_TEST(key_slot("foo{}{bar}") == 8363);  // the first tag is empty: not "bar"'s 5061
  BOOST_TEST(key_slot("foo{}{bar}") != key_slot("bar"));
  BOOST_TEST(key_slot("{}foo") == 9500);
}

BOOST_AUTO_TEST_CASE(a_well_formed_reply_becomes_ranges_sorted_by_first_slot) {
  const auto ranges = parse_cluster_slots(three_masters());
  const std::vector<slot_range> expected = {
      {0, 5460, endpoint{"127.0.0.1", 7000}, {endpoint{"127.0.0.1", 7003}}},
      {5461, 10922, endpoint{"127.0.0.1", 7001}, {endpoint{"127.0.0.1", 7004}}},
      {10923, 16383, endpoint{"127.0.0.1", 7002}, {endpoint{"127.0.0.1", 7005}}},
  };
  BOOST_TEST((ranges == expected));
}

BOOST_AUTO_TEST_CASE(older_node_forms_a_nil_host_and_an_empty_map_are_read) {
  // Before Redis 4.0 a node was [host, port]; Redis 7 sends a nil host for
  // an unknown endpoint (the host the client asked).
  const reply slots = array({
      range(0, 0, {array({string("10.0.0.1"), integer(6379)})}),
      range(1, 16383, {array({reply{}, integer(6380), string("id")})}),
  });
  const std::vector<slot_range> expected = {
      {0, 0, endpoint{"10.0.0.1", 6379}, {}},
      {1, 16383, endpoint{"", 6380}, {}},
  };
  BOOST_TEST((parse_cluster_slots(slots) == expected));
  BOOST_TEST(parse_cluster_slots(array({})).empty());  // a cluster with no slot assigned yet
}

BOOST_AUTO_TEST_CASE(each_malformed_shape_is_refused_naming_what_is_wrong) {
  const auto good_node = [] { return node("127.0.0.1", 7000, "a"); };
  const std::vector<std::pair<reply, std::string>> cases = {
      {error("ERR This instance has cluster support disabled"),
       "redis: CLUSTER SLOTS reply is an error: ERR This instance has cluster support disabled"},
      {string("OK"), "redis: CLUSTER SLOTS reply is not an array"},
      {reply{}, "redis: CLUSTER SLOTS reply is not an array"},
      {array({integer(1)}), "redis: CLUSTER SLOTS reply range 0 is not an array"},
      {array({array({integer(0), integer(1)})}),
       "redis: CLUSTER SLOTS reply range 0 has no first slot, last slot and master"},
      {array({array({string("0"), integer(1), good_node()})}),
       "redis: CLUSTER SLOTS reply range 0: first slot is not an integer"},
      {array({range(0, 16384, {good_node()})}),
       "redis: CLUSTER SLOTS reply range 0: last slot 16384 is outside 0..16383"},
      {array({range(-1, 5, {good_node()})}), "redis: CLUSTER SLOTS reply range 0: first slot -1 is outside 0..16383"},
      {array({range(9, 5, {good_node()})}), "redis: CLUSTER SLOTS reply range 0: first slot 9 is after last slot 5"},
      {array({range(0, 5, {string("127.0.0.1:7000")})}), "redis: CLUSTER SLOTS reply range 0: master is not an array"},
      {array({range(0, 5, {array({string("127.0.0.1")})})}),
       "redis: CLUSTER SLOTS reply range 0: master has no host and port"},
      {array({range(0, 5, {array({integer(1), integer(7000)})})}),
       "redis: CLUSTER SLOTS reply range 0: master: host is not a string"},
      {array({range(0, 5, {array({string("h"), string("7000")})})}),
       "redis: CLUSTER SLOTS reply range 0: master: port is not an integer"},
      {array({range(0, 5, {array({string("h"), integer(0)})})}),
       "redis: CLUSTER SLOTS reply range 0: master: port 0 is outside 1..65535"},
      {array({range(0, 5, {array({string("h"), integer(65536)})})}),
       "redis: CLUSTER SLOTS reply range 0: master: port 65536 is outside 1..65535"},
      {array({range(0, 5, {array({string("h"), integer(1), integer(7)})})}),
       "redis: CLUSTER SLOTS reply range 0: master: node id is not a string"},
      {array({range(0, 5, {array({string("h"), integer(1), string("id"), string("hostname")})})}),
       "redis: CLUSTER SLOTS reply range 0: master: metadata is not an array"},
      {array({range(0, 5, {good_node(), array({string("h"), integer(-3)})})}),
       "redis: CLUSTER SLOTS reply range 0: replica 0: port -3 is outside 1..65535"},
      {array({range(0, 100, {good_node()}), range(100, 200, {good_node()})}),
       "redis: CLUSTER SLOTS reply has overlapping ranges 0..100 and 100..200"},
  };
  for (const auto& [slots, message] : cases) BOOST_TEST(refusal_of(slots) == message);
}

BOOST_AUTO_TEST_CASE(moved_and_ask_become_redirects) {
  BOOST_TEST((redirect_of(error("MOVED 3999 127.0.0.1:6381")) == redirect{false, 3999, endpoint{"127.0.0.1", 6381}}));
  BOOST_TEST((redirect_of(error("ASK 3999 127.0.0.1:6381")) == redirect{true, 3999, endpoint{"127.0.0.1", 6381}}));
  BOOST_TEST((redirect_of(error("MOVED 0 redis-7.internal:7000")) == redirect{false, 0, endpoint{"redis-7.internal", 7000}}));
  BOOST_TEST((redirect_of(error("MOVED 16383 h:65535")) == redirect{false, 16383, endpoint{"h", 65535}}));
}

BOOST_AUTO_TEST_CASE(an_empty_host_means_the_node_asked) {
  BOOST_TEST((redirect_of(error("MOVED 1 :6380")) == redirect{false, 1, endpoint{"", 6380}}));
  BOOST_TEST((redirect_of(error("ASK 1 :6380")) == redirect{true, 1, endpoint{"", 6380}}));
}

BOOST_AUTO_TEST_CASE(an_ipv6_host_ends_at_the_last_colon) {
  BOOST_TEST((redirect_of(error("MOVED 7 [::1]:7000")) == redirect{false, 7, endpoint{"::1", 7000}}));
  BOOST_TEST((redirect_of(error("MOVED 7 ::1:7000")) == redirect{false, 7, endpoint{"::1", 7000}}));
  BOOST_TEST((redirect_of(error("ASK 7 fe80::1:2:7001")) == redirect{true, 7, endpoint{"fe80::1:2", 7001}}));
}

BOOST_AUTO_TEST_CASE(anything_else_is_no_redirect) {
  const std::vector<reply> others = {
      string("MOVED 1 h:1"),  // not an error
      reply{.kind = reply_kind::status, .text = "MOVED 1 h:1"},
      error("ERR unknown command"),
      error("MOVED"),
      error("MOVED 1"),
      error("MOVED 1 h"),            // no port
      error("MOVED 1 h:"),           // empty port
      error("MOVED 1 h:0"),          // port 0
      error("MOVED 1 h:65536"),      // port too big
      error("MOVED 1 h:70x"),        // not a number
      error("MOVED 16384 h:1"),      // slot too big
      error("MOVED -1 h:1"),         // negative slot
      error("MOVED +1 h:1"),
      error("MOVED  1 h:1"),         // two spaces
      error("MOVED 1 h:1 extra"),
      error("MOVED 1 [::1:7000"),    // unbalanced bracket
      error("MOVED 1 ::1]:7000"),
      error("moved 1 h:1"),          // Redis spells it in capitals
      error("ASKING 1 h:1"),
      error("TRYAGAIN Multiple keys request during rehashing of slot"),
  };
  for (const auto& other : others) BOOST_TEST(!redirect_of(other).has_value(), other.text);
}

BOOST_AUTO_TEST_SUITE_END()
