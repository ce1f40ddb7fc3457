// The gateway through the official OpenAI Node client (npm `openai`, the
// version tests/node pins), for tests/conformance/openai_sdk_test.cpp, which
// starts the gateways and upstreams and passes where they are:
//
//   node --test-reporter=tap openai_sdk.mjs '{"packages": "<folder holding node_modules>",
//        "gateway": "http://127.0.0.1:<port>/v1", "narrow": "...", "key": "..."}'
//
// "gateway" serves test-model (the in-test upstream, answering as
// sdk_upstream.hpp says: "Answer to: <last message>", the tool "weather"
// called when asked "CALL weather", a 500 when asked "FAIL"), stale-model
// (the same behind a relay that closes connections idle for a second) and
// stories260K (node-llama-cpp); "narrow" admits one request at a time.
import assert from "node:assert/strict";
import {test} from "node:test";
import {setTimeout as sleep} from "node:timers/promises";
import {pathToFileURL} from "node:url";

import {ask, rejection} from "./sdk_checks.mjs";

const settings = JSON.parse(process.argv[2]);
const sdk = await import(pathToFileURL(`${settings.packages}/node_modules/openai/index.mjs`));
const {default: OpenAI, APIError, APIConnectionError, AuthenticationError, BadRequestError,
       InternalServerError, NotFoundError, RateLimitError} = sdk;

// No retries: a request the SDK would retry must not hide a failure.
const clientOf = (baseURL, apiKey = settings.key) => new OpenAI({baseURL, apiKey, maxRetries: 0, timeout: 60_000});
const client = clientOf(settings.gateway);

async function collect(stream) {
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}
const textOf = (chunks) => chunks.map((c) => c.choices[0]?.delta?.content ?? "").join("");

test("models: the list holds every configured model and the embedding model", async () => {
  const ids = [];
  for await (const model of client.models.list()) {
    assert.equal(model.object, "model");
    ids.push(model.id);
  }
  for (const id of ["test-model", "stale-model", "stories260K", "llmgate-hashing"]) assert.ok(ids.includes(id), id);
  assert.equal(new Set(ids).size, ids.length);
});

test("chat: a whole completion", async () => {
  const completion = await client.chat.completions.create({model: "test-model", messages: ask("Is the sky blue?")});
  assert.equal(completion.object, "chat.completion");
  assert.equal(completion.model, "test-model");
  assert.equal(completion.choices.length, 1);
  assert.equal(completion.choices[0].message.role, "assistant");
  assert.equal(completion.choices[0].message.content, "Answer to: Is the sky blue?");
  assert.equal(completion.choices[0].finish_reason, "stop");
  assert.equal(completion.usage.prompt_tokens, 10);
  assert.equal(completion.usage.completion_tokens, 5);
  assert.equal(completion.usage.total_tokens, 15);
});

test("chat: a stream without stream_options has no usage chunk", async () => {
  const chunks = await collect(await client.chat.completions.create(
      {model: "test-model", messages: ask("Why is grass green?"), stream: true}));
  assert.equal(textOf(chunks), "Answer to: Why is grass green?");
  for (const chunk of chunks) {
    assert.equal(chunk.object, "chat.completion.chunk");
    assert.equal(chunk.choices.length, 1);
    assert.equal(chunk.usage ?? null, null);
  }
  assert.equal(chunks.at(-1).choices[0].finish_reason, "stop");
});

test("chat: a stream with include_usage ends with a usage chunk whose choices are []", async () => {
  const chunks = await collect(await client.chat.completions.create(
      {model: "test-model", messages: ask("How far is the moon?"), stream: true,
       stream_options: {include_usage: true}}));
  assert.equal(textOf(chunks), "Answer to: How far is the moon?");
  const last = chunks.at(-1);
  assert.deepEqual(last.choices, []);
  assert.equal(last.usage.prompt_tokens, 10);
  assert.equal(last.usage.completion_tokens, 5);
  assert.equal(last.usage.total_tokens, 15);
  for (const chunk of chunks.slice(0, -1)) {
    assert.equal(chunk.choices.length, 1);
    assert.equal(chunk.usage ?? null, null);
  }
});

test("embeddings: the SDK's default (base64) decodes to the 384 floats the float form gives", async () => {
  const input = "a small cat sat on the mat";
  const base64 = await client.embeddings.create({model: "llmgate-hashing", input});
  const floats = await client.embeddings.create({model: "llmgate-hashing", input, encoding_format: "float"});
  assert.equal(base64.data.length, 1);
  assert.equal(floats.data.length, 1);
  const decoded = base64.data[0].embedding;
  const plain = floats.data[0].embedding;
  assert.equal(plain.length, 384);
  assert.equal(decoded.length, 384);
  assert.ok(plain.some((x) => x !== 0));
  // base64 carries float32: each equals the float form rounded to float32.
  assert.deepEqual(decoded, plain.map(Math.fround));
});

test("embeddings: encoding_format float gives numbers for each input, in order", async () => {
  const reply = await client.embeddings.create(
      {model: "llmgate-hashing", input: ["first text", "second text"], encoding_format: "float"});
  assert.deepEqual(reply.data.map((d) => d.index), [0, 1]);
  for (const d of reply.data) {
    assert.equal(d.object, "embedding");
    assert.equal(d.embedding.length, 384);
    assert.ok(d.embedding.every((x) => typeof x === "number"));
  }
});

test("embeddings: an unknown encoding_format is a BadRequestError", async () => {
  const error = await rejection(client.embeddings.create(
      {model: "llmgate-hashing", input: "text", encoding_format: "hex"}));
  assert.ok(error instanceof BadRequestError, String(error));
  assert.equal(error.status, 400);
});

test("400: max_tokens \"ten\" is a BadRequestError naming the param", async () => {
  const error = await rejection(client.chat.completions.create(
      {model: "test-model", messages: ask("Count to ten."), max_tokens: "ten"}));
  assert.ok(error instanceof BadRequestError, String(error));
  assert.equal(error.status, 400);
  assert.equal(error.param, "max_tokens");
});

test("400: a request without a model is a BadRequestError \"model is required\"", async () => {
  const error = await rejection(client.chat.completions.create({messages: ask("Which model?")}));
  assert.ok(error instanceof BadRequestError, String(error));
  assert.equal(error.status, 400);
  assert.match(error.message, /model is required/);
});

test("400: the upstream's context_length_exceeded passes through, with no upstream address", async () => {
  const error = await rejection(client.chat.completions.create(
      {model: "test-model", messages: ask("TOO LONG a prompt")}));
  assert.ok(error instanceof BadRequestError, String(error));
  assert.equal(error.status, 400);
  assert.equal(error.code, "context_length_exceeded");
  assert.doesNotMatch(error.message, /127\.0\.0\.1|http:/);
});

test("401: a wrong key is an AuthenticationError", async () => {
  const error = await rejection(clientOf(settings.gateway, "wrong-key").chat.completions.create(
      {model: "test-model", messages: ask("Who am I?")}));
  assert.ok(error instanceof AuthenticationError, String(error));
  assert.equal(error.status, 401);
});

test("404: an unknown model is a NotFoundError", async () => {
  const error = await rejection(client.chat.completions.create({model: "no-such-model", messages: ask("Hello?")}));
  assert.ok(error instanceof NotFoundError, String(error));
  assert.equal(error.status, 404);
});

test("413: bodies over the limit arrive as an APIError with status 413, not a connection error", async () => {
  for (const mebibytes of [2, 8]) {
    const error = await rejection(client.chat.completions.create(
        {model: "test-model", messages: ask("x".repeat(mebibytes << 20))}));
    assert.ok(!(error instanceof APIConnectionError), `${mebibytes} MiB: ${error}`);
    assert.ok(error instanceof APIError, `${mebibytes} MiB: ${error}`);
    assert.equal(error.status, 413, `${mebibytes} MiB`);
  }
});

test("429: a request past the admission limit is a RateLimitError", async () => {
  const narrow = clientOf(settings.narrow);
  const first = narrow.chat.completions.create({model: "test-model", messages: ask("Am I first?")});
  await sleep(300);  // the first is at the upstream, which answers after a second
  const error = await rejection(narrow.chat.completions.create({model: "test-model", messages: ask("Am I second?")}));
  assert.ok(error instanceof RateLimitError, String(error));
  assert.equal(error.status, 429);
  assert.equal((await first).choices[0].message.content, "Answer to: Am I first?");
});

test("stale pool: after a burst and 1.5 s of quiet every request succeeds", async () => {
  const askStale = async (question) => {
    const completion = await client.chat.completions.create({model: "stale-model", messages: ask(question)});
    assert.equal(completion.choices[0].message.content, `Answer to: ${question}`);
  };
  const burst = (label) => Promise.all(Array.from({length: 8}, (_, i) => askStale(`burst ${label} ${i}`)));
  await burst("one");  // eight connections in the gateway's pool
  await sleep(1500);   // the upstream has closed them all
  for (let i = 0; i < 4; ++i) await askStale(`after the quiet ${i}`);
  await sleep(1500);
  await burst("two");
});

test("responses: a whole response", async () => {
  const response = await client.responses.create({model: "test-model", input: "Is the sky blue?"});
  assert.equal(response.object, "response");
  assert.match(response.id, /^resp_llmgate-/);
  assert.equal(response.status, "completed");
  assert.equal(response.model, "test-model");
  assert.equal(response.output_text, "Answer to: Is the sky blue?");
  assert.equal(response.output.length, 1);
  assert.equal(response.output[0].type, "message");
  assert.equal(response.output[0].role, "assistant");
  assert.deepEqual(response.usage, {input_tokens: 10, input_tokens_details: {cached_tokens: 0}, output_tokens: 5,
                                    output_tokens_details: {reasoning_tokens: 0}, total_tokens: 15});
});

test("responses: a cached response is the fresh one, byte for byte", async () => {
  const request = {model: "test-model", instructions: "Be brief.", input: "Is water wet?"};
  const fresh = await client.responses.create(request).withResponse();
  const cached = await client.responses.create(request).withResponse();
  assert.equal(fresh.response.headers.get("x-llmgate-cache"), "miss");
  assert.equal(cached.response.headers.get("x-llmgate-cache"), "exact");
  assert.deepEqual(cached.data.output[0].content, fresh.data.output[0].content);
  assert.equal(cached.data.output_text, "Answer to: Is water wet?");
});

test("responses: the SDK's stream helper assembles the streamed response", async () => {
  const stream = client.responses.stream({model: "test-model", input: "Why is the sea salty?"});
  let text = "";
  stream.on("response.output_text.delta", (event) => { text += event.delta; });
  const response = await stream.finalResponse();  // the helper's final response has no output_text
  assert.equal(text, "Answer to: Why is the sea salty?");
  assert.equal(response.status, "completed");
  assert.equal(response.output[0].content[0].text, "Answer to: Why is the sea salty?");
  assert.equal(response.usage.output_tokens, 5);
});

test("responses: stream: true gives the Responses events in order, numbered", async () => {
  const events = [];
  for await (const event of await client.responses.create({model: "test-model", input: "Count to two.", stream: true}))
    events.push(event);
  assert.deepEqual(events.map((e) => e.type),
                   ["response.created", "response.in_progress", "response.output_item.added",
                    "response.content_part.added", "response.output_text.delta", "response.output_text.delta",
                    "response.output_text.done", "response.content_part.done", "response.output_item.done",
                    "response.completed"]);
  assert.deepEqual(events.map((e) => e.sequence_number), [...events.keys()]);
});

test("responses: a function call and its output make a round trip", async () => {
  const tools = [{type: "function", name: "weather", description: "Today's weather", strict: false,
                  parameters: {type: "object", properties: {town: {type: "string"}}}}];
  const first = await client.responses.create({model: "test-model", tools, input: "CALL weather in Oslo"});
  const call = first.output.find((item) => item.type === "function_call");
  assert.deepEqual({call_id: call.call_id, name: call.name, arguments: call.arguments},
                   {call_id: "call_1", name: "weather", arguments: "{\"town\":\"Oslo\"}"});
  const second = await client.responses.create({
    model: "test-model", tools,
    input: [{role: "user", content: "CALL weather in Oslo"}, ...first.output,
            {type: "function_call_output", call_id: call.call_id, output: "4 C and rain"}]});
  assert.equal(second.output_text, "Answer to: 4 C and rain");
});

test("responses: previous_response_id is a BadRequestError naming it", async () => {
  const error = await rejection(client.responses.create(
      {model: "test-model", input: "And Spain?", previous_response_id: "resp_1"}));
  assert.ok(error instanceof BadRequestError, String(error));
  assert.equal(error.status, 400);
  assert.equal(error.param, "previous_response_id");
  assert.equal(error.code, "unsupported_parameter");
});

test("responses: an upstream failure is an InternalServerError", async () => {
  const error = await rejection(client.responses.create({model: "test-model", input: "FAIL now"}));
  assert.ok(error instanceof InternalServerError, String(error));
  assert.ok(error.status >= 500, String(error.status));
});

test("engine: a whole completion from node-llama-cpp names the model asked for", async () => {
  const completion = await client.chat.completions.create(
      {model: "stories260K", messages: ask("Once upon a time"), max_tokens: 8});
  assert.equal(completion.object, "chat.completion");
  assert.equal(completion.model, "stories260K");
  assert.equal(typeof completion.choices[0].message.content, "string");
  assert.notEqual(completion.choices[0].message.content, "");
  assert.ok(completion.usage.prompt_tokens > 0);
  assert.ok(completion.usage.completion_tokens > 0);
  assert.equal(completion.usage.total_tokens, completion.usage.prompt_tokens + completion.usage.completion_tokens);
});

test("engine: a stream from node-llama-cpp with include_usage", async () => {
  const chunks = await collect(await client.chat.completions.create(
      {model: "stories260K", messages: ask("The little dog"), max_tokens: 8, stream: true,
       stream_options: {include_usage: true}}));
  assert.notEqual(textOf(chunks), "");
  for (const chunk of chunks) assert.equal(chunk.model, "stories260K");
  const last = chunks.at(-1);
  assert.deepEqual(last.choices, []);
  assert.ok(last.usage.completion_tokens > 0);
});

test("engine: a response from node-llama-cpp, whole and streamed", async () => {
  const whole = await client.responses.create({model: "stories260K", input: "Once upon a time", max_output_tokens: 8});
  assert.equal(whole.model, "stories260K");
  assert.notEqual(whole.output_text, "");
  assert.ok(["completed", "incomplete"].includes(whole.status), whole.status);
  assert.ok(whole.usage.output_tokens > 0);
  // Eight tokens may end the story short: the last event is then
  // response.incomplete, which the SDK's stream helper does not read.
  const events = [];
  for await (const event of await client.responses.create(
      {model: "stories260K", input: "The little dog", max_output_tokens: 8, stream: true})) events.push(event);
  const text = events.filter((e) => e.type === "response.output_text.delta").map((e) => e.delta).join("");
  assert.notEqual(text, "");
  const last = events.at(-1);
  assert.ok(["response.completed", "response.incomplete"].includes(last.type), last.type);
  assert.equal(last.response.output[0].content[0].text, text);
  assert.ok(last.response.usage.output_tokens > 0);
});
