// GGUF files written by `surge convert` read back with an independent reader
// (@huggingface/gguf): metadata, tensor table, alignment and sizes. Skipped when the
// package is not installed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

let gguf = null;
try {
  ({ gguf } = await import("@huggingface/gguf"));
} catch {
  gguf = null;
}
const SURGE = process.env.SURGE;

// ggml type -> [block elements, block bytes]
const BLOCK = { 0: [1, 4], 1: [1, 2], 2: [32, 18], 8: [32, 34], 12: [256, 144], 14: [256, 210], 30: [1, 2] };

for (const type of ["f32", "q8_0", "q4_k_m"]) {
  test(`surge convert --type ${type} reads back with @huggingface/gguf`, { skip: !gguf || !SURGE }, async () => {
    const out = join(mkdtempSync(join(tmpdir(), "surge-gguf-")), `stories.${type}.gguf`);
    execFileSync(SURGE, ["convert", "models/stories260K", out, "--type", type]);
    const { metadata, tensorInfos, tensorDataOffset } = await gguf(out, { allowLocalFile: true });
    assert.equal(metadata.version, 3);
    assert.equal(metadata["general.architecture"], "llama");
    assert.equal(metadata["llama.block_count"], 5);
    assert.equal(metadata["llama.embedding_length"], 64);
    assert.equal(metadata["llama.attention.head_count_kv"], 4);
    assert.equal(metadata["tokenizer.ggml.model"], "llama");
    const vocab = JSON.parse(readFileSync("models/stories260K/tokenizer.json", "utf8")).model.vocab;
    const tokens = metadata["tokenizer.ggml.tokens"];
    assert.equal(tokens.length, 512);
    for (const [text, id] of Object.entries(vocab)) assert.equal(tokens[id], text);
    assert.equal(metadata["tokenizer.ggml.bos_token_id"], 1);
    // 1 embedding + 5 layers x 9 + final norm (tied: no output)
    assert.equal(tensorInfos.length, 1 + 5 * 9 + 1);
    const size = BigInt(statSync(out).size);
    let end = 0n;
    for (const t of tensorInfos) {
      const [elements, bytes] = BLOCK[t.dtype];
      const n = t.shape.reduce((a, b) => a * b, 1n);
      const tensorBytes = (n / BigInt(elements)) * BigInt(bytes);
      assert.equal(t.offset % 32n, 0n, t.name);
      assert.ok(t.offset >= end, `${t.name} overlaps`);
      end = t.offset + tensorBytes;
      assert.ok(tensorDataOffset + end <= size, `${t.name} past the end`);
      if (t.shape.length === 1) assert.equal(t.dtype, 0, `${t.name} is a 1-D tensor: F32`);
    }
    assert.equal(tensorDataOffset % 32n, 0n);
  });
}
