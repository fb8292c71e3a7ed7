# THV — the two commands that matter:
#   make repro   reproduce the paper (all tables and figures) with the embedded defaults
#   make test    run every test
GO      ?= go
BIN     := bin/thv
JOBS    ?= $(shell nproc 2>/dev/null || echo 2)
# make fuzz: each fuzz target for FUZZTIME (go test -fuzz takes one target
# of one package at a time). Seed corpora: <package>/testdata/fuzz/<target>/.
FUZZTIME ?= 20s
FUZZ_TARGETS := ./stages/protocol:FuzzLoadConfig ./cmd/thv:FuzzReadPoints ./pipeline:FuzzReadLock ./pipeline:FuzzParseRecordLine ./artifacts:FuzzDecodeEntry ./pipeline/codeid:FuzzTokenise

.PHONY: all build repro quick test fuzz bench vet fmt-check clean

all: build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN) ./cmd/thv

repro: build
	./$(BIN) repro -j $(JOBS)
	./$(BIN) show
	./$(BIN) compare --fail-on none

quick: build
	./$(BIN) repro --profile quick -j $(JOBS)

test: vet fmt-check
	$(GO) test -count=1 ./...

fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$name in $$pkg for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) $$pkg; \
	done

bench:
	$(GO) test -run '^$$' -bench . -benchtime 3x ./hv/ ./algos/...

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

clean:
	rm -rf bin
