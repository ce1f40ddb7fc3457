// The gateway's /v1/messages through Anthropic's Node client (npm
// `@anthropic-ai/sdk`, the version tests/node pins), for
// tests/conformance/anthropic_sdk_test.cpp, which starts the gateway and
// its upstreams and passes where they are:
//
//   node --test-reporter=tap anthropic_sdk.mjs '{"packages": "<folder holding node_modules>",
//        "gateway": "http://127.0.0.1:<port>", "key": "..."}'
//
// The gateway serves test-model (the in-test OpenAI-compatible upstream,
// which answers as sdk_upstream.hpp says: "Answer to: <last message>", the
// tool "weather" called when asked "CALL weather", a 500 when asked "FAIL",
// a 429 for "RATE LIMIT", a 529 for "OVERLOADED") and stories260K
// (node-llama-cpp); "limit" is the gateway's max_body_bytes.
import assert from "node:assert/strict";
import {test} from "node:test";
import {pathToFileURL} from "node:url";

import {ask, rejection} from "./sdk_checks.mjs";

const settings = JSON.parse(process.argv[2]);
const sdk = await import(pathToFileURL(`${settings.packages}/node_modules/@anthropic-ai/sdk/index.mjs`));
const {default: Anthropic, AuthenticationError, BadRequestError, ContentTooLargeError, InternalServerError,
       NotFoundError, OverloadedError, RateLimitError} = sdk;

// No retries: a request the SDK would retry must not hide a failure.
const clientOf = (apiKey = settings.key) =>
  new Anthropic({baseURL: settings.gateway, apiKey, maxRetries: 0, timeout: 60_000});
const client = clientOf();

test("messages: a whole answer", async () => {
  const message = await client.messages.create({model: "test-model", max_tokens: 64, messages: ask("Is the sky blue?")});
  assert.equal(message.type, "message");
  assert.equal(message.role, "assistant");
  assert.equal(message.model, "test-model");
  assert.match(message.id, /^msg_llmgate-/);
  assert.deepEqual(message.content, [{type: "text", text: "Answer to: Is the sky blue?"}]);
  assert.equal(message.stop_reason, "end_turn");
  assert.equal(message.usage.input_tokens, 10);
  assert.equal(message.usage.output_tokens, 5);
});

test("messages: a cached answer is the fresh one, byte for byte", async () => {
  const request = {model: "test-model", max_tokens: 64, system: "Be brief.", messages: ask("Is water wet?")};
  const fresh = await client.messages.create(request).withResponse();
  const cached = await client.messages.create(request).withResponse();
  assert.equal(fresh.response.headers.get("x-llmgate-cache"), "miss");
  assert.equal(cached.response.headers.get("x-llmgate-cache"), "exact");
  assert.deepEqual(cached.data.content, fresh.data.content);
  assert.equal(cached.data.content[0].text, "Answer to: Is water wet?");
});

test("messages: the SDK's stream helper assembles the streamed answer", async () => {
  const stream = client.messages.stream({model: "test-model", max_tokens: 64, messages: ask("Why is the sea salty?")});
  let text = "";
  stream.on("text", (delta) => { text += delta; });
  const message = await stream.finalMessage();
  assert.equal(text, "Answer to: Why is the sea salty?");
  assert.deepEqual(message.content, [{type: "text", text: "Answer to: Why is the sea salty?"}]);
  assert.equal(message.stop_reason, "end_turn");
  assert.equal(message.usage.output_tokens, 5);
});

test("messages: stream: true gives Anthropic's events in order", async () => {
  const events = [];
  for await (const event of await client.messages.create(
      {model: "test-model", max_tokens: 64, messages: ask("Count to two."), stream: true})) events.push(event.type);
  assert.deepEqual(events, ["message_start", "content_block_start", "content_block_delta", "content_block_delta",
                            "content_block_stop", "message_delta", "message_stop"]);
});

test("tools: a tool use and its result make a round trip", async () => {
  const tools = [{name: "weather", description: "Today's weather", input_schema: {type: "object", properties: {town: {type: "string"}}}}];
  const first = await client.messages.create({model: "test-model", max_tokens: 64, tools, messages: ask("CALL weather in Oslo")});
  assert.equal(first.stop_reason, "tool_use");
  const use = first.content.find((block) => block.type === "tool_use");
  assert.deepEqual({id: use.id, name: use.name, input: use.input}, {id: "call_1", name: "weather", input: {town: "Oslo"}});
  const second = await client.messages.create({
    model: "test-model", max_tokens: 64, tools,
    messages: [...ask("CALL weather in Oslo"), {role: "assistant", content: first.content},
               {role: "user", content: [{type: "tool_result", tool_use_id: use.id, content: "4 C and rain"}]}]});
  assert.deepEqual(second.content, [{type: "text", text: "Answer to: 4 C and rain"}]);
});

test("400: a request without max_tokens is a BadRequestError naming it", async () => {
  const error = await rejection(client.messages.create({model: "test-model", messages: ask("How long?")}));
  assert.ok(error instanceof BadRequestError, String(error));
  assert.equal(error.status, 400);
  assert.equal(error.error.type, "error");
  assert.equal(error.error.error.type, "invalid_request_error");
  assert.match(error.error.error.message, /max_tokens/);
});

test("401: a wrong key is an AuthenticationError", async () => {
  const error = await rejection(clientOf("wrong-key").messages.create({model: "test-model", max_tokens: 8, messages: ask("Who am I?")}));
  assert.ok(error instanceof AuthenticationError, String(error));
  assert.equal(error.status, 401);
});

test("404: an unknown model is a NotFoundError of type not_found_error", async () => {
  const error = await rejection(client.messages.create({model: "no-such-model", max_tokens: 8, messages: ask("Hello?")}));
  assert.ok(error instanceof NotFoundError, String(error));
  assert.equal(error.status, 404);
  assert.equal(error.error.error.type, "not_found_error");
});

test("5xx: an upstream failure is an InternalServerError of type api_error", async () => {
  const error = await rejection(client.messages.create({model: "test-model", max_tokens: 8, messages: ask("FAIL now")}));
  assert.ok(error instanceof InternalServerError, String(error));
  assert.ok(error.status >= 500, String(error.status));
  assert.equal(error.error.error.type, "api_error");
});

test("413: a body over the limit is a ContentTooLargeError of type request_too_large", async () => {
  const error = await rejection(client.messages.create(
      {model: "test-model", max_tokens: 8, messages: ask("x".repeat(settings.limit + 1))}));
  assert.ok(error instanceof ContentTooLargeError, String(error));
  assert.equal(error.status, 413);
  assert.equal(error.error.error.type, "request_too_large");
});

test("429: an upstream's rate limit is a RateLimitError of type rate_limit_error", async () => {
  const error = await rejection(client.messages.create({model: "test-model", max_tokens: 8, messages: ask("RATE LIMIT me")}));
  assert.ok(error instanceof RateLimitError, String(error));
  assert.equal(error.status, 429);
  assert.equal(error.error.error.type, "rate_limit_error");
});

test("529: an overloaded upstream is an OverloadedError of type overloaded_error", async () => {
  const error = await rejection(client.messages.create({model: "test-model", max_tokens: 8, messages: ask("OVERLOADED now")}));
  assert.ok(error instanceof OverloadedError, String(error));
  assert.equal(error.status, 529);
  assert.equal(error.error.error.type, "overloaded_error");
});

test("engine: a whole answer from node-llama-cpp", async () => {
  const message = await client.messages.create({model: "stories260K", max_tokens: 8, messages: ask("Once upon a time")});
  assert.equal(message.model, "stories260K");
  assert.equal(message.content[0].type, "text");
  assert.notEqual(message.content[0].text, "");
  assert.ok(["end_turn", "max_tokens"].includes(message.stop_reason), message.stop_reason);
  assert.ok(message.usage.input_tokens > 0);
  assert.ok(message.usage.output_tokens > 0);
});

test("engine: a stream from node-llama-cpp through the stream helper", async () => {
  const message = await client.messages.stream({model: "stories260K", max_tokens: 8, messages: ask("The little dog")}).finalMessage();
  assert.notEqual(message.content[0].text, "");
  assert.ok(message.usage.output_tokens > 0);
});
