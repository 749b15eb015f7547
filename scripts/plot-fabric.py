#!/usr/bin/python3
"""Plots a virtual-fabric run (roce-engine with a `fabric` group) and prints its summary.

    scripts/plot-fabric.py RESULTS_FOLDER [--quiet]

The folder holds report.json and, when the run wrote one, timeseries.csv (scripts/lab.sh runs a
fabric config so). Writes, in the same folder:

  topology.png  the fabric by tier (NICs at the bottom, then leaves, spines, cores): each link's
                width and colour by its busier direction's mean utilisation, a link whose sender
                was paused by PFC for more than 5 % of the run dashed, and a link that went down
                (fabric.events) crossed out
  ecmp.png      per ECMP group (switch, destination subnet), the bytes each member carried, with
                the group's max/mean ratio (MMR) of bytes and of flows, and Jain's index
  links.png     per tier (host, leaf-spine, spine-core), every link direction's rate over time,
                the time its sender was paused per interval and the sending switch port's queue
                at each interval's end (from timeseries.csv)
  summary.txt   the text summary, also printed

docs/fabric.md ("Plots") explains how to read them.

Exit status: 0 when report.json had a fabric and every PNG was written (links.png needs
timeseries.csv); 1 when an input is missing or not what the engine writes; 2 on a bad command
line.
"""
import argparse
import csv
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

TIER_Y = {"host": 0, "leaf": 1, "spine": 2, "core": 3}


def load_report(folder):
    path = os.path.join(folder, "report.json")
    try:
        with open(path) as f:
            rep = json.load(f)
    except (OSError, ValueError) as e:
        raise SystemExit("plot-fabric: %s: %s" % (path, e))
    if "fabric" not in rep:
        print("plot-fabric: %s has no fabric section (not a fabric run)" % path, file=sys.stderr)
        sys.exit(1)
    return rep


def positions(fab):
    """x, y of every switch and NIC: a row per tier, each row spread over the width."""
    rows = {}
    for s in fab["switches"]:
        rows.setdefault(TIER_Y.get(s["tier"], 1), []).append(s["name"])
    rows[0] = [n["name"] for n in fab["nics"]]
    pos = {}
    for y, names in rows.items():
        for i, name in enumerate(names):
            pos[name] = ((i + 1) / (len(names) + 1), y)
    return pos


def busier(link):
    return max(link["a_to_b"]["utilization"], link["b_to_a"]["utilization"])


def paused_share(link, duration):
    if duration <= 0:
        return 0.0
    return max(sum(link[d]["paused_ns"]) for d in ("a_to_b", "b_to_a")) / 1e9 / duration


def plot_topology(rep, out):
    fab = rep["fabric"]
    pos = positions(fab)
    down = {e["link"] for e in fab.get("events", []) if e.get("applied") and e["state"] == "down"}
    cmap = plt.get_cmap("viridis")
    fig, ax = plt.subplots(figsize=(11, 6))
    for l in fab["links"]:
        (x1, y1), (x2, y2) = pos[l["a"]], pos[l["b"]]
        u = min(busier(l), 1.0)
        style = "--" if paused_share(l, rep["duration_s"]) > 0.05 else "-"
        ax.plot([x1, x2], [y1, y2], style, color=cmap(u), linewidth=0.8 + 5 * u, zorder=1)
        if l["name"] in down:
            ax.plot((x1 + x2) / 2, (y1 + y2) / 2, "x", color="red", markersize=12, mew=3, zorder=3)
    for name, (x, y) in pos.items():
        ax.scatter([x], [y], s=260 if y else 90, color="#dddddd" if y else "#ffd28a", edgecolors="black", zorder=2)
        ax.annotate(name, (x, y), ha="center", va="center", fontsize=7, zorder=4)
    sm = plt.cm.ScalarMappable(cmap=cmap, norm=plt.Normalize(0, 1))
    fig.colorbar(sm, ax=ax, label="utilisation (busier direction, run mean)")
    ax.set_yticks(sorted({y for _, y in pos.values()}))
    ax.set_yticklabels([t for t, y in sorted(TIER_Y.items(), key=lambda i: i[1]) if y in {p[1] for p in pos.values()}])
    ax.set_xticks([])
    ax.set_title("%s fabric: link width and colour by utilisation; dashed: paused > 5 %%; x: went down" % fab["kind"])
    fig.tight_layout()
    fig.savefig(os.path.join(out, "topology.png"), dpi=110)
    plt.close(fig)


def plot_ecmp(rep, out):
    groups = rep["fabric"]["ecmp_groups"]
    fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(groups) + 2), 4.5))
    width = 0.8
    x = 0
    ticks, labels = [], []
    for g in groups:
        n = len(g["members"])
        for m, (member, b) in enumerate(zip(g["members"], g["bytes"])):
            ax.bar(x + m * width / n, b / 1e6, width / n, color="C%d" % (m % 10))
            ax.annotate(member, (x + m * width / n, b / 1e6), ha="center", va="bottom", fontsize=6, rotation=90)
        ticks.append(x + width / 2 - width / (2 * n))
        labels.append("%s\n%s\nMMR %.2f (flows %.2f) JFI %.2f" % (g["switch"], g["prefix"], g["mmr"], g["mmr_flows"],
                                                                  g["jfi"]))
        x += 1
    ax.set_xticks(ticks)
    ax.set_xticklabels(labels, fontsize=6)
    ax.set_ylabel("MB carried")
    ax.set_title("ECMP groups: bytes per member")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "ecmp.png"), dpi=110)
    plt.close(fig)


def read_links(folder):
    path = os.path.join(folder, "timeseries.csv")
    try:
        with open(path) as f:
            rows = [r for r in csv.DictReader(f) if r.get("kind") == "link"]
    except OSError:
        return None
    return rows


def plot_links(rep, rows, out):
    tier_of = {l["name"]: l["tier"] for l in rep["fabric"]["links"]}
    tiers = [t for t in ("host", "leaf", "spine") if t in tier_of.values()]
    fig, axes = plt.subplots(3, len(tiers), figsize=(5 * len(tiers), 8.5), squeeze=False, sharex=True)
    series = {}
    for r in rows:  # queue_kb: None where a NIC sends (its queue is not a switch's)
        q = r.get("queue_kb")
        series.setdefault(r["name"], []).append((float(r["time_s"]), float(r["tx_gbps"] or 0),
                                                 float(r["paused_ms"] or 0), float(q) if q else None))
    for i, tier in enumerate(tiers):
        for name, pts in sorted(series.items()):
            if tier_of.get(name.split(":", 1)[0]) != tier:
                continue
            t = [p[0] for p in pts]
            axes[0][i].plot(t, [p[1] for p in pts], linewidth=0.8, label=name.split(":", 1)[1])
            axes[1][i].plot(t, [p[2] for p in pts], linewidth=0.8)
            if any(p[3] is not None for p in pts):
                axes[2][i].plot(t, [p[3] for p in pts], linewidth=0.8)
        axes[0][i].set_title({"host": "NIC links", "leaf": "leaf-spine links", "spine": "spine-core links"}[tier])
        axes[0][i].set_ylabel("Gb/s")
        axes[1][i].set_ylabel("sender paused, ms per interval")
        axes[2][i].set_ylabel("sending switch port queued, KB")
        axes[2][i].set_xlabel("s")
        if len(series) <= 24:
            axes[0][i].legend(fontsize=5, ncol=2)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "links.png"), dpi=110)
    plt.close(fig)


def summary(rep):
    fab = rep["fabric"]
    lines = ["%s fabric, %d switches, %d NICs, %d links, %.2f s" % (fab["kind"], len(fab["switches"]), len(fab["nics"]),
                                                                  len(fab["links"]), rep["duration_s"])]
    busiest = sorted(fab["links"], key=busier, reverse=True)[:5]
    lines.append("busiest links: " + ", ".join("%s %.0f %%" % (l["name"], 100 * busier(l)) for l in busiest))
    if fab["ecmp_groups"]:
        lines.append("ECMP groups: %d, worst MMR %.2f (of flows %.2f), lowest JFI %.3f; the flows' JFI %.3f" % (
            len(fab["ecmp_groups"]), max(g["mmr"] for g in fab["ecmp_groups"]),
            max(g["mmr_flows"] for g in fab["ecmp_groups"]), min(g["jfi"] for g in fab["ecmp_groups"]), fab["jfi"]))
    paused = [l for l in fab["links"] if paused_share(l, rep["duration_s"]) > 0.05]
    lines.append("links paused > 5 %% of the run: %d%s" % (len(paused), (" (" + ", ".join(l["name"] for l in paused[:6])
                                                                    + (", ..." if len(paused) > 6 else "") + ")") if paused else ""))
    drops = sum(l[d]["dropped"] or 0 for l in fab["links"] for d in ("a_to_b", "b_to_a"))
    lines.append("frames dropped by switches: %d" % drops)
    lines.append("deadlocks: %d" % fab["deadlocks_found"])
    for e in fab.get("events", []):
        if e.get("applied"):
            lines.append("link %s %s at %.3f s: %d frames lost over %.1f ms, flows hit: %s" % (
                e["link"], e["state"], e["applied_s"], e["frames_lost"], 1e3 * e["loss_duration_s"],
                ", ".join(e["flows_hit"]) or "none"))
    m = fab.get("machine")
    if m:
        lines.append("machine: worst link time lost to the lcore %.2f %% (%s)%s" % (
            100 * m["worst_cpu_lost_share"], m["worst_port"] or "-",
            ": MACHINE-LIMITED, read rates and queues with it" if m["machine_limited"] else ""))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folder")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args()
    rep = load_report(a.folder)
    plot_topology(rep, a.folder)
    plot_ecmp(rep, a.folder)
    rows = read_links(a.folder)
    text = summary(rep)
    with open(os.path.join(a.folder, "summary.txt"), "w") as f:
        f.write(text)
    if not a.quiet:
        print(text, end="")
    if not rows:
        print("plot-fabric: no link rows in %s/timeseries.csv: links.png not written" % a.folder, file=sys.stderr)
        return 1
    plot_links(rep, rows, a.folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
