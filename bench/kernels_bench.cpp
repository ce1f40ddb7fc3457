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

#if defined(__FAST_MATH__)
#error "the scalar baseline must be compiled without -ffast-math (see bench/CMakeLists.txt)"
#endif

#include <algorithm>  // std::min, std::max
#include <cmath>      // std::abs
#include <cstddef>    // std::size_t
#include <cstdint>    // std::uint64_t
#include <iostream>   // std::cout
#include <limits>     // std::numeric_limits
#include <random>     // std::mt19937_64, std::uniform_real_distribution
#include <vector>     // std::vector

#include <llmgate/simd/kernels.hpp>

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
  publish("kernels", results, lines);
}
