// llama.cpp's own tokenizer as a reference for surge's GGUF tokenizers: loads each
// vocab-only .gguf with node-llama-cpp (prebuilt llama.cpp) and writes, for every corpus
// string, llama_tokenize(add_special = false, parse_special = true) and the detokenized
// text of those ids with and without specials. tokenizer/gguf_llamacpp_check.cc compares.
//
// usage: node llamacpp_tokenizer_reference.mjs CORPUS_REFERENCE.json OUT.json NAME=FILE.gguf ...
// Exits 77 (ctest: skipped) when node-llama-cpp is not installed. SURGE_NODE_LLAMA_CPP may
// name the package's entry file when it is installed elsewhere.
import fs from "node:fs";

let nodeLlamaCpp;
try {
  nodeLlamaCpp = await import(process.env.SURGE_NODE_LLAMA_CPP ?? "node-llama-cpp");
} catch (error) {
  console.log(`node-llama-cpp is not installed (${error.code ?? error.message}); skipping`);
  process.exit(77);
}
const { getLlama, LlamaLogLevel } = nodeLlamaCpp;

const [referencePath, outPath, ...specs] = process.argv.slice(2);
if (!outPath || specs.length === 0) {
  console.error("usage: node llamacpp_tokenizer_reference.mjs CORPUS_REFERENCE.json OUT.json NAME=FILE.gguf ...");
  process.exit(2);
}
const corpus = JSON.parse(fs.readFileSync(referencePath, "utf8")).corpus;
const llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error });
const out = { generator: "node-llama-cpp", models: {} };
for (const spec of specs) {
  const eq = spec.indexOf("=");
  const [name, path] = [spec.slice(0, eq), spec.slice(eq + 1)];
  const model = await llama.loadModel({ modelPath: path, vocabOnly: true });
  const result = { encode: [], decode_keep: [], decode_skip: [] };
  for (const text of corpus) {
    const ids = Array.from(model.tokenize(text, true));
    result.encode.push(ids);
    result.decode_keep.push(model.detokenize(ids, true));
    result.decode_skip.push(model.detokenize(ids, false));
  }
  out.models[name] = result;
  console.log(`${name}: ${corpus.length} strings`);
  await model.dispose();
}
fs.writeFileSync(outPath, JSON.stringify(out));
