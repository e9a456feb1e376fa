# clrspy: `make demo` runs the GC monitor on the bundled demo workload,
# `make test` runs every check CI runs.
#
# `make unit` needs nothing outside the repository (its trace fixtures are
# in testdata/traces). `make compat` adds the compatibility suite: the tests
# built with -tags compat, on third-party traces in $(COMPAT_TRACES).
GO ?= go
BIN := bin/clrspy
export CGO_ENABLED := 0

.PHONY: all build test lint unit compat demo workload e2e-runtimes bench scale fuzz clean screenshots

all: build

build:
	$(GO) build -trimpath -o $(BIN) ./cmd/clrspy

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet -tags compat ./...
	$(GO) tool staticcheck -tags compat ./...

unit:
	$(GO) test -timeout 15m ./...

COMPAT_TRACES ?= $(abspath ../shared/traces)
compat:
	CLRSPY_COMPAT_TRACES=$(COMPAT_TRACES) $(GO) test -tags compat -timeout 20m ./...

# compat runs every unit test too.
test: lint compat e2e-runtimes

WORKLOAD_DIR := testdata/workloads
WORKLOAD := $(WORKLOAD_DIR)/bin/net10.0/Workload

# The same build internal/workload does for the tests (same output and
# artifacts paths, so either reuses the other's).
workload:
	DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 dotnet build $(WORKLOAD_DIR)/Workload -c Release \
		-o $(WORKLOAD_DIR)/bin/net10.0 --artifacts-path $(WORKLOAD_DIR)/obj/net10.0 \
		-p:WorkloadTfm=net10.0 -nologo -v quiet

# The live end-to-end tests again against self-contained .NET 8 and .NET 9
# builds of the workload (runtime packs from NuGet; internal/workload builds
# them when CLRSPY_WORKLOAD_TFM is set).
E2E_TESTS := ^(TestRecordLaunch|TestRunExitCode|TestRecordAttachSignalAndName|TestKilledClrspyLeavesTargetUnharmed|TestPs|TestBadTargets|TestOtherUsersProcess|TestNamespacedProcess|TestRecordLaunchSIGTERM|TestRunCtrlC)$$
e2e-runtimes:
	for v in net8.0 net9.0; do \
		CLRSPY_WORKLOAD_TFM=$$v $(GO) test -count 1 -timeout 10m ./ipc/ || exit 1; \
		CLRSPY_WORKLOAD_TFM=$$v $(GO) test -count 1 -timeout 10m -run '$(E2E_TESTS)' ./cmd/clrspy/ || exit 1; \
	done

demo: build workload
	$(BIN) gc -- $(WORKLOAD) churn seconds=3

bench:
	CLRSPY_COMPAT_TRACES=$(COMPAT_TRACES) $(GO) test -tags compat -run '^$$' -bench . -benchmem ./nettrace/

# scale: a generated 1 GiB trace streamed through `clrspy stat -` (no disk);
# prints peak RSS. FUZZTIME bounds `make fuzz`.
scale: build
	$(BIN) gentrace --size 1GiB | /usr/bin/time -f "peak RSS %M KB, %e s wall, %U s user" $(BIN) stat - | head -8

FUZZTIME ?= 10m
fuzz:
	$(GO) test ./nettrace/ -run '^$$' -fuzz FuzzReader -fuzztime $(FUZZTIME) -fuzzminimizetime 3s

clean:
	rm -rf bin out

# screenshots: the report page (offline, with a selection, and live) as
# docs/report.png, docs/report-selection.png and docs/live.png; needs chromium.
screenshots: workload
	$(GO) run ./scripts/screenshots -o docs
