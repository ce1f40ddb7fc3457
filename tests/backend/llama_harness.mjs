// A loopback OpenAI-compatible server over node-llama-cpp, for
// real_engine_test: a real inference engine (llama.cpp, 1 thread, CPU)
// behind /v1/models, /v1/chat/completions (whole and SSE with the usage
// chunk) and /v1/embeddings.
//
//   node llama_harness.mjs <folder holding node_modules> <model.gguf>
//
// Prints "listening <port> <pid>" once ready; serves one generation at a
// time; exits when its parent process is gone or on SIGTERM.
import http from "node:http";
import {basename} from "node:path";
import {pathToFileURL} from "node:url";

const [engineDir, modelPath] = process.argv.slice(2);
const {getLlama, LlamaCompletion} = await import(
    pathToFileURL(`${engineDir}/node_modules/node-llama-cpp/dist/index.js`));
const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
const model = await llama.loadModel({modelPath});
const context = await model.createContext({contextSize: 512, threads: 1});
const completion = new LlamaCompletion({contextSequence: context.getSequence()});
const embedder = await model.createEmbeddingContext({contextSize: 512, threads: 1});
const modelName = basename(modelPath, ".gguf");

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
const fail = (response, status, message) =>
    send(response, status, {error: {message, type: "invalid_request_error", param: null, code: null}});

async function chat(body, response) {
  const prompt = promptOf(body.messages ?? []);
  const promptTokens = model.tokenize(prompt).length;
  const maxTokens = Math.min(body.max_tokens ?? body.max_completion_tokens ?? 24, 128);
  const id = `chatcmpl-${Date.now()}`;
  const created = Math.floor(Date.now() / 1000);
  const chunk = (choices, extra = {}) =>
      `data: ${JSON.stringify({id, object: "chat.completion.chunk", created, model: modelName, choices, ...extra})}\n\n`;
  let completionTokens = 0;
  if (body.stream) {
    response.writeHead(200, {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"});
    response.write(chunk([{index: 0, delta: {role: "assistant", content: ""}, finish_reason: null}]));
  }
  const text = await completion.generateCompletion(prompt, {
    maxTokens, temperature: 0,
    onTextChunk(piece) {
      completionTokens += 1;
      if (body.stream) response.write(chunk([{index: 0, delta: {content: piece}, finish_reason: null}]));
    },
  });
  completionTokens = model.tokenize(text).length;
  const finish = completionTokens >= maxTokens ? "length" : "stop";
  const usage = {prompt_tokens: promptTokens, completion_tokens: completionTokens,
                 total_tokens: promptTokens + completionTokens, prompt_tokens_details: {cached_tokens: 0}};
  if (!body.stream) {
    return send(response, 200, {id, object: "chat.completion", created, model: modelName,
        choices: [{index: 0, message: {role: "assistant", content: text}, finish_reason: finish}], usage});
  }
  response.write(chunk([{index: 0, delta: {}, finish_reason: finish}]));
  if (body.stream_options?.include_usage) response.write(chunk([], {usage}));
  response.end("data: [DONE]\n\n");
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
