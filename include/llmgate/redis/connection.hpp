// connection: one connection to one Redis server, over TCP or TLS, on
// Asio C++20 coroutines, with no thread of its own.
//
// - Opening connects (bounded by connect_timeout, which covers the TCP
//   connect, the TLS handshake and the login), then logs in
//   (`AUTH user password` or `AUTH password`) and selects the database.
// - Pipelining: any number of execs (exec_pipeline calls), from one
//   coroutine or many, may be in flight at once. Their commands go out
//   through one write queue (what queues up while a write is on the wire
//   leaves in the next write) and one reader loop hands the replies out in
//   order: Redis answers a connection's commands in the order it got them.
// - Each exec is bounded by command_timeout. A timeout fails that exec
//   with store_timeout and closes the connection, failing everything else
//   in flight on it with store_unreachable: a connection that owes replies
//   it may still send cannot be reused, they would answer later commands.
// - A Redis error reply is a reply of kind error, not an exception;
//   exceptions are llmgate::error: store_unreachable (connect, login, TLS,
//   a lost connection), store_timeout, store_error (a protocol error, a
//   refused SELECT). Each message starts with "redis HOST:PORT: ".
// - Cancelling an awaiting exec (Asio per-operation cancellation) throws
//   boost::system::system_error(operation_aborted) in it and leaves the
//   connection up: the reply that still comes is read and dropped.
//
// Thread rule: a connection lives on one executor that runs on one thread
// (or a strand); every call is made there. The reader loop holds the
// connection alive until close() or a failure: the owner calls close().
#pragma once

#include <openssl/err.h>   // ERR_reason_error_string
#include <openssl/ssl.h>   // SSL_set_tlsext_host_name, SSL_get_verify_result
#include <openssl/x509.h>  // X509_verify_cert_error_string, X509_V_OK

#include <chrono>       // std::chrono::milliseconds
#include <cstddef>      // std::size_t
#include <deque>        // std::deque: the execs waiting for replies, oldest first
#include <memory>       // std::shared_ptr, std::enable_shared_from_this
#include <optional>     // std::optional
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::move, std::swap
#include <variant>      // std::variant, std::visit
#include <vector>       // std::vector

#include <boost/asio/as_tuple.hpp>        // net::as_tuple: errors as values
#include <boost/asio/awaitable.hpp>       // net::awaitable
#include <boost/asio/co_spawn.hpp>        // net::co_spawn: the reader and writer loops
#include <boost/asio/detached.hpp>        // net::detached
#include <boost/asio/ip/address.hpp>      // net::ip::make_address: is the host an IP literal
#include <boost/asio/ip/tcp.hpp>          // tcp::resolver, tcp::no_delay
#include <boost/asio/ssl/context.hpp>     // ssl::context
#include <boost/asio/ssl/error.hpp>       // ssl::error::get_stream_category, get_ssl_category
#include <boost/asio/ssl/host_name_verification.hpp>  // the certificate names the host
#include <boost/asio/ssl/stream.hpp>      // ssl::stream
#include <boost/asio/steady_timer.hpp>    // net::steady_timer: an exec's deadline and wake-up
#include <boost/asio/use_awaitable.hpp>   // net::use_awaitable
#include <boost/asio/write.hpp>           // net::async_write
#include <boost/beast/core/tcp_stream.hpp>  // beast::tcp_stream: a socket with timeouts, for opening

#include "llmgate/error.hpp"               // llmgate::error, errc::store_*
#include "llmgate/redis/reply.hpp"         // reply, command, endpoint
#include "llmgate/redis/resp_reader.hpp"   // resp_reader, append_command

namespace llmgate::inline v0::redis {

namespace net = boost::asio;
namespace beast = boost::beast;

struct tls_options {
  bool enabled = false;
  std::string ca_file = {};      ///< PEM file of trusted CAs; "" for the system's trust store
  std::string cert_file = {};    ///< client certificate (PEM), for servers that ask for one
  std::string key_file = {};     ///< its private key (PEM)
  std::string server_name = {};  ///< SNI and the name the certificate must carry; "" for the endpoint's host
  bool verify = true;            ///< check the certificate chain and the name
};

/// The TLS client context for `options`, shared by every connection of a
/// client. Throws boost::system::system_error when a file cannot be read.
inline net::ssl::context make_tls_context(const tls_options& options) {
  net::ssl::context context(net::ssl::context::tls_client);
  context.set_options(net::ssl::context::no_sslv2 | net::ssl::context::no_sslv3 | net::ssl::context::no_tlsv1 |
                      net::ssl::context::no_tlsv1_1);
  if (options.verify) {
    context.set_verify_mode(net::ssl::verify_peer);
    if (options.ca_file.empty()) context.set_default_verify_paths();
    else context.load_verify_file(options.ca_file);
  } else {
    context.set_verify_mode(net::ssl::verify_none);
  }
  if (!options.cert_file.empty()) context.use_certificate_chain_file(options.cert_file);
  if (!options.key_file.empty()) context.use_private_key_file(options.key_file, net::ssl::context::pem);
  return context;
}

/// "host:port", "[::1]:port" for an IPv6 literal.
inline std::string to_string(const endpoint& where) {
  const bool v6 = where.host.find(':') != std::string::npos;
  return (v6 ? "[" + where.host + "]" : where.host) + ":" + std::to_string(where.port);
}

struct connection_options {
  endpoint where = {};
  std::string user = {};      ///< ACL user; "" for `AUTH password` (the default user)
  std::string password = {};  ///< "" with no user: no AUTH
  unsigned database = 0;      ///< SELECTed when not 0
  std::chrono::milliseconds connect_timeout{1000};  ///< connect, TLS handshake and login together
  std::chrono::milliseconds command_timeout{1000};  ///< one exec, from its write to its last reply
  bool verify_tls = true;     ///< check the server certificate's name (with a TLS context)
  std::string server_name = {};  ///< for SNI and that check; "" for where.host
};

class connection : public std::enable_shared_from_this<connection> {
  struct private_tag {};

 public:
  using executor_type = net::any_io_executor;

  /// Connects to options.where, over TLS when `tls` is given (it must
  /// outlive the connection), logs in and selects the database.
  /// Throws llmgate::error: store_unreachable ("redis HOST:PORT: connection
  /// refused", "... AUTH refused: WRONGPASS ...", "... TLS handshake failed:
  /// certificate verify failed (...)"), store_timeout, store_error (SELECT).
  static net::awaitable<std::shared_ptr<connection>> open(executor_type executor, connection_options options,
                                                          net::ssl::context* tls = nullptr) {
    auto self = std::make_shared<connection>(private_tag{}, std::move(executor), std::move(options), tls);
    co_await self->start();
    co_return self;
  }

  connection(private_tag, executor_type executor, connection_options options, net::ssl::context* tls)
      : executor_(std::move(executor)),
        options_(std::move(options)),
        name_("redis " + to_string(options_.where) + ": "),
        stream_(make_stream(executor_, tls)) {}

  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  const endpoint& where() const noexcept { return options_.where; }
  bool is_open() const noexcept { return open_; }

  /// Sends `commands` in one write and returns their replies in order;
  /// an empty list returns at once. Throws as the header says, and
  /// std::invalid_argument for an empty command, before anything is sent.
  net::awaitable<std::vector<reply>> exec_pipeline(const std::vector<command>& commands) {
    if (commands.empty()) co_return std::vector<reply>{};
    if (!open_) throw error(errc::store_unreachable, name_ + "connection closed: " + closed_because_);
    std::string bytes;
    for (const auto& c : commands) append_command(bytes, c);  // throws before anything is queued
    auto waiter = std::make_shared<pending>(executor_, commands.size());
    waiter->wake.expires_after(options_.command_timeout);
    outgoing_ += bytes;
    in_flight_.push_back(waiter);
    if (!writing_) {
      writing_ = true;
      net::co_spawn(executor_, write_loop(shared_from_this()), net::detached);
    }
    const auto [code] = co_await waiter->wake.async_wait(net::as_tuple(net::use_awaitable));
    if (waiter->done) co_return std::move(waiter->replies);
    if (waiter->failure) throw *waiter->failure;
    if (code == net::error::operation_aborted) throw boost::system::system_error(code);  // the caller cancelled
    const std::string waited = std::to_string(options_.command_timeout.count()) + " ms";
    fail(errc::store_unreachable, "a command got no reply within " + waited + "; the connection was closed");
    throw error(errc::store_timeout, name_ + "no reply within " + waited);
  }

  /// Closes the connection; execs in flight fail with store_unreachable.
  void close() { fail(errc::store_unreachable, "closed by the client"); }

 private:
  using tls_stream = net::ssl::stream<beast::tcp_stream>;

  /// One exec waiting for its replies. `wake` is its deadline, cancelled
  /// early when the replies are in or the connection fails.
  struct pending {
    pending(const executor_type& executor, std::size_t expected) : expected(expected), wake(executor) {
      replies.reserve(expected);
    }
    std::size_t expected;
    std::vector<reply> replies;
    bool done = false;
    std::optional<error> failure;
    net::steady_timer wake;
  };

  static std::variant<beast::tcp_stream, tls_stream> make_stream(const executor_type& executor,
                                                                  net::ssl::context* tls) {
    if (tls) return std::variant<beast::tcp_stream, tls_stream>(std::in_place_type<tls_stream>, executor, *tls);
    return std::variant<beast::tcp_stream, tls_stream>(std::in_place_type<beast::tcp_stream>, executor);
  }

  beast::tcp_stream& tcp() {
    return std::visit([](auto& s) -> beast::tcp_stream& { return beast::get_lowest_layer(s); }, stream_);
  }

  net::awaitable<void> start() {
    const auto& where = options_.where;
    net::ip::tcp::resolver resolver(executor_);
    const std::string port = std::to_string(where.port);
    const auto [resolve_code, addresses] =
        co_await resolver.async_resolve(where.host, port, net::as_tuple(net::use_awaitable));
    if (resolve_code) throw error(errc::store_unreachable, name_ + "cannot resolve the host: " + resolve_code.message());

    const std::string within = " within " + std::to_string(options_.connect_timeout.count()) + " ms";
    tcp().expires_after(options_.connect_timeout);
    const auto [connect_code, connected] = co_await tcp().async_connect(addresses, net::as_tuple(net::use_awaitable));
    if (connect_code == beast::error::timeout) throw error(errc::store_timeout, name_ + "no connection" + within);
    if (connect_code == net::error::connection_refused) throw error(errc::store_unreachable, name_ + "connection refused");
    if (connect_code) throw error(errc::store_unreachable, name_ + "cannot connect: " + connect_code.message());
    tcp().socket().set_option(net::ip::tcp::no_delay(true));  // commands are small: send at once

    if (auto* tls = std::get_if<tls_stream>(&stream_)) {
      const std::string& name = options_.server_name.empty() ? where.host : options_.server_name;
      boost::system::error_code not_an_address;
      net::ip::make_address(name, not_an_address);
      // Server Name Indication carries host names only, never addresses.
      if (not_an_address) SSL_set_tlsext_host_name(tls->native_handle(), name.c_str());
      if (options_.verify_tls) tls->set_verify_callback(net::ssl::host_name_verification(name));
      const auto [code] = co_await tls->async_handshake(net::ssl::stream_base::client, net::as_tuple(net::use_awaitable));
      if (code == beast::error::timeout) throw error(errc::store_timeout, name_ + "no TLS handshake" + within);
      if (code) throw error(errc::store_unreachable, name_ + "TLS handshake failed: " + tls_failure(code, *tls));
    }

    co_await log_in(within);
    tcp().expires_never();
    open_ = true;
    net::co_spawn(executor_, read_loop(shared_from_this()), net::detached);
  }

  // AUTH and SELECT in one write, their replies read here (the reader
  // loop is not running yet), still under the connect deadline.
  net::awaitable<void> log_in(const std::string& within) {
    std::vector<command> commands;
    if (!options_.user.empty()) commands.push_back({"AUTH", options_.user, options_.password});
    else if (!options_.password.empty()) commands.push_back({"AUTH", options_.password});
    const bool select = options_.database != 0;
    if (select) commands.push_back({"SELECT", std::to_string(options_.database)});
    if (commands.empty()) co_return;
    std::string bytes;
    for (const auto& c : commands) append_command(bytes, c);
    const auto [write_code, written] = co_await std::visit(
        [&](auto& s) { return net::async_write(s, net::buffer(bytes), net::as_tuple(net::use_awaitable)); }, stream_);
    if (write_code) throw_login_failure(write_code, within);
    std::vector<reply> replies;
    while (replies.size() < commands.size()) {
      const auto [read_code, read] = co_await std::visit(
          [&](auto& s) { return s.async_read_some(net::buffer(read_buffer_), net::as_tuple(net::use_awaitable)); },
          stream_);
      if (read_code) throw_login_failure(read_code, within);
      reader_.feed(std::string_view(read_buffer_.data(), read));
      while (auto r = reader_.next()) replies.push_back(std::move(*r));
    }
    const bool auth = commands.size() > (select ? 1u : 0u);
    if (auth && replies.front().is_error())
      throw error(errc::store_unreachable, name_ + "AUTH refused: " + replies.front().text);
    if (select && replies.back().is_error())
      throw error(errc::store_error, name_ + "SELECT " + std::to_string(options_.database) +
                                         " refused: " + replies.back().text);
  }

  [[noreturn]] void throw_login_failure(const boost::system::error_code& code, const std::string& within) {
    if (code == beast::error::timeout) throw error(errc::store_timeout, name_ + "no login" + within);
    throw error(errc::store_unreachable, name_ + "login failed: " + describe(code));
  }

  // What OpenSSL says, and for a refused certificate, why it was refused.
  static std::string tls_failure(const boost::system::error_code& code, tls_stream& tls) {
    std::string text = describe(code);
    const long verified = SSL_get_verify_result(tls.native_handle());
    if (verified != X509_V_OK) text += std::string(" (") + X509_verify_cert_error_string(verified) + ")";
    return text;
  }

  static std::string describe(const boost::system::error_code& code) {
    if (code.category() == net::error::get_ssl_category()) {
      if (const char* reason = ERR_reason_error_string(static_cast<unsigned long>(code.value()))) return reason;
    }
    if (code == net::error::eof || code == net::ssl::error::stream_truncated) return "connection closed by the server";
    return code.message();
  }

  static net::awaitable<void> write_loop(std::shared_ptr<connection> self) {
    std::string sending;
    while (self->open_ && !self->outgoing_.empty()) {
      sending.clear();
      std::swap(sending, self->outgoing_);
      const auto [code, written] = co_await std::visit(
          [&](auto& s) { return net::async_write(s, net::buffer(sending), net::as_tuple(net::use_awaitable)); },
          self->stream_);
      if (code) self->fail(errc::store_unreachable, "sending: " + describe(code));
    }
    self->writing_ = false;
  }

  static net::awaitable<void> read_loop(std::shared_ptr<connection> self) {
    while (self->open_) {
      const auto [code, read] = co_await std::visit(
          [&](auto& s) { return s.async_read_some(net::buffer(self->read_buffer_), net::as_tuple(net::use_awaitable)); },
          self->stream_);
      if (code) {
        self->fail(errc::store_unreachable, describe(code));
        co_return;
      }
      try {
        self->reader_.feed(std::string_view(self->read_buffer_.data(), read));
        while (auto r = self->reader_.next()) self->deliver(std::move(*r));
      } catch (const error& failure) {
        self->fail(errc::store_error, context_of(failure));
        co_return;
      }
    }
  }

  void deliver(reply r) {
    if (in_flight_.empty())  // Redis says why it drops a connection this way ("ERR max number of clients reached")
      throw error(errc::store_error,
                  "redis: protocol error: a reply to no command" + (r.is_error() ? ": " + r.text : std::string()));
    auto& waiter = *in_flight_.front();
    waiter.replies.push_back(std::move(r));
    if (waiter.replies.size() < waiter.expected) return;
    waiter.done = true;
    waiter.wake.cancel();
    in_flight_.pop_front();
  }

  // "protocol error: ...": the context a resp_reader error was thrown with,
  // without its "redis: " and the error code's message after it.
  static std::string context_of(const error& failure) {
    std::string_view text = failure.what();
    const std::string code_message = ": " + failure.code().message();
    if (text.ends_with(code_message)) text.remove_suffix(code_message.size());
    if (text.starts_with("redis: ")) text.remove_prefix(7);
    return std::string(text);
  }

  // Closes the socket once and fails every exec in flight with `code`.
  void fail(errc code, const std::string& why) {
    if (closed_) return;
    closed_ = true;
    open_ = false;
    closed_because_ = why;
    boost::system::error_code ignored;
    tcp().socket().close(ignored);
    for (auto& waiter : in_flight_) {
      waiter->failure.emplace(code, name_ + why);
      waiter->wake.cancel();
    }
    in_flight_.clear();
  }

  executor_type executor_;
  connection_options options_;
  std::string name_;  ///< "redis HOST:PORT: ", the start of every message
  std::variant<beast::tcp_stream, tls_stream> stream_;
  resp_reader reader_;
  std::vector<char> read_buffer_ = std::vector<char>(64 * 1024);
  std::string outgoing_;    ///< commands queued while a write is on the wire
  bool writing_ = false;    ///< the write loop runs
  bool open_ = false;        ///< logged in and not yet closed
  bool closed_ = false;      ///< closed (failed) for good
  std::string closed_because_;
  std::deque<std::shared_ptr<pending>> in_flight_;
};

}  // namespace llmgate::inline v0::redis
