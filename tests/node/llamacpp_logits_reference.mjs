// llama.cpp itself (node-llama-cpp's prebuilt CPU build) as the reference for surge's GGUF
// forward pass: for each model file and prompt (token ids), prefills the prompt, then
// decodes greedily one token at a time, and records llama.cpp's next-token distribution at
// every position. tests/reference/test_gguf_vs_llamacpp.py feeds the same ids to surge.
//
// usage: node llamacpp_logits_reference.mjs SPEC.json OUT_DIR
//   SPEC.json: {"models": [{"name", "path", "prompts": [...]}], "new_tokens": N}; a prompt
//   is an array of token ids or a string (tokenized by llama.cpp, with BOS prepended).
// Writes OUT_DIR/NAME.json ({"vocab_size", "runs": [{"ids": prompt + greedy tokens}]}) and
// OUT_DIR/NAME.RUN.logprobs.f32: float32 [ids.length - 1, vocab], row i = log p(. | ids[0..i]).
// The probabilities come from node-llama-cpp's softmax over the raw logits (greedy sampler,
// so no top-k/top-p/temperature touches them); they underflow to 0 (log = -inf) more than
// ~87 nats below the top logit, which the comparison ignores.
// Exits 77 (ctest: skipped) when node-llama-cpp is not installed.
import fs from "node:fs";
import path from "node:path";

let nodeLlamaCpp;
try {
  nodeLlamaCpp = await import(process.env.SURGE_NODE_LLAMA_CPP ?? "node-llama-cpp");
} catch (error) {
  console.log(`node-llama-cpp is not installed (${error.code ?? error.message}); skipping`);
  process.exit(77);
}
const { getLlama, LlamaLogLevel } = nodeLlamaCpp;

const [specPath, outDir] = process.argv.slice(2);
if (!outDir) {
  console.error("usage: node llamacpp_logits_reference.mjs SPEC.json OUT_DIR");
  process.exit(2);
}
const spec = JSON.parse(fs.readFileSync(specPath, "utf8"));
const newTokens = spec.new_tokens ?? 32;
const llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error });

// One position's distribution as log-probabilities in token order.
function logProbRow(probabilities, vocab) {
  const row = new Float32Array(vocab).fill(-Infinity);
  for (const [token, p] of probabilities) row[token] = Math.log(p);
  return row;
}

const withProbs = { generateNext: { token: true, probabilities: true, options: { temperature: 0 } } };

// Prefill `prompt` (a distribution at every position), then greedy-decode `newTokens`.
// The greedy sampler leaves every token in the candidate list: the map covers the vocab.
async function runPrompt(sequence, prompt) {
  await sequence.clearHistory();
  const rows = [];
  const out = await sequence.controlledEvaluate(prompt.map((t) => [t, withProbs]));
  const vocab = out[0].next.probabilities.size;
  for (let i = 0; i < prompt.length; ++i) rows.push(logProbRow(out[i].next.probabilities, vocab));
  const ids = [...prompt];
  let next = out[prompt.length - 1].next.token;
  for (let step = 0; step < newTokens; ++step) {
    ids.push(next);
    if (step === newTokens - 1) break;  // the last token's distribution is not needed
    const [result] = await sequence.controlledEvaluate([[next, withProbs]]);
    rows.push(logProbRow(result.next.probabilities, vocab));
    next = result.next.token;
  }
  return { ids, rows, vocab };
}

fs.mkdirSync(outDir, { recursive: true });
for (const { name, path: modelPath, prompts } of spec.models) {
  const model = await llama.loadModel({ modelPath, gpuLayers: 0 });
  // F32 K/V cache: llama.cpp's default F16 cache would round every key and value.
  const context = await model.createContext({
    contextSize: 256, batchSize: 256, sequences: 1, threads: 1, flashAttention: false,
    experimentalKvCacheKeyType: "F32", experimentalKvCacheValueType: "F32",
  });
  const sequence = context.getSequence();
  const result = { vocab_size: 0, runs: [] };
  for (let r = 0; r < prompts.length; ++r) {
    const prompt = typeof prompts[r] === "string"
      ? [model.tokens.bos, ...model.tokenize(prompts[r])] : prompts[r];
    const { ids, rows, vocab } = await runPrompt(sequence, prompt);
    result.vocab_size = vocab;
    const buffer = Buffer.alloc(rows.length * vocab * 4);
    rows.forEach((row, i) => Buffer.from(row.buffer).copy(buffer, i * vocab * 4));
    fs.writeFileSync(path.join(outDir, `${name}.${r}.logprobs.f32`), buffer);
    result.runs.push({ ids });
  }
  fs.writeFileSync(path.join(outDir, `${name}.json`), JSON.stringify(result));
  console.log(`${name}: ${prompts.length} prompts, vocab ${result.vocab_size}`);
  await context.dispose();
  await model.dispose();
}
