#!/usr/bin/env bash
# Captures what every tuneprof command prints and writes on a representative set of the shared traces,
# and compares two such captures byte for byte: the check that a change meant to be behaviour-neutral
# (moving files, renaming targets) is.
#
#   scripts/capture_outputs.sh capture BINARY OUTDIR [SHARED_TRACES]
#   scripts/capture_outputs.sh compare DIR_A DIR_B
#
# capture: runs each case with OUTDIR/work as the working directory and writes, per case NAME,
#   NAME.out (stdout), NAME.err (stderr) and NAME.rc (exit status); files a command writes with -o
#   (report's HTML, annotate's trace, plain and gzip) are moved next to them as NAME.<ext>. Inputs are
#   named through the link OUTDIR/work/in -> SHARED_TRACES (default: ../shared/traces beside the
#   repository) and outputs by relative names, so that two captures made from different folders or
#   worktrees print the same paths. Cases run one after the other (about a minute on a release build).
# compare: every file of both captures (work/ aside) must exist in both and be identical; prints the
#   first lines of each difference and exits 1 when there is any, 0 otherwise.
#
# Nothing is masked: no output of these cases holds a timestamp, a temporary path or anything else that
# changes from run to run (two captures of the same binary are identical; gzip output is written with a
# zero modification time). Should a case ever need masking, mask that field here and say why.
set -u

usage() {
  sed -n '6,7p' "$0" >&2
  exit 2
}

compare() {
  local a=$1 b=$2
  [[ -d $a && -d $b ]] || { echo "compare: both captures must be directories" >&2; exit 2; }
  local differences=0 files=0
  while IFS= read -r name; do
    files=$((files + 1))
    if [[ ! -f $a/$name ]]; then
      echo "only in $b: $name"
      differences=$((differences + 1))
    elif [[ ! -f $b/$name ]]; then
      echo "only in $a: $name"
      differences=$((differences + 1))
    elif ! cmp -s "$a/$name" "$b/$name"; then
      echo "differs: $name"
      if [[ $name == *.gz ]]; then
        diff -a <(gzip -dc "$a/$name") <(gzip -dc "$b/$name") | head -20
      else
        diff -a "$a/$name" "$b/$name" | head -20
      fi
      differences=$((differences + 1))
    fi
  done < <( { (cd "$a" && find . -path ./work -prune -o -type f -print)
              (cd "$b" && find . -path ./work -prune -o -type f -print); } | sed 's|^\./||' | sort -u)
  if ((files == 0)); then
    echo "compare: no files in $a or $b" >&2
    exit 2
  fi
  if ((differences > 0)); then
    echo "$differences of $files files differ" >&2
    exit 1
  fi
  echo "identical: $files files" >&2
  exit 0
}

capture() {
  local bin out shared
  bin=$(realpath "$1")
  out=$2
  shared=${3:-$(dirname "$0")/../../shared/traces}
  [[ -x $bin ]] || { echo "capture: $1 is not an executable" >&2; exit 2; }
  [[ -d $shared/kineto ]] || { echo "capture: no shared traces at $shared" >&2; exit 2; }
  shared=$(realpath "$shared")
  local repo
  repo=$(realpath "$(dirname "$0")/..")
  if [[ -e $out ]] && [[ -n $(ls -A "$out") ]]; then
    echo "capture: $out exists and is not empty" >&2
    exit 2
  fi
  mkdir -p "$out/work"
  out=$(realpath "$out")
  local work=$out/work
  ln -s "$shared" "$work/in"
  # A copy of the built-in hardware profiles, for --hardware-file, named by a relative path too.
  cp "$repo/data/hardware_profiles.json" "$work/profiles.json"
  local started=$SECONDS

  # run NAME ARGS...: one case.
  run() {
    local name=$1
    shift
    local t0=$SECONDS
    (cd "$work" && "$bin" "$@" >"$out/$name.out" 2>"$out/$name.err"; echo $? >"$out/$name.rc")
    local file
    for file in "$work/$name".*; do
      [[ -f $file ]] && mv "$file" "$out/"
    done
    echo "  $name: rc $(cat "$out/$name.rc"), $((SECONDS - t0)) s" >&2
  }
  # text and --json of one command.
  both() {
    local name=$1
    shift
    run "$name" "$@"
    run "$name.json" "$@" --json
  }

  # Inputs (paths relative to the shared traces; see their README).
  local hta=in/kineto/hta
  local nccl=$hta/nccl_parser_config/nccl_data.json.gz                 # Kineto GPU, NCCL args, 1 rank
  local alexnet=$hta/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz  # no steps, syncs
  local ranks=$hta/trace_filter                                      # a parent of 2 Kineto ranks
  local diff_base=$hta/trace_compare/base/base.json.gz diff_test=$hta/trace_compare/test/test.json.gz
  local cpu=in/torch-cpu/kineto26
  local gpt_before=$cpu/gpt_train_before.json.gz gpt_after=$cpu/gpt_train_after.json.gz  # shapes, [memory]
  local cnn=$cpu/cnn_eval.json.gz cnn_fused=$cpu/cnn_eval_fused.json.gz
  local gloo0=$cpu/ddp_ws2_rank0.json.gz gloo1=$cpu/ddp_ws2_rank1.json.gz
  local generate=$cpu/generate_kv.json.gz                            # serving markers
  local legacy=in/torch-cpu/legacy113/cnn_train.json.gz              # legacy autograd profiler
  local npu=in/ascend/msinsight/test/data/pytorch
  local npu_text=$npu/text/level1                                    # a parent of 2 torch_npu ranks, text
  local npu_db=$npu/db/level1/rank0_ascend_pt                        # Db export
  local npu_rank=in/ascend/msinsight/server/src/test/test_data/test_rank_0  # RDMA + HCCS, MemoryL0 PMU
  local npu_ranks=in/ascend/msinsight/server/src/test/test_data     # a parent of 2 ranks, one without a timeline
  local npu_view=in/ascend/mstt/profiler/msprof_analyze/test/ut/advisor/advisor_backend/timeline_advice/trace_view.json
  local nsys=in/nsys/h100_2gpu_1s.sqlite nsys_mock=in/nsys/rtx3080_mock.sqlite
  local ns=$hta/ns_resolution_trace                                 # float ns timestamps, record_param_comms
  local cpu_only=$hta/cpu_only                                       # gloo, a large pg_config

  echo "capture: $bin -> $out" >&2
  local name input
  local -a inputs=(nccl "$nccl" alexnet "$alexnet" ranks "$ranks" gpt "$gpt_before" cnn "$cnn"
                   gloo "$gloo0 $gloo1" generate "$generate" legacy "$legacy" npu_text "$npu_text"
                   npu_db "$npu_db" npu_rank "$npu_rank" npu_ranks "$npu_ranks" npu_view "$npu_view"
                   nsys "$nsys" nsys_mock "$nsys_mock" ns "$ns" cpu_only "$cpu_only")
  for ((i = 0; i < ${#inputs[@]}; i += 2)); do
    name=${inputs[i]}
    # Word splitting on purpose: gloo is two files (none of these paths holds a space).
    # shellcheck disable=SC2206
    input=(${inputs[i + 1]})
    both "info.$name" info "${input[@]}"
    both "profile.$name" profile "${input[@]}"
    both "analyze.$name" analyze "${input[@]}"
    both "advise.$name" advise "${input[@]}"
    both "memory.$name" memory "${input[@]}"
    both "comm.$name" comm "${input[@]}"
    run "report.$name" report "${input[@]}" -o "report.$name.html"
  done
  for name in nccl alexnet ranks ns; do
    case $name in
      nccl) input=("$nccl") ;;
      alexnet) input=("$alexnet") ;;
      ranks) input=("$ranks") ;;
      ns) input=("$ns") ;;
    esac
    both "profile_hta.$name" profile --semantics hta "${input[@]}"
  done

  # Flags that change the analyses.
  both profile_flags.generate profile "$generate" --generation-markers request=request#,prefill=prefill,decode=decode_step \
    --model-params 1e6 --kv-bytes-per-token 1024 --context-tokens 140 --compute-threshold 0.5
  both profile_forced.nccl profile "$nccl" --hardware "H100 SXM" --hardware-file profiles.json
  both comm_threshold.nccl comm "$nccl" --utilization-threshold 0.9
  both memory_forced.alexnet memory "$alexnet" --hardware "A100 SXM4 80GB"

  # annotate: plain and gzip output, then the annotated trace annotated again (replaces the diagnosis).
  run annotate.nccl annotate "$nccl" -o annotate.nccl.json
  run annotate.gpt annotate "$gpt_before" -o annotate.gpt.json.gz
  cp "$out/annotate.nccl.json" "$work/annotated_once.json"
  run annotate_again.nccl annotate annotated_once.json -o annotate_again.nccl.json
  rm -f "$work/annotated_once.json"
  run annotate.npu_view annotate "$npu_view" -o annotate.npu_view.json

  # compare: text, --json, --format md, gates, --advice, and the HTML compare report.
  both compare.gpt compare "$gpt_before" "$gpt_after" --tokens-per-step 1024
  run compare_md.gpt compare "$gpt_before" "$gpt_after" --format md --samples-per-step 8
  both compare.cnn compare "$cnn" "$cnn_fused" --alpha 0.1
  both compare.hta compare "$diff_base" "$diff_test"
  both compare.hta_diff compare "$hta/trace_diff/control" "$hta/trace_diff/test"
  both compare.npu compare "$npu_text/rank0_ascend_pt" "$npu_db"
  run compare_gate.cnn compare "$cnn" "$cnn_fused" --fail-if "step_time>+1%" --fail-if-slower 5
  run compare_gate_fail.cnn compare "$cnn_fused" "$cnn" --fail-if-slower 5
  cp "$out/advise.gpt.json.out" "$work/before_advice.json"
  both compare_advice.gpt compare "$gpt_before" "$gpt_after" --advice before_advice.json
  run report_compare.gpt report --compare "$gpt_before" "$gpt_after" -o report_compare.gpt.html

  # Summaries: each written (kept in the capture byte for byte), then read back by every command that
  # takes one, and refused where a command or a flag cannot take it.
  local sum
  for name in nccl ranks gpt npu_text npu_rank nsys cpu_only; do
    case $name in
      nccl) input=("$nccl") ;;
      ranks) input=("$ranks") ;;
      gpt) input=("$gpt_before") ;;
      npu_text) input=("$npu_text") ;;
      npu_rank) input=("$npu_rank") ;;
      nsys) input=("$nsys") ;;
      cpu_only) input=("$cpu_only") ;;
    esac
    run "summarize.$name" summarize "${input[@]}" -o "summarize.$name.tps"
    sum=sum_$name.tps
    cp "$out/summarize.$name.tps" "$work/$sum"
    both "from_summary.profile.$name" profile "$sum"
    both "from_summary.analyze.$name" analyze "$sum"
    both "from_summary.advise.$name" advise "$sum"
    both "from_summary.memory.$name" memory "$sum"
    both "from_summary.comm.$name" comm "$sum"
    run "from_summary.report.$name" report "$sum" -o "from_summary.report.$name.html"
  done
  both from_summary.profile_by_module.gpt profile sum_gpt.tps --by module
  both from_summary.profile_critical_path.ranks profile sum_ranks.tps --critical-path
  both from_summary.mixed.gpt analyze sum_gpt.tps "$gpt_after"
  run summarize_forced.nccl summarize "$nccl" --hardware "H100 SXM" -o summarize_forced.nccl.tps
  cp "$out/summarize_forced.nccl.tps" "$work/sum_forced.tps"
  both from_summary_forced.profile.nccl profile sum_forced.tps --hardware "h100 sxm"
  run error.summary_hardware analyze sum_forced.tps
  run error.summary_compute_flag profile sum_gpt.tps --compute-threshold 0.5
  run error.summary_info info sum_gpt.tps
  run error.summary_hta profile --semantics hta sum_gpt.tps
  run error.summary_compare compare sum_gpt.tps "$gpt_after"
  run error.summary_report_compare report --compare sum_gpt.tps "$gpt_after" -o error.summary_report_compare.html
  run error.summary_name summarize "$nccl" -o summary.json
  run error.summary_of_summary summarize sum_gpt.tps -o error.summary_of_summary.tps
  rm -f "$work"/sum_*.tps

  # Errors and their messages: bad paths, bad flags, bad flag files.
  run error.missing info in/no/such/trace.json
  both error.not_a_trace info profiles.json
  run error.hardware profile "$alexnet" --hardware "no such chip"
  run error.hardware_file memory "$alexnet" --hardware-file no_such_profiles.json
  run error.config advise "$alexnet" --config no_such_config.json
  run error.config_bad analyze "$alexnet" --config profiles.json
  run error.advice compare "$cnn" "$cnn_fused" --advice no_such_advice.json
  run error.gate compare "$cnn" "$cnn_fused" --fail-if "no_such_metric >"
  run error.report_both report "$cnn" --compare "$cnn" "$cnn_fused" -o report_both.html
  run error.annotate_dir annotate "$ranks" -o error.annotate_dir.json
  run error.annotate_npu_dir annotate "$npu_db" -o error.annotate_npu_dir.json
  run error.msprof_db_alone info in/ascend/msinsight/server/src/test/test_data/full_db
  run error.output_is_input annotate "$alexnet" -o "$alexnet"
  run error.semantics profile "$alexnet" --semantics nosuch
  run error.command profiel "$alexnet"

  rm -f "$work/before_advice.json"
  echo "capture: $(find "$out" -path "$work" -prune -o -type f -print | wc -l) files in $((SECONDS - started)) s" >&2
}

case ${1:-} in
  capture) (($# >= 3 && $# <= 4)) || usage; capture "$2" "$3" "${4:-}" ;;
  compare) (($# == 3)) || usage; compare "$2" "$3" ;;
  *) usage ;;
esac
