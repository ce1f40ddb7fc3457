// Index benchmark: llmgate's HNSW against hnswlib 0.6.2 (its peer on
// Debian) and an exact flat_index scan, on the same data in the same run,
// one thread, both HNSWs with M = 16 and ef_construction = 200.
//
//   llmgate_bench_index [--n N] [--dim D] [--data PREFIX]
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
// compared. The two libraries take turns throughout (chunks of adds while
// building, passes while searching), so that other processes on a shared
// machine slow both alike; compare the ratios rather than absolute numbers.

#include <malloc.h>  // mallinfo2 (glibc)

#include <algorithm>    // std::count, std::min, std::max
#include <cstddef>      // std::size_t, std::ptrdiff_t
#include <cstdint>      // std::int64_t, std::uint64_t
#include <cstdio>       // std::printf
#include <cstdlib>      // std::strtoull
#include <exception>    // std::exception
#include <iostream>     // std::cout, std::cerr
#include <limits>       // std::numeric_limits
#include <memory>       // std::unique_ptr
#include <optional>     // std::optional
#include <random>       // std::mt19937_64
#include <span>         // std::span
#include <stdexcept>    // std::runtime_error
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <tuple>        // std::tuple
#include <utility>      // std::move
#include <vector>       // std::vector

#include <hnswlib/hnswlib.h>  // hnswlib::HierarchicalNSW, hnswlib::InnerProductSpace

#include <llmgate/index/flat_index.hpp>
#include <llmgate/index/hnsw_index.hpp>

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
};

const char* const usage =
    "usage: llmgate_bench_index [--n N] [--dim D] [--data PREFIX] [--storage float32|float16|int8]\n"
    "  --n N          base vectors (default 100000)\n"
    "  --dim D        dimensions of the synthetic data (default 384)\n"
    "  --data PREFIX  read PREFIX{,_base}.{fvecs,fbin} and PREFIX_query.{fvecs,fbin}\n"
    "  --storage S    llmgate HNSW's vector storage: float32 (default, exact), float16 or int8\n";

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
    else return std::nullopt;
  }
  const bool known_storage = o.storage == "float32" || o.storage == "float16" || o.storage == "int8";
  if (o.n == 0 || o.dim == 0 || !known_storage) return std::nullopt;
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

// What building an index cost: seconds, and heap bytes it holds afterwards.
struct build_cost {
  double seconds = 0;
  std::int64_t bytes = 0;
};

// Runs `work`, charging its time and its growth of the heap to `cost`.
template <class Work>
void charge(build_cost& cost, Work work) {
  const std::int64_t heap_before = heap_bytes();
  cost.seconds += time_once(work);
  cost.bytes += heap_bytes() - heap_before;
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

}  // namespace

// The whole comparison, with llmgate's HNSW storing vectors as Element.
template <class Element>
void compare(const dataset& data, const std::string& storage) {
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

  // The two HNSW builds take turns, a chunk of adds each, so that a
  // disturbance on a shared machine slows both alike; every chunk's time
  // and heap growth are charged to the index that ran it.
  build_cost llmgate_cost, hnswlib_cost;
  using llmgate_hnsw = llmgate::hnsw_index<llmgate::cosine_metric, Element>;
  std::unique_ptr<llmgate_hnsw> ours;
  std::unique_ptr<hnswlib::HierarchicalNSW<float>> peer;
  hnswlib::InnerProductSpace space(dim);
  charge(llmgate_cost, [&] {
    const llmgate::hnsw_parameters parameters{
        .m = m, .ef_construction = ef_construction, .ef_search = 64, .seed = seed};
    ours = std::make_unique<llmgate_hnsw>(dim, parameters);
    ours->reserve(n);
  });
  charge(hnswlib_cost, [&] {
    peer = std::make_unique<hnswlib::HierarchicalNSW<float>>(&space, n, m, ef_construction, seed);
  });
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
    if (seconds_since(last_report) > 5 || end == n) {
      last_report = steady::now();
      progress("building: %zu/%zu added; llmgate %.1f s, hnswlib %.1f s so far", end, n,
               llmgate_cost.seconds, hnswlib_cost.seconds);
    }
  }

  // The sweep. At each ef the passes of the two libraries alternate, so
  // that a disturbance on the machine hits both; each keeps its best pass.
  // A library leaves the sweep once it reaches the highest target.
  const auto search_ours = [&](std::span<const float> query, vector_id* out) {
    for (const auto& hit : ours->search(query, k)) *out++ = hit.id;
  };
  const auto search_peer = [&](std::span<const float> query, vector_id* out) {
    for (auto result = peer->searchKnn(query.data(), k); !result.empty(); result.pop())
      *out++ = result.top().second;
  };
  const double last_target = recall_targets[std::size(recall_targets) - 1];
  const auto still_sweeping = [&](const std::vector<sweep_point>& points) {
    return points.empty() || points.back().recall < last_target;
  };
  std::vector<sweep_point> llmgate_sweep, hnswlib_sweep;
  std::vector<vector_id> found_ours, found_peer;
  for (const std::size_t ef : ef_sweep) {
    const bool run_ours = still_sweeping(llmgate_sweep), run_peer = still_sweeping(hnswlib_sweep);
    if (!run_ours && !run_peer) break;
    ours->set_ef_search(ef);
    peer->setEf(ef);
    double ours_s = std::numeric_limits<double>::infinity(), peer_s = ours_s;
    for (int pass = 0; pass < passes; ++pass) {
      if (run_ours) ours_s = std::min(ours_s, pass_seconds(data.queries, found_ours, search_ours));
      if (run_peer) peer_s = std::min(peer_s, pass_seconds(data.queries, found_peer, search_peer));
    }
    for (auto [run, name, points, found, seconds] :
         {std::tuple{run_ours, "llmgate hnsw", &llmgate_sweep, &found_ours, ours_s},
          std::tuple{run_peer, "hnswlib", &hnswlib_sweep, &found_peer, peer_s}}) {
      if (!run) continue;
      points->push_back({ef, recall_at_k(*found, truth), data.queries.size() / seconds});
      progress("%s: ef %zu recall %.4f qps %.0f", name, ef, points->back().recall, points->back().qps);
    }
  }

  // Tables for people.
  std::printf("llmgate index: %zu x %zu, %zu queries, k=%zu, M=%zu, ef_construction=%zu, one thread, simd %s, "
              "llmgate storage %s\n", n, dim, data.queries.size(), k, m, ef_construction,
              llmgate::simd::arch_name(), storage.c_str());
  std::printf("data: %s\n", data.description.c_str());
  std::printf("mean cosine: query to its nearest %.3f, to its 10th nearest %.3f; random pair %.3f\n\n",
              top1 / data.queries.size(), top10 / data.queries.size(), random_pair / pair_samples);

  table builds({"index", "build_s", "heap_MiB", "bytes_per_vector", "memory_usage_MiB"});
  const auto build_row = [&](const char* name, const build_cost& c, std::optional<double> reported) {
    builds.add_row({name, number(c.seconds), number(mebibytes(c.bytes)), number(double(c.bytes) / n),
                    number(reported ? std::optional(mebibytes(*reported)) : std::nullopt)});
  };
  build_row("flat_index", flat_cost, double(flat->memory_usage()));
  build_row("llmgate hnsw", llmgate_cost, double(ours->memory_usage()));
  build_row("hnswlib", hnswlib_cost, std::nullopt);
  builds.print(std::cout);

  // Side by side for people; one row per library and ef in the CSV.
  table sweep({"ef", "llmgate_recall", "llmgate_qps", "hnswlib_recall", "hnswlib_qps"});
  sweep.add_row({"exact", "1", number(flat_qps, 5), "-", "-"});  // flat_index, one pass
  const auto cells = [](const std::vector<sweep_point>& points, std::size_t i) -> std::vector<std::string> {
    if (i >= points.size()) return {"-", "-"};
    return {number(points[i].recall), number(points[i].qps, 5)};
  };
  for (std::size_t i = 0; i < std::max(llmgate_sweep.size(), hnswlib_sweep.size()); ++i) {
    std::vector<std::string> row{std::to_string(ef_sweep[i])};
    for (auto& cell : cells(llmgate_sweep, i)) row.push_back(std::move(cell));
    for (auto& cell : cells(hnswlib_sweep, i)) row.push_back(std::move(cell));
    sweep.add_row(std::move(row));
  }
  table csv({"library", "ef", "recall_at_10", "qps", "build_s", "heap_bytes"});
  csv.add_row({"flat_index", "", "1", number(flat_qps, 6), number(flat_cost.seconds, 6),
               std::to_string(flat_cost.bytes)});
  for (const auto& [library, points, cost] :
       {std::tuple{"llmgate", &llmgate_sweep, &llmgate_cost}, std::tuple{"hnswlib", &hnswlib_sweep, &hnswlib_cost}})
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
    compare<llmgate::simd::float16>(data, parsed->storage);
  else if (parsed->storage == "int8")
    compare<llmgate::simd::scaled_int8>(data, parsed->storage);
  else
    compare<float>(data, parsed->storage);
  return 0;
} catch (const std::exception& e) {
  std::cerr << "llmgate_bench_index: " << e.what() << '\n';
  return 1;
}
