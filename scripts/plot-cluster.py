#!/usr/bin/python3
"""Heatmaps of a roce-cluster report (docs/cluster.md): DIR/cluster-report.json ->
DIR/bandwidth.png, DIR/latency_p50.png, DIR/latency_p99.png (row: sender rank, column: receiver
rank; each cell's value written in it; pairs not measured grey, pairs that missed an SLA threshold
framed in red), and a summary of the worst pairs on stdout.

usage: scripts/plot-cluster.py DIR
"""
import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def as_array(m):
    return np.array([[np.nan if v is None else float(v) for v in row] for row in m])


def heatmap(values, title, unit, path, failed, fmt):
    n = values.shape[0]
    fig, ax = plt.subplots(figsize=(1.2 + 0.7 * max(n, 4), 0.9 + 0.6 * max(n, 4)))
    cmap = plt.get_cmap("viridis").copy()
    cmap.set_bad("#d0d0d0")
    im = ax.imshow(np.ma.masked_invalid(values), cmap=cmap)
    fig.colorbar(im, ax=ax, label=unit)
    ax.set_xticks(range(n))
    ax.set_yticks(range(n))
    ax.set_xlabel("receiver rank")
    ax.set_ylabel("sender rank")
    ax.set_title(title)
    if n <= 16:
        for i in range(n):
            for j in range(n):
                if not np.isnan(values[i, j]):
                    ax.text(j, i, fmt % values[i, j], ha="center", va="center", color="w", fontsize=7)
    for i, j in failed:
        ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="red", linewidth=2))
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = Path(sys.argv[1])
    rep = json.loads((out / "cluster-report.json").read_text())
    m = rep["matrix"]
    worst = rep["sla"]["worst_pairs"]
    failed = {metric: {(w["from"], w["to"]) for w in worst if w["metric"] == metric}
              for metric in ("bandwidth_gbps", "latency_p99_ns")}
    heatmap(as_array(m["bandwidth_gbps"]), "bandwidth, Gb/s (%s)" % rep["cluster"], "Gb/s", out / "bandwidth.png",
            failed["bandwidth_gbps"], "%.2f")
    for p in ("p50", "p99"):
        heatmap(as_array(m["latency_ns"][p]) / 1e3, "one-way latency %s, us (%s)" % (p, rep["cluster"]), "us",
                out / ("latency_%s.png" % p), failed["latency_p99_ns"] if p == "p99" else set(), "%.0f")
    print("%d ranks; SLA %s; %d pairs missed a threshold%s" % (
        rep["n_ranks"], rep["sla"]["verdict"], len(worst),
        "".join("\n  %d -> %d: %s %.4g (threshold %.4g)" % (w["from"], w["to"], w["metric"], w["value"], w["threshold"])
                for w in worst[:10])))


if __name__ == "__main__":
    main()
