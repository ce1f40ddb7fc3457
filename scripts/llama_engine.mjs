// A loopback OpenAI-compatible server over node-llama-cpp: the real
// inference engine of the suites that need one (real_engine_test,
// openai_sdk_test, prompt_reuse_test) and the engine the evaluation kit
// serves a GGUF candidate with (examples/evaluate). llama.cpp, 1 thread,
// CPU, behind /v1/models, /v1/chat/completions (whole and SSE with the
// usage chunk), /v1/embeddings and /tokenize.
//
//   node llama_engine.mjs <folder holding node_modules> <model.gguf> [slot context]
//
// The slot context (tokens per slot) is 512 unless given: stories260K's
// training context; the pool bench gives more, for its longest prompts.
//
// Sampling: temperature (0, greedy, when absent), top_p, top_k and seed as
// OpenAI's fields name them; max_tokens (24 when absent, at most 128).
//
// Prefix reuse as llama-server does it (tools/server/server-context.cpp):
// one context with SLOTS sequences, each a slot keeping the tokens it last
// evaluated. A request names its slot with `id_slot` (wrapping round, as the
// server allows), or gets the slot whose tokens share the longest prefix with
// its prompt (over 10% of it, --slot-prompt-similarity's default), else the
// least recently used one. With `cache_prompt` (default true) the slot keeps
// the common prefix and evaluates the rest, at least the last token; without
// it the slot starts empty. What the engine reused is what it did not
// evaluate: the sequence's token meter, read when the first token comes, says
// how many prompt tokens were decoded, and the sequence's next token index
// how long the prompt was. Both land in usage.prompt_tokens_details.
// cached_tokens and in `timings` {cache_n, prompt_n}, as llama-server reports
// them. Unlike llama-server there is no host-memory prompt cache
// (--cache-ram), no chunk reuse (--cache-reuse) and no chat template: the
// messages' contents joined by newlines are the prompt, after a BOS token.
//
// Prints "listening <port> <pid>" once ready; serves one generation at a
// time; exits when its parent process is gone or on SIGTERM.
import http from "node:http";
import {basename} from "node:path";
import {pathToFileURL} from "node:url";

const [engineDir, modelPath, slotContext] = process.argv.slice(2);
const {getLlama, LlamaCompletion} = await import(
    pathToFileURL(`${engineDir}/node_modules/node-llama-cpp/dist/index.js`));
const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
const model = await llama.loadModel({modelPath});
const SLOTS = 4;
const SLOT_CONTEXT = Number(slotContext ?? 512);  // tokens per slot
const SLOT_PROMPT_SIMILARITY = 0.1;
const context = await model.createContext({contextSize: SLOT_CONTEXT, sequences: SLOTS, threads: 1});
const slots = Array.from({length: SLOTS}, (_, id) => {
  const sequence = context.getSequence();
  return {id, sequence, completion: new LlamaCompletion({contextSequence: sequence}), lastUsed: -1};
});
let requestsServed = 0;
const embedder = await model.createEmbeddingContext({contextSize: 512, threads: 1});
const modelName = basename(modelPath, ".gguf");

// The tokens LlamaCompletion evaluates for `text`: BOS, then the text
// tokenized without the tokenizer's leading space.
const textTokens = (text) => model.tokenize(text, false, "trimLeadingSpace");
const promptTokensOf = (text) => (model.tokens.bos == null ? [] : [model.tokens.bos]).concat(textTokens(text));
// LlamaCompletion keeps a tenth of the context free for shifting; a longer
// prompt would be cut from its start, which llama-server refuses instead.
const LONGEST_PROMPT = SLOT_CONTEXT - Math.max(1, Math.floor(SLOT_CONTEXT / 10));

// One request at a time: llama.cpp's context sequence is not shared.
let queue = Promise.resolve();
const serially = (work) => (queue = queue.then(work, work));

const promptOf = (messages) =>
    messages.map((m) => (typeof m.content === "string" ? m.content
        : (m.content ?? []).map((p) => p.text ?? "").join(""))).join("\n");

const send = (response, status, body) => {
  response.writeHead(status, {"Content-Type": "application/json"});
  response.end(JSON.stringify(body));
};
const fail = (response, status, message, type = "invalid_request_error") =>
    send(response, status, {error: {message, type, param: null, code: null}});

// llama-server's get_available_slot: the named slot, else the most similar
// one holding tokens, else the least recently used.
function chooseSlot(idSlot, tokens) {
  if (Number.isInteger(idSlot) && idSlot >= 0) return slots[idSlot % SLOTS];
  let best = null, bestSimilarity = 0;
  for (const slot of slots) {
    if (slot.sequence.nextTokenIndex === 0) continue;
    const similarity = slot.sequence.compareContextTokens(tokens).firstDifferentIndex / tokens.length;
    if (similarity > bestSimilarity && similarity > SLOT_PROMPT_SIMILARITY) [best, bestSimilarity] = [slot, similarity];
  }
  return best ?? slots.reduce((lru, slot) => (slot.lastUsed < lru.lastUsed ? slot : lru));
}

// OpenAI's sampling fields as node-llama-cpp names them; greedy unless asked.
const samplingOf = (body) => ({
  temperature: body.temperature ?? 0,
  ...(body.top_p != null && {topP: body.top_p}),
  ...(body.top_k != null && {topK: body.top_k}),
  ...(body.seed != null && {seed: body.seed}),
});

async function chat(body, response) {
  const prompt = promptOf(body.messages ?? []);
  const tokens = promptTokensOf(prompt);
  if (tokens.length > LONGEST_PROMPT)
    return fail(response, 400, `request (${tokens.length} tokens) exceeds the available context size ` +
                `(${LONGEST_PROMPT} tokens), try increasing it`, "exceed_context_size_error");
  const maxTokens = Math.min(body.max_tokens ?? body.max_completion_tokens ?? 24, 128);
  const slot = chooseSlot(body.id_slot, tokens);
  slot.lastUsed = requestsServed++;
  const {sequence} = slot;
  if (body.cache_prompt === false) await sequence.clearHistory();

  const id = `chatcmpl-${Date.now()}`;
  const created = Math.floor(Date.now() / 1000);
  const chunk = (choices, extra = {}) =>
      `data: ${JSON.stringify({id, object: "chat.completion.chunk", created, model: modelName, choices, ...extra})}\n\n`;
  if (body.stream) {
    response.writeHead(200, {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"});
    response.write(chunk([{index: 0, delta: {role: "assistant", content: ""}, finish_reason: null}]));
  }
  const meter = sequence.tokenMeter.getState();
  const decoded = () => {
    const used = sequence.tokenMeter.diff(meter);
    return used.usedInputTokens + used.usedOutputTokens;
  };
  const started = performance.now();
  let evaluation = null;  // {n, cached, ms}: the prompt's evaluation, read when the first token comes
  const promptDone = () => {
    if (evaluation) return;
    const n = decoded();
    evaluation = {n, cached: sequence.nextTokenIndex - n, ms: performance.now() - started};
  };
  const text = await slot.completion.generateCompletion(tokens.slice(model.tokens.bos == null ? 0 : 1), {
    maxTokens, ...samplingOf(body),
    onToken: promptDone,
    onTextChunk(piece) {
      if (body.stream) response.write(chunk([{index: 0, delta: {content: piece}, finish_reason: null}]));
    },
  });
  promptDone();
  const completionTokens = model.tokenize(text).length;
  const finish = completionTokens >= maxTokens ? "length" : "stop";
  const usage = {prompt_tokens: tokens.length, completion_tokens: completionTokens,
                 total_tokens: tokens.length + completionTokens,
                 prompt_tokens_details: {cached_tokens: evaluation.cached}};
  const timings = {cache_n: evaluation.cached, prompt_n: evaluation.n, prompt_ms: evaluation.ms,
                   predicted_n: completionTokens, predicted_ms: performance.now() - started - evaluation.ms};
  if (!body.stream) {
    return send(response, 200, {id, object: "chat.completion", created, model: modelName,
        choices: [{index: 0, message: {role: "assistant", content: text}, finish_reason: finish}], usage, timings});
  }
  // llama-server puts the timings on the last chunk it sends.
  const withUsage = body.stream_options?.include_usage;
  response.write(chunk([{index: 0, delta: {}, finish_reason: finish}], withUsage ? {} : {timings}));
  if (withUsage) response.write(chunk([], {usage, timings}));
  response.end("data: [DONE]\n\n");
}

// llama-server's POST /tokenize: {"content", "add_special"} -> {"tokens"};
// with add_special, exactly the tokens a chat prompt of that text evaluates.
function tokenize(body, response) {
  if (typeof body.content !== "string") return fail(response, 400, "content must be text");
  send(response, 200, {tokens: body.add_special ? promptTokensOf(body.content) : textTokens(body.content)});
}

async function embeddings(body, response) {
  const inputs = typeof body.input === "string" ? [body.input] : body.input;
  if (!Array.isArray(inputs) || inputs.length === 0) return fail(response, 400, "input must be text");
  const data = [];
  let tokens = 0;
  for (const [index, text] of inputs.entries()) {
    const embedding = await embedder.getEmbeddingFor(text);
    tokens += model.tokenize(text).length;
    data.push({object: "embedding", index, embedding: Array.from(embedding.vector)});
  }
  send(response, 200, {object: "list", data, model: modelName,
                       usage: {prompt_tokens: tokens, total_tokens: tokens}});
}

const server = http.createServer((request, response) => {
  let raw = "";
  request.on("data", (piece) => (raw += piece));
  request.on("end", () => serially(async () => {
    try {
      if (request.method === "GET" && request.url === "/v1/models")
        return send(response, 200, {object: "list", data: [{id: modelName, object: "model", owned_by: "local"}]});
      let body;
      try { body = JSON.parse(raw); } catch { return fail(response, 400, "body is not JSON"); }
      if (request.url === "/v1/chat/completions") return await chat(body, response);
      if (request.url === "/v1/embeddings") return await embeddings(body, response);
      if (request.url === "/tokenize") return tokenize(body, response);
      fail(response, 404, `no route ${request.url}`);
    } catch (error) {
      if (!response.headersSent) fail(response, 500, String(error));
      else response.end();
    }
  }));
});
server.keepAliveTimeout = 5000;
server.listen(0, "127.0.0.1", () => {
  console.log(`listening ${server.address().port} ${process.pid}`);
});
const parent = process.ppid;
setInterval(() => { try { process.kill(parent, 0); } catch { process.exit(0); } }, 500).unref();
process.on("SIGTERM", () => process.exit(0));
