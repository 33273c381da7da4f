// Reference outputs of @huggingface/tokenizers (tokenizers.js) for surge's tokenizer
// differential test: a deterministic corpus, and for each tokenizer its encodings and
// decodings, written as one JSON file that tokenizer/tokenizer_diff_check.cc compares.
//
// usage: node tokenizer_reference.mjs OUT.json NAME=DIR [NAME=DIR ...]
import fs from "node:fs";
import path from "node:path";
import { Tokenizer } from "@huggingface/tokenizers";

// mulberry32: a small seeded PRNG, so the corpus is the same on every run.
function Rng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n) => Math.floor(next() * n),
    pick: (list) => list[Math.floor(next() * list.length)],
  };
}

const HAND_WRITTEN = [
  "", " ", "  ", "\n", "\t", "\r\n", " \n ", "a", "Hello", "Hello, world!", "Hello world ",
  "Once upon a time, there was a little girl named Lily.",
  "The quick brown fox jumps over the lazy dog.", "  two leading spaces", "trailing spaces   ",
  "tabs\tand\t\ttabs\t", "new\nlines\n\n\nand\r\nCRLF\r\n", "mixed \t\n \u3000 \u00a0 whitespace",
  "double  spaces  and   triple", "end with newline\n", "end with spaces and newline  \n",
  "I'm sure you're right, aren't you? We'll see, they've said. It's John's.",
  "I'M SURE YOU'RE RIGHT, AREN'T YOU? WE'LL SEE, THEY'VE SAID. IT'S JOHN'S.",
  "don't DON'T Don'T 'S 'Ll 'Ve", "long s: it'\u017f and kelvin '\u212a", "he said 'hello' and ' s",
  "Hello . world , yes ! no ? it ' s fine n't", "Hello.World?Yes!No,Fine", "a . b . c .",
  "你好，世界！", "我爱北京天安门。今天天气很好。", "日本語のテキストです。カタカナもあります。ひらがな",
  "한국어 텍스트입니다. 안녕하세요!", "Привет, мир! Как дела?", "Γειά σου Κόσμε", "مرحبا بالعالم",
  "שלום עולם", "नमस्ते दुनिया", "สวัสดีชาวโลก", "Xin chào thế giới, tiếng Việt có dấu",
  "café naïve résumé señor Zürich Ångström", "cafe\u0301 nai\u0308ve re\u0301sume\u0301",
  "\u212b \u2126 \u212a \ufb01 \u1100\u1161\u11a8 \u0041\u030a", "Z\u0351\u036b\u0343\u036a\u0302\u036b\u033d\u034f\u0334a\u0315lgo",
  "😀 😃 😄 😁", "👍 👍🏻 👍🏼 👍🏽 👍🏾 👍🏿", "👨‍👩‍👧‍👦 👩‍💻 🏳️‍🌈 🧑🏽‍🚀", "🇺🇸🇯🇵🇩🇪 1️⃣ #️⃣ ❤️ ☺️",
  "emoji in text😀without spaces🎉yes", "🫠🥲🤌", "♥♦♣♠ ★☆ ✓✗ → ← ↑ ↓",
  "0", "7", "42", "123", "1234", "12345", "1234567890", "3.14159265358979", "1,234,567.89",
  "00000000000000000000001", "99999999999999999999999999999999", "-42 +17 1e10 0x1F 0b1010",
  "phone: +1 (555) 123-4567", "2024-01-15T12:34:56Z", "version 1.2.3-rc.4",
  "１２３ ٠١٢٣٤ ०१२ ①②③ ½ ² ³", "Ⅻ ⅻ ↉",
  "<s>", "</s>", "<unk>", "<s>Hello", "Hello</s>", "Hello <s> world", "end </s>", "an <unk> token",
  "<s><s></s></s>", "<s >", "< s>", "<<s>>", "<s", "s>", "</s",
  "<|begin_of_text|>", "<|begin_of_text|>Hello", "<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>",
  "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nHi!<|im_end|>\n<|im_start|>assistant\n",
  "<|im_start|><|im_end|>", "<|im_sta", "<|endoftext|>", "<think>\nreasoning\n</think>\n\nanswer",
  "<tool_call>{\"name\": \"f\"}</tool_call>", "<|begin▁of▁sentence|>", "<｜begin▁of▁sentence｜>",
  "<｜begin▁of▁sentence｜>Hello<｜end▁of▁sentence｜>", "<｜User｜>hi<｜Assistant｜>", "<｜▁pad▁｜>",
  "▁", "▁▁", "▁Hello", "Hello▁world", " ▁ ", "\u2581\u2581\u2581x",
  "def foo(x):\n    return x ** 2\n", "int main() {\n\tprintf(\"%d\\n\", 42);\n\treturn 0;\n}\n",
  "for (int i = 0; i < n; ++i) { sum += a[i] * b[i]; }", "SELECT * FROM users WHERE id = 1;",
  "{\"key\": [1, 2, 3], \"nested\": {\"a\": null, \"b\": true}}", "<div class=\"x\">Hello &amp; bye</div>",
  "https://example.com/path?query=1&b=2#frag", "user.name+tag@example.co.uk", "C:\\Users\\name\\file.txt",
  "$ ls -la | grep foo > out.txt 2>&1", "x = a if b else c  # comment", "    indented\n        more\n",
  "```python\nprint('hi')\n```", "**bold** _italic_ `code` [link](url)", "- item 1\n- item 2\n  - nested",
  "∑ᵢ xᵢ² = ∫₀¹ f(x) dx ≤ ∞", "α β γ δ ε ∀ ∃ ∈ ∉ ⊂ ⊆ ∪ ∩", "E = mc²; H₂O; x⁽ⁿ⁾",
  "Supercalifragilisticexpialidocious", "Pneumonoultramicroscopicsilicovolcanoconiosis",
  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "================================",
  "--------------------------------------------------------------------------------",
  "!!!!!!????....,,,,;;;;::::", "...", "…", "''''", "\"\"\"\"", "(((())))", "[[[]]]", "{{{}}}",
  "\u0000\u0001\u0007\u001b\u007f", "\u0085 NEL \u2028 LS \u2029 PS \ufeff BOM \u180e MVS \u200b ZWSP",
  "\ufffd replacement \ufffd", "ＡＢＣ ｆｕｌｌｗｉｄｔｈ　ｔｅｘｔ", "ｶﾀｶﾅ half-width",
  "Hello世界", "abc123def", "test_variable_name CamelCaseWord snake_case_word", "ALLCAPS lowercase MiXeD",
  "\t\t\tindented with tabs", "   \n   \n   ", "a\n\nb\n\n\nc", "line1\r\nline2\rline3",
  " leading space", "trailing space ", " both ", "word\u00a0nbsp", "x\u3000ideographic\u3000space",
  // Long inputs: past the 256-byte word cache limit, long runs, long numbers.
  "a".repeat(1000), " ".repeat(300) + "x", "\n".repeat(64), "\t ".repeat(100), "1".repeat(200),
  "ab".repeat(300) + " " + "日本".repeat(150), "😀".repeat(100), "The quick brown fox. ".repeat(40),
  "<s>".repeat(20) + "<|im_start|>".repeat(10), "x" + "\u0301".repeat(50),
];

const POOLS = {
  english: ["the", "a", "cat", "dog", "sat", "on", "mat", "running", "quickly", "Hello", "World",
    "tokenization", "is", "fun", "I'm", "you're", "can't", "won't", "they'll", "it's", "O'Brien",
    "New York", "Mr. Smith", "e.g.", "i.e.", "etc.", "U.S.A.", "Ph.D.", "well-known", "state-of-the-art"],
  cjk: ["中文", "汉字", "北京", "人工智能", "机器学习", "你好", "谢谢", "日本", "東京", "ありがとう",
    "こんにちは", "カタカナ", "コンピュータ", "한국", "서울", "감사합니다", "안녕", "大規模言語モデル", "龥", "〇"],
  other_scripts: ["Москва", "данные", "Ελλάδα", "λόγος", "القاهرة", "עברית", "हिन्दी", "ภาษาไทย",
    "ქართული", "Հայերեն", "বাংলা", "தமிழ்", "Tiếng Việt", "Ελληνικά", "ñandú", "Øresund", "Łódź", "İstanbul"],
  emoji: ["😀", "🎉", "🚀", "❤️", "👍🏽", "👨‍👩‍👧", "👩🏾‍🔬", "🏳️‍🌈", "🇫🇷", "🔥", "✨", "💯", "🤖", "🐍", "☕", "⭐", "©", "®", "™", "🧑‍🤝‍🧑"],
  numbers: ["0", "1", "12", "123", "1234", "12345", "123456", "3.14", "2.718", "1,000", "10%", "$9.99",
    "€5", "1st", "2nd", "100km", "0.001", "-1", "1/2", "24/7", "٣٤", "１０", "Ⅳ"],
  code: ["x", "=", "==", "!=", "->", "=>", "::", "();", "{}", "[]", "<>", "&&", "||", "++", "#include",
    "std::vector<int>", "self.x", "__init__", "0xFF", "/* c */", "// c", "\"str\"", "'c'", "`tpl`", "@decorator"],
  specials: ["<s>", "</s>", "<unk>", "<|im_start|>", "<|im_end|>", "<|endoftext|>", "<|begin_of_text|>",
    "<|eot_id|>", "<think>", "</think>", "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>", "<|begin▁of▁sentence|>",
    "<｜Assistant｜>", "<tool_call>", "<|im_start", "<s", "|>", "▁"],
  punct: [".", ",", "!", "?", ";", ":", "'", "\"", "(", ")", "-", "—", "–", "…", "«", "»", "“", "”", "‘", "’", "、", "。", "！", "？"],
  combining: ["e\u0301", "a\u0308", "n\u0303", "\u0915\u094d\u0937", "\u0e01\u0e34", "\u1100\u1161", "o\u0302\u0301", "\u212b", "\u212a"],
};
const SEPARATORS = [" ", " ", " ", "", "", "\n", "\t", "  ", "   ", "\n\n", " \n", "\r\n", "\u3000", "\u00a0", ", ", ". "];
// Code point ranges assigned by Unicode 14 (PCRE2 10.42's tables) to draw random text from.
const RANGES = [[0x20, 0x7e], [0xa0, 0x24f], [0x370, 0x3ff], [0x400, 0x4ff], [0x590, 0x5ff], [0x600, 0x6ff],
  [0x900, 0x97f], [0xe00, 0xe5b], [0x1100, 0x11ff], [0x2000, 0x206f], [0x2190, 0x22ff], [0x3040, 0x30ff],
  [0x4e00, 0x9fa5], [0xac00, 0xd7a3], [0xff01, 0xff5e], [0x1f300, 0x1f64f], [0x1f680, 0x1f6c5]];

function RandomFragment(rng) {
  const kind = rng.int(10);
  if (kind < 7) return rng.pick(POOLS[rng.pick(Object.keys(POOLS))]);
  if (kind === 7) {  // random code points
    let s = "";
    const n = 1 + rng.int(8);
    for (let i = 0; i < n; ++i) {
      const [lo, hi] = rng.pick(RANGES);
      s += String.fromCodePoint(lo + rng.int(hi - lo + 1));
    }
    return s;
  }
  if (kind === 8) {  // a long number or a long word
    const n = 5 + rng.int(40);
    const alphabet = rng.next() < 0.5 ? "0123456789" : "abcdefghijklmnopqrstuvwxyz";
    let s = "";
    for (let i = 0; i < n; ++i) s += alphabet[rng.int(alphabet.length)];
    return s;
  }
  return rng.pick(SEPARATORS).repeat(1 + rng.int(4));  // whitespace runs
}

function BuildCorpus(num_generated) {
  const rng = Rng(20240611);
  const corpus = [...HAND_WRITTEN];
  for (let i = 0; i < num_generated; ++i) {
    const n = 1 + rng.int(i % 10 === 0 ? 40 : 8);
    let s = "";
    for (let k = 0; k < n; ++k) s += (k > 0 ? rng.pick(SEPARATORS) : "") + RandomFragment(rng);
    if (rng.next() < 0.15) s = rng.pick(SEPARATORS) + s;  // leading or trailing whitespace
    if (rng.next() < 0.15) s += rng.pick(SEPARATORS);
    corpus.push(s);
  }
  return corpus;
}

// Random id sequences for decoding alone (byte tokens split mid-character, specials...).
function RandomIdLists(rng, vocab_size, special_ids, count) {
  const lists = [];
  for (let i = 0; i < count; ++i) {
    const n = 1 + rng.int(12);
    const ids = [];
    for (let k = 0; k < n; ++k) {
      const r = rng.next();
      if (r < 0.1 && special_ids.length > 0) ids.push(rng.pick(special_ids));
      else if (r < 0.4) ids.push(rng.int(Math.min(vocab_size, 300)));  // bytes and short pieces
      else ids.push(rng.int(vocab_size));
    }
    lists.push(ids);
  }
  return lists;
}

function Reference(name, dir, corpus) {
  const tokenizer_json = JSON.parse(fs.readFileSync(path.join(dir, "tokenizer.json"), "utf8"));
  const config_path = path.join(dir, "tokenizer_config.json");
  const config = fs.existsSync(config_path) ? JSON.parse(fs.readFileSync(config_path, "utf8")) : {};
  const tokenizer = new Tokenizer(tokenizer_json, config);
  const out = { name, dir, encode: [], encode_plain: [], decode_skip: [], decode_keep: [] };
  for (const text of corpus) {
    const ids = tokenizer.encode(text).ids;
    out.encode.push(ids);
    out.encode_plain.push(tokenizer.encode(text, { add_special_tokens: false }).ids);
    out.decode_skip.push(ids.length ? tokenizer.decode(ids, { skip_special_tokens: true }) : "");
    out.decode_keep.push(ids.length ? tokenizer.decode(ids, { skip_special_tokens: false }) : "");
  }
  let vocab_size = 0;
  for (const id of tokenizer.get_vocab().values()) vocab_size = Math.max(vocab_size, id + 1);
  const special_ids = tokenizer.added_tokens.filter((t) => t.special).map((t) => t.id);
  out.random_ids = RandomIdLists(Rng(7 + name.length), vocab_size, special_ids, 400);
  out.random_decode_skip = out.random_ids.map((ids) => tokenizer.decode(ids, { skip_special_tokens: true }));
  out.random_decode_keep = out.random_ids.map((ids) => tokenizer.decode(ids, { skip_special_tokens: false }));
  return out;
}

const [out_path, ...specs] = process.argv.slice(2);
if (!out_path || specs.length === 0) {
  console.error("usage: node tokenizer_reference.mjs OUT.json NAME=DIR [NAME=DIR ...]");
  process.exit(2);
}
const corpus = BuildCorpus(Number(process.env.SURGE_TOKENIZER_CORPUS_SIZE ?? 2400));
const result = { generator: "@huggingface/tokenizers 0.2.0", corpus, tokenizers: [] };
for (const spec of specs) {
  const eq = spec.indexOf("=");
  const [name, dir] = [spec.slice(0, eq), spec.slice(eq + 1)];
  const start = Date.now();
  result.tokenizers.push(Reference(name, dir, corpus));
  console.log(`${name}: ${corpus.length} strings in ${Date.now() - start} ms`);
}
fs.writeFileSync(out_path, JSON.stringify(result));
