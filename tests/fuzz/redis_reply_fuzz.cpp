// libFuzzer target: any bytes as a Redis server's answer, cut into pieces
// where the input says, through the RESP reader; every reply it makes, and
// every element inside one, is read as a redirect and as a CLUSTER SLOTS
// reply, as the cluster client reads what a node sends. Everything may be
// refused with llmgate::error; nothing may crash, hang or leak, and what
// is accepted must hold what the client relies on (slots below 16384,
// ports above 0, ranges sorted and apart).
#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint8_t
#include <string_view>  // std::string_view

#include "llmgate/error.hpp"                // llmgate::error
#include "llmgate/redis/cluster_slots.hpp"  // redirect_of, parse_cluster_slots
#include "llmgate/redis/resp_reader.hpp"    // resp_reader

namespace redis = llmgate::redis;

namespace {

void read_as_cluster_answer(const redis::reply& answer) {
  if (const auto to = redis::redirect_of(answer))
    if (to->slot >= redis::cluster_slot_count || to->to.port == 0) __builtin_trap();
  try {
    const auto ranges = redis::parse_cluster_slots(answer);
    for (std::size_t i = 0; i < ranges.size(); ++i) {
      if (ranges[i].first > ranges[i].last || ranges[i].last >= redis::cluster_slot_count) __builtin_trap();
      if (i > 0 && ranges[i].first <= ranges[i - 1].last) __builtin_trap();
    }
  } catch (const llmgate::error&) {
  }
  for (const auto& element : answer.elements) read_as_cluster_answer(element);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  // The first byte chooses the piece size, so splits land everywhere.
  const std::size_t piece = 1 + data[0] % 32;
  std::string_view bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  // A small bound, so that a claimed length cannot make the reader wait for
  // (or reserve) more than libFuzzer's memory limit.
  redis::resp_reader reader(std::size_t{1} << 20);
  try {
    for (std::size_t at = 0; at < bytes.size(); at += piece) {
      reader.feed(bytes.substr(at, piece));
      while (auto answer = reader.next()) read_as_cluster_answer(*answer);
    }
  } catch (const llmgate::error&) {
  }
  return 0;
}
