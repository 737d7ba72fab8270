#!/usr/bin/env python3
"""Independent reference files for dstein's BIF tests.

For each NAME.bif given, writes beside it, with code that shares nothing
with dstein's Go reader:

  NAME.uai      the same network as a UAI BAYES file (variables in the BIF
                file's order, one table per variable, scope parents then
                child, the child fastest);
  NAME.xml      the same network in XMLBIF 0.3, variables in alphabetical
                order and each table's GIVEN list reversed (its numbers
                transposed to match), so that a reader that gets the order
                of the GIVEN variables wrong gets other numbers;
  NAME.uai.MAR  exact marginals, computed here by contracting all the
                tables with numpy.einsum (no evidence), to 17 digits.

Only numpy is needed. Run: python3 make_reference.py sachs.bif child.bif
"""
import re
import sys

import numpy as np
from xml.sax.saxutils import escape


def parse_bif(text):
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    variables, states = [], {}
    for m in re.finditer(r"variable\s+(\S+)\s*\{\s*type\s+discrete\s*\[\s*(\d+)\s*\]\s*\{([^}]*)\}", text):
        name = m.group(1)
        st = [s.strip() for s in m.group(3).split(",")]
        assert len(st) == int(m.group(2)), name
        variables.append(name)
        states[name] = st
    cpts = {}
    for m in re.finditer(r"probability\s*\(([^)]*)\)\s*\{(.*?)\}", text, flags=re.S):
        head = m.group(1)
        child, _, given = head.partition("|")
        child = child.strip()
        parents = [p.strip() for p in given.split(",") if p.strip()]
        k = len(states[child])
        shape = [len(states[p]) for p in parents] + [k]
        table = np.full(shape, np.nan)
        body = m.group(2)
        for row in re.finditer(r"(\([^)]*\)|table|default)\s*([^;]*);", body):
            key, nums = row.group(1), row.group(2)
            vals = np.array([float(x) for x in nums.replace(",", " ").split()])
            if key == "table":
                table = vals.reshape(shape)
            elif key == "default":
                table[np.isnan(table)] = np.tile(vals, int(np.isnan(table).sum() // k))
            else:
                idx = tuple(states[p].index(s.strip()) for p, s in zip(parents, key.strip("()").split(",")))
                table[idx] = vals
        assert not np.isnan(table).any(), child
        table = table / table.sum(axis=-1, keepdims=True)
        cpts[child] = (parents, table)
    return variables, states, cpts


def write_uai(path, variables, states, cpts):
    idx = {v: i for i, v in enumerate(variables)}
    with open(path, "w") as f:
        f.write("BAYES\n%d\n" % len(variables))
        f.write(" ".join(str(len(states[v])) for v in variables) + "\n")
        f.write("%d\n" % len(variables))
        for v in variables:
            parents, _ = cpts[v]
            f.write("%d %s\n" % (len(parents) + 1, " ".join(str(idx[u]) for u in parents + [v])))
        for v in variables:
            _, t = cpts[v]
            f.write("\n%d\n" % t.size)
            f.write(" ".join(repr(float(x)) for x in t.ravel()) + "\n")


def write_xmlbif(path, name, variables, states, cpts):
    with open(path, "w") as f:
        f.write('<?xml version="1.0"?>\n<BIF VERSION="0.3">\n<NETWORK>\n<NAME>%s</NAME>\n' % escape(name))
        for v in sorted(variables):
            f.write('<VARIABLE TYPE="nature">\n  <NAME>%s</NAME>\n' % escape(v))
            for s in states[v]:
                f.write("  <OUTCOME>%s</OUTCOME>\n" % escape(s))
            f.write("  <PROPERTY>written by make_reference.py</PROPERTY>\n</VARIABLE>\n")
        for v in sorted(variables):
            parents, t = cpts[v]
            rev = parents[::-1]
            # axes of t: parents…, child; reversed parents, then the child
            order = list(range(len(parents)))[::-1] + [len(parents)]
            tt = np.transpose(t, order)
            f.write("<DEFINITION>\n  <FOR>%s</FOR>\n" % escape(v))
            for p in rev:
                f.write("  <GIVEN>%s</GIVEN>\n" % escape(p))
            f.write("  <TABLE>%s</TABLE>\n</DEFINITION>\n" % " ".join(repr(float(x)) for x in tt.ravel()))
        f.write("</NETWORK>\n</BIF>\n")


def marginals(variables, states, cpts):
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    assert len(variables) <= len(letters)
    sub = {v: letters[i] for i, v in enumerate(variables)}
    ops, terms = [], []
    for v in variables:
        parents, t = cpts[v]
        ops.append(t)
        terms.append("".join(sub[u] for u in parents + [v]))
    out = []
    for v in variables:
        expr = ",".join(terms) + "->" + sub[v]
        m = np.einsum(expr, *ops, optimize="greedy")
        out.append(m / m.sum())
    return out


def main():
    for path in sys.argv[1:]:
        with open(path) as f:
            variables, states, cpts = parse_bif(f.read())
        stem = path[: -len(".bif")]
        write_uai(stem + ".uai", variables, states, cpts)
        write_xmlbif(stem + ".xml", stem.rsplit("/", 1)[-1], variables, states, cpts)
        ms = marginals(variables, states, cpts)
        with open(stem + ".uai.MAR", "w") as f:
            f.write("MAR\n%d " % len(variables))
            f.write(" ".join("%d %s" % (len(m), " ".join("%.17g" % x for x in m)) for m in ms) + "\n")
        print(path, len(variables), "variables")


if __name__ == "__main__":
    main()
