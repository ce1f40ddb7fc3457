// resp_reader: RESP2 bytes in, redis::reply out, and commands out as RESP
// bytes. The parsing and the formatting are hiredis's (its redisReader and
// redisFormatCommandArgv); this header is where hiredis stops: the reader
// builds redis::reply trees directly through hiredis's object functions,
// so no redisReply is ever made, copied or freed.
//
// Bounded: one reply may take at most max_reply_bytes (its strings plus
// its nodes, or the bytes buffered while it is incomplete), 512 MiB by
// default as Redis's own proto-max-bulk-len; a larger one, a negative
// length or any malformed byte is a protocol error. After one the reader
// is unusable: the connection it reads must be dropped.
#pragma once

#include <hiredis/hiredis.h>  // redisFormatCommandArgv, redisFreeCommand
#include <hiredis/read.h>     // redisReader, redisReaderCreateWithFunctions, Feed, GetReply, REDIS_REPLY_*

#include <climits>      // INT_MAX
#include <cstddef>      // std::size_t
#include <memory>       // std::unique_ptr
#include <new>          // std::bad_alloc
#include <optional>     // std::optional
#include <stdexcept>    // std::invalid_argument
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::move
#include <vector>       // std::vector

#include "llmgate/error.hpp"         // llmgate::error, errc::store_error
#include "llmgate/redis/reply.hpp"   // reply, reply_kind, command

namespace llmgate::inline v0::redis {

/// Appends `c` to `out` as a RESP array of bulk strings (binary-safe).
/// Throws std::invalid_argument for an empty command: Redis answers none,
/// which would leave every later reply matched to the wrong command.
inline void append_command(std::string& out, const command& c) {
  if (c.empty()) throw std::invalid_argument("redis: empty command");
  if (c.size() > INT_MAX) throw std::invalid_argument("redis: command with too many arguments");
  std::vector<const char*> arguments;
  std::vector<std::size_t> lengths;
  arguments.reserve(c.size());
  lengths.reserve(c.size());
  for (const auto& argument : c) {
    arguments.push_back(argument.data());
    lengths.push_back(argument.size());
  }
  char* formatted = nullptr;
  const int length = redisFormatCommandArgv(&formatted, static_cast<int>(c.size()), arguments.data(), lengths.data());
  if (length < 0) throw std::bad_alloc();
  out.append(formatted, static_cast<std::size_t>(length));
  redisFreeCommand(formatted);
}

class resp_reader {
 public:
  static constexpr std::size_t default_max_reply_bytes = std::size_t{512} << 20;

  explicit resp_reader(std::size_t max_reply_bytes = default_max_reply_bytes)
      : max_reply_bytes_(max_reply_bytes), reader_(redisReaderCreateWithFunctions(&functions)) {
    if (!reader_) throw std::bad_alloc();
    reader_->privdata = this;
  }

  resp_reader(const resp_reader&) = delete;
  resp_reader& operator=(const resp_reader&) = delete;

  /// Adds bytes read from the server.
  void feed(std::string_view bytes) {
    if (bytes.empty()) return;
    if (redisReaderFeed(reader_.get(), bytes.data(), bytes.size()) != REDIS_OK) throw_reader_error();
  }

  /// The next complete reply, or nothing until more bytes are fed.
  /// Throws llmgate::error(errc::store_error, "redis: protocol error: ...").
  std::optional<reply> next() {
    void* built = nullptr;
    if (redisReaderGetReply(reader_.get(), &built) != REDIS_OK) throw_reader_error();
    if (!built) {
      if (reader_->len - reader_->pos > max_reply_bytes_) fail_too_large();
      return std::nullopt;
    }
    reply_bytes_ = 0;
    std::unique_ptr<reply> root(static_cast<reply*>(built));
    return std::move(*root);
  }

 private:
  struct free_reader {
    void operator()(redisReader* r) const noexcept { redisReaderFree(r); }
  };

  [[noreturn]] void fail_too_large() {
    throw error(errc::store_error,
                "redis: protocol error: a reply larger than " + std::to_string(max_reply_bytes_) + " bytes");
  }

  [[noreturn]] void throw_reader_error() {
    if (refusal_) throw error(errc::store_error, std::string("redis: protocol error: ") + refusal_);
    throw error(errc::store_error, std::string("redis: protocol error: ") + reader_->errstr);
  }

  // The node for `task`: a new root, or the next element of its parent
  // array. Elements are appended in order, and hiredis only refers to the
  // arrays still being filled, whose addresses no append moves. nullptr
  // (which hiredis reports as out of memory) when the reply grows past the
  // bound; refusal_ then says why.
  static reply* make(const redisReadTask* task, reply_kind kind, std::size_t payload) {
    auto* self = static_cast<resp_reader*>(task->privdata);
    self->reply_bytes_ += sizeof(reply) + payload;
    if (self->reply_bytes_ > self->max_reply_bytes_) {
      self->refusal_ = "a reply larger than the reader's bound (max_reply_bytes)";
      return nullptr;
    }
    if (!task->parent) return new reply{.kind = kind};
    auto& parent = *static_cast<reply*>(task->parent->obj);
    return &parent.elements.emplace_back(reply{.kind = kind});
  }

  static void* make_string(const redisReadTask* task, char* bytes, std::size_t length) {
    const reply_kind kind = task->type == REDIS_REPLY_ERROR    ? reply_kind::error
                            : task->type == REDIS_REPLY_STATUS ? reply_kind::status
                                                               : reply_kind::string;
    reply* node = make(task, kind, length);
    if (node) node->text.assign(bytes, length);
    return node;
  }

  static void* make_array(const redisReadTask* task, int elements) {
    if (elements < 0) {
      static_cast<resp_reader*>(task->privdata)->refusal_ = "a negative array length";
      return nullptr;
    }
    reply* node = make(task, reply_kind::array, 0);
    // A length is only a claim until its elements arrive: reserve little.
    if (node) node->elements.reserve(static_cast<std::size_t>(elements < 64 ? elements : 64));
    return node;
  }

  static void* make_integer(const redisReadTask* task, long long value) {
    reply* node = make(task, reply_kind::integer, 0);
    if (node) node->integer = value;
    return node;
  }

  static void* make_nil(const redisReadTask* task) { return make(task, reply_kind::nil, 0); }

  // hiredis frees only roots: a reply it gives up on, or one left in the reader.
  static void free_root(void* root) { delete static_cast<reply*>(root); }

  static inline redisReplyObjectFunctions functions = {make_string, make_array, make_integer, make_nil, free_root};

  std::size_t max_reply_bytes_;
  std::size_t reply_bytes_ = 0;      ///< of the reply being built
  const char* refusal_ = nullptr;    ///< why a node was refused, for the error
  std::unique_ptr<redisReader, free_reader> reader_;
};

}  // namespace llmgate::inline v0::redis
