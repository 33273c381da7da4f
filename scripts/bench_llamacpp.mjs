// llama.cpp's speed on a GGUF file through node-llama-cpp (its prebuilt CPU llama.cpp), as
// scripts/bench_vs_llamacpp.sh's baseline: prompt processing of PP tokens in one batch and
// single-stream greedy decode of TG tokens after a 16-token prompt -- the shapes of
// engine/generate_bench's BM_Prefill/512 and BM_GreedyDecode/128. Prints one JSON line:
//   {"file", "threads", "pp_tokens", "pp_tok_s": [per rep], "tg_tokens", "tg_tok_s": [...]}
//
// usage: node scripts/bench_llamacpp.mjs FILE.gguf [--threads 2] [--pp 512] [--tg 128] [--reps 2] [--vocab 32000]
// The K/V cache is llama.cpp's default (F16), as a llama.cpp user runs it. Decode goes
// through LlamaContextSequence.controlledEvaluate, one token per call with greedy sampling
// in llama.cpp; the JavaScript round trip per token is part of what is timed (measured
// with the 17M test models at ~0.1-0.2 ms/token, small next to the 110M model's step).
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const entry = process.env.SURGE_NODE_LLAMA_CPP ??
  path.join(root, "tests/node/node_modules/node-llama-cpp/dist/index.js");
let nodeLlamaCpp;
try {
  nodeLlamaCpp = await import(entry);
} catch (error) {
  console.error(`node-llama-cpp is not installed (${error.code ?? error.message})`);
  process.exit(77);
}
const { getLlama, LlamaLogLevel } = nodeLlamaCpp;

const args = process.argv.slice(2);
const file = args[0];
const option = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const threads = option("threads", 2), pp = option("pp", 512), tg = option("tg", 128);
const reps = option("reps", 2), vocab = option("vocab", 32000);
if (!file) {
  console.error("usage: node bench_llamacpp.mjs FILE.gguf [--threads 2] [--pp 512] [--tg 128] [--reps 2] [--vocab 32000]");
  process.exit(2);
}

// The same ids as generate_bench's Prompt(): (i * 7919 + 3) % vocab.
const prompt = (n, vocab) => Array.from({ length: n }, (_, i) => (i * 7919 + 3) % vocab);

const llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error,
                               maxThreads: threads });
const model = await llama.loadModel({ modelPath: file, gpuLayers: 0 });
const context = await model.createContext({
  contextSize: Math.max(1024, pp + 16, tg + 32), batchSize: Math.max(512, pp), sequences: 1,
  threads: { ideal: threads, min: threads }, flashAttention: false,
});
const sequence = context.getSequence();
const greedy = { generateNext: { token: true, options: { temperature: 0 } } };

async function promptProcessing() {
  await sequence.clearHistory();
  const ids = prompt(pp, vocab);
  const start = performance.now();
  await sequence.evaluateWithoutGeneratingNewTokens(ids);
  return pp / ((performance.now() - start) / 1e3);
}

async function decode() {
  await sequence.clearHistory();
  const ids = prompt(16, vocab);
  const out = await sequence.controlledEvaluate(ids.map((t, i) => (i === 15 ? [t, greedy] : t)));
  let next = out[15].next.token;
  const start = performance.now();
  for (let i = 0; i < tg; ++i) {
    const [result] = await sequence.controlledEvaluate([[next, greedy]]);
    next = result.next.token;
  }
  return tg / ((performance.now() - start) / 1e3);
}

await promptProcessing();  // warm-up: page in the weights, size the buffers
const result = { file: path.basename(file), threads, pp_tokens: pp, pp_tok_s: [],
                 tg_tokens: tg, tg_tok_s: [] };
for (let r = 0; r < reps; ++r) {
  result.pp_tok_s.push(await promptProcessing());
  result.tg_tok_s.push(await decode());
}
console.log(JSON.stringify(result));
await context.dispose();
await model.dispose();
