# clrspy: `make demo` runs the GC monitor on the bundled demo workload,
# `make test` runs every check CI runs.
GO ?= go
BIN := bin/clrspy
export CGO_ENABLED := 0

.PHONY: all build test lint unit demo workload bench scale fuzz clean

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

WORKLOAD_DIR := testdata/workloads
WORKLOAD := $(WORKLOAD_DIR)/bin/net10.0/Workload

# The same build internal/workload does for the tests (same output and
# artifacts paths, so either reuses the other's).
workload:
	DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 dotnet build $(WORKLOAD_DIR)/Workload -c Release \
		-o $(WORKLOAD_DIR)/bin/net10.0 --artifacts-path $(WORKLOAD_DIR)/obj/net10.0 \
		-p:WorkloadTfm=net10.0 -nologo -v quiet

demo: build workload
	$(BIN) gc -- $(WORKLOAD) churn seconds=3

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./nettrace/

# scale: a generated 1 GiB trace streamed through `clrspy stat -` (no disk);
# prints peak RSS. FUZZTIME bounds `make fuzz`.
scale: build
	$(BIN) gentrace --size 1GiB | /usr/bin/time -f "peak RSS %M KB, %e s wall, %U s user" $(BIN) stat - | head -8

FUZZTIME ?= 10m
fuzz:
	$(GO) test ./nettrace/ -run '^$$' -fuzz FuzzReader -fuzztime $(FUZZTIME)

clean:
	rm -rf bin out
