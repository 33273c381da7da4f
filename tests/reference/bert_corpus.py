"""A deterministic corpus of >= 1,000 strings for the BERT tokenizer and encoder checks.

Hand-written cases (accents, CJK, punctuation, whitespace and control characters, long
words, [UNK] material, special tokens in text) and seeded random mixtures of them.
"""
import random

BASE = [
    "Hello, world!", "How do I reset my password?", "The quick brown fox jumps over the lazy dog.",
    "I can't believe it's not butter.", "don't won't shouldn't y'all", "e-mail: someone@example.com",
    "https://example.org/path?q=1&x=2#frag", "Price: $1,299.99 (incl. 20% VAT)", "3.14159 2.71828 1e-9",
    "café naïve résumé coöperate Ångström façade", "Crème brûlée à la mode", "ÉCOLE ÉLÉMENTAIRE",
    "Straße groß Fußball", "İstanbul ıstanbul IŞIK", "ΟΔΥΣΣΕΥΣ Ὀδυσσεύς ὁδός", "Москва и Санкт-Петербург",
    "中文分词测试", "我爱北京天安门。", "日本語のテキストです", "カタカナとひらがな", "한국어 문장입니다",
    "漢字と kana mixed 文", "𠀀𠀁 rare ideographs 𪜀", "豈更車 compatibility ideographs",
    "emoji 😀🎉👍🏽 and ☃ snowman", "Ethiopic ሰላም", "Tamil தமிழ்", "Thai ภาษาไทย", "Hindi हिन्दी",
    "Arabic مرحبا بالعالم", "Hebrew שלום", "mathematical ∑∫∂√∞ ≤ ≥ ≠", "arrows ←↑→↓ ⇒", "box ─│┌┐",
    "tab\tseparated\tvalues", "line1\nline2\r\nline3", "non\u00a0breaking\u2003em\u3000ideographic",
    "zero\u200bwidth\u200cjoiner\u200d", "bom\ufeffinside", "nul\x00char", "bell\x07and\x1bescape",
    "replacement \ufffd char", "soft\u00adhyphen", "combining e\u0301 a\u0308 o\u0302",
    "[CLS] text with [SEP] and [MASK] tokens [PAD] [UNK]", "[cls] lowercase specials [mask]",
    "supercalifragilisticexpialidocious", "antidisestablishmentarianism", "pneumonoultramicroscopicsilicovolcanoconiosis",
    "a" * 99, "b" * 100, "c" * 101, "x" * 250, "ab" * 60, "Donaudampfschifffahrtsgesellschaftskapitän",
    "...", "!!!???", "--==++", "(((nested)))", "\"quoted\" 'single' `back`", "#hashtag @mention",
    "C++ C# F# .NET", "snake_case camelCase PascalCase kebab-case", "ALL CAPS SENTENCE HERE",
    "   leading and trailing spaces   ", "", " ", "\n\n", "a", "I", "?", "1", "0123456789",
    "“smart quotes” ‘single’ «guillemets» „low“", "em—dash en–dash ellipsis…", "¿Qué? ¡Sí!",
    "naïve café in Zürich costs 5€", "¥100 £50 ₹20 ₩1000", "℃ ℉ № ™ © ®", "½ ¼ ¾ ² ³",
    "ﬁ ﬂ ligatures", "ｆｕｌｌｗｉｄｔｈ ＡＢＣ", "Ⅻ Ⅳ roman numerals", "ǅ ǈ titlecase digraphs",
    "Can you recommend a good book?", "What is the capital of France?", "Cancel my subscription please",
    "Do not cancel my subscription", "How long does shipping take to Canada?", "Is the store open on Sundays?",
]

WORDS = [
    "password", "reset", "account", "refund", "order", "shipping", "delivery", "cancel", "subscription",
    "invoice", "payment", "card", "login", "email", "phone", "address", "update", "change", "help",
    "broken", "return", "exchange", "warranty", "price", "discount", "coupon", "store", "hours",
    "café", "naïve", "über", "façade", "jalapeño", "Zoë", "Ærø", "smørrebrød", "piñata", "déjà",
    "中文", "東京", "北京", "世界", "日本", "こんにちは", "ありがとう", "안녕하세요", "Привет", "мир",
    "Γειά", "σου", "κόσμε", "שלום", "مرحبا", "नमस्ते", "😀", "🎉", "☃", "★", "♥", "§", "¶", "†",
    "don't", "it's", "we're", "they've", "I'm", "can't", "O'Neil", "rock'n'roll", "state-of-the-art",
    "123", "4.5", "1,000", "3rd", "24/7", "9:30am", "2024-06-01", "#1", "50%", "$20", "v2.0.1",
    "unbelievably", "misunderstanding", "internationalization", "electroencephalography",
    "xyzzyplugh", "qwertyuiop", "zxcvbnm", "Llanfairpwllgwyngyll", "floccinaucinihilipilification",
]
PUNCT = [".", ",", "!", "?", ";", ":", "-", "(", ")", "\"", "'", "…", "—", "–", "«", "»", "、", "。", "！", "？"]
SPACES = [" ", " ", " ", " ", "  ", "\t", "\n", "\u00a0", "\u3000"]


def corpus(size=1200, seed=35):
    """BASE, then seeded random sentences of WORDS, PUNCT and SPACES up to `size` strings."""
    rng = random.Random(seed)
    out = list(BASE)
    while len(out) < size:
        n = rng.randint(1, 24)
        parts = []
        for _ in range(n):
            r = rng.random()
            word = rng.choice(WORDS)
            if r < 0.15:
                word = word.upper()
            elif r < 0.3:
                word = word.capitalize()
            parts.append(word)
            if rng.random() < 0.2:
                parts.append(rng.choice(PUNCT))
            parts.append(rng.choice(SPACES))
        if rng.random() < 0.05:
            parts.append("[SEP]")
        out.append("".join(parts).strip(" ") if rng.random() < 0.8 else "".join(parts))
    return out
