// linearity: every parser that the fuzz targets cover must take time linear
// in its input (issue 35). For each target, inputs of the shapes that tend
// to make a parser quadratic (one tag with many attributes, many entities,
// many events or lines, many keys, a long string, many list entries looked
// up by name...) are built at n, 2n, 4n and 8n bytes and given to the
// target's own LLVMFuzzerTestOneInput, so that what is timed is what the
// fuzzer runs (framing bytes included: a piece size, a reader's choice).
// A shape fails when its time at 8n is more than `threshold` (16) times its
// time at n, scaled to the sizes actually built; linear growth gives 8, a
// quadratic one 64. This file is compiled without sanitizers or libFuzzer,
// optimised, and linked with each *_fuzz.cpp compiled with
// LLVMFuzzerTestOneInput renamed to llmgate_linearity_<target>
// (tests/fuzz/CMakeLists.txt).
//
// Timing: in CPU time, so that what else runs on the machine (a build)
// counts little. A size's time is the least, over `reps` rounds, of one
// round's mean time per call, a round calling the target until `min_ms`
// have passed (so that a fast call is timed many times over; a call longer
// than 4 x min_ms is timed twice, warm-up included). Sizes stop early when
// one already grows past the threshold. Freed memory stays with the
// allocator (mallopt), so that sizes above glibc's mmap threshold do not
// pay for fresh pages on every call. A shape that fails is measured again
// and fails only if that second run fails too (a busy machine makes one
// run noisy, seldom two); a shape listed in --known is measured again when
// it looks linear, and said to be linear only if the second run agrees.
// Each run is a child process, so that a crash (a target's __builtin_trap
// is a finding too) fails that shape alone, and a run still going after
// `deadline` seconds (wall clock) is stopped and fails.
//
// Usage: llmgate_fuzz_linearity [options] [shape-filter...]
//   a filter keeps the shapes whose "target.shape" name contains it
//   --list              print the shapes and exit
//   --threshold R       the largest ratio time(8n) / time(n) allowed (16)
//   --reps N            rounds per size (3); --min-ms M: a round's length (8)
//   --scale F           every shape's n times F (1; 0.5 halves the sizes)
//   --deadline S        seconds one run of a shape may take (10)
//   --known A,B         shapes known to be superlinear: reported, not failed
//                       (one that has become linear is reported too)
//   --dump SHAPE BYTES  write the input SHAPE makes at BYTES to stdout
// Exit status: 0 when every shape grows linearly, 1 otherwise.
#include <malloc.h>    // mallopt
#include <poll.h>      // poll
#include <signal.h>    // kill, SIGKILL
#include <sys/wait.h>  // waitpid, WIFSIGNALED
#include <time.h>      // clock_gettime, CLOCK_PROCESS_CPUTIME_ID
#include <unistd.h>    // fork, pipe, _exit

#include <algorithm>    // std::min, std::max
#include <chrono>       // std::chrono::steady_clock
#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint8_t, std::uint32_t, std::uint64_t
#include <cstdio>       // std::printf, std::fflush, std::fwrite
#include <cstdlib>      // std::strtod, std::strtoul
#include <functional>   // std::function
#include <limits>       // std::numeric_limits
#include <set>          // std::set
#include <string>       // std::string, std::to_string
#include <string_view>  // std::string_view
#include <vector>       // std::vector

// The fuzz targets' entry points, renamed at compile time.
extern "C" {
int llmgate_linearity_sse_parser(const std::uint8_t* data, std::size_t size);
int llmgate_linearity_ndjson_parser(const std::uint8_t* data, std::size_t size);
int llmgate_linearity_response_json(const std::uint8_t* data, std::size_t size);
int llmgate_linearity_chat_response_reader(const std::uint8_t* data, std::size_t size);
int llmgate_linearity_gateway_request(const std::uint8_t* data, std::size_t size);
int llmgate_linearity_pml(const std::uint8_t* data, std::size_t size);
int llmgate_linearity_eval_inputs(const std::uint8_t* data, std::size_t size);
int llmgate_linearity_config(const std::uint8_t* data, std::size_t size);
#ifdef LLMGATE_LINEARITY_REDIS
int llmgate_linearity_redis_reply(const std::uint8_t* data, std::size_t size);
#endif
}

namespace {

using entry_point = int (*)(const std::uint8_t*, std::size_t);

struct shape {
  std::string target;  ///< the fuzz target, as named in tests/fuzz/ (sse_parser_fuzz.cpp: "sse_parser")
  std::string name;
  std::string what;    ///< what the input is, for the report
  entry_point run;
  std::size_t base;    ///< n, in bytes
  std::function<std::string(std::size_t)> make;  ///< an input of about (at least) that many bytes
  bool bounded = false;  ///< refused at a fixed size by design: its time stays flat
  std::string full_name() const { return target + "." + name; }
};

constexpr std::size_t KiB = 1024;

// prefix, then unit(0), unit(1)... while the whole is shorter than `bytes`, then suffix.
template <class Unit>
std::string repeated(std::size_t bytes, std::string_view prefix, Unit unit, std::string_view suffix = {}) {
  std::string out(prefix);
  out.reserve(bytes + suffix.size() + 256);
  for (std::size_t i = 0; out.size() + suffix.size() < bytes; ++i) out += unit(i);
  out += suffix;
  return out;
}

// The same unit over and over.
std::string repeated_text(std::size_t bytes, std::string_view prefix, std::string_view unit,
                          std::string_view suffix = {}) {
  return repeated(bytes, prefix, [&](std::size_t) { return std::string(unit); }, suffix);
}

// How many units of `unit_bytes` fit in `bytes`, at least one.
std::size_t units(std::size_t bytes, std::size_t unit_bytes) { return std::max<std::size_t>(1, bytes / unit_bytes); }

std::string n(std::size_t i) { return std::to_string(i); }

// The byte that sse_parser, ndjson_parser and redis_reply read first: pieces
// of 1 + b % 32 bytes. 31: 32-byte pieces; 0: one byte at a time.
std::string framed(char first, std::string body) { return std::string(1, first) + body; }

// Little-endian GGUF fields.
void put_u32(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
}
void put_u64(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
}
void put_gguf_string(std::string& out, std::string_view s) {
  put_u64(out, s.size());
  out += s;
}
std::string gguf_header(std::uint64_t tensors, std::uint64_t metadata) {
  std::string out = "GGUF";
  put_u32(out, 3);
  put_u64(out, tensors);
  put_u64(out, metadata);
  return out;
}

// A chat.completion answer whose message is `message` (a JSON object's members).
std::string chat_completion(std::string_view message, std::string_view before_choices = {}) {
  return std::string(R"({"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m",)") +
         std::string(before_choices) + R"("choices":[{"index":0,"message":{"role":"assistant",)" +
         std::string(message) + R"(},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2,)" +
         R"("total_tokens":5}})";
}

std::string http_post(std::string_view target, std::string_view body) {
  return "POST " + std::string(target) + " HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer k\r\n" +
         "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" +
         std::string(body);
}

// A RESP array of the elements `element(i)` makes, as many as fit in `bytes`.
template <class Element>
std::string resp_array(std::size_t bytes, Element element) {
  std::string body;
  std::size_t count = 0;
  for (; body.size() < bytes; ++count) body += element(count);
  return "*" + std::to_string(count) + "\r\n" + body;
}

const std::string minimal_config_tail =
    R"("models":[{"name":"m","backend":"b0"}],"tenants":[{"name":"t","api_key":"k"}]})";

std::vector<shape> all_shapes() {
  std::vector<shape> s;
  const auto add = [&](std::string target, entry_point run, std::string name, std::string what, std::size_t base,
                       std::function<std::string(std::size_t)> make, bool bounded = false) {
    s.push_back({std::move(target), std::move(name), std::move(what), run, base, std::move(make), bounded});
  };

  // ---- sse_parser: the SSE parser and the OpenAI chunk decoder (events of at most 4096 bytes).
  {
    const auto t = llmgate_linearity_sse_parser;
    const std::string event = R"(data: {"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]})";
    add("sse_parser", t, "events_lf", "many events, \\n line ends, 32-byte pieces", 64 * KiB,
        [=](std::size_t b) { return framed(31, repeated_text(b, "", event + "\n\n")); });
    add("sse_parser", t, "events_crlf", "many events, \\r\\n line ends", 64 * KiB,
        [=](std::size_t b) { return framed(30, repeated_text(b, "", event + "\r\n\r\n")); });
    add("sse_parser", t, "events_cr", "many events, lone \\r line ends", 64 * KiB,
        [=](std::size_t b) { return framed(29, repeated_text(b, "", event + "\r\r")); });
    add("sse_parser", t, "events_bytewise", "many events fed one byte at a time", 32 * KiB,
        [=](std::size_t b) { return framed(0, repeated_text(b, "", event + "\n\n")); });
    add("sse_parser", t, "large_events", "many events of ~4,000 bytes (the limit is 4,096)", 64 * KiB, [=](std::size_t b) {
      const std::string big = R"(data: {"choices":[{"index":0,"delta":{"content":")" + std::string(3900, 'a') +
                              R"("},"finish_reason":null}]})" + "\n\n";
      return framed(31, repeated_text(b, "", big));
    });
    add("sse_parser", t, "many_data_lines", "events of 400 data: lines each", 64 * KiB, [](std::size_t b) {
      std::string one;
      for (int i = 0; i < 400; ++i) one += "data: x\n";
      return framed(31, repeated_text(b, "", one + "\n"));
    });
    add("sse_parser", t, "comments", "many ': keep-alive' comment lines, no event", 64 * KiB,
        [](std::size_t b) { return framed(31, repeated_text(b, "", ": keep-alive\n")); });
    add("sse_parser", t, "fields_without_data", "many event: and id: lines, never an event", 64 * KiB,
        [](std::size_t b) { return framed(31, repeated_text(b, "", "event: delta\nid: 12345\n")); });
    add("sse_parser", t, "no_line_end", "one line without a line end (refused at 4,096 bytes)", 64 * KiB,
        [](std::size_t b) { return framed(31, "data: " + std::string(b, 'x')); }, true);
  }

  // ---- ndjson_parser: the NDJSON parser and Ollama's line decoder (lines of at most 4096 bytes).
  {
    const auto t = llmgate_linearity_ndjson_parser;
    const std::string line = R"({"model":"m","message":{"role":"assistant","content":"a"},"done":false})";
    add("ndjson_parser", t, "lines_lf", "many JSON lines, 32-byte pieces", 64 * KiB,
        [=](std::size_t b) { return framed(31, repeated_text(b, "", line + "\n")); });
    add("ndjson_parser", t, "lines_crlf", "many JSON lines, \\r\\n line ends", 64 * KiB,
        [=](std::size_t b) { return framed(30, repeated_text(b, "", line + "\r\n")); });
    add("ndjson_parser", t, "lines_bytewise", "many JSON lines fed one byte at a time", 32 * KiB,
        [=](std::size_t b) { return framed(0, repeated_text(b, "", line + "\n")); });
    add("ndjson_parser", t, "blank_lines", "many blank lines", 64 * KiB,
        [](std::size_t b) { return framed(31, repeated_text(b, "", " \t \n")); });
    add("ndjson_parser", t, "large_lines", "many lines of ~4,000 bytes (the limit is 4,096)", 64 * KiB, [=](std::size_t b) {
      const std::string big =
          R"({"model":"m","message":{"role":"assistant","content":")" + std::string(3900, 'a') + R"("},"done":false})";
      return framed(31, repeated_text(b, "", big + "\n"));
    });
    add("ndjson_parser", t, "many_keys_per_line", "lines of 300 keys each", 64 * KiB, [](std::size_t b) {
      std::string one = R"({"model":"m","message":{"content":"a"})";
      for (int i = 0; i < 300; ++i) one += ",\"k" + n(i) + "\":1";
      return framed(31, repeated_text(b, "", one + "}\n"));
    });
    add("ndjson_parser", t, "no_line_end", "one line without a line end (refused at 4,096 bytes)", 64 * KiB,
        [](std::size_t b) { return framed(31, "{\"a\":\"" + std::string(b, 'x')); }, true);
  }

  // ---- response_json: every JSON decoder on a parsed value.
  {
    const auto t = llmgate_linearity_response_json;
    add("response_json", t, "request_many_messages", "a chat request with many messages", 64 * KiB, [](std::size_t b) {
      return repeated(b, R"({"model":"m","stream":true,"messages":[{"role":"system","content":"s"})",
                      [](std::size_t i) { return std::string(R"(,{"role":")") + (i % 2 ? "assistant" : "user") +
                                                 R"(","content":"hello there"})"; },
                      "]}");
    });
    add("response_json", t, "request_many_tools", "a chat request with many tools", 64 * KiB, [](std::size_t b) {
      return repeated(b, R"({"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[)",
                      [](std::size_t i) {
                        return std::string(i ? "," : "") + R"({"type":"function","function":{"name":"f)" + n(i) +
                               R"(","description":"d","parameters":{"type":"object","properties":{"x":{"type":"string"}}}}})";
                      },
                      "]}");
    });
    add("response_json", t, "request_content_parts", "a message of many content parts", 64 * KiB, [](std::size_t b) {
      return repeated(b, R"({"model":"m","messages":[{"role":"user","content":[)",
                      [](std::size_t i) { return std::string(i ? "," : "") + R"({"type":"text","text":"part"})"; },
                      "]}]}");
    });
    add("response_json", t, "response_many_choices", "a chat.completion with many choices", 64 * KiB, [](std::size_t b) {
      return repeated(b, R"({"id":"c","object":"chat.completion","created":1,"model":"m","choices":[)",
                      [](std::size_t i) {
                        return std::string(i ? "," : "") + R"({"index":)" + n(i) +
                               R"(,"message":{"role":"assistant","content":"a"},"finish_reason":"stop"})";
                      },
                      "]}");
    });
    add("response_json", t, "response_long_content", "a chat.completion with one long content string", 64 * KiB,
        [](std::size_t b) { return chat_completion(R"("content":")" + std::string(b, 'a') + "\""); });
    add("response_json", t, "response_escaped_content", "content of \\u escapes, \\n, \\\" and UTF-8", 64 * KiB,
        [](std::size_t b) {
          return chat_completion(repeated_text(b, R"("content":")", R"(\u00e9\n\"\\é\ud83d\ude00)", "\""));
        });
    add("response_json", t, "response_many_tool_calls", "a message with many tool calls", 64 * KiB, [](std::size_t b) {
      return chat_completion(repeated(b, R"("content":null,"tool_calls":[)",
                                      [](std::size_t i) {
                                        return std::string(i ? "," : "") + R"({"id":"call_)" + n(i) +
                                               R"(","type":"function","function":{"name":"f","arguments":"{}"}})";
                                      },
                                      "]"));
    });
    add("response_json", t, "many_keys", "an object with many distinct keys", 64 * KiB, [](std::size_t b) {
      return repeated(b, "{", [](std::size_t i) { return std::string(i ? "," : "") + "\"key" + n(i) + "\":" + n(i); },
                      "}");
    });
    add("response_json", t, "duplicate_keys", "an object with one key repeated many times", 64 * KiB, [](std::size_t b) {
      return repeated(b, "{", [](std::size_t i) { return std::string(i ? "," : "") + "\"model\":\"m\""; }, "}");
    });
    add("response_json", t, "many_array_items", "an array of many numbers", 64 * KiB, [](std::size_t b) {
      return repeated(b, "[", [](std::size_t i) { return std::string(i ? "," : "") + "12345"; }, "]");
    });
    add("response_json", t, "deep_arrays", "many arrays nested 30 deep (Boost.JSON's limit is 32)", 64 * KiB,
        [](std::size_t b) {
          const std::string deep = std::string(30, '[') + std::string(30, ']');
          return repeated(b, "[", [&](std::size_t i) { return (i ? "," : "") + deep; }, "]");
        });
    add("response_json", t, "deep_objects", "many objects nested 30 deep", 64 * KiB, [](std::size_t b) {
      std::string deep;
      for (int d = 0; d < 30; ++d) deep += "{\"a\":";
      deep += "1" + std::string(30, '}');
      return repeated(b, R"({"model":"m","messages":[)", [&](std::size_t i) { return (i ? "," : "") + deep; }, "]}");
    });
    add("response_json", t, "long_number", "a number of many digits", 64 * KiB,
        [](std::size_t b) { return "[0." + std::string(b, '7') + "]"; });
    add("response_json", t, "embedding_many_vectors", "an embeddings answer with many vectors", 64 * KiB,
        [](std::size_t b) {
          return repeated(b, R"({"object":"list","model":"e","data":[)",
                          [](std::size_t i) {
                            return std::string(i ? "," : "") + R"({"object":"embedding","index":)" + n(i) +
                                   R"(,"embedding":[0.125,-0.5,0.25,1e-3,0.75,-0.0625,0.5,0.375]})";
                          },
                          R"(],"usage":{"prompt_tokens":1,"total_tokens":1}})");
        });
    add("response_json", t, "embedding_many_inputs", "an embeddings request with many inputs", 64 * KiB,
        [](std::size_t b) {
          return repeated(b, R"({"model":"e","input":[)",
                          [](std::size_t i) { return std::string(i ? "," : "") + "\"text " + n(i) + "\""; }, "]}");
        });
    add("response_json", t, "price_table_many_models", "a price table of many models", 64 * KiB, [](std::size_t b) {
      return repeated(b, "{",
                      [](std::size_t i) {
                        return std::string(i ? "," : "") + "\"model-" + n(i) + R"(":{"input":0.5,"output":1.5})";
                      },
                      "}");
    });
    add("response_json", t, "anthropic_many_blocks", "an Anthropic message with many content blocks", 64 * KiB,
        [](std::size_t b) {
          return repeated(b, R"({"id":"msg","type":"message","role":"assistant","model":"c","content":[)",
                          [](std::size_t i) { return std::string(i ? "," : "") + R"({"type":"text","text":"ab"})"; },
                          R"(],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}})");
        });
  }

  // ---- chat_response_reader: the tree-less reader of answers, and JSON string escaping of the whole input.
  {
    const auto t = llmgate_linearity_chat_response_reader;
    add("chat_response_reader", t, "long_content", "one long content string", 64 * KiB,
        [](std::size_t b) { return chat_completion(R"("content":")" + std::string(b, 'a') + "\""); });
    add("chat_response_reader", t, "escaped_content", "content of \\u escapes, \\n, \\\" and UTF-8", 64 * KiB,
        [](std::size_t b) {
          return chat_completion(repeated_text(b, R"("content":")", R"(\u00e9\n\"\\é\ud83d\ude00)", "\""));
        });
    add("chat_response_reader", t, "many_unknown_keys", "many keys the reader skips, before choices", 64 * KiB,
        [](std::size_t b) {
          return chat_completion(R"("content":"a")",
                                 repeated(b, "", [](std::size_t i) {
                                   return "\"x" + n(i) + R"(":{"a":[1,"s",null,{"b":true}]},)";
                                 }));
        });
    add("chat_response_reader", t, "many_tool_calls", "a message with many tool calls", 64 * KiB, [](std::size_t b) {
      return chat_completion(repeated(b, R"("content":null,"tool_calls":[)",
                                      [](std::size_t i) {
                                        return std::string(i ? "," : "") + R"({"id":"call_)" + n(i) +
                                               R"(","type":"function","function":{"name":"f","arguments":"{}"}})";
                                      },
                                      "]"));
    });
    add("chat_response_reader", t, "many_choices", "many choices", 64 * KiB, [](std::size_t b) {
      return repeated(b, R"({"id":"c","object":"chat.completion","created":1,"model":"m","choices":[)",
                      [](std::size_t i) {
                        return std::string(i ? "," : "") + R"({"index":)" + n(i) +
                               R"(,"message":{"role":"assistant","content":"a"},"finish_reason":"stop"})";
                      },
                      "]}");
    });
    add("chat_response_reader", t, "control_bytes", "bytes the JSON writer escapes (controls, quotes, UTF-8)",
        64 * KiB, [](std::size_t b) { return repeated_text(b, "", "\x01\x1f\"\\\n\t\xc3\xa9\xe2\x82\xac<>&'\x7f"); });
    add("chat_response_reader", t, "invalid_utf8", "bytes that are not UTF-8", 64 * KiB,
        [](std::size_t b) { return repeated_text(b, "", "\xff\xc3\x28\xe2\x28\xa1\xf0\x90\x28"); });
  }

  // ---- gateway_request: an HTTP request as the gateway reads it, its body as a chat and an embeddings request
  // and a configuration (the body limit is 1 MiB).
  {
    const auto t = llmgate_linearity_gateway_request;
    const auto chat_body = [](std::size_t b) {
      return repeated(b, R"({"model":"m","user":"u","messages":[{"role":"system","content":"s"})",
                      [](std::size_t i) { return std::string(R"(,{"role":")") + (i % 2 ? "assistant" : "user") +
                                                 R"(","content":"hello there"})"; },
                      "]}");
    };
    add("gateway_request", t, "http_chat_many_messages", "a POST of a chat request with many messages", 64 * KiB,
        [=](std::size_t b) { return http_post("/v1/chat/completions", chat_body(b)); });
    add("gateway_request", t, "json_chat_many_messages", "a bare chat request body with many messages", 64 * KiB,
        chat_body);
    add("gateway_request", t, "http_chunked_many_chunks", "a chunked POST of many 16-byte chunks", 64 * KiB,
        [=](std::size_t b) {
          const std::string body = chat_body(b);
          std::string out =
              "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n";
          for (std::size_t at = 0; at < body.size(); at += 16) {
            const std::string piece = body.substr(at, 16);
            char size[16];
            std::snprintf(size, sizeof size, "%zx", piece.size());
            out += std::string(size) + "\r\n" + piece + "\r\n";
          }
          return out + "0\r\n\r\n";
        });
    add("gateway_request", t, "http_long_content", "a POST of a chat request with one long message", 64 * KiB,
        [](std::size_t b) {
          return http_post("/v1/chat/completions",
                           R"({"model":"m","messages":[{"role":"user","content":")" + std::string(b, 'a') + "\"}]}");
        });
    add("gateway_request", t, "http_embedding_many_inputs", "a POST of an embeddings request with many inputs",
        64 * KiB, [](std::size_t b) {
          return http_post("/v1/embeddings",
                           repeated(b, R"({"model":"e","input":[)",
                                    [](std::size_t i) { return std::string(i ? "," : "") + "\"text " + n(i) + "\""; },
                                    "]}"));
        });
    add("gateway_request", t, "http_many_headers", "many header lines (refused at Beast's 8 KiB header limit)",
        64 * KiB, [](std::size_t b) {
          return repeated(b, "POST / HTTP/1.1\r\nHost: x\r\n",
                          [](std::size_t i) { return "X-Header-" + n(i) + ": value\r\n"; }, "\r\n");
        }, true);
  }

  // ---- pml: the PML reader, parser and compiler. "\n====\n" splits a schema from a prompt.
  {
    const auto t = llmgate_linearity_pml;
    add("pml", t, "many_attributes", "one tag with many attributes", 64 * KiB, [](std::size_t b) {
      return repeated(b, "<prompt schema=\"s\"", [](std::size_t i) { return " a" + n(i) + "=\"v\""; }, "/>");
    });
    add("pml", t, "many_attributes_schema", "a schema's <module> with many attributes", 64 * KiB, [](std::size_t b) {
      return repeated(b, "<schema name=\"s\" version=\"1\"><module name=\"m\"",
                      [](std::size_t i) { return " a" + n(i) + "=\"v\""; }, ">t</module></schema>");
    });
    add("pml", t, "duplicate_attribute_last", "many attributes, the last a duplicate", 64 * KiB, [](std::size_t b) {
      return repeated(b, "<prompt schema=\"s\"", [](std::size_t i) { return " a" + n(i) + "=\"v\""; }, " a0=\"v\"/>");
    });
    add("pml", t, "entities_in_text", "text of many entities", 64 * KiB, [](std::size_t b) {
      return repeated_text(b, "<schema name=\"s\" version=\"1\"><system>", "&amp;&lt;&gt;&quot;&apos;&#65;&#x1F600;",
                           "</system></schema>");
    });
    add("pml", t, "entities_in_attribute", "an attribute value of many entities", 64 * KiB, [](std::size_t b) {
      return repeated_text(b, "<schema name=\"s\" version=\"1\"><module name=\"m\"><param name=\"p\" len=\"5\" scaffold=\"",
                           "&amp;&#x41;", "\"/></module></schema>");
    });
    add("pml", t, "ampersands_without_semicolon", "text of many '&' and no ';' (refused at the first)", 64 * KiB,
        [](std::size_t b) { return repeated_text(b, "<prompt schema=\"s\">", "&amp", "</prompt>"); }, true);
    add("pml", t, "ampersands_then_semicolon", "many '&' in a value, one ';' at the end (refused at the first)",
        64 * KiB, [](std::size_t b) { return repeated_text(b, "<prompt schema=\"s\" a=\"", "&", ";\"/>"); }, true);
    add("pml", t, "nested_to_the_limit", "many elements nested 99 deep (the limit is 100)", 64 * KiB,
        [](std::size_t b) {
          std::string deep;
          for (int d = 0; d < 98; ++d) deep += "<a>";
          for (int d = 0; d < 98; ++d) deep += "</a>";
          return repeated_text(b, "<prompt schema=\"s\">", deep, "</prompt>");
        });
    add("pml", t, "nested_modules", "modules nested 60 deep, many times over", 64 * KiB, [](std::size_t b) {
      return repeated(b, "<schema name=\"s\" version=\"1\">",
                      [](std::size_t i) {
                        std::string deep;
                        for (int d = 0; d < 60; ++d) deep += "<module name=\"m" + n(i) + "_" + n(d) + "\">t";
                        for (int d = 0; d < 60; ++d) deep += "</module>";
                        return deep;
                      },
                      "</schema>");
    });
    add("pml", t, "many_sibling_elements", "many empty elements side by side", 64 * KiB,
        [](std::size_t b) { return repeated_text(b, "<prompt schema=\"s\">", "<a/>", "</prompt>"); });
    add("pml", t, "long_text", "a long text of words", 64 * KiB, [](std::size_t b) {
      return repeated_text(b, "<schema name=\"s\" version=\"1\"><system>", "word ", "</system></schema>");
    });
    add("pml", t, "text_crlf_lines", "text of many \\r\\n lines", 64 * KiB, [](std::size_t b) {
      return repeated_text(b, "<schema name=\"s\" version=\"1\"><system>", "a line\r\n", "</system></schema>");
    });
    add("pml", t, "many_comments", "many comments between texts", 64 * KiB, [](std::size_t b) {
      return repeated_text(b, "<schema name=\"s\" version=\"1\"><system>", "a<!-- c -->", "</system></schema>");
    });
    add("pml", t, "many_cdata", "many CDATA sections", 64 * KiB, [](std::size_t b) {
      return repeated_text(b, "<schema name=\"s\" version=\"1\"><system>", "<![CDATA[x<y&z]]>", "</system></schema>");
    });
    add("pml", t, "unclosed_comment", "a comment never closed", 64 * KiB, [](std::size_t b) {
      return repeated_text(b, "<prompt schema=\"s\"><!--", "- ", "");
    });
    add("pml", t, "many_modules_and_imports", "a schema of many modules and a prompt importing each", 64 * KiB,
        [](std::size_t b) {
          const std::size_t count = units(b, 48);
          std::string schema = "<schema name=\"s\" version=\"1\">";
          std::string prompt = "<prompt schema=\"s\" version=\"1\">";
          for (std::size_t i = 0; i < count; ++i) {
            schema += "<module name=\"m" + n(i) + "\">t" + n(i) + "</module>";
            prompt += "<m" + n(i) + "/>";
          }
          return schema + "</schema>\n====\n" + prompt + "</prompt>";
        });
    add("pml", t, "many_modules_one_import", "a schema of many modules, a prompt importing the last", 64 * KiB,
        [](std::size_t b) {
          const std::size_t count = units(b, 36);
          std::string schema = "<schema name=\"s\" version=\"1\">";
          for (std::size_t i = 0; i < count; ++i) schema += "<module name=\"m" + n(i) + "\">t</module>";
          return schema + "</schema>\n====\n<prompt schema=\"s\" version=\"1\"><m" + n(count - 1) + "/></prompt>";
        });
    add("pml", t, "many_params_and_arguments", "a module of many parameters, an import giving each", 64 * KiB,
        [](std::size_t b) {
          const std::size_t count = units(b, 40);
          std::string schema = "<schema name=\"s\" version=\"1\"><module name=\"m\">";
          std::string prompt = "<prompt schema=\"s\" version=\"1\"><m";
          for (std::size_t i = 0; i < count; ++i) {
            schema += "<param name=\"p" + n(i) + "\" len=\"5\"/>";
            prompt += " p" + n(i) + "=\"a\"";
          }
          return schema + "</module></schema>\n====\n" + prompt + "/></prompt>";
        });
    add("pml", t, "many_unions", "many unions, a prompt importing one member of each", 64 * KiB, [](std::size_t b) {
      const std::size_t count = units(b, 100);
      std::string schema = "<schema name=\"s\" version=\"1\">";
      std::string prompt = "<prompt schema=\"s\" version=\"1\">";
      for (std::size_t i = 0; i < count; ++i) {
        schema += "<union><module name=\"a" + n(i) + "\">x</module><module name=\"b" + n(i) + "\">y</module></union>";
        prompt += "<b" + n(i) + "/>";
      }
      return schema + "</schema>\n====\n" + prompt + "</prompt>";
    });
    add("pml", t, "many_prompt_texts", "a prompt of many role blocks and texts between imports", 64 * KiB,
        [](std::size_t b) {
          const std::size_t count = units(b, 64);
          std::string schema = "<schema name=\"s\" version=\"1\"><system>s</system>";
          std::string prompt = "<prompt schema=\"s\" version=\"1\">";
          for (std::size_t i = 0; i < count; ++i) {
            schema += "<module name=\"m" + n(i) + "\">t</module>";
            prompt += "<m" + n(i) + "/>text<user>q</user>";
          }
          return schema + "</schema>\n====\n" + prompt + "</prompt>";
        });
  }

  // ---- eval_inputs: the first byte picks a GGUF header (0), a judge's verdict (1), a ratings CSV (2),
  // an evaluation file (3).
  {
    const auto t = llmgate_linearity_eval_inputs;
    add("eval_inputs", t, "gguf_many_metadata", "a GGUF header of many metadata keys", 64 * KiB, [](std::size_t b) {
      const std::size_t count = units(b, 21);
      std::string out = gguf_header(0, count);
      for (std::size_t i = 0; i < count; ++i) {
        put_gguf_string(out, "k." + n(i));
        put_u32(out, 0);  // uint8
        out += '\x07';
      }
      return framed(0, out);
    });
    add("eval_inputs", t, "gguf_many_tensors", "a GGUF header of many tensors", 64 * KiB, [](std::size_t b) {
      const std::size_t count = units(b, 40);
      std::string out = gguf_header(count, 0);
      for (std::size_t i = 0; i < count; ++i) {
        put_gguf_string(out, "t." + n(i));
        put_u32(out, 1);   // dimensions
        put_u64(out, 32);  // 32 elements
        put_u32(out, 0);   // F32
        put_u64(out, 0);   // offset
      }
      out.append(160, '\0');  // the data, after the padding
      return framed(0, out);
    });
    add("eval_inputs", t, "gguf_string_array", "a GGUF metadata array of many strings", 64 * KiB, [](std::size_t b) {
      const std::size_t count = units(b, 10);
      std::string out = gguf_header(0, 1);
      put_gguf_string(out, "tokenizer.ggml.tokens");
      put_u32(out, 9);  // array
      put_u32(out, 8);  // of strings
      put_u64(out, count);
      for (std::size_t i = 0; i < count; ++i) put_gguf_string(out, "ab");
      return framed(0, out);
    });
    add("eval_inputs", t, "gguf_nested_arrays", "a GGUF metadata array of many arrays", 64 * KiB, [](std::size_t b) {
      const std::size_t count = units(b, 14);
      std::string out = gguf_header(0, 1);
      put_gguf_string(out, "k");
      put_u32(out, 9);  // array
      put_u32(out, 9);  // of arrays
      put_u64(out, count);
      for (std::size_t i = 0; i < count; ++i) {
        put_u32(out, 0);  // of uint8
        put_u64(out, 2);
        out += "\x01\x02";
      }
      return framed(0, out);
    });
    add("eval_inputs", t, "verdict_many_lines", "a judge's answer of many reasoning lines", 64 * KiB,
        [](std::size_t b) { return framed(1, repeated_text(b, "", "The answer covers the task.\n", "Score: 7")); });
    add("eval_inputs", t, "verdict_near_misses", "many lines that almost are verdicts", 64 * KiB, [](std::size_t b) {
      return framed(1, repeated_text(b, "", "Score: 7/10\nVerdict: better!\nChoice: Z\n", "Score: 7"));
    });
    add("eval_inputs", t, "verdict_long_line", "one long line, then the verdict", 64 * KiB,
        [](std::size_t b) { return framed(1, std::string(b, 'a') + "\nScore: 7"); });
    add("eval_inputs", t, "verdict_white_space", "white space around a verdict", 64 * KiB,
        [](std::size_t b) {
          return framed(1, repeated_text(b / 2, "", " \t\r\n", "Reasons.\nScore: 7") + std::string(b / 2, ' '));
        });
    add("eval_inputs", t, "csv_long_row", "a CSV row of many fields", 64 * KiB, [](std::size_t b) {
      return framed(2, repeated_text(b, "item_id,prompt,response,score\r\n", "a,", "5\r\n"));
    });
    add("eval_inputs", t, "csv_many_rows", "many CSV rows", 64 * KiB, [](std::size_t b) {
      return framed(2, repeated(b, "item_id,prompt,response,score\r\n",
                                [](std::size_t i) { return n(i) + ",\"a, b\",\"say \"\"hi\"\"\",5\r\n"; }));
    });
    add("eval_inputs", t, "csv_long_quoted_field", "one quoted field of many doubled quotes and line ends", 64 * KiB,
        [](std::size_t b) { return framed(2, repeated_text(b, "item_id,prompt,response,score\r\n0,\"", "a\"\"\r\n", "\",,5\r\n")); });
    add("eval_inputs", t, "csv_many_broken_rows", "many rows with a stray quote (each an error)", 64 * KiB,
        [](std::size_t b) { return framed(2, repeated_text(b, "item_id,prompt,response,score\r\n", "a\"b,c,d,1\r\n")); });
    const std::string eval_head = R"({"backends":[{"name":"d","kind":"demo"}],)";
    const std::string eval_tail =
        R"("reference":"c0","templates":[{"name":"t","messages":[{"role":"user","content":"{{x}}"}]}],)"
        R"("prompts":[{"template":"t","variables":{"x":"hi"}}]})";
    add("eval_inputs", t, "evaluation_many_candidates", "an evaluation file of many candidates", 64 * KiB,
        [=](std::size_t b) {
          return framed(3, repeated(b, eval_head + R"("candidates":[)",
                                    [](std::size_t i) {
                                      return std::string(i ? "," : "") + R"({"name":"c)" + n(i) + R"(","backend":"d"})";
                                    },
                                    "]," + eval_tail));
        });
    add("eval_inputs", t, "evaluation_many_backends", "an evaluation file of many backends", 64 * KiB,
        [=](std::size_t b) {
          return framed(3, repeated(b, R"({"backends":[{"name":"d","kind":"demo"})",
                                    [](std::size_t i) { return R"(,{"name":"d)" + n(i) + R"(","kind":"demo"})"; },
                                    R"(],"candidates":[{"name":"c0","backend":"d"},{"name":"c1","backend":"d"}],)" +
                                        eval_tail));
        });
    add("eval_inputs", t, "evaluation_many_templates", "an evaluation file of many templates", 64 * KiB,
        [=](std::size_t b) {
          return framed(3, repeated(b, eval_head + R"("candidates":[{"name":"c0","backend":"d"},{"name":"c1","backend":"d"}],"templates":[)",
                                    [](std::size_t i) {
                                      return std::string(i ? "," : "") + R"({"name":"t)" + n(i) +
                                             R"(","messages":[{"role":"user","content":"{{x}}"}]})";
                                    },
                                    R"(],"reference":"c0","prompts":[{"template":"t0","variables":{"x":"hi"}}]})"));
        });
    add("eval_inputs", t, "evaluation_many_prompts", "an evaluation file of many prompts", 64 * KiB,
        [=](std::size_t b) {
          return framed(3, repeated(b, eval_head + R"("candidates":[{"name":"c0","backend":"d"},{"name":"c1","backend":"d"}],)"
                                        R"("reference":"c0","templates":[{"name":"t","messages":[{"role":"user","content":"{{x}}"}]}],"prompts":[)",
                                    [](std::size_t i) {
                                      return std::string(i ? "," : "") + R"({"template":"t","variables":{"x":"hi )" +
                                             n(i) + "\"}}";
                                    },
                                    "]}"));
        });
    add("eval_inputs", t, "evaluation_many_embedders", "an evaluation file of many embedders", 64 * KiB,
        [=](std::size_t b) {
          return framed(3, repeated(b, eval_head + R"("candidates":[{"name":"c0","backend":"d"},{"name":"c1","backend":"d"}],"embedders":[)",
                                    [](std::size_t i) {
                                      return std::string(i ? "," : "") + R"({"name":"e)" + n(i) + R"("})";
                                    },
                                    "]," + eval_tail));
        });
  }

  // ---- config: the gateway's configuration, read and checked.
  {
    const auto t = llmgate_linearity_config;
    add("config", t, "many_backends", "a config of many backends", 64 * KiB, [](std::size_t b) {
      return repeated(b, R"({"backends":[{"name":"b0","kind":"demo"})",
                      [](std::size_t i) { return R"(,{"name":"b)" + n(i + 1) + R"(","kind":"demo"})"; },
                      "]," + minimal_config_tail);
    });
    add("config", t, "many_models", "a config of many models", 64 * KiB, [](std::size_t b) {
      return repeated(b, R"({"backends":[{"name":"b0","kind":"demo"}],"models":[{"name":"m","backend":"b0"})",
                      [](std::size_t i) { return R"(,{"name":"m)" + n(i) + R"(","backend":"b0"})"; },
                      R"(],"tenants":[{"name":"t","api_key":"k"}]})");
    });
    add("config", t, "many_tenants", "a config of many tenants", 64 * KiB, [](std::size_t b) {
      return repeated(b, R"({"backends":[{"name":"b0","kind":"demo"}],"models":[{"name":"m","backend":"b0"}],"tenants":[{"name":"t","api_key":"k"})",
                      [](std::size_t i) { return R"(,{"name":"t)" + n(i) + R"(","api_key":"k)" + n(i) + "\"}"; }, "]}");
    });
    add("config", t, "model_many_backends", "a model whose fallback list names many backends", 64 * KiB,
        [](std::size_t b) {
          const std::size_t count = units(b, 40);
          std::string backends = R"({"backends":[)";
          std::string list;
          for (std::size_t i = 0; i < count; ++i) {
            backends += std::string(i ? "," : "") + R"({"name":"b)" + n(i) + R"(","kind":"demo"})";
            list += std::string(i ? "," : "") + "\"b" + n(i) + "\"";
          }
          return backends + R"(],"models":[{"name":"m","backend":[)" + list + R"(]}],"tenants":[{"name":"t","api_key":"k"}]})";
        });
    add("config", t, "many_prices", "a config of many models, each priced", 64 * KiB, [](std::size_t b) {
      return repeated(b, R"({"backends":[{"name":"b0","kind":"demo"}],"tenants":[{"name":"t","api_key":"k"}],"models":[{"name":"m","backend":"b0"})",
                      [](std::size_t i) {
                        return R"(,{"name":"m)" + n(i) + R"(","backend":"b0","prices":{"input":1,"output":2}})";
                      },
                      "]}");
    });
    add("config", t, "many_aliases", "a router of many aliases", 64 * KiB, [](std::size_t b) {
      return repeated(b, R"({"backends":[{"name":"b0","kind":"demo"}],"tenants":[{"name":"t","api_key":"k"}],)"
                         R"("models":[{"name":"m","backend":"b0","routing":{"accuracy":0.5}}],"router":{"aliases":["auto")",
                      [](std::size_t i) { return ",\"alias" + n(i) + "\""; }, "]}}");
    });
    add("config", t, "many_routing_fields", "a model's routing of many task accuracies", 64 * KiB, [](std::size_t b) {
      return repeated(b, R"({"backends":[{"name":"b0","kind":"demo"}],"tenants":[{"name":"t","api_key":"k"}],)"
                         R"("models":[{"name":"m","backend":"b0","routing":{"accuracy":0.5,"task_accuracy":{"t":0.5)",
                      [](std::size_t i) { return ",\"task" + n(i) + "\":0.5"; }, "}}}]}");
    });
    add("config", t, "many_redis_endpoints", "a shared tier of many Redis endpoints", 64 * KiB, [](std::size_t b) {
      return repeated(b, R"({"backends":[{"name":"b0","kind":"demo"}],)" + minimal_config_tail.substr(0, minimal_config_tail.size() - 1) +
                             R"(,"shared":{"redis":{"endpoints":["127.0.0.1:6379")",
                      [](std::size_t i) { return ",\"10.0." + n(i / 250 % 250) + "." + n(i % 250) + ":7000\""; },
                      "]}}}");
    });
    add("config", t, "many_prompt_schemas", "many prompt schema paths", 64 * KiB, [](std::size_t b) {
      return repeated(b, R"({"backends":[{"name":"b0","kind":"demo"}],)" + minimal_config_tail.substr(0, minimal_config_tail.size() - 1) +
                             R"(,"prompt_schemas":["a.xml")",
                      [](std::size_t i) { return ",\"prompts/s" + n(i) + ".xml\""; }, "]}");
    });
    add("config", t, "long_strings", "long names and keys", 64 * KiB, [](std::size_t b) {
      const std::string x(b / 3, 'x');
      return R"({"backends":[{"name":")" + x + R"(","kind":"demo"}],"models":[{"name":")" + x + R"(","backend":")" + x +
             R"("}],"tenants":[{"name":"t","api_key":")" + x + "\"}]}";
    });
  }

#ifdef LLMGATE_LINEARITY_REDIS
  // ---- redis_reply: RESP replies through hiredis and the cluster client's readers (a reply may
  // take 1 MiB of the reader's bound, nodes counted: arrays are kept small).
  {
    const auto t = llmgate_linearity_redis_reply;
    add("redis_reply", t, "many_status_replies", "many +OK replies", 8 * KiB,
        [](std::size_t b) { return framed(31, repeated_text(b, "", "+OK\r\n")); });
    add("redis_reply", t, "many_bulk_replies", "many bulk string replies", 8 * KiB,
        [](std::size_t b) { return framed(31, repeated_text(b, "", "$5\r\nhello\r\n")); });
    add("redis_reply", t, "replies_bytewise", "many replies fed one byte at a time", 4 * KiB,
        [](std::size_t b) { return framed(0, repeated_text(b, "", ":12345\r\n$3\r\nabc\r\n")); });
    add("redis_reply", t, "many_redirects", "many -MOVED and -ASK errors", 8 * KiB, [](std::size_t b) {
      return framed(31, repeated_text(b, "", "-MOVED 12182 127.0.0.1:27103\r\n-ASK 100 [::1]:7000\r\n"));
    });
    add("redis_reply", t, "many_small_arrays", "many replies of small nested arrays", 8 * KiB, [](std::size_t b) {
      return framed(31, repeated_text(b, "", "*2\r\n*2\r\n:1\r\n$-1\r\n*1\r\n*1\r\n+x\r\n"));
    });
    add("redis_reply", t, "large_array", "one array of many integers (within the 1 MiB bound)", 4 * KiB,
        [](std::size_t b) { return framed(31, resp_array(b, [](std::size_t) { return std::string(":1\r\n"); })); });
    add("redis_reply", t, "cluster_slots_many_ranges", "a CLUSTER SLOTS reply of many ranges", 4 * KiB,
        [](std::size_t b) {
          return framed(31, resp_array(b, [](std::size_t i) {
                          return "*3\r\n:" + n(2 * i) + "\r\n:" + n(2 * i + 1) +
                                 "\r\n*2\r\n$9\r\n127.0.0.1\r\n:7000\r\n";
                        }));
        });
    add("redis_reply", t, "long_bulk_string", "one long bulk string", 64 * KiB, [](std::size_t b) {
      return framed(31, "$" + std::to_string(b) + "\r\n" + std::string(b, 'x') + "\r\n");
    });
  }
#endif
  return s;
}

struct timing {
  std::size_t bytes = 0;
  double seconds = std::numeric_limits<double>::infinity();
};

struct options {
  double threshold = 16;
  int reps = 3;
  double min_ms = 8;
  double scale = 1;
  double deadline = 10;
  std::set<std::string> known;
  std::vector<std::string> filters;
};

constexpr int sizes = 4;  // n, 2n, 4n, 8n

// time(last) / time(n), scaled to exactly 2^last times the bytes: at 8n,
// 8 is linear and 64 quadratic. Measured up to a smaller size only, when
// that size already went past the threshold.
double growth(const std::vector<timing>& t) {
  const std::size_t last = t.size() - 1;
  const double size_ratio = static_cast<double>(t[last].bytes) / static_cast<double>(t[0].bytes);
  return t[last].seconds / t[0].seconds * (static_cast<double>(std::size_t{1} << last) / size_ratio);
}

// In the child: times the shape at each size and writes "bytes seconds" lines to `out`;
// stops early once a size's time already grows past the threshold.
[[noreturn]] void measure(const shape& sh, const options& opt, int out) {
  // CPU time of this process (one thread): the time others take on a busy machine does not count.
  const auto cpu_now = [] {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
  };
  const auto base = std::max<std::size_t>(64, static_cast<std::size_t>(static_cast<double>(sh.base) * opt.scale));
  std::vector<timing> times;
  for (int k = 0; k < sizes; ++k) {
    const std::string input = sh.make(base << k);
    const auto* data = reinterpret_cast<const std::uint8_t*>(input.data());
    // The first call warms the caches and the allocator; a long one counts
    // as a measurement, and then one round more is enough.
    const double warm_start = cpu_now();
    sh.run(data, input.size());
    const double warm = cpu_now() - warm_start;
    const bool long_call = warm * 1e3 >= 4 * opt.min_ms;
    double best = long_call ? warm : std::numeric_limits<double>::infinity();
    for (int r = 0; r < (long_call ? 1 : opt.reps); ++r) {
      const double start = cpu_now();
      std::size_t calls = 0;
      double elapsed = 0;
      do {
        sh.run(data, input.size());
        ++calls;
        elapsed = cpu_now() - start;
      } while (elapsed * 1e3 < opt.min_ms);
      best = std::min(best, elapsed / static_cast<double>(calls));
    }
    times.push_back({input.size(), best});
    char line[64];
    const int length = std::snprintf(line, sizeof line, "%zu %.9g\n", input.size(), best);
    if (write(out, line, static_cast<std::size_t>(length)) < 0) _exit(3);
    if (k > 0 && growth(times) > opt.threshold) break;  // past the threshold already: 8n would only take longer
  }
  _exit(0);
}

struct run_result {
  std::vector<timing> times;
  std::string failure;  ///< why the run did not finish: a crash, the deadline
  bool superlinear(const options& opt) const { return !failure.empty() || growth(times) > opt.threshold; }
};

// Runs the measurement in a child process, reading its lines until it ends or `deadline` passes.
run_result run_child(const shape& sh, const options& opt, double deadline) {
  run_result result;
  int fds[2];
  if (pipe(fds) != 0) {
    result.failure = "pipe() failed";
    return result;
  }
  std::fflush(stdout);
  const pid_t child = fork();
  if (child < 0) {
    result.failure = "fork() failed";
    return result;
  }
  if (child == 0) {
    close(fds[0]);
    measure(sh, opt, fds[1]);
  }
  close(fds[1]);
  using clock = std::chrono::steady_clock;
  const auto stop = clock::now() + std::chrono::duration<double>(deadline);
  std::string text;
  bool timed_out = false;
  for (;;) {
    const double left = std::chrono::duration<double>(stop - clock::now()).count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(left * 1000) + 1);
    if (ready < 0) continue;
    if (ready == 0) continue;  // the deadline is checked above
    char buffer[256];
    const ssize_t got = read(fds[0], buffer, sizeof buffer);
    if (got <= 0) break;  // the child closed its end: it ended
    text.append(buffer, static_cast<std::size_t>(got));
  }
  close(fds[0]);
  if (timed_out) kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  for (std::size_t at = 0; at < text.size();) {
    const auto end = text.find('\n', at);
    if (end == std::string::npos) break;
    timing t;
    char* rest = nullptr;
    t.bytes = std::strtoul(text.c_str() + at, &rest, 10);
    t.seconds = std::strtod(rest, nullptr);
    result.times.push_back(t);
    at = end + 1;
  }
  if (timed_out) {
    result.failure = "still running after " + std::to_string(static_cast<int>(deadline)) + " s, at size " +
                     std::to_string(result.times.size()) + " of " + std::to_string(sizes);
  } else if (WIFSIGNALED(status)) {
    result.failure = "crashed (signal " + std::to_string(WTERMSIG(status)) + "): a finding, run the fuzz target on it";
  } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || result.times.size() < 2) {
    result.failure = "the measuring process failed (status " + std::to_string(status) + ")";
  }
  return result;
}

std::string describe(const std::vector<timing>& t) {
  std::string out;
  char line[96];
  for (std::size_t k = 0; k < t.size(); ++k) {
    std::snprintf(line, sizeof line, "%s%zu KiB %.3g ms", k ? ", " : "", t[k].bytes / KiB, t[k].seconds * 1e3);
    out += line;
  }
  return out;
}

bool matches(const shape& sh, const options& opt) {
  if (opt.filters.empty()) return true;
  for (const auto& f : opt.filters)
    if (sh.full_name().find(f) != std::string::npos) return true;
  return false;
}

int usage(const char* program) {
  std::fprintf(stderr,
               "usage: %s [--list] [--threshold R] [--reps N] [--min-ms M] [--scale F] [--deadline S]\n"
               "          [--known A,B] [--dump SHAPE BYTES] [filter...]\n",
               program);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  options opt;
  bool list = false;
  std::string dump;
  std::size_t dump_bytes = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const auto value = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", argv[i]);
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--list") {
      list = true;
    } else if (arg == "--threshold") {
      opt.threshold = std::strtod(value(), nullptr);
    } else if (arg == "--reps") {
      opt.reps = std::max(1, static_cast<int>(std::strtol(value(), nullptr, 10)));
    } else if (arg == "--min-ms") {
      opt.min_ms = std::strtod(value(), nullptr);
    } else if (arg == "--scale") {
      opt.scale = std::strtod(value(), nullptr);
    } else if (arg == "--deadline") {
      opt.deadline = std::strtod(value(), nullptr);
    } else if (arg == "--known") {
      const std::string names = value();
      for (std::size_t at = 0; at <= names.size();) {
        const auto end = std::min(names.find(',', at), names.size());
        if (end > at) opt.known.insert(names.substr(at, end - at));
        at = end + 1;
      }
    } else if (arg == "--dump") {
      dump = value();
      dump_bytes = std::strtoul(value(), nullptr, 10);
    } else if (arg.starts_with("--")) {
      return usage(argv[0]);
    } else {
      opt.filters.emplace_back(arg);
    }
  }

  // Freed memory is kept for the next call rather than given back to the
  // system: otherwise a block above glibc's mmap threshold (128 KiB at
  // first) is mapped afresh, page faults and all, on every call, and the
  // time per byte jumps at that size whatever the parser does.
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  const auto shapes = all_shapes();
  if (!dump.empty()) {
    for (const auto& sh : shapes)
      if (sh.full_name() == dump) {
        const std::string input = sh.make(dump_bytes);
        std::fwrite(input.data(), 1, input.size(), stdout);
        return 0;
      }
    std::fprintf(stderr, "no shape %s (--list lists them)\n", dump.c_str());
    return 2;
  }
  if (list) {
    for (const auto& sh : shapes)
      std::printf("%-45s n = %3zu KiB  %s%s\n", sh.full_name().c_str(), sh.base / KiB, sh.what.c_str(),
                  sh.bounded ? " [bounded]" : "");
    return 0;
  }
  for (const auto& name : opt.known) {
    bool exists = false;
    for (const auto& sh : shapes) exists = exists || sh.full_name() == name;
    if (!exists) std::printf("note: --known names %s, which is no shape\n", name.c_str());
  }

  std::printf("linearity: time(8n) / time(n) must stay at most %.3g (8 is linear, 64 quadratic); %d rounds of %.3g ms "
              "per size, least kept\n",
              opt.threshold, opt.reps, opt.min_ms);
  std::vector<std::string> failed;
  std::vector<std::string> known_failed;
  std::size_t measured = 0;
  const auto started = std::chrono::steady_clock::now();
  for (const auto& sh : shapes) {
    if (!matches(sh, opt)) continue;
    ++measured;
    const bool known = opt.known.contains(sh.full_name());
    const auto shape_started = std::chrono::steady_clock::now();
    run_result run = run_child(sh, opt, opt.deadline);
    int runs = 1;
    // A run that says what was not expected (past the threshold, or a known
    // shape within it) may be the machine's noise: a second run decides.
    if (known != run.superlinear(opt)) {
      run = run_child(sh, opt, opt.deadline);
      ++runs;
    }
    const bool superlinear = run.superlinear(opt);
    const double ratio = run.failure.empty() ? growth(run.times) : 0;
    const char* verdict = !superlinear ? (known ? "LINEAR" : "ok") : (known ? "KNOWN" : "FAIL");
    std::printf("%-6s %-45s %6.1f  %s (%.1f s%s)%s\n", verdict, sh.full_name().c_str(), ratio,
                describe(run.times).c_str(),
                std::chrono::duration<double>(std::chrono::steady_clock::now() - shape_started).count(),
                runs > 1 ? ", second run" : "", !superlinear && !sh.bounded && ratio < 2 ? " (flat: refused early?)" : "");
    if (superlinear) {
      std::string message = sh.target + ": " + sh.what + " (" + sh.name + "): ";
      if (!run.failure.empty()) {
        message += run.failure + "; " + describe(run.times);
      } else {
        char text[200];
        std::snprintf(text, sizeof text, "time grows faster than linear: time(%zun) / time(n) = %.1f > %.3g", 
                      std::size_t{1} << (run.times.size() - 1), ratio, opt.threshold);
        message += text + std::string(" (") + describe(run.times) + ")";
      }
      (known ? known_failed : failed).push_back(message);
      if (!known) std::printf("       FAIL: %s\n", message.c_str());
    } else if (known) {
      std::printf("       %s is listed in --known but grew linearly in two runs: if it was fixed, take it off\n",
                  sh.full_name().c_str());
    }
    std::fflush(stdout);
  }
  const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("linearity: %zu shapes in %.1f s, %zu superlinear", measured, total, failed.size());
  if (!known_failed.empty()) std::printf(", %zu known to be (--known)", known_failed.size());
  std::printf("\n");
  for (const auto& message : known_failed) std::printf("known superlinear: %s\n", message.c_str());
  for (const auto& message : failed) std::printf("SUPERLINEAR: %s\n", message.c_str());
  if (measured == 0) {
    std::printf("linearity: no shape matches the filters\n");
    return 2;
  }
  return failed.empty() ? 0 : 1;
}
