// backend benchmark: what the OpenAI adapter adds per request over a bare
// Beast request loop, both against the same loopback upstream in the same
// run, and how fast the SSE parser reads an OpenAI stream.
//
//   client_overhead  p50_us / p99_us: the adapter's request time minus the
//                    bare loop's, at the same percentile; vs_raw_beast: the
//                    ratio of their medians. The bare loop sends the same
//                    bytes on one kept-alive connection and reads the answer
//                    into a string; the adapter also builds the JSON body,
//                    takes a pooled connection, parses the answer and prices it.
//   sse_parse        MB/s of sse_parser over a stream of chat chunks fed in
//                    16 KiB pieces (events only, no JSON decoding), and, as
//                    sse_decode, with each event's JSON decoded into a chunk.
//
// Usage: llmgate_bench_backend [--requests N] (default 20000 per side)
#include <algorithm>  // std::sort
#include <chrono>     // std::chrono::steady_clock
#include <cstdlib>    // std::atoi
#include <cstring>    // std::strcmp
#include <iostream>   // std::cout
#include <memory>     // std::make_shared
#include <string>     // std::string
#include <thread>     // std::thread
#include <vector>     // std::vector

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "llmgate/backend/blocking.hpp"
#include "llmgate/backend/openai_backend.hpp"
#include "llmgate/backend/sse_parser.hpp"
#include "bench_support.hpp"

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using llmgate_bench::steady;

namespace {

const std::string answer_body = R"({"id":"chatcmpl-bench","object":"chat.completion","created":1700000000,)"
    R"("model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"message":{"role":"assistant",)"
    R"("content":"The capital of France is Paris."},"finish_reason":"stop"}],)"
    R"("usage":{"prompt_tokens":24,"completion_tokens":8,"total_tokens":32,)"
    R"("prompt_tokens_details":{"cached_tokens":0}}})";

// The loopback upstream: one fixed chat.completion per request, keep-alive,
// on a thread of its own.
class loopback_upstream {
 public:
  loopback_upstream() {
    acceptor_.open(net::ip::tcp::v4());
    acceptor_.bind({net::ip::make_address("127.0.0.1"), 0});
    acceptor_.listen();
    net::co_spawn(io_, accept(), net::detached);
    thread_ = std::thread([this] { io_.run(); });
  }
  ~loopback_upstream() {
    io_.stop();
    thread_.join();
  }
  unsigned short port() const { return acceptor_.local_endpoint().port(); }

 private:
  net::awaitable<void> accept() {
    for (;;) net::co_spawn(io_, serve(co_await acceptor_.async_accept(net::use_awaitable)), net::detached);
  }
  static net::awaitable<void> serve(net::ip::tcp::socket socket) {
    socket.set_option(net::ip::tcp::no_delay(true));
    beast::flat_buffer buffer;
    http::response<http::string_body> response(http::status::ok, 11);
    response.set(http::field::content_type, "application/json");
    response.body() = answer_body;
    response.prepare_payload();
    try {
      for (;;) {
        http::request<http::string_body> request;
        co_await http::async_read(socket, buffer, request, net::use_awaitable);
        co_await http::async_write(socket, response, net::use_awaitable);
      }
    } catch (const std::exception&) {  // the client closed
    }
  }
  net::io_context io_;
  net::ip::tcp::acceptor acceptor_{io_};
  std::thread thread_;
};

llmgate::chat_request bench_request() {
  return llmgate::parse_chat_request(boost::json::parse(
      R"({"model":"gpt-4o-mini","temperature":0,"messages":[{"role":"system","content":"You are terse."},)"
      R"({"role":"user","content":"What is the capital of France?"}]})"));
}

// Microseconds of each of `count` requests of the bare loop.
net::awaitable<void> bare_loop(unsigned short port, int count, std::vector<double>& micros) {
  auto executor = co_await net::this_coro::executor;
  beast::tcp_stream stream(executor);
  co_await stream.async_connect(net::ip::tcp::endpoint(net::ip::make_address("127.0.0.1"), port),
                                net::use_awaitable);
  stream.socket().set_option(net::ip::tcp::no_delay(true));
  http::request<http::string_body> request(http::verb::post, "/v1/chat/completions", 11);
  request.set(http::field::host, "127.0.0.1");
  request.set(http::field::content_type, "application/json");
  request.set(http::field::authorization, "Bearer sk-bench");
  request.body() = llmgate::chat_request_body(bench_request(), {.stream = false});
  request.prepare_payload();
  beast::flat_buffer buffer;
  for (int i = 0; i < count; ++i) {
    const auto start = steady::now();
    co_await http::async_write(stream, request, net::use_awaitable);
    http::response<http::string_body> response;
    co_await http::async_read(stream, buffer, response, net::use_awaitable);
    micros.push_back(std::chrono::duration<double, std::micro>(steady::now() - start).count());
  }
}

net::awaitable<void> adapter_loop(llmgate::openai_backend& backend, int count, std::vector<double>& micros) {
  const auto request = bench_request();
  for (int i = 0; i < count; ++i) {
    const auto start = steady::now();
    const auto answer = co_await backend.complete(request);
    micros.push_back(std::chrono::duration<double, std::micro>(steady::now() - start).count());
    if (answer.usage.prompt_tokens != 24) throw std::runtime_error("unexpected answer");
  }
}

double percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  return values[static_cast<std::size_t>(p * static_cast<double>(values.size() - 1))];
}

// An OpenAI stream of `events` chat chunks and its final usage chunk.
std::string openai_stream(int events) {
  std::string bytes;
  for (int i = 0; i < events; ++i) {
    llmgate::chat_chunk chunk;
    chunk.content_delta = i % 3 ? " token" : " word";
    bytes += "data: " + llmgate::chunk_body(chunk, "chatcmpl-8bench", "gpt-4o-mini", 1700000000) + "\n\n";
  }
  bytes += "data: [DONE]\n\n";
  return bytes;
}

// MB/s of feeding `stream` through the parser in 16 KiB pieces, best of 5.
template <class OnEvent>
double sse_throughput(const std::string& stream, OnEvent on_event) {
  double best = 0;
  for (int run = 0; run < 5; ++run) {
    llmgate::sse_parser parser;
    std::vector<llmgate::sse_event> events;
    std::size_t seen = 0;
    const double seconds = llmgate_bench::time_once([&] {
      for (std::size_t at = 0; at < stream.size(); at += 16384) {
        events.clear();
        parser.feed(std::string_view(stream).substr(at, 16384), events);
        for (const auto& event : events) on_event(event);
        seen += events.size();
      }
    });
    if (seen == 0) throw std::runtime_error("no events parsed");
    best = std::max(best, static_cast<double>(stream.size()) / 1e6 / seconds);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  int requests = 20000;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--requests") == 0) requests = std::atoi(argv[i + 1]);

  loopback_upstream upstream;
  net::io_context io;
  llmgate::openai_backend backend(io.get_executor(),
                                  {.base_url = "http://127.0.0.1:" + std::to_string(upstream.port()) + "/v1",
                                   .api_key = "sk-bench"});
  std::vector<double> bare, adapter;
  // Warm both paths, then alternate rounds so that drift hits both alike.
  std::vector<double> warm;
  llmgate::run_blocking(io, bare_loop(upstream.port(), 500, warm));
  llmgate::run_blocking(io, adapter_loop(backend, 500, warm));
  const int rounds = 10;
  llmgate_bench::progress("client_overhead: %d requests per side in %d rounds", requests, rounds);
  for (int round = 0; round < rounds; ++round) {
    llmgate::run_blocking(io, bare_loop(upstream.port(), requests / rounds, bare));
    llmgate::run_blocking(io, adapter_loop(backend, requests / rounds, adapter));
  }
  const double bare_p50 = percentile(bare, 0.5), bare_p99 = percentile(bare, 0.99);
  const double adapter_p50 = percentile(adapter, 0.5), adapter_p99 = percentile(adapter, 0.99);

  llmgate_bench::progress("sse_parse: 64 MB-ish OpenAI stream");
  const std::string stream = openai_stream(400'000);
  const double parse_mb_s = sse_throughput(stream, [](const llmgate::sse_event&) {});
  std::uint64_t characters = 0;
  const double decode_mb_s = sse_throughput(stream, [&](const llmgate::sse_event& event) {
    if (event.data != "[DONE]") characters += llmgate::parse_chat_chunk(boost::json::parse(event.data)).content_delta.size();
  });

  llmgate_bench::table results({"measure", "bare_beast", "adapter", "added"});
  results.add_row({"p50 us", llmgate_bench::number(bare_p50), llmgate_bench::number(adapter_p50),
                   llmgate_bench::number(adapter_p50 - bare_p50)});
  results.add_row({"p99 us", llmgate_bench::number(bare_p99), llmgate_bench::number(adapter_p99),
                   llmgate_bench::number(adapter_p99 - bare_p99)});
  results.add_row({"sse MB/s", "-", llmgate_bench::number(parse_mb_s), "-"});
  results.add_row({"sse+decode MB/s", "-", llmgate_bench::number(decode_mb_s), "-"});
  results.print(std::cout);

  std::vector<llmgate_bench::json_line> lines;
  lines.push_back(llmgate_bench::json_line()
                      .add("bench", "client_overhead")
                      .add("p50_us", adapter_p50 - bare_p50)
                      .add("p99_us", adapter_p99 - bare_p99)
                      .add("vs_raw_beast", adapter_p50 / bare_p50)
                      .add("bare_p50_us", bare_p50)
                      .add("adapter_p50_us", adapter_p50)
                      .add("requests", requests));
  lines.push_back(llmgate_bench::json_line().add("bench", "sse_parse").add("mb_per_s", parse_mb_s)
                      .add("bytes", stream.size()));
  lines.push_back(llmgate_bench::json_line().add("bench", "sse_decode").add("mb_per_s", decode_mb_s)
                      .add("characters", characters));
  llmgate_bench::publish("backend", results, lines);
}
