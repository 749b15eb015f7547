#!/usr/bin/env python3
"""Checks that the sources' dependencies point down (docs/architecture.md, "Layers").

Every folder has a layer; a file may include headers of its own folder and of folders in lower
layers only. The project's quoted includes ("name.h") are resolved to the folder that holds the
header; system and DPDK headers (<...>) are not ours. Exits 1 naming each include that points up
or sideways, unless it is in KNOWN (the ones issue 20 still has to remove, each with its reason).
Run by the test suite; `scripts/check-layers.py --list` prints the layers and each folder's uses.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Lowest first. Folders on one line share a layer and may not include one another.
LAYERS = [
    ["kpi"],
    ["wire", "cc", "latency", "qos", "version", "fabric"],
    ["config"],
    ["pmd_glue"],
    ["transport"],
    ["lab"],
    ["datapath"],
    ["telemetry"],
    ["engine"],
    ["apps", "bench"],
]
# Folders that may use every layer (they test or measure the layers; nothing includes them).
TOP = ["tests"]

# Includes still pointing the wrong way: (including folder, included folder) -> why it is there.
KNOWN = {}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def rank_of(folder):
    for i, names in enumerate(LAYERS):
        if folder in names:
            return i
    return len(LAYERS) if folder in TOP else None


def sources():
    for top, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if not d.startswith((".", "build")) and d != "node_modules"]
        for f in files:
            if f.endswith((".c", ".h", ".h.in")):
                yield os.path.join(top, f)


def main():
    headers = {}
    files = list(sources())
    for path in files:
        name = os.path.basename(path).removesuffix(".in")
        folder = os.path.relpath(path, ROOT).split(os.sep)[0]
        headers.setdefault(name, set()).add(folder)
    uses, bad, seen_known = {}, [], set()
    for path in files:
        rel = os.path.relpath(path, ROOT)
        folder = rel.split(os.sep)[0]
        src_rank = rank_of(folder)
        if src_rank is None:
            bad.append(f"{rel}: folder {folder} has no layer (scripts/check-layers.py LAYERS)")
            continue
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        for inc in INCLUDE.findall(text):
            name = os.path.basename(inc)
            owners = headers.get(name, set())
            if folder in owners or not owners:
                continue  # its own folder's, or generated (roce_version.h is version/'s)
            if len(owners) > 1:
                bad.append(f"{rel}: {name} is in several folders: {sorted(owners)}")
                continue
            target = next(iter(owners))
            uses.setdefault(folder, set()).add(target)
            if rank_of(target) < src_rank:
                continue
            if (folder, target) in KNOWN:
                seen_known.add((folder, target))
                continue
            bad.append(f"{rel}: includes {inc} of {target}/, which is not below {folder}/")
    for pair in sorted(set(KNOWN) - seen_known):
        bad.append(f"KNOWN lists {pair[0]} -> {pair[1]}, which no longer happens: remove it")
    if "--list" in sys.argv:
        for i, names in enumerate(LAYERS):
            for n in names:
                print(f"{i} {n}: uses {', '.join(sorted(uses.get(n, ()))) or 'nothing of ours'}")
    for b in bad:
        print(b)
    print(f"check-layers: {len(files)} files, {len(bad)} problems, {len(seen_known)} known ones left")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
