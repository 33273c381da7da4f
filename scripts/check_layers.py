#!/usr/bin/python3
"""Fails when a module includes a header from a module it must not depend on.

The allowed edges are DESIGN.md's layer diagram: dependencies point downward only.
A module may always include its own headers and those of base/."""
import os
import re
import sys

ALLOWED = {
    "base": set(),
    "obs": set(),
    "net": set(),
    "kernels": set(),
    "gguf": set(),
    "tokenizer": {"gguf"},
    "kv": {"kernels"},
    "model": {"kernels", "kv", "gguf"},
    "api": set(),
    "engine": {"model", "kv", "kernels", "tokenizer", "obs", "gguf"},
    "bench": {"api", "net", "obs"},
    "autoscale": {"obs", "net"},
    "router": {"api", "obs", "net", "tokenizer"},
    "server": {"engine", "api", "net", "obs", "tokenizer"},
    "batch": {"api", "net", "obs"},
    "queue": {"batch", "net", "api", "obs"},
    # The OTLP/HTTP sender: obs/'s exporter over net/'s client, a library of its own so
    # that obs/ itself stays on base/ alone.
    "obs/otlp_http": {"obs", "net"},
    # The alarm rules' webhook action, for the same reason.
    "obs/alarm_webhook": {"obs", "net"},
    "apps": None,  # thin mains may include anything
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/')


def violations(root):
    for module, allowed in ALLOWED.items():
        if allowed is None or not os.path.isdir(os.path.join(root, module)):
            continue
        for dirpath, dirs, files in os.walk(os.path.join(root, module)):
            # A subfolder listed on its own is checked under its own rule.
            dirs[:] = [d for d in dirs if os.path.relpath(os.path.join(dirpath, d), root) not in ALLOWED]
            for name in files:
                if not name.endswith((".h", ".cc")):
                    continue
                path = os.path.join(dirpath, name)
                for number, line in enumerate(open(path, encoding="utf-8"), 1):
                    match = INCLUDE.match(line)
                    if not match:
                        continue
                    target = match.group(1)
                    if target in (module.split("/")[0], "base") or target in allowed:
                        continue
                    yield f"{os.path.relpath(path, root)}:{number}: {module}/ must not include {target}/"


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    found = list(violations(root))
    for line in found:
        print(line)
    print(f"layer check: {len(found)} forbidden include(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
