"""Event writers the run generators share: Kineto complete events and ac2g flows (µs floats), and torch_npu
timeline events (absolute ns written as torch_npu's µs text with the ns digits), and the generators'
command line."""

import argparse


def x(cat, name, pid, tid, ts, dur, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": round(ts, 3), "dur": round(dur, 3),
            "args": args}


def flow(phase, ident, pid, tid, ts):
    e = {"ph": phase, "id": ident, "pid": pid, "tid": tid, "ts": round(ts, 3), "cat": "ac2g", "name": "ac2g"}
    if phase == "f":
        e["bp"] = "e"
    return e


def us(ns):
    """Integer ns as torch_npu's µs text with the ns digits ("1735694112345678.123")."""
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    return f"{sign}{ns // 1000}.{ns % 1000:03d}"


def npu_x(name, pid, tid, start_ns, end_ns, args=None, cat=None):
    e = {"ph": "X", "name": name, "pid": pid, "tid": tid, "ts": us(start_ns), "dur": (end_ns - start_ns) / 1000}
    if cat is not None:
        e["cat"] = cat
    if args is not None:
        e["args"] = args
    return e


def npu_meta(what, pid, tid, key, value):
    return {"name": what, "pid": pid, "tid": tid, "args": {key: value}, "ph": "M"}


def npu_flow(phase, ident, pid, tid, ts_ns):
    e = {"name": f"HostToDevice{ident}", "ph": phase, "cat": "HostToDevice", "id": str(ident), "pid": pid, "tid": tid,
         "ts": us(ts_ns)}
    if phase == "f":
        e["bp"] = "e"
    return e


def hopper_properties(name):
    """Kineto's deviceProperties for one Hopper GPU (132 SMs, 80 GB) of the given name."""
    return [{"id": 0, "name": name, "totalGlobalMem": 85045936128, "computeMajor": 9, "computeMinor": 0,
             "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 65536,
             "regsPerMultiprocessor": 65536, "warpSize": 32, "sharedMemPerBlock": 49152,
             "sharedMemPerMultiprocessor": 233472, "numSms": 132, "sharedMemPerBlockOptin": 232448}]


def generator_arguments(doc, **defaults):
    """A generator's parser: --out (required), then one option per keyword in order (ranks=8 gives --ranks,
    late_us=2000.0 gives --late-us), of its default's type."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--out", required=True)
    for name, default in defaults.items():
        parser.add_argument("--" + name.replace("_", "-"), type=type(default), default=default)
    return parser
