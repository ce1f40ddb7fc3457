// shared tier benchmark: three gateway processes (the gateway program)
// sharing their caches through Redis, as replicas behind a load balancer
// do, against a gateway process of its own (no "shared" section) in the
// same run. Everything is on loopback: the model server
// (tests/redis/gateway_processes.hpp's replica_upstream, in this process),
// redis-server children (tests/redis/redis_server.hpp, redis_cluster.hpp),
// the gateways, and a load generator of the kind bench/gateway_bench.cpp
// uses (Asio, one thread, keep-alive connections, messages read by
// Content-Length alone).
//
//   shared_tier        on one Redis, then on a 3-master Redis Cluster:
//                      an open-loop load at --rate requests/s on the three
//                      replicas and the gateway alone, which so has as much
//                      work of its own as each replica (8 connections each;
//                      two thirds of the requests ask again a question
//                      asked before, a third a new one, for 4 tenants;
//                      latency counted from when a request was due), and
//                      meanwhile propagation samples:
//                      a new question answered fresh through one replica,
//                      then asked (exact) and paraphrased (semantic) on the
//                      other two until each hits; the delay from the
//                      origin's response to each hit. The model server
//                      refuses a sampled question once its origin has it,
//                      so a probe that misses gets a 400 and stores nothing.
//                      Then the same exact hit asked of one replica and of
//                      the gateway of its own side by side, as fast as 8
//                      connections to each get them: p99 of each and their
//                      ratio.
//   shared_tier_fault  on one Redis: the same load on the replicas alone
//                      for --fault-seconds, Redis killed (SIGKILL) after a
//                      third of it and started again, empty, after two
//                      thirds; failed
//                      requests, how long until every replica's /readyz
//                      said "degraded" and then "ready", and whether every
//                      answer made fresh while Redis was away reached it
//                      once it was back (its text in an exact entry and in
//                      the semantic stream).
//
//   llmgate_bench_shared [--requests N] [--rate R] [--samples S] [--fault-seconds T]
//                        [--only single|cluster|fault]
//
// N (default 12000) is the least number of load requests of each
// shared_tier run (it goes on until the S samples, default 200, are done);
// R defaults to 1000 (what 2 cores carry with the 4 gateways, Redis and
// the load generator on them), T to 15.
#include <algorithm>   // std::sort, std::min, std::count_if, std::equal
#include <atomic>      // std::atomic
#include <chrono>      // std::chrono
#include <cstdio>      // std::printf
#include <cctype>      // std::tolower
#include <cstdlib>     // std::atoi, std::atof, std::strtoull
#include <filesystem>  // std::filesystem::exists
#include <functional>  // std::function
#include <iostream>    // std::cout
#include <map>         // std::map
#include <memory>      // std::unique_ptr
#include <optional>    // std::optional
#include <string>      // std::string
#include <string_view> // std::string_view
#include <thread>      // std::thread
#include <utility>     // std::pair
#include <vector>      // std::vector

#include <boost/asio.hpp>

#include "bench_support.hpp"
#include "http_reading.hpp"  // read_buffer, whole_message
#include "redis/gateway_processes.hpp"  // gateway_process, replica_config, replica_upstream
#include "redis/redis_cluster.hpp"      // redis_cluster
#include "redis/redis_server.hpp"       // redis_server
#include "temporary_directory.hpp"      // temporary_directory

namespace net = boost::asio;
using tcp = net::ip::tcp;
using namespace llmgate_bench;
using namespace llmgate::test;

namespace {

constexpr std::size_t tenant_count = 4, repeated_questions = 300, connections_per_replica = 8;

// Where each kind of question takes its numbers (test_question(n)), apart
// from one another: the model server refuses a sampled question once its
// origin has answered it, and a load request must never be one of those.
constexpr std::size_t sampled_from = 100'000'000, load_rounds_from = 200'000'000, fault_load_from = 300'000'000;

std::string tenant_key_of(std::size_t t) { return "bench-key-" + std::to_string(t); }

std::vector<tenant_key> bench_tenants() {
  std::vector<tenant_key> tenants;
  for (std::size_t t = 0; t < tenant_count; ++t) tenants.push_back({"tenant-" + std::to_string(t), tenant_key_of(t)});
  return tenants;
}

std::string chat(std::string_view text) {
  return boost::json::serialize(boost::json::object{
      {"model", "test-model"},
      {"messages", boost::json::array{boost::json::object{{"role", "user"}, {"content", text}}}}});
}

// The value of header `name` (lower case, as the gateway writes its own)
// in the head in[0, head); empty when absent.
std::string_view header_value(std::string_view in, std::size_t head, std::string_view name) {
  for (std::size_t line = in.find("\r\n"); line < head; line = in.find("\r\n", line + 2)) {
    const std::string_view rest = in.substr(line + 2, head - line - 2);
    if (rest.size() > name.size() && rest[name.size()] == ':' &&
        std::equal(name.begin(), name.end(), rest.begin(),
                   [](char a, char b) { return a == std::tolower(static_cast<unsigned char>(b)); })) {
      std::string_view value = rest.substr(name.size() + 1, rest.find("\r\n") - name.size() - 1);
      while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
      return value;
    }
  }
  return {};
}

// One response: its status and whether x-llmgate-cache said "miss".
struct response_head {
  unsigned status = 0;
  bool miss = false;
};

// Reads one whole response (a Content-Length body, which is all the
// gateway sends) and removes it from `buffer.in`.
net::awaitable<response_head> read_response(tcp::socket& socket, read_buffer& buffer) {
  const std::size_t total = co_await whole_message(socket, buffer);
  std::string& in = buffer.in;
  const std::size_t head = in.find("\r\n\r\n");
  response_head response{static_cast<unsigned>(std::atoi(in.c_str() + in.find(' ') + 1)),
                         header_value(in, head, "x-llmgate-cache") == "miss"};
  in.erase(0, total);
  co_return response;
}

// Request i of a load: whose key and which question.
struct planned {
  std::size_t tenant;
  std::string text;
};

struct outcome {
  double latency_us = 0;
  unsigned status = 0;  // 0: no response (the connection failed)
  bool miss = false;
  unsigned short port = 0;  // the gateway's
  std::size_t tenant = 0;
  std::string text;  // kept for misses only (the fault run's check)
  steady::time_point done;
};

struct load_result {
  std::vector<outcome> outcomes;
  double seconds = 0;

  std::size_t errors() const {
    return static_cast<std::size_t>(std::count_if(outcomes.begin(), outcomes.end(), [](const outcome& o) {
      return o.status != 200;
    }));
  }
  // "none" when every request got a 200, else each other status with its
  // count ("0": no response), for the progress lines.
  std::string failed_statuses() const {
    std::map<unsigned, std::size_t> failed;
    for (const auto& o : outcomes)
      if (o.status != 200) ++failed[o.status];
    std::string text;
    for (const auto& [status, count] : failed)
      text += (text.empty() ? "" : ", ") + std::to_string(count) + " x " + std::to_string(status);
    return text.empty() ? "none" : text;
  }
  std::vector<double> latencies_us() const {
    std::vector<double> latency;
    for (const auto& o : outcomes) latency.push_back(o.latency_us);
    std::sort(latency.begin(), latency.end());
    return latency;
  }
};

double percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  return sorted[std::min(sorted.size() - 1, static_cast<std::size_t>(q * static_cast<double>(sorted.size())))];
}

// Request i (of `requests`, or until `stop`), as plan(i) says, on one of
// `connections` keep-alive connections to each port: at time
// start + i / rate when rate > 0 (an open loop, latency counted from when
// the request was due), else on the first connection free (a closed loop).
load_result drive(const std::vector<unsigned short>& ports, std::size_t connections, std::size_t requests, double rate,
                  const std::function<planned(std::size_t)>& plan, const std::atomic<bool>* stop = nullptr) {
  net::io_context io;
  load_result result;
  std::size_t next = 0;
  const auto start = steady::now() + std::chrono::milliseconds(20);
  const auto connection = [&](unsigned short port) -> net::awaitable<void> {
    tcp::socket socket(co_await net::this_coro::executor);
    net::steady_timer timer(socket.get_executor());
    read_buffer in;
    std::string request;
    for (std::size_t i; (!stop || !*stop) && (i = next++) < requests;) {
      auto sent = steady::now();
      if (rate > 0) {
        sent = start + std::chrono::nanoseconds(static_cast<std::int64_t>(1e9 * static_cast<double>(i) / rate));
        timer.expires_at(sent);
        co_await timer.async_wait(net::use_awaitable);
      }
      planned p = plan(i);
      const std::string body = chat(p.text);
      request.assign("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ")
          .append(tenant_key_of(p.tenant))
          .append("\r\nContent-Type: application/json\r\nContent-Length: ")
          .append(std::to_string(body.size()))
          .append("\r\n\r\n")
          .append(body);
      outcome o;
      o.port = port;
      o.tenant = p.tenant;
      try {
        if (!socket.is_open()) {
          co_await socket.async_connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port), net::use_awaitable);
          socket.set_option(tcp::no_delay(true));
        }
        co_await net::async_write(socket, net::buffer(request), net::use_awaitable);
        const response_head response = co_await read_response(socket, in);
        o.status = response.status;
        o.miss = response.miss;
      } catch (const boost::system::system_error&) {
        socket.close();  // counted as an error; the next request connects again
        in.in.clear();
      }
      o.done = steady::now();
      o.latency_us = std::chrono::duration<double, std::micro>(o.done - sent).count();
      if (o.miss) o.text = std::move(p.text);
      result.outcomes.push_back(std::move(o));
    }
  };
  for (const auto port : ports)
    for (std::size_t c = 0; c < connections; ++c) net::co_spawn(io, connection(port), net::detached);
  const auto began = steady::now();
  io.run();
  result.seconds = seconds_since(rate > 0 ? start : began);
  return result;
}

// The mixed load: two thirds repeats of `repeated_questions` questions per
// tenant, a third new questions numbered from `first_new`.
std::function<planned(std::size_t)> mixed_load(std::size_t first_new) {
  return [first_new](std::size_t i) {
    const std::size_t tenant = i % tenant_count;
    if (i % 3 == 2) return planned{tenant, test_question(first_new + i)};
    return planned{tenant, test_question((i * 7919) % repeated_questions)};
  };
}

// Three replicas and a gateway of its own, all before one model server.
struct gateways {
  gateways(const temporary_directory& dir, const replica_upstream& upstream, const std::vector<llmgate::redis::endpoint>& endpoints,
           unsigned snapshot_interval_s = 60) {
    const auto tenants = bench_tenants();
    for (const char* name : {"a", "b", "c"})
      replicas.push_back(std::make_unique<gateway_process>(
          LLMGATE_GATEWAY_PROGRAM, dir.path(), name,
          replica_config(upstream.url(), tenants,
                         shared_section({.endpoints = endpoints, .replica = name,
                                         .snapshot_interval_s = snapshot_interval_s}))));
    alone = std::make_unique<gateway_process>(LLMGATE_GATEWAY_PROGRAM, dir.path(), "alone",
                                              replica_config(upstream.url(), tenants));
    for (auto* g : all()) g->start();
    for (auto* g : all())
      if (!g->wait_until_healthy(std::chrono::seconds(30)))
        throw std::runtime_error("gateway " + g->name() + " did not start:\n" + g->log());
  }
  std::vector<gateway_process*> all() {
    return {replicas[0].get(), replicas[1].get(), replicas[2].get(), alone.get()};
  }
  /// The replicas' and, last, the gateway alone's: the load goes to all
  /// four, so that the gateway alone has as much work of its own (its
  /// misses, its embedder's IDF refreshes) as each replica when their hits
  /// are compared.
  std::vector<unsigned short> all_ports() const {
    return {replicas[0]->port(), replicas[1]->port(), replicas[2]->port(), alone->port()};
  }
  std::vector<unsigned short> replica_ports() const {
    return {replicas[0]->port(), replicas[1]->port(), replicas[2]->port()};
  }

  std::vector<std::unique_ptr<gateway_process>> replicas;
  std::unique_ptr<gateway_process> alone;
};

// The machine's load average over the last minute (/proc/loadavg): on a
// machine shared with other work, what its latencies mean depends on it.
double load_average() {
  std::ifstream in("/proc/loadavg");
  double one_minute = 0;
  in >> one_minute;
  return one_minute;
}

// Asks `text` of `port` with tenant t's key: the status and x-llmgate-cache.
std::pair<unsigned, std::string> ask(unsigned short port, std::size_t tenant, const std::string& text) {
  try {
    const auto reply = post(port, "/v1/chat/completions", chat(text), tenant_key_of(tenant));
    return {reply.status, reply.header("x-llmgate-cache")};
  } catch (const std::exception&) {
    return {0, ""};
  }
}

// Propagation samples, taken while a load runs: the delays (ms) from a
// fresh answer's response on one replica to the first hit on each of the
// other two, exact and semantic apart; and the probes that failed
// otherwise than by the refusal a miss gets.
struct propagation {
  std::vector<double> exact_ms, semantic_ms;
  std::size_t errors = 0, unreached = 0;
};

propagation sample_propagation(gateways& g, replica_upstream& upstream, std::size_t samples, std::size_t first,
                               std::chrono::milliseconds limit = std::chrono::seconds(5)) {
  propagation p;
  for (std::size_t s = 0; s < samples; ++s) {
    const std::size_t origin = s % 3, tenant = s % tenant_count;
    const std::string exact = test_question(first + 2 * s), semantic = test_question(first + 2 * s + 1),
                      near = test_paraphrase(first + 2 * s + 1);
    const auto [exact_status, exact_cache] = ask(g.replicas[origin]->port(), tenant, exact);
    const auto [semantic_status, semantic_cache] = ask(g.replicas[origin]->port(), tenant, semantic);
    const auto answered = steady::now();
    if (exact_status != 200 || semantic_status != 200 || exact_cache != "miss" || semantic_cache != "miss") {
      ++p.errors;
      continue;
    }
    upstream.refuse(exact);
    upstream.refuse(semantic);
    upstream.refuse(near);
    // Both other replicas probed in turn, each until it hits with each kind.
    struct probe {
      unsigned short port;
      const std::string* text;
      std::vector<double>* into;
      bool done = false;
    };
    std::vector<probe> probes;
    for (std::size_t other = 0; other < 3; ++other) {
      if (other == origin) continue;
      probes.push_back({g.replicas[other]->port(), &exact, &p.exact_ms});
      probes.push_back({g.replicas[other]->port(), &near, &p.semantic_ms});
    }
    for (std::size_t left = probes.size(); left > 0;) {
      for (auto& pr : probes) {
        if (pr.done) continue;
        const auto [status, cache] = ask(pr.port, tenant, *pr.text);
        const auto since = steady::now() - answered;
        if (status == 200 && cache != "miss") {
          pr.into->push_back(std::chrono::duration<double, std::milli>(since).count());
        } else if (status != 400) {
          ++p.errors;
        } else if (since < limit) {
          continue;
        } else {
          ++p.unreached;
        }
        pr.done = true;
        --left;
      }
    }
  }
  return p;
}

// Exact hits asked of `replica` and of `alone` at the same time, 8
// connections each, so that both meet the same slow spells of a busy
// machine: the same request (answered once before), `requests` in all.
std::pair<load_result, load_result> hits_side_by_side(unsigned short replica, unsigned short alone,
                                                      std::size_t requests) {
  const auto same = [](std::size_t) { return planned{0, test_question(0)}; };
  drive({replica, alone}, 1, 2, 0, same);  // a miss on either at most, then hits
  const load_result both = drive({replica, alone}, connections_per_replica, requests, 0, same);
  load_result on_replica, on_alone;
  for (const auto& o : both.outcomes) (o.port == replica ? on_replica : on_alone).outcomes.push_back(o);
  on_replica.seconds = on_alone.seconds = both.seconds;
  return {std::move(on_replica), std::move(on_alone)};
}

// shared_tier on one Redis or on a cluster (`endpoints`).
json_line shared_tier_run(const std::string& redis_kind, const std::vector<llmgate::redis::endpoint>& endpoints,
                          std::size_t requests, double rate, std::size_t samples, table& results) {
  temporary_directory dir;
  replica_upstream upstream;
  gateways g(dir, upstream, endpoints);
  progress("shared bench (%s): load of at least %zu requests at %.0f/s on 3 replicas and the gateway alone, %zu "
           "propagation samples meanwhile", redis_kind.c_str(), requests, rate, samples);
  std::atomic<bool> sampled{false};
  propagation p;
  std::thread sampler([&] {
    p = sample_propagation(g, upstream, samples, sampled_from);
    sampled = true;
  });
  load_result load;
  for (std::size_t round = 0; !sampled || load.outcomes.size() < requests; ++round) {
    auto part = drive(g.all_ports(), connections_per_replica, 1000, rate, mixed_load(load_rounds_from + 1'000 * round));
    load.outcomes.insert(load.outcomes.end(), part.outcomes.begin(), part.outcomes.end());
    load.seconds += part.seconds;
  }
  sampler.join();
  progress("shared bench (%s): %zu load requests, failed: %s; propagation probes failed: %zu, never hit: %zu",
           redis_kind.c_str(), load.outcomes.size(), load.failed_statuses().c_str(), p.errors, p.unreached);
  progress("shared bench (%s): hits on a replica and on a gateway of its own, side by side", redis_kind.c_str());
  const auto [on_replica, on_alone] = hits_side_by_side(g.replicas[0]->port(), g.alone->port(), 40'000);

  std::vector<double> delays = p.exact_ms;
  delays.insert(delays.end(), p.semantic_ms.begin(), p.semantic_ms.end());
  std::sort(delays.begin(), delays.end());
  std::sort(p.exact_ms.begin(), p.exact_ms.end());
  std::sort(p.semantic_ms.begin(), p.semantic_ms.end());
  const auto load_latency = load.latencies_us(), replica_hits = on_replica.latencies_us(),
             alone_hits = on_alone.latencies_us();
  const std::size_t errors = load.errors() + on_replica.errors() + on_alone.errors() + p.errors + p.unreached;
  const std::size_t total = load.outcomes.size() + on_replica.outcomes.size() + on_alone.outcomes.size();
  results.add_row({redis_kind + ": load on 3 replicas and the gateway alone", std::to_string(load.outcomes.size()),
                   number(static_cast<double>(load.outcomes.size()) / load.seconds), number(percentile(load_latency, 0.5)),
                   number(percentile(load_latency, 0.99)), std::to_string(load.errors())});
  results.add_row({redis_kind + ": exact hits on a replica", std::to_string(on_replica.outcomes.size()),
                   number(static_cast<double>(on_replica.outcomes.size()) / on_replica.seconds),
                   number(percentile(replica_hits, 0.5)), number(percentile(replica_hits, 0.99)),
                   std::to_string(on_replica.errors())});
  results.add_row({redis_kind + ": exact hits on a gateway alone", std::to_string(on_alone.outcomes.size()),
                   number(static_cast<double>(on_alone.outcomes.size()) / on_alone.seconds),
                   number(percentile(alone_hits, 0.5)), number(percentile(alone_hits, 0.99)),
                   std::to_string(on_alone.errors())});
  return json_line()
      .add("bench", "shared_tier")
      .add("replicas", 3)
      .add("redis", redis_kind)
      .add("propagation_p50_ms", percentile(delays, 0.5))
      .add("propagation_p99_ms", percentile(delays, 0.99))
      .add("hit_p99_us", percentile(replica_hits, 0.99))
      .add("hit_p99_ratio_vs_single", percentile(replica_hits, 0.99) / percentile(alone_hits, 0.99))
      .add("requests", total)
      .add("errors", errors)
      .add("exact_propagation_p99_ms", percentile(p.exact_ms, 0.99))
      .add("semantic_propagation_p99_ms", percentile(p.semantic_ms, 0.99))
      .add("propagation_samples", delays.size())
      .add("single_hit_p99_us", percentile(alone_hits, 0.99))
      .add("load_rps", static_cast<double>(load.outcomes.size()) / load.seconds)
      .add("load_p99_us", percentile(load_latency, 0.99))
      .add("machine_load_1m", load_average());
}

// Polls every replica's /readyz until all say `status`: the milliseconds
// it took, or nothing after `limit`.
std::optional<double> all_say(gateways& g, const std::string& status, std::chrono::milliseconds limit) {
  const auto since = steady::now();
  while (steady::now() - since < limit) {
    bool all = true;
    for (const auto& replica : g.replicas) all = all && replica->readiness() == status;
    if (all) return std::chrono::duration<double, std::milli>(steady::now() - since).count();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return std::nullopt;
}

// A JSON line with `flag` added last as a JSON boolean, which json_line
// (bench_support.hpp) does not write.
std::string with_flag(const json_line& line, std::string_view key, bool flag) {
  std::string text = line.str();
  text.pop_back();
  return text.append(",\"").append(key).append("\":").append(flag ? "true" : "false").append("}");
}

// shared_tier_fault: Redis away for the middle third of the run.
std::string fault_run(double seconds, double rate, table& results) {
  temporary_directory dir;
  replica_upstream upstream;
  redis_server redis;
  gateways g(dir, upstream, {redis.endpoint()}, 3600);  // no snapshot: the stream keeps every entry to check
  progress("shared bench (fault): load at %.0f/s on 3 replicas for %.0f s, Redis killed from %.0f s to %.0f s", rate,
           seconds, seconds / 3, 2 * seconds / 3);
  std::atomic<bool> stop{false};
  load_result load;
  std::thread loader([&] {
    load = drive(g.replica_ports(), connections_per_replica, static_cast<std::size_t>(-1), rate,
                 mixed_load(fault_load_from), &stop);
  });
  const auto third = std::chrono::duration<double>(seconds / 3);
  std::this_thread::sleep_for(third);
  const auto killed_at = steady::now();
  redis.kill();
  const auto limit = std::chrono::duration_cast<std::chrono::milliseconds>(third);
  const auto degraded_ms = all_say(g, "degraded", limit);
  std::this_thread::sleep_until(killed_at + third);
  const auto restarted_at = steady::now();
  redis.restart();
  const auto ready_ms = all_say(g, "ready", limit);
  std::this_thread::sleep_until(restarted_at + third);
  stop = true;
  loader.join();
  progress("shared bench (fault): %zu requests, failed: %s", load.outcomes.size(), load.failed_statuses().c_str());

  // What was answered fresh while Redis was away must be in it now: in an
  // exact entry (its answer names its question) and in the semantic stream.
  std::vector<std::string> while_away;
  for (const auto& o : load.outcomes)
    if (o.miss && o.status == 200 && o.done > killed_at && o.done < restarted_at) while_away.push_back(o.text);
  progress("shared bench (fault): %zu answers made fresh while Redis was away; checking that Redis has them",
           while_away.size());
  std::size_t missing = while_away.size();
  for (const auto since = steady::now(); missing > 0 && steady::now() - since < std::chrono::seconds(10);) {
    const std::string exact = redis.cli({"EVAL",
                                         "local out = {} for _, k in ipairs(redis.call('KEYS', ARGV[1])) do "
                                         "out[#out + 1] = redis.call('GET', k) end return out",
                                         "0", "llmgate:*:x:*"}),
                      stream = redis.cli({"XRANGE", "llmgate:{semantic}:stream", "-", "+"});
    missing = 0;
    for (const auto& text : while_away)
      missing += exact.find(text) == std::string::npos || stream.find(text) == std::string::npos;
    if (missing) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  if (missing) progress("shared bench (fault): %zu of them are not in Redis after 10 s", missing);
  std::vector<double> before, down, after;  // latencies before the kill, while Redis was away, after its return
  for (const auto& o : load.outcomes)
    (o.done < killed_at ? before : o.done < restarted_at ? down : after).push_back(o.latency_us);
  for (auto* part : {&before, &down, &after}) std::sort(part->begin(), part->end());
  const auto latency = load.latencies_us();
  results.add_row({"fault: load on 3 replicas, Redis away a third", std::to_string(load.outcomes.size()),
                   number(static_cast<double>(load.outcomes.size()) / load.seconds), number(percentile(latency, 0.5)),
                   number(percentile(latency, 0.99)), std::to_string(load.errors())});
  const auto line = json_line()
      .add("bench", "shared_tier_fault")
      .add("redis_down_s", std::chrono::duration<double>(restarted_at - killed_at).count())
      .add("replicas", 3)
      .add("redis", "single")
      .add("requests", load.outcomes.size())
      .add("fresh_answers_while_down", while_away.size())
      .add("degraded_after_ms", degraded_ms)
      .add("ready_after_ms", ready_ms)
      .add("p99_us_before", percentile(before, 0.99))
      .add("p99_us_redis_down", percentile(down, 0.99))
      .add("p99_us_after", percentile(after, 0.99))
      .add("machine_load_1m", load_average())
      .add("failed_requests", load.errors());
  return with_flag(line, "writes_caught_up", missing == 0 && !while_away.empty());
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t requests = 12'000, samples = 200;
  double rate = 1000, fault_seconds = 15;
  std::string only;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string option = argv[i];
    if (option == "--requests") requests = std::strtoull(argv[i + 1], nullptr, 10);
    else if (option == "--rate") rate = std::atof(argv[i + 1]);
    else if (option == "--samples") samples = std::strtoull(argv[i + 1], nullptr, 10);
    else if (option == "--fault-seconds") fault_seconds = std::atof(argv[i + 1]);
    else if (option == "--only") only = argv[i + 1];
  }
  if (!std::filesystem::exists(redis_server_program) || !std::filesystem::exists(LLMGATE_GATEWAY_PROGRAM)) {
    progress("shared bench: needs %s and the gateway program %s", redis_server_program, LLMGATE_GATEWAY_PROGRAM);
    return 1;
  }
  const auto runs = [&](const char* part) { return only.empty() || only == part; };
  table results({"run", "requests", "rps", "p50_us", "p99_us", "errors"});
  std::vector<std::string> lines;
  if (runs("single")) {
    redis_server redis;
    lines.push_back(shared_tier_run("single", {redis.endpoint()}, requests, rate, samples, results).str());
  }
  if (runs("cluster")) {
    redis_cluster cluster;
    lines.push_back(shared_tier_run("cluster", {cluster.endpoint(0), cluster.endpoint(1), cluster.endpoint(2)},
                                    requests, rate, samples, results).str());
  }
  if (runs("fault")) lines.push_back(fault_run(fault_seconds, rate, results));

  std::printf("llmgate shared tier: 3 gateway processes on Redis (single, then a 3-master cluster) against a gateway "
              "of its own, and Redis killed for a third of a run\n\n");
  results.print(std::cout);
  std::printf("\n");
  publish("shared", results, lines);
  return 0;
}
