#!/usr/bin/python3
"""Checks that no output of tuneprof destroys a file or a device, and that no input is read twice or
misread, on inputs generated in a temporary directory; with --real, on copies of two small torch_npu rank
directories of the shared corpus instead (the checks marked (corpus) below).

- Devices and FIFOs as outputs: `export --sqlite`, `report -o`, `annotate -o` and `summarize -o` refuse a
  character device (a mknod copy of /dev/null, as root; skipped otherwise), a symlink to /dev/null and a
  FIFO (without blocking), and leave each as it was; a symlink into a missing directory, or a loop of
  links, is refused naming the link and its target, and stays a link; `-` is refused (exit 2), no file
  named `-` made.
- Files a run reads (corpus): `report RANK_DIR -o RANK_DIR/.../kernel_details.csv`, `export ... --sqlite
  .../trace_view.json` and `annotate --merge ... -o .../step_trace_time.csv` are refused, the files byte
  for byte as they were and no temporary file left.
- Inputs: one file named 1,000 times and through symlinks is one rank, said in one line; a run merged by
  `annotate --merge DIR -o DIR/merged.json.gz` and an export in DIR are not read as more ranks; `-` is
  refused; zstd, bzip2, xz and lz4 files are named; a gzip padded with zeros reads.

Errors: exit 1 (usage: exit 2), nothing on stdout, one stderr line. Never over 20 s a command.
Usage: safe_outputs_check.py TUNEPROF_BINARY [--real SHARED_DIR]
"""
import gzip
import hashlib
import json
import os
import shutil
import stat
import sys
import ctypes
import ctypes.util
import struct
import tempfile

from harness import Checker

TIMEOUT_S = 20
ASCEND_RUN = "traces/ascend/msinsight/test/data/pytorch/text/level0"
ASCEND_RANKS = {"text": "traces/ascend/msinsight/test/data/pytorch/text/level0/rank0_ascend_pt",
                "db": "traces/ascend/msinsight/test/data/pytorch/db/level1/rank0_ascend_pt"}


class OutputChecker(Checker):
    def __init__(self, binary):
        super().__init__(os.path.abspath(binary) if os.sep in binary else binary, TIMEOUT_S)
        self.cwd = None  # where the commands run: the temporary folder, so that a stray relative output lands there

    def run(self, args, cwd=None):
        return super().run(args, cwd or self.cwd)

    def expect_error(self, name, args, code, says=(), extra=None, warnings_ok=False):
        """Exit `code`, nothing on stdout, one stderr line holding each of `says`; `extra()` lists more
        problems (a file changed). With `warnings_ok`, the input's own warnings may come first (a file the
        run reads is refused when the output is written, after the analysis said what it found)."""
        result = self.run(args)
        if result is None:
            self.report(name, [f"no answer within {TIMEOUT_S} s"])
            return
        rc, out, err = result
        problems = []
        if rc != code:
            problems.append(f"exit {rc}, expected {code}")
        if out:
            problems.append(f"stdout not empty: {out[:200]!r}")
        lines = [line for line in err.splitlines() if not (warnings_ok and line.startswith("tuneprof: warning:"))]
        if len(lines) != 1:
            problems.append(f"{len(lines)} stderr lines, expected 1")
        problems += [f"stderr does not say {text!r}" for text in says if text not in err]
        if extra is not None:
            problems += extra()
        self.report(name, problems, result)

    def expect_ok(self, name, args):
        result = self.run(args)
        if result is None:
            self.report(name, [f"no answer within {TIMEOUT_S} s"])
            return None
        if result[0] != 0:
            self.report(name, [f"exit {result[0]}"], result)
            return None
        return result


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def digests(root):
    """Every file under `root` and its digest: what must not change."""
    found = {}
    for parent, _, names in os.walk(root):
        for name in names:
            path = os.path.join(parent, name)
            found[os.path.relpath(path, root)] = digest(path)
    return found


def kineto_trace(rank):
    """A small Kineto trace of one rank: three steps, each an operator launching a kernel."""
    events = [{"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "python3"}},
              {"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "GPU 0"}}]
    for step in range(3):
        t0 = 1000 + step * 1000
        events += [
            {"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step + 1}", "pid": 1, "tid": 1, "ts": t0,
             "dur": 900},
            {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": t0 + 10, "dur": 100},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": t0 + 20,
             "dur": 5, "args": {"correlation": step + 1}},
            {"ph": "X", "cat": "kernel", "name": "gemm_kernel", "pid": 0, "tid": 7, "ts": t0 + 200, "dur": 300,
             "args": {"device": 0, "stream": 7, "correlation": step + 1}},
        ]
    return {"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": 2},
            "deviceProperties": [{"id": 0, "name": "NVIDIA A100", "numSms": 108}], "traceEvents": events}


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)
    return path


def rank_count(checker, name, args):
    """The number of ranks `analyze --json` read, and its warnings."""
    result = checker.expect_ok(name, ["analyze", "--json", *args])
    if result is None:
        return None, []
    doc = json.loads(result[1])
    return len(doc["ranks"]), doc.get("warnings", [])


def writers(trace, output):
    """The four commands that write a file, each writing `output` from `trace`."""
    return [("export --sqlite", ["export", trace, "--sqlite", output]),
            ("report -o", ["report", trace, "-o", output]),
            ("annotate -o", ["annotate", trace, "-o", output]),
            ("summarize -o", ["summarize", trace, "-o", output])]


def check_special_targets(c, tmp, trace):
    cases = []
    if os.geteuid() == 0:
        device = os.path.join(tmp, "null.tps")
        os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        cases.append(("a character device", device, stat.S_ISCHR, "is a character device"))
    else:
        print("skip a character device made with mknod: not running as root")
    link = os.path.join(tmp, "link.tps")
    os.symlink("/dev/null", link)
    cases.append(("a symlink to /dev/null", link, stat.S_ISLNK, "is a character device"))
    fifo = os.path.join(tmp, "fifo.tps")
    os.mkfifo(fifo)
    cases.append(("a FIFO", fifo, stat.S_ISFIFO, "is a FIFO"))
    for what, target, kind, says in cases:
        for command, args in writers(trace, target):
            def unchanged(target=target, kind=kind):
                return [] if kind(os.lstat(target).st_mode) else [f"{target} is no longer {what}"]
            c.expect_error(f"{command} to {what} is refused", args, 1, [target, says, "not a regular file"], unchanged)
    if not stat.S_ISCHR(os.stat("/dev/null").st_mode):
        c.report("/dev/null stays a device", ["/dev/null is no longer a character device"])


def check_dangling_links(c, tmp, trace):
    """A symlink to a file in a missing directory (or a loop of links) is refused by every writer, naming the
    link and its target, and stays a link; a link to a file not there yet is written through."""
    dangling = os.path.join(tmp, "dang.tps")
    os.symlink("nodir/x.tps", dangling)
    loop = os.path.join(tmp, "loop.tps")
    os.symlink("loop.tps", loop)
    for target, says in ((dangling, [os.path.join(tmp, "nodir/x.tps"), "does not exist"]),
                         (loop, ["a symbolic link loop"])):
        for command, args in writers(trace, target):
            def still_a_link(target=target):
                return [] if os.path.islink(target) else [f"{target} is no longer a symlink"]
            c.expect_error(f"{command} to a link {os.readlink(target)} is refused", args, 1,
                           [target + ": cannot write the output file: a symbolic link", *says], still_a_link)
    link = os.path.join(tmp, "new_link.html")
    os.symlink("made_through_link.html", link)
    if c.expect_ok("report -o a link to a file not there yet", ["report", trace, "-o", link]) is not None:
        made = os.path.join(tmp, "made_through_link.html")
        c.report("report -o a link to a file not there yet writes its target, the link kept",
                 ([] if os.path.islink(link) else ["the link was replaced"]) +
                 ([] if os.path.isfile(made) else ["no target written"]))


def check_standard_output(c, tmp, trace):
    """`-` as an output is refused by every writer (exit 2), and no file named `-` appears."""
    for command, args in writers(trace, "-"):
        def no_file():
            return [f"a file named '-' in {tmp}"] if os.path.lexists(os.path.join(tmp, "-")) else []
        c.expect_error(f"{command} - is refused", args, 2,
                       ["-: writing to standard output is not supported; give a file name"], no_file)


def check_files_the_run_reads(c, tmp, shared):
    source = os.path.join(shared, ASCEND_RUN)
    if not c.check("the corpus holds the torch_npu level0 run", os.path.isdir(source), f"no {source}"):
        return
    run = os.path.join(tmp, "npu_run")
    shutil.copytree(source, run)
    for parent, dirs, names in os.walk(run):  # the corpus is read-only; a copy must be writable to prove anything
        for name in dirs + names:
            os.chmod(os.path.join(parent, name), 0o755 if name in dirs else 0o644)
    rank = os.path.join(run, "rank0_ascend_pt")
    tables = os.path.join(rank, "ASCEND_PROFILER_OUTPUT")
    before = digests(run)

    def untouched():
        after = digests(run)
        return [] if after == before else [f"files changed or added: {sorted(set(after.items()) ^ set(before.items()))}"]

    says = ["the output is a file this run reads", "give -o another file"]
    c.expect_error("report -o a rank directory's kernel_details.csv is refused",
                   ["report", rank, "-o", os.path.join(tables, "kernel_details.csv")], 2, says, untouched)
    c.expect_error("export --sqlite over a rank directory's trace_view.json is refused, naming --sqlite",
                   ["export", rank, "--sqlite", os.path.join(tables, "trace_view.json")], 2,
                   ["the output is a file this run reads", "give --sqlite another file"], untouched)
    c.expect_error("annotate --merge -o a rank directory's step_trace_time.csv is refused",
                   ["annotate", "--merge", run, "-o", os.path.join(tables, "step_trace_time.csv")], 2, says,
                   untouched)


def writable_copy(source, target):
    """A copy of a corpus folder (read-only) that a write could change: what the refusals are proved on."""
    shutil.copytree(source, target)
    for parent, dirs, names in os.walk(target):
        for name in dirs + names:
            os.chmod(os.path.join(parent, name), 0o755 if name in dirs else 0o644)
    return target


def opened_files(c, root, args):
    """The regular files under `root` that the command `args` opens, as the kernel saw them (inotify on every
    folder), or None where inotify is not there to ask."""
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    in_open, in_isdir, in_nonblock = 0x20, 0x40000000, 0o4000
    fd = libc.inotify_init1(in_nonblock)
    if fd < 0:
        return None
    try:
        watches = {}
        for parent, _, _ in os.walk(root):
            wd = libc.inotify_add_watch(fd, parent.encode(), in_open)
            if wd >= 0:
                watches[wd] = parent
        if c.expect_ok(f"{' '.join(args[:1])} on {root}", args) is None:
            return None
        opened = set()
        while True:
            try:
                data = os.read(fd, 1 << 16)
            except BlockingIOError:
                break
            at = 0
            while at < len(data):
                wd, mask, _, length = struct.unpack_from("iIII", data, at)
                name = data[at + 16:at + 16 + length].split(b"\0", 1)[0].decode()
                if mask & in_open and not mask & in_isdir and name and wd in watches:
                    opened.add(os.path.join(watches[wd], name))
                at += 16 + length
        return opened
    finally:
        os.close(fd)


def check_every_file_a_rank_reads(c, tmp, shared):
    """For every file of a copied torch_npu rank directory (text and db forms) that a run opens,
    `report DIR -o THAT_FILE` is refused and the file stays byte for byte; a file the run does not open may
    be written."""
    for form, relative in ASCEND_RANKS.items():
        source = os.path.join(shared, relative)
        if not c.check(f"the corpus holds the {form} rank", os.path.isdir(source), f"no {source}"):
            continue
        rank = writable_copy(source, os.path.join(tmp, f"{form}_rank"))
        opened = opened_files(c, rank, ["report", rank, "-o", os.path.join(tmp, f"{form}_rank.html")])
        if opened is None:
            print(f"skip every file a {form} rank reads: inotify is not available")
            continue
        files = sorted(os.path.join(parent, name) for parent, _, names in os.walk(rank) for name in names)
        read = [f for f in files if f in opened]
        must = [f for f in files if os.path.basename(f).startswith(("profiler_info", "profiler_metadata"))]
        c.report(f"a {form} rank's run opens its profiler_info and profiler_metadata",
                 [f"{f} not opened" for f in must if f not in opened])
        for target in read:
            before = digest(target)

            def unchanged(target=target, before=before):
                return [] if digest(target) == before else [f"{target} changed"]
            c.expect_error(f"report {form} rank -o its {os.path.relpath(target, rank)} is refused",
                           ["report", rank, "-o", target], 2,
                           [target, "the output is a file this run reads", "give -o another file"],
                           unchanged, warnings_ok=True)
            c.expect_error(f"export {form} rank --sqlite its {os.path.relpath(target, rank)} is refused",
                           ["export", rank, "--sqlite", target], 2,
                           [target, "the output is a file this run reads", "give --sqlite another file"],
                           unchanged, warnings_ok=True)


def check_inputs(c, tmp):
    run = os.path.join(tmp, "run")
    os.mkdir(run)
    traces = [write(os.path.join(run, f"rank{r}.json"), json.dumps(kineto_trace(r)).encode()) for r in range(2)]

    # One file named 1,000 times, and through symlinks, is one rank.
    links = []
    for i in range(20):
        links.append(os.path.join(tmp, f"link{i}.json"))
        os.symlink(traces[0], links[-1])
    ranks, warnings = rank_count(c, "one file named 1,020 times", [traces[0]] * 1000 + links)
    if ranks is not None:
        named = [w for w in warnings if "named 1020 times (or through links to it); read once" in w]
        c.report("one file named 1,020 times is one rank, said once",
                 ([] if ranks == 1 else [f"{ranks} ranks"]) + ([] if len(named) == 1 else [f"warnings: {warnings}"]))

    # A merged run in the run's directory is not one more rank, and can be merged over again.
    merged = os.path.join(run, "merged.json.gz")
    for attempt in ("", " again, over the previous one"):
        if c.expect_ok(f"annotate --merge DIR -o DIR/merged.json.gz{attempt}", ["annotate", "--merge", run, "-o", merged]):
            c.report(f"annotate --merge DIR -o DIR/merged.json.gz{attempt} writes it", [] if os.path.isfile(merged) else ["no file"])
    ranks, warnings = rank_count(c, "analyze DIR holding its merged run", [run])
    if ranks is not None:
        skipped = [w for w in warnings if "merged by tuneprof annotate --merge; skipped" in w]
        c.report("analyze DIR counts the ranks, not the merged run",
                 ([] if ranks == 2 else [f"{ranks} ranks"]) + ([] if len(skipped) == 1 else [f"warnings: {warnings}"]))
    if c.expect_ok("the merged run named is read", ["info", "--json", merged]) is not None:
        c.report("the merged run named is read", [])

    # An export inside the directory is not a rank either.
    export = os.path.join(tmp, "run.sqlite")
    if c.expect_ok("export --sqlite", ["export", *traces, "--sqlite", export]):
        shutil.copy(export, os.path.join(run, "run.sqlite"))
        ranks, warnings = rank_count(c, "analyze DIR holding an export", [run])
        if ranks is not None:
            said = [w for w in warnings if "a database tuneprof export --sqlite wrote" in w]
            c.report("analyze DIR skips the export in it",
                     ([] if ranks == 2 else [f"{ranks} ranks"]) + ([] if said else [f"warnings: {warnings}"]))

    c.expect_error("- is refused", ["analyze", "-"], 1,
                   ["-: reading a trace from standard input is not supported; save the trace to a file"])

    for name, magic, tool in [("zstd", b"\x28\xb5\x2f\xfd", "zstd"), ("bzip2", b"BZh91AY&SY", "bzip2"),
                              ("xz", b"\xfd7zXZ\x00\x00", "xz"), ("lz4", b"\x04\x22\x4d\x18\x64", "lz4")]:
        path = write(os.path.join(tmp, f"trace.json.{name}"), magic + os.urandom(64))
        c.expect_error(f"a {name} file is named", ["analyze", path], 1,
                       [f"{path}: a {name}-compressed file; decompress it first ({tool} -d {path})"])

    padded = write(os.path.join(tmp, "padded.json.gz"),
                   gzip.compress(json.dumps(kineto_trace(0)).encode(), mtime=0) + bytes(10240))
    ranks, _ = rank_count(c, "a gzip padded with zeros", [padded])
    if ranks is not None:
        c.report("a gzip padded with zeros reads as gzip does", [] if ranks == 1 else [f"{ranks} ranks"])
    return traces[0]


def main():
    """The generated inputs alone, or with --real the corpus copies alone: the first half runs on a clone
    without the corpus, the second is registered as a corpus test, so that a missing corpus is a skip said
    in one line rather than checks quietly left out."""
    real = len(sys.argv) == 4 and sys.argv[2] == "--real"
    if len(sys.argv) != 2 and not real:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    c = OutputChecker(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix="tp_safe_outputs_") as tmp:
        c.cwd = tmp
        if real:
            shared = os.path.abspath(sys.argv[3])
            check_files_the_run_reads(c, tmp, shared)
            check_every_file_a_rank_reads(c, tmp, shared)
        else:
            trace = check_inputs(c, tmp)
            check_special_targets(c, tmp, trace)
            check_dangling_links(c, tmp, trace)
            check_standard_output(c, tmp, trace)
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())
