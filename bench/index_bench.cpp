// Index benchmark: llmgate's HNSW against hnswlib 0.6.2 (its peer on
// Debian), USearch 2.26.2 where built with it (LLMGATE_BENCH_USEARCH, see
// bench/usearch_peer.cmake) and an exact flat_index scan, on the same data
// in the same run, one thread, every HNSW with M = 16 and ef_construction =
// 200; then llmgate and hnswlib built by two threads, and llmgate searched
// while another thread inserts.
//
//   llmgate_bench_index [--n N] [--dim D] [--data PREFIX] [--storage S] [--parallel yes|no]
//
// Data: by default N (100,000) synthetic clustered unit vectors of D (384)
// dimensions and 1,000 queries from the same distribution (dataset.hpp).
// --data PREFIX reads the base vectors from PREFIX.fvecs, PREFIX.fbin,
// PREFIX_base.fvecs or PREFIX_base.fbin (the first that exists; at most N
// of them, --dim is then taken from the file) and the queries from
// PREFIX_query.fvecs or PREFIX_query.fbin (at most 1,000); without a query
// file the last 1,000 vectors read are held out as queries. Every vector is
// normalised, so cosine (llmgate) and inner product (hnswlib) agree.
//
// Measured: recall@10 against the exact top 10 of flat_index; queries per
// second on one thread (best of 3 passes over the queries) for each ef of a
// sweep; build time; heap bytes each index holds (glibc mallinfo2 around
// each step of its build, which counts both libraries the same way). For
// each recall target the first ef at which each library reaches it is
// compared. The libraries take turns throughout (chunks of adds while
// building, passes while searching), so that other processes on a shared
// machine slow them alike; compare the ratios rather than absolute numbers.
//
// USearch, like for like: llmgate's float32, float16 and int8 storages
// against USearch's f32, f16 and i8 scalar kinds, the same M
// (connectivity) and ef_construction (expansion_add), each searched at the
// first ef (expansion_search) of the sweep that reaches the recall target,
// one thread each (thread slot 0). USearch is configured as its docs advise:
// NumKong's kernels with dynamic dispatch, inner product on these unit
// vectors for f32 and f16 (what llmgate's cosine and hnswlib's "ip" compute),
// cosine for i8 ("only valid for cosine-like metrics"; USearch normalises and
// scales to [-127, 127] itself). Memory: the growth of the resident set
// (/proc/self/statm) charged to each build, chunk by chunk: heap growth
// (mallinfo2) misses USearch's mmap'ed tapes, and USearch's memory_usage()
// counts its tapes' reserved arenas, touched or not (llmgate's counts the
// capacities of its arrays); the ratio of the two memory_usage() figures is
// printed too.
//
// Parallel (--parallel yes, the default): a fresh llmgate index and a fresh
// hnswlib index built by two threads, each adding its half of every chunk
// (llmgate's add() from two threads; hnswlib's addPoint from two threads,
// its own way), the two libraries taking turns by chunk; their recall at
// the ef each needed for 0.95 on one thread. Then the mixed run: an index
// of the first half (built by two threads), searched by one thread at the
// ef llmgate needed for 0.95 while a second thread inserts the other half,
// 500 at a time, and alone before each such chunk for as long as the last
// chunk's inserts took (so that both see the same sizes of index and the
// same disturbances); per-query latency percentiles and QPS of each.

#include <malloc.h>        // mallinfo2 (glibc)
#include <sys/resource.h>  // getrusage (RUSAGE_THREAD: a thread's context switches)
#include <unistd.h>  // sysconf (page size)

#include <algorithm>    // std::count, std::min, std::max, std::nth_element
#include <atomic>       // std::atomic (a failed add on a worker thread)
#include <cstddef>      // std::size_t, std::ptrdiff_t
#include <cstdint>      // std::int64_t, std::uint64_t
#include <cstdio>       // std::printf
#include <cstdlib>      // std::strtoull
#include <exception>    // std::exception
#include <fstream>      // std::ifstream (/proc/self/statm)
#include <functional>   // std::function
#include <iostream>     // std::cout, std::cerr
#include <limits>       // std::numeric_limits
#include <memory>       // std::unique_ptr
#include <optional>     // std::optional
#include <random>       // std::mt19937_64
#include <span>         // std::span
#include <stdexcept>    // std::runtime_error
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <thread>       // std::thread
#include <tuple>        // std::tuple
#include <utility>      // std::move
#include <vector>       // std::vector

#include <hnswlib/hnswlib.h>  // hnswlib::HierarchicalNSW, hnswlib::InnerProductSpace

#include <llmgate/index/flat_index.hpp>
#include <llmgate/index/hnsw_index.hpp>

#if LLMGATE_BENCH_USEARCH
#include <usearch/index_dense.hpp>  // unum::usearch::index_dense_t, metric_punned_t (NumKong's kernels)
#endif

#include "bench_support.hpp"
#include "dataset.hpp"

namespace {

using namespace llmgate_bench;
using llmgate::vector_id;

constexpr std::size_t k = 10;
constexpr std::size_t query_count = 1000;
constexpr std::size_t m = 16;
constexpr std::size_t ef_construction = 200;
constexpr std::uint64_t seed = 42;
constexpr int passes = 3;
constexpr double recall_targets[] = {0.95, 0.99};
constexpr std::size_t ef_sweep[] = {10,  12,  16,  20,  24,  32,  40,  48,  64,  80,  96,
                                    128, 160, 200, 256, 320, 400, 512, 640, 800, 1024};

struct options {
  std::size_t n = 100'000;
  std::size_t dim = 384;
  std::string data;
  std::string storage = "float32";  // how llmgate's HNSW stores vectors: float32, float16 or int8
  bool parallel = true;             // the two-thread builds and the mixed run
};

const char* const usage =
    "usage: llmgate_bench_index [--n N] [--dim D] [--data PREFIX] [--storage float32|float16|int8]\n"
    "                           [--parallel yes|no]\n"
    "  --n N           base vectors (default 100000)\n"
    "  --dim D         dimensions of the synthetic data (default 384)\n"
    "  --data PREFIX   read PREFIX{,_base}.{fvecs,fbin} and PREFIX_query.{fvecs,fbin}\n"
    "  --storage S     llmgate HNSW's vector storage: float32 (default, exact), float16 or int8\n"
    "  --parallel P    yes (default): also the two-thread builds and the mixed insert/search run\n";

std::optional<options> parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (i + 1 >= argc) return std::nullopt;
    const char* value = argv[++i];
    if (flag == "--n") o.n = std::strtoull(value, nullptr, 10);
    else if (flag == "--dim") o.dim = std::strtoull(value, nullptr, 10);
    else if (flag == "--data") o.data = value;
    else if (flag == "--storage") o.storage = value;
    else if (flag == "--parallel" && (value == std::string_view("yes") || value == std::string_view("no")))
      o.parallel = value == std::string_view("yes");
    else return std::nullopt;
  }
  const bool known_storage = o.storage == "float32" || o.storage == "float16" || o.storage == "int8";
  if (o.n < 4 || o.dim == 0 || !known_storage) return std::nullopt;
  return o;
}

struct dataset {
  std::string description;
  vector_set base, queries;
};

dataset load(const options& o) {
  if (o.data.empty()) {
    clustered_generator generator(o.dim, seed);
    auto base = generator.draw(o.n);  // drawn first: the queries continue the stream
    return {"synthetic clustered (" + std::to_string(clustered_generator::clusters) +
                " clusters, seed " + std::to_string(seed) + ")",
            std::move(base), generator.draw(query_count)};
  }
  const auto base_file = find_file(o.data, {".fvecs", ".fbin", "_base.fvecs", "_base.fbin"});
  if (base_file.empty()) throw std::runtime_error("no base vectors at " + o.data + "{,_base}.{fvecs,fbin}");
  const auto query_file = find_file(o.data, {"_query.fvecs", "_query.fbin"});
  dataset d{base_file.string(), {}, {}};
  if (query_file.empty()) {
    d.base = read_vectors(base_file, o.n + query_count);
    if (d.base.size() <= query_count) throw std::runtime_error(base_file.string() + ": too few vectors");
    const auto split = d.base.values.end() - static_cast<std::ptrdiff_t>(query_count * d.base.dim);
    d.queries = {d.base.dim, std::vector<float>(split, d.base.values.end())};
    d.base.values.erase(split, d.base.values.end());
    d.description += " (last " + std::to_string(query_count) + " held out as queries)";
  } else {
    d.base = read_vectors(base_file, o.n);
    d.queries = read_vectors(query_file, query_count);
    if (d.queries.dim != d.base.dim) throw std::runtime_error(query_file.string() + ": other dimension than the base");
    d.description += " + " + query_file.string();
  }
  d.base.normalize_rows();
  d.queries.normalize_rows();
  return d;
}

// Heap bytes in use: small blocks plus mmapped large ones.
std::int64_t heap_bytes() {
  const auto info = mallinfo2();
  return static_cast<std::int64_t>(info.uordblks + info.hblkhd);
}

// Bytes of this process resident in memory.
std::int64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::int64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

// What building an index cost: seconds, and heap bytes it holds afterwards
// (and resident bytes, which also count memory mapped outside the heap).
struct build_cost {
  double seconds = 0;
  std::int64_t bytes = 0;
  std::int64_t resident = 0;
};

// Runs `work`, charging its time and its growth of the heap to `cost`.
template <class Work>
void charge(build_cost& cost, Work work) {
  const std::int64_t heap_before = heap_bytes(), resident_before = resident_bytes();
  cost.seconds += time_once(work);
  cost.bytes += heap_bytes() - heap_before;
  cost.resident += resident_bytes() - resident_before;
}

// Runs work(thread, first, end) on two threads at once, each on its half of
// [first, end), and returns when both are done.
template <class Work>
void on_two_threads(std::size_t first, std::size_t end, Work work) {
  const std::size_t middle = first + (end - first) / 2;
  std::thread second([&] { work(1, middle, end); });
  work(0, first, middle);
  second.join();
}

// Context switches of the calling thread so far: voluntary ones (it
// waited, e.g. for a lock) and involuntary ones (the scheduler took the core
// away, e.g. for another process).
struct context_switches {
  long waited = 0, preempted = 0;
};
context_switches thread_switches() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  return {usage.ru_nvcsw, usage.ru_nivcsw};
}

// Latency percentile (p in [0, 1]) of a set of per-query seconds.
double percentile(std::vector<double> seconds, double p) {
  if (seconds.empty()) return 0;
  const auto nth = seconds.begin() + static_cast<std::ptrdiff_t>(p * double(seconds.size() - 1));
  std::nth_element(seconds.begin(), nth, seconds.end());
  return *nth;
}

// Seconds for one pass of every query through `search(query, out)`, which
// writes up to k ids to `out`; `found` keeps them (padded where fewer).
template <class Search>
double pass_seconds(const vector_set& queries, std::vector<vector_id>& found, Search search) {
  found.assign(queries.size() * k, ~vector_id{0});
  return time_once([&] {
    for (std::size_t q = 0; q < queries.size(); ++q) search(queries.row(q), found.data() + q * k);
  });
}

double recall_at_k(const std::vector<vector_id>& found, const std::vector<vector_id>& truth) {
  std::size_t hits = 0;
  for (std::size_t first = 0; first < truth.size(); first += k)
    for (std::size_t i = first; i < first + k; ++i)
      hits += std::count(truth.begin() + first, truth.begin() + first + k, found[i]);
  return double(hits) / truth.size();
}

struct sweep_point {
  std::size_t ef;
  double recall, qps;
};

// The first point of the sweep at or above `target`, if any.
std::optional<sweep_point> first_reaching(const std::vector<sweep_point>& sweep, double target) {
  for (const auto& p : sweep)
    if (p.recall >= target) return p;
  return std::nullopt;
}

// A member of a point that may be absent, absent with it.
std::optional<double> field(const std::optional<sweep_point>& point, double sweep_point::*member) {
  return point ? std::optional((*point).*member) : std::nullopt;
}

std::optional<double> ratio(std::optional<double> a, std::optional<double> b) {
  if (!a || !b || *b == 0) return std::nullopt;
  return *a / *b;
}

double mebibytes(double bytes) { return bytes / 1048576.0; }

#if LLMGATE_BENCH_USEARCH
namespace us = unum::usearch;

// USearch's scalar kind and metric for each of llmgate's storages (see the
// top of this file for why these).
template <class Element>
struct usearch_kind;
template <>
struct usearch_kind<float> {
  static constexpr us::scalar_kind_t scalar = us::scalar_kind_t::f32_k;
  static constexpr us::metric_kind_t metric = us::metric_kind_t::ip_k;
  static constexpr const char* name = "f32, ip";
};
template <>
struct usearch_kind<llmgate::simd::float16> {
  static constexpr us::scalar_kind_t scalar = us::scalar_kind_t::f16_k;
  static constexpr us::metric_kind_t metric = us::metric_kind_t::ip_k;
  static constexpr const char* name = "f16, ip";
};
template <>
struct usearch_kind<llmgate::simd::scaled_int8> {
  static constexpr us::scalar_kind_t scalar = us::scalar_kind_t::i8_k;
  static constexpr us::metric_kind_t metric = us::metric_kind_t::cos_k;
  static constexpr const char* name = "i8, cos";
};

// A USearch dense index with its errors (values that must be looked at)
// turned into exceptions.
class usearch_peer {
 public:
  usearch_peer(std::size_t dim, us::scalar_kind_t scalar, us::metric_kind_t metric, std::size_t capacity,
               std::size_t threads) {
    const us::metric_punned_t distance(dim, metric, scalar);
    const us::index_dense_config_t config(m, ef_construction, 64);
    auto made = us::index_dense_t::make(distance, config, us::default_free_value<us::default_key_t>(),
                                        us::index_limits_t(capacity, threads));
    if (!made) throw std::runtime_error(std::string("usearch: ") + made.error.release());
    index_ = std::move(made.index);
    isa_ = distance.isa_name();
  }

  void add(std::size_t key, std::span<const float> vector, std::size_t thread) {
    auto added = index_.add(key, vector.data(), thread);
    if (!added) throw std::runtime_error(std::string("usearch: add: ") + added.error.release());
  }

  void set_ef(std::size_t ef) { index_.change_expansion_search(ef); }

  void search(std::span<const float> query, vector_id* out) const {
    auto found = index_.search(query.data(), k, 0);
    if (!found) throw std::runtime_error(std::string("usearch: search: ") + found.error.release());
    us::default_key_t keys[k];
    const std::size_t count = found.dump_to(keys, k);
    for (std::size_t i = 0; i < count; ++i) out[i] = keys[i];
  }

  std::size_t memory_usage() const { return index_.memory_usage(); }
  const char* isa() const { return isa_; }

 private:
  us::index_dense_t index_;
  const char* isa_ = "";
};
#endif  // LLMGATE_BENCH_USEARCH

// One library in the ef sweep.
struct swept_library {
  const char* name;
  std::function<void(std::size_t)> set_ef;
  std::function<void(std::span<const float>, vector_id*)> search;
  std::vector<sweep_point> points;
  std::vector<vector_id> found;
};

}  // namespace

// The two-thread builds and the mixed run (see the top of this file): ef
// for each library is the one its single-thread index needed for the first
// recall target.
template <class Element>
void parallel_part(const dataset& data, const std::vector<vector_id>& truth,
                   const llmgate::hnsw_parameters& parameters, double own_one_thread_seconds,
                   std::optional<sweep_point> ours_first, std::optional<sweep_point> peer_first,
                   const std::string& storage, std::vector<json_line>& lines) {
  using llmgate_hnsw = llmgate::hnsw_index<llmgate::cosine_metric, Element>;
  const std::size_t n = data.base.size(), dim = data.base.dim;
  const std::size_t ours_ef = ours_first ? ours_first->ef : 64, peer_ef = peer_first ? peer_first->ef : 64;
  std::atomic<bool> failed{false};  // an add that failed on a worker thread
  const auto add_range = [&](llmgate_hnsw& index) {
    return [&](std::size_t, std::size_t first, std::size_t end) {
      for (std::size_t i = first; i < end; ++i)
        if (index.add(i, data.base.row(i))) failed = true;
    };
  };

  // Two-thread builds, llmgate and hnswlib taking turns by chunk.
  double ours_s = 0, peer_s = 0, ours_recall = 0, peer_recall = 0;
  {
    std::unique_ptr<llmgate_hnsw> ours;
    std::unique_ptr<hnswlib::HierarchicalNSW<float>> peer;
    hnswlib::InnerProductSpace space(dim);
    ours_s += time_once([&] {
      ours = std::make_unique<llmgate_hnsw>(dim, parameters);
      ours->reserve(n);
    });
    peer_s += time_once([&] { peer = std::make_unique<hnswlib::HierarchicalNSW<float>>(&space, n, m, ef_construction, seed); });
    constexpr std::size_t chunk = 2000;
    auto last_report = steady::now();
    for (std::size_t first = 0; first < n; first += chunk) {
      const std::size_t end = std::min(n, first + chunk);
      ours_s += time_once([&] { on_two_threads(first, end, add_range(*ours)); });
      peer_s += time_once([&] {
        on_two_threads(first, end, [&](std::size_t, std::size_t from, std::size_t to) {
          for (std::size_t i = from; i < to; ++i) peer->addPoint(data.base.row(i).data(), i);
        });
      });
      if (seconds_since(last_report) > 5 || end == n) {
        last_report = steady::now();
        progress("building on 2 threads: %zu/%zu added; llmgate %.1f s, hnswlib %.1f s so far", end, n, ours_s,
                 peer_s);
      }
    }
    if (failed) throw std::runtime_error("hnsw_index: add failed on two threads");
    std::vector<vector_id> found;
    ours->set_ef_search(ours_ef);
    pass_seconds(data.queries, found, [&](std::span<const float> query, vector_id* out) {
      for (const auto& hit : ours->search(query, k)) *out++ = hit.id;
    });
    ours_recall = recall_at_k(found, truth);
    peer->setEf(peer_ef);
    pass_seconds(data.queries, found, [&](std::span<const float> query, vector_id* out) {
      for (auto result = peer->searchKnn(query.data(), k); !result.empty(); result.pop())
        *out++ = result.top().second;
    });
    peer_recall = recall_at_k(found, truth);
  }

  // The mixed run: an index of the first half, then the other half
  // inserted by a second thread a chunk at a time while this one searches;
  // before each chunk this thread searches alone for as long as the last
  // chunk's inserts took, so that the two kinds of search take turns and
  // see the same sizes of index and the same disturbances.
  constexpr std::size_t mixed_chunk = 500;
  std::vector<double> alone, during;
  double alone_s = 0, insert_s = 0;
  context_switches alone_switches, during_switches;  // of the searching thread
  {
    const std::size_t half = n / 2;
    llmgate_hnsw index(dim, parameters);
    index.reserve(n);
    progress("mixed run: building the first half (%zu) on 2 threads", half);
    on_two_threads(0, half, add_range(index));
    index.set_ef_search(ours_ef);
    progress("mixed run: searching alone and while inserting the other half (%zu), by turns", n - half);
    std::size_t next_query = 0, sink = 0;
    const auto one_query = [&](std::vector<double>& latencies) {
      const auto start = steady::now();
      sink += index.search(data.queries.row(next_query), k).size();
      latencies.push_back(seconds_since(start));
      next_query = (next_query + 1) % data.queries.size();
    };
    double last_insert_s = 0.02;
    const auto count_switches = [](context_switches& total, context_switches before) {
      const context_switches after = thread_switches();
      total.waited += after.waited - before.waited;
      total.preempted += after.preempted - before.preempted;
    };
    for (std::size_t first = half; first < n; first += mixed_chunk) {
      const std::size_t end = std::min(n, first + mixed_chunk);
      const auto alone_start = steady::now();
      const context_switches alone_before = thread_switches();
      do one_query(alone);
      while (seconds_since(alone_start) < last_insert_s);
      count_switches(alone_switches, alone_before);
      alone_s += seconds_since(alone_start);
      std::atomic<bool> inserting{true};
      const auto insert_start = steady::now();
      std::thread inserter([&] {
        add_range(index)(1, first, end);
        inserting = false;
      });
      const context_switches during_before = thread_switches();
      while (inserting.load(std::memory_order_relaxed)) one_query(during);
      count_switches(during_switches, during_before);
      inserter.join();
      last_insert_s = seconds_since(insert_start);
      insert_s += last_insert_s;
    }
    if (failed) throw std::runtime_error("hnsw_index: add failed in the mixed run");
    if (sink == 0) progress("mixed run: no hits");
  }

  const double alone_p50 = percentile(alone, 0.5), alone_p99 = percentile(alone, 0.99);
  const double during_p50 = percentile(during, 0.5), during_p99 = percentile(during, 0.99);
  const double alone_qps = double(alone.size()) / alone_s, during_qps = double(during.size()) / insert_s;
  const double own_1_thread = ours_first ? ours_first->recall : 0;

  table builds({"index", "threads", "build_s", "ef", "recall", "recall_1_thread"});
  builds.add_row({"llmgate hnsw", "2", number(ours_s), std::to_string(ours_ef), number(ours_recall),
                  number(own_1_thread)});
  builds.add_row({"hnswlib", "2", number(peer_s), std::to_string(peer_ef), number(peer_recall),
                  number(field(peer_first, &sweep_point::recall))});
  std::printf("two-thread builds (two threads adding disjoint halves of each chunk of %d), recall@%zu\n", 2000, k);
  builds.print(std::cout);
  // The searching thread's context switches tell a wait (for a lock) from
  // the scheduler giving its core to another thread or process.
  table mixed({"llmgate search", "queries", "qps", "p50_us", "p99_us", "waits", "preemptions"});
  mixed.add_row({"alone", std::to_string(alone.size()), number(alone_qps, 5), number(alone_p50 * 1e6),
                 number(alone_p99 * 1e6), std::to_string(alone_switches.waited),
                 std::to_string(alone_switches.preempted)});
  mixed.add_row({"during inserts", std::to_string(during.size()), number(during_qps, 5), number(during_p50 * 1e6),
                 number(during_p99 * 1e6), std::to_string(during_switches.waited),
                 std::to_string(during_switches.preempted)});
  std::printf("\nmixed run: one thread searching at ef %zu, alone and while one inserts %zu into an index of %zu "
              "by turns, %zu at a time (inserts took %.2f s)\n", ours_ef, n - n / 2, n / 2, mixed_chunk, insert_s);
  mixed.print(std::cout);
  const double build_ratio_2 = ours_s / peer_s, own_ratio = ours_s / own_one_thread_seconds;
  const double p99_ratio = during_p99 / alone_p99;
  std::printf("\nbuild_ratio_2_threads %.3f (target <= 0.8), build_ratio_vs_own_1_thread %.3f (target <= 0.6), "
              "search_p99_during_inserts_ratio %.3f (target <= 1.5)\n\n", build_ratio_2, own_ratio, p99_ratio);
  lines.push_back(json_line()
                      .add("bench", "hnsw_parallel")
                      .add("n", n)
                      .add("dim", dim)
                      .add("storage", storage)
                      .add("threads", 2)
                      .add("build_ratio_2_threads", build_ratio_2)
                      .add("build_ratio_vs_own_1_thread", own_ratio)
                      .add("search_p99_during_inserts_ratio", p99_ratio)
                      .add("recall", ours_recall)
                      .add("hnswlib_recall", peer_recall)
                      .add("recall_1_thread", own_1_thread)
                      .add("ef", ours_ef)
                      .add("hnswlib_ef", peer_ef)
                      .add("search_qps_alone", alone_qps)
                      .add("search_qps_during_inserts", during_qps)
                      .add("search_p99_alone_us", alone_p99 * 1e6)
                      .add("search_p99_during_inserts_us", during_p99 * 1e6)
                      .add("search_waits_during_inserts", during_switches.waited)
                      .add("search_preemptions_during_inserts", during_switches.preempted));
}

// The whole comparison, with llmgate's HNSW storing vectors as Element.
template <class Element>
void compare(const dataset& data, const options& o) {
  const std::string& storage = o.storage;
  const std::size_t n = data.base.size(), dim = data.base.dim;

  // Ground truth, and the exact scan's speed as the baseline row.
  build_cost flat_cost;
  std::unique_ptr<llmgate::flat_index<>> flat;
  charge(flat_cost, [&] {
    flat = std::make_unique<llmgate::flat_index<>>(dim);
    flat->reserve(n);
    for (std::size_t i = 0; i < n; ++i)
      if (flat->add(i, data.base.row(i))) throw std::runtime_error("flat_index: add failed");
  });
  progress("flat_index: exact top %zu of %zu queries (one pass)", k, data.queries.size());
  std::vector<vector_id> truth(data.queries.size() * k);
  double top1 = 0, top10 = 0;
  const double flat_seconds = time_once([&] {
    for (std::size_t q = 0; q < data.queries.size(); ++q) {
      const auto hits = flat->search(data.queries.row(q), k);
      for (std::size_t i = 0; i < hits.size(); ++i) truth[q * k + i] = hits[i].id;
      top1 += hits.front().similarity;
      top10 += hits.back().similarity;
    }
  });
  const double flat_qps = data.queries.size() / flat_seconds;
  std::mt19937_64 pairs(seed);
  double random_pair = 0;
  constexpr int pair_samples = 100'000;
  for (int i = 0; i < pair_samples; ++i)
    random_pair += llmgate::simd::dot(data.base.row(pairs() % n).data(), data.base.row(pairs() % n).data(), dim);

  // The HNSW builds take turns, a chunk of adds each, so that a disturbance
  // on a shared machine slows them alike; every chunk's time and heap
  // growth are charged to the index that ran it.
  build_cost llmgate_cost, hnswlib_cost;
  using llmgate_hnsw = llmgate::hnsw_index<llmgate::cosine_metric, Element>;
  const llmgate::hnsw_parameters parameters{
      .m = m, .ef_construction = ef_construction, .ef_search = 64, .seed = seed};
  std::unique_ptr<llmgate_hnsw> ours;
  std::unique_ptr<hnswlib::HierarchicalNSW<float>> peer;
  hnswlib::InnerProductSpace space(dim);
  charge(llmgate_cost, [&] {
    ours = std::make_unique<llmgate_hnsw>(dim, parameters);
    ours->reserve(n);
  });
  charge(hnswlib_cost, [&] {
    peer = std::make_unique<hnswlib::HierarchicalNSW<float>>(&space, n, m, ef_construction, seed);
  });
#if LLMGATE_BENCH_USEARCH
  build_cost usearch_cost;
  std::unique_ptr<usearch_peer> theirs;
  charge(usearch_cost, [&] {
    theirs = std::make_unique<usearch_peer>(dim, usearch_kind<Element>::scalar, usearch_kind<Element>::metric, n, 1);
  });
#endif
  constexpr std::size_t chunk = 1000;
  auto last_report = steady::now();
  for (std::size_t first = 0; first < n; first += chunk) {
    const std::size_t end = std::min(n, first + chunk);
    charge(llmgate_cost, [&] {
      for (std::size_t i = first; i < end; ++i)
        if (ours->add(i, data.base.row(i))) throw std::runtime_error("hnsw_index: add failed");
    });
    charge(hnswlib_cost, [&] {
      for (std::size_t i = first; i < end; ++i) peer->addPoint(data.base.row(i).data(), i);
    });
#if LLMGATE_BENCH_USEARCH
    charge(usearch_cost, [&] {
      for (std::size_t i = first; i < end; ++i) theirs->add(i, data.base.row(i), 0);
    });
#endif
    if (seconds_since(last_report) > 5 || end == n) {
      last_report = steady::now();
      progress("building: %zu/%zu added; llmgate %.1f s, hnswlib %.1f s so far", end, n,
               llmgate_cost.seconds, hnswlib_cost.seconds);
    }
  }

  // The sweep. At each ef the passes of the libraries alternate, so that a
  // disturbance on the machine hits them all; each keeps its best pass. A
  // library leaves the sweep once it reaches the highest target.
  std::vector<swept_library> libraries;
  libraries.push_back({"llmgate hnsw", [&](std::size_t ef) { ours->set_ef_search(ef); },
                       [&](std::span<const float> query, vector_id* out) {
                         for (const auto& hit : ours->search(query, k)) *out++ = hit.id;
                       }, {}, {}});
  libraries.push_back({"hnswlib", [&](std::size_t ef) { peer->setEf(ef); },
                       [&](std::span<const float> query, vector_id* out) {
                         for (auto result = peer->searchKnn(query.data(), k); !result.empty(); result.pop())
                           *out++ = result.top().second;
                       }, {}, {}});
#if LLMGATE_BENCH_USEARCH
  libraries.push_back({"usearch", [&](std::size_t ef) { theirs->set_ef(ef); },
                       [&](std::span<const float> query, vector_id* out) { theirs->search(query, out); }, {}, {}});
#endif
  const double last_target = recall_targets[std::size(recall_targets) - 1];
  const auto still_sweeping = [&](const std::vector<sweep_point>& points) {
    return points.empty() || points.back().recall < last_target;
  };
  for (const std::size_t ef : ef_sweep) {
    std::vector<bool> run;
    for (const auto& library : libraries) run.push_back(still_sweeping(library.points));
    if (std::count(run.begin(), run.end(), true) == 0) break;
    std::vector<double> best(libraries.size(), std::numeric_limits<double>::infinity());
    for (std::size_t l = 0; l < libraries.size(); ++l)
      if (run[l]) libraries[l].set_ef(ef);
    for (int pass = 0; pass < passes; ++pass)
      for (std::size_t l = 0; l < libraries.size(); ++l)
        if (run[l])
          best[l] = std::min(best[l], pass_seconds(data.queries, libraries[l].found, libraries[l].search));
    for (std::size_t l = 0; l < libraries.size(); ++l) {
      if (!run[l]) continue;
      auto& points = libraries[l].points;
      points.push_back({ef, recall_at_k(libraries[l].found, truth), data.queries.size() / best[l]});
      progress("%s: ef %zu recall %.4f qps %.0f", libraries[l].name, ef, points.back().recall, points.back().qps);
    }
  }
  const auto& llmgate_sweep = libraries[0].points;
  const auto& hnswlib_sweep = libraries[1].points;

  // Tables for people.
  std::printf("llmgate index: %zu x %zu, %zu queries, k=%zu, M=%zu, ef_construction=%zu, one thread, simd %s, "
              "llmgate storage %s\n", n, dim, data.queries.size(), k, m, ef_construction,
              llmgate::simd::arch_name(), storage.c_str());
#if LLMGATE_BENCH_USEARCH
  std::printf("usearch 2.26.2: %s, NumKong kernels (dynamic dispatch) for %s\n", usearch_kind<Element>::name,
              theirs->isa());
#endif
  std::printf("data: %s\n", data.description.c_str());
  std::printf("mean cosine: query to its nearest %.3f, to its 10th nearest %.3f; random pair %.3f\n\n",
              top1 / data.queries.size(), top10 / data.queries.size(), random_pair / pair_samples);

  table builds({"index", "build_s", "heap_MiB", "rss_MiB", "bytes_per_vector", "memory_usage_MiB"});
  const auto build_row = [&](const char* name, const build_cost& c, std::optional<double> reported) {
    builds.add_row({name, number(c.seconds), number(mebibytes(c.bytes)), number(mebibytes(c.resident)),
                    number(double(c.bytes) / n),
                    number(reported ? std::optional(mebibytes(*reported)) : std::nullopt)});
  };
  build_row("flat_index", flat_cost, double(flat->memory_usage()));
  build_row("llmgate hnsw", llmgate_cost, double(ours->memory_usage()));
  build_row("hnswlib", hnswlib_cost, std::nullopt);
#if LLMGATE_BENCH_USEARCH
  build_row("usearch", usearch_cost, double(theirs->memory_usage()));
#endif
  builds.print(std::cout);

  // Side by side for people; one row per library and ef in the CSV.
  std::vector<std::string> sweep_columns{"ef"};
  for (const auto& library : libraries) {
    const std::string prefix = std::string_view(library.name) == "llmgate hnsw" ? "llmgate" : library.name;
    sweep_columns.push_back(prefix + "_recall");
    sweep_columns.push_back(prefix + "_qps");
  }
  table sweep(sweep_columns);
  {
    std::vector<std::string> exact{"exact", "1", number(flat_qps, 5)};  // flat_index, one pass
    while (exact.size() < sweep_columns.size()) exact.push_back("-");
    sweep.add_row(std::move(exact));
  }
  std::size_t rows = 0;
  for (const auto& library : libraries) rows = std::max(rows, library.points.size());
  for (std::size_t i = 0; i < rows; ++i) {
    std::vector<std::string> row{std::to_string(ef_sweep[i])};
    for (const auto& library : libraries) {
      const bool has = i < library.points.size();
      row.push_back(has ? number(library.points[i].recall) : "-");
      row.push_back(has ? number(library.points[i].qps, 5) : "-");
    }
    sweep.add_row(std::move(row));
  }
  table csv({"library", "ef", "recall_at_10", "qps", "build_s", "heap_bytes"});
  csv.add_row({"flat_index", "", "1", number(flat_qps, 6), number(flat_cost.seconds, 6),
               std::to_string(flat_cost.bytes)});
  std::vector<std::tuple<const char*, const std::vector<sweep_point>*, const build_cost*>> csv_libraries{
      {"llmgate", &llmgate_sweep, &llmgate_cost}, {"hnswlib", &hnswlib_sweep, &hnswlib_cost}};
#if LLMGATE_BENCH_USEARCH
  csv_libraries.emplace_back("usearch", &libraries[2].points, &usearch_cost);
#endif
  for (const auto& [library, points, cost] : csv_libraries)
    for (const auto& p : *points)
      csv.add_row({library, std::to_string(p.ef), number(p.recall, 6), number(p.qps, 6),
                   number(cost->seconds, 6), std::to_string(cost->bytes)});
  std::printf("\nrecall@%zu and single-thread QPS, best of %d passes (exact: flat_index, one pass)\n", k, passes);
  sweep.print(std::cout);

  const double build_ratio = llmgate_cost.seconds / hnswlib_cost.seconds;
  const double memory_ratio = double(llmgate_cost.bytes) / double(hnswlib_cost.bytes);
  table targets({"recall_target", "llmgate_ef", "llmgate_recall", "llmgate_qps", "hnswlib_ef",
                 "hnswlib_recall", "hnswlib_qps", "qps_ratio"});
  std::vector<json_line> lines;
  for (const double target : recall_targets) {
    const auto a = first_reaching(llmgate_sweep, target);
    const auto b = first_reaching(hnswlib_sweep, target);
    const auto qps = field(a, &sweep_point::qps), peer_qps = field(b, &sweep_point::qps);
    targets.add_row({number(target), a ? std::to_string(a->ef) : "not reached",
                     number(field(a, &sweep_point::recall)), number(qps, 5),
                     b ? std::to_string(b->ef) : "not reached",
                     number(field(b, &sweep_point::recall)), number(peer_qps, 5),
                     number(ratio(qps, peer_qps))});
    lines.push_back(json_line()
                        .add("bench", "hnsw_vs_hnswlib")
                        .add("dim", dim)
                        .add("n", n)
                        .add("recall_target", target)
                        .add("recall", field(a, &sweep_point::recall))
                        .add("qps", qps)
                        .add("hnswlib_qps", peer_qps)
                        .add("qps_ratio", ratio(qps, peer_qps))
                        .add("build_ratio", build_ratio)
                        .add("memory_ratio", memory_ratio)
                        .add("storage", storage));
  }
  std::printf("\nfirst ef reaching each recall target\n");
  targets.print(std::cout);
  std::printf("\nbuild_ratio %.3f (target <= 0.8), memory_ratio %.3f (target <= 1.0), "
              "qps_ratio target >= 1.5\n\n", build_ratio, memory_ratio);

#if LLMGATE_BENCH_USEARCH
  {
    const auto& usearch_sweep = libraries[2].points;
    double usearch_best_recall = 0;  // what USearch reached at all (i8 stops short of 0.99 here)
    for (const auto& p : usearch_sweep) usearch_best_recall = std::max(usearch_best_recall, p.recall);
    const double usearch_build_ratio = llmgate_cost.seconds / usearch_cost.seconds;
    // Resident bytes each build added, the one measure that counts both
    // alike: USearch's memory_usage() also counts the unused ends of its
    // tapes' arenas (reserved, never touched), 64 MiB against 34 MiB resident
    // for 20,000 x 384 float32; llmgate's counts the capacities it reserved,
    // and its resident set also holds the rest of each array's last 2 MiB
    // huge page (a few MiB, noticeable only in a small index).
    const double usearch_memory_ratio = double(llmgate_cost.resident) / double(usearch_cost.resident);
    const double usearch_memory_usage_ratio = double(ours->memory_usage()) / double(theirs->memory_usage());
    table against({"recall_target", "llmgate_ef", "llmgate_recall", "llmgate_qps", "usearch_ef", "usearch_recall",
                   "usearch_qps", "qps_ratio"});
    for (const double target : recall_targets) {
      const auto a = first_reaching(llmgate_sweep, target);
      const auto b = first_reaching(usearch_sweep, target);
      const auto qps = field(a, &sweep_point::qps), peer_qps = field(b, &sweep_point::qps);
      against.add_row({number(target), a ? std::to_string(a->ef) : "not reached",
                       number(field(a, &sweep_point::recall)), number(qps, 5),
                       b ? std::to_string(b->ef) : "not reached", number(field(b, &sweep_point::recall)),
                       number(peer_qps, 5), number(ratio(qps, peer_qps))});
      lines.push_back(json_line()
                          .add("bench", "hnsw_vs_usearch")
                          .add("storage", storage)
                          .add("recall_target", target)
                          .add("recall", field(a, &sweep_point::recall))
                          .add("usearch_recall", field(b, &sweep_point::recall))
                          .add("qps_ratio", ratio(qps, peer_qps))
                          .add("build_ratio", usearch_build_ratio)
                          .add("memory_ratio", usearch_memory_ratio)
                          .add("n", n)
                          .add("dim", dim)
                          .add("qps", qps)
                          .add("usearch_qps", peer_qps)
                          .add("usearch_kind", usearch_kind<Element>::name)
                          .add("usearch_max_recall", usearch_best_recall)
                          .add("memory", "resident")
                          .add("memory_usage_ratio", usearch_memory_usage_ratio));
    }
    std::printf("against usearch 2.26.2 (%s), first ef reaching each recall target (usearch's best recall in the "
                "sweep, ef up to %zu: %.4f)\n", usearch_kind<Element>::name,
                usearch_sweep.empty() ? std::size_t{0} : usearch_sweep.back().ef, usearch_best_recall);
    against.print(std::cout);
    std::printf("\nbuild_ratio %.3f (target <= 1.0), memory_ratio %.3f (resident bytes each build added; "
                "target <= 1.0; by each one's memory_usage() %.3f), qps_ratio target >= 1.2\n\n",
                usearch_build_ratio, usearch_memory_ratio, usearch_memory_usage_ratio);
  }
#endif

  if (o.parallel) parallel_part<Element>(data, truth, parameters, llmgate_cost.seconds,
                                         first_reaching(llmgate_sweep, recall_targets[0]),
                                         first_reaching(hnswlib_sweep, recall_targets[0]), storage, lines);
  publish("index", csv, lines);
}

int main(int argc, char** argv) try {
  const auto parsed = parse(argc, argv);
  if (!parsed) {
    std::cerr << usage;
    return 2;
  }
  progress("index: preparing data");
  const dataset data = load(*parsed);
  if (parsed->storage == "float16")
    compare<llmgate::simd::float16>(data, *parsed);
  else if (parsed->storage == "int8")
    compare<llmgate::simd::scaled_int8>(data, *parsed);
  else
    compare<float>(data, *parsed);
  return 0;
} catch (const std::exception& e) {
  std::cerr << "llmgate_bench_index: " << e.what() << '\n';
  return 1;
}
