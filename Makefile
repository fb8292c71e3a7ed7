# THV — the two commands that matter:
#   make repro   reproduce the paper (all tables and figures) with the embedded defaults
#   make test    run every test
GO      ?= go
BIN     := bin/thv
JOBS    ?= $(shell nproc 2>/dev/null || echo 2)
# make fuzz: each fuzz target for a number of executions (go test -fuzz
# takes one target of one package at a time), about 10–30 s of each on the
# 2-core machine. A count, not a duration: with -fuzztime 20s, go1.26's
# fuzz coordinator can fail a target with a bare "context deadline
# exceeded" at the deadline, having found nothing (go.dev/issue/75804,
# fixed in Go 1.27). FUZZTIME=1h (or =1000000x) fuzzes every target for
# that instead. Seed corpora: <package>/testdata/fuzz/<target>/.
FUZZTIME ?=
FUZZ_TARGETS := ./protocol/config:FuzzLoadConfig:15000x ./cmd/thv:FuzzReadPoints:30000x \
	./pipeline:FuzzReadLock:150000x ./pipeline:FuzzParseRecordLine:150000x \
	./artifacts:FuzzDecodeEntry:60000x ./pipeline/codeid:FuzzNormalise:10000x

.PHONY: all build repro quick test fuzz mutants bench crossarch vet fmt-check clean FORCE

all: build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN) ./cmd/thv
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/hv ./cmd/hv # thv hv, fast to start (cmd/hv)

# repro and quick rebuild $(BIN) only when something it is built from
# changed: `go build` finds that out itself, but in about half a second,
# most of a `make repro` that has nothing to do; make's own check takes
# milliseconds. It over-approximates: every file of the tree (the embedded
# sources, docs and data included) but git's, the store, results/, bin/ and
# the locks; and the toolchain and its settings, in a stamp rewritten only
# when they change.
SOURCES := $(shell find . \( -name .git -o -name .thv -o -name bin -o -name results -o -name node_modules \) -prune -o -type f ! -name 'thv*.lock' -print)

$(SOURCES): ; # no rule makes them: spares make its search of implicit rules for each

$(BIN): $(SOURCES) bin/.toolchain
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN) ./cmd/thv
	@touch $(BIN) # go build leaves an up-to-date binary's time alone

bin/.toolchain: FORCE
	@mkdir -p bin; t="$$($(GO) env GOVERSION GOROOT GOFLAGS GOOS GOARCH GOAMD64 GOEXPERIMENT GOTOOLCHAIN) CGO_ENABLED=0 -trimpath"; \
	[ "$$(cat $@ 2>/dev/null)" = "$$t" ] || printf '%s\n' "$$t" > $@

FORCE:

# Its phases, with their share of the time from an empty store (about 5½
# minutes on 2 cores; docs/performance.md): the last line is the verdict,
# results/index.html's headline.
repro: $(BIN)
	@echo "== 1/4 thv repro: the paper's protocol, one instance per setting and geometry (about a quarter of the time)"
	./$(BIN) repro -j $(JOBS)
	@echo "== 2/4 thv show, thv compare: this run against the paper's published values (seconds)"
	./$(BIN) show
	./$(BIN) compare --fail-on none
	@echo "== 3/4 thv readings --only default: the same protocol on 19 more instances, to judge the published values across 20 (about three quarters of the time)"
	./$(BIN) readings --only default -j $(JOBS)
	@echo "== 4/4 thv report: results/index.html with the judgement across instances; its verdict"
	./$(BIN) report

quick: $(BIN)
	./$(BIN) repro --profile quick -j $(JOBS)

test: vet fmt-check
	$(GO) test -count=1 -timeout 25m ./...

fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; rest=$${t#*:}; name=$${rest%%:*}; budget=$${rest#*:}; \
		[ -z "$(FUZZTIME)" ] || budget="$(FUZZTIME)"; \
		echo "fuzz $$name in $$pkg for $$budget"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $$budget $$pkg; \
	done

# make mutants: the mutation test of code identities (docs/pipeline.md):
# random token-level mutants of the science packages, MUTANTS of them that
# compile, each built and re-executing every task of the mutation protocol
# (internal/mutants/testdata/mutants.yaml); it fails if a task whose key did
# not change gives other outputs, and prints the identities' precision
# beside the package-level ones'. About 12 s a mutant on the 2-core
# machine; every mutant's outcome goes to bin/mutants.jsonl. CI runs a
# sample: make mutants MUTANTS=20 MUTANTS_SEED=<a seed per run>.
MUTANTS ?= 200
MUTANTS_SEED ?= 1
mutants:
	@mkdir -p bin
	$(GO) run ./internal/mutants/run -n $(MUTANTS) -seed $(MUTANTS_SEED) -report bin/mutants.jsonl

# make crossarch: the same bits on other CPUs (docs/reproducibility.md).
# thv and hv must build for darwin and windows (a bundle vendors their files).
# The science and stage packages' tests cross-compiled for arm64 and run
# under qemu-user, then the quick profile's lock from thv built for arm64
# and riscv64 (under qemu) and GOAMD64=v3, each against amd64's.
CROSS_PKGS = ./hv/... ./envs/... ./algos/... ./stages/... ./artifacts/table
crossarch:
	for p in darwin/amd64 darwin/arm64 windows/amd64 windows/arm64; do \
		GOOS=$${p%/*} GOARCH=$${p#*/} $(GO) build -o /dev/null ./cmd/thv ./cmd/hv || exit 1; \
	done
	GOARCH=arm64 $(GO) test -count=1 -short -exec qemu-aarch64 $(CROSS_PKGS)
	THV_CROSSARCH=1 $(GO) test -count=1 -v -timeout 30m -run '^TestCrossArchLock$$' .

bench:
	$(GO) test -run '^$$' -bench . -benchtime 3x ./hv/ ./algos/...

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi
	@# A merge's conflict markers left in a doc or a script (Go would not build).
	@out=$$(grep -nE '^(<<<<<<<|>>>>>>>)( |$$)' README.md Makefile .ci/run docs/*.md 2>/dev/null); \
	if [ -n "$$out" ]; then echo "merge conflict markers left in:"; echo "$$out"; exit 1; fi

clean:
	rm -rf bin
