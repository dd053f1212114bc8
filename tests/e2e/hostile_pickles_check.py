#!/usr/bin/env python3
"""Hostile and damaged pickles given to `tuneprof memory` (and to a command that reads traces): each is
refused with exit 1 and one stderr line naming the file and the cause, in a few seconds at most; nothing
in the file runs. Also a small plain snapshot made here, named without .pickle, is read by its content.

usage: hostile_pickles_check.py TUNEPROF

The pickles are written into a temporary directory; a code-running one would create a marker file there,
which the check looks for.
"""
import collections
import os
import pickle
import struct
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Checker  # noqa: E402


def p4(body):
    return b"\x80\x04" + body + b"."


def hostile(marker):
    command = f"touch {marker}".encode()
    return {
        # name: (bytes, what stderr must say)
        "global_os_system": (b"\x80\x02cos\nsystem\nq\x00X" + struct.pack("<I", len(command)) + command +
                             b"q\x01\x85q\x02Rq\x03.", "GLOBAL"),
        "stack_global": (pickle.dumps(collections.OrderedDict(a=1), protocol=4), "STACK_GLOBAL"),
        "reduce": (p4(b"N)R"), "REDUCE"),
        "build": (p4(b"}}b"), "BUILD"),
        "inst": (b"\x80\x02(ios\nsystem\n.", "INST"),
        "obj": (p4(b"(N)o"), "OBJ"),
        "newobj": (p4(b"N)\x81"), "NEWOBJ"),
        "ext1": (p4(b"\x82\x01"), "EXT1"),
        "persid": (p4(b"Pid\n"), "PERSID"),
        "binpersid": (p4(b"NQ"), "BINPERSID"),
        "deep_tuples": (p4(b"N" + b"\x85" * 200000), "nested deeper"),
        "deep_lists": (p4(b"]" * 1000 + b"a" * 999), "nested deeper"),
        "deep_marks": (p4(b"(" * 200000), "marks nested deeper"),
        "huge_unicode8": (p4(b"\x8d" + struct.pack("<Q", 1 << 62) + b"abc"), "runs past the end"),
        "huge_binbytes": (p4(b"B" + struct.pack("<I", 0xFFFFFFFF) + b"abc"), "runs past the end"),
        "huge_long4": (p4(b"\x8b" + struct.pack("<I", 0x7FFFFFFF)), "wider than 64 bits"),
        "huge_memo_index": (p4(b"Nr" + struct.pack("<I", 0x7FFFFFFF)), "memo index"),
        "unknown_memo": (p4(b"h\x05"), "never stored"),
        "cycle": (p4(b"]2a"), "cycle"),
        "truncated": (pickle.dumps({"segments": [{"device": 0}] * 3}, protocol=4)[:-7], "truncated"),
        "not_a_snapshot": (pickle.dumps([1, 2, 3], protocol=4), "not a PyTorch memory snapshot"),
        "segment_without_size": (pickle.dumps({"segments": [{"device": 0, "address": 1}]}, protocol=4),
                                 "total_size"),
    }


def small_snapshot(with_trace=True):
    frame = {"name": "forward", "filename": "/home/u/model.py", "line": 7}
    alloc = {"action": "alloc", "addr": 4096, "size": 1024, "stream": 0, "time_us": 10, "frames": [frame]}
    free = dict(alloc, action="free_completed", time_us=20)
    return pickle.dumps({
        "segments": [{"device": 0, "address": 0, "total_size": 2 << 20, "allocated_size": 512,
                      "active_size": 512, "requested_size": 500, "stream": 0, "segment_type": "large",
                      "is_expandable": False, "frames": [],
                      "blocks": [{"address": 0, "size": 512, "requested_size": 500, "state": "active_allocated",
                                  "frames": []},
                                 {"address": 512, "size": (2 << 20) - 512, "requested_size": 0,
                                  "state": "inactive", "frames": []}]}],
        "device_traces": [[alloc, free]] if with_trace else [],
        "allocator_settings": {"expandable_segments": False},
    }, protocol=4)


def main():
    c = Checker(sys.argv[1], timeout_s=10)
    with tempfile.TemporaryDirectory() as tmp:
        marker = os.path.join(tmp, "ran")
        for name, (data, says) in hostile(marker).items():
            path = os.path.join(tmp, name + ".pickle")
            with open(path, "wb") as f:
                f.write(data)
            c.expect_error(f"memory {name}", ["memory", path], 1, names=path, says=[says])
        c.check("no code from a pickle ran", not os.path.exists(marker))
        path = os.path.join(tmp, "global_os_system.pickle")
        c.expect_error("profile names a pickle as a snapshot", ["profile", path], 1, names=path,
                       says=["tuneprof memory"])
        snapshot = os.path.join(tmp, "dump.bin")
        with open(snapshot, "wb") as f:
            f.write(small_snapshot())
        result = c.expect_ok("a snapshot named .bin is read by its content", ["memory", "--json", snapshot])
        if result and result[0] == 0:
            import json
            device = json.loads(result[1])["devices"][0]
            c.check("its peak is the dump plus the freed block", device["peak"]["allocated"] == 512 + 1024,
                    str(device["peak"]))
            c.check("its peak is charged to forward", any(
                g["function"] == "forward" and g["bytes"] == 1024 for g in device["peak"]["frames"]),
                str(device["peak"]["frames"]))
            c.check("a block freed within its forward is a temporary", device["peak"]["categories"]["temporaries"] == 1024,
                    str(device["peak"]["categories"]))
        with open(snapshot, "wb") as f:
            f.write(small_snapshot(with_trace=False))
        result = c.expect_ok("a snapshot without a trace", ["memory", "--json", snapshot])
        if result and result[0] == 0:
            import json
            device = json.loads(result[1])["devices"][0]
            c.check("without a trace the dump is the peak, in no category",
                    device["peak"]["allocated"] == 512 and device["peak"]["categories"]["unknown"] == 512,
                    str(device["peak"]))
        c.expect_error("a snapshot with a trace is refused", ["memory", snapshot, snapshot], 2, names=snapshot,
                       says=["read alone"])
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())
