#include "analysis/advisor/rules/finding_specs.h"

#include <array>
#include <cstdlib>

#include "analysis/advisor/platform.h"

namespace tuneprof {
namespace {

using enum FindingCategory;

// Each row names only the fields it fixes; the others keep FindingSpec's defaults (GCC warns on that in
// designated initializers, clang does not).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
constexpr std::array kFindingSpecs = std::to_array<FindingSpec>({
    {.id = "data.slow_dataloader",
     .category = kData,
     .saves_from = TimePart::kData,
     .metric = "DataLoader time / step time",
     .unit = "% of step",
     .threshold = threshold::kDataLoaderPct,
     .gain_model = "the DataLoader time not hidden under other work",
     .strategy = "Load and prepare batches in background worker processes, ahead of the step, into pinned memory; "
                 "move decoding and augmentation off the training process; check disk I/O.",
     .apis =
         SameApis("DataLoader(dataset, num_workers=N, pin_memory=True, persistent_workers=True, prefetch_factor=2)")},
    {.id = "memory.exposed_memcpy",
     .category = kMemory,
     .saves_from = TimePart::kMemcpy,
     .metric = "memcpy/memset time not overlapped / step time",
     .unit = "% of step",
     .threshold = threshold::kExposedMemcpyPct,
     .gain_model = "min(exposed copy time, compute time that could hide it on a side stream)",
     .strategy = "Copy asynchronously and early: prefetch the next batch on a side stream from pinned memory, "
                 "keep tensors on the device instead of moving them back and forth (zero-copy).",
     .apis = ApisPerPlatform("tensor.to(\"cuda\", non_blocking=True) from pin_memory() buffers; torch.cuda.Stream",
                             "tensor.to(\"npu\", non_blocking=True) from pin_memory() buffers; torch.npu.Stream", "")},
    {.id = "memory.pageable_memcpy",
     .category = kMemory,
     .saves_from = TimePart::kMemcpy,
     .metric = "copies with a pageable host side",
     .unit = "count",
     .strategy = "Allocate host buffers in pinned (page-locked) memory so that copies run asynchronously at full "
                 "link bandwidth.",
     .apis = SameApis("DataLoader(..., pin_memory=True); tensor.pin_memory(); tensor.to(device, non_blocking=True)")},
    {.id = "host.sync_apis",
     .category = kHost,
     .saves_from = TimePart::kHostWait,
     .metric = "host time in device synchronization calls (union over threads, per process) / step time",
     .unit = "% of step",
     .threshold = threshold::kSyncApiPct,
     .gain_model = "min(synchronize time, host-wait idle time) per step",
     .strategy = "Remove synchronizing calls from the step loop: avoid .item(), .cpu(), .tolist() and printing tensors "
                 "each step; copy with non_blocking=True; synchronize streams with events instead of the device.",
     .apis = ApisPerPlatform("torch.cuda.Event / stream.wait_event(); tensor.to(device, non_blocking=True)",
                             "torch.npu.Event / stream.wait_event(); unset ASCEND_LAUNCH_BLOCKING", "")},
    {.id = "host.launch_bound",
     .category = kHost,
     .saves_from = TimePart::kHostWait,
     .metric = "device idle time ended by a launch issued after the device drained, gaps under 10 ms / step time",
     .unit = "% of step",
     .threshold = threshold::kHostWaitPct,
     .gain_model = "the host-wait idle time: with launches ahead of the device it runs back to back"},
    {.id = "host.framework_overhead",
     .category = kHost,
     .saves_from = TimePart::kHostWait,
     .metric = "step time outside operators or in operators too small to pay their dispatch / step time (CPU-only)",
     .unit = "% of step",
     .threshold = threshold::kHostWaitPct,
     .gain_model = "the time between operators: a compiled graph runs them back to back",
     .strategy = "Cut per-operator overhead: compile the model, batch more work into each operator, and keep Python "
                 "work (logging, .item(), list building) out of the step.",
     .apis = SameApis("torch.compile(model)\ntorch.inference_mode() for evaluation")},
    {.id = "host.pauses",
     .category = kHost,
     .saves_from = TimePart::kIdle,
     .metric = "device gaps of 10 ms or more ended by a launch issued after the device drained / step time",
     .unit = "% of step",
     .threshold = threshold::kHostWaitPct,
     .gain_model = "the pauses' time: the device runs when the host launches again",
     .strategy =
         "A launch costs microseconds; 10 ms without one is the host doing something else: sleeping, blocking I/O, "
         "CPU-side preprocessing, evaluation, logging or checkpointing. Find it on the main thread in the pauses and "
         "move it off the step or overlap it; in a distributed job the other ranks wait for it.",
     .apis = SameApis("torch.profiler.profile(with_stack=True) on the pause; NVTX/mstx ranges around host phases")},
    {.id = "fusion.api_replacement",
     .category = kCompute,
     .saves_from = TimePart::kMemoryBound,
     .metric = "operator sequences and optimizer steps a fused torch_npu / MindSpeed API replaces",
     .unit = "call sites",
     .gain_model =
         "sequences: sum - longest member of each occurrence; per-parameter optimizer steps: per op name with k calls "
         "per step, (k - 1) x its shortest call; steps already on multi-tensor kernels and single-operator "
         "replacements: not measured (0)",
     .strategy =
         "Call the fused torch_npu / MindSpeed API at the call sites named instead of the operators it replaces: "
         "one kernel instead of several passes over memory, or one optimizer kernel for all parameters."},
    {.id = "compute.ai_cpu_ops",
     .category = kCompute,
     .saves_from = TimePart::kComputeBound,
     .metric = "kernel_details rows with Accelerator Core AI_CPU and duration >= threshold",
     .unit = "count",
     .threshold = threshold::kAiCpuTaskUs,
     .gain_model = "unknown: the AI Core time of the replacement operators is not in the trace",
     .strategy = "Keep these operators on the AI Core: use supported dtypes (float32/float16 instead of float64, "
                 "int32 instead of int64 where possible) and replace index/nonzero-style operators with masked forms.",
     .apis = SameApis("tensor.float() instead of .double(); torch_npu operator whitelist for the CANN version")},
    {.id = "compute.aicpu_dtype",
     .category = kCompute,
     .saves_from = TimePart::kComputeBound,
     .metric = "kernel_details AI_CPU rows with a DOUBLE or INT64 input data type",
     .unit = "count",
     .gain_model = "unknown: the AI Core time of the operators in float32 / int32 is not in the trace",
     .strategy = "These operators run on the AI CPU because of their float64 / int64 inputs. Where the values allow, "
                 "cast them to float32 / int32 before the operator (indices and counts below 2^31 fit int32) so that "
                 "it runs on the AI Core.",
     .apis = SameApis("tensor.float() instead of .double(); tensor.int() for indices below 2^31")},
    {.id = "communication.bandwidth_contention",
     .category = kCommunication,
     .saves_from = TimePart::kCommunication,
     .metric = "communication.json SDMA bandwidth of HCCL operators that overlap a matmul",
     .unit = "GB/s",
     .threshold = threshold::kSdmaContentionGbps,
     .gain_model = "unknown: the collective's bandwidth without the overlapping matmul is not measured",
     .strategy = "Collectives and matmuls compete for HBM bandwidth. Compare a run with and without the overlap; "
                 "schedule the large matmuls away from the collectives (or the collectives into compute phases "
                 "that are not memory-heavy).",
     .apis = SameApis("reorder or bucket the gradient all-reduce (DDP bucket_cap_mb) so it overlaps lighter compute")},
    {.id = "communication.byte_alignment",
     .category = kCommunication,
     .saves_from = TimePart::kCommunication,
     .metric =
         "off-chip SDMA Memcpy / Reduce_Inline tasks larger than the alignment whose size is not a multiple of it",
     .unit = "count",
     .gain_model = "unknown: the aligned transfer's time is not measured",
     .apis = SameApis("pad the communicated tensor's last dimension so numel x itemsize % 512 == 0")},
    {.id = "config.ascend_env",
     .category = kConfig,
     .saves_from = TimePart::kHostWait,
     .metric = "profiler_metadata ENV_VARIABLES against msprof-analyze's recommended settings",
     .unit = "count",
     .strategy = "Set the environment msprof-analyze recommends for torch_npu training."},
    {.id = "compute.ai_core_frequency",
     .category = kCompute,
     .saves_from = TimePart::kComputeBound,
     .metric = "time-weighted AI Core frequency over each device task against the maximum",
     .unit = "% below max",
     .threshold = threshold::kAiCoreFrequencyDropPct,
     .gain_model = "each slowed task's time x (max - its frequency) / max",
     .strategy = "The AI Core clock dropped while operators ran: check the device temperature and power cap "
                 "(npu-smi info), cooling and the power mode; other jobs on the card can cause it too.",
     .apis = SameApis("npu-smi info -t temp -i <card>\nnpu-smi info -t power -i <card>")},
    {.id = "compute.operator_no_bound",
     .category = kCompute,
     .saves_from = TimePart::kComputeBound,
     .metric = "kernel_details operators longer than the threshold whose vec/mac/scalar/mte1/mte2/mte3 ratios all stay "
               "at or below the bound ratio",
     .unit = "count",
     .gain_model = "unknown: what re-tiling (AOE) recovers is not in the trace",
     .strategy = "No pipeline of these operators is busy: their tiling or data layout leaves the cores waiting. Tune "
                 "them with AOE operator tuning, or change the shapes or dtypes they get.",
     .apis = SameApis("aoe --job_type=2 --tune_ops_file=<operators json> (CANN AOE operator tuning)")},
    {.id = "compute.block_dim",
     .category = kCompute,
     .saves_from = TimePart::kComputeBound,
     .metric = "static-shape kernel_details operators whose Block Dim is not a multiple of the core count",
     .unit = "count",
     .gain_model = "upper bound: each operator's time x the idle share of its waves, 1 - block_dim / (waves x cores)",
     .apis =
         SameApis("pad or reshape the operator's inputs so the tiling divides by the core count; AOE operator tuning")},
    {.id = "config.dynamic_shape",
     .category = kConfig,
     .saves_from = TimePart::kHostWait,
     .metric = "kernel_details OP State: every operator with a state is dynamic",
     .unit = "count",
     .gain_model = "unknown: the host time spent on online compilation per shape is not separated in the trace",
     .strategy = "The whole run uses dynamic-shape operators; switch off online compilation so that the prebuilt "
                 "binary kernels are used, and keep the internal formats off.",
     .apis = SameApis(
         "torch_npu.npu.set_compile_mode(jit_compile=False)\ntorch_npu.npu.config.allow_internal_format = False")},
    {.id = "compute.operator_efficiency",
     .category = kCompute,
     .metric = "kernel_details PipeUtilization ratios per operator name and shape (vector types >= min share, large "
               "matmuls, FlashAttention) against msprof-analyze's pipeline limits",
     .unit = "%",
     .gain_model =
         "upper bound: each shape with optimization space x (1 - its busiest pipeline's ratio / that pipeline's "
         "limit), the time left if that pipeline ran at its limit",
     .strategy =
         "Shapes with optimization space keep every pipeline below its limit: tune them with AOE, or change the "
         "layout that makes them (a TransData pair around an operator means a format change: keep tensors in "
         "one format). Bound shapes are at a pipeline's limit: do less of that work (fuse, or change dtype). Pad "
         "the misaligned matmul and attention axes to the sizes named.",
     .apis = SameApis("aoe --job_type=2 --tune_ops_file=<operators json> (CANN AOE operator "
                      "tuning)\ntorch_npu.npu.config.allow_internal_format = False (fewer TransData format changes)")},
    {.id = "host.op_compile",
     .category = kHost,
     .saves_from = TimePart::kHostWait,
     .metric = "AscendCL@aclopCompileAndExecute calls",
     .unit = "count",
     .threshold = threshold::kOpCompileCount,
     .gain_model = "the aclopCompileAndExecute time per step, from the device's wait for the host",
     .strategy = "Operators are compiled while the model runs; use the prebuilt binary kernels instead of online "
                 "compilation.",
     .apis = SameApis(
         "torch_npu.npu.set_compile_mode(jit_compile=False)\ntorch_npu.npu.config.allow_internal_format = False")},
    {.id = "communication.sync_batchnorm",
     .category = kCommunication,
     .saves_from = TimePart::kCommunication,
     .metric = "events whose name contains syncbatchnorm",
     .unit = "count",
     .threshold = threshold::kSyncBatchNormCount,
     .gain_model = "unknown: the statistics exchange of SyncBatchNorm is not separated from its compute",
     .strategy = "Every SyncBatchNorm layer exchanges statistics across devices in forward and backward. Use plain "
                 "BatchNorm when the per-device batch is large enough, or a fused SyncBatchNorm forward.",
     .apis = SameApis("drop torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)")},
    {.id = "host.synchronize_stream",
     .category = kHost,
     .saves_from = TimePart::kHostWait,
     .metric = "Node@launch calls directly followed by aclrtSynchronizeStream, share of launches",
     .unit = "% of launches",
     .threshold = threshold::kSyncStreamCoOccurrencePct,
     .gain_model = "the host-wait time: synchronous launches keep the device waiting for the host",
     .strategy = "Launches run synchronously, most likely because ASCEND_LAUNCH_BLOCKING=1 is set (a debugging "
                 "switch); unset it, and remove per-operator synchronizations (.item(), .cpu()) from the loop.",
     .apis = SameApis("unset ASCEND_LAUNCH_BLOCKING")},
    {.id = "host.gc",
     .category = kHost,
     .saves_from = TimePart::kHostWait,
     .metric = "GC events at least the threshold long",
     .unit = "count",
     .gain_model = "the collections' time per step, from the host wait",
     .strategy = "Python's garbage collector stops the training loop. Freeze the long-lived objects after setup and "
                 "collect between steps instead of inside them.",
     .apis = SameApis("gc.freeze() after model and optimizer setup\ngc.disable() around the step, gc.collect() between "
                      "steps\ngc.set_threshold(...) with a larger generation-0 threshold")},
    {.id = "memory.allocator_api",
     .category = kMemory,
     .saves_from = TimePart::kHostWait,
     .metric = "aclMallocMemInner + aclrtFreePhysical + aclrtFree time",
     .unit = "ms",
     .threshold = threshold::kMemoryOperatorMs,
     .gain_model = "the allocator calls' time per step, from the host wait",
     .strategy = "The caching allocator keeps returning memory to the driver and asking for it again. Let segments "
                 "grow instead of splitting, and do not call empty_cache() in the loop.",
     .apis = SameApis(
         "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True\nremove torch_npu.npu.empty_cache() from the step")},
    {.id = "communication.low_bandwidth",
     .category = kCommunication,
     .saves_from = TimePart::kCommunication,
     .gain_model =
         "exposed communication x (1 - utilization / threshold): the link brought to the threshold; an upper "
         "bound where ranks wait for a late peer inside the collectives (that wait is communication.straggler's)",
     .strategy = "Check that traffic takes the fast path (NVLink/HCCS inside a node, RDMA across), size the "
                 "communication domain so groups stay inside a node where possible, send larger messages, and "
                 "tune the collective's algorithm and channels.",
     .apis = ApisPerPlatform(
         "NCCL_ALGO / NCCL_PROTO / NCCL_MIN_NCHANNELS; DDP bucket_cap_mb; check nvidia-smi topo -m",
         "HCCL_BUFFSIZE; HCCL_INTRA_ROCE_ENABLE=0 (HCCS inside a node); msprof-analyze cluster communication_matrix",
         "use NCCL/HCCL on accelerators; DDP bucket_cap_mb")},
    {.id = "communication.domain",
     .category = kCommunication,
     .saves_from = TimePart::kCommunication,
     .metric = "a named communication domain's exposed time per step / step time",
     .unit = "% of step",
     .gain_model = "unknown: what a resized domain or another primitive costs is not in the trace"},
    {.id = "communication.small_packets",
     .category = kCommunication,
     .saves_from = TimePart::kCommunication,
     .metric = "communication.json operators whose transit size over SDMA / RDMA is below the transport's limit",
     .gain_model = "unknown: the time the same data takes in fewer, larger packets is not measured",
     .strategy =
         "Send fewer, larger packets: where the small operators are data-parallel gradients, raise the batch or "
         "accumulate gradients over more micro-batches; use ZeRO-1/2 rather than ZeRO-3 where memory allows; use "
         "the fused optimizers, which communicate fewer, larger buffers.",
     .apis = SameApis("DistributedDataParallel(model, bucket_cap_mb=...) over HCCL; gradient "
                      "accumulation\ntorch_npu.optim.NpuFusedAdamW (fused optimizer buffers)")},
    {.id = "communication.small_messages",
     .category = kCommunication,
     .saves_from = TimePart::kCommunication,
     .metric = "collectives below 1 MB / collectives with known size",
     .unit = "% of collectives",
     .threshold = threshold::kSmallMessageSharePct,
     .gain_model = "(small messages - 25 MB buckets they fit in) per step x the shortest small collective (latency)",
     .strategy = "Send fewer, larger messages: raise the gradient bucket size (DDP bucket_cap_mb, default 25), "
                 "coalesce small tensors before a collective, and do not all-reduce per parameter.",
     .apis = ApisPerPlatform("DistributedDataParallel(model, bucket_cap_mb=25); torch.distributed.all_reduce_coalesced",
                             "DistributedDataParallel(model, bucket_cap_mb=25) over HCCL; export HCCL_BUFFSIZE",
                             "DistributedDataParallel(model, bucket_cap_mb=25)")},
    // Its metric, gain model, strategy and APIs depend on which measure of the wait the run has (HCCL wait
    // ratios or the timeline's arrivals), so the rule words them.
    {.id = "communication.straggler",
     .category = kCommunication,
     .saves_from = TimePart::kCommunication,
     .unit = "%",
     .threshold = threshold::kCommWaitRatioPct},
    {.id = "communication.slow_link",
     .category = kCommunication,
     .saves_from = TimePart::kCommunication,
     .metric = "communication.json Total Op Info bandwidth per transport: (fastest - slowest rank) / mean",
     .gain_model = "the time the rank's traffic on the slow transports takes beyond what it would at the ranks' mean "
                   "bandwidth, per step",
     .apis = SameApis("tuneprof comm RUN_DIR\nhccn_tool -i DEVICE -link -g\nmsprof-analyze cluster -m all")},
    {.id = "communication.retransmission",
     .category = kCommunication,
     .saves_from = TimePart::kCommunication,
     .metric = "communication.json RDMA Transit Time of an operation every rank spent as long in",
     .unit = "count",
     .gain_model = "unknown: what the transfer takes without retransmission is not in the trace",
     .strategy =
         "Check that the RDMA transit time of these operations is right, then the network: the switch and NIC "
         "configuration (PFC / ECN, HCCL_RDMA_TC and HCCL_RDMA_SL matching the switch), the port error counters and "
         "the optical modules of the ranks involved.",
     .apis = SameApis("hccn_tool -i DEVICE -stat -g\ntuneprof comm RUN_DIR")},
    {.id = "compute.unit_utilization",
     .category = kCompute,
     .saves_from = TimePart::kComputeBound,
     .gain_model = "compute-bound time x (1 - utilization / threshold): the same work at the threshold's utilization",
     .apis =
         ApisPerPlatform("torch.compile(model); larger batch_size",
                         "aoe --job_type=2; torch_npu.npu.config.allow_internal_format=True", "torch.compile(model)")},
    {.id = "communication.data_parallel",
     .category = kCommunication,
     .saves_from = TimePart::kCommunication,
     .metric = "DataParallel.forward ranges and devices with work",
     .gain_model = "unknown: the DistributedDataParallel run is not measured",
     .strategy = "DataParallel replicates the model and scatters the batch from one Python thread every step; use "
                 "DistributedDataParallel with one process per device.",
     .apis = ApisPerPlatform(
         "torch.nn.parallel.DistributedDataParallel(model, device_ids=[local_rank]) with torchrun --nproc_per_node=N",
         "torch.nn.parallel.DistributedDataParallel(model, device_ids=[local_rank]) with torchrun and backend=\"hccl\"",
         "torch.nn.parallel.DistributedDataParallel with torchrun")},
    {.id = "communication.ddp_backend",
     .category = kCommunication,
     .saves_from = TimePart::kCommunication,
     .metric = "DistributedDataParallel.forward without NCCL communication on a GPU of compute capability >= 3.5",
     .gain_model = "unknown: the NCCL run is not measured",
     .strategy = "NCCL is the fastest backend for DistributedDataParallel on GPUs (gloo copies through the host).",
     .apis = SameApis("torch.distributed.init_process_group(backend=\"nccl\")")},
    {.id = "idle.gpu_gaps",
     .category = kHost,
     .saves_from = TimePart::kIdle,
     .metric = "gaps in device work between its first and last event",
     .unit = "ms",
     .threshold = threshold::kGpuGapMs,
     .gain_model = "the gaps' time per step",
     .strategy = "Find what the host does while the device starves (checkpointing, evaluation, logging, data "
                 "loading, synchronization) and move it off the critical path or overlap it.",
     .apis = SameApis("torch.profiler with_stack=True on the gap; NVTX/mstx ranges around host phases")},
    {.id = "idle.low_utilization",
     .category = kHost,
     .saves_from = TimePart::kIdle,
     .metric = "device busy time per chunk (union of device work)",
     .unit = "% busy",
     .threshold = threshold::kDeviceBusyPct,
     .gain_model = "the idle time inside the low chunks, per step",
     .strategy =
         "Give the device more work per step (larger batch) and remove the host-side stalls in the low ranges."},
    {.id = "communication.exposed",
     .category = kCommunication,
     .saves_from = TimePart::kCommunication,
     .metric = "communication not overlapped / step time",
     .unit = "% of step",
     .threshold = threshold::kExposedCommunicationPct,
     .gain_model = "min(exposed communication, compute time not yet overlapping communication)",
     .strategy =
         "Overlap communication with compute: start each gradient bucket's all-reduce while earlier layers still "
         "run backward (communicate layer l-2 while computing layer l), with buckets sized so the first one is "
         "ready early; prefetch parameters in FSDP.",
     .apis = ApisPerPlatform(
         "DistributedDataParallel(model, bucket_cap_mb=25, gradient_as_bucket_view=True); "
         "FSDP(backward_prefetch=BACKWARD_PRE)",
         "DistributedDataParallel(model, bucket_cap_mb=...) over HCCL; export HCCL_OP_EXPANSION_MODE; overlap in "
         "MindSpeed (--overlap-grad-reduce)",
         "DistributedDataParallel(model, bucket_cap_mb=...); on accelerators use NCCL/HCCL instead of gloo")},
    {.id = "compute.fp32_matmul",
     .category = kCompute,
     .saves_from = TimePart::kComputeBound,
     .metric = "time of compute-bound operators whose inputs are float32 / step time",
     .unit = "% of step",
     .threshold = threshold::kFp32MatmulPct,
     .strategy = "Run matmuls and convolutions in BF16 (or FP16) with automatic mixed precision, keeping FP32 "
                 "master weights and reductions; check accuracy on a validation run.",
     .apis = ApisPerPlatform("torch.autocast(\"cuda\", dtype=torch.bfloat16)",
                             "torch.autocast(\"npu\", dtype=torch.bfloat16) (torch_npu AMP)",
                             "torch.autocast(\"cpu\", dtype=torch.bfloat16) on CPUs with AMX / AVX512-BF16")},
    {.id = "host.gc_pause",
     .category = kHost,
     .saves_from = TimePart::kHostWait,
     .metric = "stretches inside a step with no host operator, runtime API call or device work",
     .unit = "ms",
     .threshold = threshold::kGcPauseMs,
     .gain_model = "the pauses' time per step, from the host wait (conjectured: the trace records no GC events)",
     .apis = SameApis(
         "gc.freeze() after model and optimizer setup\ngc.disable() around the step, gc.collect() between steps")},
    {.id = "idle.gpu_gaps_per_device",
     .category = kHost,
     .saves_from = TimePart::kIdle,
     .metric = "per device: gaps between its first and last kernel/memcpy/memset",
     .unit = "ms",
     .threshold = threshold::kGpuGapMs,
     .gain_model = "the gaps' time per step on the device with the most",
     .strategy = "Find what the host feeding that device does during the gaps (data loading, checkpointing, "
                 "synchronization, waiting for another rank) and overlap it or move it off the critical path.",
     .apis = SameApis("nsys profile --sample=cpu --trace=cuda,nvtx,osrt; NVTX ranges around host phases")},
    {.id = "idle.gpu_time_util_per_device",
     .category = kHost,
     .saves_from = TimePart::kIdle,
     .unit = "% in use",
     .threshold = threshold::kDeviceBusyPct,
     .gain_model = "the idle time inside the low chunks of the device with the most, per step",
     .strategy = "Give the starved device more work (larger batch, fewer host round trips) and remove the host-side "
                 "stalls in the low ranges; an uneven split across devices shows as one device low and another busy."},
    {.id = "memory.peak_near_capacity",
     .category = kMemory,
     .saves_from = TimePart::kMemoryBound,
     .metric = "peak reserved (else allocated) / device memory",
     .unit = "%",
     .threshold = threshold::kMemoryPeakPct,
     .gain_model = "none claimed: headroom against out-of-memory and allocator churn",
     .strategy = "Lower the peak: recompute activations instead of storing them, shard optimizer state and "
                 "gradients, use a smaller micro-batch with gradient accumulation, and free references early.",
     .apis = SameApis("torch.utils.checkpoint.checkpoint\nFSDP / ZeRO (DeepSpeed)\ngradient accumulation")},
    {.id = "memory.fragmentation",
     .category = kMemory,
     .saves_from = TimePart::kHostWait,
     .metric = "(reserved - allocated) / reserved at the allocation peak",
     .unit = "%",
     .threshold = threshold::kFragmentationPct,
     .gain_model = "the device allocator calls inside the steps (expandable segments grow in place)",
     .strategy = "Let the caching allocator grow segments in place instead of reserving new fixed-size ones, "
                 "and keep tensor sizes steady across steps (pad variable sequence lengths to buckets).",
     .apis = ApisPerPlatform("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
                             "PYTORCH_NPU_ALLOC_CONF=expandable_segments:True",
                             "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True")},
    {.id = "fusion.mined_sequence",
     .category = kCompute,
     .unit = "sequences",
     .threshold = threshold::kMinedSequenceMinOccurrences,
     .apis = ApisPerPlatform("torch.compile(model)", "torch.compile(model, backend=torchair.get_npu_backend())", "")},
    {.id = "moe.expert_imbalance",
     .category = kCompute,
     .metric = "max / mean tokens per expert-parallel rank (per expert where the shapes give it), minus 1",
     .unit = "% above the mean",
     .threshold = threshold::kMoeExpertImbalancePct},
    {.id = "fusion.optimizer_foreach",
     .category = kLaunch,
     .saves_from = TimePart::kMemoryBound,
     .metric = "aten ops inside Optimizer.step without multi-tensor (_foreach_/_fused_) kernels",
     .unit = "ops per step",
     .gain_model = "per op name with k calls per step: (k - 1) x its shortest call (its fixed cost)",
     .strategy = "Use the multi-tensor (foreach) or fused optimizer implementation: one kernel updates all "
                 "parameters instead of one kernel per parameter and op.",
     .apis = ApisPerPlatform("torch.optim.AdamW(params, fused=True) (or foreach=True)",
                             "torch_npu.optim.NpuFusedAdamW(params) (or foreach=True)",
                             "torch.optim.AdamW(params, foreach=True)")},
    {.id = "pipeline.stage_imbalance",
     .category = kCommunication,
     .metric = "(slowest - fastest) / slowest stage computing per step over the pipeline's stages",
     .unit = "% of the slowest stage",
     .threshold = threshold::kPipelineImbalancePct,
     .gain_model =
         "stages balanced: the step were every stage to compute the mean stage's work, (slowest - mean) x (slowest "
         "+ its bubble) / slowest per step, the same for every rank"},
    {.id = "pipeline.bubble",
     .category = kCommunication,
     .metric = "this stage's bubble per step / its step",
     .unit = "% of the step",
     .threshold = threshold::kPipelineBubblePct,
     .gain_model = "half the bubble: what twice the micro-batches per step or two virtual stages per rank remove"},
    {.id = "host.sync_memcpy",
     .category = kHost,
     .saves_from = TimePart::kHostWait,
     .metric = "device copies launched by blocking cudaMemcpy / cudaMemset calls",
     .unit = "count",
     .gain_model = "min(time the host blocks in those calls, host-wait idle time) per step",
     .strategy = "Use the asynchronous variants on a stream (cudaMemcpyAsync / cudaMemsetAsync) from pinned memory, "
                 "and synchronize only where the result is needed.",
     .apis =
         SameApis("tensor.to(device, non_blocking=True) from pin_memory() buffers; cudaMemcpyAsync / cudaMemsetAsync")},
    {.id = "compute.tensor_cores_unused",
     .category = kCompute,
     .saves_from = TimePart::kComputeBound,
     .metric = "tensor-core kernel share of kernel time",
     .unit = "%"},
    {.id = "fusion.graph_fusion",
     .category = kCompute,
     .saves_from = TimePart::kMemoryBound,
     .metric = "subgraphs of GE's compiled graph (DUMP_GE_GRAPH dumps) that a graph-fusion pass makes one operator",
     .unit = "subgraphs"},
});
#pragma GCC diagnostic pop

void AddApis(std::string_view lines, Finding* f) {
  while (true) {
    const size_t end = lines.find('\n');
    f->apis.emplace_back(lines.substr(0, end));
    if (end == std::string_view::npos) return;
    lines.remove_prefix(end + 1);
  }
}

}  // namespace

std::span<const FindingSpec> FindingSpecs() { return kFindingSpecs; }

const FindingSpec* FindingSpecOf(std::string_view id) {
  for (const FindingSpec& spec : kFindingSpecs) {
    if (spec.id == id) return &spec;
  }
  return nullptr;
}

Finding NewFinding(std::string_view id, const RankEvidence& rank, const AdvisorConfig& config) {
  const FindingSpec* spec = FindingSpecOf(id);
  if (spec == nullptr) std::abort();  // a rule emits an id the table lacks
  Finding f;
  f.id = spec->id;
  f.category = spec->category;
  f.saves_from = spec->saves_from;
  if (!spec->metric.empty()) f.metric = spec->metric;
  f.unit = std::string(spec->unit);
  if (!spec->threshold.empty()) f.threshold = config.Get(spec->threshold);
  f.gain_model = std::string(spec->gain_model);
  f.strategy = std::string(spec->strategy);
  if (spec->apis.any) AddApis(ForPlatform(rank, spec->apis.cuda, spec->apis.npu, spec->apis.cpu), &f);
  return f;
}

}  // namespace tuneprof
