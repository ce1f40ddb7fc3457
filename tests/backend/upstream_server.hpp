// upstream_server: a model server for tests, on 127.0.0.1 at a port the
// system picks, serving on a thread of its own. Each path answers what the
// test scripted, and faults are injected on demand: an error status with
// Retry-After, a slow first byte, a connection reset in the middle of a
// stream, malformed SSE or NDJSON, an oversized or invalid body.
//
//   llmgate::test::upstream_server server;
//   server.start();
//   server.on("/v1/chat/completions", reply::chat("Hello!"));           // every request
//   server.enqueue("/v1/chat/completions", reply::openai_error(429, ...)); // the next one only
//   ... point a backend at server.url("/v1") ...
//   BOOST_TEST(server.requests("/v1/chat/completions") == 2);
//
// Replies queued with enqueue() are used first, oldest first; then the
// handler given to on(); a path with neither answers 404.
//
// A reply with `hold` set waits, before its first byte, until the test
// calls release(hold); other connections are served meanwhile, so a test
// can stall one request and watch the others complete.
//
// close_idle_after(d) makes it close a connection that waited longer than d
// for its next request, as model servers do (llama.cpp's server, uvicorn).
#pragma once

#include <algorithm>    // std::equal
#include <cctype>       // std::tolower
#include <chrono>       // std::chrono::milliseconds
#include <cstdint>      // std::uint64_t
#include <deque>        // std::deque
#include <functional>   // std::function
#include <map>          // std::map
#include <set>          // std::set
#include <mutex>        // std::mutex, std::lock_guard
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <thread>       // std::thread
#include <utility>      // std::move, std::pair
#include <vector>       // std::vector

#include <boost/asio/as_tuple.hpp>       // a released hold's cancelled wait as a value
#include <boost/asio/co_spawn.hpp>       // net::co_spawn
#include <boost/asio/detached.hpp>       // net::detached
#include <boost/asio/io_context.hpp>     // net::io_context
#include <boost/asio/post.hpp>           // net::post
#include <boost/asio/ip/tcp.hpp>         // tcp::acceptor, tcp::socket
#include <boost/asio/steady_timer.hpp>   // delays
#include <boost/asio/use_awaitable.hpp>  // net::use_awaitable
#include <boost/asio/write.hpp>          // net::async_write
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>          // http::request, response, chunks
#include <boost/json/parse.hpp>          // boost::json::parse
#include <boost/json/serialize.hpp>      // boost::json::serialize
#include <boost/json/value.hpp>          // boost::json::value

#include "llmgate/wire/openai_wire.hpp"  // the OpenAI wire form

namespace llmgate::test {

namespace net = boost::asio;
namespace http = boost::beast::http;
namespace json = boost::json;

/// A request as the server received it.
struct received_request {
  std::string method;
  std::string target;  ///< path and query
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;

  json::value json() const { return json::parse(body); }
  std::string header(std::string_view name) const {
    for (const auto& [key, value] : headers)
      if (key.size() == name.size() &&
          std::equal(key.begin(), key.end(), name.begin(),
                     [](char a, char b) { return std::tolower(a) == std::tolower(b); }))
        return value;
    return {};
  }
};

/// What the server answers, and how.
struct reply {
  unsigned status = 200;
  std::vector<std::pair<std::string, std::string>> headers = {};
  std::string body = {};                 ///< sent with Content-Length, unless `chunks` is set
  std::vector<std::string> chunks = {};  ///< sent with chunked encoding, one write each
  std::chrono::milliseconds first_byte_delay{0};
  std::chrono::milliseconds chunk_delay{0};  ///< before each chunk
  bool reset_after_chunks = false;  ///< abort the connection (TCP RST) after the chunks
  bool close_connection = false;    ///< "Connection: close", then close
  bool close_silently = false;      ///< close after the reply without saying so (an idle timeout)
  std::string raw = {};             ///< when set: these bytes verbatim, then close
  std::string hold = {};            ///< when set: wait for release(hold) before answering
  bool drop = false;                ///< close at once without answering (an idle timeout that fired as the request came)

  static reply json(const json::value& body, unsigned status = 200) {
    return {.status = status, .headers = {{"Content-Type", "application/json"}},
            .body = json::serialize(body)};
  }

  /// An OpenAI error object with this status.
  static reply openai_error(unsigned status, std::string_view type, std::string_view code,
                            std::string_view message) {
    return json(json::object{{"error", {{"message", message}, {"type", type}, {"param", nullptr},
                                        {"code", code}}}},
                status);
  }

  /// 429 rate_limit_exceeded asking to wait `after` (retry-after-ms) .
  static reply rate_limited(std::chrono::milliseconds after) {
    auto r = openai_error(429, "requests", "rate_limit_exceeded", "Rate limit reached");
    r.headers.emplace_back("retry-after-ms", std::to_string(after.count()));
    return r;
  }

  /// An OpenAI chat.completion answering `content`.
  static reply chat(std::string_view content, llmgate::token_usage usage = {10, 5, 0, 0},
                    std::string_view model = "test-model") {
    llmgate::chat_response response;
    response.id = "chatcmpl-test";
    response.model = model;
    response.content = content;
    response.finish_reason = "stop";
    response.usage = usage;
    response.created = 1700000000;
    return json(json::parse(llmgate::completion_body(response)));
  }

  /// An SSE stream: each element of `data` as one "data:" event.
  static reply sse(const std::vector<std::string>& data) {
    reply r{.headers = {{"Content-Type", "text/event-stream"}}};
    for (const auto& event : data) r.chunks.push_back("data: " + event + "\n\n");
    return r;
  }

  /// OpenAI's stream of `pieces`, then the usage chunk and [DONE].
  static reply chat_stream(const std::vector<std::string>& pieces,
                           llmgate::token_usage usage = {10, 5, 0, 0},
                           std::string_view model = "test-model") {
    std::vector<std::string> data;
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      llmgate::chat_chunk chunk;
      chunk.content_delta = pieces[i];
      if (i + 1 == pieces.size()) chunk.finish_reason = "stop";
      data.push_back(llmgate::chunk_body(chunk, "chatcmpl-test", model, 1700000000));
    }
    llmgate::chat_chunk last;
    last.usage = usage;
    data.push_back(llmgate::chunk_body(last, "chatcmpl-test", model, 1700000000));
    data.push_back("[DONE]");
    return sse(data);
  }

  /// An NDJSON stream (Ollama): one line per value.
  static reply ndjson(const std::vector<json::value>& lines) {
    reply r{.headers = {{"Content-Type", "application/x-ndjson"}}};
    for (const auto& line : lines) r.chunks.push_back(json::serialize(line) + "\n");
    return r;
  }
};

class upstream_server {
 public:
  using handler = std::function<reply(const received_request&)>;

  upstream_server() = default;
  upstream_server(const upstream_server&) = delete;
  upstream_server& operator=(const upstream_server&) = delete;
  ~upstream_server() { stop(); }

  /// Binds 127.0.0.1 on a free port and serves on a thread of its own.
  void start() {
    acceptor_.open(net::ip::tcp::v4());
    acceptor_.set_option(net::socket_base::reuse_address(true));
    acceptor_.bind({net::ip::make_address("127.0.0.1"), 0});
    acceptor_.listen();
    port_ = acceptor_.local_endpoint().port();
    net::co_spawn(io_, accept(), net::detached);
    thread_ = std::thread([this] { io_.run(); });
  }

  /// Stops serving and closes every connection; also done by the destructor.
  void stop() {
    if (!thread_.joinable()) return;
    io_.stop();
    thread_.join();
    acceptor_.close();  // refuse connections from now on
  }

  unsigned short port() const noexcept { return port_; }

  /// Closes connections idle longer than `limit` between requests; zero
  /// (the default): never. Call before start().
  void close_idle_after(std::chrono::milliseconds limit) { idle_limit_ = limit; }

  /// "http://127.0.0.1:<port>" followed by `path`.
  std::string url(std::string_view path = "") const {
    return "http://127.0.0.1:" + std::to_string(port_) + std::string(path);
  }

  /// Answers every request to `path` (without its query) with `respond`.
  void on(std::string path, handler respond) {
    std::lock_guard lock(mutex_);
    handlers_[std::move(path)] = std::move(respond);
  }
  void on(std::string path, reply answer) {
    on(std::move(path), [answer = std::move(answer)](const received_request&) { return answer; });
  }

  /// Answers the next request to `path` with `answer`, once.
  void enqueue(std::string path, reply answer) {
    std::lock_guard lock(mutex_);
    queued_[std::move(path)].push_back(std::move(answer));
  }

  /// Lets the replies held under `name` go, now and from now on. Any thread.
  void release(std::string name) {
    net::post(io_, [this, name = std::move(name)] {
      released_.insert(name);
      for (auto* gate : gates_[name]) gate->cancel();
      gates_.erase(name);
    });
  }

  /// Requests received so far, to `path` only when given.
  std::size_t requests(std::string_view path = {}) const {
    std::lock_guard lock(mutex_);
    std::size_t count = 0;
    for (const auto& request : received_)
      count += path.empty() || path_of(request.target) == path;
    return count;
  }

  std::vector<received_request> received() const {
    std::lock_guard lock(mutex_);
    return received_;
  }

  /// TCP connections accepted so far (a measure of keep-alive reuse).
  std::size_t connections() const {
    std::lock_guard lock(mutex_);
    return connections_;
  }

 private:
  static std::string_view path_of(std::string_view target) {
    return target.substr(0, target.find('?'));
  }

  net::awaitable<void> accept() {
    for (;;) {
      auto socket = co_await acceptor_.async_accept(net::use_awaitable);
      {
        std::lock_guard lock(mutex_);
        ++connections_;
      }
      net::co_spawn(io_, serve(std::move(socket)), net::detached);
    }
  }

  reply answer(const received_request& request) {
    std::lock_guard lock(mutex_);
    received_.push_back(request);
    const std::string path(path_of(request.target));
    if (auto queued = queued_.find(path); queued != queued_.end() && !queued->second.empty()) {
      reply next = std::move(queued->second.front());
      queued->second.pop_front();
      return next;
    }
    if (auto found = handlers_.find(path); found != handlers_.end()) return found->second(request);
    return reply::openai_error(404, "invalid_request_error", "not_found", "no route " + path);
  }

  net::awaitable<void> serve(net::ip::tcp::socket socket) {
    try {
      boost::beast::flat_buffer buffer;
      net::steady_timer idle(io_);
      for (;;) {
        http::request<http::string_body> message;
        if (idle_limit_.count() > 0) {  // closes the socket (a FIN) unless a request starts in time
          idle.expires_after(idle_limit_);
          idle.async_wait([&socket](boost::system::error_code code) {
            if (!code) socket.close();
          });
        }
        co_await http::async_read(socket, buffer, message, net::use_awaitable);
        idle.cancel();
        received_request request{std::string(message.method_string()),
                                 std::string(message.target()), {}, message.body()};
        for (const auto& field : message)
          request.headers.emplace_back(field.name_string(), field.value());
        const reply out = answer(request);
        if (!co_await send(socket, out, message.keep_alive())) co_return;
      }
    } catch (const std::exception&) {
      // the client went away, or the reply closed the connection
    }
  }

  // Returns whether the connection stays open for the next request.
  net::awaitable<bool> send(net::ip::tcp::socket& socket, const reply& out, bool keep_alive) {
    if (!out.hold.empty()) co_await held(out.hold);
    co_await wait(out.first_byte_delay);
    if (out.drop) {
      socket.close();
      co_return false;
    }
    if (!out.raw.empty()) {
      co_await net::async_write(socket, net::buffer(out.raw), net::use_awaitable);
      socket.close();
      co_return false;
    }
    keep_alive = keep_alive && !out.close_connection && !out.reset_after_chunks;
    if (out.chunks.empty()) {
      http::response<http::string_body> response(static_cast<http::status>(out.status), 11);
      for (const auto& [name, value] : out.headers) response.set(name, value);
      response.body() = out.body;
      response.keep_alive(keep_alive);
      response.prepare_payload();
      co_await http::async_write(socket, response, net::use_awaitable);
      co_return keep_alive && !out.close_silently;
    }
    http::response<http::empty_body> head(static_cast<http::status>(out.status), 11);
    for (const auto& [name, value] : out.headers) head.set(name, value);
    head.chunked(true);
    head.keep_alive(keep_alive);
    http::response_serializer<http::empty_body> serializer(head);
    co_await http::async_write_header(socket, serializer, net::use_awaitable);
    for (const auto& chunk : out.chunks) {
      co_await wait(out.chunk_delay);
      co_await net::async_write(socket, http::make_chunk(net::buffer(chunk)), net::use_awaitable);
    }
    if (out.reset_after_chunks) {
      // A reset makes the peer's kernel drop what it received but was not
      // read yet; give the client time to read the chunks first.
      co_await wait(std::chrono::milliseconds(50));
      socket.set_option(net::socket_base::linger(true, 0));  // close with RST, not FIN
      socket.close();
      co_return false;
    }
    co_await net::async_write(socket, http::make_chunk_last(), net::use_awaitable);
    co_return keep_alive && !out.close_silently;
  }

  // On the server's thread, as release()'s work is: no lock needed.
  net::awaitable<void> held(const std::string& name) {
    if (released_.contains(name)) co_return;
    net::steady_timer gate(io_, net::steady_timer::time_point::max());
    gates_[name].push_back(&gate);
    co_await gate.async_wait(net::as_tuple(net::use_awaitable));  // cancelled by release()
  }

  net::awaitable<void> wait(std::chrono::milliseconds delay) {
    if (delay.count() == 0) co_return;
    net::steady_timer timer(io_, delay);
    co_await timer.async_wait(net::use_awaitable);
  }

  net::io_context io_;
  net::ip::tcp::acceptor acceptor_{io_};
  std::thread thread_;
  unsigned short port_ = 0;
  std::chrono::milliseconds idle_limit_{0};
  mutable std::mutex mutex_;
  std::map<std::string, handler, std::less<>> handlers_;
  std::map<std::string, std::deque<reply>, std::less<>> queued_;
  std::vector<received_request> received_;
  std::size_t connections_ = 0;
  std::set<std::string, std::less<>> released_;                        // server thread only
  std::map<std::string, std::vector<net::steady_timer*>, std::less<>> gates_;  // server thread only
};

}  // namespace llmgate::test
