# The two commands: `make run` and `make test`. Both install what is missing first.
BUILD_DIR ?= build
MODEL ?= models/SmolLM2-135M-Instruct/SmolLM2-135M-Instruct.Q4_1.gguf
PROMPT ?= Once upon a time
JOBS ?= $(shell nproc)
# The clang build with libFuzzer, ASan and UBSan (fuzz/README.md).
FUZZ_BUILD_DIR ?= build-fuzz
FUZZ_SECONDS ?= 600

.PHONY: run test setup build fuzz-build fuzz bench clean

run: build
	./$(BUILD_DIR)/surge serve $(MODEL) --host 127.0.0.1 --port 8000

# The unit, integration and reference tests, then the fuzz targets' replay + short runs
# and the sanitizer runs of the parser test suites (ctest labels fuzz and sanitize).
# Each suite's temporary files go under its build directory's test-tmp/ (TMPDIR for the
# processes and scripts, TEST_TMPDIR for GoogleTest's TempDir()), emptied before the run:
# none are left in /tmp, and what a test forgets to remove is listed at the end.
test: build fuzz-build
	$(call run_tests,$(BUILD_DIR),)
	$(call run_tests,$(FUZZ_BUILD_DIR),-L 'fuzz|sanitize')

define run_tests
	rm -rf $(1)/test-tmp && mkdir -p $(1)/test-tmp
	TMPDIR=$(abspath $(1))/test-tmp TEST_TMPDIR=$(abspath $(1))/test-tmp \
	  ctest --test-dir $(1) --output-on-failure -j $(JOBS) $(2)
	@left=$$(find $(1)/test-tmp -mindepth 1 -maxdepth 1 | wc -l); \
	  [ "$$left" -eq 0 ] || echo "tests left $$left entries in $(1)/test-tmp"
endef

setup:
	@bash scripts/setup.sh

build: setup
	@cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(BUILD_DIR) -j $(JOBS)

# Only what the fuzz targets and sanitizer tests need (target surge_fuzz_all).
fuzz-build: setup
	@CC=clang-14 CXX=clang++-14 cmake -S . -B $(FUZZ_BUILD_DIR) -G Ninja \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSURGE_FUZZ=ON >/dev/null
	@cmake --build $(FUZZ_BUILD_DIR) -j $(JOBS) --target surge_fuzz_all

# Every fuzz target for FUZZ_SECONDS each, two at a time; FUZZ_MERGE=1 merges new
# coverage into fuzz/corpus/.
fuzz: fuzz-build
	@FUZZ_SECONDS=$(FUZZ_SECONDS) bash fuzz/fuzz_all.sh $(FUZZ_BUILD_DIR)

bench: build
	@for b in $(BUILD_DIR)/*_bench; do echo "== $$b"; $$b; done

clean:
	rm -rf $(BUILD_DIR) $(FUZZ_BUILD_DIR)
