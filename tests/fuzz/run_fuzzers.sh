#!/usr/bin/env bash
# Runs every libFuzzer target built in BUILD_DIR/fuzzers for SECONDS each, FUZZ_JOBS (the cores) at a time.
#   usage: run_fuzzers.sh BUILD_DIR SECONDS
# Seeds are rebuilt on each run under BUILD_DIR/fuzz_work/seeds (never in the repository) from small
# traces in the shared corpus (TUNEPROF_CORPUS, default ../shared/traces beside the checkout) plus
# handcrafted tiny documents; the corpus each fuzzer grows is kept in
# BUILD_DIR/fuzz_work/corpus across runs. FUZZ_RSS_LIMIT_MB (2048) and FUZZ_TIMEOUT_S (10) set libFuzzer's
# -rss_limit_mb and -timeout. Crash, leak and timeout reproducers land in
# BUILD_DIR/fuzz_work/artifacts/<fuzzer>/. Prints one summary line per fuzzer; exits 1 if any failed.
set -uo pipefail

if [ $# -ne 2 ] || ! [[ $2 =~ ^[0-9]+$ ]]; then
  echo "usage: $0 BUILD_DIR SECONDS" >&2
  exit 2
fi
build=$(cd "$1" && pwd) || exit 2
seconds=$2
here=$(cd "$(dirname "$0")" && pwd)
traces="${TUNEPROF_CORPUS:-$here/../../../shared/traces}"
work="$build/fuzz_work"

shopt -s nullglob
fuzzers=("$build"/fuzzers/*_fuzzer)
if [ ${#fuzzers[@]} -eq 0 ]; then
  echo "run_fuzzers: no fuzz targets in $build/fuzzers (configure with -DTUNEPROF_BUILD_FUZZERS=ON)" >&2
  exit 2
fi

# ---- Seeds ---------------------------------------------------------------------------------------
json="$work/seeds/json"          # plain JSON documents
gz="$work/seeds/gz"              # gzip files (and a few that are not)
rm -rf "$work/seeds"
mkdir -p "$json" "$gz"

# Small real files: every shared .json up to 16 KB, and small .json.gz both as they are (gzip fuzzer)
# and decompressed (JSON fuzzer). Missing shared traces only mean fewer seeds.
if [ -d "$traces" ]; then
  n=0
  while IFS= read -r -d '' file; do
    n=$((n + 1))
    cp "$file" "$json/shared_$n.json"
  done < <(find "$traces" -type f -name '*.json' -size -17k -print0 | sort -z)
  n=0
  while IFS= read -r -d '' file; do
    n=$((n + 1))
    cp "$file" "$gz/shared_$n.json.gz"
    gzip -dc "$file" > "$json/shared_gz_$n.json" 2>/dev/null || rm -f "$json/shared_gz_$n.json"
  done < <(find "$traces" -type f -name '*.json.gz' -size -4k -print0 | sort -z)
else
  echo "run_fuzzers: $traces not found; using handcrafted seeds only" >&2
fi

# Handcrafted: one of each shape the importer distinguishes.
cat > "$json/kineto.json" <<'EOF'
{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "GPU", "totalGlobalMem": 85899345920, "numSms": 108, "computeMajor": 8, "computeMinor": 0, "warpSize": 32}],
 "distributedInfo": {"backend": "nccl", "rank": 1, "world_size": 2},
 "traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 10, "tid": 10, "ts": 1000.5, "dur": 20, "args": {"External id": 7, "Sequence number": 3}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 10, "ts": 1005, "dur": 4, "args": {"correlation": 42, "External id": 7}},
  {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 1010, "dur": 50, "args": {"correlation": 42, "stream": 7, "device": 0, "grid": [1, 2, 3], "block": [128, 1, 1], "registers per thread": 64, "shared memory": 0, "est. achieved occupancy %": 50}},
  {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": 7, "ts": 1070, "dur": 3, "args": {"bytes": 4096, "memory bandwidth (GB/s)": 1.5}},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce", "pid": 0, "tid": 8, "ts": 1080, "dur": 9, "args": {"Collective name": "allreduce", "In msg nelems": 1024, "Out msg nelems": 1024, "dtype": "Float", "Group size": 2}},
  {"ph": "s", "id": 42, "pid": 10, "tid": 10, "ts": 1005, "cat": "ac2g", "name": "ac2g"},
  {"ph": "f", "id": 42, "pid": 0, "tid": 7, "ts": 1010, "cat": "ac2g", "name": "ac2g", "bp": "e"},
  {"ph": "i", "s": "t", "name": "[memory]", "pid": 10, "tid": 10, "ts": 1001, "args": {"Addr": 140000, "Bytes": 512, "Total Allocated": 512, "Total Reserved": 2048, "Device Type": 1, "Device Id": 0}},
  {"ph": "C", "name": "mem", "pid": 10, "ts": 1002, "args": {"allocated": 1.5, "reserved": 3}},
  {"ph": "B", "name": "ProfilerStep#1", "cat": "user_annotation", "pid": 10, "tid": 10, "ts": 999},
  {"ph": "E", "pid": 10, "tid": 10, "ts": 1100},
  {"ph": "M", "name": "process_name", "pid": 10, "tid": 0, "args": {"name": "python"}},
  {"ph": "M", "name": "thread_name", "pid": 10, "tid": 10, "args": {"name": "main"}},
  {"ph": "M", "name": "process_sort_index", "pid": 0, "args": {"sort_index": 1}},
  {"ph": "M", "name": "process_labels", "pid": 0, "args": {"labels": "GPU 0"}}
 ],
 "traceName": "t.pt.trace.json", "displayTimeUnit": "ms", "baseTimeNanoseconds": 1700000000000000000}
EOF
cat > "$json/legacy.json" <<'EOF'
[{"name": "aten::add", "ph": "X", "ts": 1, "dur": 2, "tid": 0, "pid": "CPU functions", "args": {}},
{"name": "aten::mul", "ph": "X", "ts": "3.25", "dur": "1", "tid": "0", "pid": "CPU functions"},
]
EOF
cat > "$json/npu.json" <<'EOF'
{"traceEvents": [{"ph": "M", "name": "process_name", "pid": 5, "args": {"name": "Ascend Hardware"}},
{"ph": "X", "name": "MatMul", "pid": 5, "tid": 1, "ts": "10.000", "dur": 2.5, "args": {"Task Type": "AI_CORE"}},
{"ph": "X", "name": "hcom_allReduce_", "pid": 6, "tid": 2, "ts": 11, "dur": 1, "args": {"Task Type": "Notify"}},
{"ph": "M", "name": "process_name", "pid": 6, "args": {"name": "HCCL"}}]}
EOF
printf '%s' '{"traceEvents": [{"ph": "X", "ts": 1, "dur": 1, "pid": 1, "tid": 1}, {"ph": "X", "ts": 2, "du' > "$json/cut.json"
printf '%s' '{"traceEvents":[{"name":"a\"b\\\u00e9\ud83d\ude00","ph":"i","ts":"1.5","pid":"7","tid":-1,"s":"t"},{"ph":"q","ts":1}]}' > "$json/escapes.json"
printf '\xef\xbb\xbf \n\t{"traceEvents":[]}\n' > "$json/bom.json"
printf '%s' '[]' > "$json/empty_array.json"
printf '%s' '{"traceEvents":[{"ph":"X","ts":12345678901234567890,"args":{"Comms Id":12345678901234567890}}]}' > "$json/big_numbers.json"

# The JSON fuzzer's byte 0 picks the read pattern: spread the real files over a few, and give each
# handcrafted one 1-byte chunks too (a BOM or an escape split across reads has broken the reader before).
selectors=('\x00' '\x07' '\x3f' '\xef' '\xf3')
mkdir -p "$work/seeds/chrome_trace_fuzzer"
i=0
for file in "$json"/*; do
  name=$(basename "$file")
  { printf "${selectors[$((i % ${#selectors[@]}))]}"; cat "$file"; } > "$work/seeds/chrome_trace_fuzzer/$name"
  [[ $name == shared_* ]] || { printf '\x00'; cat "$file"; } > "$work/seeds/chrome_trace_fuzzer/1byte_$name"
  i=$((i + 1))
done

# The gzip fuzzer reads files: gzip the handcrafted documents, and add a two-member file, a cut-off
# one and a plain (not gzip) one.
for file in "$json"/kineto.json "$json"/legacy.json "$json"/npu.json "$json"/cut.json; do
  gzip -c -n "$file" > "$gz/$(basename "$file").gz"
done
cat "$gz/legacy.json.gz" "$gz/npu.json.gz" > "$gz/two_members.json.gz"
head -c 200 "$gz/kineto.json.gz" > "$gz/cut_gzip.json.gz"
cp "$json/legacy.json" "$gz/plain.json"
mkdir -p "$work/seeds/gzip_source_fuzzer"
cp "$gz"/* "$work/seeds/gzip_source_fuzzer/"

# Seeds of a fuzzer that reads one of two Ascend files by the parity of byte 0: every real file of either
# name up to 64 KB, prefixed with byte 0 (the first name) or 1 (the second), written as DIR/<label>_<n>.
#   usage: ascend_pair_seeds DIR NAME0 LABEL0 NAME1 LABEL1
ascend_pair_seeds() {
  local dir=$1 n=0 file
  [ -d "$traces/ascend" ] || return 0
  while IFS= read -r -d '' file; do
    n=$((n + 1))
    case $(basename "$file") in
      "$2") { printf '\x00'; cat "$file"; } > "$dir/${3}_$n" ;;
      "$4") { printf '\x01'; cat "$file"; } > "$dir/${5}_$n" ;;
    esac
  done < <(find "$traces/ascend" -type f \( -name "$2" -o -name "$4" \) -size -65k -print0 | sort -z)
}

# The Ascend CSV fuzzer: byte 0 even = kernel_details, odd = step_trace_time; real files up to 64 KB
# plus a tiny handcrafted one of each.
csv_seeds="$work/seeds/ascend_csv_fuzzer"
mkdir -p "$csv_seeds"
ascend_pair_seeds "$csv_seeds" kernel_details.csv kernel_details step_trace_time.csv step_trace
printf '\x00Step Id,Name,Type,Accelerator Core,Start Time(us),Duration(us),Block Dim,Input Shapes,aic_mac_ratio\n1,MatMul,MatMulV2,AI_CORE,1736408883704643.212\t,10.5,24,"""8,16;16,32""",0.8\n' > "$csv_seeds/tiny_kernel_details"
printf '\x01Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble\n50,8873.756,101963.203,4028.675,105991.878,25744.05,136581.0,0\n' > "$csv_seeds/tiny_step_trace"

# The communication-summary fuzzer, byte 0 picking the file: 0 communication.json, 1 communication_matrix.json, 2
# msprof-analyze's cluster_communication.json; the real files up to 64 KB plus a tiny handcrafted one of each.
comm_seeds="$work/seeds/ascend_json_fuzzer"
mkdir -p "$comm_seeds"
ascend_pair_seeds "$comm_seeds" communication.json communication communication_matrix.json matrix
printf '\x00%s' '{"step50": {"collective": {"hcom_allReduce__1_0@123": {"Communication Time Info": {"Start Timestamp(us)": 1736408883704643.212, "Elapse Time(ms)": 1.5, "Transit Time(ms)": 0.5, "Wait Time(ms)": 1.0, "Synchronization Time(ms)": 0.2, "Idle Time(ms)": 0, "Wait Time Ratio": 0.67, "Synchronization Time Ratio": 0.13}, "Communication Bandwidth Info": {"HCCS": {"Transit Size(MB)": 4.0, "Transit Time(ms)": 0.5, "Bandwidth(GB/s)": 8.0, "Large Packet Ratio": 1, "Size Distribution": {"4.0": [1, 0.5]}}}}}}}' > "$comm_seeds/tiny_communication"
printf '\x01%s' '{"step50": {"collective": {"allReduce-top1@123": {"0-1": {"Transport Type": "HCCS", "Transit Size(MB)": 4.0, "Transit Time(ms)": 0.5, "Bandwidth(GB/s)": 8.0, "op_name": "hcom_allReduce__1_0"}}}}}' > "$comm_seeds/tiny_matrix"
n=0
while IFS= read -r -d '' file; do
  n=$((n + 1))
  { printf '\x02'; cat "$file"; } > "$comm_seeds/cluster_communication_$n"
done < <([ -d "$traces/ascend" ] && find "$traces/ascend" -type f -name cluster_communication.json -size -65k -print0 | sort -z)
printf '\x02%s' '{"(0, 1)": {"step": {"hcom_broadcast__1_0@123": {"0": {"Communication Time Info": {"Start Timestamp(us)": 1736408883704643.212, "Elapse Time(ms)": 1.5, "Transit Time(ms)": 0.5, "Wait Time(ms)": 1.0}, "Communication Bandwidth Info": {"HCCS": {"Transit Size(MB)": 4.0, "Transit Time(ms)": 0.5, "Size Distribution": {"4.0": [1, 0.5]}}}}, "1": {"Communication Time Info": {"Elapse Time(ms)": 0.5, "Wait Time(ms)": 0}}}}}}' > "$comm_seeds/tiny_cluster_communication"

# The structure-aware targets generate their profiles from the bytes (FuzzedDataProvider), so any bytes
# are a valid input: an empty profile, the ordinary one (every pick's first choice), and a few
# deterministic pseudo-random strings of 64 bytes to 4 KB, which spread over the generators' choices.
for name in kineto_structure_fuzzer ascend_structure_fuzzer summary_file_fuzzer; do
  mkdir -p "$work/seeds/$name"
  printf '' > "$work/seeds/$name/empty"
  head -c 256 /dev/zero > "$work/seeds/$name/zeros"
  /usr/bin/python3 - "$work/seeds/$name" <<'PY'
import random, sys
for n, size in enumerate([64, 256, 1024, 4096, 4096]):
    r = random.Random(n)
    with open(f"{sys.argv[1]}/random_{n}", "wb") as f:
        f.write(bytes(r.randrange(256) for _ in range(size)))
PY
done

# The SQLite fuzzer: small real exports (Nsight Systems, torch_npu, msprof; up to 128 KB) and a minimal
# Nsight Systems schema written here with Python's sqlite3.
db_seeds="$work/seeds/sqlite_import_fuzzer"
mkdir -p "$db_seeds"
if [ -d "$traces" ]; then
  n=0
  while IFS= read -r -d '' file; do
    n=$((n + 1))
    cp "$file" "$db_seeds/db_$n"
  done < <(find "$traces" -type f \( -name '*.sqlite' -o -name '*.db' \) -size -129k -print0 | sort -z)
fi
/usr/bin/python3 - "$db_seeds/tiny_nsys" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.executescript("""
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);
INSERT INTO StringIds VALUES (1, 'gemm_kernel'), (2, 'cudaLaunchKernel_v7000');
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, streamId INTEGER,
  correlationId INTEGER, globalPid INTEGER, demangledName INTEGER, shortName INTEGER, gridX INTEGER,
  gridY INTEGER, gridZ INTEGER, blockX INTEGER, blockY INTEGER, blockZ INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1000, 2000, 0, 7, 42, 281474976710656, 1, 1, 4, 1, 1, 128, 1, 1);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, correlationId INTEGER, globalTid INTEGER, nameId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (900, 950, 42, 281474976710657, 2);
""")
db.commit()
PY

# PyTorch memory snapshots: small ones cut from the shared snapshots (a few segments and trace events,
# re-pickled by Python from plain data) plus handcrafted pickles of each kind the reader refuses.
snapshot_seeds="$work/seeds/memory_snapshot_fuzzer"
mkdir -p "$snapshot_seeds"
/usr/bin/python3 - "$snapshot_seeds" "$traces" <<'PY'
import glob, os, pickle, sys
out, traces = sys.argv[1], sys.argv[2]

class PlainData(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError("refused")

for n, path in enumerate(sorted(glob.glob(os.path.join(traces, "memory-snapshots", "**", "*.pickle"), recursive=True))):
    with open(path, "rb") as f:
        snap = PlainData(f).load()
    small = dict(snap, segments=snap["segments"][:4],
                 device_traces=[t[:12] for t in snap.get("device_traces", [])])
    with open(os.path.join(out, f"shared_{n}"), "wb") as f:
        f.write(pickle.dumps(small, protocol=4))
frame = {"name": "forward", "filename": "m.py", "line": 3}
tiny = {"segments": [{"device": 0, "address": 0, "total_size": 4096, "allocated_size": 512, "segment_type": "small",
                      "blocks": [{"size": 512, "state": "active_allocated", "frames": [frame]},
                                 {"size": 3584, "state": "inactive", "frames": []}]}],
        "device_traces": [[{"action": a, "addr": 0, "size": 512, "time_us": t, "frames": [frame]}
                           for t, a in enumerate(["alloc", "free_requested", "free_completed", "alloc", "oom"])]]}
for protocol in (2, 4, 5):
    with open(os.path.join(out, f"tiny_p{protocol}"), "wb") as f:
        f.write(pickle.dumps(tiny, protocol=protocol))
for name, data in {"global": b"\x80\x02cos\nsystem\n.", "reduce": b"\x80\x04N)R.", "deep": b"\x80\x04N" + b"\x85" * 300 + b"."}.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
PY

# The SQLite schema fuzzer: its bytes are a generator's choices (tests/fuzz/sqlite_schema_fuzzer.cc), byte 0
# the family (0 Nsight Systems, 1 torch_npu / msprof, 2 analysis.db). Seeds: fixed pseudo-random choices and
# runs of one byte (5: tables of integer text; 13: views; 0x2b: tables of integral REALs), per family.
/usr/bin/python3 - "$work/seeds/sqlite_schema_fuzzer" <<'PY'
import os, random, sys
os.makedirs(sys.argv[1], exist_ok=True)
for family in range(3):
    for n in range(2):
        rng = random.Random(family * 10 + n)
        data = bytes([family]) + bytes(rng.randrange(256) for _ in range(3000))
        open(os.path.join(sys.argv[1], f"random_{family}_{n}"), "wb").write(data)
    for fill in (5, 13, 0x2b):
        open(os.path.join(sys.argv[1], f"fill_{family}_{fill}"), "wb").write(bytes([family]) + bytes([fill]) * 2000)
PY

# MCP messages: each method well formed, and a few faults; the fuzzer mutates them into the rest.
mcp_seeds="$work/seeds/mcp_message_fuzzer"
mkdir -p "$mcp_seeds"
printf '%s' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{}}}' > "$mcp_seeds/initialize"
printf '%s' '{"jsonrpc":"2.0","method":"notifications/initialized"}' > "$mcp_seeds/initialized"
printf '%s' '{"jsonrpc":"2.0","id":"a","method":"tools/list"}' > "$mcp_seeds/list"
printf '%s' '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"paths":["a","b"],"n":1.5,"f":true}}}' > "$mcp_seeds/call"
printf '%s\n%s\n' '{"jsonrpc":"2.0","id":3,"method":"ping"}' '[{"jsonrpc":"2.0"}]' > "$mcp_seeds/two_lines"

# GE graph dumps: a ModelDef dump and an ONNX one, tiny, for the fuzzer to mutate into the rest.
ge_seeds="$work/seeds/ge_graph_fuzzer"
mkdir -p "$ge_seeds"
printf '%s\n' 'name: "g" graph { name: "g" op { name: "x" type: "Data" output_desc { dtype: DT_FLOAT16 shape { dim: 8 dim: 768 } } } op { name: "m" type: "MatMulV2" input: "x:0" input: "x:-1" attr { key: "t" value { b: false } } output_desc { dtype: DT_FLOAT16 shape { dim: 8 } } } op { name: "a" type: "Add" input: "m:0" } }' > "$ge_seeds/model_def"
printf '%s\n' 'ir_version: 3 graph { node { output: "y" name: "y_in" op_type: "ge:Data" } node { input: "y" output: "c" name: "Cast_1" op_type: "ge:Cast" attribute { name: "s" ints: [1, 2] type: INTS } } name: "g2" }' > "$ge_seeds/onnx"

# ---- Runs ----------------------------------------------------------------------------------------
# UBSan reports are fatal (the libraries are built in recover mode); libFuzzer catches leaks itself.
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
# One libFuzzer process per fuzzer, FUZZ_JOBS (default: the cores) at a time; each writes its summary
# line to a file, printed in fuzzer order once all are done.
run_one() {
  local fuzzer=$1 name corpus artifacts log seeds dict options more rc execs rate rss status_line cov ft corp artifact what
  name=$(basename "$fuzzer")
  corpus="$work/corpus/$name"
  artifacts="$work/artifacts/$name"
  log="$work/$name.log"
  mkdir -p "$corpus" "$artifacts"
  seeds="$work/seeds/$name"
  [ -d "$seeds" ] || seeds="$json"
  local extra=()
  dict="$here/${name%_fuzzer}.dict"
  [ -f "$dict" ] && extra+=("-dict=$dict")
  # A target's own libFuzzer flags, one line of them (the structure-aware targets run the commands'
  # analyses, which warn on stderr: -close_fd_mask=2 keeps their lines out of the log, not the reports).
  options="$here/${name%_fuzzer}.options"
  if [ -f "$options" ]; then read -ra more < "$options"; extra+=("${more[@]}"); fi

  "$fuzzer" -max_total_time="$seconds" -rss_limit_mb="${FUZZ_RSS_LIMIT_MB:-2048}" -timeout="${FUZZ_TIMEOUT_S:-10}" \
    -print_final_stats=1 -artifact_prefix="$artifacts/" "${extra[@]}" "$corpus" "$seeds" > "$log" 2>&1
  rc=$?

  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)
  status_line=$(grep -E '^#[0-9]+' "$log" | tail -1)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<< "$status_line")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<< "$status_line")
  corp=$(sed -n 's/.* corp: \([^ ]*\).*/\1/p' <<< "$status_line")
  if [ $rc -ne 0 ] || grep -qE '^==[0-9]+==ERROR|runtime error:|^SUMMARY: [A-Za-z]+Sanitizer|ERROR: libFuzzer|outcome depends|content differs' "$log"; then
    artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
    what=$(grep -m1 -oE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer|UndefinedBehaviorSanitizer): [a-z-]+|runtime error: .*|outcome depends on read size|content differs between [0-9]+-byte|ALARM: working on the last Unit for [0-9]+ seconds' "$log")
    echo "$name: FAILED (rc $rc) ${what:-unknown failure}; reproducer ${artifact:-none}; log $log; execs ${execs:-?} at ${rate:-?}/s, cov ${cov:-?}" > "$work/$name.result"
  else
    echo "$name: ok, ${execs:-?} execs in ${seconds} s (${rate:-?}/s), cov ${cov:-?}, ft ${ft:-?}, corpus ${corp:-?}, peak rss ${rss:-?} MB" > "$work/$name.result"
  fi
}

jobs_max=${FUZZ_JOBS:-$(nproc)}
for fuzzer in "${fuzzers[@]}"; do
  rm -f "$work/$(basename "$fuzzer").result"
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n; done
  run_one "$fuzzer" &
done
wait
failed=0
for fuzzer in "${fuzzers[@]}"; do
  result="$work/$(basename "$fuzzer").result"
  if [ -f "$result" ]; then cat "$result"; else echo "$(basename "$fuzzer"): FAILED (no result)"; fi
  grep -q ': FAILED' "$result" 2>/dev/null && failed=1
done
exit $failed
