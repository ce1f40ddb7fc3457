// gateway_config: what the gateway serves and how, read from a JSON file
// and validated before anything starts. Every key at every level is one
// the gateway reads, or it is refused with the nearest known key
// ("config: semantic_cache.treshold is not a known key; did you mean
// threshold?"); every value is checked against its range by check(), the
// same code whether --check-config or the gateway's constructor runs it.
// Each message names its field once, by its JSON path:
// "config: semantic_cache.embedder.dimension must be between 1 and 65536, not 0".
//
//   {
//     "listen":   {"address": "127.0.0.1", "port": 8080, "threads": 2},
//     "limits":   {"max_body_bytes": 1048576, "max_concurrent_requests": 256,
//                  "max_queued_requests": 1024, "request_timeout_ms": 120000,
//                  "max_header_bytes": 16384, "max_json_depth": 64,
//                  "max_connections": 10000, "max_connections_per_address": 1000,
//                  "idle_timeout_ms": 60000, "header_timeout_ms": 10000, "body_timeout_ms": 60000,
//                  "max_embedding_inputs": 2048, "max_embedding_input_tokens": 300000},
//     "backends": [{"name": "openai", "kind": "openai", "base_url": "https://api.openai.com/v1",
//                   "api_key_env": "OPENAI_API_KEY", "retries": 2},
//                  {"name": "claude", "kind": "anthropic", "api_key_env": "ANTHROPIC_API_KEY"},
//                  {"name": "local", "kind": "ollama", "base_url": "http://127.0.0.1:11434"},
//                  {"name": "demo", "kind": "demo"}],      // in-process answers, no network
//     "models":   [{"name": "gpt-4o-mini", "backend": ["openai", "demo"],   // a list: fallback order
//                   "upstream_model": "gpt-4o-mini-2024-07-18",          // sent upstream instead of name
//                   "prices": {"input": 0.15, "output": 0.60},            // USD per 1M tokens
//                   "routing": {"accuracy": 0.82, "task_accuracy": {"coding": 0.87}}},
//                  {"name": "llama3.2", "backend": "local"},
//                  {"name": "nomic-embed-text", "backend": "local", "mode": "embedding"}],
//     "router":   {"aliases": ["auto"], "preferences": "balanced",
//                  "registry": "models.json", "examples": "examples.jsonl"},
//     "tenants":  [{"name": "acme", "api_key_env": "ACME_KEY"}, {"name": "dev", "api_key": "sk-dev"}],
//     "admin":    {"api_key_env": "LLMGATE_ADMIN_KEY", "metrics_token": "scraper-token"},  // token: /metrics only
//     "exact_cache":    {"enabled": true, "max_entries": 100000, "max_bytes": 268435456,
//                        "eviction": {"policy": "lru"}, "ttl_seconds": 0},
//     "semantic_cache": {"enabled": true, "max_entries": 100000, "max_bytes": 268435456,
//                        "threshold": {"policy": "static", "value": 0.9},    // or just "threshold": 0.9
//                        "eviction": {"policy": "lru"}, "ttl_seconds": 0,    // 0: answers never expire
//                        "embedder": {"kind": "hashing", "dimension": 384, "model": "llmgate-hashing"},
//                        // or {"kind": "openai", "base_url": "http://127.0.0.1:8081/v1",
//                        //     "model": "nomic-embed-text", "dimension": 768, "api_key_env": "EMBED_KEY"}
//                        "hnsw": {"m": 32, "ef_construction": 200, "ef_search": 12},
//                        "verifier": "default"},   // or "none", or a weights file
//     "snapshot": {"directory": "/var/lib/llmgate"},   // caches saved on shutdown, loaded on start
//     "shared":   {"redis": {"endpoints": ["127.0.0.1:6379"],          // several seeds for a cluster
//                            "user": "llmgate", "password_env": "LLMGATE_REDIS_PASSWORD",  // or "password"
//                            "database": 0, "tls": {"ca_file": "ca.pem", "cert_file": "", "key_file": "",
//                                                   "server_name": "", "verify": true},
//                            "connect_timeout_ms": 1000, "command_timeout_ms": 1000, "connections": 2},
//                  "prefix": "llmgate", "replica": "gw-1", "exact": true, "semantic": true,
//                  "read_timeout_ms": 20, "max_queued_writes": 10000, "snapshot_interval_s": 60},
//     "prompt_schemas": ["prompts/support.xml"],      // PML schemas that requests may import
//     "prompt_sources": {"admin_directory": "prompts/shared", "max_bytes": 1048576},
//     "log":      {"requests": true}
//   }
//
// Valid values (check() holds them; a key left out takes the value above):
//   listen.address an IPv4 or IPv6 address; port 0 to 65535 (0: the system
//   picks); threads 1 to 1024. limits.max_body_bytes 1 to 1073741824;
//   max_concurrent_requests 1 to 1000000; max_queued_requests 0 to 1000000;
//   request_timeout_ms 1 to 86400000; max_header_bytes 1024 to 1048576;
//   max_json_depth 1 to 1024; max_connections and max_connections_per_address
//   1 to 10000000; idle_timeout_ms, header_timeout_ms and body_timeout_ms 1
//   to 86400000; max_embedding_inputs 1 to 1000000; max_embedding_input_tokens
//   1 to 1000000000. backends[].name non-empty and unique;
//   base_url http:// or https:// with a host; retries 0 to 10; anthropic's
//   max_tokens 1 to 1000000. models[].name non-empty and unique, every
//   backend named exists. prices 0 to 1000000. tenants: names and keys
//   non-empty and unique, none the admin key, nor the metrics token.
//   exact_cache.max_entries and
//   semantic_cache.max_entries 1 to 1000000000; exact_cache.max_bytes and
//   semantic_cache.max_bytes 1 to 2^40; ttl_seconds 0 to 1000000000. threshold value in (0, 1],
//   error_bound in (0, 1), min_feedback 1 to 1000000. embedder.dimension 1
//   to 65536. hnsw.m 2 to 128, ef_construction and ef_search 1 to 4096.
//   snapshot.directory a directory (created at the first save when absent).
//   prompt_schemas[] non-empty paths of PML schema files, each read and
//   validated at start (server/prompt_schemas.hpp). prompt_sources.max_bytes
//   1 to 1073741824. shared.redis.endpoints
//   one or more "host:port"; database 0 to 15 (a cluster has only 0);
//   connect_timeout_ms and command_timeout_ms 1 to 600000; connections 1
//   to 64; shared.prefix non-empty, without '{' or '}'; read_timeout_ms 1
//   to 10000; max_queued_writes 1 to 10000000; snapshot_interval_s 0 (never)
//   to 86400.
//
// shared: the cache tier that several gateway processes share through
// Redis or Redis Cluster (server/shared_tier.hpp; llmgate/redis/). A
// gateway built without it (a program that gives no gateway_parts::shared)
// refuses a config that has it. "replica" names this process in what it
// writes (default: host name and process id); "exact" keeps exact answers
// in Redis, "semantic" copies each semantic cache change to the others.
//
// backends: kind "openai" is any OpenAI-compatible server (base_url
// required), "anthropic" the Messages API (optional "version",
// "max_tokens"), "ollama" Ollama's native API, "demo" canned offline
// answers, "llama.cpp" llama-server (base_url its root; optional "slots",
// "slot_files", "cache_reuse"; OpenAI-compatible, plus slots and slot
// files for PML prompts); a program registers more kinds in C++ (backend_registry.hpp),
// whose fields it reads from `options`, the entry as written.
//
// models: what clients may ask for (404 otherwise). Each names its backend,
// or a list of backends tried in order. "mode": "embedding" makes it an
// embedding model, served on /v1/embeddings by its backends (the built-in
// embedder's model is served there too); chat models are the default. "routing" holds the fields of a
// model_registry card (route/model_registry.hpp) for the router; a model's
// "prices" stand for its card's input and output cost where the card
// gives none. The older form, "models": ["name", ...] served by every
// backend (in "fallback_order" where given), and a top-level "prices" table
// ({"model": {"input", "output"}}) are still read.
//
// router: when present, a request for model "auto" (or one of "aliases")
// is routed: the task analyser reads it, the preferences weigh the models'
// ratings (a profile or "quality=weight,...", see route/preferences.hpp;
// a request overrides them with the header x-llmgate-preferences or its
// field "llmgate_preferences"), and the chosen model's backends answer.
// The registry is built from the models' "routing" fields, or read from
// "registry" (a model_registry file whose models must all be listed in
// "models"); "examples" is a JSON-lines file of labelled requests for the
// local analyser: {"text", "task_type", "domain", "complexity",
// "outcomes": {"model": score}}, every field but text optional.
//
// semantic_cache: threshold "static" serves neighbours at or above
// "value"; "adaptive" learns the threshold from /v1/feedback so that at
// most "error_bound" of served hits are wrong (starting from "value" when
// given). eviction "lru", "lfu" or "cost_aware" chooses who leaves a full
// cache; "ttl_seconds" (> 0) expires answers that old. "min_feedback"
// (adaptive) is how many verdicts come in before the learned threshold
// replaces the start. embedder "hashing" is built in; "openai" is any
// OpenAI-compatible /embeddings endpoint at "base_url" (llama.cpp's
// server, Ollama's /v1, vLLM, OpenAI), with its "model" and "dimension"
// (both required) and an optional "api_key_env"; the gateway asks it for
// one embedding at start and does not start when it gets none.
// "capacity" is another name for max_entries. verifier (cache/learned_verifier.hpp)
// says whether a near neighbour's answer serves the request: "default"
// decides on the similarity and the lexical guard, as the threshold
// alone did, and learns from each tenant's /v1/feedback for that tenant
// only; "none" is the same without learning; any other value is a
// weights file (written by examples/train_verifier on the user's own
// labelled pairs, relative to the working directory), whose model decides
// from features of the two texts and learns from feedback as "default"
// does; the threshold then applies to its probability.
//
// Older spellings still read: "models" as a list of names served by every
// backend (in "fallback_order" where given), a top-level "prices" table
// ({"model": {"input", "output"}}), a top-level "embedder" (for
// semantic_cache.embedder), "capacity" (for max_entries), "threshold": 0.9
// (the static policy's value), "eviction": "lfu" (for {"policy": "lfu"}),
// and "ttl_seconds" inside "eviction". A backend of a kind registered in
// C++ may carry keys of its own kind; every other entry only known keys.
//
// semantic_cache.hnsw trades near-duplicates found for CPU: lower
// ef_construction makes each miss's insert cheaper, lower ef_search each
// lookup, and both find fewer of the stored near-duplicates on hard data
// (bench/cache_bench.cpp measures it). A loaded snapshot keeps its graph's
// m and ef_construction and takes ef_search from here.
//
// prompt_schemas: PML schema files (<schema name version>...), read at
// start, relative to the working directory as router.registry is; a
// module's src= inside a schema is relative to the schema's own file. A
// request imports their modules with a <prompt> (server/prompt_input.hpp);
// POST /admin/prompt_schemas adds more while the gateway runs. A module's
// src= names a file inside its schema file's directory, or, for a POSTed
// schema, inside prompt_sources.admin_directory (without it, POSTed schemas
// may not use src); never outside it, and at most prompt_sources.max_bytes
// (prompt/schema_sources.hpp).
//
// limits: a request's headers over max_header_bytes get 431; JSON nested
// deeper than max_json_depth gets 400; past max_connections open
// connections, or max_connections_per_address from one client address, a
// new connection gets 503 and is closed. A connection waits idle_timeout_ms
// for the first byte of a request, then header_timeout_ms for its headers,
// then body_timeout_ms for its body (server/session.hpp). /v1/embeddings
// takes at most max_embedding_inputs inputs and max_embedding_input_tokens
// tokens (estimated, as the cache estimates them) in one request.
//
// Secrets are read from the environment variables the file names
// (api_key_env), so the file itself can be shared; a literal api_key is
// accepted for tenants in development. Keys are never logged.
#pragma once

#include <algorithm>     // std::find, std::find_if, std::min
#include <array>         // std::array
#include <cctype>        // std::tolower, std::isspace, std::iscntrl
#include <charconv>      // std::to_chars (numbers in messages)
#include <cmath>         // std::floor, std::abs
#include <cstdint>       // std::uint64_t
#include <cstdlib>       // std::getenv
#include <filesystem>    // std::filesystem::path, is_directory
#include <fstream>       // std::ifstream
#include <initializer_list>  // std::initializer_list (known keys)
#include <iterator>      // std::istreambuf_iterator
#include <memory>        // std::shared_ptr
#include <numeric>       // std::iota (edit distance)
#include <optional>      // std::optional
#include <span>          // std::span
#include <stdexcept>     // std::invalid_argument (from preferences::parse, model_registry)
#include <string>        // std::string
#include <string_view>   // std::string_view
#include <type_traits>   // std::is_integral_v
#include <utility>       // std::pair
#include <vector>        // std::vector

#include <boost/asio/ip/address.hpp>  // boost::asio::ip::make_address (listen.address is checked)
#include <boost/json/parse.hpp>       // boost::json::parse
#include <boost/json/serialize.hpp>   // boost::json::serialize (a model's card for the registry check)
#include <boost/json/value.hpp>       // boost::json::value

#include "llmgate/backend/price_table.hpp"         // price_table, model_price
#include "llmgate/cache/configured_threshold.hpp"  // threshold_kind_named (the policy names)
#include "llmgate/cache/eviction/configured.hpp"   // eviction_kind_named (the policy names)
#include "llmgate/cache/semantic_cache.hpp"        // semantic_cache_options (the hnsw defaults)
#include "llmgate/error.hpp"                       // llmgate::error, errc
#include "llmgate/route/model_registry.hpp"        // model_registry (routing cards are checked by it)
#include "llmgate/route/preferences.hpp"           // preferences::parse (router.preferences is checked)

namespace llmgate::inline v0 {

/// A mistake in a gateway config. what() is the message alone, "config:
/// listen.port must be between 0 and 65535, not 70000": an llmgate::error
/// would append its errc's text, which says nothing more here.
class config_error : public error {
 public:
  explicit config_error(const std::string& message, errc code = errc::invalid_request)
      : error(code, message), message_(message) {}
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string message_;
};

/// The backend kinds the gateway builds without help (backend_registry.hpp).
inline constexpr std::array<std::string_view, 5> builtin_backend_kinds = {"openai", "anthropic", "ollama", "llama.cpp", "demo"};

struct backend_config {
  std::string name;
  std::string kind = "openai";  ///< openai | anthropic | ollama | llama.cpp | demo | a kind registered in C++
  std::string base_url = {};    ///< openai: required; anthropic, ollama: their usual address when empty
  std::string api_key = {};     ///< from api_key_env; never logged
  std::string model = {};       ///< when set, replaces the model of every request sent (a model's upstream_model wins)
  unsigned retries = 2;         ///< retries after the first try (429, 5xx, network)
  boost::json::object options = {};  ///< the entry as written: fields of a kind's own
};

/// What a model answers: chat completions, or embeddings (/v1/embeddings).
enum class model_mode { chat, embedding };

struct model_config {
  std::string name;                   ///< what clients ask for
  std::vector<std::string> backends;  ///< names from gateway_config::backends, in fallback order
  model_mode mode = model_mode::chat;  ///< "mode": "chat" (the default) or "embedding"
  std::string upstream_model = {};    ///< sent upstream instead of `name`; empty: `name` (or the backend's model)
  boost::json::object routing = {};   ///< model_registry card fields (name left out); empty: none
};

struct router_config {
  std::vector<std::string> aliases = {"auto"};        ///< models that ask the router to choose
  std::string preferences = "balanced";               ///< preferences::parse form
  std::optional<std::filesystem::path> registry = {};  ///< a model_registry file instead of the models' routing
  std::optional<std::filesystem::path> examples = {};  ///< labelled requests for the local analyser (JSON lines)
};

/// Who leaves a full cache, and how long an answer may be served.
struct eviction_config {
  std::string policy = "lru";  ///< lru | lfu | cost_aware
  double ttl_seconds = 0;      ///< > 0: answers older than this are not served
};

struct threshold_config {
  std::string policy = "static";  ///< static | adaptive
  double value = 0.9;             ///< static: the threshold; adaptive: where it starts (when given)
  bool value_given = false;       ///< adaptive starts at its own default unless a value is given
  double error_bound = 0.05;      ///< adaptive: the share of served hits allowed to be wrong
  std::uint64_t min_feedback = 30;  ///< adaptive: verdicts heard before the learned threshold is used
};

struct embedder_config {
  std::string kind = "hashing";  ///< hashing (built in) | openai (an OpenAI-compatible /embeddings)
  std::string base_url = {};     ///< openai: the server's /v1 base (POST {base_url}/embeddings)
  std::string api_key = {};      ///< openai: from api_key_env
  std::string model = "llmgate-hashing";  ///< the name /v1/embeddings serves; openai: the upstream's model
  std::uint64_t dimension = 384;  ///< floats per vector; openai: the model's, which must be given
};

/// The "shared" section: the Redis (or Redis Cluster) the replicas share.
struct shared_redis_config {
  std::vector<std::string> endpoints = {"127.0.0.1:6379"};  ///< "host:port", seeds of a cluster
  std::string user = {};      ///< an ACL user; "" : the default user
  std::string password = {};  ///< from password_env or password; "" : no AUTH; never logged
  unsigned database = 0;
  bool tls = false;           ///< set by a "tls" object
  std::string tls_ca_file = {}, tls_cert_file = {}, tls_key_file = {}, tls_server_name = {};
  bool tls_verify = true;
  unsigned connect_timeout_ms = 1000;
  unsigned command_timeout_ms = 1000;  ///< the background work's commands (writes, stream reads)
  unsigned connections = 2;            ///< per Redis node
};

struct shared_config {
  shared_redis_config redis = {};
  std::string prefix = "llmgate";  ///< of every key the tier writes
  std::string replica = {};        ///< "" : host name and process id
  bool exact = true;
  bool semantic = true;
  unsigned read_timeout_ms = 20;   ///< the longest a request waits for the exact tier's answer
  std::uint64_t max_queued_writes = 10'000;
  unsigned snapshot_interval_s = 60;
};

struct tenant_config {
  std::string name;
  std::string api_key;  ///< from api_key_env or api_key; never logged
};

struct gateway_config {
  std::string address = "127.0.0.1";
  unsigned short port = 8080;  ///< 0: a free port the system picks
  unsigned threads = 2;

  std::uint64_t max_body_bytes = 1 << 20;
  std::uint64_t max_concurrent_requests = 256;
  std::uint64_t max_queued_requests = 1024;
  std::uint64_t request_timeout_ms = 120'000;
  std::uint64_t max_header_bytes = 16 * 1024;
  std::uint64_t max_json_depth = 64;  ///< deep enough for real tool schemas
  std::uint64_t max_connections = 10'000;
  std::uint64_t max_connections_per_address = 1'000;
  std::uint64_t idle_timeout_ms = 60'000;
  std::uint64_t header_timeout_ms = 10'000;
  std::uint64_t body_timeout_ms = 60'000;
  std::uint64_t max_embedding_inputs = 2'048;  ///< as OpenAI's /v1/embeddings
  std::uint64_t max_embedding_input_tokens = 300'000;

  std::vector<backend_config> backends;  ///< by name; models say which they use
  std::vector<model_config> models;
  std::optional<router_config> router = {};
  std::shared_ptr<const price_table> prices = std::make_shared<price_table>();  ///< by model name
  std::vector<tenant_config> tenants;
  std::string admin_key = {};  ///< "" : the admin views are off
  std::string metrics_token = {};  ///< opens /metrics (as the admin key does) and nothing else; "" : none

  bool exact_cache = true;
  std::uint64_t exact_max_entries = 100'000;
  std::uint64_t exact_max_bytes = std::uint64_t{256} << 20;
  eviction_config exact_eviction = {};
  bool semantic_cache = true;
  std::uint64_t semantic_max_entries = 100'000;
  std::uint64_t semantic_max_bytes = std::uint64_t{256} << 20;  ///< stored requests, answers and vectors
  double semantic_threshold = 0.9;  ///< the static threshold (threshold_config::value, kept in step)
  threshold_config semantic_threshold_policy = {};
  eviction_config semantic_eviction = {};
  hnsw_parameters semantic_hnsw = default_index_factory{}.parameters;
  embedder_config embedder = {};
  std::string semantic_verifier = "default";  ///< "default", "none" or a weights file

  std::optional<std::filesystem::path> snapshot_directory = {};
  std::optional<shared_config> shared = {};  ///< the tier shared with other replicas, when configured
  std::vector<std::filesystem::path> prompt_schemas = {};  ///< PML schema files, read at start
  std::optional<std::filesystem::path> prompt_admin_directory = {};  ///< src= of POSTed schemas; none: no src
  std::uint64_t prompt_source_max_bytes = std::uint64_t{1} << 20;    ///< the largest src= file
  bool log_requests = true;

  /// Reads the JSON form above and check()s it. Throws config_error
  /// naming the field and what is wrong with it. `kinds`: the backend
  /// kinds that exist (those registered in C++ too).
  static gateway_config from_json(const boost::json::value& value,
                                  std::span<const std::string_view> kinds = builtin_backend_kinds);

  /// from_json of a file; a file that cannot be read or is not JSON is
  /// refused naming the file.
  static gateway_config load(const std::filesystem::path& path,
                             std::span<const std::string_view> kinds = builtin_backend_kinds) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw config_error("config: cannot read '" + path.string() + "'", errc::io_failure);
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    std::error_code ec;
    const boost::json::value value = boost::json::parse(text, ec);
    if (ec) throw config_error("config: '" + path.string() + "' is not JSON: " + ec.message());
    return from_json(value, kinds);
  }

  /// Every value against its range (the list atop this file) and the
  /// sections against each other: every model has backends that exist,
  /// names and keys are unique, a router has models to route over. The
  /// one check of a config, whether read from JSON (from_json calls it,
  /// so --check-config runs it) or built in C++ (the gateway calls it
  /// before it starts). Throws config_error naming the field by its JSON
  /// path. `kinds`: the backend kinds that exist.
  void check(std::span<const std::string_view> kinds = builtin_backend_kinds) const;

  /// The model called `name`, or nullptr.
  const model_config* find_model(std::string_view name) const {
    const auto found = std::find_if(models.begin(), models.end(), [&](const auto& m) { return m.name == name; });
    return found == models.end() ? nullptr : &*found;
  }
  const backend_config* find_backend(std::string_view name) const {
    const auto found = std::find_if(backends.begin(), backends.end(), [&](const auto& b) { return b.name == name; });
    return found == backends.end() ? nullptr : &*found;
  }
};

namespace detail {

// "where.key", or "key" at the top level.
inline std::string config_path(std::string_view where, std::string_view key) {
  return where.empty() ? std::string(key) : std::string(where) + "." + std::string(key);
}

// Every config mistake goes through here: "config: <path> <what>".
[[noreturn]] inline void refuse(std::string_view path, std::string_view what) {
  throw config_error("config: " + std::string(path) + " " + std::string(what));
}

// A number as a message shows it: integers in full, others as short as
// they read back (0.9, not 0.90000000000000002).
template <class Number>
std::string number_text(Number value) {
  if constexpr (std::is_integral_v<Number>) {
    return std::to_string(value);
  } else {
    const double x = static_cast<double>(value);
    if (x == std::floor(x) && std::abs(x) < 1e15) return std::to_string(static_cast<long long>(x));
    char text[64];
    const auto end = std::to_chars(text, text + sizeof text, x, std::chars_format::fixed).ptr;
    return std::string(text, end);
  }
}

// Refuses `value` outside [low, high] at `path`.
template <class Number>
void within(std::string_view path, Number value, Number low, Number high) {
  if (!(value >= low && value <= high))
    refuse(path, "must be between " + number_text(low) + " and " + number_text(high) + ", not " + number_text(value));
}

// Refuses a fraction outside (0, 1], or (0, 1) when 1 is not allowed.
inline void fraction(std::string_view path, double value, bool one_allowed) {
  if (!(value > 0 && (value < 1 || (one_allowed && value == 1))))
    refuse(path, std::string("must be greater than 0 and ") + (one_allowed ? "at most 1" : "less than 1") + ", not " +
                     number_text(value));
}

// The edits (insert, delete or change a character, swap two neighbours)
// that turn `a` into `b`, case aside: how far a misspelt key is from a
// known one.
inline std::size_t edit_distance(std::string_view a, std::string_view b) {
  const auto same = [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
  };
  std::vector<std::size_t> two_back(b.size() + 1), back(b.size() + 1), row(b.size() + 1);
  std::iota(back.begin(), back.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      row[j] = std::min({back[j] + 1, row[j - 1] + 1, back[j - 1] + (same(a[i - 1], b[j - 1]) ? 0 : 1)});
      if (i > 1 && j > 1 && same(a[i - 1], b[j - 2]) && same(a[i - 2], b[j - 1]))
        row[j] = std::min(row[j], two_back[j - 2] + 1);
    }
    two_back.swap(back);
    back.swap(row);
  }
  return back[b.size()];
}

// The known name nearest `name`, when it is near enough to be what was
// meant: at most a third of the longer name's characters away (one at least).
inline std::optional<std::string_view> nearest_name(std::string_view name, std::span<const std::string_view> known) {
  std::optional<std::string_view> best;
  std::size_t best_distance = 0;
  for (const auto candidate : known) {
    const auto d = edit_distance(name, candidate);
    if (d > std::max<std::size_t>(1, std::max(name.size(), candidate.size()) / 3)) continue;
    if (!best || d < best_distance) {
      best = candidate;
      best_distance = d;
    }
  }
  return best;
}

// Refuses the first key of `section` that is not `known`: with the nearest
// known key when one is near, else with the list. `whose` qualifies the
// section in the message (" of a demo backend").
inline void only_known_keys(const boost::json::object& section, std::string_view where,
                            std::span<const std::string_view> known, std::string_view whose = "") {
  for (const auto& field : section) {
    const std::string_view key = field.key();
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    const std::string what = "is not a known key" + std::string(whose);
    if (const auto near = nearest_name(key, known)) refuse(config_path(where, key), what + "; did you mean " + std::string(*near) + "?");
    std::string list;
    for (const auto k : known) list += (list.empty() ? "" : ", ") + std::string(k);
    refuse(config_path(where, key), what + " (known: " + list + ")");
  }
}
inline void only_known_keys(const boost::json::object& section, std::string_view where,
                            std::initializer_list<std::string_view> known, std::string_view whose = "") {
  only_known_keys(section, where, std::span<const std::string_view>(known.begin(), known.size()), whose);
}

// http:// or https:// and a host.
inline bool http_url(std::string_view url) {
  for (const std::string_view scheme : {"http://", "https://"})
    if (url.starts_with(scheme))
      return url.size() > scheme.size() && url[scheme.size()] != '/' &&
             std::none_of(url.begin(), url.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); });
  return false;
}
inline void check_url(std::string_view path, std::string_view url) {
  if (!http_url(url))
    refuse(path, "must be an http:// or https:// URL with a host" + (url.empty() ? std::string() : ", not \"" + std::string(url) + "\""));
}

// The ranges of the fields narrower than their JSON reading: the reader
// checks them before narrowing, check() for a config built in C++.
inline constexpr unsigned max_threads = 1024;
inline constexpr unsigned max_retries = 10;

/// "host:port" (an IPv6 host in brackets: "[::1]:6379") split in two, or
/// nothing when it is not of that form.
inline std::optional<std::pair<std::string, std::uint16_t>> host_and_port(std::string_view text) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  std::string_view host = text.substr(0, colon);
  if (host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') return std::nullopt;
    host = host.substr(1, host.size() - 2);
  }
  unsigned port = 0;
  const std::string_view digits = text.substr(colon + 1);
  const auto [end, problem] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
  if (problem != std::errc{} || end != digits.data() + digits.size() || port == 0 || port > 65535) return std::nullopt;
  return std::pair<std::string, std::uint16_t>(std::string(host), static_cast<std::uint16_t>(port));
}

// Reading one section's fields by type; each refusal names "<where>.<key>".
// Ranges are check()'s.
struct config_reader {
  static const boost::json::object& object_at(const boost::json::value& value, std::string_view path) {
    if (const auto* object = value.if_object()) return *object;
    refuse(path, "must be an object");
  }
  static const boost::json::object* object(const boost::json::object& o, std::string_view key, std::string_view where) {
    const auto* field = o.if_contains(key);
    if (!field || field->is_null()) return nullptr;
    return &object_at(*field, config_path(where, key));
  }
  static const boost::json::array* array(const boost::json::object& o, std::string_view key, std::string_view where) {
    const auto* field = o.if_contains(key);
    if (!field || field->is_null()) return nullptr;
    if (const auto* inner = field->if_array()) return inner;
    refuse(config_path(where, key), "must be an array");
  }
  static std::string string(const boost::json::object& o, std::string_view key, std::string_view where,
                            std::string fallback = {}) {
    const auto* field = o.if_contains(key);
    if (!field || field->is_null()) return fallback;
    const auto* text = field->if_string();
    if (!text) refuse(config_path(where, key), "must be a string");
    return text->empty() ? fallback : std::string(*text);
  }
  // A non-negative integer (12.0 is taken too).
  static std::uint64_t count(const boost::json::object& o, std::string_view key, std::string_view where,
                             std::uint64_t fallback) {
    const auto* field = o.if_contains(key);
    if (!field || field->is_null()) return fallback;
    if (const auto* u = field->if_uint64()) return *u;
    if (const auto* i = field->if_int64(); i && *i >= 0) return static_cast<std::uint64_t>(*i);
    if (const auto* d = field->if_double();
        d && *d >= 0 && *d <= 9e15 && *d == static_cast<double>(static_cast<std::uint64_t>(*d)))
      return static_cast<std::uint64_t>(*d);
    refuse(config_path(where, key), "must be a non-negative integer");
  }
  // A count for a narrower type: its range is checked before it is narrowed.
  template <class Narrow>
  static Narrow narrow_count(const boost::json::object& o, std::string_view key, std::string_view where,
                             Narrow fallback, Narrow low, Narrow high) {
    const auto value = count(o, key, where, fallback);
    within<std::uint64_t>(config_path(where, key), value, low, high);
    return static_cast<Narrow>(value);
  }
  static bool flag(const boost::json::object& o, std::string_view key, std::string_view where, bool fallback) {
    const auto* field = o.if_contains(key);
    if (!field || field->is_null()) return fallback;
    if (!field->is_bool()) refuse(config_path(where, key), "must be true or false");
    return field->get_bool();
  }
  static double number(const boost::json::object& o, std::string_view key, std::string_view where, double fallback) {
    const auto* field = o.if_contains(key);
    if (!field || field->is_null()) return fallback;
    if (!field->is_number()) refuse(config_path(where, key), "must be a number");
    return field->to_number<double>();
  }
  // A string, or an array of strings (one string reads as a list of one).
  static std::vector<std::string> strings(const boost::json::object& o, std::string_view key, std::string_view where) {
    const auto* field = o.if_contains(key);
    const std::string path = config_path(where, key);
    std::vector<std::string> out;
    if (!field || field->is_null()) return out;
    if (const auto* one = field->if_string()) {
      out.emplace_back(*one);
      return out;
    }
    const auto* many = field->if_array();
    if (!many) refuse(path, "must be a string or a list of strings");
    for (std::size_t i = 0; i < many->size(); ++i) {
      if (!(*many)[i].is_string()) refuse(path + "[" + std::to_string(i) + "]", "must be a string");
      out.emplace_back((*many)[i].get_string());
    }
    return out;
  }
  // api_key, or the variable api_key_env names (which must be set).
  static std::string secret(const boost::json::object& o, std::string_view where, bool literal_allowed) {
    const std::string variable = string(o, "api_key_env", where);
    if (!variable.empty()) {
      const char* value = std::getenv(variable.c_str());
      if (!value || !*value) refuse(config_path(where, "api_key_env"), "names " + variable + ", which is not set");
      return value;
    }
    const std::string literal = string(o, "api_key", where);
    if (!literal.empty() && !literal_allowed) refuse(config_path(where, "api_key"), "is not allowed here; use api_key_env");
    return literal;
  }
  // "eviction": {"policy", "ttl_seconds"} or "eviction": "lfu", and the
  // section's "ttl_seconds" (which wins).
  static eviction_config eviction(const boost::json::object& section, std::string_view where) {
    eviction_config e;
    const std::string path = config_path(where, "eviction");
    const auto* field = section.if_contains("eviction");
    if (field && field->is_string()) {
      e.policy = field->get_string();
    } else if (field && !field->is_null() && !field->is_object()) {
      refuse(path, "must be a policy's name or {\"policy\", \"ttl_seconds\"}");
    } else if (const auto* spelled_out = object(section, "eviction", where)) {
      only_known_keys(*spelled_out, path, {"policy", "ttl_seconds"});
      e.policy = string(*spelled_out, "policy", path, e.policy);
      e.ttl_seconds = number(*spelled_out, "ttl_seconds", path, e.ttl_seconds);
      if (!section.contains("ttl_seconds")) check_ttl(config_path(path, "ttl_seconds"), e.ttl_seconds);
    }
    e.ttl_seconds = number(section, "ttl_seconds", where, e.ttl_seconds);
    return e;
  }
  static void check_ttl(std::string_view path, double ttl_seconds) { within(path, ttl_seconds, 0.0, 1e9); }
};

// The "backends" list of a gateway's config (or an evaluation's), at `where`.
inline std::vector<backend_config> read_backends(const boost::json::array& backends, std::string_view where_list,
                                                 std::span<const std::string_view> kinds) {
  using read = config_reader;
  std::vector<backend_config> out;
  for (std::size_t i = 0; i < backends.size(); ++i) {
    const std::string where = std::string(where_list) + "[" + std::to_string(i) + "]";
    const auto& entry = read::object_at(backends[i], where);
    backend_config backend;
    backend.name = read::string(entry, "name", where);
    if (backend.name.empty()) refuse(where + ".name", "must be a non-empty string");
    backend.kind = read::string(entry, "kind", where, backend.kind);
    if (std::find(kinds.begin(), kinds.end(), backend.kind) == kinds.end()) {
      std::string list;
      for (const auto k : kinds) list += (list.empty() ? "\"" : ", \"") + std::string(k) + "\"";
      refuse(where + ".kind", "must be one of " + list + " (not \"" + backend.kind + "\")");
    }
    if (backend.kind == "demo") {
      only_known_keys(entry, where, {"name", "kind"}, " of a demo backend");
    } else if (backend.kind == "anthropic") {
      only_known_keys(entry, where, {"name", "kind", "base_url", "api_key_env", "api_key", "model", "retries",
                                     "version", "max_tokens"});
      (void)read::string(entry, "version", where);
      (void)read::count(entry, "max_tokens", where, 0);
    } else if (backend.kind == "openai" || backend.kind == "ollama") {
      only_known_keys(entry, where, {"name", "kind", "base_url", "api_key_env", "api_key", "model", "retries"},
                      " of an " + backend.kind + " backend");
    }  // a kind registered in C++ reads its own keys from `options`
    backend.base_url = read::string(entry, "base_url", where);
    backend.api_key = read::secret(entry, where, false);
    backend.model = read::string(entry, "model", where);
    backend.retries = read::narrow_count<unsigned>(entry, "retries", where, backend.retries, 0, max_retries);
    for (const auto& other : out)
      if (other.name == backend.name) refuse(where + ".name", "repeats \"" + backend.name + "\"");
    backend.options = entry;
    out.push_back(std::move(backend));
  }
  return out;
}

// The checks of an embedder, at the path it was read from (the older
// top-level "embedder" too) and at semantic_cache.embedder by check().
inline void check_embedder(const embedder_config& e, std::string_view where) {
  if (e.kind != "hashing" && e.kind != "openai")
    refuse(config_path(where, "kind"), "must be one of \"hashing\", \"openai\" (not \"" + e.kind + "\")");
  within<std::uint64_t>(config_path(where, "dimension"), e.dimension, 1, 65536);
  if (e.model.empty()) refuse(config_path(where, "model"), "must name the embedding model");
  if (e.kind == "openai") check_url(config_path(where, "base_url"), e.base_url);
}

// An eviction policy's checks; `where` is the cache section.
inline void check_eviction(const eviction_config& e, std::string_view where) {
  if (!eviction_kind_named(e.policy))
    refuse(config_path(where, "eviction.policy"), "must be one of \"lru\", \"lfu\", \"cost_aware\" (not \"" + e.policy + "\")");
  config_reader::check_ttl(config_path(where, "ttl_seconds"), e.ttl_seconds);
}

// A model's "prices" or an entry of the top-level table: USD per million
// tokens, input and output required, the cache's prices the input's when
// not given.
inline model_price read_price(const boost::json::value& value, std::string_view where) {
  using read = config_reader;
  const auto& fields = read::object_at(value, where);
  only_known_keys(fields, where, {"input", "output", "cached_input", "cache_write"});
  for (const std::string_view required : {"input", "output"})
    if (!fields.contains(required)) refuse(config_path(where, required), "must be given (USD per million tokens)");
  model_price price;
  price.input = read::number(fields, "input", where, 0);
  price.output = read::number(fields, "output", where, 0);
  price.cached_input = read::number(fields, "cached_input", where, price.input);
  price.cache_write = read::number(fields, "cache_write", where, price.input);
  return price;
}
inline void check_price(const model_price& price, std::string_view where) {
  within(config_path(where, "input"), price.input, 0.0, 1e6);
  within(config_path(where, "output"), price.output, 0.0, 1e6);
  within(config_path(where, "cached_input"), price.cached_input, 0.0, 1e6);
  within(config_path(where, "cache_write"), price.cache_write, 0.0, 1e6);
}

// The fields of a model_registry card (route/model_registry.hpp) a
// model's "routing" may hold; its name is the model's.
inline constexpr std::array<std::string_view, 18> routing_keys = {
    "accuracy", "task_accuracy", "task_samples", "domain_accuracy", "domain_samples", "latency_ms",
    "input_cost_per_million", "output_cost_per_million", "helpfulness", "harmlessness", "honesty",
    "steerability", "creativity", "uptime", "context_length", "task_types", "domains", "generalist"};

// The checks of a model's routing fields: a one-card registry built from
// them (model_registry names the field that is wrong, after its own
// prefixes, which are left out).
inline void check_routing(const model_config& model, const std::string& where) {
  if (model.routing.empty()) return;
  boost::json::object card = model.routing;
  card["name"] = model.name;
  try {
    (void)model_registry::from_json(boost::json::serialize(boost::json::object{{"models", boost::json::array{card}}}),
                                    "routing");
  } catch (const std::invalid_argument& e) {
    const std::string_view text = e.what();
    const auto cause = text.rfind(": ");
    refuse(config_path(where, "routing") + ":", cause == std::string_view::npos ? text : text.substr(cause + 2));
  }
}

}  // namespace detail

inline void gateway_config::check(std::span<const std::string_view> kinds) const {
  using detail::refuse;
  using detail::within;
  using count = std::uint64_t;
  boost::system::error_code bad_address;
  (void)boost::asio::ip::make_address(address, bad_address);
  if (bad_address) refuse("listen.address", "must be an IPv4 or IPv6 address, not \"" + address + "\"");
  within<unsigned>("listen.threads", threads, 1, detail::max_threads);
  within<count>("limits.max_body_bytes", max_body_bytes, 1, count{1} << 30);
  within<count>("limits.max_concurrent_requests", max_concurrent_requests, 1, 1'000'000);
  within<count>("limits.max_queued_requests", max_queued_requests, 0, 1'000'000);
  within<count>("limits.request_timeout_ms", request_timeout_ms, 1, 86'400'000);
  within<count>("limits.max_header_bytes", max_header_bytes, 1024, 1 << 20);
  within<count>("limits.max_json_depth", max_json_depth, 1, 1024);
  within<count>("limits.max_connections", max_connections, 1, 10'000'000);
  within<count>("limits.max_connections_per_address", max_connections_per_address, 1, 10'000'000);
  within<count>("limits.idle_timeout_ms", idle_timeout_ms, 1, 86'400'000);
  within<count>("limits.header_timeout_ms", header_timeout_ms, 1, 86'400'000);
  within<count>("limits.body_timeout_ms", body_timeout_ms, 1, 86'400'000);
  within<count>("limits.max_embedding_inputs", max_embedding_inputs, 1, 1'000'000);
  within<count>("limits.max_embedding_input_tokens", max_embedding_input_tokens, 1, 1'000'000'000);

  if (backends.empty()) refuse("backends", "must list at least one backend");
  for (std::size_t i = 0; i < backends.size(); ++i) {
    const auto& backend = backends[i];
    const std::string where = "backends[" + std::to_string(i) + "]";
    if (backend.name.empty()) refuse(where + ".name", "must be a non-empty string");
    for (std::size_t j = 0; j < i; ++j)
      if (backends[j].name == backend.name) refuse(where + ".name", "repeats \"" + backend.name + "\"");
    if (std::find(kinds.begin(), kinds.end(), backend.kind) == kinds.end()) {
      std::string list;
      for (const auto k : kinds) list += (list.empty() ? "\"" : ", \"") + std::string(k) + "\"";
      refuse(where + ".kind", "must be one of " + list + " (not \"" + backend.kind + "\")");
    }
    const bool builtin = std::find(builtin_backend_kinds.begin(), builtin_backend_kinds.end(), backend.kind) !=
                         builtin_backend_kinds.end();
    if (!builtin || backend.kind == "demo") continue;  // a registered kind checks its own fields
    if (backend.kind == "openai" || backend.kind == "llama.cpp" || !backend.base_url.empty())
      detail::check_url(where + ".base_url", backend.base_url);
    within<unsigned>(where + ".retries", backend.retries, 0, detail::max_retries);
    if (const auto* tokens = backend.options.if_contains("max_tokens"); tokens && tokens->is_number())
      within(where + ".max_tokens", tokens->to_number<double>(), 1.0, 1e6);
  }

  if (models.empty()) refuse("models", "must list the models clients may ask for");
  for (std::size_t i = 0; i < models.size(); ++i) {
    const auto& model = models[i];
    const std::string where = "models[" + std::to_string(i) + "]";
    if (model.name.empty()) refuse(where + ".name", "must be a non-empty string");
    for (std::size_t j = 0; j < i; ++j)
      if (models[j].name == model.name) refuse(where + ".name", "repeats \"" + model.name + "\"");
    if (model.backends.empty()) refuse(where + ".backend", "must name a backend (or a list of them) for \"" + model.name + "\"");
    for (std::size_t b = 0; b < model.backends.size(); ++b) {
      const auto& name = model.backends[b];
      if (!find_backend(name)) refuse(where + ".backend", "names \"" + name + "\", which is not in backends");
      if (std::find(model.backends.begin(), model.backends.begin() + static_cast<std::ptrdiff_t>(b), name) !=
          model.backends.begin() + static_cast<std::ptrdiff_t>(b))
        refuse(where + ".backend", "names \"" + name + "\" twice");
    }
    if (model.name == embedder.model)
      refuse(where + ".name", "is the embedding model's name (semantic_cache.embedder.model)");
    if (model.mode == model_mode::embedding && !model.routing.empty())
      refuse(where + ".routing", "is for chat models; \"" + model.name + "\" is an embedding model");
    detail::check_routing(model, where);
    if (const auto* price = prices ? prices->find(model.name) : nullptr) detail::check_price(*price, where + ".prices");
  }

  if (router) {
    for (std::size_t i = 0; i < router->aliases.size(); ++i) {
      const std::string where = "router.aliases[" + std::to_string(i) + "]";
      if (router->aliases[i].empty()) refuse(where, "must be a non-empty string");
      if (find_model(router->aliases[i]))
        refuse(where, "is \"" + router->aliases[i] + "\", a model of its own; an alias must name no model");
    }
    const bool any_routing = std::any_of(models.begin(), models.end(), [](const auto& m) { return !m.routing.empty(); });
    if (!router->registry && !any_routing)
      refuse("router", "has no models to route over: give models \"routing\" metrics or router.registry");
    try {
      (void)preferences::parse(router->preferences);
    } catch (const std::invalid_argument& e) {
      refuse("router.preferences", std::string("cannot be read: ") + e.what());
    }
  }

  if (tenants.empty()) refuse("tenants", "must list at least one tenant with its key");
  for (std::size_t i = 0; i < tenants.size(); ++i) {
    const std::string where = "tenants[" + std::to_string(i) + "]";
    const auto& tenant = tenants[i];
    if (tenant.name.empty()) refuse(where + ".name", "must be a non-empty string");
    if (tenant.api_key.empty()) refuse(where, "needs api_key_env or api_key");
    if (!admin_key.empty() && tenant.api_key == admin_key) refuse(where, "has the admin key; give the admin a key of its own");
    if (!metrics_token.empty() && tenant.api_key == metrics_token)
      refuse(where, "has the metrics token as its key, which would open /metrics (every tenant's figures) to it");
    for (std::size_t j = 0; j < i; ++j) {
      if (tenants[j].name == tenant.name) refuse(where + ".name", "repeats \"" + tenant.name + "\"");
      if (tenants[j].api_key == tenant.api_key) refuse(where, "has the key of tenant \"" + tenants[j].name + "\"");
    }
  }

  within<count>("exact_cache.max_entries", exact_max_entries, 1, 1'000'000'000);
  within<count>("exact_cache.max_bytes", exact_max_bytes, 1, count{1} << 40);
  detail::check_eviction(exact_eviction, "exact_cache");
  within<count>("semantic_cache.max_entries", semantic_max_entries, 1, 1'000'000'000);
  within<count>("semantic_cache.max_bytes", semantic_max_bytes, 1, count{1} << 40);
  const auto& threshold = semantic_threshold_policy;
  if (!threshold_kind_named(threshold.policy))
    refuse("semantic_cache.threshold.policy", "must be one of \"static\", \"adaptive\" (not \"" + threshold.policy + "\")");
  detail::fraction("semantic_cache.threshold.value", threshold.value, true);
  if (threshold.policy == "static") detail::fraction("semantic_cache.threshold", semantic_threshold, true);
  detail::fraction("semantic_cache.threshold.error_bound", threshold.error_bound, false);
  within<count>("semantic_cache.threshold.min_feedback", threshold.min_feedback, 1, 1'000'000);
  detail::check_eviction(semantic_eviction, "semantic_cache");
  within<std::size_t>("semantic_cache.hnsw.m", semantic_hnsw.m, 2, 128);
  within<std::size_t>("semantic_cache.hnsw.ef_construction", semantic_hnsw.ef_construction, 1, 4096);
  within<std::size_t>("semantic_cache.hnsw.ef_search", semantic_hnsw.ef_search, 1, 4096);
  detail::check_embedder(embedder, "semantic_cache.embedder");
  if (semantic_verifier.empty())
    refuse("semantic_cache.verifier", "must be \"default\", \"none\" or a weights file");
  else if (semantic_verifier != "default" && semantic_verifier != "none" &&
           !std::filesystem::is_regular_file(semantic_verifier))
    refuse("semantic_cache.verifier",
           "names no weights file at '" + semantic_verifier + "' (nor is it \"default\" or \"none\")");

  for (std::size_t i = 0; i < prompt_schemas.size(); ++i)
    if (prompt_schemas[i].empty()) refuse("prompt_schemas[" + std::to_string(i) + "]", "must be a non-empty path");

  if (shared) {
    const auto& redis = shared->redis;
    if (redis.endpoints.empty()) refuse("shared.redis.endpoints", "must list at least one \"host:port\"");
    for (std::size_t i = 0; i < redis.endpoints.size(); ++i)
      if (!detail::host_and_port(redis.endpoints[i]))
        refuse("shared.redis.endpoints[" + std::to_string(i) + "]",
               "must be \"host:port\" (not \"" + redis.endpoints[i] + "\")");
    within<std::uint64_t>("shared.redis.database", redis.database, 0, 15);
    within<std::uint64_t>("shared.redis.connect_timeout_ms", redis.connect_timeout_ms, 1, 600'000);
    within<std::uint64_t>("shared.redis.command_timeout_ms", redis.command_timeout_ms, 1, 600'000);
    within<std::uint64_t>("shared.redis.connections", redis.connections, 1, 64);
    if (!redis.tls && (!redis.tls_ca_file.empty() || !redis.tls_cert_file.empty() || !redis.tls_key_file.empty()))
      refuse("shared.redis.tls", "must be given for its files to be used");
    for (const auto& [field, file] : {std::pair{"ca_file", &redis.tls_ca_file}, {"cert_file", &redis.tls_cert_file},
                                      {"key_file", &redis.tls_key_file}})
      if (!file->empty() && !std::filesystem::is_regular_file(*file))
        refuse(std::string("shared.redis.tls.") + field, "names no file at '" + *file + "'");
    if (redis.tls_cert_file.empty() != redis.tls_key_file.empty())
      refuse("shared.redis.tls", "needs both cert_file and key_file, or neither");
    if (shared->prefix.empty() || shared->prefix.find_first_of("{}") != std::string::npos)
      refuse("shared.prefix", "must be non-empty and hold no '{' or '}' (they mark Redis Cluster hash tags)");
    within<std::uint64_t>("shared.read_timeout_ms", shared->read_timeout_ms, 1, 10'000);
    within<std::uint64_t>("shared.max_queued_writes", shared->max_queued_writes, 1, 10'000'000);
    within<std::uint64_t>("shared.snapshot_interval_s", shared->snapshot_interval_s, 0, 86'400);
    if (!shared->exact && !shared->semantic) refuse("shared", "shares nothing: exact and semantic are both false");
    if (shared->exact && !exact_cache) refuse("shared.exact", "needs exact_cache.enabled (the shared tier is its second level)");
    if (shared->semantic && !semantic_cache) refuse("shared.semantic", "needs semantic_cache.enabled");
  }

  within<count>("prompt_sources.max_bytes", prompt_source_max_bytes, 1, count{1} << 30);
  if (prompt_admin_directory && prompt_admin_directory->empty())
    refuse("prompt_sources.admin_directory", "must be a non-empty path");
  if (snapshot_directory) {
    if (snapshot_directory->empty()) refuse("snapshot.directory", "must be a non-empty path");
    std::error_code ec;
    if (std::filesystem::exists(*snapshot_directory, ec) && !std::filesystem::is_directory(*snapshot_directory, ec))
      refuse("snapshot.directory", "names \"" + snapshot_directory->string() + "\", which is not a directory");
  }
}

inline gateway_config gateway_config::from_json(const boost::json::value& value,
                                                std::span<const std::string_view> kinds) {
  using read = detail::config_reader;
  using detail::only_known_keys;
  using detail::refuse;
  gateway_config config;
  const auto& root = read::object_at(value, "the file");
  only_known_keys(root, "", {"listen", "limits", "backends", "models", "router", "tenants", "admin",
                             "exact_cache", "semantic_cache", "snapshot", "log", "fallback_order", "prices", "embedder",
                             "prompt_schemas", "prompt_sources", "shared"});

  if (const auto* listen = read::object(root, "listen", "")) {
    only_known_keys(*listen, "listen", {"address", "port", "threads"});
    config.address = read::string(*listen, "address", "listen", config.address);
    config.port = read::narrow_count<unsigned short>(*listen, "port", "listen", config.port, 0, 65535);
    config.threads = read::narrow_count<unsigned>(*listen, "threads", "listen", config.threads, 1, detail::max_threads);
  }
  if (const auto* limits = read::object(root, "limits", "")) {
    only_known_keys(*limits, "limits",
                    {"max_body_bytes", "max_concurrent_requests", "max_queued_requests", "request_timeout_ms",
                     "max_header_bytes", "max_json_depth", "max_connections", "max_connections_per_address",
                     "idle_timeout_ms", "header_timeout_ms", "body_timeout_ms", "max_embedding_inputs",
                     "max_embedding_input_tokens"});
    config.max_body_bytes = read::count(*limits, "max_body_bytes", "limits", config.max_body_bytes);
    config.max_concurrent_requests =
        read::count(*limits, "max_concurrent_requests", "limits", config.max_concurrent_requests);
    config.max_queued_requests = read::count(*limits, "max_queued_requests", "limits", config.max_queued_requests);
    config.request_timeout_ms = read::count(*limits, "request_timeout_ms", "limits", config.request_timeout_ms);
    const std::pair<std::string_view, std::uint64_t gateway_config::*> counts[] = {
        {"max_header_bytes", &gateway_config::max_header_bytes},
        {"max_json_depth", &gateway_config::max_json_depth},
        {"max_connections", &gateway_config::max_connections},
        {"max_connections_per_address", &gateway_config::max_connections_per_address},
        {"idle_timeout_ms", &gateway_config::idle_timeout_ms},
        {"header_timeout_ms", &gateway_config::header_timeout_ms},
        {"body_timeout_ms", &gateway_config::body_timeout_ms},
        {"max_embedding_inputs", &gateway_config::max_embedding_inputs},
        {"max_embedding_input_tokens", &gateway_config::max_embedding_input_tokens}};
    for (const auto& [key, field] : counts) config.*field = read::count(*limits, key, "limits", config.*field);
  }

  const auto* models = read::array(root, "models", "");
  if (!models || models->empty()) refuse("models", "must list the models clients may ask for");

  // backends: before the models are read, which name them.
  const auto* backends = read::array(root, "backends", "");
  if (!backends || backends->empty()) refuse("backends", "must list at least one backend");
  config.backends = detail::read_backends(*backends, "backends", kinds);

  // The older form's fallback list, for models given as plain names.
  std::vector<std::string> every_backend;
  for (const auto& b : config.backends) every_backend.push_back(b.name);
  if (const auto* order = read::array(root, "fallback_order", "")) {
    every_backend.clear();
    for (std::size_t i = 0; i < order->size(); ++i) {
      const std::string where = "fallback_order[" + std::to_string(i) + "]";
      if (!(*order)[i].is_string()) refuse(where, "must be a backend's name");
      const std::string name((*order)[i].get_string());
      if (!config.find_backend(name)) refuse(where, "names \"" + name + "\", which is not in backends");
      every_backend.push_back(name);
    }
    if (every_backend.empty()) refuse("fallback_order", "must name at least one backend");
  }

  auto prices = std::make_shared<price_table>();
  if (const auto* table = read::object(root, "prices", ""))
    for (const auto& [model, price] : *table) {
      const std::string where = detail::config_path("prices", model);
      const auto one = detail::read_price(price, where);
      detail::check_price(one, where);
      prices->set(std::string(model), one);
    }

  for (std::size_t i = 0; i < models->size(); ++i) {
    const std::string where = "models[" + std::to_string(i) + "]";
    model_config model;
    if (const auto* name = (*models)[i].if_string()) {
      model.name = std::string(*name);
      model.backends = every_backend;
    } else if (const auto* entry = (*models)[i].if_object()) {
      only_known_keys(*entry, where, {"name", "backend", "mode", "upstream_model", "prices", "routing"});
      model.name = read::string(*entry, "name", where);
      if (model.name.empty()) refuse(where + ".name", "must be a non-empty string");
      model.backends = read::strings(*entry, "backend", where);
      if (model.backends.empty())
        refuse(where + ".backend", "must name a backend (or a list of them) for \"" + model.name + "\"");
      model.upstream_model = read::string(*entry, "upstream_model", where);
      if (const std::string mode = read::string(*entry, "mode", where); mode == "embedding")
        model.mode = model_mode::embedding;
      else if (!mode.empty() && mode != "chat")
        refuse(where + ".mode", "must be \"chat\" or \"embedding\", not \"" + mode + "\"");
      if (const auto* price = entry->if_contains("prices"); price && !price->is_null()) {
        const auto one = detail::read_price(*price, where + ".prices");
        detail::check_price(one, where + ".prices");
        prices->set(model.name, one);
      }
      if (const auto* routing = read::object(*entry, "routing", where)) {
        only_known_keys(*routing, where + ".routing", detail::routing_keys);
        model.routing = *routing;
      }
      if (const auto* price = prices->find(model.name); price && !model.routing.empty()) {
        if (!model.routing.contains("input_cost_per_million")) model.routing["input_cost_per_million"] = price->input;
        if (!model.routing.contains("output_cost_per_million")) model.routing["output_cost_per_million"] = price->output;
      }
    } else {
      refuse(where, "must be a model's name or an object {\"name\", \"backend\", ...}");
    }
    config.models.push_back(std::move(model));
  }
  // Upstreams report the model they ran: price it as the model asked for.
  for (const auto& model : config.models)
    if (!model.upstream_model.empty() && !prices->find(model.upstream_model))
      if (const auto* price = prices->find(model.name)) prices->set(model.upstream_model, *price);
  config.prices = std::move(prices);

  if (const auto* router = read::object(root, "router", "")) {
    only_known_keys(*router, "router", {"aliases", "preferences", "registry", "examples"});
    router_config r;
    if (router->contains("aliases")) r.aliases = read::strings(*router, "aliases", "router");
    if (std::find(r.aliases.begin(), r.aliases.end(), "auto") == r.aliases.end()) r.aliases.insert(r.aliases.begin(), "auto");
    r.preferences = read::string(*router, "preferences", "router", r.preferences);
    if (const auto registry = read::string(*router, "registry", "router"); !registry.empty()) r.registry = registry;
    if (const auto examples = read::string(*router, "examples", "router"); !examples.empty()) r.examples = examples;
    config.router = std::move(r);
  }

  const auto* tenants = read::array(root, "tenants", "");
  if (!tenants || tenants->empty()) refuse("tenants", "must list at least one tenant with its key");
  for (std::size_t i = 0; i < tenants->size(); ++i) {
    const std::string where = "tenants[" + std::to_string(i) + "]";
    const auto& entry = read::object_at((*tenants)[i], where);
    only_known_keys(entry, where, {"name", "api_key_env", "api_key"});
    config.tenants.push_back({read::string(entry, "name", where), read::secret(entry, where, true)});
  }
  if (const auto* admin = read::object(root, "admin", "")) {
    only_known_keys(*admin, "admin", {"api_key_env", "api_key", "metrics_token"});
    config.admin_key = read::secret(*admin, "admin", true);
    config.metrics_token = read::string(*admin, "metrics_token", "admin");
  }

  if (const auto* exact = read::object(root, "exact_cache", "")) {
    only_known_keys(*exact, "exact_cache", {"enabled", "max_entries", "max_bytes", "eviction", "ttl_seconds"});
    config.exact_cache = read::flag(*exact, "enabled", "exact_cache", config.exact_cache);
    config.exact_max_entries = read::count(*exact, "max_entries", "exact_cache", config.exact_max_entries);
    config.exact_max_bytes = read::count(*exact, "max_bytes", "exact_cache", config.exact_max_bytes);
    config.exact_eviction = read::eviction(*exact, "exact_cache");
  }

  // The embedder: semantic_cache.embedder, or the older top-level "embedder".
  const auto read_embedder = [&](const boost::json::object& e, const std::string& where) {
    auto& embedder = config.embedder;
    embedder.kind = read::string(e, "kind", where, embedder.kind);
    if (embedder.kind == "openai")
      only_known_keys(e, where, {"kind", "base_url", "model", "dimension", "api_key_env", "api_key"},
                      " of an openai embedder");
    else
      only_known_keys(e, where, {"kind", "model", "dimension"}, " of a hashing embedder");
    embedder.dimension = read::count(e, "dimension", where, embedder.dimension);
    embedder.model = read::string(e, "model", where, embedder.model);
    if (embedder.kind == "openai") {
      embedder.base_url = read::string(e, "base_url", where);
      embedder.api_key = read::secret(e, where, false);
      if (!e.contains("model")) refuse(where + ".model", "must name the upstream's embedding model");
      if (!e.contains("dimension")) refuse(where + ".dimension", "must give the embedding model's vector length");
    }
    detail::check_embedder(embedder, where);
  };
  const auto* semantic = read::object(root, "semantic_cache", "");
  if (const auto* embedder = read::object(root, "embedder", "")) {
    if (semantic && semantic->contains("embedder"))
      refuse("embedder", "is the older place of semantic_cache.embedder; give one of them");
    read_embedder(*embedder, "embedder");
  }

  if (semantic) {
    const std::string where = "semantic_cache";
    only_known_keys(*semantic, where, {"enabled", "max_entries", "max_bytes", "capacity", "threshold", "eviction",
                                       "ttl_seconds", "embedder", "hnsw", "verifier"});
    config.semantic_cache = read::flag(*semantic, "enabled", where, config.semantic_cache);
    if (semantic->contains("max_entries") && semantic->contains("capacity"))
      refuse("semantic_cache.capacity", "is another name for max_entries; give one of them");
    config.semantic_max_entries = read::count(*semantic, "max_entries", where, config.semantic_max_entries);
    config.semantic_max_entries = read::count(*semantic, "capacity", where, config.semantic_max_entries);
    config.semantic_max_bytes = read::count(*semantic, "max_bytes", where, config.semantic_max_bytes);
    if (semantic->contains("capacity"))
      detail::within<std::uint64_t>("semantic_cache.capacity", config.semantic_max_entries, 1, 1'000'000'000);
    auto& threshold = config.semantic_threshold_policy;
    const auto* field = semantic->if_contains("threshold");
    if (field && !field->is_null() && !field->is_number() && !field->is_object())
      refuse("semantic_cache.threshold", "must be a number or {\"policy\", \"value\", \"error_bound\", \"min_feedback\"}");
    if (field && field->is_number()) {
      threshold.value = field->to_number<double>();
      threshold.value_given = true;
      detail::fraction("semantic_cache.threshold", threshold.value, true);
    } else if (const auto* spelled = read::object(*semantic, "threshold", where)) {
      const std::string path = where + ".threshold";
      only_known_keys(*spelled, path, {"policy", "value", "error_bound", "min_feedback"});
      threshold.policy = read::string(*spelled, "policy", path, threshold.policy);
      if (spelled->contains("value")) {
        threshold.value = read::number(*spelled, "value", path, threshold.value);
        threshold.value_given = true;
        detail::fraction(path + ".value", threshold.value, true);
      }
      threshold.error_bound = read::number(*spelled, "error_bound", path, threshold.error_bound);
      threshold.min_feedback = read::count(*spelled, "min_feedback", path, threshold.min_feedback);
      for (const std::string_view adaptive_only : {"error_bound", "min_feedback"})
        if (threshold.policy == "static" && spelled->contains(adaptive_only))
          refuse(detail::config_path(path, adaptive_only), "is for the adaptive policy only");
    }
    config.semantic_threshold = threshold.value;
    config.semantic_eviction = read::eviction(*semantic, where);
    if (const auto* hnsw = read::object(*semantic, "hnsw", where)) {
      only_known_keys(*hnsw, where + ".hnsw", {"m", "ef_construction", "ef_search"});
      auto& parameters = config.semantic_hnsw;
      parameters.m = read::count(*hnsw, "m", where + ".hnsw", parameters.m);
      parameters.ef_construction = read::count(*hnsw, "ef_construction", where + ".hnsw", parameters.ef_construction);
      parameters.ef_search = read::count(*hnsw, "ef_search", where + ".hnsw", parameters.ef_search);
    }
    if (const auto* embedder = read::object(*semantic, "embedder", where)) read_embedder(*embedder, where + ".embedder");
    config.semantic_verifier = read::string(*semantic, "verifier", where, config.semantic_verifier);
  }
  if (const auto* snapshot = read::object(root, "snapshot", "")) {
    only_known_keys(*snapshot, "snapshot", {"directory"});
    const std::string directory = read::string(*snapshot, "directory", "snapshot");
    if (directory.empty()) refuse("snapshot.directory", "must be a non-empty path");
    config.snapshot_directory = directory;
  }
  if (const auto* shared = read::object(root, "shared", "")) {
    only_known_keys(*shared, "shared", {"redis", "prefix", "replica", "exact", "semantic", "read_timeout_ms",
                                        "max_queued_writes", "snapshot_interval_s"});
    shared_config s;
    if (const auto* redis = read::object(*shared, "redis", "shared")) {
      const std::string where = "shared.redis";
      only_known_keys(*redis, where, {"endpoints", "user", "password", "password_env", "database", "tls",
                                      "connect_timeout_ms", "command_timeout_ms", "connections"});
      auto& r = s.redis;
      if (redis->contains("endpoints")) r.endpoints = read::strings(*redis, "endpoints", where);
      r.user = read::string(*redis, "user", where);
      if (const std::string variable = read::string(*redis, "password_env", where); !variable.empty()) {
        const char* value = std::getenv(variable.c_str());
        if (!value || !*value) refuse(where + ".password_env", "names " + variable + ", which is not set");
        r.password = value;
      } else {
        r.password = read::string(*redis, "password", where);
      }
      r.database = read::narrow_count<unsigned>(*redis, "database", where, r.database, 0, 15);
      if (const auto* tls = read::object(*redis, "tls", where)) {
        only_known_keys(*tls, where + ".tls", {"ca_file", "cert_file", "key_file", "server_name", "verify"});
        r.tls = true;
        r.tls_ca_file = read::string(*tls, "ca_file", where + ".tls");
        r.tls_cert_file = read::string(*tls, "cert_file", where + ".tls");
        r.tls_key_file = read::string(*tls, "key_file", where + ".tls");
        r.tls_server_name = read::string(*tls, "server_name", where + ".tls");
        r.tls_verify = read::flag(*tls, "verify", where + ".tls", r.tls_verify);
      }
      r.connect_timeout_ms =
          read::narrow_count<unsigned>(*redis, "connect_timeout_ms", where, r.connect_timeout_ms, 1, 600'000);
      r.command_timeout_ms =
          read::narrow_count<unsigned>(*redis, "command_timeout_ms", where, r.command_timeout_ms, 1, 600'000);
      r.connections = read::narrow_count<unsigned>(*redis, "connections", where, r.connections, 1, 64);
    }
    s.prefix = read::string(*shared, "prefix", "shared", s.prefix);
    s.replica = read::string(*shared, "replica", "shared");
    s.exact = read::flag(*shared, "exact", "shared", s.exact);
    s.semantic = read::flag(*shared, "semantic", "shared", s.semantic);
    s.read_timeout_ms = read::narrow_count<unsigned>(*shared, "read_timeout_ms", "shared", s.read_timeout_ms, 1, 10'000);
    s.max_queued_writes = read::count(*shared, "max_queued_writes", "shared", s.max_queued_writes);
    s.snapshot_interval_s =
        read::narrow_count<unsigned>(*shared, "snapshot_interval_s", "shared", s.snapshot_interval_s, 0, 86'400);
    config.shared = std::move(s);
  }
  if (const auto* schemas = root.if_contains("prompt_schemas"); schemas && !schemas->is_null()) {
    if (!schemas->is_array()) refuse("prompt_schemas", "must be a list of PML schema files");
    for (const auto& path : read::strings(root, "prompt_schemas", "")) config.prompt_schemas.emplace_back(path);
  }
  if (const auto* sources = read::object(root, "prompt_sources", "")) {
    only_known_keys(*sources, "prompt_sources", {"admin_directory", "max_bytes"});
    if (sources->contains("admin_directory")) {
      const std::string directory = read::string(*sources, "admin_directory", "prompt_sources");
      if (directory.empty()) refuse("prompt_sources.admin_directory", "must be a non-empty path");
      config.prompt_admin_directory = directory;
    }
    config.prompt_source_max_bytes = read::count(*sources, "max_bytes", "prompt_sources", config.prompt_source_max_bytes);
  }
  if (const auto* log = read::object(root, "log", "")) {
    only_known_keys(*log, "log", {"requests"});
    config.log_requests = read::flag(*log, "requests", "log", true);
  }
  config.check(kinds);
  return config;
}

}  // namespace llmgate::inline v0
