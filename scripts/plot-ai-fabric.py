#!/usr/bin/python3
"""Graphs of a roce-suite AI-fabric report (docs/ai-fabric.md): DIR/report.json ->
DIR/topology.png (the fabric's switches, hosts and links, tier by tier, each link labelled with
its rate) and every graph the report's ai_fabric.graphs lists (kind "lines": a line per series;
"hist": a step histogram per series; "bars": one bar per x, labelled with the graph's labels).

usage: scripts/plot-ai-fabric.py DIR
"""
import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

TIER_Y = {"host": 0, "leaf": 1, "spine": 2, "core": 3}


def topology(topo, path):
    """Hosts at the bottom, then leaves, spines, cores; a line per link."""
    tiers = {"host": [n["name"] for n in topo["nic_list"]]}
    for s in topo["switches"]:
        tiers.setdefault(s["tier"], []).append(s["name"])
    pos = {}
    width = max(len(v) for v in tiers.values())
    for tier, names in tiers.items():
        for i, name in enumerate(names):
            pos[name] = ((i + 0.5) * width / len(names), TIER_Y.get(tier, 4))
    fig, ax = plt.subplots(figsize=(max(6, 0.8 * width), 4))
    for link in topo["links"]:
        a, b = pos.get(link["a"]), pos.get(link["b"])
        if a and b:
            ax.plot([a[0], b[0]], [a[1], b[1]], color="#888888", lw=1, zorder=1)
    for name, (x, y) in pos.items():
        host = y == 0
        ax.scatter([x], [y], s=250 if host else 500, marker="o" if host else "s",
                   color="#4c72b0" if host else "#dd8452", zorder=2)
        ax.annotate(name, (x, y), textcoords="offset points", xytext=(0, -16 if host else 12), ha="center",
                    fontsize=7)
    rates = sorted({(l["tier"], l["gbps"]) for l in topo["links"]})
    ax.set_title("%s: %d hosts, %d switches; links %s" % (
        topo["kind"], topo["hosts"], len(topo["switches"]),
        ", ".join("%s %g Gb/s" % r for r in rates)), fontsize=9)
    ax.set_axis_off()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def graph(g, path):
    fig, ax = plt.subplots(figsize=(7, 4))
    kind = g["kind"]
    for s in g["series"]:
        if kind == "bars":
            ax.bar(s["x"], s["y"], label=s["label"], color="#4c72b0")
            labels = g.get("labels") or []
            if labels:
                ax.set_xticks(s["x"][:len(labels)])
                ax.set_xticklabels(labels[:len(s["x"])], rotation=30, ha="right", fontsize=7)
            for x, y in zip(s["x"], s["y"]):
                ax.annotate("%.3g" % y, (x, y), ha="center", va="bottom", fontsize=7)
        elif kind == "hist":
            ax.step(s["x"], s["y"], where="mid", label=s["label"])
        else:
            ax.plot(s["x"], s["y"], marker="o" if len(s["x"]) < 30 else None, label=s["label"])
    ax.set_title(g["title"])
    ax.set_xlabel(g["xlabel"])
    ax.set_ylabel(g["ylabel"])
    if kind != "bars" and len(g["series"]) > 1:
        ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = Path(sys.argv[1])
    rep = json.loads((out / "report.json").read_text())
    a = rep["ai_fabric"]
    drawn = 0
    if a["sections"]["2_topology"]["nic_list"]:   # (none: every category went across a cluster)
        topology(a["sections"]["2_topology"], out / "topology.png")
        drawn = 1
    for g in a["graphs"]:
        if any(s["x"] for s in g["series"]):
            graph(g, out / g["file"])
            drawn += 1
    print("%d graphs in %s" % (drawn, out))


if __name__ == "__main__":
    main()
