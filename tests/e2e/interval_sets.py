"""Interval arithmetic for the end-to-end oracles: the independent Python side of the overlap figures
(union, covered length, intersection of two unions), written once for every check that needs it. The union,
its length and the intersection of two are the bench generators' own (bench/intervals.py), so that the
generators' truth and the checks' oracles are one arithmetic."""
import os
import sys

sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
from intervals import intersection_length, length, union  # noqa: E402,F401  (re-exported to the checks)


def union_length(intervals):
    """Length covered by (start, end) intervals in any order, overlaps counted once."""
    total, cur_start, cur_end = 0, None, None
    for start, end in sorted(intervals):
        if cur_end is None or start > cur_end:
            if cur_end is not None:
                total += cur_end - cur_start
            cur_start, cur_end = start, end
        else:
            cur_end = max(cur_end, end)
    return total + (cur_end - cur_start if cur_end is not None else 0)


def sm_active(ranges):
    """The TensorBoard plugin's merge of blocks-per-SM values (merge_ranges_with_value), integrated with the
    sum capped at 1: (start, end, value) ranges, starts before ends at equal times."""
    points = sorted([(s, 0, v) for s, e, v in ranges] + [(e, 1, v) for s, e, v in ranges])
    active, running, last = 0.0, 0.0, None
    for t, kind, v in points:
        if last is not None and running > 0:
            active += min(running, 1.0) * (t - last)
        running += -v if kind else v
        last = t
    return active


def subtract(a, b):
    """The parts of union `a` outside union `b`, as a union."""
    out = []
    j = 0
    for start, end in a:
        while j < len(b) and b[j][1] <= start:
            j += 1
        k = j
        while k < len(b) and b[k][0] < end:
            if b[k][0] > start:
                out.append([start, b[k][0]])
            start = max(start, b[k][1])
            k += 1
        if start < end:
            out.append([start, end])
    return out


def collective_waits(ranks):
    """Per rank of collectives matched by position and name ((start, dur, name) per rank, in order): how many
    matched, and per rank the wait for the last arrival, the transfer, the times it came last, the wait it caused."""
    world = len(ranks)
    n = min(len(r) for r in ranks)
    # Unions over each rank's timeline: collectives in flight at once wait for the same late rank once.
    wait_spans, comm_spans, caused_spans = [[] for _ in range(world)], [[] for _ in range(world)], {}
    last = [0] * world
    matched = 0
    for i in range(n):
        if len({r[i][2] for r in ranks}) != 1:
            continue
        matched += 1
        last_start = max(r[i][0] for r in ranks)
        late = max(range(world), key=lambda k: (ranks[k][i][0], -k))
        for k in range(world):
            start, dur = ranks[k][i][0], ranks[k][i][1]
            w = min(max(last_start - start, 0), dur)
            wait_spans[k].append((start, start + w))
            comm_spans[k].append((start, start + dur))
            caused_spans.setdefault((late, k), []).append((start, start + w))
        last[late] += 1
    wait = [length(union(spans)) for spans in wait_spans]
    transfer = [length(union(comm_spans[k])) - wait[k] for k in range(world)]
    caused = [0] * world
    for (late, _), spans in caused_spans.items():
        caused[late] += length(union(spans))
    return matched, wait, transfer, last, caused
