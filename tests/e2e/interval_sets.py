"""Interval arithmetic for the end-to-end oracles: the independent Python side of the overlap figures
(union, covered length, intersection of two unions), written once for every check that needs it."""


def union(intervals):
    """Sorted, disjoint [start, end] lists covering the non-empty intervals given."""
    merged = []
    for start, end in sorted(i for i in intervals if i[1] > i[0]):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return merged


def length(intervals):
    """Total length of disjoint intervals."""
    return sum(end - start for start, end in intervals)


def intersection_length(a, b):
    """Length covered by both of two unions."""
    total, i, j = 0, 0, 0
    while i < len(a) and j < len(b):
        total += max(0, min(a[i][1], b[j][1]) - max(a[i][0], b[j][0]))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


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
