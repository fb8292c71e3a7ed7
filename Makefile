# THV — the two commands that matter:
#   make repro   reproduce the paper (all tables and figures) with the embedded defaults
#   make test    run every test
GO      ?= go
BIN     := bin/thv
JOBS    ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all build repro quick test bench vet fmt-check clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/thv

repro: build
	./$(BIN) repro -j $(JOBS)
	./$(BIN) show

quick: build
	./$(BIN) repro --profile quick -j $(JOBS)

test: vet fmt-check
	$(GO) test -count=1 ./...

bench:
	$(GO) test -run '^$$' -bench . -benchtime 3x ./hv/ ./algos/...

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

clean:
	rm -rf bin
