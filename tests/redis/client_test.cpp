// The Redis client against real redis-server children (redis_server.hpp):
// replies of every kind, pipelining, timeouts, a server killed and
// restarted, logins, TLS, a replica, and a cluster's routing.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <future>
#include <stdexcept>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/asio/write.hpp>

#include "llmgate/redis/client.hpp"
#include "llmgate/redis/resp_reader.hpp"
#include "redis_cluster.hpp"
#include "redis_server.hpp"

namespace llmgate::redis {
namespace {

using namespace std::string_literals;

using llmgate::test::redis_server;
using llmgate::test::redis_server_options;
using llmgate::test::skip_without_redis;

// Runs `task` on `io` until it ends (the connections' reader loops keep
// `io` busy forever, so io.run() would not return).
template <class T>
T run(net::io_context& io, net::awaitable<T> task) {
  auto future = net::co_spawn(io, std::move(task), net::use_future);
  io.restart();
  while (future.wait_for(std::chrono::seconds(0)) != std::future_status::ready) io.run_one();
  return future.get();
}

// The llmgate::error `task` throws; fails the test when it throws none.
template <class T>
error failure_of(net::io_context& io, net::awaitable<T> task) {
  try {
    run(io, std::move(task));
  } catch (const error& failure) {
    return failure;
  }
  throw std::logic_error("no llmgate::error was thrown");
}

client_options options_for(const redis_server& server) {
  client_options options;
  options.endpoints = {server.endpoint()};
  return options;
}

std::string name_of(const redis_server& server) { return "redis 127.0.0.1:" + std::to_string(server.port()) + ": "; }

// A TCP server on 127.0.0.1 that reads what a client sends first and
// answers `answer` (or nothing at all when it is empty), then keeps the
// connection open: a server that breaks the protocol, or never answers.
class scripted_server {
 public:
  scripted_server(net::io_context& io, std::string answer)
      : acceptor_(io, {net::ip::make_address("127.0.0.1"), 0}) {
    net::co_spawn(io, serve(acceptor_, std::move(answer)), net::detached);
  }
  endpoint where() const { return {"127.0.0.1", acceptor_.local_endpoint().port()}; }

 private:
  static net::awaitable<void> serve(net::ip::tcp::acceptor& acceptor, std::string answer) {
    std::vector<net::ip::tcp::socket> kept;
    for (;;) {
      auto [accept_code, socket] = co_await acceptor.async_accept(net::as_tuple(net::use_awaitable));
      if (accept_code) co_return;  // the server is gone
      char first[4096];
      co_await socket.async_read_some(net::buffer(first), net::as_tuple(net::use_awaitable));
      if (!answer.empty()) co_await net::async_write(socket, net::buffer(answer), net::as_tuple(net::use_awaitable));
      kept.push_back(std::move(socket));
    }
  }
  net::ip::tcp::acceptor acceptor_;
};

reply string_reply(std::string text) { return {.kind = reply_kind::string, .text = std::move(text)}; }
reply status_reply(std::string text) { return {.kind = reply_kind::status, .text = std::move(text)}; }
reply integer_reply(long long value) { return {.kind = reply_kind::integer, .integer = value}; }

}  // namespace

BOOST_AUTO_TEST_SUITE(client_test)

BOOST_AUTO_TEST_CASE(replies_of_every_kind_come_back_exactly) {
  if (skip_without_redis()) return;
  redis_server server;
  net::io_context io;
  client redis(io.get_executor(), options_for(server));
  run(io, redis.connect());
  BOOST_TEST(!redis.cluster());

  const std::string binary("a\0b\r\n\xff\x01 end", 11);
  BOOST_TEST((run(io, redis.exec({"SET", "binary", binary})) == status_reply("OK")));
  BOOST_TEST((run(io, redis.exec({"GET", "binary"})) == string_reply(binary)));
  BOOST_TEST((run(io, redis.exec({"SET", "", ""})) == status_reply("OK")));  // empty key and value
  BOOST_TEST((run(io, redis.exec({"GET", ""})) == string_reply("")));
  BOOST_TEST(run(io, redis.exec({"GET", "missing"})).is_nil());
  BOOST_TEST((run(io, redis.exec({"INCRBY", "counter", "-41"})) == integer_reply(-41)));
  BOOST_TEST((run(io, redis.exec({"RPUSH", "list", "x", binary, ""})) == integer_reply(3)));
  const reply list = run(io, redis.exec({"LRANGE", "list", "0", "-1"}));
  BOOST_TEST((list == reply{.kind = reply_kind::array, .elements = {string_reply("x"), string_reply(binary), string_reply("")}}));
  BOOST_TEST((run(io, redis.exec({"LRANGE", "missing", "0", "-1"})) == reply{.kind = reply_kind::array}));

  const reply refused = run(io, redis.exec({"INCR", "binary"}));
  BOOST_TEST(refused.is_error());
  BOOST_TEST(refused.text == "ERR value is not an integer or out of range");
  const reply unknown = run(io, redis.exec({"NOSUCHCOMMAND"}));
  BOOST_TEST(unknown.is_error());
  BOOST_TEST(unknown.text.starts_with("ERR unknown command 'NOSUCHCOMMAND'"));

  // Nested arrays with an error inside: a transaction's replies.
  const auto transaction = run(io, redis.exec_pipeline({{"MULTI"}, {"SET", "t", "1"}, {"INCR", "binary"}, {"EXEC"}}));
  BOOST_TEST(transaction.size() == 4u);
  BOOST_TEST((transaction[1] == status_reply("QUEUED")));
  BOOST_TEST(transaction[3].elements.size() == 2u);
  BOOST_TEST((transaction[3].elements[0] == status_reply("OK")));
  BOOST_TEST(transaction[3].elements[1].is_error());

  BOOST_CHECK_THROW(run(io, redis.exec({})), std::invalid_argument);
  BOOST_TEST((run(io, redis.exec({"PING"})) == status_reply("PONG")));  // the refusal sent nothing
  BOOST_TEST(run(io, redis.exec_pipeline({})).empty());
  BOOST_TEST(redis.statistics().errors == 0u);
  BOOST_TEST(redis.statistics().round_trips == 14u);  // INFO at connect, and each exec above that was sent
}

BOOST_AUTO_TEST_CASE(a_pipeline_of_a_thousand_commands_gets_each_its_own_reply) {
  if (skip_without_redis()) return;
  redis_server server;
  net::io_context io;
  client redis(io.get_executor(), options_for(server));
  run(io, redis.connect());
  std::vector<command> commands;
  for (int i = 0; i < 500; ++i) commands.push_back({"SET", "key:" + std::to_string(i), "value " + std::to_string(i)});
  for (int i = 0; i < 500; ++i) commands.push_back({"GET", "key:" + std::to_string(i)});
  const auto before = redis.statistics().round_trips;
  const auto replies = run(io, redis.exec_pipeline(commands));
  BOOST_TEST(redis.statistics().round_trips == before + 1);
  BOOST_TEST_REQUIRE(replies.size() == 1000u);
  for (int i = 0; i < 500; ++i) {
    BOOST_TEST((replies[i] == status_reply("OK")));
    BOOST_TEST((replies[500 + i] == string_reply("value " + std::to_string(i))));
  }
}

BOOST_AUTO_TEST_CASE(many_coroutines_share_the_connections_and_each_gets_its_own_replies) {
  if (skip_without_redis()) return;
  redis_server server;
  net::io_context io;
  auto options = options_for(server);
  options.connections_per_node = 2;
  client redis(io.get_executor(), options);
  run(io, redis.connect());
  constexpr int coroutines = 16, commands_each = 100;
  std::vector<std::future<int>> done;
  for (int c = 0; c < coroutines; ++c) {
    done.push_back(net::co_spawn(io, [&redis, c]() -> net::awaitable<int> {
      int right = 0;
      for (int i = 0; i < commands_each; ++i) {
        const std::string key = "c" + std::to_string(c) + ":" + std::to_string(i);
        const std::string value = std::string(static_cast<std::size_t>(i % 7) * 100, 'v') + key;
        // (GCC 12 cannot compile a braced list inside a co_await expression.)
        if (i % 10 == 0) {  // now and then a pipeline among the single commands
          auto pipeline = redis.exec_pipeline({{"SET", key, value}, {"GET", key}, {"STRLEN", key}});
          const auto replies = co_await std::move(pipeline);
          right += replies[1] == reply{.kind = reply_kind::string, .text = value} &&
                   replies[2].integer == static_cast<long long>(value.size());
          continue;
        }
        auto set = redis.exec({"SET", key, value});
        co_await std::move(set);
        auto get = redis.exec({"GET", key});
        const reply got = co_await std::move(get);  // (GCC 12: no temporaries beside a co_await)
        right += got == reply{.kind = reply_kind::string, .text = value};
      }
      co_return right;
    }, net::use_future));
  }
  io.restart();
  for (auto& d : done) {
    while (d.wait_for(std::chrono::seconds(0)) != std::future_status::ready) io.run_one();
    BOOST_TEST(d.get() == commands_each);
  }
  BOOST_TEST(redis.statistics().reconnects == 0u);
  BOOST_TEST(redis.statistics().errors == 0u);
}

BOOST_AUTO_TEST_CASE(a_command_past_its_timeout_fails_and_the_next_one_works_on_a_new_connection) {
  if (skip_without_redis()) return;
  redis_server server;
  net::io_context io;
  auto options = options_for(server);
  options.command_timeout = std::chrono::milliseconds(100);
  options.connections_per_node = 1;  // the sleeping command and the one behind it share the connection
  client redis(io.get_executor(), options);
  run(io, redis.connect());
  run(io, redis.exec({"SET", "k", "v"}));

  auto sleeping = net::co_spawn(io, redis.exec({"DEBUG", "SLEEP", "0.5"}), net::use_future);
  auto behind = net::co_spawn(io, redis.exec({"GET", "k"}), net::use_future);
  const auto started = std::chrono::steady_clock::now();
  io.restart();
  while (sleeping.wait_for(std::chrono::seconds(0)) != std::future_status::ready ||
         behind.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
    io.run_one();
  const auto waited = std::chrono::steady_clock::now() - started;
  BOOST_TEST(waited < std::chrono::milliseconds(400));  // not the whole sleep
  try {
    sleeping.get();
    BOOST_FAIL("DEBUG SLEEP 0.5 did not time out");
  } catch (const error& failure) {
    BOOST_TEST((failure.code() == errc::store_timeout));
    BOOST_TEST(std::string(failure.what()).starts_with(name_of(server) + "no reply within 100 ms"));
  }
  try {
    behind.get();
    BOOST_FAIL("the command behind the timed-out one did not fail");
  } catch (const error& failure) {
    BOOST_TEST((failure.code() == errc::store_unreachable));
    BOOST_TEST(std::string(failure.what()).find("the connection was closed") != std::string::npos);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the server sleeps on
  BOOST_TEST((run(io, redis.exec({"GET", "k"})) == string_reply("v")));
  BOOST_TEST(redis.statistics().reconnects == 1u);
  BOOST_TEST(redis.statistics().errors == 2u);
}

BOOST_AUTO_TEST_CASE(a_cancelled_command_leaves_the_connection_and_its_late_reply_goes_to_no_one) {
  if (skip_without_redis()) return;
  redis_server server;
  net::io_context io;
  auto options = options_for(server);
  options.connections_per_node = 1;
  client redis(io.get_executor(), options);
  run(io, redis.connect());
  run(io, redis.exec({"SET", "k", "v"}));
  const auto first = run(io, [&]() -> net::awaitable<std::variant<reply, std::monostate>> {
    using namespace net::experimental::awaitable_operators;
    net::steady_timer impatience(io, std::chrono::milliseconds(50));
    auto sleep = redis.exec({"DEBUG", "SLEEP", "0.3"});
    co_return co_await (std::move(sleep) || impatience.async_wait(net::use_awaitable));
  }());
  BOOST_TEST(first.index() == 1u);  // the timer won; the exec was cancelled
  BOOST_TEST((run(io, redis.exec({"GET", "k"})) == string_reply("v")));  // not DEBUG's late +OK
  BOOST_TEST(redis.statistics().reconnects == 0u);
}

BOOST_AUTO_TEST_CASE(a_server_killed_gives_errors_and_restarted_serves_again) {
  if (skip_without_redis()) return;
  redis_server server;
  net::io_context io;
  client redis(io.get_executor(), options_for(server));
  run(io, redis.connect());
  BOOST_TEST((run(io, redis.exec({"SET", "k", "v"})) == status_reply("OK")));

  server.kill();
  for (int i = 0; i < 4; ++i) {  // both pooled connections, lost then refused
    const error failure = failure_of(io, redis.exec({"GET", "k"}));
    BOOST_TEST((failure.code() == errc::store_unreachable));
    BOOST_TEST(std::string(failure.what()).starts_with(name_of(server)));
  }
  const error refused = failure_of(io, redis.exec({"GET", "k"}));
  BOOST_TEST(std::string(refused.what()).starts_with(name_of(server) + "connection refused"));

  server.restart();
  BOOST_TEST(run(io, redis.exec({"GET", "k"})).is_nil());  // nothing persisted
  BOOST_TEST((run(io, redis.exec({"SET", "k", "again"})) == status_reply("OK")));
  BOOST_TEST((run(io, redis.exec({"GET", "k"})) == string_reply("again")));
  BOOST_TEST(redis.statistics().reconnects >= 1u);
}

BOOST_AUTO_TEST_CASE(nothing_listening_is_a_clear_connection_refused) {
  if (skip_without_redis()) return;
  std::uint16_t port;
  {
    redis_server gone;
    port = gone.port();
  }
  net::io_context io;
  client redis(io.get_executor(), {.endpoints = {{"127.0.0.1", port}}});
  const error failure = failure_of(io, redis.connect());
  BOOST_TEST((failure.code() == errc::store_unreachable));
  BOOST_TEST(std::string(failure.what()).starts_with("redis 127.0.0.1:" + std::to_string(port) + ": connection refused"));
}

BOOST_AUTO_TEST_CASE(a_server_that_breaks_the_protocol_is_a_store_error_naming_it) {
  net::io_context io;
  scripted_server server(io, "?garbage\r\n");
  client redis(io.get_executor(), {.endpoints = {server.where()}});
  const error failure = failure_of(io, redis.connect());
  BOOST_TEST((failure.code() == errc::store_error));
  BOOST_TEST(std::string(failure.what()).starts_with("redis " + to_string(server.where()) +
                                                     ": protocol error: Protocol error, got \"?\" as reply type byte"));
}

BOOST_AUTO_TEST_CASE(a_server_that_never_answers_the_login_or_the_handshake_times_out) {
  net::io_context io;
  scripted_server server(io, "");
  client_options options{.endpoints = {server.where()}, .password = "secret",
                         .connect_timeout = std::chrono::milliseconds(100)};
  client login(io.get_executor(), options);
  const error no_login = failure_of(io, login.connect());
  BOOST_TEST((no_login.code() == errc::store_timeout));
  BOOST_TEST(std::string(no_login.what()).starts_with("redis " + to_string(server.where()) + ": no login within 100 ms"));

  options.tls.enabled = true;
  options.tls.verify = false;
  client handshake(io.get_executor(), options);
  const error no_handshake = failure_of(io, handshake.connect());
  BOOST_TEST((no_handshake.code() == errc::store_timeout));
  BOOST_TEST(std::string(no_handshake.what()).starts_with("redis " + to_string(server.where()) +
                                                          ": no TLS handshake within 100 ms"));
}

BOOST_AUTO_TEST_CASE(the_reader_gives_the_same_replies_fed_byte_by_byte_and_refuses_what_is_too_large) {
  const std::string bytes = "+OK\r\n$5\r\na\r\nb\0\r\n:-7\r\n$-1\r\n*-1\r\n*2\r\n*1\r\n-ERR in\r\n$0\r\n\r\n"s;
  const std::vector<reply> expected = {
      status_reply("OK"), string_reply("a\r\nb\0"s), integer_reply(-7), reply{}, reply{},
      reply{.kind = reply_kind::array,
            .elements = {reply{.kind = reply_kind::array, .elements = {reply{.kind = reply_kind::error, .text = "ERR in"}}},
                         string_reply("")}}};
  resp_reader whole, piecewise;
  whole.feed(bytes);
  std::vector<reply> at_once, byte_by_byte;
  while (auto r = whole.next()) at_once.push_back(std::move(*r));
  for (const char byte : bytes) {
    piecewise.feed(std::string_view(&byte, 1));
    while (auto r = piecewise.next()) byte_by_byte.push_back(std::move(*r));
  }
  BOOST_TEST((at_once == expected));
  BOOST_TEST((byte_by_byte == expected));

  resp_reader bounded(1000);
  bounded.feed("$2000\r\n" + std::string(1500, 'x'));  // incomplete, and already past the bound
  try {
    bounded.next();
    BOOST_FAIL("a reply past the bound was not refused");
  } catch (const error& failure) {
    BOOST_TEST((failure.code() == errc::store_error));
    BOOST_TEST(std::string(failure.what()).starts_with("redis: protocol error: a reply larger than 1000 bytes"));
  }
  resp_reader many(1000);
  std::string nils = "*100\r\n";
  for (int i = 0; i < 100; ++i) nils += "$-1\r\n";  // 500 bytes, but 100 nodes
  many.feed(nils);
  BOOST_CHECK_THROW(many.next(), error);
}

BOOST_AUTO_TEST_CASE(connect_takes_the_first_endpoint_that_answers) {
  if (skip_without_redis()) return;
  redis_server server;
  std::uint16_t gone_port;
  {
    redis_server gone;
    gone_port = gone.port();
  }
  net::io_context io;
  client redis(io.get_executor(), {.endpoints = {{"127.0.0.1", gone_port}, server.endpoint()}});
  run(io, redis.connect());
  BOOST_TEST((run(io, redis.exec({"PING"})) == status_reply("PONG")));
}

BOOST_AUTO_TEST_CASE(when_the_server_in_use_is_lost_the_next_endpoint_that_answers_takes_over) {
  if (skip_without_redis()) return;
  redis_server first, second;
  net::io_context io;
  client redis(io.get_executor(), {.endpoints = {first.endpoint(), second.endpoint()}});
  run(io, redis.connect());
  run(io, redis.exec({"SET", "where", "first"}));
  second.cli({"SET", "where", "second"});
  first.kill();
  BOOST_TEST((failure_of(io, redis.exec({"GET", "where"})).code() == errc::store_unreachable));
  BOOST_TEST((run(io, redis.exec({"GET", "where"})) == string_reply("second")));
  first.restart();
  BOOST_TEST((run(io, redis.exec({"GET", "where"})) == string_reply("second")));  // no going back while it answers
}

BOOST_AUTO_TEST_CASE(an_acl_user_logs_in_and_a_wrong_password_is_a_clear_refusal) {
  if (skip_without_redis()) return;
  redis_server server({.user = "gateway", .user_password = "s3cret"});
  net::io_context io;
  auto options = options_for(server);
  options.user = "gateway";
  options.password = "s3cret";
  client redis(io.get_executor(), options);
  run(io, redis.connect());
  BOOST_TEST((run(io, redis.exec({"ACL", "WHOAMI"})) == string_reply("gateway")));

  options.password = "wrong";
  client refused(io.get_executor(), options);
  const error failure = failure_of(io, refused.connect());
  BOOST_TEST((failure.code() == errc::store_unreachable));
  BOOST_TEST(std::string(failure.what()).starts_with(
      name_of(server) + "AUTH refused: WRONGPASS invalid username-password pair or user is disabled."));
}

BOOST_AUTO_TEST_CASE(requirepass_needs_the_password) {
  if (skip_without_redis()) return;
  redis_server server({.password = "pass word"});
  net::io_context io;
  auto options = options_for(server);
  options.password = "pass word";
  client redis(io.get_executor(), options);
  run(io, redis.connect());
  BOOST_TEST((run(io, redis.exec({"PING"})) == status_reply("PONG")));

  client without(io.get_executor(), options_for(server));
  const error missing = failure_of(io, without.connect());
  BOOST_TEST((missing.code() == errc::store_unreachable));
  BOOST_TEST(std::string(missing.what()).starts_with(name_of(server) + "login required: NOAUTH Authentication required."));

  options.password = "wrong";
  client wrong(io.get_executor(), options);
  const error refused = failure_of(io, wrong.connect());
  BOOST_TEST(std::string(refused.what()).starts_with(name_of(server) + "AUTH refused: WRONGPASS"));
}

BOOST_AUTO_TEST_CASE(a_database_is_selected_on_every_connection) {
  if (skip_without_redis()) return;
  redis_server server;
  net::io_context io;
  auto options = options_for(server);
  options.database = 3;
  client redis(io.get_executor(), options);
  run(io, redis.connect());
  for (int i = 0; i < 4; ++i) run(io, redis.exec({"SET", "in3:" + std::to_string(i), "x"}));  // over both connections
  BOOST_TEST(server.cli({"-n", "3", "DBSIZE"}) == "4\n");
  BOOST_TEST(server.cli({"-n", "0", "DBSIZE"}) == "0\n");

  options.database = 99;
  client beyond(io.get_executor(), options);
  const error failure = failure_of(io, beyond.connect());
  BOOST_TEST((failure.code() == errc::store_error));
  BOOST_TEST(std::string(failure.what()).starts_with(name_of(server) + "SELECT 99 refused: ERR DB index is out of range"));
}

BOOST_AUTO_TEST_CASE(tls_with_the_right_ca_works_and_with_another_ca_fails_verification) {
  if (skip_without_redis(true)) return;
  redis_server server({.tls = true});
  net::io_context io;
  auto options = options_for(server);
  options.tls = {.enabled = true, .ca_file = server.certificates().ca_file.string()};
  {
    client redis(io.get_executor(), options);
    run(io, redis.connect());
    BOOST_TEST((run(io, redis.exec({"SET", "over", "tls"})) == status_reply("OK")));
    BOOST_TEST((run(io, redis.exec({"GET", "over"})) == string_reply("tls")));
  }
  {
    auto by_name = options;
    by_name.tls.server_name = "localhost";  // the certificate names both
    client redis(io.get_executor(), by_name);
    run(io, redis.connect());
    BOOST_TEST((run(io, redis.exec({"PING"})) == status_reply("PONG")));
  }
  {
    auto other_name = options;
    other_name.tls.server_name = "redis.example.com";
    client redis(io.get_executor(), other_name);
    const error failure = failure_of(io, redis.connect());
    BOOST_TEST(std::string(failure.what()).starts_with(name_of(server) + "TLS handshake failed: certificate verify failed"));
  }
  {
    auto wrong_ca = options;
    wrong_ca.tls.ca_file = server.certificates().wrong_ca_file.string();
    client redis(io.get_executor(), wrong_ca);
    const error failure = failure_of(io, redis.connect());
    BOOST_TEST((failure.code() == errc::store_unreachable));
    BOOST_TEST(std::string(failure.what()).starts_with(name_of(server) + "TLS handshake failed: certificate verify failed"));
  }
  {
    auto plain = options_for(server);  // plain TCP to a TLS port
    client redis(io.get_executor(), plain);
    const error failure = failure_of(io, redis.connect());
    BOOST_TEST((failure.code() == errc::store_unreachable));
  }
  BOOST_CHECK_THROW(client(io.get_executor(), {.endpoints = {server.endpoint()},
                                               .tls = {.enabled = true, .ca_file = "/no/such/ca.pem"}}),
                    error);
}

BOOST_AUTO_TEST_CASE(tls_with_a_client_certificate) {
  if (skip_without_redis(true)) return;
  redis_server server({.tls = true, .tls_client_certificates = true});
  const auto& files = server.certificates();
  net::io_context io;
  auto options = options_for(server);
  options.tls = {.enabled = true, .ca_file = files.ca_file.string(), .cert_file = files.client_cert_file.string(),
                 .key_file = files.client_key_file.string()};
  client redis(io.get_executor(), options);
  run(io, redis.connect());
  BOOST_TEST((run(io, redis.exec({"PING"})) == status_reply("PONG")));

  options.tls.cert_file = options.tls.key_file = "";
  client without(io.get_executor(), options);
  const error failure = failure_of(io, [&]() -> net::awaitable<void> {
    co_await without.connect();
    auto ping = without.exec({"PING"});
    co_await std::move(ping);
  }());
  BOOST_TEST((failure.code() == errc::store_unreachable));
}

BOOST_AUTO_TEST_CASE(a_replica_serves_what_its_master_wrote) {
  if (skip_without_redis()) return;
  redis_server master({.password = "m"});
  redis_server replica({.password = "m", .replica_of = &master});
  net::io_context io;
  auto options = options_for(master);
  options.password = "m";
  client writer(io.get_executor(), options);
  options.endpoints = {replica.endpoint()};
  client reader(io.get_executor(), options);
  run(io, writer.connect());
  run(io, reader.connect());
  BOOST_TEST((run(io, writer.exec({"SET", "written", "on the master"})) == status_reply("OK")));
  BOOST_TEST((run(io, writer.exec({"WAIT", "1", "2000"})) == integer_reply(1)));
  // WAIT counts the replica's acknowledgement, which may come before the
  // replica applied the write: read until it shows, for at most 2 s.
  reply seen;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while ((seen = run(io, reader.exec({"GET", "written"}))).is_nil() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  BOOST_TEST((seen == string_reply("on the master")));
  const reply refused = run(io, reader.exec({"SET", "x", "y"}));
  BOOST_TEST(refused.is_error());
  BOOST_TEST(refused.text.starts_with("READONLY"));
}

BOOST_AUTO_TEST_CASE(a_closed_client_refuses_commands_until_it_connects_again) {
  if (skip_without_redis()) return;
  redis_server server;
  net::io_context io;
  client redis(io.get_executor(), options_for(server));
  run(io, redis.connect());
  redis.close();
  BOOST_TEST((failure_of(io, redis.exec({"PING"})).code() == errc::store_unreachable));
  run(io, redis.connect());
  BOOST_TEST((run(io, redis.exec({"PING"})) == status_reply("PONG")));
}

BOOST_AUTO_TEST_CASE(a_cluster_routes_each_key_to_its_master_and_follows_moved_and_ask) {
  if (skip_without_redis()) return;
  llmgate::test::redis_cluster nodes;
  net::io_context io;
  client redis(io.get_executor(), {.endpoints = {nodes.endpoint(1)}});
  run(io, redis.connect());
  BOOST_TEST(redis.cluster());

  for (int i = 0; i < 60; ++i) run(io, redis.exec({"SET", "key" + std::to_string(i), std::to_string(i)}));
  BOOST_TEST(redis.statistics().redirects == 0u);  // the slot map sent each where it lives
  for (int i = 0; i < 60; ++i) {
    const std::string key = "key" + std::to_string(i);
    BOOST_TEST(nodes.cli(nodes.node_of_slot(key_slot(key)), {"GET", key}) == std::to_string(i));
  }
  BOOST_TEST(nodes.dbsize(0) + nodes.dbsize(1) + nodes.dbsize(2) == 60);
  BOOST_TEST(nodes.dbsize(0) > 0);
  BOOST_TEST(nodes.dbsize(2) > 0);

  // A pipeline on one slot, by hash tag.
  const auto tagged = run(io, redis.exec_pipeline({{"SET", "{user7}:a", "1"}, {"INCR", "{user7}:a"}, {"GET", "{user7}:a"}}));
  BOOST_TEST((tagged[2] == string_reply("2")));
  // The routing key is copied when the awaitable is made: its string may go first.
  auto later = redis.exec_pipeline({{"GET", "{user7}:a"}}, std::string("{user7}") + ":b");
  BOOST_TEST((run(io, std::move(later)).front() == string_reply("2")));

  // The slot moves behind the client's back: MOVED, then the new map.
  const std::string key = "key7";
  const std::uint16_t slot = key_slot(key);
  const std::size_t from = nodes.node_of_slot(slot), to = (from + 1) % 3;
  nodes.migrate_slot(slot, from, to);
  BOOST_TEST((run(io, redis.exec({"GET", key})) == string_reply("7")));
  BOOST_TEST(redis.statistics().redirects == 1u);
  BOOST_TEST((run(io, redis.exec({"GET", key})) == string_reply("7")));
  BOOST_TEST(redis.statistics().redirects == 1u);  // the map was loaded again

  // Half moved: keys already on the destination are asked for there.
  const std::string moved = "{" + key + "}:moved", stays = "{" + key + "}:stays";
  run(io, redis.exec({"SET", moved, "m"}));
  run(io, redis.exec({"SET", stays, "s"}));
  auto migration = nodes.begin_migration(slot, to, from);
  migration.move_keys(1);  // one of the three keys of the slot leaves
  const auto replies = run(io, redis.exec_pipeline({{"GET", key}, {"GET", moved}, {"GET", stays}}, key));
  BOOST_TEST((replies[0] == string_reply("7")));
  BOOST_TEST((replies[1] == string_reply("m")));
  BOOST_TEST((replies[2] == string_reply("s")));
  BOOST_TEST(redis.statistics().redirects >= 2u);  // at least one ASK
  migration.finish();
  BOOST_TEST((run(io, redis.exec({"GET", stays})) == string_reply("s")));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace llmgate::redis
