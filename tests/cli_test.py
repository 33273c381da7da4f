#!/usr/bin/python3
"""End-to-end checks of the `surge` binary as a user runs it: goldens through the CLI,
JSON output shapes, tokenizer-only directories, and one-line errors for bad input."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
import urllib.error
import urllib.request

SURGE = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 else "build/surge"
MODEL = "models/stories260K"


def run(*args):
    return subprocess.run([SURGE, *args], capture_output=True, text=True, timeout=120)


class GenerateTest(unittest.TestCase):
    def test_json_output_matches_goldens(self):
        goldens = json.load(open(os.path.join(MODEL, "goldens.json")))
        for case in goldens["cases"][:3]:
            proc = run("generate", "--model", MODEL, "--prompt", case["prompt"],
                       "--max-tokens", "128", "--json")
            self.assertEqual(proc.returncode, 0, proc.stderr)
            lines = proc.stdout.splitlines()
            self.assertEqual(len(lines), 1, "--json prints exactly one line on stdout")
            out = json.loads(lines[0])
            self.assertEqual(out["prompt_token_ids"], case["input_ids"])
            self.assertEqual(out["output_token_ids"], case["output_ids"])
            self.assertEqual(out["text"], case["output_text"])

    def test_speculative_decoding_gives_the_goldens(self):
        # Greedy speculation changes how many passes run, never the tokens.
        case = json.load(open(os.path.join(MODEL, "goldens.json")))["cases"][0]
        for flags in (["--speculative", "ngram"], ["--speculative", "draft", "--draft-quantize", "int8"],
                      ["--speculative", "draft", "--num-speculative-tokens", "2"]):
            proc = run("generate", "--model", MODEL, "--prompt", case["prompt"], "--max-tokens", "128",
                       "--json", *flags)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertEqual(json.loads(proc.stdout)["output_token_ids"], case["output_ids"], flags)
            self.assertIn("proposed tokens accepted", proc.stderr, flags)

    def test_mtp_speculation_keeps_greedy_output(self):
        # DeepSeek-V3's MTP layer as the proposer (a random tiny V3, stories260K's tokenizer).
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run(["/usr/bin/python3", "tools/make_tiny_model.py", "--out", tmp, "--preset",
                            "deepseek-v3-tiny", "--config", '{"vocab_size": 512}'], check=True,
                           capture_output=True)
            outputs = []
            for flags in ([], ["--speculative", "mtp", "--num-speculative-tokens", "3"]):
                proc = run("generate", "--model", tmp, "--tokenizer", MODEL, "--prompt", "Once upon a time",
                           "--max-tokens", "40", "--ignore-eos", "--json", *flags)
                self.assertEqual(proc.returncode, 0, proc.stderr)
                outputs.append(json.loads(proc.stdout)["output_token_ids"])
            self.assertIn("speculative mtp", proc.stderr)
            self.assertEqual(outputs[0], outputs[1])
            self.assertEqual(len(outputs[0]), 40)

    def test_serve_speculates_with_mtp_and_counts_its_drafts(self):
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run(["/usr/bin/python3", "tools/make_tiny_model.py", "--out", tmp, "--preset",
                            "deepseek-v3-tiny", "--config", '{"vocab_size": 512}'], check=True,
                           capture_output=True)
            log = tempfile.TemporaryFile(mode="w+")
            server = subprocess.Popen([SURGE, "serve", tmp, "--tokenizer", MODEL, "--host", "127.0.0.1", "--port",
                                       "0", "--threads", "2", "--speculative", "mtp"],
                                      stdout=subprocess.PIPE, stderr=log, text=True)
            try:
                base_url = None
                for line in server.stdout:
                    match = re.search(r"ready on (http://\S+)", line)
                    if match:
                        base_url = match.group(1)
                        break
                log.seek(0)
                self.assertIsNotNone(base_url, log.read())
                body = {"prompt": "Once upon a time", "max_tokens": 24, "temperature": 0, "ignore_eos": True}
                request = urllib.request.Request(base_url + "/v1/completions", data=json.dumps(body).encode(),
                                                 headers={"Content-Type": "application/json"})
                reply = json.load(urllib.request.urlopen(request, timeout=60))
                self.assertEqual(reply["usage"]["completion_tokens"], 24)
                metrics = urllib.request.urlopen(base_url + "/metrics", timeout=10).read().decode()
                drafts = re.search(r'surge_spec_decode_num_draft_tokens_total\{method="mtp"\} (\d+)', metrics)
                self.assertIsNotNone(drafts, metrics[:2000])
                self.assertGreater(int(drafts.group(1)), 0)
            finally:
                server.terminate()
                server.wait(timeout=30)
                server.stdout.close()
                log.close()

    def test_every_kv_cache_dtype_generates(self):
        # f32 and f16 (auto) caches give the golden text (f16 moves no greedy token of
        # stories260K; int8 does, late); the others just run and say their format.
        case = json.load(open(os.path.join(MODEL, "goldens.json")))["cases"][0]
        for dtype in ["auto", "f32", "bf16", "f16", "int8", "int4"]:
            proc = run("generate", "--model", MODEL, "--prompt", case["prompt"], "--max-tokens", "32", "--json",
                       "--kv-cache-dtype", dtype)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertIn("kv cache " + ("f16" if dtype == "auto" else dtype), proc.stderr)
            out = json.loads(proc.stdout)["output_token_ids"]
            self.assertEqual(len(out), 32)
            if dtype in ("auto", "f32", "f16"):
                self.assertEqual(out, case["output_ids"][:32], dtype)

    def test_plain_output_streams_the_story(self):
        proc = run("generate", "--model", MODEL, "--prompt", "Once upon a time", "--max-tokens", "40")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertTrue(proc.stdout.startswith(", there was a little girl named Lily."), proc.stdout)
        self.assertIn("tok/s", proc.stderr)

    def test_seeded_sampling_is_reproducible(self):
        args = ("generate", "--model", MODEL, "--prompt", "Tim", "--temperature", "0.9", "--seed", "7",
                "--max-tokens", "30", "--json")
        a, b = run(*args), run(*args)
        self.assertEqual(a.returncode, 0, a.stderr)
        self.assertEqual(json.loads(a.stdout)["output_token_ids"],
                         json.loads(b.stdout)["output_token_ids"])

    def test_bad_flags_give_one_line_errors(self):
        cases = [
            (["generate", "--model", MODEL, "--prompt", "x", "--bogus", "1"], 2, "unknown flag --bogus"),
            (["generate", "--model", MODEL, "--prompt", "x", "--max-tokens", "ten"], 2, "--max-tokens"),
            (["generate", "--model", MODEL, "--max-tokens", "3"], 2, "--prompt is required"),
            (["generate", "--prompt", "x", "--model", "/nonexistent/model"], 1, "/nonexistent/model"),
            (["generate", "--model", MODEL, "--prompt", "x", "--temperature", "-1"], 1, "temperature"),
            (["generate", "--model", MODEL, "--prompt", "x", "--max-tokens", "100000"], 1, "context"),
            (["generate", "--model", MODEL, "--prompt", "x", "--kv-cache-dtype", "int3"], 2, "int3"),
            (["serve", "models/stories260K", "--kv-cache-dtype", "fp8"], 2, "--kv-cache-dtype"),
            (["nonsense"], 2, "unknown command"),
        ]
        for args, code, needle in cases:
            proc = run(*args)
            self.assertEqual(proc.returncode, code, (args, proc.stderr))
            self.assertEqual(len(proc.stderr.strip().splitlines()), 1, (args, proc.stderr))
            self.assertIn(needle, proc.stderr, args)
            self.assertEqual(proc.stdout, "", args)


class GenerateEqualsServeTest(unittest.TestCase):
    """`surge generate` is a client of the engine `surge serve` runs: the same request
    gives the same output, and the same bad limits are refused in the same words."""

    @classmethod
    def setUpClass(cls):
        cls.log = tempfile.TemporaryFile(mode="w+")
        cls.server = subprocess.Popen(
            [SURGE, "serve", MODEL, "--host", "127.0.0.1", "--port", "0", "--threads", "2"],
            stdout=subprocess.PIPE, stderr=cls.log, text=True)
        cls.base_url = None
        for line in cls.server.stdout:  # ends (EOF) if the server dies
            match = re.search(r"ready on (http://\S+)", line)
            if match:
                cls.base_url = match.group(1)
                break
        if cls.base_url is None:
            cls.log.seek(0)
            raise RuntimeError("surge serve did not start: " + cls.log.read())

    @classmethod
    def tearDownClass(cls):
        cls.server.terminate()
        cls.server.wait(timeout=30)
        cls.server.stdout.close()
        cls.log.close()

    def complete(self, body):
        request = urllib.request.Request(self.base_url + "/v1/completions", data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, json.load(response)
        except urllib.error.HTTPError as error:
            return error.code, json.load(error)

    # (generate flags, the same request's completions fields)
    REQUESTS = [
        (["--prompt", "Once upon a time", "--max-tokens", "40"], {"prompt": "Once upon a time", "max_tokens": 40}),
        (["--prompt", "Lily and Tom went to the park.", "--max-tokens", "64"],
         {"prompt": "Lily and Tom went to the park.", "max_tokens": 64}),
        (["--prompt", "Tim", "--max-tokens", "30", "--temperature", "0.9", "--seed", "7"],
         {"prompt": "Tim", "max_tokens": 30, "temperature": 0.9, "seed": 7}),
        (["--prompt", "The dog", "--max-tokens", "30", "--temperature", "0.8", "--seed", "3", "--top-p", "0.9",
          "--top-k", "20", "--min-p", "0.05", "--repetition-penalty", "1.2", "--presence-penalty", "0.5",
          "--frequency-penalty", "0.3", "--ignore-eos"],
         {"prompt": "The dog", "max_tokens": 30, "temperature": 0.8, "seed": 3, "top_p": 0.9, "top_k": 20,
          "min_p": 0.05, "repetition_penalty": 1.2, "presence_penalty": 0.5, "frequency_penalty": 0.3,
          "ignore_eos": True}),
    ]

    def test_same_request_same_output(self):
        for flags, body in self.REQUESTS:
            plain = run("generate", "--model", MODEL, *flags)
            self.assertEqual(plain.returncode, 0, plain.stderr)
            as_json = run("generate", "--model", MODEL, *flags, "--json")
            self.assertEqual(as_json.returncode, 0, as_json.stderr)
            status, reply = self.complete({"temperature": 0, **body})
            self.assertEqual(status, 200, reply)
            choice = reply["choices"][0]
            self.assertTrue(plain.stdout.endswith("\n"))
            self.assertEqual(plain.stdout[:-1], choice["text"], flags)
            self.assertIn("finish: " + choice["finish_reason"], plain.stderr)
            out = json.loads(as_json.stdout)
            self.assertEqual(len(out["output_token_ids"]), reply["usage"]["completion_tokens"], flags)
            self.assertEqual(len(out["prompt_token_ids"]), reply["usage"]["prompt_tokens"], flags)

    def test_same_bad_limits_same_refusals(self):
        cases = [  # (generate flags, completions fields)
            (["--temperature", "-1"], {"temperature": -1}),
            (["--top-p", "0"], {"top_p": 0}),
            (["--top-k", "-2"], {"top_k": -2}),
            (["--min-p", "1.5"], {"min_p": 1.5}),
            (["--repetition-penalty", "0"], {"repetition_penalty": 0}),
            (["--presence-penalty", "3"], {"presence_penalty": 3}),
            (["--frequency-penalty", "-2.5"], {"frequency_penalty": -2.5}),
            (["--max-tokens", "0"], {"max_tokens": 0}),
        ]
        for flags, body in cases:
            proc = run("generate", "--model", MODEL, "--prompt", "Tim", *flags)
            self.assertEqual(proc.returncode, 1, (flags, proc.stderr))
            self.assertEqual(proc.stdout, "")
            lines = proc.stderr.strip().splitlines()
            self.assertEqual(len(lines), 1, proc.stderr)
            status, reply = self.complete({"prompt": "Tim", "max_tokens": 8, **body})
            self.assertEqual(status, 400, reply)
            self.assertEqual(lines[0], "surge generate: " + reply["error"]["message"], flags)
        # Beyond the context both refuse; the server says it in OpenAI's words, first.
        proc = run("generate", "--model", MODEL, "--prompt", "Tim", "--max-tokens", "100000")
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn("context of 512 tokens", proc.stderr)
        status, reply = self.complete({"prompt": "Tim", "max_tokens": 100000})
        self.assertEqual(status, 400, reply)
        self.assertIn("maximum context length is 512 tokens", reply["error"]["message"])


class ConvertTest(unittest.TestCase):
    def test_converted_gguf_generates_the_goldens(self):
        goldens = json.load(open(os.path.join(MODEL, "goldens.json")))
        with tempfile.TemporaryDirectory() as tmp:
            for gguf_type in ("f32", "q8_0"):
                path = os.path.join(tmp, f"stories.{gguf_type}.gguf")
                proc = run("convert", MODEL, path, "--type", gguf_type)
                self.assertEqual(proc.returncode, 0, proc.stderr)
                case = goldens["cases"][0]
                proc = run("generate", "--model", path, "--tokenizer", MODEL,
                           "--prompt", case["prompt"], "--max-tokens", "32", "--json")
                self.assertEqual(proc.returncode, 0, proc.stderr)
                out = json.loads(proc.stdout)
                if gguf_type == "f32":  # same weights, same kernels: the same tokens
                    self.assertEqual(out["output_token_ids"], case["output_ids"][:32])
                else:
                    self.assertEqual(len(out["output_token_ids"]), 32)

    def test_convert_errors(self):
        with tempfile.TemporaryDirectory() as tmp:
            proc = run("convert", MODEL, os.path.join(tmp, "x.gguf"), "--type", "q5_k")
            self.assertEqual(proc.returncode, 2)
            self.assertIn("unknown GGUF type 'q5_k'", proc.stderr)
            proc = run("convert", os.path.join(tmp, "missing"), os.path.join(tmp, "x.gguf"))
            self.assertEqual(proc.returncode, 1)
            self.assertIn("config.json", proc.stderr)
            broken = os.path.join(tmp, "broken.gguf")
            open(broken, "wb").write(b"GGUF\x03\x00\x00\x00" + b"\xff" * 16)
            proc = run("generate", "--model", broken, "--tokenizer", MODEL, "--prompt", "x")
            self.assertEqual(proc.returncode, 1)
            self.assertIn("broken.gguf", proc.stderr)
            self.assertEqual(len(proc.stderr.strip().splitlines()), 1, proc.stderr)


    def test_gguf_back_to_hugging_face_generates_the_goldens(self):
        goldens = json.load(open(os.path.join(MODEL, "goldens.json")))
        case = goldens["cases"][0]
        with tempfile.TemporaryDirectory() as tmp:
            gguf = os.path.join(tmp, "stories.gguf")
            self.assertEqual(run("convert", MODEL, gguf, "--type", "f32").returncode, 0)
            back = os.path.join(tmp, "back")
            proc = run("convert", gguf, back, "--dtype", "f32")
            self.assertEqual(proc.returncode, 0, proc.stderr)
            for name in ("model.safetensors", "config.json", "generation_config.json", "tokenizer.json",
                         "tokenizer_config.json"):
                self.assertTrue(os.path.exists(os.path.join(back, name)), name)
            # The written tokenizer.json and weights alone: the same greedy tokens.
            proc = run("generate", "--model", back, "--prompt", case["prompt"], "--max-tokens", "32", "--json")
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertEqual(json.loads(proc.stdout)["output_token_ids"], case["output_ids"][:32])
            proc = run("convert", gguf, back, "--type", "q8_0")
            self.assertEqual(proc.returncode, 2)
            self.assertIn("--type is for HF_DIR -> GGUF", proc.stderr)
            proc = run("convert", gguf, back, "--dtype", "f16")
            self.assertEqual(proc.returncode, 2)
            self.assertIn("--dtype must be bf16 or f32", proc.stderr)
            proc = run("convert", MODEL, gguf, "--dtype", "f32")
            self.assertEqual(proc.returncode, 2)
            self.assertIn("--dtype is for MODEL.gguf -> HF_DIR", proc.stderr)


class PerplexityTest(unittest.TestCase):
    TEXT = "tests/data/perplexity/essays.txt"

    def test_stories_gives_a_finite_figure(self):
        proc = run("perplexity", "--model", MODEL, "--file", self.TEXT, "--context", "128", "--threads", "2",
                   "--kv-cache-dtype", "int8")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        out = json.loads(proc.stdout)
        self.assertTrue(1 < out["ppl"] < 1000 and out["stderr"] > 0, out)
        self.assertEqual(out["windows"], out["tokens"] // 128)
        self.assertEqual(out["scored_tokens"], out["windows"] * 63)
        self.assertTrue(out["bos"])  # stories260K's tokenizer adds BOS
        self.assertEqual(out["kv_cache_dtype"], "int8")
        self.assertIn("[1]", proc.stderr)
        self.assertIn("Final estimate: PPL = ", proc.stderr)

    def test_errors_name_the_flag(self):
        for args, needle in ((["--context", "2"], "--context"), (["--kv-cache-dtype", "int3"], "--kv-cache-dtype"),
                             (["--quantize", "int2"], "--quantize"), (["--context", "100000"], "--context")):
            proc = run("perplexity", "--model", MODEL, "--file", self.TEXT, *args)
            self.assertEqual(proc.returncode, 2, (args, proc.stderr))
            self.assertIn(needle, proc.stderr)
        proc = run("perplexity", "--model", MODEL)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--file", proc.stderr)


class TokenizeTest(unittest.TestCase):
    def test_encode_decode_roundtrip_with_tokenizer_files_only(self):
        with tempfile.TemporaryDirectory() as tmp:
            for name in ("tokenizer.json", "tokenizer_config.json"):
                shutil.copy(os.path.join(MODEL, name), tmp)
            proc = run("tokenize", "--model", tmp, "--text", "Hello, world!")
            self.assertEqual(proc.returncode, 0, proc.stderr)
            ids = json.loads(proc.stdout)["ids"]
            self.assertEqual(ids[0], 1)
            proc = run("tokenize", "--model", tmp, "--text", "Hello, world!", "--no-special")
            self.assertEqual(json.loads(proc.stdout)["ids"], ids[1:])
            proc = run("tokenize", "--model", tmp, "--decode", ",".join(map(str, ids)))
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertEqual(json.loads(proc.stdout)["text"], "Hello, world!")

    def test_missing_tokenizer_is_a_one_line_error(self):
        proc = run("tokenize", "--model", "/nonexistent", "--text", "x")
        self.assertNotEqual(proc.returncode, 0)
        self.assertEqual(len(proc.stderr.strip().splitlines()), 1, proc.stderr)
        self.assertIn("/nonexistent", proc.stderr)


class DefaultModelTest(unittest.TestCase):
    def test_missing_default_model_names_setup(self):
        # Run where models/ is not: the default model (SmolLM2) is missing there.
        with tempfile.TemporaryDirectory() as tmp:
            for args in (["serve", "--port", "0"], ["generate", "--prompt", "x"], ["tokenize", "--text", "x"]):
                proc = subprocess.run([SURGE, *args], capture_output=True, text=True, timeout=60, cwd=tmp)
                self.assertEqual(proc.returncode, 1, (args, proc.stderr))
                lines = proc.stderr.strip().splitlines()
                self.assertEqual(len(lines), 1, proc.stderr)
                self.assertIn("SmolLM2-135M-Instruct", lines[0])
                self.assertIn("scripts/setup.sh", lines[0])


class ServeFlagsTest(unittest.TestCase):
    def test_unknown_reasoning_parser_is_a_usage_error(self):
        # Refused before anything loads: exit 2, one line naming the flag and the choices.
        proc = run("serve", MODEL, "--port", "0", "--reasoning-parser", "qwen3")
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertEqual(len(proc.stderr.strip().splitlines()), 1, proc.stderr)
        self.assertIn("--reasoning-parser", proc.stderr)
        self.assertIn("'qwen3'", proc.stderr)
        self.assertIn("deepseek-r1", proc.stderr)

    def test_malformed_allowed_origins_are_usage_errors(self):
        # An origin that a browser would never send would match nothing: refused at start-up.
        for value, needle in [("http://app.test/", "no trailing '/'"), ("", "empty list"),
                              ("*,http://a.test", "'*' must stand alone"), ("app.test", "not an origin")]:
            proc = run("serve", MODEL, "--port", "0", "--allowed-origins", value)
            self.assertEqual(proc.returncode, 2, (value, proc.stderr))
            self.assertEqual(len(proc.stderr.strip().splitlines()), 1, proc.stderr)
            self.assertIn("--allowed-origins", proc.stderr)
            self.assertIn(needle, proc.stderr)

    def test_bad_tracing_flags_are_usage_errors(self):
        # Each names its flag; the tracing flags without --otlp-endpoint would do nothing.
        endpoint = ["--otlp-endpoint", "http://127.0.0.1:4318/v1/traces"]
        for args, needle in [(["--otlp-endpoint", "https://collector:4318/v1/traces"], "--otlp-endpoint"),
                             (["--otlp-endpoint", "collector:4318"], "--otlp-endpoint"),
                             (endpoint + ["--otlp-protocol", "grpc"], "--otlp-protocol"),
                             (endpoint + ["--trace-sample-ratio", "1.5"], "--trace-sample-ratio"),
                             (["--otlp-protocol", "http/json"], "--otlp-protocol needs --otlp-endpoint"),
                             (["--trace-sample-ratio", "0.5"], "--trace-sample-ratio needs --otlp-endpoint")]:
            proc = run("serve", MODEL, "--port", "0", *args)
            self.assertEqual(proc.returncode, 2, (args, proc.stderr))
            self.assertEqual(len(proc.stderr.strip().splitlines()), 1, proc.stderr)
            self.assertIn(needle, proc.stderr)

    def test_bad_speculative_flags_are_usage_errors(self):
        # Each names its flag; a method's flags without that method would do nothing.
        for args, needle in [(["--speculative", "eagle"], "unknown speculative method 'eagle'"),
                             (["--speculative", "ngram", "--num-speculative-tokens", "0"], "--num-speculative-tokens"),
                             (["--speculative", "ngram", "--ngram-min", "3", "--ngram-max", "2"], "--ngram-max"),
                             (["--ngram-max", "3"], "--ngram-max needs --speculative ngram"),
                             (["--speculative", "ngram", "--draft-model", MODEL], "--draft-model needs --speculative draft"),
                             (["--num-speculative-tokens", "3"], "--num-speculative-tokens needs --speculative"),
                             (["--speculative", "draft", "--draft-quantize", "int2"], "--draft-quantize"),
                             (["--speculative", "draft", "--draft-quantize", "none"], "would draft with the target itself"),
                             (["--max-prefill-tokens-with-decodes", "-1"], "--max-prefill-tokens-with-decodes")]:
            proc = run("serve", MODEL, "--port", "0", *args)
            self.assertEqual(proc.returncode, 2, (args, proc.stderr))
            self.assertEqual(len(proc.stderr.strip().splitlines()), 1, proc.stderr)
            self.assertIn(needle, proc.stderr)

    def test_mtp_on_a_model_without_the_layer_is_refused(self):
        proc = run("serve", MODEL, "--port", "0", "--speculative", "mtp")
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn("no multi-token-prediction layer", proc.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
