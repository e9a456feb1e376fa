# clrspy: `make demo` runs the GC monitor on the bundled demo workload,
# `make test` runs every check CI runs.
#
# `make unit` needs nothing outside the repository (its trace fixtures are
# in testdata/traces). `make compat` adds the compatibility suite: the tests
# built with -tags compat, on third-party traces in $(COMPAT_TRACES).
GO ?= go
BIN := bin/clrspy
export CGO_ENABLED := 0

.PHONY: all build test lint unit compat demo workload traceevent e2e-runtimes bench scale fuzz fuzz-corpus hostile soak clean screenshots

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

# compat runs every unit test too; soak is the 5-minute memory check of
# every command on an endless stream (issue 17).
test: lint compat e2e-runtimes soak

WORKLOAD_DIR := testdata/workloads
WORKLOAD := $(WORKLOAD_DIR)/bin/net10.0/Workload

# The same build internal/workload does for the tests (same output and
# artifacts paths, so either reuses the other's).
workload:
	DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 dotnet build $(WORKLOAD_DIR)/Workload -c Release \
		-o $(WORKLOAD_DIR)/bin/net10.0 --artifacts-path $(WORKLOAD_DIR)/obj/net10.0 \
		-p:WorkloadTfm=net10.0 -nologo -v quiet

# The TraceEvent program the GC equality tests and
# scripts/compare-traceevent.sh run (internal/traceevent builds the same).
TRACEEVENT_DIR := testdata/traceevent
traceevent:
	DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 dotnet build $(TRACEEVENT_DIR)/TraceEventBench -c Release \
		-o $(TRACEEVENT_DIR)/bin --artifacts-path $(TRACEEVENT_DIR)/obj -nologo -v quiet

# The live end-to-end tests again against self-contained .NET 8 and .NET 9
# builds of the workload (runtime packs from NuGet; internal/workload builds
# them when CLRSPY_WORKLOAD_TFM is set).
E2E_TESTS := ^(TestRecordLaunch|TestRunExitCode|TestRecordAttachSignalAndName|TestKilledClrspyLeavesTargetUnharmed|TestPs|TestBadTargets|TestOtherUsersProcess|TestNamespacedProcess|TestRecordLaunchSIGTERM|TestRunCtrlC|TestRecordRefusesPlantedSocket|TestRootAttachNotice)$$
e2e-runtimes:
	for v in net8.0 net9.0; do \
		CLRSPY_WORKLOAD_TFM=$$v $(GO) test -count 1 -timeout 10m ./ipc/ || exit 1; \
		CLRSPY_WORKLOAD_TFM=$$v $(GO) test -count 1 -timeout 10m -run '$(E2E_TESTS)' ./cmd/clrspy/ || exit 1; \
		CLRSPY_WORKLOAD_TFM=$$v $(GO) test -count 1 -timeout 10m -run '^TestThreadPoolLiveStarve$$' ./cmd/clrspy/ || exit 1; \
	done
# The runtime's own structures read from memory (internal/cdac) exist
# from .NET 9 on: a deadlock formed before attach, and lock types.
	CLRSPY_WORKLOAD_TFM=net9.0 $(GO) test -count 1 -timeout 10m -run '^(TestStacksDeadlockedBeforeAttach|TestStacksLockDeadlockedBeforeAttach|TestStacksGenericLockType|TestLocksLiveAttachNamesTypes)$$' ./cmd/clrspy/

# Every pause is logged (--info 0: the default logs from 10 ms); quiet=1
# keeps the workload's own JSON result line out of the demo's output.
demo: build workload
	$(BIN) gc --info 0 -- $(WORKLOAD) churn seconds=3 quiet=1

bench:
	CLRSPY_COMPAT_TRACES=$(COMPAT_TRACES) $(GO) test -tags compat -run '^$$' -bench . -benchmem ./nettrace/

# scale: every command on a generated 1 GiB trace (peak RSS, wall, CPU),
# then the reader on one thread against all cores (scripts/scale.sh).
scale: build
	scripts/scale.sh 1GiB

# fuzz: every fuzz target of the module in turn, each for FUZZEXECS
# executions (a count, not a duration: golang/go#75804), repeated until it
# has run FUZZMIN seconds; FUZZ=regexp picks targets, FUZZPARALLEL=N limits
# the workers (default: one per CPU). The checked-in seed
# corpora (testdata/fuzz/*/real-*) are rebuilt by `make fuzz-corpus`.
FUZZEXECS ?= 200000
FUZZMIN ?= 0
FUZZ ?= .
FUZZPARALLEL ?=
fuzz:
	GO=$(GO) FUZZEXECS=$(FUZZEXECS) FUZZMIN=$(FUZZMIN) FUZZ='$(FUZZ)' FUZZPARALLEL=$(FUZZPARALLEL) scripts/fuzz.sh

FUZZ_CORPUS_PKGS := ./nettrace/ ./clrevents/ ./gcpause/ ./heap/ ./locks/ ./ipc/ ./internal/procfs/
fuzz-corpus:
	$(GO) test -count 1 -run '^TestFuzzCorpus$$' $(FUZZ_CORPUS_PKGS) -update-corpus

# hostile: the crafted-file table of docs/PERFORMANCE.md (exit, message,
# peak RSS of each command on each file; about 3 minutes, 0.5 GB in /tmp).
hostile:
	GO=$(GO) scripts/hostile.sh

# soak: every analysis command on an endless generated stream for
# SOAK_SECONDS (300), all at once; fails when one's memory grows.
soak:
	scripts/soak.sh

clean:
	rm -rf bin out

# screenshots: the report page (offline, with a selection, and live) as
# docs/report.png, docs/report-selection.png and docs/live.png; needs chromium.
screenshots: workload
	$(GO) run ./scripts/screenshots -o docs
