#!/usr/bin/python3
"""Plots roce-ccsim's CSV as a PNG (matplotlib, Debian's python3-matplotlib).

    scripts/plot-ccsim.py samples.csv [-o plot.png] [--title TEXT] [--flows 0,3,5]

Network samples (time_us,flow,rate_gbps,target_gbps,alpha,queue_bytes,cnp_rx,paused): per-flow
rate (target dotted), the depth of each egress queue the flows use, CNPs received per sample
interval, and how many senders PFC holds paused. An rp_replay trace
(time_us,event,rate_gbps,target_gbps,alpha): rate and target as steps, α on its own axis, a tick
at each CNP. docs/ccsim.md describes both formats.
"""
import argparse
import collections
import csv
import sys

NETWORK = ["time_us", "flow", "rate_gbps", "target_gbps", "alpha", "queue_bytes", "cnp_rx", "paused"]
REPLAY = ["time_us", "event", "rate_gbps", "target_gbps", "alpha"]


def load(path):
    with open(path, newline="") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        rows = list(reader)
    if header == NETWORK:
        return "network", rows
    if header == REPLAY:
        return "replay", rows
    sys.exit("plot-ccsim: %s: not a roce-ccsim CSV (header %r)" % (path, header))


def network_series(rows, only):
    """Per flow: times, rates, targets, queue depths, CNPs per interval; paused senders per time."""
    flows = collections.defaultdict(lambda: collections.defaultdict(list))
    paused = collections.OrderedDict()
    for r in rows:
        t, flow = float(r[0]), int(r[1])
        paused[t] = paused.get(t, 0) + int(r[7])
        if only is not None and flow not in only:
            continue
        s = flows[flow]
        s["t"].append(t)
        s["rate"].append(float(r[2]))
        s["target"].append(float(r[3]))
        s["queue"].append(int(r[5]) / 1000.0)
        s["cnp"].append(int(r[6]))
    for s in flows.values():
        s["cnp_step"] = [b - a for a, b in zip([0] + s["cnp"][:-1], s["cnp"])]
    return flows, paused


def plot_network(plt, rows, args):
    flows, paused = network_series(rows, args.flows)
    fig, ax = plt.subplots(4, 1, sharex=True, figsize=(11, 10), gridspec_kw={"height_ratios": [3, 2, 1.4, 1]})
    queues_drawn = []
    for flow, s in sorted(flows.items()):
        line, = ax[0].plot(s["t"], s["rate"], lw=1, label="flow %d" % flow)
        ax[0].plot(s["t"], s["target"], lw=0.6, ls=":", color=line.get_color())
        # flows sharing a queue report the same depth: draw each queue once
        if s["queue"] not in queues_drawn:
            queues_drawn.append(s["queue"])
            ax[1].plot(s["t"], s["queue"], lw=1, color=line.get_color(), label="queue of flow %d" % flow)
        ax[2].step(s["t"], s["cnp_step"], where="post", lw=0.8, color=line.get_color())
    ax[3].step(list(paused), list(paused.values()), where="post", lw=0.8, color="black")
    ax[0].set_ylabel("rate Gb/s\n(target dotted)")
    ax[1].set_ylabel("egress queue KB")
    ax[2].set_ylabel("CNPs per sample")
    ax[3].set_ylabel("senders paused")
    ax[3].set_xlabel("time µs")
    ax[0].legend(loc="upper right", fontsize="small", ncol=4)
    for a in ax:
        a.grid(alpha=0.3)
    return fig


def plot_replay(plt, rows, args):
    t = [float(r[0]) for r in rows]
    fig, ax = plt.subplots(figsize=(11, 5))
    ax.step(t, [float(r[2]) for r in rows], where="post", label="rate")
    ax.step(t, [float(r[3]) for r in rows], where="post", ls="--", label="target")
    for r in rows:
        if r[1] == "cnp":
            ax.axvline(float(r[0]), color="red", lw=0.5, alpha=0.6)
    ax.set_xlabel("time µs (red: CNPs)")
    ax.set_ylabel("Gb/s")
    a2 = ax.twinx()
    a2.step(t, [float(r[4]) for r in rows], where="post", color="gray", lw=0.8, label="α")
    a2.set_ylabel("α")
    a2.set_ylim(0, 1.05)
    ax.legend(loc="lower right")
    ax.grid(alpha=0.3)
    return fig


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("csv")
    p.add_argument("-o", "--output", help="PNG to write (default: the CSV's name with .png)")
    p.add_argument("--title")
    p.add_argument("--flows", help="comma-separated flow numbers to draw (default: all)")
    args = p.parse_args()
    args.flows = None if not args.flows else {int(x) for x in args.flows.split(",")}
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("plot-ccsim: matplotlib is missing (apt-get install python3-matplotlib)")
    kind, rows = load(args.csv)
    if not rows:
        sys.exit("plot-ccsim: %s: no rows" % args.csv)
    fig = plot_network(plt, rows, args) if kind == "network" else plot_replay(plt, rows, args)
    fig.suptitle(args.title or args.csv)
    fig.tight_layout()
    out = args.output or (args.csv.rsplit(".", 1)[0] + ".png")
    fig.savefig(out, dpi=110)
    print(out)


if __name__ == "__main__":
    main()
