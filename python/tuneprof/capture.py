"""Profiling from the training script with the settings tuneprof's analyses need, and the tuning loop there.

    with tuneprof.capture("prof/run2", baseline="prof/run1") as prof:
        for batch in loader:
            train_step(batch)
            prof.step()

`capture` returns the platform's own profiler (torch_npu.profiler on Ascend, torch.profiler on CUDA / ROCm
and on the CPU) configured as docs/python.md lists, each setting with its overhead. Each rank's trace goes
to OUT/traces/ as the profiler's own tensorboard_trace_handler names it, and its summary (`tuneprof
summarize`, in a background process bounded in time and memory) to OUT/summaries/; at the end of the
block rank 0 prints `tuneprof analyze OUT/summaries` and, with `baseline=`, `tuneprof compare` against that
earlier run. Summaries live apart from the traces because a directory holding a trace and its summary is
one rank read twice.

Standard library only until a profiler is asked for; torch (and torch_npu) are imported then.
"""

from __future__ import annotations

import os
import pathlib
import socket
import subprocess
import sys
import tempfile
import threading
import time
from typing import Callable, List, Optional, Union

from . import _cli

PathLike = Union[str, "os.PathLike[str]"]

#: Sub-directories of a capture's output directory.
TRACES = "traces"
SUMMARIES = "summaries"

#: Bounds of each background `tuneprof summarize` (docs/python.md): CPU seconds and wall-clock seconds,
#: and its address space; it runs at the lowest CPU priority (SCHED_IDLE where the kernel has it).
DEFAULT_SUMMARY_TIMEOUT_S = 900
DEFAULT_SUMMARY_MEMORY_MB = 8192

_DEVICES = ("npu", "cuda", "cpu")
_AIC_METRICS = ("PipeUtilization", "Memory")
_PROFILER_LEVELS = ("Level0", "Level1", "Level2")
_EXPORT_TYPES = ("text", "db")

# Runs in the child between fork and the command: limits, lowest priority, then exec. A separate
# interpreter rather than preexec_fn, which is unsafe in a process with threads (a training process has many);
# isolated (-I), so that no module in the working directory or PYTHONPATH stands in for the standard library.
_LIMITED_EXEC = (
    "import os, resource, sys\n"
    "cpu, mem = int(sys.argv[1]), int(sys.argv[2])\n"
    "resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))\n"
    "resource.setrlimit(resource.RLIMIT_AS, (mem, mem))\n"
    "os.nice(19)\n"
    "try:\n"
    "    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))\n"
    "except (AttributeError, OSError):\n"
    "    pass\n"
    "os.execv(sys.argv[3], sys.argv[3:])\n"
)


def traces_dir(out_dir: PathLike) -> pathlib.Path:
    return pathlib.Path(out_dir) / TRACES


def summaries_dir(out_dir: PathLike) -> pathlib.Path:
    return pathlib.Path(out_dir) / SUMMARIES


def _rank() -> int:
    """This process's rank: torch.distributed's where it is initialised, else the launcher's RANK, else 0."""
    dist = sys.modules.get("torch.distributed")
    try:
        if dist is not None and dist.is_available() and dist.is_initialized():
            return int(dist.get_rank())
    except (RuntimeError, ValueError):
        pass
    try:
        return int(os.environ.get("RANK", "0"))
    except ValueError:
        return 0


def _barrier() -> None:
    """Waits for every rank's summaries before rank 0 reads them, where torch.distributed is running."""
    dist = sys.modules.get("torch.distributed")
    try:
        if dist is not None and dist.is_available() and dist.is_initialized():
            dist.barrier()
    except RuntimeError as error:
        _cli.say(f"tuneprof: capture: no barrier before the summary ({error}); it may miss ranks still summarising")


def detect_device() -> str:
    """"npu" where torch_npu sees an NPU, "cuda" where torch sees a CUDA or ROCm GPU, else "cpu"."""
    try:
        import torch
    except ImportError as error:
        raise RuntimeError("tuneprof.capture: torch is not importable here; capture profiles a torch program") \
            from error
    try:
        import torch_npu  # noqa: F401 (registers torch.npu)

        if torch.npu.is_available():
            return "npu"
    except ImportError:
        pass
    return "cuda" if torch.cuda.is_available() else "cpu"


class _Summaries:
    """The background `tuneprof summarize` processes of one handler: started as traces are written, each
    stopped at its time bound, reported in one line each when a summary could not be made."""

    def __init__(self, out_dir: PathLike, timeout_s: int, memory_mb: int):
        self.dir = summaries_dir(out_dir)
        self.timeout_s = max(1, int(timeout_s))
        self.memory_bytes = max(64, int(memory_mb)) << 20
        self.cli = _cli.find_cli()
        self._pending: List[tuple] = []
        self._said_missing = False
        self.written: List[pathlib.Path] = []

    def start(self, trace: pathlib.Path) -> None:
        if self.cli is None:
            if not self._said_missing:
                _cli.say(_cli.missing_cli_line(f"summaries of the traces in {trace.parent}"))
                self._said_missing = True
            return
        self._report_finished()
        self.dir.mkdir(parents=True, exist_ok=True)
        job = _SummaryJob(trace, self.dir / (trace.name + ".tps"))
        command = [sys.executable, "-I", "-c", _LIMITED_EXEC, str(self.timeout_s), str(self.memory_bytes), self.cli,
                   "--quiet", "summarize", str(trace), "-o", str(job.summary)]
        try:
            job.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                           stderr=job.log, env=_cli.child_environment())
        except OSError as error:
            job.log.close()
            _cli.say(f"tuneprof: capture: {trace}: no summary written: cannot start {sys.executable}: {error}")
            return
        job.timer = threading.Timer(self.timeout_s, job.stop)
        job.timer.daemon = True
        job.timer.start()
        self._pending.append(job)

    def wait(self, timeout_s: Optional[float] = None) -> None:
        """Waits for every pending summary (each within its own bound, or `timeout_s` in all)."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        for job in self._pending:
            try:
                job.process.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                job.process.kill()
                job.process.wait()
            self._report(job)
        self._pending = []

    def _report_finished(self) -> None:
        """Says what failed so far, while the run goes on, and lets go of the finished processes."""
        finished = [job for job in self._pending if job.process.poll() is not None]
        self._pending = [job for job in self._pending if job.process.returncode is None]
        for job in finished:
            self._report(job)

    def _report(self, job: "_SummaryJob") -> None:
        job.timer.cancel()
        job.log.seek(0)
        lines = job.log.read().decode("utf-8", "replace").strip().splitlines()
        job.log.close()
        process = job.process
        if process.returncode == 0:
            self.written.append(job.summary)
            return
        if job.timed_out:
            cause = f"stopped after {self.timeout_s} s (summary_timeout_s)"
        elif process.returncode < 0:
            cause = (f"stopped by signal {-process.returncode} "
                     "(CPU time or memory bound: summary_timeout_s, summary_memory_mb)")
        else:
            cause = lines[-1] if lines else f"exit status {process.returncode}"
        _cli.say(f"tuneprof: capture: {job.trace}: no summary written: {cause}")


class _SummaryJob:
    """One background summary: its process, the stderr it wrote, and whether its wall-clock bound stopped it."""

    def __init__(self, trace: pathlib.Path, summary: pathlib.Path):
        self.trace = trace
        self.summary = summary
        self.log = tempfile.TemporaryFile()
        self.process: Optional[subprocess.Popen] = None
        self.timer: Optional[threading.Timer] = None
        self.timed_out = False

    def stop(self) -> None:
        if self.process.poll() is None:
            self.timed_out = True
            self.process.kill()


class _TraceHandler:
    """on_trace_ready: writes the rank's trace as the profiler's own tensorboard_trace_handler does, then
    starts its summary in the background."""

    def __init__(self, out_dir: PathLike, device: str, worker_name: Optional[str], use_gzip: bool, summarize: bool,
                 summary_timeout_s: int, summary_memory_mb: int):
        self.out_dir = pathlib.Path(out_dir)
        self.traces = traces_dir(out_dir)
        self.device = device
        self.worker_name = worker_name
        self.use_gzip = use_gzip
        self.summaries = _Summaries(out_dir, summary_timeout_s, summary_memory_mb) if summarize else None
        self.written: List[pathlib.Path] = []
        self._npu_handler = None
        if device == "npu":
            import torch_npu

            self.traces.mkdir(parents=True, exist_ok=True)
            self._npu_handler = torch_npu.profiler.tensorboard_trace_handler(dir_name=str(self.traces),
                                                                             worker_name=worker_name)

    def __call__(self, prof) -> None:
        self.traces.mkdir(parents=True, exist_ok=True)
        if self._npu_handler is not None:
            # torch_npu made this rank's {worker}_{ts}_ascend_pt/ when the profiler started (its profile's
            # prof_if.prof_path) and its handler parses the raw data there into ASCEND_PROFILER_OUTPUT/.
            self._npu_handler(prof)
            new = self._npu_rank_dirs(prof)
        else:
            worker = self.worker_name or f"{socket.gethostname()}_{os.getpid()}"
            name = f"{worker}.{time.time_ns()}.pt.trace.json" + (".gz" if self.use_gzip else "")
            prof.export_chrome_trace(str(self.traces / name))
            new = [self.traces / name]
        self.written.extend(new)
        if self.summaries is not None:
            for trace in new:
                self.summaries.start(trace)

    def _npu_rank_dirs(self, prof) -> List[pathlib.Path]:
        path = getattr(getattr(prof, "prof_if", None), "prof_path", None)
        if path:
            return [pathlib.Path(path)]
        # A torch_npu without prof_if: this worker's parsed directories not summarised yet. Other ranks
        # writing to the same directory have other worker names.
        worker = self.worker_name or f"{socket.gethostname()}_{os.getpid()}"
        done = {trace.name for trace in self.written}
        return [self.traces / name for name in sorted(os.listdir(self.traces))
                if name.startswith(worker + "_") and name.endswith("_ascend_pt") and name not in done
                and (self.traces / name / "ASCEND_PROFILER_OUTPUT").is_dir()]

    def wait(self, timeout_s: Optional[float] = None) -> None:
        if self.summaries is not None:
            self.summaries.wait(timeout_s)


def trace_handler(out_dir: PathLike, *, device: Optional[str] = None, worker_name: Optional[str] = None,
                  use_gzip: bool = True, summarize: bool = True,
                  summary_timeout_s: int = DEFAULT_SUMMARY_TIMEOUT_S,
                  summary_memory_mb: int = DEFAULT_SUMMARY_MEMORY_MB) -> Callable:
    """`on_trace_ready=` for a profiler of one's own: each rank's trace in OUT/traces/ (named as
    tensorboard_trace_handler names it; on Ascend, torch_npu's own handler writes it), its summary in
    OUT/summaries/ from a background `tuneprof summarize`. `handler.wait()` waits for the summaries."""
    chosen = _check_choice("device", device, _DEVICES) if device else detect_device()
    return _TraceHandler(out_dir, chosen, worker_name, use_gzip, summarize, summary_timeout_s, summary_memory_mb)


def _check_choice(name: str, value, allowed) -> str:
    if value not in allowed:
        raise ValueError(f"tuneprof.capture: {name}={value!r}: one of {', '.join(map(repr, allowed))}")
    return value


class Capture:
    """The profiler `capture` configured, usable as it is (`with ... as prof: prof.step()`, every attribute of
    the profiler reachable); leaving the block stops it, waits for this rank's summaries and, on rank 0,
    prints the summary and the comparison with the baseline."""

    def __init__(self, profiler, handler: _TraceHandler, baseline: Optional[PathLike], print_summary: bool,
                 steps_before_recording: int = 0):
        self.profiler = profiler
        self.handler = handler
        self.steps = 0
        self.steps_before_recording = steps_before_recording
        self.out_dir = handler.out_dir
        self.baseline = pathlib.Path(baseline) if baseline is not None else None
        self.print_summary = print_summary

    def __enter__(self):
        self.profiler.__enter__()
        return self

    def __exit__(self, exc_type, exc, traceback):
        result = self.profiler.__exit__(exc_type, exc, traceback)
        if exc_type is None:
            self.finish()
        return result

    def __getattr__(self, name):
        return getattr(self.profiler, name)

    def step(self) -> None:
        self.profiler.step()
        self.steps += 1

    def finish(self) -> None:
        """Waits for this rank's summaries and every rank's; rank 0 then prints what `print_summary` and
        `baseline` ask for."""
        self.handler.wait()
        _barrier()
        if _rank() != 0:
            return
        if not self.handler.written:
            _cli.say(f"tuneprof: capture: {self.out_dir}: no trace recorded: the block ran {self.steps} step(s), "
                     f"the schedule records from step {self.steps_before_recording + 1} (skip_first + wait + "
                     "warmup); nothing to analyse")
            return
        if self.print_summary:
            self.summary()
        if self.baseline is not None:
            self.compare(self.baseline)

    def summary(self) -> int:
        """Prints `tuneprof analyze` over this run (its summaries, or its traces where none was made)."""
        summaries = summaries_dir(self.out_dir)
        source = summaries if any(summaries.glob("*.tps")) else traces_dir(self.out_dir)
        return _run_cli(["analyze", str(source)], "the summary")

    def compare(self, baseline: PathLike) -> int:
        """Prints `tuneprof compare BASELINE THIS` over the traces (compare reads events, not summaries)."""
        base = pathlib.Path(baseline)
        before = traces_dir(base) if traces_dir(base).is_dir() else base
        return _run_cli(["compare", str(before), str(traces_dir(self.out_dir))], "the comparison with the baseline")


def _run_cli(args: List[str], what: str) -> int:
    cli = _cli.find_cli()
    if cli is None:
        _cli.say(_cli.missing_cli_line(what))
        return -1
    sys.stdout.flush()
    try:
        done = subprocess.run([cli, "--quiet", *args], env=_cli.child_environment(),
                              timeout=DEFAULT_SUMMARY_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        _cli.say(f"tuneprof: capture: {what} not printed: stopped after {DEFAULT_SUMMARY_TIMEOUT_S} s")
        return -1
    return done.returncode


def capture(out_dir: PathLike, *, device: Optional[str] = None, wait: int = 1, warmup: int = 2, active: int = 5,
            repeat: int = 1, skip_first: int = 0, record_shapes: bool = True, profile_memory: bool = True,
            with_stack: bool = False, with_modules: Optional[bool] = None, aic_metrics: str = "PipeUtilization",
            profiler_level: str = "Level1", l2_cache: bool = False, record_op_args: bool = False,
            export_type: str = "text", data_simplification: bool = True, baseline: Optional[PathLike] = None,
            print_summary: bool = True, summarize: bool = True, worker_name: Optional[str] = None,
            summary_timeout_s: int = DEFAULT_SUMMARY_TIMEOUT_S,
            summary_memory_mb: int = DEFAULT_SUMMARY_MEMORY_MB) -> Capture:
    """The profiler for this platform with the settings tuneprof needs (docs/python.md: each one, its
    overhead, and what is unknown without it). `device`: "npu", "cuda" (also ROCm) or "cpu"; detected when
    None. The schedule records `active` steps after `wait` + `warmup` (compare needs several steps for its
    statistics). `with_modules`: None is True on torch.profiler (CUDA, ROCm, CPU: the module tables need
    it, for +2 % of a step) and False on torch_npu, whose cost of it was not measured."""
    chosen = _check_choice("device", device, _DEVICES) if device else detect_device()
    _check_choice("aic_metrics", aic_metrics, _AIC_METRICS)
    _check_choice("profiler_level", profiler_level, _PROFILER_LEVELS)
    _check_choice("export_type", export_type, _EXPORT_TYPES)
    if active < 1 or warmup < 0 or wait < 0 or repeat < 0 or skip_first < 0:
        raise ValueError("tuneprof.capture: active >= 1 and wait, warmup, repeat, skip_first >= 0")
    handler = _TraceHandler(out_dir, chosen, worker_name, True, summarize, summary_timeout_s, summary_memory_mb)
    if with_modules is None:
        with_modules = chosen != "npu"
    common = dict(on_trace_ready=handler, record_shapes=record_shapes, profile_memory=profile_memory,
                  with_stack=with_stack, with_modules=with_modules)
    steps = dict(wait=wait, warmup=warmup, active=active, repeat=repeat, skip_first=skip_first)
    if chosen == "npu":
        profiler = _npu_profiler(common, steps, aic_metrics, profiler_level, l2_cache, record_op_args, export_type,
                                 data_simplification)
    else:
        profiler = _torch_profiler(common, steps, chosen)
    return Capture(profiler, handler, baseline, print_summary, skip_first + wait + warmup)


def _torch_profiler(common: dict, steps: dict, device: str):
    import torch.profiler as tp

    activities = [tp.ProfilerActivity.CPU] + ([tp.ProfilerActivity.CUDA] if device == "cuda" else [])
    return tp.profile(activities=activities, schedule=tp.schedule(**steps), **common)


def _npu_profiler(common: dict, steps: dict, aic_metrics: str, profiler_level: str, l2_cache: bool,
                  record_op_args: bool, export_type: str, data_simplification: bool):
    import torch_npu

    npu = torch_npu.profiler
    config = npu._ExperimentalConfig(
        profiler_level=getattr(npu.ProfilerLevel, profiler_level),
        aic_metrics=getattr(npu.AiCMetrics, aic_metrics),
        l2_cache=l2_cache,
        record_op_args=record_op_args,
        # A string, which every torch_npu release takes (later ones also take a list).
        export_type=getattr(npu.ExportType, export_type.capitalize()),
        data_simplification=data_simplification,
    )
    return npu.profile(activities=[npu.ProfilerActivity.CPU, npu.ProfilerActivity.NPU],
                       schedule=npu.schedule(**steps), experimental_config=config, **common)
