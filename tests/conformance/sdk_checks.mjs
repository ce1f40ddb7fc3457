// What the SDK suites' scripts (openai_sdk.mjs, anthropic_sdk.mjs) share.
import assert from "node:assert/strict";

// What `promise` was rejected with; fails when it was fulfilled.
export async function rejection(promise) {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail("the request succeeded");
}

// A conversation of one user message.
export const ask = (content) => [{role: "user", content}];
