# The README's two commands, `make demo` and `make test`, and the on-demand jobs behind them.
# Every target installs what is missing first (scripts/install-deps, Debian packages only).
JOBS        ?= $(shell nproc)
BUILD       ?= build
CMAKE_FLAGS ?=
DEMO_TRACE  ?= tests/data/gpu/ddp_2rank
DEMO_CPU_TRACE ?= examples/tiny_train.pt.trace.json.gz
FUZZ_SECONDS ?= 60

.PHONY: deps build release-cli demo test test-long asan-build fuzz bench bench-ranks bench-cluster bench-bounds bench-npu format-check format-fix advisor-docs clean

deps:
	@./scripts/install-deps

# The release build through ccache where it is installed, for a checkout's rebuilds. Depend mode takes the
# headers from the compiler's own -MD list, so a miss costs no extra preprocessor run. A new clone elsewhere
# compiles anew: the unity batches below include their files by absolute path (as the sanitized build's
# precompiled headers carry them). With no ccache the launcher is cleared, so a build folder does not keep
# one that has gone.
CCACHE   := $(shell command -v ccache 2>/dev/null)
LAUNCHER  = -DCMAKE_CXX_COMPILER_LAUNCHER=$(CCACHE) -DCMAKE_C_COMPILER_LAUNCHER=$(CCACHE)
export CCACHE_DEPEND ?= true

# The release build is a unity build here (batches of 8 files, cmake/unity_build.cmake): compiling it one file
# per unit was the largest part of a fresh clone's `make test` (about 6.5 of 16 minutes on a 2-core machine).
# A plain `cmake -S . -B DIR` keeps one file per unit, so that a file missing an include still fails there;
# UNITY=OFF does the same here.
UNITY ?= ON
RELEASE_CONFIGURE = cmake -S . -B $(BUILD)/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DTUNEPROF_UNITY=$(UNITY) \
	$(LAUNCHER) $(CMAKE_FLAGS) >/dev/null

# Release build with tests and benchmarks.
build: deps
	@$(RELEASE_CONFIGURE)
	@cmake --build $(BUILD)/release -j $(JOBS)

# Release binaries (tuneprof, and tuneprof-mpi where Open MPI is installed), Python module and benchmark only: the release half of `make test` runs the end-to-end
# and Python tests, which need nothing else (the unit tests run in the sanitized build).
release-cli: deps
	@$(RELEASE_CONFIGURE)
	@cmake --build $(BUILD)/release -j $(JOBS) --target tuneprof_executables import_benchmark tuneprof_python

# A real accelerator run of ours first (the first screen shows the utilizations measured, the verdict and
# the top strategies), the CPU-only example second; only the tuneprof binary is built for it.
demo: deps
	@$(RELEASE_CONFIGURE)
	@cmake --build $(BUILD)/release -j $(JOBS) --target tuneprof
	@./scripts/demo $(BUILD)/release/tuneprof $(DEMO_TRACE) $(DEMO_CPU_TRACE)

ASAN_ENV = ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1

# Within 15 minutes on a 2-core machine: the end-to-end tests on the release binary; the unit and golden
# tests and the hostile-input end-to-end checks under AddressSanitizer + UBSan (the corpus-wide end-to-end
# checks run on the release build only: under ASan they take most of an hour); then a short fuzz smoke
# run of every importer, with the fuzz targets of the same sanitized build.
test: release-cli asan-build
	@cd $(BUILD)/release && ctest --output-on-failure -j $(JOBS) -L e2e
	@cd $(BUILD)/asan && $(ASAN_ENV) ctest --output-on-failure -j $(JOBS) -L "unit|golden|hostile" -LE slow
	@./tests/fuzz/run_fuzzers.sh $(BUILD)/asan 10

# On demand: every test under ASan + UBSan (slow ones included) and a longer fuzz run.
test-long: build asan-build
	@cd $(BUILD)/release && ctest --output-on-failure -j $(JOBS)
	@cd $(BUILD)/asan && $(ASAN_ENV) ctest --output-on-failure -j $(JOBS)
	@$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=600

# Debug build under ASan + UBSan with the tests and the fuzz targets. It is a unity build (TUNEPROF_UNITY,
# on by default with TUNEPROF_SANITIZE: cmake/unity_build.cmake), batches of files compiled as one, which
# cuts its compile CPU; `make build` and the release build stay one file per unit, so that a file
# missing an include still fails to compile there.
asan-build: deps
	@cmake -S . -B $(BUILD)/asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DTUNEPROF_SANITIZE=ON \
		-DTUNEPROF_BUILD_FUZZERS=ON -DTUNEPROF_BUILD_BENCHMARKS=OFF -DCMAKE_CXX_COMPILER=clang++ >/dev/null
	@cmake --build $(BUILD)/asan -j $(JOBS)

# libFuzzer, optimized: every importer's fuzz target for FUZZ_SECONDS each (make fuzz FUZZ_SECONDS=600 for
# a long campaign).
fuzz: deps
	@cmake -S . -B $(BUILD)/fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTUNEPROF_BUILD_FUZZERS=ON \
		-DTUNEPROF_BUILD_TESTS=OFF -DTUNEPROF_BUILD_BENCHMARKS=OFF -DCMAKE_CXX_COMPILER=clang++ >/dev/null
	@cmake --build $(BUILD)/fuzz -j $(JOBS) --target fuzzers
	@./tests/fuzz/run_fuzzers.sh $(BUILD)/fuzz $(FUZZ_SECONDS)

# Import speed and memory on a generated >= 500 MB Kineto trace, against Python's json.load; then a
# 528 MB real-shaped trace plain and gzip'd, beside this machine's ceilings (cat, stage 1, inflate); annotate's
# peak memory beside analyze's; the Python load of the 528 MB trace beside HTA's (HTA=DIR: a checkout of
# HolisticTraceAnalysis in a temporary directory, never in this repository; without it, tuneprof's side only).
bench: build
	@./bench/run_import_bench.sh $(BUILD)/release
	@/usr/bin/python3 bench/gzip_bench.py $(BUILD)/release
	@/usr/bin/python3 bench/memory_bench.py $(BUILD)/release
	@/usr/bin/python3 bench/python_load_bench.py $(BUILD)/release/bench-data/kineto_repeated_520mb.json \
	  --module-dir $(BUILD)/release/python --repeat 5 $(if $(HTA),--hta $(HTA))

# `tuneprof comm` on 8 and 64 ranks replicated from the shared gloo DDP traces (in a temp dir): wall time and
# peak RSS, which must stay below (worker threads + 1) x one rank's.
bench-ranks: build
	@./bench/run_many_ranks_bench.sh $(BUILD)/release 8 64

# Peak RSS of every command over generated runs of 8, 64 and 1,024 ranks in both layouts, against the
# map -> summary -> reduce bound (docs/performance.md).
bench-cluster: build
	@./bench/run_cluster_rss_bench.sh $(BUILD)/release 8 64 1024

# Bounded cost on adversarial generated inputs (1 M allocator events, 1 M identical events on one
# thread, 10,000 ranks of tiny traces): wall time and peak RSS of `tuneprof analyze` on one core.
bench-bounds: build
	@./bench/run_bounds_bench.sh $(BUILD)/release

# Every tracked C++ file formatted as .clang-format says (CI runs it before the tests); format-fix rewrites them.
format-check: deps
	@./scripts/format_check.sh

format-fix: deps
	@./scripts/format_check.sh --fix

# docs/advisor.md's Rules table rewritten from the advisor's rule catalogue (each finding's "doc" in
# src/analysis/advisor/rules/catalogue.json); the ctest advisor_docs_rules_table fails while it differs.
advisor-docs:
	@python3 scripts/advisor_rules_table.py

# torch_npu at scale (generated in a temp dir): `analyze` on one rank of a ~1 GB trace_view.json and
# million-row CSVs (target >= 400 MB/s, beside `cat` of the same files) and on 2,000 rank directories
# (target <= 5 s); peak RSS at two CSV sizes (the tables are streamed). RUNS=5 by default.
bench-npu: build
	@./bench/run_npu_bench.sh $(BUILD)/release

clean:
	rm -rf $(BUILD)
