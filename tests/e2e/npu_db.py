"""The torch_npu and msprof Db exports' facts read straight with sqlite3, for the end-to-end oracles that
check tuneprof's reading of those databases against the database alone."""
from collections import Counter

COMPUTE_TASKS_BY_TYPE = ("SELECT opType, COUNT(*) FROM COMPUTE_TASK_INFO c "
                         "JOIN TASK t ON t.globalTaskId = c.globalTaskId GROUP BY opType")


def count_by_type(con, sql):
    """The rows `sql` counts by opType (it selects opType, COUNT(*)), by the type's text from STRING_IDS;
    "N/A" for a type without one."""
    names = dict(con.execute("SELECT id, value FROM STRING_IDS"))
    counts = Counter()
    for op_type, n in con.execute(sql):
        counts[names.get(op_type) or "N/A"] += n
    return dict(counts)
