"""A deterministic (seeded) corpus for the tokenizer differential tests against HF `tokenizers`:
hand-written edge cases, then generated strings mixing several scripts and languages, code,
whitespace runs, emoji (ZWJ sequences, skin tones, flags), numbers and the special tokens of
every tokenizer the tests use. Same seed, same list, on every machine.

  python tokenizer_corpus.py [COUNT]   # prints the corpus as JSON
"""
import json
import random
import sys

HAND_WRITTEN = [
    "", " ", "  ", "\n", "\t", "\r\n", " \n ", "a", "Hello", "Hello, world!", "Hello world ",
    "What is the capital of France?", "The capital of France is Paris.",
    "I'm sure you're right, aren't you? We'll see, they've said. It's John's.",
    "I'M SURE YOU'RE RIGHT, AREN'T YOU? WE'LL SEE.", "don't DON'T Don'T 'S 'Ll 'Ve",
    "你好，世界！", "日本語のテキストです。カタカナもあります。", "한국어 텍스트입니다.", "Привет, мир!",
    "Γειά σου Κόσμε", "مرحبا بالعالم", "שלום עולם", "नमस्ते दुनिया", "สวัสดีชาวโลก", "Xin chào thế giới",
    "café naïve résumé señor Zürich Ångström", "cafe\u0301 nai\u0308ve", "\u212b \u2126 \u212a \ufb01",
    "😀 😃 😄 😁", "👍 👍🏻 👍🏿", "👨‍👩‍👧‍👦 👩‍💻 🏳️‍🌈", "🇺🇸🇯🇵🇩🇪 1️⃣ #️⃣ ❤️", "emoji😀without spaces🎉yes",
    "0", "7", "42", "123", "1234", "12345", "1234567890", "3.14159265358979", "1,234,567.89",
    "00000000000000000000001", "-42 +17 1e10 0x1F 0b1010", "2024-01-15T12:34:56Z", "１２３ ٠١٢٣٤ ०१२ ①②③ ½ ² ³",
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|im_start|>user\nHi!<|im_end|>\n<|im_start|>assistant\n",
    "<|im_start|><|im_end|>", "<|im_sta", "<|im_start|>system\nYou are a helpful AI assistant named SmolLM<|im_end|>\n",
    "<repo_name>surge<file_sep>main.cc<filename>x.py<gh_stars>10<issue_start>", "<jupyter_code>print(1)<jupyter_output>1",
    "<s>", "</s>", "<unk>", "<s>Hello", "Hello</s>", "<s><s></s></s>", "<s >", "< s>", "<<s>>",
    "<|begin_of_text|>Hello", "<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>",
    "<think>\nreasoning\n</think>\n\nanswer", "<tool_call>{\"name\": \"f\"}</tool_call>",
    "<｜begin▁of▁sentence｜>Hello<｜end▁of▁sentence｜>", "<｜User｜>hi<｜Assistant｜>", "▁", "▁Hello", " ▁ ",
    "def foo(x):\n    return x ** 2\n", "int main() {\n\tprintf(\"%d\\n\", 42);\n\treturn 0;\n}\n",
    "for (int i = 0; i < n; ++i) { sum += a[i] * b[i]; }", "SELECT * FROM users WHERE id = 1;",
    "{\"key\": [1, 2, 3], \"nested\": {\"a\": null, \"b\": true}}", "<div class=\"x\">Hello &amp; bye</div>",
    "https://example.com/path?query=1&b=2#frag", "C:\\Users\\name\\file.txt", "$ ls -la | grep foo > out.txt 2>&1",
    "```python\nprint('hi')\n```", "∑ᵢ xᵢ² = ∫₀¹ f(x) dx ≤ ∞", "\u0000\u0001\u0007\u001b\u007f",
    "\u0085 NEL \u2028 LS \u2029 PS \ufeff BOM \u200b ZWSP", "ＡＢＣ ｆｕｌｌｗｉｄｔｈ", "\t\t\tindented with tabs",
    "   \n   \n   ", "a\n\nb\n\n\nc", "line1\r\nline2\rline3", "word\u00a0nbsp", "x\u3000ideographic\u3000space",
    "a" * 1000, " " * 300 + "x", "\n" * 64, "\t " * 100, "1" * 200, "ab" * 300 + " " + "日本" * 150, "😀" * 100,
    "The quick brown fox. " * 40, "<|im_start|>" * 10 + "<|endoftext|>" * 5, "x" + "\u0301" * 50,
]

POOLS = {
    "english": ["the", "a", "cat", "dog", "sat", "on", "mat", "running", "quickly", "Hello", "World", "I'm",
                "you're", "can't", "won't", "they'll", "it's", "O'Brien", "New York", "Mr. Smith", "e.g.",
                "U.S.A.", "well-known", "state-of-the-art", "assistant", "language", "model"],
    "european": ["Bonjour", "s'il vous plaît", "Straße", "Größe", "mañana", "niño", "Łódź", "İstanbul", "Øresund",
                 "ñandú", "coração", "façade", "Ελληνικά", "λόγος", "Москва", "данные", "Україна"],
    "asian": ["中文", "汉字", "北京", "人工智能", "机器学习", "日本", "東京", "ありがとう", "こんにちは", "カタカナ",
              "한국", "서울", "감사합니다", "大規模言語モデル", "ภาษาไทย", "Tiếng Việt", "हिन्दी", "বাংলা", "தமிழ்"],
    "rtl": ["القاهرة", "العربية", "עברית", "ירושלים", "فارسی"],
    "emoji": ["😀", "🎉", "🚀", "❤️", "👍🏽", "👨‍👩‍👧", "👩🏾‍🔬", "🏳️‍🌈", "🇫🇷", "🔥", "✨", "💯", "🤖", "🐍", "☕", "©", "™"],
    "numbers": ["0", "1", "12", "123", "1234", "12345", "123456", "3.14", "2.718", "1,000", "10%", "$9.99", "€5",
                "1st", "2nd", "100km", "0.001", "-1", "1/2", "24/7", "٣٤", "１０", "Ⅳ", "1e-5", "0xDEADBEEF"],
    "code": ["x", "=", "==", "!=", "->", "=>", "::", "();", "{}", "[]", "<>", "&&", "||", "++", "#include",
             "std::vector<int>", "self.x", "__init__", "0xFF", "/* c */", "// c", "\"str\"", "'c'", "`tpl`",
             "@decorator", "def", "return", "lambda x: x", "import numpy as np", "    ", "\t"],
    "specials": ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<repo_name>", "<file_sep>", "<filename>",
                 "<s>", "</s>", "<unk>", "<|begin_of_text|>", "<|eot_id|>", "<think>", "</think>",
                 "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>", "<tool_call>", "<|im_start", "<s", "|>", "▁"],
    "punct": [".", ",", "!", "?", ";", ":", "'", "\"", "(", ")", "-", "—", "–", "…", "«", "»", "“", "”", "、", "。"],
}
SEPARATORS = [" ", " ", " ", "", "", "\n", "\t", "  ", "   ", "\n\n", " \n", "\r\n", "\u3000", "\u00a0", ", ", ". "]
# Code point ranges to draw random text from (assigned in Unicode 14).
RANGES = [(0x20, 0x7e), (0xa0, 0x24f), (0x370, 0x3ff), (0x400, 0x4ff), (0x590, 0x5ff), (0x600, 0x6ff),
          (0x900, 0x97f), (0xe00, 0xe5b), (0x1100, 0x11ff), (0x2000, 0x206f), (0x2190, 0x22ff), (0x3040, 0x30ff),
          (0x4e00, 0x9fa5), (0xac00, 0xd7a3), (0xff01, 0xff5e), (0x1f300, 0x1f64f), (0x1f680, 0x1f6c5)]
SEED = 20261207


def _fragment(rng):
    kind = rng.randrange(10)
    if kind < 7:
        return rng.choice(POOLS[rng.choice(sorted(POOLS))])
    if kind == 7:
        return "".join(chr(rng.randint(*rng.choice(RANGES))) for _ in range(1 + rng.randrange(8)))
    if kind == 8:
        alphabet = "0123456789" if rng.random() < 0.5 else "abcdefghijklmnopqrstuvwxyz"
        return "".join(rng.choice(alphabet) for _ in range(5 + rng.randrange(40)))
    return rng.choice(SEPARATORS) * (1 + rng.randrange(4))  # whitespace runs


def corpus(num_generated=2000):
    rng = random.Random(SEED)
    out = list(HAND_WRITTEN)
    for i in range(num_generated):
        n = 1 + rng.randrange(40 if i % 10 == 0 else 8)
        s = "".join((rng.choice(SEPARATORS) if k else "") + _fragment(rng) for k in range(n))
        if rng.random() < 0.15:
            s = rng.choice(SEPARATORS) + s
        if rng.random() < 0.15:
            s += rng.choice(SEPARATORS)
        out.append(s)
    return out


if __name__ == "__main__":
    print(json.dumps(corpus(int(sys.argv[1]) if len(sys.argv) > 1 else 2000), ensure_ascii=False))
