// gateway benchmark: what the gateway adds to a request, how many cached
// answers it serves, and whether its memory holds still under a long run.
// Everything runs in this process on loopback: an upstream that answers
// instantly (Asio, one thread), the gateway (two threads, or
// --gateway-threads), and a load generator of the project's own (Asio, one
// thread, keep-alive connections). The upstream and the load generator share the cores with
// the gateway, so they are kept cheap: requests and answers are bytes made
// once, and they read messages by Content-Length alone (which is all the
// gateway and the upstream send) rather than through a full HTTP parser.
//
//   gateway_overhead  open loop at a fixed rate (5000 requests/s), every
//                     request a different question, so every one is a cache
//                     miss relayed upstream; the same load is sent to the
//                     upstream directly, taking turns of half a second with
//                     the gateways, and the added p50/p99 are the
//                     differences of the distributions. Three gateways:
//                     both cache tiers (a miss is looked up and stored in
//                     both: an embedding and an HNSW insert), the exact
//                     tier only, and no cache (a pure relay), which is also
//                     asked the same questions through /v1/messages and
//                     /v1/responses (the other APIs' forms); and, as the
//                     floor any proxy pays on this machine, a relay that
//                     passes bytes on unread (byte_relay). Latency counts
//                     from when a request was due, so a stall delays the
//                     requests behind it too. The processor time this
//                     process spends per request (load generator and
//                     upstream included, so the direct run's is their share)
//                     is printed too: unlike latency it hardly depends on
//                     how long a sleeping thread takes to wake.
//   gateway_vs_peers  in the same turns, the peers an operator would run
//                     instead (bench/peers/peers.hpp starts them as child
//                     processes): nginx as a reverse proxy with one worker
//                     per core and keep-alive to the upstream (the floor a
//                     C proxy pays), nginx with a proxy_cache keyed on the
//                     request body (the exact-cache peer; like the exact
//                     tier it stores every miss), and the Portkey AI
//                     gateway (Node), routed to the upstream by its
//                     x-portkey-* headers. Their processor time is added to
//                     this process's in cpu_us_per_request.
//   gateway_hits      closed loop, 32 connections: exact hits (the same
//                     request; also through /v1/messages and /v1/responses,
//                     the other APIs' forms of the same question, kinds
//                     "messages" and "responses") and semantic hits (a rephrasing of a stored
//                     one; with both tiers, exact hits after the first, as
//                     the exact tier stores a semantic hit under its own
//                     key), and, in the same turns, semantic hits of a
//                     gateway with the semantic tier alone (every one a
//                     semantic hit) and nginx's proxy_cache hits of the
//                     same request; requests per second and p99.
//   gateway_routes    each route's added latency beside chat completions':
//                     misses through the gateway without caches, and exact
//                     hits.
//   then a table of the targets against the peers (ratios and
//   differences) for people.
//   coalescing        bursts of 50 identical concurrent misses (a new question
//                     each burst) to an upstream that answers in 50 ms, with
//                     request coalescing on and off: upstream calls and p99.
//   gateway_soak      1,000,000 requests, 90% repeats of 1000 questions and
//                     10% new ones (misses that evict at the caches'
//                     capacity of 20,000), in rounds of 100,000; RSS of this
//                     process after a warm-up (a fifth as many, at least
//                     200,000: the caches full) and at the end; with both tiers and with the exact tier alone.
// Large allocations get mappings of their own (map_large_allocations), as
// in the gateway program, so that freed memory shows in RSS.
//
//   llmgate_bench_gateway [--rate R] [--seconds S] [--soak N] [--only overhead|hits|coalescing|soak]
//                         [--gateway-threads N] [--caches on|exact|off]
//                         [--peers nginx,nginx_proxy_cache,portkey|none]
//                         [--hit-paths exact,messages,responses,semantic,semantic_only,nginx_proxy_cache]
//                         [--hit-requests N] [--miss-routes messages,responses|none]
//                         [--nginx PATH] [--node PATH] [--portkey START_SERVER_JS]
//
// To count the gateway's instructions per hit (callgrind, one file per
// thread; the gateway's workers are the threads after the upstream's):
//   valgrind --tool=callgrind --separate-threads=yes llmgate_bench_gateway --only hits --peers none
//     --hit-paths exact --hit-requests 20000
// and per miss of chat completions (the gateway without caches):
//   ... --only overhead --caches off --peers none --miss-routes none --seconds 1 --rate 2000
// (valgrind runs no AVX-512: build it with -DLLMGATE_NATIVE=OFF -DCMAKE_CXX_FLAGS=-march=x86-64-v3.)
#include <algorithm>    // std::sort, std::max, std::inplace_merge
#include <atomic>       // std::atomic
#include <chrono>       // std::chrono
#include <cstdio>       // std::printf
#include <cstdlib>      // std::atof, std::atoll, std::atoi
#include <filesystem>   // std::filesystem::path: where the peers are
#include <fstream>      // std::ifstream
#include <functional>   // std::function
#include <iostream>     // std::cout
#include <map>          // std::map: each path's runs by name
#include <memory>       // std::unique_ptr
#include <optional>     // std::optional: a peer that did not start
#include <stdexcept>    // std::runtime_error
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <thread>       // std::thread
#include <vector>       // std::vector

#include <boost/asio.hpp>

#include <llmgate/server/gateway.hpp>
#include <llmgate/server/operations/large_allocations.hpp>

#include "bench_support.hpp"
#include "http_reading.hpp"  // read_buffer, whole_message
#include "peers/peers.hpp"   // nginx and Portkey as child processes

namespace fs = std::filesystem;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using namespace llmgate_bench;

namespace {

// Reads one message (whole_message) and removes it from `buffer.in`.
// Returns the number after the first space of its start line: a response's
// status.
net::awaitable<unsigned> read_message(tcp::socket& socket, read_buffer& buffer) {
  const std::size_t total = co_await whole_message(socket, buffer);
  const unsigned status = static_cast<unsigned>(std::atoi(buffer.in.c_str() + buffer.in.find(' ') + 1));
  buffer.in.erase(0, total);
  co_return status;
}

// Listens on a loopback port of its own and serves each connection with
// `serve`, on one thread of its own.
class loopback_server {
 public:
  using handler = std::function<net::awaitable<void>(tcp::socket)>;
  explicit loopback_server(handler serve) : serve_(std::move(serve)) {
    acceptor_.open(tcp::v4());
    acceptor_.set_option(tcp::acceptor::reuse_address(true));
    acceptor_.bind({net::ip::make_address("127.0.0.1"), 0});
    acceptor_.listen();
    net::co_spawn(io_, accept(), net::detached);
    thread_ = std::thread([this] { io_.run(); });
  }
  ~loopback_server() {
    io_.stop();
    thread_.join();
  }
  unsigned short port() const { return acceptor_.local_endpoint().port(); }

 private:
  net::awaitable<void> accept() {
    for (;;) {
      auto socket = co_await acceptor_.async_accept(net::use_awaitable);
      socket.set_option(tcp::no_delay(true));
      net::co_spawn(io_, serve_(std::move(socket)), net::detached);
    }
  }

  handler serve_;
  net::io_context io_;
  tcp::acceptor acceptor_{io_};
  std::thread thread_;
};

// A model server that answers every request with the same answer, at once
// or after `delay` (each request waits on its own: concurrent ones overlap).
class instant_upstream {
 public:
  explicit instant_upstream(std::chrono::milliseconds delay = {})
      : delay_(delay), answer_(answer()), server_([this](tcp::socket socket) { return serve(std::move(socket)); }) {}
  unsigned short port() const { return server_.port(); }
  // Requests answered so far: a run of cache hits must leave it unchanged.
  std::size_t served() const { return served_.load(); }

 private:
  static std::string answer() {
    llmgate::chat_response answer;
    answer.id = "chatcmpl-bench";
    answer.model = "bench-model";
    answer.content = "An instant answer.";
    answer.finish_reason = "stop";
    answer.usage = {12, 4, 0, 0};
    const std::string body = llmgate::completion_body(answer);
    return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
           "\r\n\r\n" + body;
  }
  // Keep-alive always: the gateway's client and the load generator keep their connections.
  net::awaitable<void> serve(tcp::socket socket) {
    read_buffer in;
    net::steady_timer wait(socket.get_executor());
    try {
      for (;;) {
        co_await read_message(socket, in);
        ++served_;
        if (delay_.count() > 0) {
          wait.expires_after(delay_);
          co_await wait.async_wait(net::use_awaitable);
        }
        co_await net::async_write(socket, net::buffer(answer_), net::use_awaitable);
      }
    } catch (const boost::system::system_error&) {
      // the client closed the connection
    }
  }

  const std::chrono::milliseconds delay_;
  const std::string answer_;  // the whole HTTP response
  std::atomic<std::size_t> served_{0};
  loopback_server server_;
};

// The least any proxy adds: each client connection gets a connection of its
// own to the upstream, and every message is passed on as bytes, unread.
// What the gateway adds beyond this relay is its own work; what this relay
// adds over the direct path is the two more loopback hops and the threads
// woken for them, which on a virtual machine are most of the difference.
class byte_relay {
 public:
  explicit byte_relay(unsigned short upstream_port)
      : upstream_port_(upstream_port), server_([this](tcp::socket socket) { return serve(std::move(socket)); }) {}
  unsigned short port() const { return server_.port(); }

 private:
  net::awaitable<void> serve(tcp::socket client) {
    tcp::socket upstream(client.get_executor());
    read_buffer from_client, from_upstream;
    try {
      co_await upstream.async_connect({net::ip::make_address("127.0.0.1"), upstream_port_}, net::use_awaitable);
      upstream.set_option(tcp::no_delay(true));
      for (;;) {
        co_await pass_one(client, from_client, upstream);
        co_await pass_one(upstream, from_upstream, client);
      }
    } catch (const boost::system::system_error&) {
      // the client closed the connection
    }
  }
  static net::awaitable<void> pass_one(tcp::socket& from, read_buffer& buffer, tcp::socket& to) {
    const std::size_t length = co_await whole_message(from, buffer);
    co_await net::async_write(to, net::buffer(buffer.in.data(), length), net::use_awaitable);
    buffer.in.erase(0, length);
  }

  unsigned short upstream_port_;
  loopback_server server_;
};

struct load_result {
  std::vector<double> latency_us;  // sorted
  std::size_t errors = 0;
  double seconds = 0;
  double cpu_seconds = 0;  // of the whole process while the load ran

  double cpu_us_per_request() const { return 1e6 * cpu_seconds / static_cast<double>(latency_us.size()); }

  // Adds the requests of another run of the same load.
  void add(const load_result& other) {
    const auto middle = static_cast<std::ptrdiff_t>(latency_us.size());
    latency_us.insert(latency_us.end(), other.latency_us.begin(), other.latency_us.end());
    std::inplace_merge(latency_us.begin(), latency_us.begin() + middle, latency_us.end());
    errors += other.errors;
    seconds += other.seconds;
    cpu_seconds += other.cpu_seconds;
  }

  double percentile(double q) const {
    if (latency_us.empty()) return 0;
    return latency_us[std::min(latency_us.size() - 1, static_cast<std::size_t>(q * latency_us.size()))];
  }
  double rps() const { return static_cast<double>(latency_us.size()) / seconds; }
};

// Sends request i (a POST of `target` with the body `body(i)`, after the
// header lines `headers`, each ending in CRLF) on one of `connections`
// keep-alive connections: at time start + i / rate when rate > 0 (open
// loop), else as soon as that connection's previous answer is in (closed loop).
load_result drive(unsigned short port, std::size_t requests, std::size_t connections, double rate,
                  const std::function<std::string(std::size_t)>& body, const std::string& headers = {},
                  const std::string& target = "/v1/chat/completions") {
  net::io_context io;
  std::vector<double> latency(requests);
  std::atomic<std::size_t> next{0}, errors{0}, answered{0};
  const auto start = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
  const auto due = [&](std::size_t i) {
    return start + std::chrono::nanoseconds(static_cast<std::int64_t>(1e9 * static_cast<double>(i) / rate));
  };
  const auto connection = [&]() -> net::awaitable<void> {
    tcp::socket socket(co_await net::this_coro::executor);
    co_await socket.async_connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port), net::use_awaitable);
    socket.set_option(tcp::no_delay(true));
    std::string request;
    read_buffer in;
    net::steady_timer timer(socket.get_executor());
    for (std::size_t i; (i = next++) < requests;) {
      auto sent = std::chrono::steady_clock::now();
      if (rate > 0) {
        timer.expires_at(due(i));
        co_await timer.async_wait(net::use_awaitable);
        sent = due(i);
      }
      const std::string content = body(i);
      request.assign("POST ").append(target).append(
          " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer bench-key\r\nContent-Type: application/json\r\n");
      request.append(headers).append("Content-Length: ");
      request.append(std::to_string(content.size())).append("\r\n\r\n").append(content);
      co_await net::async_write(socket, net::buffer(request), net::use_awaitable);
      const unsigned status = co_await read_message(socket, in);
      latency[i] = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - sent).count();
      if (status != 200) ++errors;
      ++answered;
    }
  };
  for (std::size_t c = 0; c < connections; ++c) net::co_spawn(io, connection(), net::detached);
  const auto began = std::chrono::steady_clock::now();
  const double cpu_before = process_cpu_seconds();
  io.run();
  load_result result;
  result.seconds = seconds_since(rate > 0 ? start : began);  // an open loop's first request is due at start
  result.cpu_seconds = process_cpu_seconds() - cpu_before;
  result.errors = errors + (requests - answered);  // a dropped connection loses its requests
  result.latency_us = std::move(latency);
  std::sort(result.latency_us.begin(), result.latency_us.end());
  return result;
}

std::string chat(const std::string& question) {
  return boost::json::serialize(boost::json::object{
      {"model", "bench-model"},
      {"messages", boost::json::array{boost::json::object{{"role", "user"}, {"content", question}}}}});
}

// The same question in Anthropic's Messages form (which requires max_tokens).
std::string message(const std::string& question) {
  return boost::json::serialize(boost::json::object{
      {"model", "bench-model"},
      {"max_tokens", 256},
      {"messages", boost::json::array{boost::json::object{{"role", "user"}, {"content", question}}}}});
}

// The same question in the Responses API's form (max_output_tokens as the
// Messages form's max_tokens: the same cache entry).
std::string responses_request(const std::string& question) {
  return boost::json::serialize(
      boost::json::object{{"model", "bench-model"}, {"max_output_tokens", 256}, {"input", question}});
}

// A chat route of the gateway: its path and a question in its form.
struct chat_route {
  std::string target;
  std::string (*form)(const std::string& question);
};
const chat_route chat_completions_route{"/v1/chat/completions", chat};
const chat_route messages_route{"/v1/messages", message};
const chat_route responses_route{"/v1/responses", responses_request};

std::string question(std::size_t i) { return "Benchmark question number " + std::to_string(i) + ", please answer."; }

double rss_mib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::atof(line.c_str() + 6) / 1024;
  return 0;
}

// caches: "on" (both tiers), "exact" (the exact tier only), "semantic"
// (the semantic tier only) or "off".
llmgate::gateway_config bench_config(unsigned short upstream_port, const std::string& caches, unsigned threads) {
  llmgate::gateway_config config;
  config.listen.port = 0;
  config.listen.threads = threads;
  config.backends = {{.name = "upstream", .base_url = "http://127.0.0.1:" + std::to_string(upstream_port) + "/v1",
                      .retries = 0}};
  config.models = {{.name = "bench-model", .backends = {"upstream"}}};
  config.tenants = {{"bench", "bench-key"}};
  config.log.requests = false;
  config.exact_cache.enabled = caches == "on" || caches == "exact";
  config.semantic_cache.enabled = caches == "on" || caches == "semantic";
  config.exact_cache.max_entries = 20'000;
  config.semantic_cache.max_entries = 20'000;
  return config;
}

// The targets, one row each, for people: llmgate's figure, the
// peer's, their difference and ratio, and whether the target is met (and
// by how much it is missed). `misses` holds "direct" (the upstream alone)
// and each path of gateway_vs_peers; `hits` each of gateway_hits_vs_peers.
table compare_with_peers(const std::map<std::string, load_result>& misses,
                         const std::map<std::string, load_result>& hits,
                         std::optional<std::size_t> upstream_during_hits) {
  table comparison({"comparison", "llmgate", "peer", "llmgate_minus_peer", "llmgate_over_peer", "target", "verdict"});
  // A ratio of two added latencies means something only when both are
  // above zero (a noisy p99 of the direct path can put them below).
  const auto ratio = [](double ours, double theirs) {
    return ours > 0 && theirs > 0 ? number(ours / theirs, 3) : "-";
  };
  const auto has = [](const std::map<std::string, load_result>& runs, const std::string& name) {
    return runs.count(name) != 0;
  };
  if (has(misses, "direct")) {
    const load_result& direct = misses.at("direct");
    const auto added = [&](const std::string& path, double q) {
      return misses.at(path).percentile(q) - direct.percentile(q);
    };
    struct pairing {
      const char* ours;
      const char* theirs;
      bool target;  // an issue's target, or shown for information
    };
    for (const pairing& pair : {pairing{"llmgate:off", "nginx", true}, pairing{"llmgate:exact", "nginx_proxy_cache", true},
                                pairing{"llmgate:both", "nginx_proxy_cache", false}, pairing{"llmgate:off", "portkey", true},
                                pairing{"llmgate:exact", "portkey", true}, pairing{"llmgate:both", "portkey", true}}) {
      if (!has(misses, pair.ours) || !has(misses, pair.theirs)) continue;
      for (const auto& [q, label] : {std::pair{0.5, "p50"}, std::pair{0.99, "p99"}}) {
        const double ours = added(pair.ours, q), theirs = added(pair.theirs, q);
        const bool portkey = std::string(pair.theirs) == "portkey";
        const bool met = portkey ? ours < theirs : ours <= theirs;
        comparison.add_row({std::string(pair.ours) + " vs " + pair.theirs + ", misses, added " + label + " us",
                            number(ours), number(theirs), number(ours - theirs), ratio(ours, theirs),
                            pair.target ? (portkey ? "< peer" : "<= peer") : "-",
                            !pair.target ? "-" : met ? "met" : "missed by " + number(ours - theirs, 3) + " us"});
      }
    }
  }
  for (const auto& [ours, floor] : {std::pair{"llmgate:exact", 1.0}, std::pair{"llmgate:semantic", 0.8}}) {
    if (!has(hits, ours) || !has(hits, "nginx_proxy_cache")) continue;
    const load_result& theirs = hits.at("nginx_proxy_cache");
    const double times = hits.at(ours).rps() / theirs.rps();
    comparison.add_row({std::string(ours) + " vs nginx_proxy_cache, hits per second", number(hits.at(ours).rps()),
                        number(theirs.rps()), number(hits.at(ours).rps() - theirs.rps()), number(times, 3),
                        ">= " + number(floor, 2) + "x", times >= floor ? "met" : "missed: " + number(times, 3) + "x"});
    comparison.add_row({std::string(ours) + " vs nginx_proxy_cache, hits p99 us",
                        number(hits.at(ours).percentile(0.99)), number(theirs.percentile(0.99)),
                        number(hits.at(ours).percentile(0.99) - theirs.percentile(0.99)),
                        ratio(hits.at(ours).percentile(0.99), theirs.percentile(0.99)), "-", "-"});
  }
  std::size_t ours_errors = 0, requests = 0;
  for (const auto* runs : {&misses, &hits})
    for (const auto& [name, run] : *runs)
      if (name.rfind("llmgate:", 0) == 0) {
        ours_errors += run.errors;
        requests += run.latency_us.size();
      }
  if (requests > 0)
    comparison.add_row({"llmgate errors, every path", std::to_string(ours_errors), "-", "-", "-", "0",
                        ours_errors == 0 ? "met" : "missed"});
  for (const char* peer : {"nginx", "nginx_proxy_cache", "portkey"})
    if (has(misses, peer))
      comparison.add_row({std::string(peer) + " errors, misses", "-", std::to_string(misses.at(peer).errors), "-", "-",
                          "-", "-"});
  // A peer slower than the rate falls behind and its latency grows over
  // each turn: what it answered per second says how far behind it was.
  if (has(misses, "portkey") && has(misses, "llmgate:off"))
    comparison.add_row({"llmgate:off vs portkey, misses answered per second (the same rate offered)",
                        number(misses.at("llmgate:off").rps()), number(misses.at("portkey").rps()),
                        number(misses.at("llmgate:off").rps() - misses.at("portkey").rps()),
                        number(misses.at("llmgate:off").rps() / misses.at("portkey").rps(), 3), "-", "-"});
  if (upstream_during_hits)
    comparison.add_row({"upstream requests during the hit runs", std::to_string(*upstream_during_hits), "-", "-", "-",
                        "0", *upstream_during_hits == 0 ? "met" : "missed"});
  return comparison;
}

}  // namespace

int main(int argc, char** argv) {
  double rate = 5000, seconds = 3;
  std::size_t soak = 1'000'000;
  unsigned gateway_threads = 2;
  std::string only;  // one part alone (to profile it); all three by default
  std::string only_caches;  // one gateway of the overhead part alone
  std::string peer_list = "nginx,nginx_proxy_cache,portkey";  // or "none"
  // The hit paths to run (to profile one): exact, messages, responses,
  // semantic (both tiers), semantic_only (the semantic tier alone),
  // nginx_proxy_cache; and how many requests each gets.
  std::string hit_list = "exact,messages,responses,semantic,semantic_only,nginx_proxy_cache";
  std::size_t hit_requests = 200'000;
  // The other APIs' routes the overhead part asks through the gateway
  // without caches, beside chat completions ("none": chat completions
  // alone, to profile it).
  std::string miss_route_list = "messages,responses";
  // Where the peers are: the source tree's bench/peers and build/bench-node
  // (scripts/bench gateway installs nginx and Portkey there).
  const fs::path source_dir = fs::path(LLMGATE_BENCH_RESULTS_DIR).parent_path().parent_path();
  std::string nginx_binary = "nginx", node_binary = "node";
  fs::path portkey_server =
      source_dir / "build/bench-node/node_modules/@portkey-ai/gateway/build/start-server.js";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string option = argv[i];
    if (option == "--rate") rate = std::atof(argv[i + 1]);
    else if (option == "--seconds") seconds = std::atof(argv[i + 1]);
    else if (option == "--soak") soak = static_cast<std::size_t>(std::atoll(argv[i + 1]));
    else if (option == "--only") only = argv[i + 1];
    else if (option == "--gateway-threads") gateway_threads = static_cast<unsigned>(std::atoi(argv[i + 1]));
    else if (option == "--caches") only_caches = argv[i + 1];
    else if (option == "--peers") peer_list = argv[i + 1];
    else if (option == "--hit-paths") hit_list = argv[i + 1];
    else if (option == "--hit-requests") hit_requests = static_cast<std::size_t>(std::atoll(argv[i + 1]));
    else if (option == "--miss-routes") miss_route_list = argv[i + 1];
    else if (option == "--nginx") nginx_binary = argv[i + 1];
    else if (option == "--node") node_binary = argv[i + 1];
    else if (option == "--portkey") portkey_server = argv[i + 1];
  }
  llmgate::map_large_allocations();  // as examples/gateway.cpp, the program measured, does
  const auto overhead_requests = static_cast<std::size_t>(rate * seconds);  // on each path
  instant_upstream upstream;
  table results({"run", "requests", "rps", "p50_us", "p99_us", "cpu_us_per_request", "errors"});
  std::vector<json_line> lines;
  const auto row = [&](const std::string& name, const load_result& r) {
    results.add_row({name, std::to_string(r.latency_us.size()), number(r.rps()), number(r.percentile(0.5)),
                     number(r.percentile(0.99)), number(r.cpu_us_per_request()), std::to_string(r.errors)});
  };

  const auto runs = [&](const char* part) { return only.empty() || only == part; };
  const auto listed = [](const std::string& list, const std::string& name) {  // in a comma-separated list
    return ("," + list + ",").find("," + name + ",") != std::string::npos;
  };
  const auto wants = [&](const std::string& peer) { return listed(peer_list, peer); };
  const auto wants_hits = [&](const std::string& path) { return listed(hit_list, path); };

  // The peers, started once for the parts that use them: nginx with one
  // worker per core, as its docs advise, and Portkey as its package starts
  // it (one Node process). A peer that cannot start is left out, and says
  // why on stderr.
  std::optional<peers::nginx> nginx;
  std::optional<peers::portkey> portkey;
  if ((wants("nginx") || wants("nginx_proxy_cache")) && (runs("overhead") || runs("hits"))) {
    try {
      const std::string binary = peers::find_program(nginx_binary);
      if (binary.empty()) throw std::runtime_error("no " + nginx_binary + " (scripts/setup nginx installs it)");
      nginx.emplace(binary, source_dir / "bench/peers/nginx.conf.in", upstream.port(),
                    std::max(1u, std::thread::hardware_concurrency()));
      progress("gateway bench: nginx (pid %d) on ports %u (proxy) and %u (proxy_cache)", static_cast<int>(nginx->pid()),
               nginx->proxy_port(), nginx->cache_port());
    } catch (const std::exception& error) {
      progress("gateway bench: nginx left out: %s", error.what());
    }
  }
  if (wants("portkey") && runs("overhead")) {
    try {
      const std::string node = peers::find_program(node_binary);
      if (node.empty()) throw std::runtime_error("no " + node_binary);
      portkey.emplace(node, portkey_server, upstream.port());
      progress("gateway bench: Portkey (pid %d) on port %u", static_cast<int>(portkey->pid()), portkey->port());
    } catch (const std::exception& error) {
      progress("gateway bench: Portkey left out (scripts/bench gateway installs it): %s", error.what());
    }
  }

  // What the comparisons with the peers read: each path's misses (and
  // the direct path's, which "added" subtracts) and hits.
  std::map<std::string, load_result> misses_of, hits_of;
  std::map<std::string, load_result> route_misses, route_hits;  // by route: without caches, and exact hits
  std::optional<std::size_t> upstream_during_hits;

  // Overhead on misses: the upstream alone, a bare relay, nginx, the
  // gateway with and without caches, and Portkey, each in turn for half a
  // second at a time, so that the machine's slow spells fall on all of
  // them alike. The first turn warms each up (connections, caches' first
  // inserts) and is not counted.
  if (runs("overhead")) {
    struct load_path {
      std::string name;
      std::string peer_name;       // its gateway_vs_peers path; empty for the upstream and the relay
      unsigned short port;
      std::size_t first_question;  // the gateways' and the proxy_cache's must all be new: misses
      std::string caches;          // a gateway's cache tiers; empty for the others
      std::string headers = {};    // header lines of its own (Portkey's routing)
      std::function<double()> peer_cpu_seconds = {};  // a peer process's processor time so far
      chat_route route = chat_completions_route;      // the API its questions are asked in
      load_result measured = {};
    };
    byte_relay relay(upstream.port());
    std::vector<load_path> paths = {{"upstream directly", "", upstream.port(), 0, ""},
                                    {"relay of bytes (the floor)", "", relay.port(), 0, ""}};
    if (nginx && wants("nginx"))
      paths.push_back({"nginx, misses", "nginx", nginx->proxy_port(), 0, "", "",
                       [&] { return nginx->cpu_seconds(); }});
    if (nginx && wants("nginx_proxy_cache"))
      paths.push_back({"nginx proxy_cache, misses", "nginx_proxy_cache", nginx->cache_port(),
                       1'000'000 * paths.size(), "", "", [&] { return nginx->cpu_seconds(); }});
    std::vector<std::unique_ptr<llmgate::gateway>> gateways;
    for (const std::string caches : {"on", "exact", "off"}) {
      if (!only_caches.empty() && caches != only_caches) continue;
      gateways.push_back(
          std::make_unique<llmgate::gateway>(bench_config(upstream.port(), caches, gateway_threads), nullptr));
      gateways.back()->start();
      paths.push_back({"gateway, misses, caches " + caches, caches == "on" ? "llmgate:both" : "llmgate:" + caches,
                       gateways.back()->port(), 1'000'000 * paths.size(), caches});
      if (caches != "off") continue;
      for (const auto& [name, route] : {std::pair("messages", messages_route), std::pair("responses", responses_route)})
        if (listed(miss_route_list, name))
          paths.push_back({"gateway, misses through " + route.target + ", caches off", "", gateways.back()->port(),
                           1'000'000 * paths.size(), caches, "", {}, route});
    }
    // Last, with a pause after it: Node's collector may still be at work
    // when its turn ends, and the upstream's turn comes next.
    if (portkey)
      paths.push_back({"portkey, misses", "portkey", portkey->port(), 0, "", portkey->request_headers(),
                       [&] { return portkey->cpu_seconds(); }});
    const std::size_t slice = std::max<std::size_t>(1, static_cast<std::size_t>(rate / 2));
    const std::size_t slices = std::max<std::size_t>(1, overhead_requests / slice);
    progress("gateway bench: %zu requests at %.0f/s on each of %zu paths, in turns of %zu", slices * slice, rate,
             paths.size(), slice);
    for (std::size_t turn = 0; turn <= slices; ++turn) {
      for (load_path& path : paths) {
        const std::size_t first = path.first_question + turn * slice;
        const double peer_cpu_before = path.peer_cpu_seconds ? path.peer_cpu_seconds() : 0;
        auto load = drive(
            path.port, slice, 64, rate, [&](std::size_t i) { return path.route.form(question(first + i)); },
            path.headers, path.route.target);
        if (path.peer_cpu_seconds) load.cpu_seconds += path.peer_cpu_seconds() - peer_cpu_before;
        if (turn > 0) path.measured.add(load);
        if (path.peer_name == "portkey") std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    }
    for (const load_path& path : paths) row(path.name, path.measured);
    const load_result& direct = paths[0].measured;
    const load_result& relayed = paths[1].measured;
    for (const load_path& gateway : paths) {
      if (gateway.caches.empty()) continue;
      const load_result& through = gateway.measured;
      lines.push_back(json_line()
                          .add("bench", "gateway_overhead")
                          .add("rps", rate)
                          .add("caches", gateway.caches)
                          .add("route", gateway.route.target)
                          .add("added_p50_us", through.percentile(0.5) - direct.percentile(0.5))
                          .add("added_p99_us", through.percentile(0.99) - direct.percentile(0.99))
                          .add("direct_p50_us", direct.percentile(0.5))
                          .add("direct_p99_us", direct.percentile(0.99))
                          .add("relay_added_p50_us", relayed.percentile(0.5) - direct.percentile(0.5))
                          .add("relay_added_p99_us", relayed.percentile(0.99) - direct.percentile(0.99))
                          .add("cpu_us_per_request", through.cpu_us_per_request())
                          .add("relay_cpu_us_per_request", relayed.cpu_us_per_request())
                          .add("direct_cpu_us_per_request", direct.cpu_us_per_request())
                          .add("errors", through.errors + relayed.errors + direct.errors));
    }
    misses_of["direct"] = direct;
    for (const load_path& path : paths) {
      if (!path.peer_name.empty()) misses_of[path.peer_name] = path.measured;
      if (path.caches == "off") route_misses[path.route.target] = path.measured;
    }
    // A peer's errors are reported, never hidden: what it said about them too.
    const auto errors_of = [&](const char* name) {
      const auto found = misses_of.find(name);
      return found == misses_of.end() ? std::size_t{0} : found->second.errors;
    };
    if (portkey && errors_of("portkey") > 0)
      progress("gateway bench: Portkey failed %zu requests; its output ends:\n%s", errors_of("portkey"),
               portkey->log_tail().c_str());
    if (nginx && errors_of("nginx") + errors_of("nginx_proxy_cache") > 0)
      progress("gateway bench: nginx failed requests; its error log ends:\n%s", nginx->read_error_log().c_str());
    for (const char* name : {"nginx", "nginx_proxy_cache", "portkey", "llmgate:off", "llmgate:exact", "llmgate:both"}) {
      const auto path = misses_of.find(name);
      if (path == misses_of.end()) continue;
      lines.push_back(json_line()
                          .add("bench", "gateway_vs_peers")
                          .add("rps", rate)
                          .add("path", name)
                          .add("added_p50_us", path->second.percentile(0.5) - direct.percentile(0.5))
                          .add("added_p99_us", path->second.percentile(0.99) - direct.percentile(0.99))
                          .add("errors", path->second.errors));
    }
  }

  // Hits, as fast as 32 connections get them: the gateway's exact and
  // semantic hits and nginx's proxy_cache hits of the same request, in
  // ten turns of 20,000 each (short, so that the machine's slow spells fall
  // on all of them alike). The upstream must answer none of them.
  //
  // With both tiers, a semantic hit is stored under the request's own key
  // (exact_cache_stage's promote), so the rephrasing's repeats after the
  // first are exact hits: gateway_hits' "semantic" has always measured that.
  // gateway_hits_vs_peers' llmgate:semantic asks a gateway with the
  // semantic tier alone, where every request is a semantic hit (embedding,
  // index search, verifier).
  if (runs("hits")) {
    // Only the gateways of the paths asked for (--hit-paths) are made, so
    // that a profile of one path sees that gateway's threads alone.
    const bool both_tiers =
        wants_hits("exact") || wants_hits("messages") || wants_hits("responses") || wants_hits("semantic");
    std::optional<llmgate::gateway> gateway, semantic_only;
    const std::string capital = "What is the capital of France?";
    const std::string stored = chat(capital);
    if (both_tiers) {
      gateway.emplace(bench_config(upstream.port(), "on", gateway_threads), nullptr);
      gateway->start();
      for (const chat_route& route : {chat_completions_route, messages_route, responses_route})
        drive(gateway->port(), 1, 1, 0, [&](std::size_t) { return route.form(capital); }, {}, route.target);
    }
    if (wants_hits("semantic_only")) {
      semantic_only.emplace(bench_config(upstream.port(), "semantic", gateway_threads), nullptr);
      semantic_only->start();
      drive(semantic_only->port(), 1, 1, 0, [&](std::size_t) { return stored; });
    }
    const std::string rephrased = chat("what is the capital city of France");
    struct hit_path {
      std::string name;
      std::string kind;       // its gateway_hits kind, if it has one
      std::string peer_name;  // its gateway_hits_vs_peers path, if it has one
      unsigned short port;
      std::string body;
      std::function<double()> peer_cpu_seconds = {};  // a peer process's processor time so far
      std::string target = "/v1/chat/completions";
      load_result measured = {};
    };
    std::vector<hit_path> paths;
    if (wants_hits("exact"))
      paths.push_back({"gateway, exact hits", "exact", "llmgate:exact", gateway->port(), stored});
    for (const auto& [kind, route] : {std::pair("messages", messages_route), std::pair("responses", responses_route)})
      if (wants_hits(kind))
        paths.push_back({"gateway, exact hits through " + route.target, kind, "", gateway->port(),
                         route.form(capital), {}, route.target});
    if (wants_hits("semantic"))
      paths.push_back({"gateway, semantic hits", "semantic", "", gateway->port(), rephrased});
    if (semantic_only)
      paths.push_back({"gateway (semantic tier only), semantic hits", "", "llmgate:semantic", semantic_only->port(),
                       rephrased});
    if (nginx && wants("nginx_proxy_cache") && wants_hits("nginx_proxy_cache")) {
      drive(nginx->cache_port(), 1, 1, 0, [&](std::size_t) { return stored; });  // stored, when answered
      paths.push_back({"nginx proxy_cache, hits", "", "nginx_proxy_cache", nginx->cache_port(), stored,
                       [&] { return nginx->cpu_seconds(); }});
    }
    const std::size_t hit_turns = 10;
    progress("gateway bench: hits, closed loop, %zu requests on each of %zu paths in %zu turns", hit_requests,
             paths.size(), hit_turns);
    const std::size_t served_before = upstream.served();
    for (std::size_t turn = 0; turn < hit_turns; ++turn)
      for (hit_path& path : paths) {
        const double peer_cpu_before = path.peer_cpu_seconds ? path.peer_cpu_seconds() : 0;
        auto hits =
            drive(path.port, hit_requests / hit_turns, 32, 0, [&](std::size_t) { return path.body; }, {}, path.target);
        if (path.peer_cpu_seconds) hits.cpu_seconds += path.peer_cpu_seconds() - peer_cpu_before;
        path.measured.add(hits);
      }
    const std::size_t served_during_hits = upstream.served() - served_before;
    if (served_during_hits != 0)
      progress("gateway bench: the upstream answered %zu requests during the hit runs: some were not hits",
               served_during_hits);
    for (const hit_path& path : paths) {
      row(path.name, path.measured);
      if (!path.peer_name.empty()) hits_of[path.peer_name] = path.measured;
      if (path.kind == "exact" || path.kind == "messages" || path.kind == "responses")
        route_hits[path.target] = path.measured;
      if (path.kind.empty()) continue;
      lines.push_back(json_line()
                          .add("bench", "gateway_hits")
                          .add("kind", path.kind)
                          .add("rps", path.measured.rps())
                          .add("p50_us", path.measured.percentile(0.5))
                          .add("p99_us", path.measured.percentile(0.99))
                          .add("errors", path.measured.errors));
    }
    for (const char* name : {"nginx_proxy_cache", "llmgate:exact", "llmgate:semantic"}) {
      const auto path = hits_of.find(name);
      if (path == hits_of.end()) continue;
      lines.push_back(json_line()
                          .add("bench", "gateway_hits_vs_peers")
                          .add("path", name)
                          .add("rps", path->second.rps())
                          .add("p99_us", path->second.percentile(0.99)));
    }
    upstream_during_hits = served_during_hits;
  }
  // Each of the other APIs' routes beside chat completions, on the same
  // upstream: what the gateway without caches adds to a miss (over the
  // upstream asked directly), and exact hits.
  for (const chat_route& route : {messages_route, responses_route}) {
    json_line line;
    line.add("bench", "gateway_routes").add("route", route.target);
    const auto miss = route_misses.find(route.target);
    const auto chat_miss = route_misses.find(chat_completions_route.target);
    const auto direct = misses_of.find("direct");
    const bool measured_misses = miss != route_misses.end() && chat_miss != route_misses.end() && direct != misses_of.end();
    if (measured_misses) {
      const auto added = [&](const load_result& r, double q) { return r.percentile(q) - direct->second.percentile(q); };
      line.add("miss_added_p50_us", added(miss->second, 0.5))
          .add("chat_miss_added_p50_us", added(chat_miss->second, 0.5))
          .add("miss_added_p99_us", added(miss->second, 0.99))
          .add("chat_miss_added_p99_us", added(chat_miss->second, 0.99))
          .add("miss_cpu_us_per_request", miss->second.cpu_us_per_request())
          .add("chat_miss_cpu_us_per_request", chat_miss->second.cpu_us_per_request());
    }
    const auto hit = route_hits.find(route.target);
    const auto chat_hit = route_hits.find(chat_completions_route.target);
    const bool measured_hits = hit != route_hits.end() && chat_hit != route_hits.end();
    if (measured_hits)
      line.add("hit_rps", hit->second.rps())
          .add("chat_hit_rps", chat_hit->second.rps())
          .add("hit_rps_ratio", hit->second.rps() / chat_hit->second.rps())
          .add("hit_p99_us", hit->second.percentile(0.99))
          .add("chat_hit_p99_us", chat_hit->second.percentile(0.99));
    if (measured_misses || measured_hits) lines.push_back(line);
  }
  // Bursts: `clients` identical requests at once, a new question each
  // burst, all misses, to an upstream that takes 50 ms to answer; with
  // coalescing on (one upstream call a burst) and off (one each).
  if (runs("coalescing")) {
    constexpr std::size_t bursts = 20, clients = 50;
    instant_upstream slow(std::chrono::milliseconds(50));
    json_line line;
    line.add("bench", "coalescing").add("bursts", bursts).add("clients", clients);
    for (const bool coalescing : {true, false}) {
      auto config = bench_config(slow.port(), "on", gateway_threads);
      config.exact_cache.coalesce = coalescing;
      llmgate::gateway gateway(config, nullptr);
      gateway.start();
      progress("gateway bench: %zu bursts of %zu identical misses, coalescing %s", bursts, clients,
               coalescing ? "on" : "off");
      const std::size_t before = slow.served();
      load_result all;
      for (std::size_t b = 0; b < bursts; ++b)
        all.add(drive(gateway.port(), clients, clients, 0, [b](std::size_t) { return chat(question(20'000'000 + b)); }));
      const std::string on_off = coalescing ? "on" : "off";
      row("burst of identical misses, coalescing " + on_off, all);
      line.add("upstream_calls_" + on_off, slow.served() - before)
          .add("p99_us_" + on_off, all.percentile(0.99))
          .add("errors_" + on_off, all.errors);
    }
    lines.push_back(line);
  }

  // The soak has no peers: they go now, with what they hold.
  nginx.reset();
  portkey.reset();

  // Soak: a long mixed run; memory after warm-up and at the end, with both
  // cache tiers and with the exact tier alone.
  for (const std::string caches : {"on", "exact"}) {
    if (!runs("soak")) break;
    llmgate::gateway gateway(bench_config(upstream.port(), caches, gateway_threads), nullptr);
    gateway.start();
    const auto mixed = [](std::size_t offset) {
      return [offset](std::size_t i) {
        return chat(i % 10 == 0 ? question(10'000'000 + offset + i) : question(i % 1000));
      };
    };
    // In rounds of the same size, RSS read between rounds: the load
    // generator's own buffers are then the same at every reading.
    const std::size_t round = std::min<std::size_t>(soak, 100'000);
    // The warm-up fills the caches (20,000 entries, a tenth of requests
    // new) whatever the soak's length: RSS then grows only by what leaks or
    // fragments.
    const std::size_t rounds = soak / round;
    const std::size_t warm_up_rounds = std::max<std::size_t>(rounds / 5, (200'000 + round - 1) / round);
    progress("gateway bench: soak with caches %s, warm-up of %zu requests", caches.c_str(), warm_up_rounds * round);
    load_result warm, long_run;
    for (std::size_t r = 0; r < warm_up_rounds; ++r) warm = drive(gateway.port(), round, 32, 0, mixed(r * round));
    const double rss_warm = rss_mib();
    progress("gateway bench: soak with caches %s, %zu requests", caches.c_str(), rounds * round);
    std::size_t errors = warm.errors;
    double busy_seconds = 0;
    for (std::size_t r = 0; r < rounds; ++r) {
      long_run = drive(gateway.port(), round, 32, 0, mixed((warm_up_rounds + r) * round));
      errors += long_run.errors;
      busy_seconds += long_run.seconds;
    }
    const double rss_end = rss_mib();
    row("gateway soak (last round), caches " + caches, long_run);
    lines.push_back(json_line()
                        .add("bench", "gateway_soak")
                        .add("caches", caches)
                        .add("requests", rounds * round)
                        .add("rss_warm_mib", rss_warm)
                        .add("rss_end_mib", rss_end)
                        .add("rss_growth_pct", 100 * (rss_end - rss_warm) / rss_warm)
                        .add("rps", static_cast<double>(rounds * round) / busy_seconds)
                        .add("errors", errors));
  }

  std::printf("llmgate gateway on loopback: open loop at %.0f requests/s for %.0f s, then hits and a soak\n\n", rate,
              seconds);
  results.print(std::cout);
  std::printf("\n");
  if (!misses_of.empty() || !hits_of.empty()) {
    std::printf("llmgate beside its peers (the issue's targets; added = the path's latency minus the upstream's)\n\n");
    compare_with_peers(misses_of, hits_of, upstream_during_hits).print(std::cout);
    std::printf("\n");
  }
  publish("gateway", results, lines);
  return 0;
}
