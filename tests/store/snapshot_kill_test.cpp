// kill -9 during a snapshot write (issue 35, R2): a child process changes an
// exact cache and a semantic cache and saves each, over and over, to the
// same two paths, as a gateway does; the parent kills it with SIGKILL at a
// random moment, many times. Every time the files at those paths must load
// with the caches' own loaders and hold exactly one version the child
// wrote whole (never a mix of two, never an older one than the child had
// already saved), and the temporary file a killed save leaves behind must
// not stop the next process from saving. The test counts the kills that
// landed in the middle of a write (a new temporary file beside the
// snapshot) and requires some, so that it really exercises that case.
#include <boost/test/unit_test.hpp>

#include <algorithm>     // std::ranges::all_of
#include <chrono>        // std::chrono::steady_clock
#include <csignal>       // SIGKILL
#include <cstdint>       // std::uint32_t
#include <exception>     // std::exception
#include <filesystem>    // std::filesystem::directory_iterator
#include <optional>      // std::optional
#include <random>        // std::mt19937
#include <set>           // std::set
#include <string>        // std::string
#include <string_view>   // std::string_view
#include <thread>        // std::this_thread::sleep_for
#include <vector>        // std::vector

#include <poll.h>      // ::poll
#include <sys/wait.h>  // ::waitpid
#include <unistd.h>    // ::fork, ::pipe, ::_exit

#include "llmgate/cache/exact_cache.hpp"
#include "llmgate/cache/semantic_cache.hpp"
#include "../temporary_directory.hpp"

using namespace llmgate;

// Under AddressSanitizer loading and checking a snapshot takes about ten
// times as long (reading 4 MB through snapshot_reader: 150 ms instead of
// 15), so that build runs fewer rounds to stay near the release build's time.
#if defined(__SANITIZE_ADDRESS__)
#define LLMGATE_SNAPSHOT_KILL_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LLMGATE_SNAPSHOT_KILL_SANITIZED 1
#endif
#endif

namespace {

#ifdef LLMGATE_SNAPSHOT_KILL_SANITIZED
constexpr int rounds = 20;
#else
constexpr int rounds = 50;
#endif

using exact_type = exact_cache<std::string>;

// --- What version k of each cache holds: a function of k alone, so the
// parent can check a loaded file against it exactly. ---

// Exact cache, version k: entries "item 0" .. "item n-1", every value naming
// k, about 8 KB each (about 4 MB a snapshot, so a save takes milliseconds).
std::size_t exact_entries(std::uint32_t k) { return k == 0 ? 0 : 400 + (k * 37u) % 200; }

std::string exact_request(std::size_t i) { return "item " + std::to_string(i); }

std::string exact_value(std::uint32_t k, std::size_t i) {
  const std::size_t filler = 6000 + (k * 131u + i * 17u) % 4000;
  return "v=" + std::to_string(k) + ";i=" + std::to_string(i) + ";" +
         std::string(filler, static_cast<char>('a' + (k * 7u + i) % 26)) + ";end";
}

// Semantic cache, version k: the newest `semantic_capacity` of the requests
// 0 .. batch*k - 1 (each version adds `batch`; the LRU policy, with no
// lookups, evicts the oldest), each answer about 8 KB: about 1.5 MB a snapshot.
constexpr std::size_t semantic_batch = 8;
constexpr std::size_t semantic_capacity = 160;

std::size_t semantic_end(std::uint32_t k) { return semantic_batch * k; }
std::size_t semantic_begin(std::uint32_t k) {
  return semantic_end(k) > semantic_capacity ? semantic_end(k) - semantic_capacity : 0;
}

std::string semantic_request(std::size_t j) {
  return "how do I configure service " + std::to_string(j) + " with option " + std::to_string(j % 13) +
         " on cluster " + std::to_string(j % 7);
}

std::string semantic_answer(std::size_t j) {
  return "j=" + std::to_string(j) + ";" + std::string(7000 + (j * 53) % 2000, static_cast<char>('A' + j % 26));
}

semantic_cache_options semantic_options() { return {.max_entries = semantic_capacity}; }

const cache_scope& scope() {
  static const cache_scope s;
  return s;
}

// The version an exact cache holds (0 when empty), read from "item 0".
std::uint32_t exact_version_of(exact_type& cache) {
  const auto first = cache.find(scope(), exact_request(0));
  if (!first) return 0;
  return static_cast<std::uint32_t>(std::stoul(first->substr(2)));
}

// The version a semantic cache holds (0 when empty): its newest request is
// batch*k - 1.
std::uint32_t semantic_version_of(const semantic_cache& cache) {
  std::size_t end = 0;
  cache.for_each_entry([&](const hash128&, std::string_view, const std::string& answer, const answer_cost&) {
    end = std::max<std::size_t>(end, std::stoul(answer.substr(2)) + 1);
  });
  return static_cast<std::uint32_t>(end / semantic_batch);
}

// Turns version k-1 of each cache into version k.
void exact_step(exact_type& cache, std::uint32_t k) {
  for (std::size_t i = exact_entries(k); i < exact_entries(k - 1); ++i)
    cache.erase(cache.make_key(scope(), exact_request(i)));
  for (std::size_t i = 0; i < exact_entries(k); ++i) cache.insert(scope(), exact_request(i), exact_value(k, i));
}

void semantic_step(semantic_cache& cache, std::uint32_t k) {
  for (std::size_t j = semantic_end(k - 1); j < semantic_end(k); ++j)
    cache.insert(scope(), semantic_request(j), semantic_answer(j));
}

// --- The child: loads what is there (as a restarted gateway does), then
// changes and saves both caches as fast as it can until it is killed. It
// reports each save that returned, as a record on a pipe; it never returns
// into Boost.Test. ---

enum report_kind : std::uint32_t { exact_saved = 1, semantic_saved = 2, child_failed = 3 };
struct report {
  std::uint32_t kind;
  std::uint32_t value;  // the version saved, or for child_failed a code
};

void send(int fd, report r) {
  // A record is far below PIPE_BUF, so each write is atomic.
  if (::write(fd, &r, sizeof r) != static_cast<ssize_t>(sizeof r)) ::_exit(4);
}

[[noreturn]] void run_child(const std::filesystem::path& exact_path, const std::filesystem::path& semantic_path,
                            int fd) {
  try {
    exact_type exact = std::filesystem::exists(exact_path) ? exact_type::load(exact_path) : exact_type();
    semantic_cache semantic = std::filesystem::exists(semantic_path)
                                  ? semantic_cache::load(semantic_path, semantic_options())
                                  : semantic_cache(semantic_options());
    std::uint32_t exact_version = exact_version_of(exact);
    std::uint32_t semantic_version = semantic_version_of(semantic);
    for (;;) {
      exact_step(exact, ++exact_version);
      if (exact.save(exact_path)) break;
      send(fd, {exact_saved, exact_version});
      semantic_step(semantic, ++semantic_version);
      if (semantic.save(semantic_path)) break;
      send(fd, {semantic_saved, semantic_version});
    }
    send(fd, {child_failed, 1});  // a save returned an error
  } catch (...) {
    send(fd, {child_failed, 2});  // a load threw
  }
  ::_exit(3);
}

// --- The parent's checks, on the files as the killed child left them. ---

// Empty when `cache` is version k exactly; else what differs.
std::string exact_problem(exact_type& cache, std::uint32_t k) {
  if (cache.size() != exact_entries(k))
    return "holds " + std::to_string(cache.size()) + " entries, version " + std::to_string(k) + " has " +
           std::to_string(exact_entries(k));
  for (std::size_t i = 0; i < exact_entries(k); ++i) {
    const auto value = cache.find(scope(), exact_request(i));
    if (!value || *value != exact_value(k, i))
      return exact_request(i) + " is not version " + std::to_string(k) + "'s" +
             (value ? " (it holds " + value->substr(0, 16) + "...)" : " (missing)");
  }
  return {};
}

std::string semantic_problem(semantic_cache& cache, std::uint32_t k) {
  if (cache.size() != semantic_end(k) - semantic_begin(k))
    return "holds " + std::to_string(cache.size()) + " entries, version " + std::to_string(k) + " has " +
           std::to_string(semantic_end(k) - semantic_begin(k));
  std::set<std::size_t> seen;
  std::string problem;
  cache.for_each_entry([&](const hash128&, std::string_view text, const std::string& answer, const answer_cost&) {
    const std::size_t j = std::stoul(answer.substr(2));
    if (j < semantic_begin(k) || j >= semantic_end(k) || text != semantic_request(j) || answer != semantic_answer(j) ||
        !seen.insert(j).second)
      problem = "request " + std::to_string(j) + " does not belong to version " + std::to_string(k);
  });
  if (!problem.empty()) return problem;
  // The index came back too: the newest request finds its own answer.
  if (k > 0) {
    const auto found = cache.lookup(scope(), semantic_request(semantic_end(k) - 1));
    if (found.outcome != lookup_outcome::hit || found.answer != semantic_answer(semantic_end(k) - 1))
      return "the newest request does not find its answer";
  }
  return {};
}

// The temporary files beside the snapshots (snapshot_file names them
// "<path>.tmp-<steady clock count>").
std::set<std::string> temporary_files(const std::filesystem::path& dir) {
  std::set<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.find(".tmp-") != std::string::npos) names.insert(name);
  }
  return names;
}

// Kills and reaps a child that a round leaves early (an exception), so
// that none outlives the test.
struct child_guard {
  pid_t pid;
  ~child_guard() {
    if (pid > 0 && ::kill(pid, SIGKILL) == 0) ::waitpid(pid, nullptr, 0);
  }
};

// Reads one record, waiting at most `timeout_ms`; nullopt at end of file
// (the child died) or on timeout.
std::optional<report> receive(int fd, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, timeout_ms) <= 0) return std::nullopt;
  report r{};
  std::size_t done = 0;
  while (done < sizeof r) {
    const auto n = ::read(fd, reinterpret_cast<char*>(&r) + done, sizeof r - done);
    if (n <= 0) return std::nullopt;
    done += static_cast<std::size_t>(n);
  }
  return r;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(snapshot_kill_test)

// Even rounds kill at a random moment of the child's save cycle (changes,
// serialising, writing, fsync, rename, in the proportions they take);
// odd rounds wait for a save's temporary file to appear and kill within
// the next few milliseconds, so that kills land in the middle of writes
// also where the in-memory work dominates the cycle (sanitizer builds).
BOOST_AUTO_TEST_CASE(a_kill_at_any_point_leaves_the_previous_snapshot_loadable) {
  using clock = std::chrono::steady_clock;
  llmgate::test::temporary_directory dir;
  const auto exact_path = dir / "exact.snapshot";
  const auto semantic_path = dir / "semantic.snapshot";
  std::mt19937 random(35);
  std::uniform_int_distribution<int> while_writing_us(0, 4'000);
  std::uniform_int_distribution<int> in_cycle_us;  // set once the first child's cycle is measured

  // The newest version of each file whose save() the child reported done:
  // a loaded file must hold that one, or the next if the kill came during
  // or just after its rename (the child dies on the rename's return, before
  // its report).
  std::uint32_t exact_done = 0, semantic_done = 0;
  int mid_write_kills[2] = {0, 0};  // random rounds, targeted rounds
  int renamed_unreported = 0, loads = 0;
  std::set<std::string> known_temporaries;
  const auto started = clock::now();

  for (int round = 0; round < rounds; ++round) {
    BOOST_TEST_CONTEXT("round " << round) {
      const bool targeted = round % 2 == 1;
      int fds[2];
      BOOST_TEST_REQUIRE(::pipe(fds) == 0);
      const pid_t child = ::fork();
      BOOST_TEST_REQUIRE(child >= 0);
      if (child == 0) {
        ::close(fds[0]);
        run_child(exact_path, semantic_path, fds[1]);
      }
      ::close(fds[1]);
      child_guard guard{child};

      bool failed = false;
      const auto take = [&](const std::optional<report>& r) {
        if (!r || r->kind == child_failed) failed = true;
        else if (r->kind == exact_saved) exact_done = r->value;
        else if (r->kind == semantic_saved) semantic_done = r->value;
        return r && r->kind == semantic_saved;
      };
      // Wait until this child has saved both caches once: the files exist,
      // and no temporary file a killed child left stopped it.
      while (!failed && !take(receive(fds[0], 60'000))) {}
      if (round == 0 && !failed) {
        // Measure a whole cycle (both changes and both saves) over three.
        const auto from = clock::now();
        for (int cycles = 0; cycles < 3 && !failed;) cycles += take(receive(fds[0], 60'000));
        const auto cycle = std::chrono::duration_cast<std::chrono::microseconds>(clock::now() - from) / 3;
        in_cycle_us = std::uniform_int_distribution<int>(0, static_cast<int>(cycle.count()));
        BOOST_TEST_MESSAGE("snapshot_kill_test: a change-and-save cycle takes " << cycle.count() << " us");
      }
      if (!failed && !targeted) {
        std::this_thread::sleep_for(std::chrono::microseconds(in_cycle_us(random)));
      } else if (!failed) {
        const auto give_up = clock::now() + std::chrono::seconds(30);
        while (clock::now() < give_up && std::ranges::all_of(temporary_files(dir.path()), [&](const std::string& name) {
                 return known_temporaries.contains(name);
               }))
          std::this_thread::sleep_for(std::chrono::microseconds(100));
        std::this_thread::sleep_for(std::chrono::microseconds(while_writing_us(random)));
      }
      ::kill(child, SIGKILL);
      int status = 0;
      BOOST_TEST_REQUIRE(::waitpid(child, &status, 0) == child);
      guard.pid = 0;
      const auto temporaries = temporary_files(dir.path());

      // What it reported before it died.
      for (std::optional<report> r; (r = receive(fds[0], 0));) take(r);
      ::close(fds[0]);
      BOOST_TEST_REQUIRE(!failed, "the child could not load or save");
      BOOST_TEST_REQUIRE((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL));

      // A kill lands between a temporary file's creation and its rename at
      // most once per round (the child writes one file at a time).
      std::size_t new_temporaries = 0;
      for (const auto& name : temporaries) {
        if (known_temporaries.insert(name).second) {
          ++new_temporaries;
          BOOST_TEST((name.starts_with("exact.snapshot.tmp-") || name.starts_with("semantic.snapshot.tmp-")), name);
        }
      }
      BOOST_TEST(new_temporaries <= 1u);
      mid_write_kills[targeted] += static_cast<int>(new_temporaries);

      // Both files load, each exactly as one whole version, not older than
      // the last reported save.
      try {
        exact_type exact = exact_type::load(exact_path);
        const std::uint32_t version = exact_version_of(exact);
        BOOST_TEST((version == exact_done || version == exact_done + 1), version << " after " << exact_done);
        BOOST_TEST(exact_problem(exact, version) == "");
        renamed_unreported += version == exact_done + 1;
        exact_done = version;
        ++loads;
      } catch (const std::exception& e) {
        BOOST_TEST_REQUIRE(false, "the exact cache's snapshot does not load: " << e.what());
      }
      try {
        semantic_cache semantic = semantic_cache::load(semantic_path, semantic_options());
        const std::uint32_t version = semantic_version_of(semantic);
        BOOST_TEST((version == semantic_done || version == semantic_done + 1), version << " after " << semantic_done);
        BOOST_TEST(semantic_problem(semantic, version) == "");
        renamed_unreported += version == semantic_done + 1;
        semantic_done = version;
        ++loads;
      } catch (const std::exception& e) {
        BOOST_TEST_REQUIRE(false, "the semantic cache's snapshot does not load: " << e.what());
      }
    }
  }

  const auto seconds = std::chrono::duration<double>(clock::now() - started).count();
  BOOST_TEST_MESSAGE("snapshot_kill_test: " << rounds << " rounds in " << seconds << " s; kills mid-write: "
                     << mid_write_kills[0] << " of " << rounds / 2 << " at random, " << mid_write_kills[1] << " of "
                     << rounds / 2 << " targeted; " << renamed_unreported
                     << " during or just after a rename, before its report; " << loads
                     << " loads; versions reached: exact " << exact_done << ", semantic " << semantic_done);
  BOOST_TEST(loads == 2 * rounds);
  BOOST_TEST(mid_write_kills[0] + mid_write_kills[1] > 0);
  // Every temporary file there is one a killed save left: no finished save leaves one.
  BOOST_TEST(temporary_files(dir.path()).size() == static_cast<std::size_t>(mid_write_kills[0] + mid_write_kills[1]));
}

BOOST_AUTO_TEST_SUITE_END()
