#!/usr/bin/env python3
"""Write a large, synthetic but realistic Kineto (PyTorch profiler) GPU trace.

The output mimics the Chrome-trace JSON that Kineto writes for a CUDA training
job (see shared/reference/formats.md section A): a 12-layer GPT-like model with
naive attention, trained with DDP (NCCL, world size 8) and foreach AdamW on an
A100, profiled with record_shapes, profile_memory and with_flops.

What ends up in the file, per step:
  * ``ProfilerStep#N`` user_annotation on the main thread; data loading, two
    pageable HtoD copies, zero_grad, ``DistributedDataParallel.forward`` with
    nested ``cpu_op`` events (args External id, Record function id, Ev Idx,
    Sequence number/Fwd thread id where autograd applies, Concrete Inputs, Input
    type, Input Strides, Input Dims), the optimizer step and ``loss.item()``;
  * the backward pass on a separate ``pt_autograd_0`` thread (evaluate_function
    nodes, fwdbwd flows) with two DDP buckets: ``record_param_comms`` +
    ``nccl:all_reduce`` launching ``ncclDevKernel_AllReduce_RING_LL_Sum_float``
    on GPU stream 20;
  * ``cuda_runtime`` calls (cudaLaunchKernel, cudaLaunchKernelExC,
    cudaMemcpyAsync, cudaMemsetAsync, ...) matched by ``correlation`` to
    ``kernel`` / ``gpu_memcpy`` / ``gpu_memset`` events on pid 0 (compute on
    stream 7), ``ac2g`` s/f flow pairs with id = correlation, and
    ``gpu_user_annotation`` projections;
  * ``[memory]`` instant events from a simulated CUDA caching allocator.
Then M metadata, the ``Trace`` span and the two global instants close the list.

Layout follows Kineto rather than timestamp order: main-thread CPU events first,
then the autograd thread, then all CUPTI records (runtime + GPU interleaved),
then GPU user annotations, then metadata. The time base and traceName come after
``traceEvents``. Runtime calls that launch nothing (cudaStreamIsCapturing,
cudaEventRecord, ...) get an unpaired ac2g ``f`` on the CPU thread, a quirk of
real traces. ts/dur are microseconds with exactly 3 decimals, relative to
``baseTimeNanoseconds``.

The file is written in whole steps, streaming: each section is appended to its
own file (the output itself or a temporary spill file next to it) and the spill
files are concatenated at the end, so memory stays at about one step. Output is
deterministic for a given --seed and size arguments; --mb and --events both
stop after the first whole step that reaches the target, so the output is at
least that big.

Usage (stdlib only):
    python3 bench/gen_kineto_trace.py --out /tmp/big_kineto.json          # >= 520 MB
    python3 bench/gen_kineto_trace.py --out /tmp/small.json --mb 5
    python3 bench/gen_kineto_trace.py --out /tmp/smoke.json --events 20000
"""
import argparse
import functools
import os
import random
import shutil
import sys
import time

BASE_NS = 1735689600000000000      # baseTimeNanoseconds (2025-01-01T00:00:00Z)
T0_NS = 4512345678901234            # first timestamp, relative to BASE_NS (~52 days, like real traces)
PID = 2148213
MAIN_TID = PID
AUTOGRAD_TID = PID + 9539
COMPUTE_STREAM = 7
NCCL_STREAM = 20
WORLD = 8

# A100-SXM4-40GB as reported by Kineto's DeviceProperties.
NUM_SMS = 108
MAX_THREADS_PER_SM = 2048
REGS_PER_SM = 65536
SMEM_PER_SM = 167936

# CUPTI callback ids of the runtime API calls we emit.
CBID = {
    "cudaLaunchKernel": 211, "cudaLaunchKernelExC": 430, "cudaMemcpyAsync": 41,
    "cudaMemsetAsync": 51, "cudaStreamSynchronize": 131, "cudaEventRecord": 135,
    "cudaStreamWaitEvent": 147, "cudaStreamIsCapturing": 317,
}

# Throughput model for GPU op durations (ns per unit).
GEMM_FLOPS_PER_NS = 95e3            # ~95 TFLOP/s TF32
HBM_BYTES_PER_NS = 1400.0           # ~1.4 TB/s achieved
PAGEABLE_BYTES_PER_NS = 6.0         # ~6 GB/s pageable PCIe copies
NCCL_BUSBW_BYTES_PER_NS = 140.0     # ~140 GB/s NVLink ring bus bandwidth


def fts(ns):
    """Kineto's fmtTs: integer ns printed as microseconds with 3 decimals."""
    return f"{ns // 1000}.{ns % 1000:03d}"


def fmt_list(dims):
    """Python/Kineto list formatting: [[8, 512], [], [3]]."""
    return "[" + ", ".join("[" + ", ".join(map(str, d)) + "]" for d in dims) + "]"


def contiguous_strides(shape):
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= s
    return tuple(reversed(strides))


@functools.lru_cache(maxsize=None)
def shape_args(dims, types, concrete):
    """The record_shapes part of a cpu_op's args, in PyTorch 2.6 key order.

    dims: tuple of shapes (a shape is a tuple of ints; () for scalars/None);
    types/concrete: tuples of strings. Cached because the same op at the same
    layer repeats every step.
    """
    strides = tuple(contiguous_strides(d) if d else () for d in dims)
    conc = ", ".join('"%s"' % c for c in concrete)
    typ = ", ".join('"%s"' % t for t in types)
    return (f'"Concrete Inputs": [{conc}], "Input type": [{typ}], '
            f'"Input Strides": {fmt_list(strides)}, "Input Dims": {fmt_list(dims)}, ')


class Kernel:
    """Static launch properties of a GPU kernel; occupancy follows Kineto's estimate."""
    __slots__ = ("name", "regs", "smem", "block", "max_active")

    def __init__(self, name, regs, smem, block):
        self.name, self.regs, self.smem, self.block = name, regs, smem, block
        threads = block[0] * block[1] * block[2]
        warps_regs = max(1, (REGS_PER_SM // max(1, regs * threads)))
        limits = [32, MAX_THREADS_PER_SM // threads, warps_regs]
        if smem:
            limits.append(SMEM_PER_SM // smem)
        self.max_active = min(limits)

    def launch_args(self, grid):
        threads = self.block[0] * self.block[1] * self.block[2]
        blocks_per_sm = grid[0] * grid[1] * grid[2] / NUM_SMS
        warps_per_sm = blocks_per_sm * threads / 32
        occ = min(self.max_active, blocks_per_sm) * threads / MAX_THREADS_PER_SM
        return (f'"registers per thread": {self.regs},      "shared memory": {self.smem},      '
                f'"blocks per SM": {blocks_per_sm:.6f},      "warps per SM": {warps_per_sm:.6f},      '
                f'"grid": [{grid[0]}, {grid[1]}, {grid[2]}],      '
                f'"block": [{self.block[0]}, {self.block[1]}, {self.block[2]}],      '
                f'"est. achieved occupancy %": {int(0.5 + occ * 100)}')


def _ew(functor, arrays=3):
    return Kernel(f"void at::native::vectorized_elementwise_kernel<4, {functor}, at::detail::Array<char*, {arrays}> >"
                  f"(int, {functor}, at::detail::Array<char*, {arrays}>)", 20, 0, (128, 1, 1))


K_GEMM_TN = Kernel("sm80_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x16_stage4_warpsize2x2x1_tensor16x8x8_kernel",
                   254, 81920, (128, 1, 1))
K_GEMM_NN = Kernel("sm80_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x16_stage4_warpsize2x2x1_tensor16x8x8_kernel",
                   254, 81920, (128, 1, 1))
K_GEMM_NT = Kernel("sm80_xmma_gemm_f32f32_tf32f32_f32_nt_n_tilesize128x128x16_stage4_warpsize2x2x1_tensor16x8x8_kernel",
                   254, 81920, (128, 1, 1))
K_BMM = Kernel("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x6_tn_align4>"
               "(cutlass_80_tensorop_s1688gemm_64x64_16x6_tn_align4::Params)", 142, 61440, (128, 1, 1))
K_BMM_NN = Kernel("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4>"
                  "(cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4::Params)", 142, 61440, (128, 1, 1))
K_ADD = _ew("at::native::CUDAFunctor_add<float>")
K_DIV = _ew("at::native::AUnaryFunctor<float, float, float, at::native::binary_internal::DivFunctor<float> >", 2)
K_FILL = _ew("at::native::FillFunctor<float>", 1)
K_MASKED_FILL = Kernel(
    "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::(anonymous namespace)"
    "::masked_fill_kernel(at::TensorIterator&, c10::Scalar const&)::{lambda()#1}::operator()() const::{lambda()#7}::"
    "operator()() const::{lambda(float, bool)#1}>(at::TensorIteratorBase&, at::native::(anonymous namespace)::"
    "masked_fill_kernel(at::TensorIterator&, c10::Scalar const&)::{lambda()#1}::operator()() const::{lambda()#7}::"
    "operator()() const::{lambda(float, bool)#1} const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<"
    "at::native::(anonymous namespace)::masked_fill_kernel(at::TensorIterator&, c10::Scalar const&)::{lambda()#1}::"
    "operator()() const::{lambda()#7}::operator()() const::{lambda(float, bool)#1}>(at::TensorIteratorBase&, "
    "at::native::(anonymous namespace)::masked_fill_kernel(at::TensorIterator&, c10::Scalar const&)::{lambda()#1}::"
    "operator()() const::{lambda()#7}::operator()() const::{lambda(float, bool)#1} const&)::{lambda(int)#1})",
    30, 0, (128, 1, 1))
K_COPY = Kernel(
    "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda"
    "(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}>"
    "(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()"
    "() const::{lambda()#7}::operator()() const::{lambda(float)#1} const&)::{lambda(int)#1}>(int, at::native::"
    "gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() "
    "const::{lambda()#7}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, at::native::"
    "direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() "
    "const::{lambda(float)#1} const&)::{lambda(int)#1})", 26, 0, (128, 1, 1))
K_GELU = _ew("at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::"
             "operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}", 2)
K_GELU_BW = _ew("at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::"
                "operator()() const::{lambda()#2}::operator()() const::{lambda(float, float)#1}")
K_LN = Kernel("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, float, "
              "float const*, float const*, float const*, float*, float*, float*)", 38, 0, (256, 1, 1))
K_LN_BW_IN = Kernel("void at::native::(anonymous namespace)::layer_norm_grad_input_kernel_vectorized<float, float>("
                    "float const*, float const*, float const*, float const*, float const*, float*, int)",
                    40, 0, (256, 1, 1))
K_LN_BW_GB = Kernel("void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernel_32x32<float, float>(long, "
                    "long, float const*, float const*, float const*, float const*, float*, float*)",
                    64, 8448, (32, 32, 1))
K_SOFTMAX = Kernel("void (anonymous namespace)::softmax_warp_forward<float, float, float, 9, false, false>(float*, "
                   "float const*, int, int, int, bool const*, int, bool)", 56, 0, (32, 4, 1))
K_SOFTMAX_BW = Kernel("void (anonymous namespace)::softmax_warp_backward<float, float, float, 9, false, false>("
                      "float*, float const*, float const*, int, int, int, bool const*)", 60, 0, (32, 4, 1))
K_EMB = Kernel("void at::native::(anonymous namespace)::indexSelectLargeIndex<float, long, unsigned int, 2, 2, -2, "
               "true>(at::cuda::detail::TensorInfo<float, unsigned int>, at::cuda::detail::TensorInfo<float, unsigned "
               "int>, at::cuda::detail::TensorInfo<long, unsigned int>, int, int, unsigned int, unsigned int, long)",
               32, 0, (128, 1, 1))
K_EMB_BW = Kernel("void at::native::(anonymous namespace)::embedding_backward_feature_kernel<float, float, long>("
                  "long const*, float const*, float*, int, long, int, int)", 40, 4096, (32, 8, 1))
_SUM_OP = ("at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, "
           "float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4, 4>")
K_SUM = Kernel(f"void at::native::reduce_kernel<512, 1, {_SUM_OP} >({_SUM_OP})", 32, 16, (32, 16, 1))
K_LOG_SOFTMAX = Kernel("void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, "
                       "at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>(float*, float const*, int)",
                       40, 0, (1024, 1, 1))
K_LOG_SOFTMAX_BW = Kernel("void at::native::(anonymous namespace)::cunn_SoftMaxBackward<4, float, float, float, "
                          "at::native::(anonymous namespace)::LogSoftMaxBackwardEpilogue>(float*, float const*, "
                          "float const*, long)", 40, 0, (1024, 1, 1))
K_NLL = Kernel("void at::native::(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d<float, float, long>("
               "float*, float*, float const*, long const*, float const*, bool, long, long, long, long)",
               30, 0, (32, 1, 1))
K_NLL_BW = Kernel("void at::native::(anonymous namespace)::nll_loss_backward_reduce_cuda_kernel_2d<float, long>("
                  "float*, float const*, long const*, float const*, float const*, bool, int, int, long, long)",
                  24, 0, (32, 1, 1))
K_ADAM = Kernel("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::"
                "TensorListMetadata<2>, at::native::(anonymous namespace)::BinaryOpListAlphaFunctor<float, 2, 2, 0>, "
                "std::plus<float>, float>(at::native::(anonymous namespace)::TensorListMetadata<2>, at::native::"
                "(anonymous namespace)::BinaryOpListAlphaFunctor<float, 2, 2, 0>, std::plus<float>, float)",
                30, 0, (512, 1, 1))
K_NCCL = Kernel("ncclDevKernel_AllReduce_RING_LL_Sum_float(ncclDevKernelArgsStorage<4096ul>)", 96, 87568, (544, 1, 1))

F = "float"
L = "long int"
S = "Scalar"
SL = "ScalarList"
TL = "TensorList"


class CudaAllocator:
    """Just enough of the caching allocator for plausible [memory] events.

    Activations and gradients come from two address regions; both restart every
    step because the caching allocator hands out the same blocks each iteration.
    """
    SEGMENT = 20 << 20
    ACT_BASE = 0x7F3A40000000
    GRAD_BASE = 0x7F2E00000000

    def __init__(self, static_bytes):
        self.allocated = static_bytes
        self.reserved = self._round_segment(static_bytes)
        self.bump = {self.ACT_BASE: 0, self.GRAD_BASE: 0}

    def _round_segment(self, n):
        return -(-n // self.SEGMENT) * self.SEGMENT

    def new_step(self):
        for region in self.bump:
            self.bump[region] = 0

    def alloc(self, nbytes, region):
        nbytes = -(-nbytes // 512) * 512
        addr = region + self.bump[region]
        self.bump[region] += nbytes
        self.allocated += nbytes
        if self.allocated > self.reserved:          # reserved memory only grows
            self.reserved = self._round_segment(self.allocated)
        return addr, nbytes

    def free(self, nbytes):
        self.allocated -= nbytes


class Model:
    """Shapes of the simulated GPT (fp32): batch 8, seq 512, d 1024, 16 heads."""

    def __init__(self, layers):
        self.B, self.T, self.D, self.H, self.V = 8, 512, 1024, 16, 50304
        self.FF = 4 * self.D
        self.layers = layers
        self.hd = self.D // self.H
        self.N = self.B * self.T
        p = []
        for _ in range(layers):
            p += [(self.D,), (self.D,)]                                          # ln1
            for _ in range(4):                                                   # q k v proj
                p += [(self.D, self.D), (self.D,)]
            p += [(self.D,), (self.D,)]                                          # ln2
            p += [(self.FF, self.D), (self.FF,), (self.D, self.FF), (self.D,)]  # fc1 fc2
        p = [(self.V, self.D), (self.T, self.D)] + p + [(self.D,), (self.D,), (self.V, self.D)]
        self.param_numel = sum(_numel(s) for s in p)


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


class Gen:
    """Simulates one process' CPU threads and GPU streams and formats their events."""

    def __init__(self, model, rng):
        self.m = model
        self.rand = rng.random
        self.now = T0_NS
        self.gpu_free_at = {COMPUTE_STREAM: T0_NS, NCCL_STREAM: T0_NS}
        self.corr = 7_000
        self.rf_id = 0
        self.ev_idx = 0
        self.seq = 0
        self.flow_id = 0
        self.next_ext_block = 0
        self.ext = {}                 # tid -> [next id, end of block]
        self.parts = {MAIN_TID: [], AUTOGRAD_TID: []}
        self.stacks = {MAIN_TID: [], AUTOGRAD_TID: []}
        self.gpu_parts = []
        self.annot_parts = []
        self.alloc = CudaAllocator(model.param_numel * 4 * 3)   # params + AdamW state
        self.live = []                # activation blocks of the current step, in allocation order
        self.grads = []               # gradient blocks, freed by the next zero_grad
        self.last_gpu_start = 0
        self.set_thread(MAIN_TID)
        self.n_events = 0

    # ---------------------------------------------------------------- utilities
    def jitter(self, lo_ns, hi_ns):
        return int(lo_ns + self.rand() * (hi_ns - lo_ns))

    def set_thread(self, tid):
        self.tid = tid
        self.stack = self.stacks[tid]
        self.cpu_parts = self.parts[tid]

    def next_ext(self):
        # PyTorch hands out External ids in per-thread blocks of 512, so ids are
        # unique but interleave between threads.
        blk = self.ext.get(self.tid)
        if blk is None or blk[0] == blk[1]:
            start = self.next_ext_block * 512 + 1
            self.next_ext_block += 1
            blk = self.ext[self.tid] = [start, start + 512]
        v = blk[0]
        blk[0] += 1
        return v

    def cur_ext(self):
        return self.stack[-1][4] if self.stack else 0

    def emit_cpu(self, text):
        self.cpu_parts.append(text)
        self.n_events += 1

    def gpu_annotation(self, name, ext, start, end, stream):
        # Kineto widens GPU projections of user annotations by 1 ns on each side.
        self.annot_parts.append(
            f',\n  {{\n    "ph": "X", "cat": "gpu_user_annotation", "name": "{name}", "pid": 0, "tid": {stream},\n'
            f'    "ts": {fts(start - 1)}, "dur": {fts(end - start + 2)},\n    "args": {{\n'
            f'      "External id": {ext}\n    }}\n  }}')
        self.n_events += 1

    # ----------------------------------------------------------------- CPU ops
    def op(self, name, dims=None, types=None, concrete=None, seq=None, fwd_thread=0, cat="cpu_op", extra=""):
        """Open a CPU op; use as `with g.op(...):` (Gen is its own context manager).

        dims/types/concrete describe the inputs (record_shapes). The event's slot
        is reserved now, so events stay in start order, and filled on exit.
        """
        self.now += self.jitter(300, 1500)
        self.rf_id += 1
        ext = self.next_ext()
        idx = self.ev_idx
        self.ev_idx += 1
        if dims is not None:
            if concrete is None:
                concrete = ("",) * len(dims)
            extra = extra + shape_args(dims, types, concrete)
        self.cpu_parts.append(None)   # filled in on close, once dur is known
        self.n_events += 1
        self.stack.append((len(self.cpu_parts) - 1, name, cat, self.now, ext, self.rf_id, idx, seq, fwd_thread, extra))
        return self

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.now += self.jitter(500, 3000)
        slot, name, cat, ts, ext, rf, idx, seq, fwd_thread, extra = self.stack.pop()
        seq_txt = f'"Sequence number": {seq}, "Fwd thread id": {fwd_thread}, ' if seq is not None else ""
        self.cpu_parts[slot] = (
            f',\n  {{\n    "ph": "X", "cat": "{cat}", "name": "{name}", "pid": {PID}, "tid": {self.tid},\n'
            f'    "ts": {fts(ts)}, "dur": {fts(self.now - ts)},\n    "args": {{\n'
            f'      "External id": {ext},{seq_txt}"Record function id": {rf}, {extra}"Ev Idx": {idx}\n    }}\n  }}')
        return False

    def leaf(self, name, dims=None, types=None, concrete=None, seq=None, busy=(800, 3000)):
        with self.op(name, dims, types, concrete, seq):
            self.now += self.jitter(*busy)

    def annotation(self, name):
        return self.op(name, cat="user_annotation")

    def last_open_ts(self):
        return self.stack[-1][3]

    def flow_start(self):
        """fwdbwd flow from the innermost open forward op; returns the flow id."""
        self.flow_id += 1
        self.emit_cpu(f',\n  {{\n    "ph": "s", "id": {self.flow_id}, "pid": {PID}, "tid": {self.tid}, '
                      f'"ts": {fts(self.last_open_ts())},\n    "cat": "fwdbwd", "name": "fwdbwd"\n  }}')
        return self.flow_id

    def flow_end(self, fid):
        self.emit_cpu(f',\n  {{\n    "ph": "f", "id": {fid}, "pid": {PID}, "tid": {self.tid}, '
                      f'"ts": {fts(self.last_open_ts())},\n    "cat": "fwdbwd", "name": "fwdbwd", "bp": "e"\n  }}')

    def next_seq(self):
        self.seq += 1
        return self.seq

    # ------------------------------------------------------------------ memory
    def memory(self, nbytes, addr):
        a = self.alloc
        self.emit_cpu(
            f',\n  {{\n    "ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]",\n'
            f'    "pid": {PID}, "tid": {self.tid},\n    "ts": {fts(self.now)},\n    "args": {{\n'
            f'      "Total Reserved": {a.reserved}, "Total Allocated": {a.allocated}, "Bytes": {nbytes}, '
            f'"Addr": {addr}, "Device Id": 0, "Device Type": 1, "Ev Idx": {self.ev_idx}\n    }}\n  }}')
        self.ev_idx += 1

    def malloc(self, nbytes, grad=False):
        """Allocate a CUDA block now; returns (addr, bytes). Gradients live until the next zero_grad."""
        block = self.alloc.alloc(nbytes, CudaAllocator.GRAD_BASE if grad else CudaAllocator.ACT_BASE)
        (self.grads if grad else self.live).append(block)
        self.memory(block[1], block[0])
        return block

    def free(self, block):
        self.alloc.free(block[1])
        self.memory(-block[1], block[0])

    def release(self, blocks):
        """Free the given activation blocks (e.g. saved tensors after their backward)."""
        for block in blocks:
            self.live.remove(block)
            self.free(block)
        blocks.clear()

    def release_all(self):
        for block in self.live:
            self.free(block)
        self.live = []

    def empty(self, shape, name="aten::empty"):
        """aten::empty(_strided/_like) allocating a float tensor; returns the block."""
        with self.op(name, ((), (), (), (), (), ()), (SL, S, S, "", "", S),
                     ("[" + ", ".join(map(str, shape)) + "]", "6", "0", "", "", "0")):
            self.now += self.jitter(1500, 4000)
            return self.malloc(_numel(shape) * 4)

    # ------------------------------------------------------------- GPU launches
    def _runtime(self, name, dur, with_flow):
        """Emit a cuda_runtime event starting now; returns (ts, correlation)."""
        self.corr += 1
        ts = self.now
        ext = self.cur_ext()
        ev = (f',\n  {{\n    "ph": "X", "cat": "cuda_runtime", "name": "{name}", "pid": {PID}, "tid": {self.tid},\n'
              f'    "ts": {fts(ts)}, "dur": {fts(dur)},\n    "args": {{\n'
              f'      "External id": {ext},      "cbid": {CBID[name]}, "correlation": {self.corr}\n    }}\n  }}')
        if with_flow:
            ev += (f',\n  {{\n    "ph": "s", "id": {self.corr}, "pid": {PID}, "tid": {self.tid}, "ts": {fts(ts)},\n'
                   f'    "cat": "ac2g", "name": "ac2g"\n  }}')
        else:
            # Kineto writes a dangling flow end for runtime calls without a GPU op.
            ev += (f',\n  {{\n    "ph": "f", "id": {self.corr}, "pid": {PID}, "tid": {self.tid}, "ts": {fts(ts)},\n'
                   f'    "cat": "ac2g", "name": "ac2g", "bp": "e"\n  }}')
        self.now += dur
        return ts, ev

    def _gpu_slot(self, stream, launch_ts, dur):
        start = max(self.gpu_free_at[stream], launch_ts + self.jitter(2500, 7000))
        self.gpu_free_at[stream] = start + dur + self.jitter(1000, 2500)
        self.step_gpu_first = min(self.step_gpu_first, start)
        self.step_gpu_last = max(self.step_gpu_last, start + dur)
        self.last_gpu_start = start
        return start

    def sync_call(self, name):
        """Runtime call with no GPU work (stream/event bookkeeping)."""
        _, ev = self._runtime(name, self.jitter(1500, 5000), False)
        self.gpu_parts.append(ev)
        self.n_events += 2

    def launch(self, kernel, grid, dur, stream=COMPUTE_STREAM, runtime="cudaLaunchKernel", extra_args=""):
        ts, rt = self._runtime(runtime, self.jitter(3500, 11000), True)
        start = self._gpu_slot(stream, ts, dur)
        # Kineto writes the GPU record (and its flow end) before its runtime call.
        self.gpu_parts.append(
            f',\n  {{\n    "ph": "X", "cat": "kernel", "name": "{kernel.name}", "pid": 0, "tid": {stream},\n'
            f'    "ts": {fts(start)}, "dur": {fts(dur)},\n    "args": {{\n'
            f'      "External id": {self.cur_ext()},      "queued": 0, "device": 0, "context": 1,      '
            f'"stream": {stream}, "correlation": {self.corr},      {kernel.launch_args(grid)}{extra_args}\n    }}\n  }}'
            f',\n  {{\n    "ph": "f", "id": {self.corr}, "pid": 0, "tid": {stream}, "ts": {fts(start)},\n'
            f'    "cat": "ac2g", "name": "ac2g", "bp": "e"\n  }}' + rt)
        self.n_events += 4
        return start + dur

    def _mem_op(self, cat, name, runtime, nbytes, dur, blocking):
        start = self._gpu_slot(COMPUTE_STREAM, self.now, dur)
        # Pageable copies are synchronous: the runtime call returns only after
        # the copy, which itself waits for all work queued before it.
        rt_dur = start + dur - self.now + self.jitter(2000, 6000) if blocking else self.jitter(4000, 12000)
        _, rt = self._runtime(runtime, rt_dur, True)
        bw = nbytes / dur if dur else '"N/A"'
        self.gpu_parts.append(
            f',\n  {{\n    "ph": "X", "cat": "{cat}", "name": "{name}", "pid": 0, "tid": {COMPUTE_STREAM},\n'
            f'    "ts": {fts(start)}, "dur": {fts(dur)},\n    "args": {{\n'
            f'      "External id": {self.cur_ext()},      "device": 0, "context": 1,      '
            f'"stream": {COMPUTE_STREAM}, "correlation": {self.corr},      '
            f'"bytes": {nbytes}, "memory bandwidth (GB/s)": {bw}\n    }}\n  }}'
            f',\n  {{\n    "ph": "f", "id": {self.corr}, "pid": 0, "tid": {COMPUTE_STREAM}, "ts": {fts(start)},\n'
            f'    "cat": "ac2g", "name": "ac2g", "bp": "e"\n  }}' + rt)
        self.n_events += 4

    def memcpy_h2d(self, nbytes):
        dur = int(nbytes / PAGEABLE_BYTES_PER_NS) + self.jitter(6000, 12000)
        self._mem_op("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", "cudaMemcpyAsync", nbytes, dur, True)

    def memcpy_d2h(self, nbytes):
        # The copy queues behind all outstanding work: this is where the CPU waits for the GPU.
        dur = self.jitter(1200, 2500)
        self._mem_op("gpu_memcpy", "Memcpy DtoH (Device -> Pageable)", "cudaMemcpyAsync", nbytes, dur, True)

    def memset(self, nbytes):
        dur = int(nbytes / HBM_BYTES_PER_NS) + self.jitter(1200, 2500)
        self._mem_op("gpu_memset", "Memset (Device)", "cudaMemsetAsync", nbytes, dur, False)

    # ----------------------------------------------------------- kernel models
    def gemm(self, kernel, m, n, k, batch=1):
        flops = 2.0 * m * n * k * batch
        dur = int(flops / GEMM_FLOPS_PER_NS * (0.9 + 0.2 * self.rand())) + self.jitter(3000, 6000)
        tile = 128 if kernel.regs > 200 else 64
        self.launch(kernel, (-(-n // tile), -(-m // tile), batch), dur)

    def elementwise(self, kernel, numel, tensors=3):
        dur = int(numel * 4 * tensors / HBM_BYTES_PER_NS * (0.95 + 0.15 * self.rand())) + self.jitter(1800, 3500)
        threads = kernel.block[0] * kernel.block[1]
        self.launch(kernel, (max(1, min(-(-numel // (threads * 4)), 65535)), 1, 1), dur)

    def rowwise(self, kernel, rows, cols, tensors=2):
        dur = int(rows * cols * 4 * tensors / HBM_BYTES_PER_NS * (0.95 + 0.2 * self.rand())) + self.jitter(2500, 5000)
        per_block = kernel.block[1] if kernel.block[0] == 32 else 1
        self.launch(kernel, (-(-rows // per_block), 1, 1), dur)


# --------------------------------------------------------------------------
# The training step. Shapes are tuples so shape_args() can cache them.
# --------------------------------------------------------------------------

def fwd_linear(g, x_shape, out_f, in_f, bias=True):
    """nn.Linear on a 3-D input; returns (fwdbwd flow id, output block)."""
    m = _numel(x_shape[:-1])
    out_shape = x_shape[:-1] + (out_f,)
    w, b = (out_f, in_f), (out_f,)
    seq = g.next_seq()
    with g.op("aten::linear", (x_shape, w, b if bias else ()), (F, F, F if bias else ""), seq=seq):
        g.leaf("aten::reshape", (x_shape, ()), (F, SL), ("", "[%d, %d]" % (m, in_f)), seq=seq, busy=(600, 1500))
        with g.op("aten::t", (w,), (F,), seq=g.next_seq()):
            with g.op("aten::transpose", (w, (), ()), (F, S, S), ("", "0", "1")):
                g.leaf("aten::as_strided", (w, (), (), ()), (F, SL, SL, ""),
                       ("", "[%d, %d]" % (in_f, out_f), "[1, %d]" % in_f, ""), busy=(400, 1200))
        seq_mm = g.next_seq()
        if bias:
            with g.op("aten::addmm", (b, (m, in_f), (in_f, out_f), (), ()), (F, F, F, S, S),
                      ("", "", "", "1", "1"), seq=seq_mm):
                fid = g.flow_start()
                out = g.empty((m, out_f))
                g.leaf("aten::resolve_conj", ((m, in_f),), (F,), busy=(200, 600))
                g.gemm(K_GEMM_TN, m, out_f, in_f)
        else:
            with g.op("aten::mm", ((m, in_f), (in_f, out_f)), (F, F), seq=seq_mm):
                fid = g.flow_start()
                out = g.empty((m, out_f))
                g.gemm(K_GEMM_TN, m, out_f, in_f)
        g.leaf("aten::view", ((m, out_f), ()), (F, SL), ("", "[" + ", ".join(map(str, out_shape)) + "]"),
               seq=g.next_seq(), busy=(500, 1200))
    return fid, out


def fwd_pointwise(g, name, kernel, shape, types, concrete, tensors=3):
    with g.op(name, (shape,) + ((shape,) if tensors == 3 else ()) + ((),) * (len(types) - (2 if tensors == 3 else 1)),
              types, concrete, seq=g.next_seq()):
        fid = g.flow_start()
        out = g.empty(shape, "aten::empty_strided")
        g.elementwise(kernel, _numel(shape), tensors)
    return fid, out


def fwd_layer_norm(g, shape):
    d = shape[-1]
    seq = g.next_seq()
    ln_dims = (shape, (), (d,), (d,), (), ())
    with g.op("aten::layer_norm", ln_dims, (F, SL, F, F, S, S), ("", "[%d]" % d, "", "", "1e-05", "True"), seq=seq):
        with g.op("aten::native_layer_norm", ln_dims[:5], (F, SL, F, F, S), ("", "[%d]" % d, "", "", "1e-05"),
                  seq=seq):
            fid = g.flow_start()
            out = g.empty(shape)
            g.empty(shape[:-1])
            g.empty(shape[:-1])
            g.rowwise(K_LN, _numel(shape[:-1]), d)
    return fid, out


def fwd_split_heads(g, shape):
    """view -> transpose(1, 2) -> reshape (a copy) to (B*H, T, hd)."""
    m = g.m
    four = (m.B, m.T, m.H, m.hd)
    g.leaf("aten::view", (shape, ()), (F, SL), ("", "[%d, %d, %d, %d]" % four), seq=g.next_seq(), busy=(500, 1200))
    g.leaf("aten::transpose", (four, (), ()), (F, S, S), ("", "1", "2"), seq=g.next_seq())
    tr = (m.B, m.H, m.T, m.hd)
    with g.op("aten::reshape", (tr, ()), (F, SL), ("", "[%d, %d, %d]" % (m.B * m.H, m.T, m.hd)), seq=g.next_seq()):
        with g.op("aten::clone", (tr, ()), (F, S), ("", "0")):
            out = g.empty(tr, "aten::empty_like")
            with g.op("aten::copy_", (tr, tr, ()), (F, F, S), ("", "", "False")):
                g.elementwise(K_COPY, _numel(tr), 2)
        g.leaf("aten::_unsafe_view", (tr, ()), (F, SL), ("", "[%d, %d, %d]" % (m.B * m.H, m.T, m.hd)))
    return out


def forward_layer(g, saved):
    m = g.m
    x = (m.B, m.T, m.D)
    bh, t, hd = m.B * m.H, m.T, m.hd
    fl = {}
    fl["ln1"], blk = fwd_layer_norm(g, x)
    saved.append(blk)
    for name in ("q", "k", "v"):
        fl[name], blk = fwd_linear(g, x, m.D, m.D)
        saved.append(blk)
        saved.append(fwd_split_heads(g, x))
    # Naive attention: bmm -> div -> masked_fill -> softmax -> bmm; the score
    # matrices are (B*H, T, T) and dominate memory, as in real unfused models.
    scores = (bh, t, t)
    g.leaf("aten::transpose", ((bh, t, hd), (), ()), (F, S, S), ("", "1", "2"), seq=g.next_seq())
    with g.op("aten::bmm", ((bh, t, hd), (bh, hd, t)), (F, F), seq=g.next_seq()):
        fl["bmm1"] = g.flow_start()
        saved.append(g.empty(scores))
        g.gemm(K_BMM, t, t, hd, bh)
    fl["div"], blk = fwd_pointwise(g, "aten::div", K_DIV, scores, (F, S), ("", "8.0"), tensors=2)
    saved.append(blk)
    with g.op("aten::masked_fill", (scores, (t, t), ()), (F, "bool", S), ("", "", "-inf"), seq=g.next_seq()):
        fl["mask"] = g.flow_start()
        with g.op("aten::clone", (scores, ()), (F, S), ("", "0")):
            saved.append(g.empty(scores, "aten::empty_like"))
            with g.op("aten::copy_", (scores, scores, ()), (F, F, S), ("", "", "False")):
                g.elementwise(K_COPY, _numel(scores), 2)
        g.leaf("aten::masked_fill_", (scores, (t, t), ()), (F, "bool", S), ("", "", "-inf"), busy=(2000, 4000))
        g.elementwise(K_MASKED_FILL, _numel(scores), 3)
    with g.op("aten::softmax", (scores, (), ()), (F, S, ""), ("", "-1", ""), seq=g.next_seq()):
        with g.op("aten::_softmax", (scores, (), ()), (F, S, S), ("", "-1", "False"), seq=g.seq):
            fl["softmax"] = g.flow_start()
            saved.append(g.empty(scores))
            g.rowwise(K_SOFTMAX, bh * t, t)
    with g.op("aten::bmm", (scores, (bh, t, hd)), (F, F), seq=g.next_seq()):
        fl["bmm2"] = g.flow_start()
        saved.append(g.empty((bh, t, hd)))
        g.gemm(K_BMM_NN, t, hd, t, bh)
    g.leaf("aten::view", ((bh, t, hd), ()), (F, SL), ("", "[%d, %d, %d, %d]" % (m.B, m.H, t, hd)), seq=g.next_seq())
    g.leaf("aten::transpose", ((m.B, m.H, t, hd), (), ()), (F, S, S), ("", "1", "2"), seq=g.next_seq())
    with g.op("aten::reshape", ((m.B, t, m.H, hd), ()), (F, SL), ("", "[%d, %d, %d]" % x), seq=g.next_seq()):
        with g.op("aten::clone", ((m.B, t, m.H, hd), ()), (F, S), ("", "0")):
            saved.append(g.empty((m.B, t, m.H, hd), "aten::empty_like"))
            with g.op("aten::copy_", ((m.B, t, m.H, hd),) * 2 + ((),), (F, F, S), ("", "", "False")):
                g.elementwise(K_COPY, _numel(x), 2)
    fl["proj"], proj_out = fwd_linear(g, x, m.D, m.D)
    fl["res1"], blk = fwd_pointwise(g, "aten::add", K_ADD, x, (F, F, S), ("", "", "1"))
    g.release([proj_out])
    saved.append(blk)
    fl["ln2"], blk = fwd_layer_norm(g, x)
    saved.append(blk)
    fl["fc1"], blk = fwd_linear(g, x, m.FF, m.D)
    saved.append(blk)
    fl["gelu"], blk = fwd_pointwise(g, "aten::gelu", K_GELU, (m.B, t, m.FF), (F, ""), ("", "none"), tensors=2)
    saved.append(blk)
    fl["fc2"], fc2_out = fwd_linear(g, (m.B, t, m.FF), m.D, m.FF)
    fl["res2"], blk = fwd_pointwise(g, "aten::add", K_ADD, x, (F, F, S), ("", "", "1"))
    g.release([fc2_out])
    saved.append(blk)
    return fl


# ------------------------------------------------------------------ backward

class BwNode:
    """`with BwNode(g, "AddmmBackward0", fid):` evaluate_function wrapper + the node itself."""
    __slots__ = ("g", "node", "fid")

    def __init__(self, g, node, fid):
        self.g, self.node, self.fid = g, node, fid

    def __enter__(self):
        g = self.g
        # Backward nodes carry the sequence number of their forward op; a
        # running counter is close enough for a synthetic trace.
        seq = g.next_seq()
        g.op("autograd::engine::evaluate_function: " + self.node, seq=seq, fwd_thread=1)
        g.op(self.node, seq=seq, fwd_thread=1)
        if self.fid:
            g.flow_end(self.fid)
        return g

    def __exit__(self, *exc):
        self.g.__exit__()
        self.g.__exit__()
        return False


def accumulate_grad(g, shape):
    """AccumulateGrad for a parameter whose .grad was None (zero_grad(set_to_none=True))."""
    with g.op("autograd::engine::evaluate_function: torch::autograd::AccumulateGrad"):
        with g.op("torch::autograd::AccumulateGrad"):
            g.leaf("aten::detach", (shape,), (F,), busy=(500, 1500))


def bw_linear(g, fid, x_shape, out_f, in_f, temps, bias=True):
    m = _numel(x_shape[:-1])
    with BwNode(g, "AddmmBackward0" if bias else "MmBackward0", fid):
        g.leaf("aten::t", ((in_f, out_f),), (F,), busy=(800, 2000))
        with g.op("aten::mm", ((m, out_f), (out_f, in_f)), (F, F)):
            temps.append(g.empty((m, in_f)))
            g.gemm(K_GEMM_NN, m, in_f, out_f)
        g.leaf("aten::t", ((m, out_f),), (F,), busy=(800, 2000))
        with g.op("aten::mm", ((out_f, m), (m, in_f)), (F, F)):
            g.malloc(out_f * in_f * 4, grad=True)
            g.gemm(K_GEMM_NT, out_f, in_f, m)
        if bias:
            with g.op("aten::sum", ((m, out_f), (), (), ()), (F, SL, S, ""), ("", "[0]", "True", "")):
                g.malloc(out_f * 4, grad=True)
                g.launch(K_SUM, (max(1, out_f // 32), 1, 1),
                         int(m * out_f * 4 / HBM_BYTES_PER_NS) + g.jitter(3000, 6000))
            g.leaf("aten::view", ((1, out_f), ()), (F, SL), ("", "[%d]" % out_f))
    accumulate_grad(g, (out_f, in_f))
    if bias:
        accumulate_grad(g, (out_f,))


def bw_pointwise(g, node, op, kernel, shape, fid, temps, tensors=3):
    with BwNode(g, node, fid):
        with g.op(op, (shape, shape), (F, F)):
            temps.append(g.empty(shape, "aten::empty_strided"))
            g.elementwise(kernel, _numel(shape), tensors)


def bw_layer_norm(g, shape, fid, temps):
    d = shape[-1]
    rows = _numel(shape[:-1])
    with BwNode(g, "NativeLayerNormBackward0", fid):
        with g.op("aten::native_layer_norm_backward",
                  (shape, shape, (), shape[:-1] + (1,), shape[:-1] + (1,), (d,), (d,), ()),
                  (F, F, SL, F, F, F, F, ""), ("", "", "[%d]" % d, "", "", "", "", "")):
            temps.append(g.empty(shape, "aten::empty_like"))
            g.malloc(d * 4, grad=True)
            g.malloc(d * 4, grad=True)
            g.rowwise(K_LN_BW_IN, rows, d, 3)
            g.launch(K_LN_BW_GB, (-(-d // 32), 1, 1), int(rows * d * 8 / HBM_BYTES_PER_NS) + g.jitter(4000, 8000))
    accumulate_grad(g, (d,))
    accumulate_grad(g, (d,))


def bw_view_like(g, node, op, shape):
    with BwNode(g, node, 0):
        g.leaf(op, (shape, ()), (F, SL), ("", "[" + ", ".join(map(str, shape)) + "]"), busy=(600, 1500))


def bw_residual_add(g, shape, fid):
    with BwNode(g, "AddBackward0", fid):
        pass
    # The residual gradient is needed by both branches; the engine later sums
    # the two contributions in place.
    with g.op("aten::add_", (shape, shape, ()), (F, F, S), ("", "", "1")):
        g.elementwise(K_ADD, _numel(shape), 3)


def backward_layer(g, fl, saved):
    m = g.m
    x = (m.B, m.T, m.D)
    bh, t, hd = m.B * m.H, m.T, m.hd
    scores = (bh, t, t)
    temps = []
    bw_residual_add(g, x, fl["res2"])
    bw_linear(g, fl["fc2"], (m.B, t, m.FF), m.D, m.FF, temps)
    bw_pointwise(g, "GeluBackward0", "aten::gelu_backward", K_GELU_BW, (m.B, t, m.FF), fl["gelu"], temps)
    bw_linear(g, fl["fc1"], x, m.FF, m.D, temps)
    g.release(temps)
    bw_layer_norm(g, x, fl["ln2"], temps)
    bw_residual_add(g, x, fl["res1"])
    bw_linear(g, fl["proj"], x, m.D, m.D, temps)
    bw_view_like(g, "UnsafeViewBackward0", "aten::view", (m.B, t, m.H, hd))
    bw_view_like(g, "TransposeBackward0", "aten::transpose", (m.B, m.H, t, hd))
    with BwNode(g, "BmmBackward0", fl["bmm2"]):
        for kern, (mm, nn, kk) in ((K_BMM, (t, t, hd)), (K_BMM_NN, (t, hd, t))):
            with g.op("aten::bmm", ((bh, mm, kk), (bh, kk, nn)), (F, F)):
                temps.append(g.empty((bh, mm, nn)))
                g.gemm(kern, mm, nn, kk, bh)
    with BwNode(g, "SoftmaxBackward0", fl["softmax"]):
        with g.op("aten::_softmax_backward_data", (scores, scores, (), ()), (F, F, S, S), ("", "", "-1", "6")):
            temps.append(g.empty(scores))
            g.rowwise(K_SOFTMAX_BW, bh * t, t, 3)
    with BwNode(g, "MaskedFillBackward0", fl["mask"]):
        with g.op("aten::masked_fill", (scores, (t, t), ()), (F, "bool", S), ("", "", "0")):
            temps.append(g.empty(scores, "aten::empty_like"))
            g.elementwise(K_MASKED_FILL, _numel(scores), 3)
    bw_pointwise(g, "DivBackward0", "aten::div", K_DIV, scores, fl["div"], temps, 2)
    with BwNode(g, "BmmBackward0", fl["bmm1"]):
        for kern, (mm, nn, kk) in ((K_BMM_NN, (t, hd, t)), (K_BMM, (t, hd, t))):
            with g.op("aten::bmm", ((bh, mm, kk), (bh, kk, nn)), (F, F)):
                temps.append(g.empty((bh, mm, nn)))
                g.gemm(kern, mm, nn, kk, bh)
    g.release(temps)
    for name in ("v", "k", "q"):
        bw_view_like(g, "UnsafeViewBackward0", "aten::view", (m.B, m.H, t, hd))
        bw_view_like(g, "TransposeBackward0", "aten::transpose", (m.B, t, m.H, hd))
        bw_linear(g, fl[name], x, m.D, m.D, temps)
        if name != "v":
            with g.op("aten::add_", (x, x, ()), (F, F, S), ("", "", "1")):   # sum of q/k/v input grads
                g.elementwise(K_ADD, _numel(x), 3)
    g.release(temps)
    bw_layer_norm(g, x, fl["ln1"], temps)
    g.release(temps)
    g.release(saved)


def ddp_allreduce(g, nelems):
    """One DDP gradient bucket: record_param_comms -> NCCL kernel on its own stream; returns its end."""
    ranks = "[" + ", ".join(map(str, range(WORLD))) + "]"
    coll = (f'"Collective name": "allreduce", "In msg nelems": {nelems}, "Out msg nelems": {nelems}, '
            f'"Group size": {WORLD}, "dtype": "Float", "In split size": "[]", "Out split size": "[]", '
            f'"Process Group Name": "0", "Process Group Description": "default_pg", "Process Group Ranks": "{ranks}"')
    with g.op("aten::div_", ((nelems,), ()), (F, S), ("", str(WORLD))):
        g.elementwise(K_DIV, nelems, 2)
    with g.op("record_param_comms", ((),), (TL,),
              extra=coll + ', "Rank": 0, "Global rank start": 0, "Global rank stride": 1, '):
        with g.annotation("nccl:all_reduce"):
            g.sync_call("cudaStreamIsCapturing")
            g.sync_call("cudaEventRecord")
            g.sync_call("cudaStreamWaitEvent")
            # The NCCL stream waits for the gradients produced on the compute stream.
            g.gpu_free_at[NCCL_STREAM] = max(g.gpu_free_at[NCCL_STREAM], g.gpu_free_at[COMPUTE_STREAM])
            nbytes = nelems * 4
            dur = int(2 * (WORLD - 1) / WORLD * nbytes / NCCL_BUSBW_BYTES_PER_NS * (0.9 + 0.3 * g.rand()))
            dur += g.jitter(15000, 30000)
            end = g.launch(K_NCCL, (16, 1, 1), dur, NCCL_STREAM, "cudaLaunchKernelExC", ", " + coll)
            g.gpu_annotation("nccl:all_reduce", g.cur_ext(), end - dur, end, NCCL_STREAM)
    return end


# ---------------------------------------------------------------------- step

def data_and_inputs(g):
    m = g.m
    with g.annotation("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"):
        with g.op("aten::stack", ((), ()), (TL, S), ("", "0")):
            g.leaf("aten::cat", ((), ()), (TL, S), ("", "0"), busy=(20000, 60000))
        # Variable host-side data time leaves the GPU idle at the start of a step.
        g.now += g.jitter(1_000_000, 8_000_000)
    for _ in range(2):   # input ids and targets, copied from pageable host memory
        with g.op("aten::to", ((m.B, m.T), (), (), (), (), (), (), ()), (L, "", S, "", "", S, S, ""),
                  ("", "", "4", "", "", "True", "False", "")):
            with g.op("aten::_to_copy", ((m.B, m.T), (), (), (), (), (), ()), (L, S, "", S, "", S, ""),
                      ("", "4", "", "cuda:0", "", "True", "")):
                g.empty((m.B, m.T * 2), "aten::empty_strided")
                with g.op("aten::copy_", ((m.B, m.T), (m.B, m.T), ()), (L, L, S), ("", "", "True")):
                    g.memcpy_h2d(m.B * m.T * 8)


def forward_and_loss(g):
    """Returns (per-layer (flows, saved) list, flow ids of the model tail)."""
    m = g.m
    x = (m.B, m.T, m.D)
    layers = []
    tail = {}
    with g.annotation("DistributedDataParallel.forward"):
        with g.op("aten::embedding", ((m.V, m.D), (m.B, m.T), (), (), ()), (F, L, S, S, S),
                  ("", "", "-1", "False", "False"), seq=g.next_seq()):
            tail["emb"] = g.flow_start()
            with g.op("aten::index_select", ((m.V, m.D), (), (m.N,)), (F, S, L), ("", "0", "")):
                g.empty((m.N, m.D))
                g.launch(K_EMB, (min(65535, m.N * m.D // 128), 1, 1),
                         int(m.N * m.D * 8 / HBM_BYTES_PER_NS) + g.jitter(3000, 6000))
        g.leaf("aten::embedding", ((m.T, m.D), (m.T,), (), (), ()), (F, L, S, S, S),
               ("", "", "-1", "False", "False"), seq=g.next_seq())
        tail["pos_add"], _ = fwd_pointwise(g, "aten::add", K_ADD, x, (F, F, S), ("", "", "1"))
        for _ in range(m.layers):
            saved = []
            layers.append((forward_layer(g, saved), saved))
        tail["lnf"], _ = fwd_layer_norm(g, x)
        tail["head"], tail["logits"] = fwd_linear(g, x, m.V, m.D, bias=False)
    with g.op("aten::cross_entropy_loss", ((m.N, m.V), (m.N,), (), (), (), ()), (F, L, "", S, S, S),
              ("", "", "", "1", "-100", "0.0"), seq=g.next_seq()):
        with g.op("aten::log_softmax", ((m.N, m.V), (), ()), (F, S, ""), ("", "1", ""), seq=g.seq):
            with g.op("aten::_log_softmax", ((m.N, m.V), (), ()), (F, S, S), ("", "1", "False"), seq=g.seq):
                tail["lsm"] = g.flow_start()
                tail["lsm_out"] = g.empty((m.N, m.V))
                g.rowwise(K_LOG_SOFTMAX, m.N, m.V)
        with g.op("aten::nll_loss_nd", ((m.N, m.V), (m.N,), (), (), ()), (F, L, "", S, S),
                  ("", "", "", "1", "-100"), seq=g.next_seq()):
            with g.op("aten::nll_loss", ((m.N, m.V), (m.N,), (), (), ()), (F, L, "", S, S),
                      ("", "", "", "1", "-100"), seq=g.seq):
                tail["nll"] = g.flow_start()
                g.malloc(4)
                g.launch(K_NLL, (1, 1, 1), g.jitter(8000, 14000))
    return layers, tail


def backward(g, layers, tail):
    """loss.backward(): the main thread seeds the gradient, the autograd thread does the work."""
    m = g.m
    x = (m.B, m.T, m.D)
    with g.op("aten::ones_like", ((), (), (), (), (), ()), (F, S, "", "", "", S), ("", "", "", "", "", "1")):
        g.malloc(4)
        with g.op("aten::fill_", ((), ()), (F, S), ("", "1")):
            g.elementwise(K_FILL, 1, 1)
    g.set_thread(AUTOGRAD_TID)
    temps = []
    with BwNode(g, "NllLossBackward0", tail["nll"]):
        with g.op("aten::nll_loss_backward", ((), (m.N, m.V), (m.N,), (), (), (), ()), (F, F, L, "", S, S, F)):
            temps.append(g.empty((m.N, m.V)))
            with g.op("aten::zero_", ((m.N, m.V),), (F,)):
                g.memset(m.N * m.V * 4)
            g.launch(K_NLL_BW, (1, 1, 1), g.jitter(12000, 20000))
    with BwNode(g, "LogSoftmaxBackward0", tail["lsm"]):
        with g.op("aten::_log_softmax_backward_data", ((m.N, m.V), (m.N, m.V), (), ()), (F, F, S, S),
                  ("", "", "1", "6")):
            temps.append(g.empty((m.N, m.V)))
            g.rowwise(K_LOG_SOFTMAX_BW, m.N, m.V, 3)
    g.release([tail["lsm_out"], tail["logits"]])
    bw_linear(g, tail["head"], x, m.V, m.D, temps, bias=False)
    g.release(temps)
    bw_layer_norm(g, x, tail["lnf"], temps)
    g.release(temps)
    first_bucket = m.param_numel // 2
    for i, (flows, saved) in enumerate(reversed(layers)):
        backward_layer(g, flows, saved)
        if i == m.layers // 2 - 1:
            ddp_allreduce(g, first_bucket)
    with BwNode(g, "AddBackward0", tail["pos_add"]):
        pass
    with BwNode(g, "EmbeddingBackward0", tail["emb"]):
        with g.op("aten::embedding_backward", ((m.N, m.D), (m.B, m.T), (), (), (), ()), (F, L, S, S, S, S),
                  ("", "", str(m.V), "-1", "False", "False")):
            with g.op("aten::embedding_dense_backward", ((m.N, m.D), (m.B, m.T), (), (), ()), (F, L, S, S, S),
                      ("", "", str(m.V), "-1", "False")):
                with g.op("aten::zeros", ((), (), (), (), ()), (SL, S, "", S, ""),
                          ("[%d, %d]" % (m.V, m.D), "6", "", "cuda:0", "")):
                    g.malloc(m.V * m.D * 4, grad=True)
                    with g.op("aten::zero_", ((m.V, m.D),), (F,)):
                        g.memset(m.V * m.D * 4)
                g.launch(K_EMB_BW, (-(-m.D // 32), 1, 1), int(m.N * m.D * 12 / HBM_BYTES_PER_NS) + 20000)
    accumulate_grad(g, (m.V, m.D))
    nccl_end = ddp_allreduce(g, m.param_numel - first_bucket)
    g.set_thread(MAIN_TID)
    # DDP's finalize makes the compute stream wait for the last bucket.
    g.sync_call("cudaStreamWaitEvent")
    g.gpu_free_at[COMPUTE_STREAM] = max(g.gpu_free_at[COMPUTE_STREAM], nccl_end)


def optimizer_step(g):
    """Foreach AdamW: a handful of _foreach ops over all parameters, multi_tensor_apply launches."""
    m = g.m
    chunks = max(1, m.param_numel // (65536 * 320))
    with g.annotation("Optimizer.step#AdamW.step"):
        ext = g.cur_ext()
        g.leaf("aten::_foreach_add_", ((), ()), (TL, S), ("", "1"), busy=(40000, 80000))
        first = None
        for name, lists in (("aten::_foreach_lerp_", 2), ("aten::_foreach_mul_", 1),
                            ("aten::_foreach_addcmul_", 3), ("aten::_foreach_mul_", 1),
                            ("aten::_foreach_sqrt", 1), ("aten::_foreach_div_", 1),
                            ("aten::_foreach_add_", 1), ("aten::_foreach_addcdiv_", 3)):
            with g.op(name, ((),) * (lists + 1), (TL,) * lists + (S,), ("",) * lists + ("1",)):
                for _ in range(chunks):
                    end = g.launch(K_ADAM, (320, 1, 1),
                                   int(m.param_numel * 4 * (lists + 1) / chunks / HBM_BYTES_PER_NS)
                                   + g.jitter(4000, 8000))
                    if first is None:
                        first = g.last_gpu_start
        g.gpu_annotation("Optimizer.step#AdamW.step", ext, first, end, COMPUTE_STREAM)


def gen_step(g, step_no):
    g.alloc.new_step()
    g.step_gpu_first, g.step_gpu_last = 1 << 62, 0
    g.set_thread(MAIN_TID)
    with g.annotation(f"ProfilerStep#{step_no}"):
        step_ext = g.cur_ext()
        data_and_inputs(g)
        with g.annotation("Optimizer.zero_grad#AdamW.zero_grad"):
            g.now += g.jitter(20000, 60000)
            for block in g.grads:
                g.free(block)
            g.grads = []
        layers, tail = forward_and_loss(g)
        backward(g, layers, tail)
        optimizer_step(g)
        # loss.item() for logging: the DtoH copy queues behind the whole step.
        with g.op("aten::item", ((),), (F,)):
            with g.op("aten::_local_scalar_dense", ((),), (F,)):
                g.memcpy_d2h(4)
        g.release_all()
    g.gpu_annotation(f"ProfilerStep#{step_no}", step_ext, g.step_gpu_first, g.step_gpu_last, COMPUTE_STREAM)


# -------------------------------------------------------------------- output

def header(gpus):
    dev = ",\n".join(
        f'    {{\n      "id": {i}, "name": "NVIDIA A100-SXM4-40GB", "totalGlobalMem": 42298834944,\n'
        f'      "computeMajor": 8, "computeMinor": 0,\n'
        f'      "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": {MAX_THREADS_PER_SM},\n'
        f'      "regsPerBlock": 65536, "warpSize": 32,\n'
        f'      "sharedMemPerBlock": 49152, "numSms": {NUM_SMS}\n'
        f'    , "regsPerMultiprocessor": {REGS_PER_SM}, "sharedMemPerBlockOptin": 166912, '
        f'"sharedMemPerMultiprocessor": {SMEM_PER_SM}\n    }}' for i in range(gpus))
    ranks = "[" + ", ".join(map(str, range(WORLD))) + "]"
    return ('\n{\n  "schemaVersion": 1,\n  "deviceProperties": [\n' + dev + '\n  ],\n'
            '  "with_flops": 1,\n  "record_shapes": 1,\n  "profile_memory": 1,\n'
            f'  "distributedInfo": {{"backend": "nccl", "rank": 0, "world_size": {WORLD}, "pg_count": 1, '
            f'"pg_config": [{{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cuda:nccl", '
            f'"pg_size": {WORLD}, "ranks": {ranks}}}], "nccl_version": "2.21.5"}},\n'
            '  "trace_id": "5D1C0A67E0B34F2C9A8B7E6D5C4B3A29",\n'
            '  "traceEvents": [')


def trailer_events(gpus, meta_ts, trace_start, trace_end):
    ts = fts(meta_ts)

    def meta(name, pid, tid, key, value):
        return (f',\n  {{\n    "name": "{name}", "ph": "M", "ts": {ts}, "pid": {pid}, "tid": {tid},\n'
                f'    "args": {{\n      "{key}": {value}\n    }}\n  }}')

    out = [meta("process_name", PID, 0, "name", '"python3.12"'),
           meta("process_labels", PID, 0, "labels", '"CPU"'),
           meta("process_sort_index", PID, 0, "sort_index", PID)]
    for i in range(gpus):
        out += [meta("process_name", i, 0, "name", '"python3.12"'),
                meta("process_labels", i, 0, "labels", f'"GPU {i}"'),
                meta("process_sort_index", i, 0, "sort_index", 16777216 + i)]
    for stream in (COMPUTE_STREAM, NCCL_STREAM):
        out += [meta("thread_name", 0, stream, "name", f'"stream {stream} "'),
                meta("thread_sort_index", 0, stream, "sort_index", stream)]
    # The autograd thread is named twice, first with the generic name, as in
    # real traces; readers must keep the last one.
    for tid, tname in ((AUTOGRAD_TID, "pt_main_thread"), (MAIN_TID, "pt_main_thread"),
                       (AUTOGRAD_TID, "pt_autograd_0")):
        out += [meta("thread_name", PID, tid, "name", f'"thread {tid} ({tname})"'),
                meta("thread_sort_index", PID, tid, "sort_index", tid)]
    out.append(f',\n  {{\n    "ph": "X", "cat": "Trace", "ts": {fts(trace_start)}, '
               f'"dur": {fts(trace_end - trace_start)},\n'
               f'    "pid": "Spans", "tid": "PyTorch Profiler",\n    "name": "PyTorch Profiler (0)",\n'
               f'    "args": {{\n      "Op count": 0\n    }}\n  }}')
    out.append(f',\n  {{\n    "name": "process_sort_index", "ph": "M", "ts": {fts(trace_start)},\n'
               f'    "pid": "Spans", "tid": 0,\n    "args": {{\n      "sort_index": 536870912\n    }}\n  }}')
    out.append(f',\n  {{\n    "name": "Iteration Start: PyTorch Profiler", "ph": "i", "s": "g",\n'
               f'    "pid": "Traces", "tid": "Trace PyTorch Profiler", "ts": {fts(trace_start)}\n  }}')
    out.append(f',\n  {{\n    "name": "Record Window End", "ph": "i", "s": "g",\n'
               f'    "pid": "", "tid": "", "ts": {fts(trace_end)}\n  }}')
    return out


def generate(out_path, target_bytes, target_events, seed, layers, gpus):
    """Write the trace; returns (bytes, events, steps)."""
    g = Gen(Model(layers), random.Random(seed))
    trace_start = g.now - 35_000_000       # profiler warm-up before the first recorded step
    g.now += 250_000
    out_dir = os.path.dirname(os.path.abspath(out_path))
    spill_paths = [os.path.join(out_dir, f".{os.path.basename(out_path)}.part{i}") for i in range(3)]
    # ~1 MiB write buffers: the output is written in step-sized chunks anyway.
    with open(out_path, "w", buffering=1 << 20) as main, \
            open(spill_paths[0], "w+", buffering=1 << 20) as autograd, \
            open(spill_paths[1], "w+", buffering=1 << 20) as gpu, \
            open(spill_paths[2], "w+", buffering=1 << 20) as annot:
        try:
            written = main.write(header(gpus))
            step = 2                            # schedule(wait=1, warmup=1, ...) starts at #2
            first = True
            while True:
                gen_step(g, step)
                step += 1
                main_text = "".join(g.parts[MAIN_TID])
                if first:
                    main_text = main_text[1:]   # no comma before the first event
                    first = False
                for sink, text in ((main, main_text), (autograd, "".join(g.parts[AUTOGRAD_TID])),
                                   (gpu, "".join(g.gpu_parts)), (annot, "".join(g.annot_parts))):
                    written += sink.write(text)
                g.parts[MAIN_TID].clear()
                g.parts[AUTOGRAD_TID].clear()
                g.gpu_parts.clear()
                g.annot_parts.clear()
                if (target_events and g.n_events >= target_events) or \
                        (not target_events and written >= target_bytes):
                    break
            for spill in (autograd, gpu, annot):
                spill.flush()
                spill.seek(0)
                shutil.copyfileobj(spill, main, 1 << 22)
            trace_end = max(g.now, max(g.gpu_free_at.values())) + 150_000
            tail = trailer_events(gpus, T0_NS, trace_start, trace_end)
            g.n_events += len(tail)
            written += main.write("".join(tail))
            written += main.write(f'\n  ],\n  "traceName": "{os.path.basename(out_path)}",\n'
                                  f'  "displayTimeUnit": "ms",\n  "baseTimeNanoseconds": {BASE_NS}\n}}\n')
        finally:
            for p in spill_paths:
                if os.path.exists(p):
                    os.remove(p)
    return written, g.n_events, step - 2


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="output .json path")
    ap.add_argument("--mb", type=float, default=520.0,
                    help="write at least this many MB (10^6 bytes); default 520")
    ap.add_argument("--events", type=int, default=0,
                    help="instead of --mb: write at least this many events (whole steps), for smoke runs")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--layers", type=int, default=12, help="transformer layers per step (default 12)")
    ap.add_argument("--gpus", type=int, default=8, choices=range(1, 9), metavar="1..8",
                    help="GPUs listed in deviceProperties (default 8)")
    args = ap.parse_args()
    t0 = time.perf_counter()
    nbytes, nevents, steps = generate(args.out, int(args.mb * 1e6), args.events, args.seed, args.layers, args.gpus)
    dt = time.perf_counter() - t0
    print(f"{args.out}: {nbytes} bytes, {nevents} events, {steps} steps, "
          f"{nbytes / max(1, nevents):.1f} B/event, {dt:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
