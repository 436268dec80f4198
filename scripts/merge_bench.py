"""Merge several `python -m tiling_course.bench --output` files from one device and one
session into the one file the book reads (results concatenated, metadata and ceilings
of the first, every command kept):

    python scripts/merge_bench.py course/tiling_course/data/h200.json main.json small-tiles.json
"""
import json
import sys


def merge(paths):
    runs = [json.load(open(p)) for p in paths]
    first = runs[0]
    devices = {r["meta"]["device"]["name"] for r in runs}
    if len(devices) != 1:
        raise SystemExit(f"refusing to merge runs from different devices: {sorted(devices)}")
    first["meta"]["command"] = " && ".join(r["meta"]["command"] for r in runs)
    seen = {(r["kernel"], r["tile"], r["m"], r["k"], r["n"]) for r in first["results"]}
    for run in runs[1:]:
        for r in run["results"]:
            key = (r["kernel"], r["tile"], r["m"], r["k"], r["n"])
            if key not in seen:
                first["results"].append(r)
                seen.add(key)
    return first


if __name__ == "__main__":
    out, *inputs = sys.argv[1:]
    json.dump(merge(inputs), open(out, "w"), indent=1)
    print(f"wrote {out}")
