#!/usr/bin/env python3
"""Writes docs/advisor.md's Rules table from the advisor's rule catalogue, so a rule is documented where it is
declared (src/analysis/advisor/rules/catalogue.json) and the table is never edited by hand.

  python3 scripts/advisor_rules_table.py           rewrite the table in docs/advisor.md (`make advisor-docs`)
  python3 scripts/advisor_rules_table.py --check   exit 1, saying what to run, when the table differs

Where the cells come from: a finding's "doc" object ({fires_when, estimated_gain, peer}: the columns "fires
when", "estimated gain per step" and "peer", Markdown) makes its own row; a rule's "doc" makes one row of
all its findings; a finding's "doc_with": "<id>" joins the row of that id (a finding of another rule
documented with it). Every finding is documented exactly one of these ways.

How a row reads: the ids in the first column, backquoted and comma-separated, or, for three ids or more of
one family, "`family.*`: name, name, ..."; the category as advise prints it, the categories of the row's
ids in order ("compute / memory") where they differ. The rows are in catalogue order grouped by category, in
the order of advise's categories (FindingCategory in src/analysis/advisor/finding.h). The table is written
between two marker lines of docs/advisor.md; stdlib only.
"""

import argparse
import json
import re
import sys
from pathlib import Path

CATALOGUE = "src/analysis/advisor/rules/catalogue.json"
CATEGORY_HEADER = "src/analysis/advisor/finding.h"
DOC = "docs/advisor.md"
COMMAND = "make advisor-docs"
BEGIN = (f"<!-- Generated from {CATALOGUE} (each finding's \"doc\", or its rule's) by "
         f"scripts/advisor_rules_table.py: edit the catalogue, then run `{COMMAND}`. -->")
END = "<!-- End of the generated Rules table. -->"
HEADER = "| id | category | fires when | estimated gain per step | peer |\n|---|---|---|---|---|\n"
DOC_FIELDS = ("fires_when", "estimated_gain", "peer")


class CatalogueError(Exception):
    pass


def category_order(header_text):
    """advise's categories in FindingCategory's order, as the catalogue names them (kFooBar: foo_bar)."""
    match = re.search(r"enum class FindingCategory[^{]*\{([^}]*)\}", header_text)
    if not match:
        raise CatalogueError(f"no `enum class FindingCategory` in {CATEGORY_HEADER}")
    names = re.findall(r"\bk([A-Za-z0-9]+)", re.sub(r"//[^\n]*", "", match.group(1)))
    return [re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower() for name in names if name != "Count"]


def doc_cells(doc, where):
    """The three doc columns of `doc`, checked to be one-line Markdown cells."""
    if not isinstance(doc, dict) or set(doc) != set(DOC_FIELDS):
        raise CatalogueError(f"{where}: \"doc\" must be an object with {', '.join(DOC_FIELDS)}")
    cells = [doc[field] for field in DOC_FIELDS]
    for field, cell in zip(DOC_FIELDS, cells):
        if not isinstance(cell, str) or not cell or "|" in cell or "\n" in cell:
            raise CatalogueError(f"{where}: doc \"{field}\" must be a non-empty line without '|'")
    return cells


def catalogue_rows(catalogue):
    """The table's rows in catalogue order: each {ids, categories, cells}."""
    rows, row_of, joins = [], {}, []
    for rule in catalogue["rules"]:
        findings = rule["findings"]
        where = rule["function"]
        if "doc" in rule:
            cells = doc_cells(rule["doc"], where)
            rows.append({"ids": [], "categories": [], "cells": cells})
        for finding in findings:
            fid, at = finding["id"], f"{where} {finding['id']}"
            ways = [key for key in ("doc", "doc_with") if key in finding] + (["its rule's doc"] if "doc" in rule else [])
            if len(ways) != 1:
                raise CatalogueError(f"{at}: documented {len(ways)} ways ({', '.join(ways) or 'none'}); "
                                     "give it one \"doc\", or \"doc_with\" another id, or its rule one \"doc\"")
            if "doc_with" in finding:
                joins.append((finding, at))
                continue
            if "doc" in finding:
                rows.append({"ids": [], "categories": [], "cells": doc_cells(finding["doc"], at)})
            rows[-1]["ids"].append(fid)
            rows[-1]["categories"].append(finding["category"])
            row_of[fid] = rows[-1]
    for finding, at in joins:
        row = row_of.get(finding["doc_with"])
        if row is None:
            raise CatalogueError(f"{at}: \"doc_with\" names {finding['doc_with']}, which has no row of its own")
        row["ids"].append(finding["id"])
        row["categories"].append(finding["category"])
    return rows


def id_cell(ids):
    families = {fid.split(".", 1)[0] for fid in ids}
    if len(ids) >= 3 and len(families) == 1:
        return f"`{families.pop()}.*`: " + ", ".join(fid.split(".", 1)[1] for fid in ids)
    return ", ".join(f"`{fid}`" for fid in ids)


def render_table(catalogue, categories):
    rows = catalogue_rows(catalogue)
    for row in rows:
        if row["categories"][0] not in categories:
            raise CatalogueError(f"{row['ids'][0]}: category {row['categories'][0]} is not a FindingCategory")
    rows.sort(key=lambda row: categories.index(row["categories"][0]))  # stable: catalogue order within
    lines = []
    for row in rows:
        category = " / ".join(dict.fromkeys(row["categories"]))
        lines.append(f"| {id_cell(row['ids'])} | {category} | " + " | ".join(row["cells"]) + " |\n")
    return HEADER + "".join(lines)


def with_table(doc, table):
    """`doc` with the text between its marker lines replaced by `table`."""
    begin, end = doc.find(BEGIN + "\n"), doc.find("\n" + END + "\n")
    if begin < 0 or end < begin:
        raise CatalogueError(f"{DOC} lacks the marker lines around the Rules table:\n{BEGIN}\n{END}")
    return doc[:begin] + BEGIN + "\n\n" + table + "\n" + END + doc[end + 1 + len(END):]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the documented table differs")
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent,
                        help="the repository (default: this script's)")
    args = parser.parse_args()
    doc_path = args.root / DOC
    try:
        catalogue = json.loads((args.root / CATALOGUE).read_text(encoding="utf-8"))
        categories = category_order((args.root / CATEGORY_HEADER).read_text(encoding="utf-8"))
        doc = doc_path.read_text(encoding="utf-8")
        new_doc = with_table(doc, render_table(catalogue, categories))
    except (CatalogueError, KeyError, ValueError, OSError) as error:
        print(f"advisor_rules_table: {error}", file=sys.stderr)
        return 2
    if args.check:
        if new_doc != doc:
            print(f"{DOC}'s Rules table differs from {CATALOGUE}: run `{COMMAND}` "
                  "(python3 scripts/advisor_rules_table.py)", file=sys.stderr)
            return 1
        return 0
    if new_doc != doc:
        doc_path.write_text(new_doc, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
