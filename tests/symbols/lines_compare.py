#!/usr/bin/env python3
"""Compare lines_driver's output with addr2line's or llvm-symbolizer's
(both in addr2line's -i -f -a format), address by address.

    lines_compare.py NAME ORACLE_OUT DRIVER_OUT [MIN_LINE [MIN_CHAIN [outer-from-symtab]]]

Counts, over the addresses the oracle has a line for: the first frame's
file:line, and the whole chain (each frame's function and file:line).
Prints `ok - ...` or `not ok - ...` per measure against MIN_LINE and
MIN_CHAIN percent (default 99; 0: the figure is printed, not asserted),
and the first mismatches.  outer-from-symtab: the oracle names the
outermost frame from the symbol table (llvm-symbolizer does), so that
frame's name is not compared."""
import re
import sys


def blocks(path):
    out, cur = {}, None
    order = []
    with open(path, errors="replace") as f:
        lines = [l.rstrip("\n") for l in f]
    i = 0
    while i < len(lines):
        l = lines[i]
        if re.fullmatch(r"0x[0-9a-f]+", l):
            cur = int(l, 16)
            out[cur] = []
            order.append(cur)
            i += 1
            continue
        if cur is None or i + 1 >= len(lines):
            i += 1
            continue
        fn, loc = l, lines[i + 1]
        loc = re.sub(r" \(discriminator \d+\)$", "", loc)
        out[cur].append((fn, loc))
        i += 2
    return out, order


def known(chain):
    return chain and not chain[0][1].endswith(":0") and not chain[0][1].endswith(":?")


def main():
    name, oracle, driver = sys.argv[1:4]
    minline = float(sys.argv[4]) if len(sys.argv) > 4 else 99.0
    minchain = float(sys.argv[5]) if len(sys.argv) > 5 else 99.0
    outer_free = len(sys.argv) > 6 and sys.argv[6] == "outer-from-symtab"
    want, order = blocks(oracle)
    got, _ = blocks(driver)
    n = line_ok = chain_ok = extra = 0
    bad = []
    for a in order:
        w, g = want.get(a, []), got.get(a, [])
        if not known(w):
            if known(g):
                extra += 1
            continue
        n += 1
        if g and g[0][1] == w[0][1]:
            line_ok += 1
        if outer_free and g and w and len(g) == len(w):
            g = g[:-1] + [(w[-1][0], g[-1][1])]
        if g == w:
            chain_ok += 1
        elif len(bad) < 8:
            bad.append((a, w, g))
    for a, w, g in bad:
        print("# %s %#x: want %s" % (name, a, w))
        print("# %s %#x: got  %s" % (name, a, g))
    if n == 0:
        print("not ok - %s: the oracle knows no address" % name)
        return
    for what, k, minpct in (("file:line", line_ok, minline), ("inline chain", chain_ok, minchain)):
        pct = 100.0 * k / n
        line = "%s: %s agrees at %d/%d addresses (%.2f%%)" % (name, what, k, n, pct)
        if minpct == 0:
            print("# " + line + " (not asserted)")
        else:
            print("%s - %s" % ("ok" if pct >= minpct else "not ok", line))
    print("# %s: %d addresses without a line in the oracle, %d of them with one here"
          % (name, len(order) - n, extra))


main()
