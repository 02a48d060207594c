#!/usr/bin/env python3
"""Change points of named series, by Apache Otava's detector (the e-divisive split and merge of Fleming et
al., "Hunter: Using Change Point Detection to Hunt for Performance Regressions"), for internal/history.

stdin, or the file named by the one argument:
        {"max_pvalue": 0.05, "window": 30, "series": {"name": [v0, v1, ...], ...}}
stdout: {"name": [{"index": i, "mean_before": b, "mean_after": a, "pvalue": p}, ...], ...}
"""
import json
import sys

from otava.analysis import compute_change_points


def main():
    if len(sys.argv) > 1:
        with open(sys.argv[1]) as f:
            req = json.load(f)
    else:
        req = json.load(sys.stdin)
    out = {}
    for name, values in req["series"].items():
        cps, _ = compute_change_points(values, window_len=req.get("window", 30), max_pvalue=req["max_pvalue"],
                                       min_magnitude=req.get("min_magnitude", 0.0))
        out[name] = [{"index": int(cp.index), "mean_before": float(cp.stats.mean_before()),
                      "mean_after": float(cp.stats.mean_after()), "pvalue": float(cp.stats.pvalue)} for cp in cps]
    json.dump(out, sys.stdout)


main()
