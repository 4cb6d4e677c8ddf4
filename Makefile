# Thin on purpose: the logic lives in Go. `make` prints the targets.
GO        ?= go
PKGS      ?= ./...
BIN       ?= bin
FUZZTIME  ?= 30s
SEEDS     ?= 200
DATA      ?= local_data
REPEATS   ?= 3

.DEFAULT_GOAL := help
.PHONY: help build run test test-all race lint fuzz sim vopr crash bench benchstat bench-e2e generate check

help: ## print the targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

build: ## build every binary into ./bin
	@mkdir -p $(BIN)
	$(GO) build -o $(BIN)/ ./cmd/...

run: build ## start whippet-server with the embedded default config (data under ./local_data)
	./$(BIN)/whippet-server

test: ## the CI gate: unit and integration tests, short mode
	$(GO) vet $(PKGS)
	$(GO) test -short -count=1 -timeout 14m $(PKGS)

test-all: ## every test, long ones included, with invariant checks on
	$(GO) test -tags invariants -count=1 -timeout 60m $(PKGS)

race: ## tests under the race detector
	$(GO) test -race -short -count=1 -timeout 30m $(PKGS)

lint: ## gofmt, vet, staticcheck (when installed) and the house rules
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet $(PKGS)
	@if command -v staticcheck >/dev/null; then staticcheck $(PKGS); else echo "staticcheck not installed: skipped"; fi
	$(GO) test -count=1 -run 'TestTidy|TestImports' ./internal/tidy

fuzz: ## run one fuzz target: make fuzz PKG=./wire FUZZ=FuzzDecodeRequest FUZZTIME=1m
	$(GO) test -run '^$$' -fuzz '^$(FUZZ)$$' -fuzztime $(FUZZTIME) $(PKG)

sim: ## the vsr simulator over SEEDS seeds
	$(GO) run ./cmd/vopr -seeds $(SEEDS)

vopr: ## replay one simulator seed: make vopr SEED=n
	$(GO) run ./cmd/vopr -seed $(SEED)

crash: ## engine crash/recovery tests, long form
	$(GO) test -tags invariants -count=1 -run Crash ./engine/...

bench: ## Go micro-benchmarks into bench/out/new.txt
	@mkdir -p bench/out
	$(GO) test -run '^$$' -bench . -benchmem -count 5 $(PKGS) | tee bench/out/new.txt

benchstat: ## compare bench/out/old.txt with bench/out/new.txt
	$(GO) run golang.org/x/perf/cmd/benchstat@latest bench/out/old.txt bench/out/new.txt

bench-e2e: ## the lab's workloads (p1 p2 c1 pc1 e2e1) on a local server, one table in the lab's columns (REPEATS=n, BENCH_ARGS=…)
	@mkdir -p $(BIN)
	$(GO) build -o $(BIN)/ ./cmd/whippet-server ./cmd/whippet-bench
	./$(BIN)/whippet-bench suite --repeats $(REPEATS) $(BENCH_ARGS)

generate: ## rebuild generated code (flatbuffers; needs flatc 2.0.8 from Debian's flatbuffers-compiler)
	@command -v flatc >/dev/null || { echo "flatc not found: apt-get install flatbuffers-compiler" >&2; exit 1; }
	$(GO) generate $(PKGS)

check: lint test race ## the pre-push gate, identical to CI plus race
