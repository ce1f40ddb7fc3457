// Pools of replicas (backend/pool/): each balancing policy's choice on
// scripted replicas (busy, slow, down, recovering), bounded loads spreading
// a hot prefix, the prefix key of plain and PML requests, the pool's health
// (a replica that failed rests and is probed once before it takes requests
// again), failing over to another replica only before the first streamed
// byte, and the config's pooled entries. The replicas are in-process
// backends: what is tested is the placing, not a network.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>

#include "llmgate/backend/any_backend.hpp"
#include "llmgate/backend/backend_config.hpp"
#include "llmgate/backend/blocking.hpp"
#include "llmgate/backend/pool/backend_pool.hpp"
#include "llmgate/backend/pool/pool_config.hpp"
#include "llmgate/backend/scripted_backend.hpp"
#include "llmgate/config/config_error.hpp"
#include "llmgate/detail/adjustable_clock.hpp"
#include "llmgate/prompt/prompt_layout.hpp"
#include "../chunk_log.hpp"

namespace net = boost::asio;
using namespace std::chrono_literals;
using llmgate::any_backend;
using llmgate::backend_error;
using llmgate::backend_pool;
using llmgate::chat_request;
using llmgate::chat_response;
using llmgate::configured_balancing;
using llmgate::errc;
using llmgate::pool_request;
using llmgate::prefix_affinity;
using llmgate::replica_choice;
using llmgate::replica_pool;
using llmgate::replica_view;
using llmgate::scripted_backend;

namespace {

using test_clock = llmgate::detail::adjustable_clock<std::chrono::steady_clock>;

std::vector<std::size_t> choices(auto& policy, std::span<const replica_view> replicas, std::size_t n,
                                 pool_request request = {}) {
  std::vector<std::size_t> picked;
  for (std::size_t i = 0; i < n; ++i) picked.push_back(policy.choose(request, replicas).replica);
  return picked;
}

chat_request asks(std::string system, std::string question, std::string model = "m") {
  chat_request request;
  request.model = std::move(model);
  request.messages.push_back({.role = "system", .content = std::move(system)});
  request.messages.push_back({.role = "user", .content = std::move(question)});
  return request;
}

// A replica whose answer waits until the test opens its gate, so that the
// test holds requests in flight.
class gated_backend {
 public:
  gated_backend(std::string name, net::io_context& io)
      : name_(std::move(name)), gate_(std::make_shared<net::steady_timer>(io, net::steady_timer::time_point::max())) {}

  std::string_view name() const noexcept { return name_; }
  /// Lets every waiting and later request through.
  void open() { gate_->expires_at(net::steady_timer::time_point::min()); }

  net::awaitable<chat_response> complete(const chat_request& request) {
    auto gate = gate_;
    boost::system::error_code ignored;
    co_await gate->async_wait(net::redirect_error(net::use_awaitable, ignored));
    chat_response response;
    response.content = name_ + " answers " + request.messages.back().content;
    response.usage = {.prompt_tokens = 10, .completion_tokens = 2, .cached_prompt_tokens = 6};
    co_return response;
  }
  net::awaitable<chat_response> stream(const chat_request& request, llmgate::chunk_handler) {
    co_return co_await complete(request);
  }

 private:
  std::string name_;
  std::shared_ptr<net::steady_timer> gate_;
};

// A replica that sends one chunk of its stream, then loses the connection.
struct breaks_mid_stream {
  std::shared_ptr<int> calls = std::make_shared<int>(0);
  std::string_view name() const noexcept { return "breaks"; }
  net::awaitable<chat_response> complete(const chat_request&) {
    ++*calls;
    throw lost();
    co_return chat_response{};
  }
  net::awaitable<chat_response> stream(const chat_request&, llmgate::chunk_handler on_chunk) {
    ++*calls;
    llmgate::chat_chunk chunk;
    chunk.content_delta = "Once";
    co_await on_chunk(chunk);
    throw lost();
  }
  static backend_error lost() {
    return backend_error(errc::upstream_unreachable, "connection reset", {.backend = "breaks", .retryable = true});
  }
};

scripted_backend failing(std::string name, unsigned status) {
  return scripted_backend(name, [name, status](const chat_request&) -> chat_response {
    throw backend_error(errc::upstream_error, name + " says " + std::to_string(status),
                        {.backend = name, .status = status, .retryable = status >= 500});
  });
}

template <class Policy = configured_balancing>
std::shared_ptr<replica_pool<Policy, test_clock>> state_of(std::vector<std::string> names, Policy policy = {},
                                                             test_clock clock = test_clock::adjustable()) {
  std::vector<llmgate::replica_spec> specs;
  for (auto& name : names) specs.push_back({.name = std::move(name)});
  return std::make_shared<replica_pool<Policy, test_clock>>(std::move(specs), std::move(policy),
                                                            llmgate::replica_pool_options{}, clock);
}

boost::json::object entry(std::string_view json) { return boost::json::parse(json).as_object(); }

std::string refusal(std::string_view json) {
  try {
    const auto backends = llmgate::detail::read_backends(boost::json::array{entry(json)}, "backends",
                                                         llmgate::builtin_backend_kinds);
    llmgate::detail::check_backend(backends.front(), "backends[0]", llmgate::builtin_backend_kinds);
  } catch (const llmgate::config_error& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

BOOST_AUTO_TEST_SUITE(backend_pool_test)

BOOST_AUTO_TEST_CASE(round_robin_takes_each_available_replica_in_turn) {
  llmgate::round_robin policy;
  std::vector<replica_view> replicas(3);
  BOOST_TEST(choices(policy, replicas, 4) == (std::vector<std::size_t>{0, 1, 2, 0}), boost::test_tools::per_element());
  replicas[2].available = false;  // down
  BOOST_TEST(choices(policy, replicas, 3) == (std::vector<std::size_t>{1, 0, 1}), boost::test_tools::per_element());
  for (auto& r : replicas) r.available = false;
  BOOST_TEST(policy.choose({}, replicas).replica == replica_choice::none);
  BOOST_TEST(policy.choose({}, replicas).reason == "round_robin");
}

BOOST_AUTO_TEST_CASE(least_busy_takes_the_fewest_in_flight_and_rotates_ties) {
  llmgate::least_busy policy;
  std::vector<replica_view> replicas(3);
  replicas[0].in_flight = 4;  // busy
  replicas[1].in_flight = 1;
  replicas[2].in_flight = 1;
  BOOST_TEST(choices(policy, replicas, 3) == (std::vector<std::size_t>{1, 2, 1}), boost::test_tools::per_element());
  replicas[1].available = false;
  BOOST_TEST(policy.choose({}, replicas).replica == 2u);
}

BOOST_AUTO_TEST_CASE(latency_tries_each_replica_once_then_avoids_the_slow_one) {
  llmgate::lowest_latency policy;
  std::vector<replica_view> replicas(3);
  replicas[0] = {.ttft_ewma_ms = 40, .measured = true};
  replicas[1] = {.ttft_ewma_ms = 400, .measured = true};  // slow
  BOOST_TEST(policy.choose({}, replicas).replica == 2u);   // never measured: tried first
  replicas[2] = {.ttft_ewma_ms = 50, .measured = true};
  BOOST_TEST(policy.choose({}, replicas).replica == 0u);
  replicas[0].in_flight = 1;  // 40 x 2 = 80 against 50 x 1
  BOOST_TEST(policy.choose({}, replicas).replica == 2u);
  replicas[2].in_flight = 8;  // 50 x 9 = 450 against the slow one's 400
  BOOST_TEST(policy.choose({}, replicas).replica == 0u);
  BOOST_TEST(policy.choose({}, replicas).reason == "latency");
}

BOOST_AUTO_TEST_CASE(weighted_spreads_in_proportion_and_evenly) {
  llmgate::weighted policy;
  std::vector<replica_view> replicas(3);
  replicas[0].weight = 5;
  BOOST_TEST(choices(policy, replicas, 7) == (std::vector<std::size_t>{0, 0, 1, 0, 2, 0, 0}),
             boost::test_tools::per_element());
  replicas[0].available = false;
  BOOST_TEST(choices(policy, replicas, 4) == (std::vector<std::size_t>{1, 2, 1, 2}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_prefix_stays_on_its_replica_until_that_one_is_over_its_bound) {
  prefix_affinity policy({.epsilon = 0.25});
  std::vector<replica_view> replicas(3);
  const pool_request hot{.prefix = 42};
  const auto first = policy.choose(hot, replicas);
  BOOST_TEST(first.reason == "prefix new");
  // The same prefix goes back there while the replica is within its bound.
  for (int i = 0; i < 5; ++i) {
    const auto again = policy.choose(hot, replicas);
    BOOST_TEST(again.replica == first.replica);
    BOOST_TEST(again.reason == "prefix held");
  }
  // With 3 in flight there and none elsewhere, the bound is
  // ceil(1.25 x 4 / 3) = 2: the prefix moves, and stays where it moved.
  replicas[first.replica].in_flight = 3;
  const auto moved = policy.choose(hot, replicas);
  BOOST_TEST(moved.replica != first.replica);
  BOOST_TEST(moved.reason == "prefix moved: its replica is over the load bound");
  replicas[first.replica].in_flight = 0;
  BOOST_TEST(policy.choose(hot, replicas).replica == moved.replica);
  // A replica that is down loses its prefixes to the next in their order.
  replicas[moved.replica].available = false;
  const auto away = policy.choose(hot, replicas);
  BOOST_TEST(away.reason == "prefix moved: its replica is unavailable");
  BOOST_TEST(away.replica != moved.replica);
  // No prefix: the least busy replica.
  replicas[moved.replica].available = true;
  replicas[0].in_flight = 2, replicas[1].in_flight = 0, replicas[2].in_flight = 1;
  BOOST_TEST(policy.choose({}, replicas).replica == 1u);
  BOOST_TEST(policy.choose({}, replicas).reason == "least_busy");
}

BOOST_AUTO_TEST_CASE(a_new_prefix_goes_where_every_worker_would_send_it) {
  // Rendezvous order: two policies that never met place 200 prefixes alike,
  // and over 3 replicas of equal weight each gets a fair share.
  prefix_affinity one, other;
  std::vector<replica_view> replicas(3);
  std::vector<int> per_replica(3, 0);
  for (std::uint64_t prefix = 1; prefix <= 200; ++prefix) {
    const auto a = one.choose({.prefix = prefix}, replicas).replica;
    BOOST_TEST(a == other.choose({.prefix = prefix}, replicas).replica);
    ++per_replica[a];
  }
  for (const int n : per_replica) BOOST_TEST((n >= 45 && n <= 90), "a replica got " << n << " of 200 prefixes");
}

BOOST_AUTO_TEST_CASE(bounded_loads_spread_a_hot_prefix) {
  // One prefix, requests arriving while none finishes: every replica's load
  // stays within ceil((1 + epsilon) x the mean).
  prefix_affinity policy({.epsilon = 0.25});
  std::vector<replica_view> replicas(4);
  for (std::size_t placed = 0; placed < 40; ++placed) {
    const auto choice = policy.choose({.prefix = 7}, replicas);
    BOOST_REQUIRE(choice.replica != replica_choice::none);
    ++replicas[choice.replica].in_flight;
    const double mean = static_cast<double>(placed + 1) / 4;
    for (const auto& r : replicas) BOOST_TEST(r.in_flight <= std::ceil(1.25 * mean));
  }
  // 40 over 4: each time its replica is over the bound the prefix moves to
  // the idlest one within it, so none is left idle while another queues.
  std::vector<std::size_t> loads;
  for (const auto& r : replicas) loads.push_back(r.in_flight);
  std::sort(loads.begin(), loads.end());
  BOOST_TEST(loads == (std::vector<std::size_t>{8, 10, 10, 12}), boost::test_tools::per_element());
  // Two requests in flight: the bound ceil(1.25 x 2 / 4) = 1 moves the second.
  prefix_affinity fresh({.epsilon = 0.25});
  std::vector<replica_view> idle(4);
  const auto a = fresh.choose({.prefix = 7}, idle).replica;
  ++idle[a].in_flight;
  BOOST_TEST(fresh.choose({.prefix = 7}, idle).replica != a);
  // A looser epsilon keeps it: ceil(3 x 2 / 4) = 2.
  prefix_affinity loose({.epsilon = 2.0});
  std::vector<replica_view> idle2(4);
  const auto b = loose.choose({.prefix = 7}, idle2).replica;
  ++idle2[b].in_flight;
  BOOST_TEST(loose.choose({.prefix = 7}, idle2).replica == b);
}

BOOST_AUTO_TEST_CASE(a_stream_of_short_requests_for_one_prefix_is_bounded_by_recent_placements) {
  // Nothing stays in flight, so only the pool's last 24 placements (8 per
  // replica) bound the replica that holds the prefix: 30 requests come to
  // 13, 12 and 5 (whichever replicas its order names), 1.3 x the mean at most.
  auto pool = state_of({"a", "b", "c"}, prefix_affinity({.epsilon = 0.25}));
  const std::vector<bool> none_tried(3, false);
  for (int i = 0; i < 30; ++i) pool->place({.prefix = 99}, none_tried).succeeded({});
  std::vector<std::uint64_t> requests;
  for (const auto& r : pool->reports()) requests.push_back(r.requests);
  std::sort(requests.begin(), requests.end());
  BOOST_TEST(requests == (std::vector<std::uint64_t>{5, 12, 13}), boost::test_tools::per_element());
  // The same views with the window given: a replica with 6 of the recent placements and none
  // in flight is over ceil(1.25 x 7 / 3) = 3.
  prefix_affinity policy({.epsilon = 0.25});
  std::vector<replica_view> replicas(3);
  const auto first = policy.choose({.prefix = 5}, replicas).replica;
  replicas[first].recent = 6;
  BOOST_TEST(policy.choose({.prefix = 5}, replicas).replica != first);
}

BOOST_AUTO_TEST_CASE(the_prefixes_remembered_are_bounded_and_the_recent_ones_kept) {
  prefix_affinity policy({.epsilon = 0.25, .remembered_prefixes = 8});
  std::vector<replica_view> replicas(3);
  for (std::uint64_t p = 1; p <= 5; ++p) (void)policy.choose({.prefix = p}, replicas);
  BOOST_TEST(policy.remembered(1).has_value());  // moved to the newer generation
  for (std::uint64_t p = 6; p <= 12; ++p) (void)policy.choose({.prefix = p}, replicas);
  BOOST_TEST(!policy.remembered(2).has_value());  // not used since the newer generation filled twice
  BOOST_TEST(policy.remembered(12).has_value());
}

BOOST_AUTO_TEST_CASE(the_prefix_key_is_the_schema_path_or_the_leading_messages) {
  using llmgate::prefix_key;
  // Same system prompt, other questions: one key; another system prompt or model: another.
  BOOST_TEST(prefix_key(asks("You are terse.", "Why is the sky blue?")) ==
             prefix_key(asks("You are terse.", "What is a monad?")));
  BOOST_TEST(prefix_key(asks("You are terse.", "Why?")) != prefix_key(asks("You are verbose.", "Why?")));
  BOOST_TEST(prefix_key(asks("You are terse.", "Why?")) != prefix_key(asks("You are terse.", "Why?", "other")));
  // Past the budget the bytes do not count.
  BOOST_TEST(prefix_key(asks(std::string(100, 'a') + "x", "q"), 50) ==
             prefix_key(asks(std::string(100, 'a') + "y", "q"), 50));
  BOOST_TEST(prefix_key(asks(std::string(100, 'a') + "x", "q"), 200) !=
             prefix_key(asks(std::string(100, 'a') + "y", "q"), 200));
  // One message: its first bytes.
  chat_request alone;
  alone.model = "m";
  alone.messages.push_back({.role = "user", .content = "Summarise this report"});
  chat_request other_alone = alone;
  other_alone.messages[0].content = "Translate this poem";
  BOOST_TEST(prefix_key(alone) != prefix_key(other_alone));
  // A compiled PML prompt keys on its schema and version, whatever its modules and text.
  const auto layout = [](std::string schema, std::string version, std::string path) {
    auto made = std::make_shared<llmgate::prompt_layout>();
    made->schema = std::move(schema), made->version = std::move(version), made->prefix_path = std::move(path);
    return made;
  };
  chat_request pml = asks("You plan trips.", "Three days in Rome");
  pml.layout = layout("trip_plan", "1", "trip_plan@1:rome");
  chat_request pml_other = asks("You plan trips for families.", "A week in Oslo");
  pml_other.layout = layout("trip_plan", "1", "trip_plan@1:oslo;family");
  BOOST_TEST(prefix_key(pml) == prefix_key(pml_other));
  pml_other.layout = layout("trip_plan", "2", "trip_plan@2:rome");
  BOOST_TEST(prefix_key(pml) != prefix_key(pml_other));
  BOOST_TEST(prefix_key(pml) != prefix_key(asks("You plan trips.", "Three days in Rome")));
  BOOST_TEST(prefix_key(pml) != 0u);
}

BOOST_AUTO_TEST_CASE(a_replica_that_failed_rests_then_one_request_probes_it) {
  const auto clock = test_clock::adjustable();
  auto pool = state_of({"a", "b"}, llmgate::round_robin{}, clock);
  const std::vector<bool> none_tried(2, false);
  {
    auto lease = pool->place({}, none_tried);
    BOOST_TEST(lease.replica() == 0u);
    lease.failed(true);  // a: connection refused
  }
  // a rests 1 s: everything goes to b.
  for (int i = 0; i < 3; ++i) {
    auto lease = pool->place({}, none_tried);
    BOOST_TEST(lease.replica() == 1u);
    lease.succeeded({});
  }
  BOOST_TEST(pool->reports()[0].up == false);
  clock.advance(1001ms);
  auto probe = pool->place({}, none_tried);
  BOOST_TEST(probe.replica() == 0u);
  // While the probe is out, a gets nothing more.
  for (int i = 0; i < 2; ++i) {
    auto lease = pool->place({}, none_tried);
    BOOST_TEST(lease.replica() == 1u);
    lease.succeeded({});
  }
  probe.failed(true);  // still down: it rests twice as long
  clock.advance(1500ms);
  BOOST_TEST(pool->place({}, none_tried).replica() == 1u);
  clock.advance(600ms);  // 2.1 s after the second failure
  auto second_probe = pool->place({}, none_tried);
  BOOST_TEST(second_probe.replica() == 0u);
  second_probe.succeeded({.prompt_tokens = 12, .cached_prompt_tokens = 8});
  // Recovered: back in turn.
  std::vector<std::size_t> after;
  for (int i = 0; i < 4; ++i) {
    auto lease = pool->place({}, none_tried);
    after.push_back(lease.replica());
    lease.succeeded({});
  }
  BOOST_TEST(after == (std::vector<std::size_t>{1, 0, 1, 0}), boost::test_tools::per_element());
  const auto reports = pool->reports();
  BOOST_TEST(reports[0].up);
  BOOST_TEST(reports[0].failures == 2u);
  BOOST_TEST(reports[0].requests == 5u);  // the first call, two probes, two after
  BOOST_TEST(reports[0].prompt_tokens == 12u);
  BOOST_TEST(reports[0].reused_tokens == 8u);
  BOOST_TEST(reports[1].requests == 8u);
  BOOST_TEST(reports[1].in_flight == 0u);
}

BOOST_AUTO_TEST_CASE(a_request_fails_over_to_another_replica_but_not_for_its_own_mistake) {
  net::io_context io;
  auto down = failing("down", 503);
  auto up = scripted_backend::echo("up");
  backend_pool<any_backend, llmgate::round_robin, test_clock> pool("p", {any_backend(down), any_backend(up)},
                                                                   state_of({"p#0", "p#1"}, llmgate::round_robin{}));
  const auto answer = llmgate::run_blocking(io, pool.complete(asks("s", "hello")));
  BOOST_TEST(answer.content == "echo: hello");
  BOOST_TEST(answer.backend == "p#1; round_robin");
  BOOST_TEST(down.calls() == 1u);
  // p#0 rests now: the next requests go to p#1 without trying it.
  (void)llmgate::run_blocking(io, pool.complete(asks("s", "again")));
  BOOST_TEST(down.calls() == 1u);
  BOOST_TEST(up.calls() == 2u);

  // A 400 is the request's: not sent to another replica, not held against this one.
  auto refuses = failing("refuses", 400);
  auto other = scripted_backend::echo("other");
  backend_pool<any_backend, llmgate::round_robin, test_clock> strict(
      "q", {any_backend(refuses), any_backend(other)}, state_of({"q#0", "q#1"}, llmgate::round_robin{}));
  BOOST_CHECK_THROW(llmgate::run_blocking(io, strict.complete(asks("s", "bad"))), backend_error);
  BOOST_TEST(other.calls() == 0u);
  BOOST_TEST(strict.state()->reports()[0].up);
  BOOST_TEST(strict.state()->reports()[0].failures == 0u);

  // Every replica down: a retryable 503 for the fallback list to move on.
  auto also_down = failing("also_down", 502);
  backend_pool<any_backend, llmgate::round_robin, test_clock> dead(
      "r", {any_backend(failing("r0", 503)), any_backend(also_down)}, state_of({"r#0", "r#1"}, llmgate::round_robin{}));
  try {
    (void)llmgate::run_blocking(io, dead.complete(asks("s", "x")));
    BOOST_FAIL("expected a backend_error");
  } catch (const backend_error& e) {
    BOOST_TEST(e.status() == 502u);  // the last replica's own error
  }
  try {
    (void)llmgate::run_blocking(io, dead.complete(asks("s", "x")));
    BOOST_FAIL("expected a backend_error");
  } catch (const backend_error& e) {
    BOOST_TEST(e.status() == 503u);
    BOOST_TEST(e.retryable());
    BOOST_TEST(std::string(e.what()) == "every replica of r is resting after failures; none can take the request: "
                                        "model server unreachable or connection lost");
  }
  BOOST_TEST(also_down.calls() == 1u);
}

BOOST_AUTO_TEST_CASE(a_stream_fails_over_before_its_first_chunk_only) {
  net::io_context io;
  breaks_mid_stream breaks;
  auto up = scripted_backend::echo("up");
  backend_pool<any_backend, llmgate::round_robin, test_clock> pool("p", {any_backend(breaks), any_backend(up)},
                                                                   state_of({"p#0", "p#1"}, llmgate::round_robin{}));
  llmgate::test::chunk_log seen;
  BOOST_CHECK_THROW(llmgate::run_blocking(io, pool.stream(asks("s", "tell a story"), seen.handler())), backend_error);
  BOOST_TEST(*breaks.calls == 1);
  BOOST_TEST(up.calls() == 0u);  // the caller had seen "Once"
  BOOST_TEST(seen.text() == "Once");
  // A replica that fails before any chunk is passed over for the next.
  auto down = failing("down", 500);
  backend_pool<any_backend, llmgate::round_robin, test_clock> second("q", {any_backend(down), any_backend(up)},
                                                                     state_of({"q#0", "q#1"}, llmgate::round_robin{}));
  llmgate::test::chunk_log chunks;
  const auto answer = llmgate::run_blocking(io, second.stream(asks("s", "two words"), chunks.handler()));
  BOOST_TEST(chunks.text() == "echo: two words");
  BOOST_TEST(answer.backend == "q#1; round_robin");
}

BOOST_AUTO_TEST_CASE(requests_in_flight_are_counted_and_steer_the_next_ones) {
  net::io_context io;
  gated_backend slow("slow", io), quick("quick", io);
  backend_pool<gated_backend, llmgate::least_busy, test_clock> pool(
      "p", {slow, quick}, state_of({"p#0", "p#1"}, llmgate::least_busy{}));
  std::vector<std::string> answered;
  std::deque<chat_request> asked;  // alive while their calls are
  const auto ask = [&](std::string question) {
    asked.push_back(asks("s", std::move(question)));
    net::co_spawn(io, pool.complete(asked.back()),
                  [&](std::exception_ptr, chat_response r) { answered.push_back(r.backend); });
  };
  ask("one");
  ask("two");
  ask("three");
  io.poll();
  const auto busy = pool.state()->reports();
  BOOST_TEST(busy[0].in_flight == 2u);  // least busy, ties in turn: p#0, p#1, p#0
  BOOST_TEST(busy[1].in_flight == 1u);
  quick.open();
  io.poll();
  BOOST_TEST(pool.state()->reports()[1].in_flight == 0u);
  ask("four");  // p#1 is idle now
  io.poll();
  BOOST_TEST(pool.state()->reports()[1].in_flight == 0u);  // its gate is open: answered at once
  slow.open();
  io.run();
  BOOST_TEST(answered == (std::vector<std::string>{"p#1; least_busy", "p#1; least_busy", "p#0; least_busy",
                                                   "p#0; least_busy"}),
             boost::test_tools::per_element());
  const auto done = pool.state()->reports();
  BOOST_TEST(done[0].in_flight == 0u);
  BOOST_TEST(done[0].reused_tokens == 12u);  // two answers of 6 cached tokens
  BOOST_TEST(done[1].prompt_tokens == 20u);
}

BOOST_AUTO_TEST_CASE(a_pooled_entry_is_read_and_its_mistakes_refused_by_name) {
  const auto backends = llmgate::detail::read_backends(
      boost::json::array{entry(R"({"name": "llama", "kind": "llama.cpp", "replicas": ["http://127.0.0.1:8081",
        {"base_url": "http://127.0.0.1:8082", "weight": 3, "name": "big"}], "balance": {"policy": "weighted"}})")},
      "backends", llmgate::builtin_backend_kinds);
  const auto& pool = backends.front();
  BOOST_REQUIRE(pool.replicas.size() == 2u);
  BOOST_TEST(pool.replicas[0].name == "llama#0");
  BOOST_TEST(pool.replicas[0].base_url == "http://127.0.0.1:8081");
  BOOST_TEST(pool.replicas[0].weight == 1u);
  BOOST_TEST(pool.replicas[1].name == "big");
  BOOST_TEST(pool.replicas[1].weight == 3u);
  BOOST_TEST(pool.balance.policy == "weighted");
  BOOST_TEST(pool.balance.epsilon == 0.25);
  BOOST_TEST(pool.balance.prefix_tokens == 1024u);
  BOOST_TEST(pool.retries == 0u);  // the next replica is the retry
  BOOST_TEST(refusal(R"({"name": "p", "kind": "openai", "replicas": ["http://a:1"]})") == "accepted");
  BOOST_TEST(refusal(R"({"name": "p", "kind": "openai", "replicas": ["http://a:1"], "retries": 1})") == "accepted");
  BOOST_TEST(refusal(R"({"name": "p", "kind": "openai", "base_url": "http://a:1", "replicas": ["http://b:1"]})") ==
             "config: backends[0].replicas and base_url exclude each other: a pool's addresses are its replicas'");
  BOOST_TEST(refusal(R"({"name": "p", "kind": "openai", "replicas": []})") ==
             "config: backends[0].replicas must list at least one replica");
  BOOST_TEST(refusal(R"({"name": "p", "kind": "openai", "replicas": ["ftp://a"]})") ==
             "config: backends[0].replicas[0].base_url must be an http:// or https:// URL with a host, not \"ftp://a\"");
  BOOST_TEST(refusal(R"({"name": "p", "kind": "openai", "replicas": [{"base_url": "http://a:1", "weight": 0}]})") ==
             "config: backends[0].replicas[0].weight must be between 1 and 1000, not 0");
  BOOST_TEST(refusal(R"({"name": "p", "kind": "openai", "replicas": [{"base_url": "http://a:1", "name": "x"},
                                                                     {"base_url": "http://b:1", "name": "x"}]})") ==
             "config: backends[0].replicas[1].name repeats \"x\"");
  BOOST_TEST(refusal(R"({"name": "p", "kind": "openai", "replicas": ["http://a:1"], "balance": {"policy": "random"}})") ==
             "config: backends[0].balance.policy must be one of \"prefix\", \"round_robin\", \"least_busy\", "
             "\"latency\", \"weighted\" (not \"random\")");
  BOOST_TEST(refusal(R"({"name": "p", "kind": "openai", "replicas": ["http://a:1"], "balance": {"epsilon": -1}})") ==
             "config: backends[0].balance.epsilon must be between 0 and 10, not -1");
  BOOST_TEST(refusal(R"({"name": "p", "kind": "openai", "replicas": ["http://a:1"], "balance": {"polcy": "x"}})") ==
             "config: backends[0].balance.polcy is not a known key; did you mean policy?");
  BOOST_TEST(refusal(R"({"name": "p", "kind": "openai", "base_url": "http://a:1", "balance": {}})") ==
             "config: backends[0].balance needs \"replicas\" to balance over");
}

BOOST_AUTO_TEST_SUITE_END()
