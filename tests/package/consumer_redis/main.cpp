// A small program using llmgate's shared cache tier on Redis the way a user
// would, without a Redis server: compiling and linking it is most of the
// check (the tier's headers with Asio, Boost.JSON, OpenSSL and hiredis; the
// reader calls hiredis, so a package that forgets to link it fails here).
// It checks its answers and exits nonzero when one is wrong.
#include <cstdint>   // std::uint16_t
#include <cstdio>    // std::printf, std::fprintf
#include <optional>  // std::optional

#include <llmgate/redis/cluster_slots.hpp>  // key_slot, redirect_of
#include <llmgate/redis/resp_reader.hpp>    // resp_reader (hiredis's redisReader)
#include <llmgate/server/shared/redis_shared_tier.hpp>    // make_shared_tier
#include <llmgate/server/shared/shared_tier.hpp>   // shared_tier_factory
#include <llmgate/version.hpp>              // LLMGATE_VERSION_*

namespace {

int failures = 0;

void expect(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "consumer_redis: %s\n", what);
    ++failures;
  }
}

}  // namespace

int main() {
  namespace redis = llmgate::redis;

  // Redis's own example values (CLUSTER KEYSLOT foo is 12182); a hash tag
  // puts keys in one slot.
  const std::uint16_t slot = redis::key_slot("foo");
  expect(slot == 12182, "key_slot(\"foo\") is not 12182");
  expect(redis::key_slot("{user1000}.following") == redis::key_slot("{user1000}.followers"),
         "keys with the same hash tag are in different slots");

  // A MOVED error read by hiredis's reader, then understood as a redirect.
  redis::resp_reader reader;
  reader.feed("-MOVED 3999 127.0.0.1:6381\r\n");
  const std::optional<redis::reply> answer = reader.next();
  expect(answer.has_value() && answer->is_error(), "the reader did not read one error reply");
  if (answer) {
    const auto moved = redis::redirect_of(*answer);
    expect(moved.has_value() && !moved->ask && moved->slot == 3999 && moved->to.host == "127.0.0.1" &&
               moved->to.port == 6381,
           "MOVED 3999 127.0.0.1:6381 is not read as that redirect");
  }

  // The factory a gateway takes (gateway_parts::shared): it must link.
  const llmgate::shared_tier_factory factory = llmgate::make_shared_tier;
  expect(static_cast<bool>(factory), "make_shared_tier is not a shared_tier_factory");

  std::printf("llmgate %d.%d.%d redis: key_slot(\"foo\") = %u: %s\n", LLMGATE_VERSION_MAJOR,
              LLMGATE_VERSION_MINOR, LLMGATE_VERSION_PATCH, static_cast<unsigned>(slot),
              failures == 0 ? "ok" : "FAILED");
  return failures == 0 ? 0 : 1;
}
