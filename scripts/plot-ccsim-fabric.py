#!/usr/bin/python3
"""Plots a roce-ccsim fabric run (scenario = "fabric") and prints its summary.

    build/apps/roce-ccsim -s DIR/summary.json -c DIR/links.csv SCENARIO.cfg
    scripts/plot-ccsim-fabric.py DIR [--quiet]

Reads DIR/summary.json and, when present, DIR/links.csv; writes in DIR:

  links.png    per tier (NIC links, leaf-spine, spine-core) over time: the links' utilisation
               (median, 95th percentile and busiest direction per sample), the deepest sending
               switch port's queue, and the share of directions whose sender was paused
  ecmp.png     the ECMP groups' MMR of bytes against what their flows' hashes give (MMR of
               flows), one point per group, and the bytes per member of the five worst groups
  flows.png    the CDF of the flows' goodput in the window and, with sized flows, HPCC's
               slowdown table: p50 / p95 / p99 against each 5 % bucket's largest size
  summary.txt  the text summary, also printed

docs/ccsim.md ("Fabric output") explains the figures. Exit status: 0 when every PNG was written
(links.png needs links.csv), 1 when an input is missing or not a fabric summary, 2 on a bad
command line.
"""
import argparse
import csv
import json
import os
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

TIERS = [("host", "NIC links"), ("leaf", "leaf-spine links"), ("spine", "spine-core links")]


def load(folder):
    path = os.path.join(folder, "summary.json")
    try:
        with open(path) as f:
            s = json.load(f)
    except (OSError, ValueError) as e:
        print("plot-ccsim-fabric: %s: %s" % (path, e), file=sys.stderr)
        sys.exit(1)
    if s.get("type") != "fabric":
        print("plot-ccsim-fabric: %s is not a fabric run's summary (type %r)" % (path, s.get("type")), file=sys.stderr)
        sys.exit(1)
    return s


def read_csv(folder):
    path = os.path.join(folder, "links.csv")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return list(csv.DictReader(f))


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, int(round(p / 100 * len(xs) + 0.5)) - 1))] if xs else 0


def plot_links(s, rows, out):
    tier_of = {l["name"]: l["tier"] for l in s["fabric"]["links"]}
    rate = {l["name"]: l["gbps"] for l in s["fabric"]["links"]}
    tiers = [t for t in TIERS if t[0] in tier_of.values()]
    by = {}
    for r in rows:
        t = float(r["time_us"])
        d = by.setdefault(tier_of[r["link"]], {}).setdefault(t, [])
        d.append((float(r["gbps"]) / rate[r["link"]], int(r["queue_bytes"]), int(r["paused_classes"]) != 0))
    fig, axes = plt.subplots(3, len(tiers), figsize=(5 * len(tiers), 8), squeeze=False, sharex=True)
    for i, (tier, title) in enumerate(tiers):
        times = sorted(by.get(tier, {}))
        pts = [by[tier][t] for t in times]
        axes[0][i].plot(times, [pct([p[0] for p in x], 50) for x in pts], label="median")
        axes[0][i].plot(times, [pct([p[0] for p in x], 95) for x in pts], label="p95")
        axes[0][i].plot(times, [max(p[0] for p in x) for x in pts], label="busiest", linewidth=0.7)
        axes[0][i].set_ylim(0, 1.05)
        axes[0][i].set_title(title)
        axes[0][i].set_ylabel("utilisation")
        axes[0][i].legend(fontsize=7)
        axes[1][i].plot(times, [max(p[1] for p in x) / 1e3 for x in pts])
        axes[1][i].set_ylabel("deepest sending switch port, KB")
        axes[2][i].plot(times, [100 * sum(p[2] for p in x) / len(x) for x in pts])
        axes[2][i].set_ylabel("directions paused, %")
        axes[2][i].set_xlabel("µs")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "links.png"), dpi=110)
    plt.close(fig)


def plot_ecmp(s, out):
    groups = s["fabric"]["ecmp_groups"]
    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4.5))
    if groups:
        a.scatter([g["mmr_flows"] for g in groups], [g["mmr"] for g in groups], s=12)
        top = max(max(g["mmr"] for g in groups), max(g["mmr_flows"] for g in groups), 1) * 1.05
        a.plot([0, top], [0, top], color="grey", linewidth=0.7)
    a.set_xlabel("MMR of flows (what the hash gives)")
    a.set_ylabel("MMR of bytes (what the members carried)")
    a.set_title("ECMP groups (%d)" % len(groups))
    worst = sorted(groups, key=lambda g: -g["mmr"])[:5]
    x = 0
    for g in worst:
        n = len(g["members"])
        for m, v in enumerate(g["bytes"]):
            b.bar(x + m / (n + 1), v / 1e6, 1 / (n + 1), color="C%d" % (m % 10))
        b.annotate("%s\nMMR %.2f" % (g["switch"], g["mmr"]), (x + 0.4, 0), ha="center", va="top", fontsize=7,
                   xytext=(0, -4), textcoords="offset points")
        x += 1.2
    b.set_xticks([])
    b.set_ylabel("MB per member")
    b.set_title("the five worst groups")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "ecmp.png"), dpi=110)
    plt.close(fig)


def plot_flows(s, out):
    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4.5))
    g = sorted(f["goodput_gbps"] for f in s["flows"])
    if g:
        a.plot(g, [(i + 1) / len(g) for i in range(len(g))])
    a.set_xlabel("goodput in the window, Gb/s")
    a.set_ylabel("share of flows")
    a.set_title("flows' goodput, JFI %.3f" % s["fabric"]["jfi"])
    for t in s["traffic"]:
        rows = t.get("fct", {}).get("buckets", [])
        if rows:
            xs = [r["max_bytes"] for r in rows]
            for p, style in (("p50", "-"), ("p95", "--"), ("p99", ":")):
                b.plot(xs, [r["slowdown"][p] for r in rows], style, marker=".", label="%s %s" % (t["name"], p))
    b.set_xscale("log")
    b.set_yscale("log")
    b.set_xlabel("flow size, bytes (each 5 % bucket's largest)")
    b.set_ylabel("slowdown (FCT / alone)")
    b.set_title("flow completion: HPCC's table")
    if b.get_legend_handles_labels()[0]:
        b.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "flows.png"), dpi=110)
    plt.close(fig)


def summary(s):
    fab, t = s["fabric"], s["totals"]
    lines = ["%s fabric: %d switches, %d NICs, %d links; %.0f us simulated, %d events" % (
        fab["kind"], fab["switches"] if isinstance(fab["switches"], int) else len(fab["switches"]), fab["nics"],
        fab["links"] if isinstance(fab["links"], int) else len(fab["links"]), s["duration_us"], s["events"])]
    lines.append("goodput %.1f Gb/s over %d flows, JFI %.3f" % (fab["goodput_gbps"], t["flows"], fab["jfi"]))
    if fab["ecmp_groups"]:
        mmr = [g["mmr"] for g in fab["ecmp_groups"]]
        lines.append("ECMP groups: %d, MMR of bytes median %.2f, worst %.2f" % (len(mmr), statistics.median(mmr), max(mmr)))
    util = lambda l: max(l["a_to_b"]["utilization"]["mean"], l["b_to_a"]["utilization"]["mean"])
    busiest = sorted(fab["links"], key=util, reverse=True)[:5]
    lines.append("busiest links: " + ", ".join("%s %.0f %%" % (l["name"], 100 * util(l)) for l in busiest))
    lines.append("dropped %d, out of order %d, retransmitted %d, PFC pauses %d, ECN-marked %d" % (
        t["dropped"], t["out_of_order"], t["retransmitted"], t["pauses"], t["ce_marked"]))
    for tr in s["traffic"]:
        if "fct" in tr:
            sd = tr["fct"]["slowdown"]
            lines.append("%s: %d of %d sized flows completed, slowdown p50 %.2f p95 %.2f p99 %.2f" % (
                tr["name"], tr["completed"], tr["sized_flows"], sd["p50"], sd["p95"], sd["p99"]))
    for e in fab.get("events", []):
        lines.append("link %s %s at %.1f us: %d frames lost over %.1f us, %d flows hit" % (
            e["link"], e["state"], e["at_us"], e["frames_lost"], e["loss_duration_us"], e["flows_hit"]))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folder")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args()
    s = load(a.folder)
    plot_ecmp(s, a.folder)
    plot_flows(s, a.folder)
    text = summary(s)
    with open(os.path.join(a.folder, "summary.txt"), "w") as f:
        f.write(text)
    if not a.quiet:
        print(text, end="")
    rows = read_csv(a.folder)
    if not rows:
        print("plot-ccsim-fabric: no %s/links.csv: links.png not written" % a.folder, file=sys.stderr)
        return 1
    plot_links(s, rows, a.folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
