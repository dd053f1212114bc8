"""Interval arithmetic over [start, end] spans (union, covered length, intersection of two unions), shared by the
generators' truth and the end-to-end checks' oracles (tests/e2e/interval_sets.py takes these from here)."""


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
