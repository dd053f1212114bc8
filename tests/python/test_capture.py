"""tuneprof.capture and tuneprof.trace_handler without torch and without the compiled module.

The profilers are stand-ins that record each call and refuse, as the real functions do, any keyword the
recorded signature table (tests/data/profiler_signatures.json, kept with its sources) does not list, and
any value of another type or outside the documented enum: a helper passing a misspelt or retired setting
fails here. The traces the stand-ins "export" are the bundled example, and the summaries, the summary
print and the comparison come from the real tuneprof binary ($TUNEPROF_BIN).
"""

import gzip
import json
import os
import pathlib
import shutil
import subprocess
import sys
import types

import pytest

SOURCE = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = SOURCE / "examples" / "tiny_train.pt.trace.json.gz"
TABLE = json.loads((SOURCE / "tests" / "data" / "profiler_signatures.json").read_text())
sys.path.insert(0, str(SOURCE / "python"))

import tuneprof  # noqa: E402  (the source package: no compiled module beside it)


class Recorder:
    """A stand-in module built from the signature table: every callable checks its keywords and their
    types against the table before recording the call."""

    def __init__(self, callables, enums):
        self.callables = callables
        self.enums = {name: types.SimpleNamespace(**values) for name, values in enums.items()}
        self.enum_values = {name: set(values.values()) for name, values in enums.items()}
        self.calls = []

    def check(self, function, value, kind):
        for alternative in kind.split("|"):
            if self._is(value, alternative):
                return
        raise TypeError(f"{function}: {value!r} is not {kind}")

    def _is(self, value, kind):
        if kind == "None":
            return value is None
        if kind == "bool":
            return isinstance(value, bool)
        if kind == "int":
            return isinstance(value, int) and not isinstance(value, bool)
        if kind in ("str", "float"):
            return isinstance(value, {"str": str, "float": (int, float)}[kind]) and not isinstance(value, bool)
        if kind == "list":
            return isinstance(value, list)
        if kind in ("callable", "object"):
            return callable(value) if kind == "callable" else value is not None
        if kind.startswith("list[") and isinstance(value, list):
            return all(v in self.enum_values[kind[5:-1]] for v in value)
        if kind in self.enum_values:
            return isinstance(value, str) and value in self.enum_values[kind]
        if kind == "_ExperimentalConfig":
            return isinstance(value, Recorded) and value.function == "_ExperimentalConfig"
        return False

    def function(self, name, result):
        parameters = self.callables[name]

        def call(*args, **kwargs):
            if args:
                raise TypeError(f"{name}: positional arguments {args!r}; tuneprof passes keywords")
            for key, value in kwargs.items():
                if key not in parameters:
                    raise TypeError(f"{name}() got an unexpected keyword argument {key!r}")
                self.check(f"{name}({key}=)", value, parameters[key])
            self.calls.append((name, kwargs))
            return result(name, kwargs)

        return call

    def called(self, name):
        return [kwargs for function, kwargs in self.calls if function == name]


class Recorded:
    def __init__(self, function, kwargs):
        self.function = function
        self.kwargs = kwargs


class FakeProfile(Recorded):
    """What profile() returns: on leaving the block, the profiler's handler sees one trace (the example)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.kwargs["on_trace_ready"](self)
        return False

    def step(self):
        pass

    def export_chrome_trace(self, path):
        shutil.copyfile(EXAMPLE, path)


def npu_stand_in(monkeypatch, callables):
    recorder = Recorder(callables, TABLE["enums"])
    profiler = types.ModuleType("torch_npu.profiler")
    profiler._ExperimentalConfig = recorder.function("_ExperimentalConfig", Recorded)
    profiler.profile = recorder.function("profile", FakeNpuProfile)
    profiler.schedule = recorder.function("schedule", lambda name, kwargs: (lambda step: None))
    profiler.tensorboard_trace_handler = recorder.function("tensorboard_trace_handler", npu_handler)
    for enum in ("ProfilerLevel", "AiCMetrics", "ExportType", "ProfilerActivity"):
        setattr(profiler, enum, recorder.enums[enum])
    package = types.ModuleType("torch_npu")
    package.profiler = profiler
    monkeypatch.setitem(sys.modules, "torch_npu", package)
    monkeypatch.setitem(sys.modules, "torch_npu.profiler", profiler)
    return recorder


class FakeNpuProfile(FakeProfile):
    """As torch_npu's profile: the rank's {worker}_{ts}_ascend_pt/ is made when the profiler starts
    (prof_if.prof_path), and the handler parses the raw data in it; a peer rank's directory appears beside
    it meanwhile (ranks share the output directory)."""

    def __enter__(self):
        traces = pathlib.Path(self.kwargs["on_trace_ready"].traces)
        self.prof_if = types.SimpleNamespace(prof_path=str(traces / "host_1_20261206161000000_ascend_pt"))
        pathlib.Path(self.prof_if.prof_path).mkdir(parents=True)
        (traces / "host_2_20261206161000001_ascend_pt" / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
        return self


def npu_handler(name, kwargs):
    """torch_npu's handler parses the rank into prof_if.prof_path/ASCEND_PROFILER_OUTPUT/; here the example
    as its trace_view.json stands for that, which is enough to summarise the directory."""

    def handler(prof):
        raw = prof.prof_if.prof_path if hasattr(prof, "prof_if") else prof.raw_dir
        output = pathlib.Path(raw) / "ASCEND_PROFILER_OUTPUT"
        output.mkdir()
        with gzip.open(EXAMPLE) as trace:
            (output / "trace_view.json").write_bytes(trace.read())

    return handler


def torch_stand_in(monkeypatch):
    recorder = Recorder(TABLE["torch_callables"], TABLE["torch_enums"])
    profiler = types.ModuleType("torch.profiler")
    profiler.profile = recorder.function("profile", FakeProfile)
    profiler.schedule = recorder.function("schedule", lambda name, kwargs: (lambda step: None))
    profiler.ProfilerActivity = recorder.enums["ProfilerActivity"]
    package = types.ModuleType("torch")
    package.profiler = profiler
    monkeypatch.setitem(sys.modules, "torch", package)
    monkeypatch.setitem(sys.modules, "torch.profiler", profiler)
    return recorder


@pytest.fixture
def cli_env(monkeypatch):
    binary = os.environ.get("TUNEPROF_BIN")
    assert binary, "TUNEPROF_BIN names the tuneprof binary"
    monkeypatch.setenv("TUNEPROF_BIN", binary)
    monkeypatch.delenv("RANK", raising=False)
    return binary


def cli(binary, *args):
    return subprocess.run([binary, "--quiet", *map(str, args)], capture_output=True, text=True, timeout=120)


def test_import_needs_neither_torch_nor_the_compiled_module():
    code = ("import sys, tuneprof\n"
            "assert 'torch' not in sys.modules and 'tuneprof._core' not in sys.modules\n"
            "assert callable(tuneprof.capture) and callable(tuneprof.trace_handler)\n"
            "try:\n    tuneprof.Error\nexcept ImportError:\n    print('lazy')\n")
    env = dict(os.environ, PYTHONPATH=str(SOURCE / "python"))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd="/")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "lazy"  # the source package has no compiled module: loaded only when named


@pytest.mark.parametrize("aic_metrics,export_type", [("PipeUtilization", "text"), ("Memory", "db")])
def test_npu_settings_are_documented_names_and_types(monkeypatch, tmp_path, cli_env, aic_metrics, export_type):
    recorder = npu_stand_in(monkeypatch, TABLE["callables"])
    prof = tuneprof.capture(tmp_path, device="npu", aic_metrics=aic_metrics, export_type=export_type,
                            l2_cache=True, with_modules=True, print_summary=False)
    (config,) = recorder.called("_ExperimentalConfig")
    assert config == {"profiler_level": "Level1", "aic_metrics": TABLE["enums"]["AiCMetrics"][aic_metrics],
                      "l2_cache": True, "record_op_args": False, "export_type": export_type,
                      "data_simplification": True}
    (profile,) = recorder.called("profile")
    assert profile["activities"] == ["CPU", "NPU"]
    assert profile["record_shapes"] and profile["profile_memory"] and profile["with_modules"]
    assert not profile["with_stack"]
    assert recorder.called("schedule") == [{"wait": 1, "warmup": 2, "active": 5, "repeat": 1, "skip_first": 0}]
    assert recorder.called("tensorboard_trace_handler")[0]["dir_name"] == str(tmp_path / "traces")
    with prof as p:
        p.step()
    summaries = [summary.name for summary in (tmp_path / "summaries").iterdir()]
    assert summaries == ["host_1_20261206161000000_ascend_pt.tps"]  # this rank's alone


class OlderNpuProfile(FakeNpuProfile):
    """A torch_npu whose profile has no prof_if: the rank's directory is found by its worker name."""

    def __enter__(self):
        super().__enter__()
        self.raw_dir = self.prof_if.prof_path
        del self.prof_if
        return self


def test_npu_rank_directory_without_prof_if(monkeypatch, tmp_path, cli_env):
    npu_stand_in(monkeypatch, TABLE["callables"])
    sys.modules["torch_npu"].profiler.profile = lambda **kwargs: OlderNpuProfile("profile", kwargs)
    with tuneprof.capture(tmp_path, device="npu", worker_name="host_1", print_summary=False) as prof:
        prof.step()
    summaries = [summary.name for summary in (tmp_path / "summaries").iterdir()]
    assert summaries == ["host_1_20261206161000000_ascend_pt.tps"]


def test_a_name_outside_the_table_fails(monkeypatch, tmp_path):
    """The check is real: with a name dropped from the table (as a torch_npu that renamed it would be), the
    helper's call is refused; so is a value of the wrong type."""
    callables = json.loads(json.dumps(TABLE["callables"]))
    del callables["_ExperimentalConfig"]["data_simplification"]
    npu_stand_in(monkeypatch, callables)
    with pytest.raises(TypeError, match="data_simplification"):
        tuneprof.capture(tmp_path, device="npu", summarize=False)
    npu_stand_in(monkeypatch, TABLE["callables"])
    with pytest.raises(TypeError, match="l2_cache"):
        tuneprof.capture(tmp_path, device="npu", l2_cache="yes", summarize=False)


def test_torch_settings_are_torch_26_names(monkeypatch, tmp_path, cli_env):
    recorder = torch_stand_in(monkeypatch)
    tuneprof.capture(tmp_path, device="cuda", with_stack=True, warmup=2, active=3)
    (profile,) = recorder.called("profile")
    assert profile["activities"] == ["CPU", "CUDA"] and profile["with_stack"]
    assert recorder.called("schedule") == [{"wait": 1, "warmup": 2, "active": 3, "repeat": 1, "skip_first": 0}]
    tuneprof.capture(tmp_path, device="cpu")
    assert recorder.called("profile")[1]["activities"] == ["CPU"]


def test_torch_profiler_records_modules_by_default(monkeypatch, tmp_path, cli_env):
    """The documented loop gets the module tables: with_modules is on unless turned off."""
    recorder = torch_stand_in(monkeypatch)
    tuneprof.capture(tmp_path, device="cuda")
    tuneprof.capture(tmp_path, device="cpu")
    tuneprof.capture(tmp_path, device="cpu", with_modules=False)
    assert [p["with_modules"] for p in recorder.called("profile")] == [True, True, False]


def test_npu_keeps_modules_off_by_default(monkeypatch, tmp_path):
    recorder = npu_stand_in(monkeypatch, TABLE["callables"])
    tuneprof.capture(tmp_path, device="npu", summarize=False)
    (profile,) = recorder.called("profile")
    assert profile["with_modules"] is False


def test_handler_writes_trace_and_summary_as_analyze_reads_them(tmp_path, cli_env):
    handler = tuneprof.trace_handler(tmp_path, device="cpu", worker_name="node3_rank0")
    handler(FakeProfile("profile", {}))
    handler.wait()
    (trace,) = (tmp_path / "traces").iterdir()
    assert trace.name.startswith("node3_rank0.") and trace.name.endswith(".pt.trace.json.gz")
    summary = tmp_path / "summaries" / (trace.name + ".tps")
    assert summary.is_file()
    from_traces = cli(cli_env, "analyze", "--json", tmp_path / "traces")
    from_summaries = cli(cli_env, "analyze", "--json", tmp_path / "summaries")
    assert from_traces.returncode == 0 and from_traces.stdout == from_summaries.stdout


def test_block_end_prints_summary_and_compare(monkeypatch, tmp_path, cli_env, capfd):
    torch_stand_in(monkeypatch)
    with tuneprof.capture(tmp_path / "before", device="cpu", print_summary=False) as prof:
        prof.step()
    capfd.readouterr()
    with tuneprof.capture(tmp_path / "after", device="cpu", baseline=tmp_path / "before") as prof:
        prof.step()
    out = capfd.readouterr().out
    assert out.startswith("tuneprof analyze: 1 rank")
    assert "Dominant bottleneck" in out
    compare = out[out.index("\nbefore "):]
    assert "\nafter " in compare and "step_time_us" in compare  # (long paths are cut in the middle)
    monkeypatch.setenv("RANK", "1")  # other ranks print nothing
    with tuneprof.capture(tmp_path / "rank1", device="cpu", baseline=tmp_path / "before") as prof:
        prof.step()
    assert capfd.readouterr().out == ""


def test_missing_cli_is_one_line_and_the_trace_is_kept(monkeypatch, tmp_path, capfd):
    monkeypatch.setenv("TUNEPROF_BIN", str(tmp_path / "no-such-tuneprof"))
    monkeypatch.delenv("RANK", raising=False)
    torch_stand_in(monkeypatch)
    with tuneprof.capture(tmp_path / "run", device="cpu") as prof:
        prof.step()
    err = capfd.readouterr().err.splitlines()
    assert len(err) == 2 and all(line.startswith("tuneprof: capture: TUNEPROF_BIN=") for line in err)
    assert "summaries of the traces" in err[0] and "the summary not done" in err[1]
    assert len(list((tmp_path / "run" / "traces").iterdir())) == 1


def stand_in_binary(monkeypatch, path, script):
    """Makes the shell `script` at `path` the binary the capture helpers run."""
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(0o755)
    monkeypatch.setenv("TUNEPROF_BIN", str(path))


def test_summary_time_bound(monkeypatch, tmp_path, capfd):
    stand_in_binary(monkeypatch, tmp_path / "slow-tuneprof", "sleep 30\n")
    handler = tuneprof.trace_handler(tmp_path, device="cpu", summary_timeout_s=1)
    handler(FakeProfile("profile", {}))
    handler.wait()
    (line,) = capfd.readouterr().err.splitlines()
    assert line.endswith("no summary written: stopped after 1 s (summary_timeout_s)")
    assert not (tmp_path / "summaries").exists() or not list((tmp_path / "summaries").iterdir())


def test_failed_summary_is_said_while_the_run_goes_on(monkeypatch, tmp_path, capfd):
    """A summary that fails is reported, in its command's own line, when the next trace is written rather
    than at the end of the run; a process stopped by a signal (CPU time, memory) is named as such."""
    stand_in_binary(monkeypatch, tmp_path / "failing-tuneprof",
                    'echo "tuneprof: error: $3: not a trace" >&2\nexit 1\n')
    handler = tuneprof.trace_handler(tmp_path / "out", device="cpu")
    handler(FakeProfile("profile", {}))
    handler.summaries._pending[0].process.wait()
    handler(FakeProfile("profile", {}))
    (line,) = capfd.readouterr().err.splitlines()
    assert line.startswith(f"tuneprof: capture: {tmp_path}/out/traces/") and line.endswith(": not a trace")
    stand_in_binary(monkeypatch, tmp_path / "aborting-tuneprof", "kill -ABRT $$\n")
    handler = tuneprof.trace_handler(tmp_path / "out2", device="cpu")
    handler(FakeProfile("profile", {}))
    handler.wait()
    err = capfd.readouterr().err.splitlines()
    assert err[-1].endswith("no summary written: stopped by signal 6 (CPU time or memory bound: "
                            "summary_timeout_s, summary_memory_mb)")


class ShortProfile(FakeProfile):
    """A block that ended before the schedule's first recorded step: the profiler writes no trace."""

    def __exit__(self, *exc):
        return False


def test_a_block_too_short_to_record_says_so(monkeypatch, tmp_path, cli_env, capfd):
    recorder = torch_stand_in(monkeypatch)
    monkeypatch.setattr(sys.modules["torch.profiler"], "profile",
                        lambda **kwargs: (recorder.function("profile", ShortProfile)(**kwargs)))
    with tuneprof.capture(tmp_path, device="cpu", baseline=tmp_path / "before") as prof:
        prof.step()
        prof.step()
    captured = capfd.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [f"tuneprof: capture: {tmp_path}: no trace recorded: the block ran 2 step(s), "
                                         "the schedule records from step 4 (skip_first + wait + warmup); nothing to "
                                         "analyse"]
