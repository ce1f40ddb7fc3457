// Exact-cache benchmark: llmgate's exact_cache against the cache a user
// would write by hand, a std::unordered_map<std::string, std::string> under
// one std::mutex, on the same requests in the same run.
//
//   llmgate_bench_exact_cache [--n N] [--lookups L] [--threads T]
//
// Data: N (100,000) distinct chat-like requests of 40 to 80 characters with
// irregular spacing and capitals, and answers of 200 bytes. Both caches
// hold all N, so nothing is evicted, but llmgate's LRU bookkeeping runs on
// every hit. Lookups pick requests uniformly at random: the worst case for
// the processor's caches, where real traffic repeats its popular requests. Both normalise with the same text_normalizer. The peer is
// keyed by the normalised text alone: the benchmark has one scope, so the
// peer is spared the scope that llmgate hashes, stores and checks.
//
// Measured, one call of each at a time, in random order:
//   hit       find of a stored request: normalise, hash, lock, probe,
//             verify scope and text, touch the policy, copy the answer out
//   miss      find of a request never stored
//   make_key  llmgate's normalise + hash alone, the part of a hit outside the lock
// Each call is timed alone with steady_clock; the clock's own cost (the
// median of back-to-back readings, printed) is subtracted. The two caches'
// calls are interleaved in blocks so that a disturbance on a shared machine
// hits both alike. Then throughput of hits with 1, 2, 4... T threads, each
// thread timing its whole batch with no clock per call, best of 3 passes.
//
// vs_unordered_map = peer p50 / llmgate p50 (or llmgate / peer throughput):
// above 1, llmgate is faster.

#include <algorithm>    // std::nth_element, std::shuffle, std::max, std::min
#include <atomic>       // std::atomic
#include <chrono>       // std::chrono::steady_clock, std::chrono::nanoseconds
#include <cstddef>      // std::size_t
#include <cstdint>      // std::int64_t, std::uint64_t
#include <cstdio>       // std::printf
#include <cstdlib>      // std::strtoull
#include <iostream>     // std::cout
#include <mutex>        // std::mutex, std::lock_guard
#include <optional>     // std::optional
#include <random>       // std::mt19937_64
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <thread>       // std::thread
#include <unordered_map>  // std::unordered_map, the peer
#include <vector>       // std::vector

#include <llmgate/cache/exact_cache.hpp>

#include "bench_support.hpp"

namespace {

using namespace llmgate_bench;
using nanoseconds = std::chrono::nanoseconds;

struct options {
  std::size_t n = 100'000;
  std::size_t lookups = 1'000'000;
  std::size_t threads = std::max(1u, std::thread::hardware_concurrency());
};

const char* const usage =
    "usage: llmgate_bench_exact_cache [--n N] [--lookups L] [--threads T]\n"
    "  --n N        stored requests (default 100000)\n"
    "  --lookups L  timed lookups per cache and kind (default 1000000)\n"
    "  --threads T  most threads for the throughput rows (default: the hardware's)\n";

std::optional<options> parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (i + 1 >= argc) return std::nullopt;
    const auto value = std::strtoull(argv[++i], nullptr, 10);
    if (flag == "--n") o.n = value;
    else if (flag == "--lookups") o.lookups = value;
    else if (flag == "--threads") o.threads = value;
    else return std::nullopt;
  }
  if (o.n == 0 || o.lookups == 0 || o.threads == 0) return std::nullopt;
  return o;
}

// Requests as users type them: a template, a subject, a number that makes
// each one distinct, and spacing and capitals that normalisation removes.
std::vector<std::string> make_requests(std::size_t n, std::uint64_t seed) {
  static const char* const openings[] = {"How do I", "What is the best way to", "Can you explain how to",
                                         "Why can't I", "Is it possible to", "Tell me how to"};
  static const char* const actions[] = {"reset", "export", "share", "delete", "rename", "restore",
                                        "archive", "sync"};
  static const char* const subjects[] = {"my password", "the invoice", "a project folder",
                                         "the monthly report", "two-factor login", "my account"};
  std::mt19937_64 random(seed);
  std::vector<std::string> requests;
  requests.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::string r = openings[random() % 6];
    r += random() % 4 ? " " : "   ";
    r += actions[random() % 8];
    r += " ";
    r += subjects[random() % 6];
    r += " for order  #" + std::to_string(i) + (random() % 2 ? "?" : " ?  ");
    requests.push_back(std::move(r));
  }
  return requests;
}

// The median cost of reading the clock twice in a row.
std::int64_t clock_cost() {
  std::vector<std::int64_t> samples(100'000);
  for (auto& sample : samples) {
    const auto start = steady::now();
    sample = std::chrono::duration_cast<nanoseconds>(steady::now() - start).count();
  }
  std::nth_element(samples.begin(), samples.begin() + samples.size() / 2, samples.end());
  return samples[samples.size() / 2];
}

struct latency {
  double p50 = 0, p99 = 0;
};

latency percentiles(std::vector<std::int64_t> samples, std::int64_t clock) {
  for (auto& sample : samples) sample = std::max<std::int64_t>(sample - clock, 0);
  const auto at = [&](double q) {
    const auto k = static_cast<std::size_t>(q * static_cast<double>(samples.size() - 1));
    std::nth_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(k), samples.end());
    return static_cast<double>(samples[k]);
  };
  return {at(0.50), at(0.99)};
}

// The peer: the map a user would put in front of a model, one lock for all.
class unordered_map_cache {
 public:
  std::optional<std::string> find(std::string_view request) {
    const std::string key = normalize_(request);
    std::lock_guard lock(mutex_);
    const auto found = map_.find(key);
    if (found == map_.end()) return std::nullopt;
    return found->second;
  }
  void insert(std::string_view request, std::string answer) {
    std::string key = normalize_(request);
    std::lock_guard lock(mutex_);
    map_.insert_or_assign(std::move(key), std::move(answer));
  }

 private:
  llmgate::text_normalizer normalize_;
  std::mutex mutex_;
  std::unordered_map<std::string, std::string> map_;
};

std::vector<std::size_t> random_order(std::size_t count, std::size_t size, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::vector<std::size_t> order(count);
  for (auto& i : order) i = random() % size;
  return order;
}

// Times each call of `call` on requests[order[i]], i in [first, last), into
// samples[i]; returns how many calls returned true.
template <class Call>
std::size_t time_each(const std::vector<std::string>& requests, const std::vector<std::size_t>& order,
                      std::size_t first, std::size_t last, Call&& call,
                      std::vector<std::int64_t>& samples) {
  std::size_t successes = 0;
  for (std::size_t i = first; i < last; ++i) {
    const auto start = steady::now();
    successes += call(requests[order[i]]);
    samples[i] = std::chrono::duration_cast<nanoseconds>(steady::now() - start).count();
  }
  return successes;
}

struct paired_samples {
  std::vector<std::int64_t> ours, peer;
  std::size_t found = 0;  // calls that found an answer, both caches together
};

// Times `lookups` finds in each cache, alternating blocks of 10,000.
template <class Ours, class Peer>
paired_samples time_both(const std::vector<std::string>& requests, std::size_t lookups,
                         std::uint64_t seed, Ours&& ours, Peer&& peer) {
  const auto order = random_order(lookups, requests.size(), seed);
  paired_samples result{std::vector<std::int64_t>(lookups), std::vector<std::int64_t>(lookups)};
  constexpr std::size_t block = 10'000;
  for (std::size_t first = 0; first < lookups; first += block) {
    const std::size_t last = std::min(first + block, lookups);
    result.found += time_each(requests, order, first, last, ours, result.ours);
    result.found += time_each(requests, order, first, last, peer, result.peer);
  }
  return result;
}

// Hits per second with `threads` threads, each finding `per_thread` random stored requests.
template <class Find>
double throughput(const std::vector<std::string>& requests, std::size_t threads,
                  std::size_t per_thread, Find&& find) {
  std::atomic<std::size_t> ready{0};
  std::atomic<bool> go{false};
  std::vector<double> seconds(threads);
  std::vector<std::thread> workers;
  for (std::size_t t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      const auto order = random_order(per_thread, requests.size(), 1000 + t);
      ++ready;
      while (!go) std::this_thread::yield();
      std::size_t hits = 0;
      const auto start = steady::now();
      for (const std::size_t i : order) hits += find(requests[i]);
      seconds[t] = seconds_since(start);
      if (hits != per_thread) progress("warning: %zu of %zu lookups missed", per_thread - hits, per_thread);
    });
  }
  while (ready < threads) std::this_thread::yield();
  go = true;
  for (auto& worker : workers) worker.join();
  double slowest = 0;
  for (const double s : seconds) slowest = std::max(slowest, s);
  return static_cast<double>(threads * per_thread) / slowest;
}

}  // namespace

int main(int argc, char** argv) {
  const auto parsed = parse(argc, argv);
  if (!parsed) {
    std::fputs(usage, stderr);
    return 2;
  }
  const options o = *parsed;
  const auto requests = make_requests(o.n, 42);
  std::vector<std::string> misses = make_requests(o.n, 43);
  for (auto& r : misses) r.insert(0, "Still wondering: ");  // a prefix no stored request has
  const std::string answer(200, 'a');
  const llmgate::cache_scope scope({.tenant = "bench", .model = "model", .parameters = "temperature=0;"});

  progress("filling both caches with %zu requests", o.n);
  // Room for twice N: each shard holds 1/16 of the capacity and the keys do
  // not split exactly evenly, so a capacity of exactly N would evict a few.
  llmgate::exact_cache<std::string> ours({.max_entries = 2 * o.n, .max_bytes = o.n * 2048});
  unordered_map_cache peer;
  const double ours_fill_s = time_once([&] {
    for (const auto& r : requests) ours.insert(scope, r, answer);
  });
  const double peer_fill_s = time_once([&] {
    for (const auto& r : requests) peer.insert(r, answer);
  });

  const std::int64_t clock = clock_cost();
  progress("timing %zu hits and %zu misses per cache, one at a time", o.lookups, o.lookups);
  const auto find_ours = [&](const std::string& r) { return ours.find(scope, r).has_value(); };
  const auto find_peer = [&](const std::string& r) { return peer.find(r).has_value(); };
  const auto hits = time_both(requests, o.lookups, 7, find_ours, find_peer);
  if (hits.found != 2 * o.lookups) progress("warning: %zu of the hits missed", 2 * o.lookups - hits.found);
  const auto missed = time_both(misses, o.lookups, 8, find_ours, find_peer);
  if (missed.found != 0) progress("warning: %zu of the misses hit", missed.found);
  std::vector<std::int64_t> key_samples(o.lookups);
  time_each(requests, random_order(o.lookups, requests.size(), 9), 0, o.lookups,
            [&](const std::string& r) { return ours.make_key(scope, r).hash.low != 0; }, key_samples);

  const latency hit = percentiles(hits.ours, clock), hit_peer = percentiles(hits.peer, clock);
  const latency miss = percentiles(missed.ours, clock), miss_peer = percentiles(missed.peer, clock);
  const latency key = percentiles(std::move(key_samples), clock);

  std::vector<std::size_t> thread_counts;
  for (std::size_t t = 1; t < o.threads; t *= 2) thread_counts.push_back(t);
  thread_counts.push_back(o.threads);
  std::vector<std::pair<double, double>> rates;
  for (const std::size_t t : thread_counts) {
    progress("throughput with %zu threads", t);
    const std::size_t per_thread = o.lookups / t;
    std::pair<double, double> best{0, 0};
    for (int pass = 0; pass < 3; ++pass) {
      best.first = std::max(best.first, throughput(requests, t, per_thread, find_ours));
      best.second = std::max(best.second, throughput(requests, t, per_thread, find_peer));
    }
    rates.push_back(best);
  }

  std::printf("llmgate exact_cache vs std::unordered_map + std::mutex: %zu entries, %zu lookups, "
              "%zu shards, answers of %zu bytes\n",
              o.n, o.lookups, ours.options().shards, answer.size());
  std::printf("clock cost subtracted from every timed call: %lld ns\n\n", static_cast<long long>(clock));
  table results({"operation", "llmgate_p50_ns", "llmgate_p99_ns", "peer_p50_ns", "peer_p99_ns",
                 "vs_unordered_map"});
  const auto latency_row = [&](const char* name, latency a, std::optional<latency> b) {
    results.add_row({name, number(a.p50), number(a.p99), b ? number(b->p50) : "-",
                     b ? number(b->p99) : "-", b ? number(b->p50 / std::max(a.p50, 1.0)) : "-"});
  };
  latency_row("hit", hit, hit_peer);
  latency_row("miss", miss, miss_peer);
  latency_row("make_key", key, std::nullopt);
  results.add_row({"fill (ns per insert)", number(ours_fill_s * 1e9 / o.n), "-",
                   number(peer_fill_s * 1e9 / o.n), "-", number(peer_fill_s / ours_fill_s)});
  results.print(std::cout);

  std::printf("\n");
  table scaling({"threads", "llmgate_mhits_per_s", "peer_mhits_per_s", "vs_unordered_map"});
  for (std::size_t i = 0; i < thread_counts.size(); ++i)
    scaling.add_row({std::to_string(thread_counts[i]), number(rates[i].first / 1e6),
                     number(rates[i].second / 1e6), number(rates[i].first / rates[i].second)});
  scaling.print(std::cout);
  std::printf("\n");

  std::vector<json_line> lines;
  lines.push_back(json_line()
                      .add("bench", "exact_cache")
                      .add("entries", o.n)
                      .add("p50_ns", hit.p50)
                      .add("p99_ns", hit.p99)
                      .add("vs_unordered_map", hit_peer.p50 / std::max(hit.p50, 1.0))
                      .add("peer_p50_ns", hit_peer.p50)
                      .add("peer_p99_ns", hit_peer.p99)
                      .add("miss_p50_ns", miss.p50)
                      .add("clock_ns", clock));
  for (std::size_t i = 0; i < thread_counts.size(); ++i)
    lines.push_back(json_line()
                        .add("bench", "exact_cache_threads")
                        .add("threads", thread_counts[i])
                        .add("mhits_per_s", rates[i].first / 1e6)
                        .add("peer_mhits_per_s", rates[i].second / 1e6)
                        .add("vs_unordered_map", rates[i].first / rates[i].second));
  // The table's CSV is the latency rows; the scaling rows are in the JSON lines.
  publish("exact_cache", results, lines);
  return 0;
}
