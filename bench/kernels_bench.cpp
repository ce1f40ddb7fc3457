// Kernel benchmark: how close llmgate's batched cosine scan (one query
// against a block of rows, simd::dot_batch) comes to the memory bandwidth
// one thread can get, and how much faster it is than the loop a user would
// write by hand. For each dimension, over 100,000 unit rows:
//
//   scan_gbps           bytes of rows read per second by simd::dot_batch
//   vs_scalar           time of a plain scalar loop / time of the scan
//   triad_gbps          STREAM triad a[i] = b[i] + s * c[i] on one thread,
//                       counted as 3 arrays x 4 bytes per element, arrays
//                       far larger than any cache
//   bandwidth_fraction  scan_gbps / triad_gbps
//
// Each number is the best of several repetitions; the three measurements are
// interleaved within every repetition so that a disturbance by other
// processes on a shared machine hits them alike.
//
// Built with the NumKong peer (LLMGATE_BENCH_NUMKONG, bench/usearch_peer.cmake:
// NumKong from the npm package usearch 2.26.2, dynamic dispatch), it also
// compares llmgate's kernels with NumKong's in cache: one query against a
// block of rows that fits in L2 (384 KiB of float32 rows, the same number of
// rows for every type, 64-byte aligned as in both indexes), scored over and
// over; throughput in row elements per second of the thread's processor
// time, best of many short repetitions, the two interleaved. Each pair is the
// kernel one index calls for every candidate it scores, so the operations
// compared are those of llmgate's HNSW storages against USearch's scalar
// kinds (bench/index_bench.cpp):
//   float32  simd::dot(float*, float*)        vs nk_dot_f32 (float32 rows, float64 result)
//   float16  simd::dot(float*, float16*)      vs nk_dot_f16 (float16 query and row, float32 result):
//            llmgate keeps the query in float32 and widens the row; USearch casts the query to f16
//   int8     simd::dot(scaled_int8_row, ...)  vs nk_dot_i8 (int8 codes, int32 result): both are an
//            integer dot of two rows of codes; llmgate's also multiplies by the two rows' scales
// NumKong's angular (cosine) kernels, which USearch calls for its cos metric,
// are timed beside them for the table. NumKong's kernels are called through
// the pointer nk_find_kernel_punned gives, as USearch calls them; llmgate's
// through a function that is not inlined, so that neither is folded into
// the timing loop.

#if defined(__FAST_MATH__)
#error "the scalar baseline must be compiled without -ffast-math (see bench/CMakeLists.txt)"
#endif

#include <algorithm>  // std::min, std::max
#include <cmath>      // std::abs
#include <cstddef>    // std::size_t
#include <cstdint>    // std::uint64_t
#include <cstdlib>    // std::aligned_alloc, std::free
#include <functional> // std::function
#include <memory>     // std::unique_ptr
#include <new>        // std::bad_alloc
#include <iostream>   // std::cout
#include <limits>     // std::numeric_limits
#include <random>     // std::mt19937_64, std::uniform_real_distribution
#include <stdexcept>  // std::runtime_error
#include <string>     // std::string
#include <string_view>  // std::string_view
#include <utility>    // std::pair
#include <vector>     // std::vector

#include <llmgate/simd/float16.hpp>
#include <llmgate/simd/kernels.hpp>
#include <llmgate/simd/scaled_int8.hpp>

#if LLMGATE_BENCH_NUMKONG
#include <numkong/numkong.h>  // nk_find_kernel_punned, nk_capabilities, nk_kernel_*_k, nk_*_k
#endif

#include "bench_support.hpp"

namespace {

using namespace llmgate_bench;

constexpr std::size_t row_count = 100'000;
constexpr std::size_t dimensions[] = {384, 768, 1536};
constexpr int repetitions = 10;
// Three arrays of 128 MiB each, four times any last-level cache in sight, so
// the triad measures memory and not cache.
constexpr std::size_t triad_elements = std::size_t{1} << 25;

// The scan as plain code: one chain of dependent adds per row. Without
// -ffast-math the compiler must keep the adds in order, so it cannot
// vectorise the reduction; this is what llmgate's kernels are measured
// against.
[[gnu::noinline]] void scalar_dot_batch(const float* query, const float* rows, std::size_t count,
                                        std::size_t dim, float* out) {
  for (std::size_t r = 0; r < count; ++r) {
    const float* row = rows + r * dim;
    float sum = 0.0f;
    for (std::size_t i = 0; i < dim; ++i) sum += query[i] * row[i];
    out[r] = sum;
  }
}

// No reduction here, so the compiler vectorises it freely: memory is the limit.
[[gnu::noinline]] void triad(float* a, const float* b, const float* c, float s, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
}

std::vector<float> random_unit_rows(std::size_t count, std::size_t dim, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> rows(count * dim);
  for (auto& x : rows) x = uniform(random);
  for (std::size_t r = 0; r < count; ++r) llmgate::simd::normalize(rows.data() + r * dim, dim);
  return rows;
}

#if LLMGATE_BENCH_NUMKONG

namespace nk_peer {

constexpr std::size_t in_cache_dimensions[] = {384, 1536};
constexpr std::size_t in_cache_float32_bytes = 384 * 1024;  // of 2 MiB L2 per core here; the query stays in L1
constexpr double in_cache_elements = 4e7;                   // row elements scored per repetition (a few ms)
constexpr int in_cache_repetitions = 31;

// NumKong's kernel for (kind, type), as USearch looks it up, and the name of
// the instruction set the dispatcher chose for this processor.
struct kernel {
  nk_metric_dense_punned_t function = nullptr;
  const char* isa = "none";
};

const char* isa_name(nk_capability_t capability) {
  const std::pair<nk_capability_t, const char*> names[] = {
      {nk_cap_serial_k, "serial"},   {nk_cap_haswell_k, "haswell"},         {nk_cap_skylake_k, "skylake"},
      {nk_cap_icelake_k, "icelake"}, {nk_cap_genoa_k, "genoa"},             {nk_cap_sapphire_k, "sapphire"},
      {nk_cap_alder_k, "alder"},     {nk_cap_sapphireamx_k, "sapphireamx"}, {nk_cap_turin_k, "turin"},
      {nk_cap_sierra_k, "sierra"},   {nk_cap_graniteamx_k, "graniteamx"},   {nk_cap_diamond_k, "diamond"}};
  for (const auto& [bit, name] : names)
    if (capability == bit) return name;
  return "other";
}

kernel find(nk_kernel_kind_t kind, nk_dtype_t type) {
  kernel k;
  nk_capability_t chosen = 0;
  nk_find_kernel_punned(kind, type, nk_capabilities(), reinterpret_cast<nk_kernel_punned_t*>(&k.function), &chosen);
  if (!k.function) throw std::runtime_error("NumKong has no kernel for this type");
  k.isa = isa_name(chosen);
  return k;
}

// llmgate's kernels behind a call that is not inlined, like NumKong's.
[[gnu::noinline]] float ours_float32(const float* query, const float* row, std::size_t dim) {
  return llmgate::simd::dot(query, row, dim);
}
[[gnu::noinline]] float ours_float16(const float* query, const llmgate::simd::float16* row, std::size_t dim) {
  return llmgate::simd::dot(query, row, dim);
}
[[gnu::noinline]] float ours_int8(llmgate::simd::scaled_int8_row query, llmgate::simd::scaled_int8_row row,
                                  std::size_t dim) {
  return llmgate::simd::dot(query, row, dim);
}

// 64-byte aligned bytes, as both libraries' indexes align their rows.
struct aligned_bytes {
  struct release {
    void operator()(unsigned char* p) const { std::free(p); }
  };
  std::unique_ptr<unsigned char[], release> data;
  explicit aligned_bytes(std::size_t size)
      : data(static_cast<unsigned char*>(std::aligned_alloc(64, (size + 63) / 64 * 64))) {
    if (!data) throw std::bad_alloc();
  }
  template <class T>
  T* as() const { return reinterpret_cast<T*>(data.get()); }
};

// Seconds of this thread's processor time to score every row `rounds`
// times through score(r), which returns row r's score. (Processor time, not
// wall time: in cache nothing waits for memory, and on a shared machine the
// wall clock also counts the time other processes held the core.)
template <class Score>
double block_seconds(std::size_t count, int rounds, std::vector<float>& out, Score score) {
  const double start = thread_cpu_seconds();
  for (int round = 0; round < rounds; ++round)
    for (std::size_t r = 0; r < count; ++r) out[r] = score(r);
  return thread_cpu_seconds() - start;
}

// NumKong's result as a float, whatever its output type.
template <class Result>
float call(const kernel& k, const void* a, const void* b, std::size_t dim) {
  Result result{};
  k.function(a, b, dim, &result);
  return static_cast<float>(result);
}

// One type's query and rows, encoded for llmgate (`ours`, a callable of the
// row index) and for NumKong (`peer` and `peer_angular`, likewise), with
// `peer_value`(r) turning NumKong's row-r result into llmgate's units.
struct encoded_type {
  std::function<float(std::size_t)> ours, peer, peer_angular, peer_value;
  std::vector<aligned_bytes> buffers;
};

encoded_type encode(const std::string& type, const std::vector<float>& query, const std::vector<float>& rows,
                    std::size_t dim, const kernel& dot, const kernel& angular, const std::vector<float>& peer_out) {
  using namespace llmgate::simd;
  const std::size_t count = rows.size() / dim;
  encoded_type e;
  e.buffers.reserve(3);  // references to them are kept below
  if (type == "float32") {
    auto& q = e.buffers.emplace_back(dim * sizeof(float));
    auto& block = e.buffers.emplace_back(count * dim * sizeof(float));
    std::copy(query.begin(), query.end(), q.as<float>());
    std::copy(rows.begin(), rows.end(), block.as<float>());
    const float* qp = q.as<float>();
    const float* bp = block.as<float>();
    e.ours = [=](std::size_t r) { return ours_float32(qp, bp + r * dim, dim); };
    e.peer = [=, &dot](std::size_t r) { return call<nk_f64_t>(dot, qp, bp + r * dim, dim); };
    e.peer_angular = [=, &angular](std::size_t r) { return call<nk_f64_t>(angular, qp, bp + r * dim, dim); };
    e.peer_value = [&peer_out](std::size_t r) { return peer_out[r]; };
  } else if (type == "float16") {
    auto& q = e.buffers.emplace_back(dim * sizeof(float));
    auto& q16 = e.buffers.emplace_back(dim * sizeof(float16));
    auto& block = e.buffers.emplace_back(count * dim * sizeof(float16));
    std::copy(query.begin(), query.end(), q.as<float>());  // llmgate's query stays float32
    for (std::size_t i = 0; i < dim; ++i) q16.as<float16>()[i] = to_float16(query[i]);
    for (std::size_t i = 0; i < rows.size(); ++i) block.as<float16>()[i] = to_float16(rows[i]);
    const float* qp = q.as<float>();
    const float16* q16p = q16.as<float16>();
    const float16* bp = block.as<float16>();
    e.ours = [=](std::size_t r) { return ours_float16(qp, bp + r * dim, dim); };
    e.peer = [=, &dot](std::size_t r) { return call<nk_f32_t>(dot, q16p, bp + r * dim, dim); };
    e.peer_angular = [=, &angular](std::size_t r) { return call<nk_f32_t>(angular, q16p, bp + r * dim, dim); };
    e.peer_value = [&peer_out](std::size_t r) { return peer_out[r]; };
  } else {
    // The same codes for both; llmgate's scales in an array of their own,
    // as its index keeps them.
    auto& q = e.buffers.emplace_back(dim);
    auto& block = e.buffers.emplace_back(count * dim);
    auto& scales = e.buffers.emplace_back((count + 1) * sizeof(float));
    float* sp = scales.as<float>();
    sp[count] = quantize(query.data(), q.as<scaled_int8>(), dim);
    for (std::size_t r = 0; r < count; ++r) sp[r] = quantize(rows.data() + r * dim, block.as<scaled_int8>() + r * dim, dim);
    const scaled_int8* qp = q.as<scaled_int8>();
    const scaled_int8* bp = block.as<scaled_int8>();
    e.ours = [=](std::size_t r) { return ours_int8({qp, sp[count]}, {bp + r * dim, sp[r]}, dim); };
    e.peer = [=, &dot](std::size_t r) { return call<nk_i32_t>(dot, qp, bp + r * dim, dim); };
    e.peer_angular = [=, &angular](std::size_t r) { return call<nk_f32_t>(angular, qp, bp + r * dim, dim); };
    e.peer_value = [=, &peer_out](std::size_t r) { return peer_out[r] * sp[count] * sp[r]; };
  }
  return e;
}

void compare(table& results, std::vector<json_line>& lines) {
  const struct {
    const char* type;
    nk_dtype_t peer_type;
    const char* peer_name;
  } types[] = {{"float32", nk_f32_k, "nk_dot_f32"}, {"float16", nk_f16_k, "nk_dot_f16"}, {"int8", nk_i8_k, "nk_dot_i8"}};
  for (const std::size_t dim : in_cache_dimensions) {
    const std::size_t count = in_cache_float32_bytes / (dim * sizeof(float));
    const auto rows = random_unit_rows(count, dim, 7 * dim);
    const auto query = random_unit_rows(1, dim, 7 * dim + 1);
    const int rounds = static_cast<int>(in_cache_elements / double(count * dim)) + 1;
    for (const auto& t : types) {
      const kernel dot = find(nk_kernel_dot_k, t.peer_type), angular = find(nk_kernel_angular_k, t.peer_type);
      std::vector<float> ours_out(count), peer_out(count), angular_out(count);
      const encoded_type e = encode(t.type, query, rows, dim, dot, angular, peer_out);
      double ours_s = std::numeric_limits<double>::infinity(), peer_s = ours_s, angular_s = ours_s;
      for (int rep = 0; rep < in_cache_repetitions; ++rep) {
        ours_s = std::min(ours_s, block_seconds(count, rounds, ours_out, e.ours));
        peer_s = std::min(peer_s, block_seconds(count, rounds, peer_out, e.peer));
        angular_s = std::min(angular_s, block_seconds(count, rounds, angular_out, e.peer_angular));
      }
      // The same dot products, up to rounding (int8: exactly, once NumKong's
      // integer sum is multiplied by the two scales).
      float max_diff = 0.0f;
      for (std::size_t r = 0; r < count; ++r) max_diff = std::max(max_diff, std::abs(ours_out[r] - e.peer_value(r)));
      const double elements = double(count) * dim * rounds;
      const double ours_rate = elements / ours_s, peer_rate = elements / peer_s;
      results.add_row({std::to_string(dim), t.type, std::to_string(count), number(ours_rate / 1e9),
                       number(peer_rate / 1e9), number(elements / angular_s / 1e9), number(ours_rate / peer_rate),
                       std::string(t.peer_name) + " (" + dot.isa + ")", number(max_diff, 2)});
      lines.push_back(json_line()
                          .add("bench", "kernel_vs_numkong")
                          .add("dim", dim)
                          .add("type", t.type)
                          .add("ratio", ours_rate / peer_rate)
                          .add("numkong_kernel", t.peer_name)
                          .add("numkong_isa", dot.isa)
                          .add("ours_ns_per_row", ours_s / (double(count) * rounds) * 1e9)
                          .add("numkong_ns_per_row", peer_s / (double(count) * rounds) * 1e9));
    }
  }
}

}  // namespace nk_peer

#endif  // LLMGATE_BENCH_NUMKONG

}  // namespace

int main() {
  std::cout << "llmgate kernels: cosine scan of one query against " << row_count
            << " unit rows, one thread, simd arch " << llmgate::simd::arch_name()
            << ", best of " << repetitions << "\n\n";

  std::vector<float> a(triad_elements, 0.0f), b(triad_elements, 1.0f), c(triad_elements, 2.0f);
  const double triad_bytes = 3.0 * sizeof(float) * triad_elements;

  table results({"dim", "rows", "scalar_gbps", "scan_gbps", "vs_scalar", "triad_gbps",
                 "bandwidth_fraction", "max_abs_diff"});
  std::vector<json_line> lines;
  for (const std::size_t dim : dimensions) {
    progress("kernels: dim %zu: generating %zu rows", dim, row_count);
    const auto rows = random_unit_rows(row_count, dim, dim);
    const auto query = random_unit_rows(1, dim, dim + 1);
    std::vector<float> scan_out(row_count), scalar_out(row_count);

    progress("kernels: dim %zu: %d repetitions", dim, repetitions);
    double triad_s = std::numeric_limits<double>::infinity();
    double scan_s = triad_s, scalar_s = triad_s;
    for (int rep = 0; rep < repetitions; ++rep) {
      triad_s = std::min(triad_s, time_once([&] {
        triad(a.data(), b.data(), c.data(), 3.0f, triad_elements);
      }));
      scan_s = std::min(scan_s, time_once([&] {
        llmgate::simd::dot_batch(query.data(), rows.data(), row_count, dim, scan_out.data());
      }));
      scalar_s = std::min(scalar_s, time_once([&] {
        scalar_dot_batch(query.data(), rows.data(), row_count, dim, scalar_out.data());
      }));
    }

    // Both scans must agree (up to rounding of a different summation order).
    float max_diff = 0.0f;
    for (std::size_t r = 0; r < row_count; ++r)
      max_diff = std::max(max_diff, std::abs(scan_out[r] - scalar_out[r]));
    if (max_diff > 1e-4f || a[triad_elements / 2] != 7.0f) {
      progress("kernels: dim %zu: results disagree (max |scan - scalar| = %g)", dim, max_diff);
      return 1;
    }

    const double scan_bytes = double(row_count) * dim * sizeof(float);
    const double scan_gbps = scan_bytes / scan_s / 1e9;
    const double scalar_gbps = scan_bytes / scalar_s / 1e9;
    const double triad_gbps = triad_bytes / triad_s / 1e9;
    results.add_row({std::to_string(dim), std::to_string(row_count), number(scalar_gbps),
                     number(scan_gbps), number(scalar_s / scan_s), number(triad_gbps),
                     number(scan_gbps / triad_gbps), number(max_diff, 2)});
    lines.push_back(json_line()
                        .add("bench", "cosine_kernel")
                        .add("dim", dim)
                        .add("rows", row_count)
                        .add("vs_scalar", scalar_s / scan_s)
                        .add("scan_gbps", scan_gbps)
                        .add("triad_gbps", triad_gbps)
                        .add("bandwidth_fraction", scan_gbps / triad_gbps));
  }

  results.print(std::cout);
  std::cout << "\ntargets: bandwidth_fraction >= 0.9 at dim 1536, vs_scalar >= 5 at dim 384\n\n";

#if LLMGATE_BENCH_NUMKONG
  progress("kernels: llmgate against NumKong in cache");
  table peer({"dim", "type", "rows", "llmgate_gelem_s", "numkong_dot_gelem_s", "numkong_angular_gelem_s", "ratio",
              "numkong_kernel", "max_abs_diff"});
  nk_peer::compare(peer, lines);
  std::cout << "llmgate's kernels against NumKong's (usearch 2.26.2, dynamic dispatch) in cache: one query "
               "against a block of rows in L2, giga row elements per processor second, best of "
            << nk_peer::in_cache_repetitions << "; ratio = llmgate / NumKong's dot\n";
  peer.print(std::cout);
  std::cout << "\ntarget: ratio >= 1.0\n\n";
#endif
  publish("kernels", results, lines);
}
