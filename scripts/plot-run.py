#!/usr/bin/python3
"""PNG plots of a run's time series (run.timeseries, docs/monitoring.md).

    scripts/plot-run.py TIMESERIES.csv [-o OUT.png] [--title TEXT]

Four panels against time: each port's TX and RX rate (Gb/s) with each flow group's goodput and
mean congestion-control rate; CNPs received per interval (ports) and per flow group; PFC frames
received and time paused per interval (ports); one-way latency p50 and p99 per port. Panels
without data say so.
"""
import argparse
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def series(rows, kind, field):
    out = defaultdict(lambda: ([], []))
    for r in rows:
        if r["kind"] == kind and r[field] not in ("", None):
            out[r["name"]][0].append(float(r["time_s"]))
            out[r["name"]][1].append(float(r[field]))
    return out


def panel(ax, curves, ylabel):
    drawn = False
    for label, (x, y) in curves:
        if x:
            ax.step(x, y, where="post", label=label)
            drawn = True
    if drawn:
        ax.legend(fontsize=7, ncol=4)
    else:
        ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv")
    ap.add_argument("-o", "--output")
    ap.add_argument("--title")
    a = ap.parse_args()
    try:
        rows = list(csv.DictReader(open(a.csv)))
    except OSError as e:
        print("plot-run: %s" % e, file=sys.stderr)
        return 1
    if not rows or "kind" not in rows[0]:
        print("plot-run: %s: no time-series rows (run.timeseries writes them)" % a.csv, file=sys.stderr)
        return 1
    fig, axes = plt.subplots(4, 1, figsize=(11, 12), sharex=True)
    rates = []
    for name, s in series(rows, "port", "tx_gbps").items():
        rates.append(("%s tx" % name, s))
    for name, s in series(rows, "port", "rx_gbps").items():
        rates.append(("%s rx" % name, s))
    for name, s in series(rows, "flow", "goodput_gbps").items():
        rates.append(("%s goodput" % name, s))
    for name, s in series(rows, "flow", "cc_rate_gbps").items():
        rates.append(("%s cc rate/QP" % name, s))
    panel(axes[0], rates, "Gb/s")
    panel(axes[1], [("%s CNPs rx" % n, s) for n, s in series(rows, "port", "cnp_rx").items()] +
          [("%s CNPs" % n, s) for n, s in series(rows, "flow", "cnp_rx").items()], "CNPs per interval")
    panel(axes[2], [("%s PFC rx" % n, s) for n, s in series(rows, "port", "pfc_rx").items()] +
          [("%s paused ms" % n, s) for n, s in series(rows, "port", "paused_ms").items()], "PFC frames / paused ms")
    panel(axes[3], [("%s p50" % n, s) for n, s in series(rows, "port", "lat_p50_ns").items()] +
          [("%s p99" % n, s) for n, s in series(rows, "port", "lat_p99_ns").items()], "one-way latency ns")
    axes[3].set_xlabel("time s (since the flows started)")
    fig.suptitle(a.title or a.csv)
    fig.tight_layout()
    out = a.output or a.csv.rsplit(".", 1)[0] + ".png"
    fig.savefig(out, dpi=90)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
