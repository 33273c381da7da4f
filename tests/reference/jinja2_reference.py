#!/usr/bin/env python3
"""Chat templates rendered by Python's `jinja2` set up as transformers sets it up
(ImmutableSandboxedEnvironment, trim_blocks, lstrip_blocks, loopcontrols, a `generation`
block tag, its `tojson` filter, `raise_exception` and `strftime_now` globals), for surge's
Jinja differential check (tokenizer/jinja/diff_check.cc reads the JSON).

  jinja2_reference.py [--checker jinja_diff_check] NODE_CASES.json OUT.json

NODE_CASES.json is what tests/node/jinja_cases.mjs wrote (the DeepSeek-V3, Qwen3, Llama-3
and Llama-2 templates with their conversations): every case is rendered again here. Added:
SmolLM2-135M-Instruct's template (from the GGUF's tokenizer.chat_template, read with the
`gguf` package), tests/data/chat_template_smollm2_tools.jinja and
tests/data/chat_template_simple.jinja, each over seeded conversations (system or not,
multi-turn, tools and tool calls, add_generation_prompt on and off).

Left out: the node cases with no messages at all (Llama-2's). The API refuses an empty
`messages` before any template runs (api/chat_input.cc), and there Python raises on
`messages[0]['role']` while @huggingface/jinja, and surge with it, yields undefined
(tokenizer/jinja/README.md): a difference no request can reach.
"""
import json
import os
import random
import subprocess
import sys
from datetime import datetime

import gguf
import jinja2
from jinja2 import nodes
from jinja2.ext import Extension
from jinja2.sandbox import ImmutableSandboxedEnvironment

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SMOLLM2 = os.path.join(ROOT, "models/SmolLM2-135M-Instruct/SmolLM2-135M-Instruct.Q4_1.gguf")
FILE_TEMPLATES = {"smollm2_tools": "tests/data/chat_template_smollm2_tools.jinja",
                  "simple": "tests/data/chat_template_simple.jinja"}
SEED = 20261207


class GenerationBlock(Extension):
    """{% generation %}...{% endgeneration %}: rendered as its body (transformers uses it
    to find the assistant's tokens)."""
    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return nodes.CallBlock(self.call_method("_render", []), [], [], body).set_lineno(lineno)

    def _render(self, caller):
        return caller()


def environment():
    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(value, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[GenerationBlock, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
    return env


def render(template, context):
    try:
        return {"expected": template.render(**context)}
    except Exception as error:  # the template's own raise_exception, or a type error: both must fail
        return {"error": str(error)}


def smollm2_template():
    field = gguf.GGUFReader(SMOLLM2).fields["tokenizer.chat_template"]
    return bytes(field.parts[field.data[0]]).decode("utf-8")


USERS = ["Hello!", "What is the capital of France?", "Write a haiku about the sea.\n\nMake it rhyme.",
         "Привет! Как дела?", "日本語で答えてください。", "emoji 🎉🚀👩‍💻", "quotes ' \" \\ {{ x }} {% y %}",
         "  padded  \n", "", "What's the weather in Paris and in Tokyo?"]
ASSISTANTS = ["Hi! How can I help you today?", "The capital of France is Paris.", "Sure 👍\n\n```python\nprint(1)\n```",
              "  padded answer\n", "", "Всё хорошо, спасибо!"]
SYSTEMS = ["You are a helpful assistant.", "Be concise.\nUse bullet points.\n", "系统提示：请用中文回答。", ""]
TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "description": "Weather in a city (°C, 日本語 ok)",
                                      "parameters": {"type": "object", "properties": {
                                          "city": {"type": "string"},
                                          "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
                                          "required": ["city"]}}},
    {"type": "function", "function": {"name": "search", "description": 'Search "the web"\twith tabs',
                                      "parameters": {"type": "object", "properties": {
                                          "query": {"type": "string"}, "limit": {"type": "integer", "default": 5},
                                          "threshold": {"type": "number", "default": 0.75}}}}},
    {"type": "function", "function": {"name": "no_params", "description": "", "parameters": {}}},
]
ARGUMENTS = [{"city": "Paris", "unit": "celsius"}, {"query": "héllo \"world\"", "limit": 3}, {},
             {"nested": [1, 2.5, None, True, {"deep": "🚀"}]}]


def conversation(rng, name):
    messages = []
    if rng.random() < 0.5:
        messages.append({"role": "system", "content": rng.choice(SYSTEMS)})
    turns = rng.randint(1, 6)
    for turn in range(turns):
        messages.append({"role": "user", "content": rng.choice(USERS)})
        if turn == turns - 1 and rng.random() < 0.5:
            break
        if name == "smollm2_tools" and rng.random() < 0.35:
            calls = [{"id": f"call_{rng.randint(1000, 9999)}", "type": "function",
                      "function": {"name": rng.choice(TOOLS)["function"]["name"],
                                   "arguments": (json.dumps if rng.random() < 0.5 else (lambda a: a))(
                                       rng.choice(ARGUMENTS))}} for _ in range(rng.randint(1, 2))]
            messages.append({"role": "assistant", "content": rng.choice(["", None, "Let me check."]),
                             "tool_calls": calls})
            messages += [{"role": "tool", "content": '{"temperature": 21}'} for _ in calls]
        messages.append({"role": "assistant", "content": rng.choice(ASSISTANTS)})
    context = {"messages": messages, "bos_token": "<|im_start|>", "eos_token": "<|im_end|>",
               "add_generation_prompt": rng.random() < 0.6}
    if name == "smollm2_tools" and rng.random() < 0.6:
        context["tools"] = TOOLS[:rng.randint(1, len(TOOLS))]
    return context


def main(argv):
    checker = None
    if len(argv) > 2 and argv[1] == "--checker":
        checker, argv = argv[2], argv[:1] + argv[3:]
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        doc = json.load(f)
    templates = dict(doc["templates"])
    templates["smollm2"] = smollm2_template()
    for name, path in FILE_TEMPLATES.items():
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            templates[name] = f.read()
    cases = [{"template": c["template"], "context": c["context"]} for c in doc["cases"] if c["context"]["messages"]]
    print(f"jinja2_reference: {len(doc['cases']) - len(cases)} node cases without messages left out")
    rng = random.Random(SEED)
    for name in ["smollm2", *FILE_TEMPLATES]:
        cases += [{"template": name, "context": conversation(rng, name)} for _ in range(200)]
    env = environment()
    compiled = {name: env.from_string(source) for name, source in templates.items()}
    for case in cases:
        case.update(render(compiled[case["template"]], case["context"]))
    out = {"reference": f"jinja2 {jinja2.__version__} (transformers' environment)", "templates": templates,
           "cases": cases}
    with open(argv[2], "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False)
    errors = sum("error" in c for c in cases)
    print(f"jinja2_reference: {len(cases)} cases over {len(templates)} templates ({errors} raise) -> {argv[2]}")
    return subprocess.run([checker, argv[2]]).returncode if checker else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
