#!/usr/bin/python3
"""Every command's `--json` output against its documented schema (docs/json/<command>.md, issue 11).

- Every subcommand whose help offers --json has a page in docs/json/.
- Each page names its schema (`Schema: \`tuneprof.<command>/<version>\``) and the output's "schema" equals it.
- Each page's tables (`### top level`, `### \`path\``) list keys with JSON types; on a Kineto GPU trace, a
  torch_npu rank directory and a CPU-only trace (compare: two before/after pairs, one with a gate), every
  documented key is present at its path (in every element of arrays) with one of its documented types.
Usage: json_schema_check.py TUNEPROF SHARED_DIR SOURCE_DIR
"""
import json
import pathlib
import re
import subprocess
import sys

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)


def run(tuneprof, *args):
    return subprocess.run([tuneprof, *map(str, args)], capture_output=True, text=True, timeout=300)


def json_commands(tuneprof):
    """Subcommands whose help lists --json."""
    help_text = run(tuneprof, "--help").stdout
    parts = re.split(r"^subcommands:", help_text, flags=re.M | re.I)
    check(len(parts) == 2, "tuneprof --help lists no subcommands")
    section = parts[-1]
    names = re.findall(r"^\s{2}([a-z][a-z-]*)\s", section, re.M)
    return [n for n in names if "--json" in run(tuneprof, n, "--help").stdout]


def parse_page(path):
    """(schema, {path: {key: [types]}}) from a page's tables."""
    schema, tables, current = None, {}, None
    for line in path.read_text().splitlines():
        m = re.match(r"Schema: `([^`]+)`", line)
        if m:
            schema = m.group(1)
        m = re.match(r"### (.+)", line)
        if m:
            title = m.group(1).strip()
            current = "" if title == "top level" else title.strip("`")
            tables[current] = {}
            continue
        m = re.match(r"\| `([^`]*)` \| ([a-z ]+) \|", line)
        if m and current is not None:
            tables[current][m.group(1)] = [t.strip() for t in m.group(2).split(" or ")]
    return schema, tables


def type_ok(value, types):
    for t in types:
        if (t == "null" and value is None) or (t == "string" and isinstance(value, str)) or \
           (t == "boolean" and isinstance(value, bool)) or (t == "array" and isinstance(value, list)) or \
           (t == "object" and isinstance(value, dict)) or \
           (t == "integer" and isinstance(value, int) and not isinstance(value, bool)) or \
           (t == "number" and isinstance(value, (int, float)) and not isinstance(value, bool)):
            return True
    return False


def resolve(doc, path):
    """The objects at `path` ("ranks[].total"): every element of arrays along the way."""
    nodes = [doc]
    for part in filter(None, path.split(".")):
        is_array = part.endswith("[]")
        key = part[:-2] if is_array else part
        nxt = []
        for node in nodes:
            value = node.get(key) if isinstance(node, dict) else None
            if is_array:
                nxt.extend(value if isinstance(value, list) else [])
            elif value is not None:
                nxt.append(value)
        nodes = nxt
    return nodes


def validate(label, doc, schema, tables):
    check(doc.get("schema") == schema, f"{label}: schema {doc.get('schema')!r} != documented {schema!r}")
    for path, keys in tables.items():
        for node in resolve(doc, path):
            if not isinstance(node, dict):
                failures.append(f"{label}: {path or 'top level'} is not an object")
                continue
            for key, types in keys.items():
                if key not in node:
                    failures.append(f"{label}: {path}.{key} missing")
                elif not type_ok(node[key], types):
                    failures.append(f"{label}: {path}.{key} = {str(node[key])[:40]} is not {' or '.join(types)}")


def main():
    tuneprof, shared, source = sys.argv[1], pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
    docs = source / "docs" / "json"
    traces = shared / "traces"
    cpu = traces / "torch-cpu" / "kineto26"
    inputs = [traces / "kineto" / "hta" / "nccl_parser_config" / "nccl_data.json.gz",
              traces / "ascend" / "msinsight" / "test" / "data" / "pytorch" / "text" / "level1" / "rank0_ascend_pt",
              cpu / "cnn_train.json.gz"]
    runs = {
        "compare": [[cpu / "cnn_eval.json.gz", cpu / "cnn_eval_fused.json.gz"],
                    [cpu / "generate_nokv.json.gz", cpu / "generate_kv.json.gz", "--fail-if", "step_time>+3%"]],
    }
    commands = json_commands(tuneprof)
    check(len(commands) >= 7, f"only {commands} offer --json")
    validated = 0
    for command in commands:
        page = docs / f"{command}.md"
        if not page.exists():
            failures.append(f"{command}: no docs/json/{command}.md")
            continue
        schema, tables = parse_page(page)
        check(schema is not None and schema.startswith(f"tuneprof.{command}/"), f"{page}: schema line {schema}")
        check("" in tables and "schema" in tables[""], f"{page}: no top-level table with `schema`")
        for args in runs.get(command, [[i] for i in inputs]):
            result = run(tuneprof, command, *args, "--json")
            label = f"{command} {pathlib.Path(str(args[0])).name}"
            if result.returncode not in (0, 3):
                failures.append(f"{label}: exit {result.returncode}: {result.stderr.strip()[:200]}")
                continue
            validate(label, json.loads(result.stdout), schema, tables)
            validated += 1
    print(f"{validated} outputs of {len(commands)} commands validated against docs/json")
    for message in failures:
        print("FAIL:", message)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
