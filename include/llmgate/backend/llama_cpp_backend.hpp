// llama_cpp_backend: llama.cpp's llama-server, an OpenAI-compatible server
// (everything openai_backend does, at {base_url}/v1) that also keeps each
// slot's attention (KV) state between requests and can save a slot's state
// to a file and load it back. A compiled PML prompt (request.layout set) is
// sent so that it reuses that state; a plain request is sent exactly as
// openai_backend sends it.
//
// For a PML prompt:
// - cache_prompt: true, and id_slot: the slot chosen for its prefix
//   (layout.prefix_path). Prompts sharing a prefix land in the slot that
//   holds it. In order: an idle slot given this prefix; a slot never given
//   one; the idle slot least recently used (its new prefix restored there
//   from the schema's slot file, so that a busy prefix spreads over idle
//   slots instead of queueing); when every slot is busy, one given this
//   prefix, else the least recently used, and the prompt waits for it. The
//   slot count is options.slots, else the server's (GET /props
//   total_slots, else the length of GET /slots), asked once.
// - n_cache_reuse: options.cache_reuse where set (the server's --cache-reuse
//   for this request): chunks of at least that many tokens that match the
//   slot's state after the common prefix are shifted and reused, so that a
//   prompt that skips a module still reuses the modules after it from the
//   restored whole schema.
// - Slot files (options.slot_files; the server needs --slot-save-path):
//   the first prompt of a schema encodes its whole_schema once (POST
//   /apply-template for the prompt text the server builds from those
//   messages, POST /completion of that text with n_predict 0, id_slot and
//   cache_prompt) and saves the slot (POST /slots/{id}?action=save
//   {"filename": ...}); a later prompt of the schema whose slot holds
//   something else restores the file there first (action=restore).
// - One request at a time per slot: the restore (or encoding) and the
//   completion after it never interleave with another prompt on that slot.
//   Every backend made for one server shares that state (options.shared;
//   the gateway's registry shares it between its workers).
// - Where slot files fail (a server without --slot-save-path answers 501,
//   one without the endpoints 404, a slot file that cannot be restored),
//   the prompt goes with plain prefix caching (cache_prompt and id_slot)
//   and prompt_statistics::slot_fallback records why: once per prompt
//   whose slot needed its schema and could not have it. A server that
//   refused slot files is not asked again; a file that could not be
//   restored is encoded again by the next prompt of its schema; a template
//   the server cannot apply is not tried again for that schema. Where the
//   slot count cannot be learnt (neither /props nor /slots answers), the
//   prompt goes with cache_prompt alone, counted as "slot count unknown".
//
// Plain requests, and other clients of the server, take no slot lock: the
// server may give them a slot that holds a prefix, whose next prompt is
// then computed again (correct, slower; the cached count the server
// reports says so).
#pragma once

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint64_t
#include <cstdio>       // std::snprintf
#include <map>          // std::map
#include <memory>       // std::shared_ptr, std::make_shared, std::unique_ptr
#include <mutex>        // std::mutex, std::scoped_lock
#include <optional>     // std::optional
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::move, std::pair, std::exchange
#include <vector>       // std::vector

#include <boost/asio/awaitable.hpp>      // net::awaitable
#include <boost/asio/use_awaitable.hpp>  // waiting for a slot's lock
#include <boost/json/object.hpp>         // the bodies of the slot endpoints

#include "llmgate/backend/backend.hpp"              // Backend, EmbeddingBackend
#include "llmgate/backend/backend_error.hpp"        // backend_error
#include "llmgate/backend/detail/async_mutex.hpp"   // async_mutex, async_lock_guard
#include "llmgate/backend/detail/upstream.hpp"      // upstream: the server's own endpoints
#include "llmgate/backend/embedding.hpp"            // embedding_request, embedding_response
#include "llmgate/backend/http_client.hpp"          // http_client
#include "llmgate/backend/openai_backend.hpp"       // the OpenAI-compatible part
#include "llmgate/backend/price_table.hpp"          // price_table
#include "llmgate/wire/openai_wire.hpp"             // chat_request_body
#include "llmgate/detail/xxhash.hpp"                // XXH3_64bits: slot file names
#include "llmgate/prompt/prompt_layout.hpp"         // prompt_layout
#include "llmgate/prompt/prompt_statistics.hpp"     // prompt_statistics

namespace llmgate::inline v0 {

/// The slot files of llama-servers that save to one directory: which
/// schemas have a file, and one encoding or restore of each at a time.
/// One server has its own; the replicas of a pool whose servers share their
/// --slot-save-path share one (the entry's "shared_slot_files"), so that a
/// prefix that moves to another replica is restored there from the file
/// the first one saved instead of being computed again. Thread-safe.
class llama_cpp_slot_files {
 public:
  struct slot_file {
    bool saved = false;        ///< under `lock`
    std::string refused;       ///< why its encoding failed for good ("" if it did not); under `lock`
    detail::async_mutex lock;  ///< one encoding or restore at a time
  };

  /// The record of slot file `name` (made on first use; never removed).
  slot_file& file(const std::string& name) {
    std::scoped_lock guard(mutex_);
    auto& entry = files_[name];
    if (!entry) entry = std::make_unique<slot_file>();
    return *entry;
  }

 private:
  std::mutex mutex_;
  std::map<std::string, std::unique_ptr<slot_file>> files_;
};

/// What every backend talking to one llama-server shares: the slot count,
/// which prefix each slot is given to, each slot's lock and what it holds,
/// and its slot files (llama_cpp_slot_files). Thread-safe.
class llama_cpp_slots {
 public:
  struct slot {
    std::string prefix;        ///< the prefix given this slot ("" none); under the state's mutex
    std::uint64_t used = 0;    ///< when it was last chosen; under the state's mutex
    std::size_t users = 0;     ///< requests holding or waiting for it; under the state's mutex
    std::string holds;         ///< the prefix whose state the slot holds ("" unknown); under `lock`
    detail::async_mutex lock;  ///< one request at a time
  };
  using slot_file = llama_cpp_slot_files::slot_file;

  explicit llama_cpp_slots(std::shared_ptr<llama_cpp_slot_files> files = std::make_shared<llama_cpp_slot_files>())
      : files_(std::move(files)) {}

  /// The slot count, once known.
  std::optional<std::size_t> count() const {
    std::scoped_lock guard(mutex_);
    return slots_.empty() ? std::nullopt : std::optional<std::size_t>(slots_.size());
  }

  /// Sets the slot count (the first one given stays).
  void set_count(std::size_t count) {
    std::scoped_lock guard(mutex_);
    if (slots_.empty())
      for (std::size_t i = 0; i < count; ++i) slots_.push_back(std::make_unique<slot>());
  }

  /// The slot for `prefix` (see llama_cpp_backend's header comment); the
  /// count must be known. Call release(slot) when done with it.
  std::pair<std::size_t, slot*> choose(const std::string& prefix) {
    std::scoped_lock guard(mutex_);
    const std::size_t none = slots_.size();
    const auto first = [&](auto&& fits) {
      for (std::size_t i = 0; i < slots_.size(); ++i)
        if (fits(*slots_[i])) return i;
      return none;
    };
    const auto least_recent = [&](bool idle_only) {
      std::size_t best = none;
      for (std::size_t i = 0; i < slots_.size(); ++i)
        if ((!idle_only || slots_[i]->users == 0) && (best == none || slots_[i]->used < slots_[best]->used)) best = i;
      return best;
    };
    std::size_t chosen = first([&](const slot& s) { return s.users == 0 && s.prefix == prefix; });
    if (chosen == none) chosen = first([](const slot& s) { return s.prefix.empty(); });
    if (chosen == none) chosen = least_recent(true);
    if (chosen == none) chosen = first([&](const slot& s) { return s.prefix == prefix; });
    if (chosen == none) chosen = least_recent(false);
    auto& picked = *slots_[chosen];
    picked.prefix = prefix;
    picked.used = ++clock_;
    ++picked.users;
    return {chosen, &picked};
  }

  /// A request is done with `s` (chosen by choose()).
  void release(slot& s) {
    std::scoped_lock guard(mutex_);
    --s.users;
  }

  /// The record of slot file `name` (made on first use; never removed).
  slot_file& file(const std::string& name) { return files_->file(name); }

  /// Why the server cannot keep slot files, once it said so ("" until then).
  std::string refusal() const {
    std::scoped_lock guard(mutex_);
    return refusal_;
  }
  void refuse(std::string why) {
    std::scoped_lock guard(mutex_);
    refusal_ = std::move(why);
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<slot>> slots_;
  std::shared_ptr<llama_cpp_slot_files> files_;
  std::uint64_t clock_ = 0;
  std::string refusal_;
};

struct llama_cpp_options {
  std::string name = "llama.cpp";
  std::string base_url = "http://127.0.0.1:8080";  ///< the server's root ("/v1" at its end is taken off)
  std::string api_key = {};                        ///< llama-server --api-key: "Authorization: Bearer <key>"
  std::string model = {};                          ///< when set, replaces the request's model
  std::vector<std::pair<std::string, std::string>> headers = {};  ///< sent with every request
  std::shared_ptr<const price_table> prices = {};  ///< prices responses; none: cost 0
  std::size_t slots = 0;                           ///< the server's slot count (--parallel); 0: ask it
  bool slot_files = true;                          ///< encode, save and restore schemas as slot files
  std::size_t cache_reuse = 0;                     ///< n_cache_reuse sent with PML prompts; 0: the server's own
  std::shared_ptr<prompt_statistics> statistics = {};  ///< slot files saved, restored, fallbacks; may be null
  std::shared_ptr<llama_cpp_slots> shared = {};    ///< shared with the other backends of this server; null: its own
};

namespace detail {

/// The base URL without a trailing "/" or "/v1".
inline std::string llama_cpp_root(std::string url) {
  while (url.ends_with("/")) url.pop_back();
  if (url.ends_with("/v1")) url.resize(url.size() - 3);
  return url;
}

/// The file a schema's encoding is saved in: a name llama-server accepts
/// (letters, digits, '-', '.'), from the schema, its version, the model and
/// the whole schema's messages, so that a changed schema never restores a
/// stale file.
inline std::string llama_cpp_slot_file_name(const prompt_layout& layout, std::string_view model) {
  std::string key = layout.schema;
  const auto add = [&key](std::string_view part) {
    key.push_back('\0');
    key.append(part);
  };
  add(layout.version);
  add(model);
  if (layout.whole_schema)
    for (const auto& message : *layout.whole_schema) {
      add(message.role);
      add(message.content);
    }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(XXH3_64bits(key.data(), key.size())));
  return "llmgate-" + std::string(hex) + ".bin";
}

}  // namespace detail

class llama_cpp_backend {
 public:
  llama_cpp_backend(std::shared_ptr<http_client> client, llama_cpp_options options)
      : options_(std::move(options)),
        shared_(options_.shared ? options_.shared : std::make_shared<llama_cpp_slots>()),
        openai_(client, openai_options{.name = options_.name,
                                       .base_url = detail::llama_cpp_root(options_.base_url) + "/v1",
                                       .api_key = options_.api_key,
                                       .model = options_.model,
                                       .headers = options_.headers,
                                       .prices = options_.prices,
                                       .prompt_cache_key = false}),
        server_(std::move(client), options_.name, detail::llama_cpp_root(options_.base_url), server_headers(options_)) {
    if (options_.slots > 0) shared_->set_count(options_.slots);
  }

  llama_cpp_backend(net::any_io_executor executor, llama_cpp_options options)
      : llama_cpp_backend(std::make_shared<http_client>(std::move(executor)), std::move(options)) {}

  std::string_view name() const noexcept { return options_.name; }

  net::awaitable<chat_response> complete(const chat_request& request) {
    if (!request.layout) co_return co_await openai_.complete(request);
    slot_lease lease = co_await prepare(request);
    chat_response response = co_await openai_.complete(request, lease.hints);
    lease.done(request.layout->prefix_path);
    co_return response;
  }

  net::awaitable<chat_response> stream(const chat_request& request, chunk_handler on_chunk) {
    if (!request.layout) co_return co_await openai_.stream(request, std::move(on_chunk));
    slot_lease lease = co_await prepare(request);
    chat_response response = co_await openai_.stream(request, std::move(on_chunk), lease.hints);
    lease.done(request.layout->prefix_path);
    co_return response;
  }

  net::awaitable<embedding_response> embed(const embedding_request& request) { return openai_.embed(request); }

  /// The ids of the models the server offers (GET /v1/models).
  net::awaitable<std::vector<std::string>> models() { return openai_.models(); }

  /// What this backend shares with the others of its server.
  const std::shared_ptr<llama_cpp_slots>& shared() const noexcept { return shared_; }

 private:
  // A slot held for one request: its lock, and the hints naming it.
  struct slot_lease {
    json_fields hints;
    llama_cpp_slots* shared = nullptr;
    llama_cpp_slots::slot* slot = nullptr;  // chosen (counted in its users) while set
    bool locked = false;
    bool succeeded = false;

    // The request went through: the slot now holds `prefix`'s state.
    void done(const std::string& prefix) {
      if (slot) slot->holds = prefix;
      succeeded = true;
    }

    slot_lease() = default;
    slot_lease(slot_lease&& other) noexcept
        : hints(std::move(other.hints)),
          shared(other.shared),
          slot(std::exchange(other.slot, nullptr)),
          locked(std::exchange(other.locked, false)),
          succeeded(other.succeeded) {}
    slot_lease& operator=(slot_lease&&) = delete;
    ~slot_lease() {
      if (!slot) return;
      if (locked) {
        if (!succeeded) slot->holds.clear();  // it failed midway: what the slot holds is unknown
        shared->release(*slot);
        slot->lock.unlock();
      } else {
        shared->release(*slot);
      }
    }
  };

  static std::vector<std::pair<std::string, std::string>> server_headers(const llama_cpp_options& options) {
    auto headers = options.headers;
    if (!options.api_key.empty()) headers.emplace_back("Authorization", "Bearer " + options.api_key);
    return headers;
  }

  void fallback(std::string why) const {
    if (options_.statistics) options_.statistics->slot_fallback(std::move(why));
  }

  // The slot count: the option, else the server's (asked until it answers).
  net::awaitable<std::optional<std::size_t>> slot_count(std::string& why) {
    if (auto known = shared_->count()) co_return known;
    std::size_t count = 0;
    try {
      count = co_await server_.get("/props", [](const boost::json::value& answer) -> std::size_t {
        const auto* object = answer.if_object();
        const auto* total = object ? object->if_contains("total_slots") : nullptr;
        return total && total->is_int64() && total->get_int64() > 0 ? static_cast<std::size_t>(total->get_int64()) : 0;
      });
    } catch (const backend_error& failure) {
      why = failure.what();
    }
    if (count == 0) {
      try {
        count = co_await server_.get("/slots", [](const boost::json::value& answer) -> std::size_t {
          return answer.is_array() ? answer.get_array().size() : 0;
        });
      } catch (const backend_error& failure) {
        why = failure.what();
      }
    }
    if (count == 0) co_return std::nullopt;
    shared_->set_count(count);
    co_return shared_->count();
  }

  // Chooses and locks the slot for `request`'s prefix and puts its
  // schema's state there when the slot holds something else.
  net::awaitable<slot_lease> prepare(const chat_request& request) {
    const prompt_layout& layout = *request.layout;
    slot_lease lease;
    lease.hints.push_back({"cache_prompt", "true"});
    if (options_.cache_reuse > 0) lease.hints.push_back({"n_cache_reuse", std::to_string(options_.cache_reuse)});
    std::string why;
    const auto count = co_await slot_count(why);
    if (!count) {
      fallback("slot count unknown: " + why);
      co_return lease;
    }
    const auto chosen = shared_->choose(layout.prefix_path);
    const std::size_t index = chosen.first;
    lease.shared = shared_.get();
    lease.slot = chosen.second;
    co_await lease.slot->lock.async_lock(net::use_awaitable);
    lease.locked = true;
    lease.hints.push_back({"id_slot", std::to_string(index)});
    if (options_.slot_files && layout.whole_schema && lease.slot->holds != layout.prefix_path)
      co_await load_schema(request, index, *lease.slot);
    co_return lease;
  }

  // Restores the schema's slot file into the slot, encoding and saving it
  // first when there is none; on failure the prompt falls back to plain
  // prefix caching, counted with its reason.
  net::awaitable<void> load_schema(const chat_request& request, std::size_t index, llama_cpp_slots::slot& slot) {
    const prompt_layout& layout = *request.layout;
    const std::string& model = options_.model.empty() ? request.model : options_.model;
    const std::string name = detail::llama_cpp_slot_file_name(layout, model);
    auto& file = shared_->file(name);
    co_await file.lock.async_lock(net::use_awaitable);
    detail::async_lock_guard file_guard(file.lock);
    if (std::string refused = shared_->refusal(); !refused.empty() || !file.refused.empty()) {
      fallback(refused.empty() ? file.refused : std::move(refused));
      co_return;
    }
    const std::string slot_path = "/slots/" + std::to_string(index);
    std::string failed;
    if (!file.saved) {
      slot.holds.clear();  // encoding replaces whatever the slot held
      try {
        co_await encode(layout, model, index);
        co_await server_.post(slot_path + "?action=save", filename_body(name), ignore);
        file.saved = true;
        slot.holds = layout.prefix_path;
        if (options_.statistics) options_.statistics->slot_saved();
        co_return;
      } catch (const backend_error& failure) {
        failed = "slot file " + name + " not saved: " + failure.what();
        if (failure.status() == 501 || failure.status() == 404 || failure.status() == 405) shared_->refuse(failed);
        else if (!failure.retryable()) file.refused = failed;  // e.g. a template the server cannot apply
      }
      fallback(std::move(failed));
      co_return;
    }
    try {
      co_await server_.post(slot_path + "?action=restore", filename_body(name), ignore);
      slot.holds = layout.prefix_path;
      if (options_.statistics) options_.statistics->slot_restored();
      co_return;
    } catch (const backend_error& failure) {
      failed = "slot file " + name + " not restored: " + failure.what();
    }
    file.saved = false;  // the next prompt of the schema encodes it again
    slot.holds.clear();
    fallback(std::move(failed));
  }

  // The whole schema computed into slot `index`, as the server templates it.
  net::awaitable<void> encode(const prompt_layout& layout, const std::string& model, std::size_t index) {
    chat_request schema;
    schema.model = model;
    schema.messages = *layout.whole_schema;
    std::string prompt = co_await server_.post("/apply-template", chat_request_body(schema),
                                               [](const boost::json::value& answer) {
                                                 constexpr auto code = errc::upstream_protocol_error;
                                                 return detail::string_field(
                                                     detail::as_object(answer, "apply-template", code), "prompt",
                                                     "apply-template", code);
                                               });
    co_await server_.post("/completion", completion_body(std::move(prompt), index), ignore);
  }

  // The bodies are built outside the coroutines: GCC 12 miscompiles a
  // braced list with string literals inside one ("array used as initializer").
  static boost::json::object filename_body(const std::string& name) { return {{"filename", name}}; }
  static boost::json::object completion_body(std::string prompt, std::size_t index) {
    return {{"prompt", std::move(prompt)}, {"n_predict", 0}, {"id_slot", index}, {"cache_prompt", true}};
  }
  static int ignore(const boost::json::value&) { return 0; }

  llama_cpp_options options_;
  std::shared_ptr<llama_cpp_slots> shared_;
  openai_backend openai_;
  detail::upstream server_;  // the server's root: /props, /slots, /apply-template, /completion
};

static_assert(Backend<llama_cpp_backend>);
static_assert(EmbeddingBackend<llama_cpp_backend>);

}  // namespace llmgate::inline v0
