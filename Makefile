# The two commands: `make run` and `make test`. Both install what is missing first.
BUILD_DIR ?= build
MODEL ?= models/stories260K
PROMPT ?= Once upon a time
JOBS ?= $(shell nproc)

.PHONY: run test setup build bench clean

run: build
	./$(BUILD_DIR)/surge serve $(MODEL) --host 127.0.0.1 --port 8000

test: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS)

setup:
	@bash scripts/setup.sh

build: setup
	@cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(BUILD_DIR) -j $(JOBS)

bench: build
	@for b in $(BUILD_DIR)/*_bench; do echo "== $$b"; $$b; done

clean:
	rm -rf $(BUILD_DIR)
