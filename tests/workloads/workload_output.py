"""What the workload scripts share and that needs no torch: writing a profile as a gzipped Chrome trace, and a
free port for the process group of the distributed ones."""
import gzip
import os
import shutil
import socket


def write_gz(prof, path):
    """Exports `prof` (a torch.profiler profile) to `path`, which ends in .gz, through a temporary plain file."""
    raw = path[:-3]
    prof.export_chrome_trace(raw)
    with open(raw, "rb") as src, gzip.open(path, "wb", compresslevel=9) as dst:
        shutil.copyfileobj(src, dst)
    os.remove(raw)
    print(f"wrote {path} ({os.path.getsize(path)} bytes)", flush=True)


def free_port():
    """A TCP port on the loopback interface that nothing listens on now."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port
