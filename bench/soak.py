#!/usr/bin/python3
"""Soak run: the engine for a long time (default 10 minutes) with its HTTP exporter on; every few
seconds the process's resident memory, every mbuf pool's in-use count and the drop / loss counters
are sampled from /metrics. At the end: a CSV, a plot, and a verdict — resident memory and pools
flat after the warm-up, no drop or loss the config does not expect. Not a CI test (CI runs a
7-second smoke of it); docs/reliability.md#long-runs.

    bench/soak.py [--minutes 10] [--config configs/lab-incast-dcqcn.cfg] [--interval 5]
                  [--engine build/apps/roce-engine] [--out results/soak-<time>]

Exit status 0 when flat and clean, 1 when a check failed, 2 on a bad command line or when the
engine could not run.
"""
import argparse
import csv
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# counters that must not move in the steady state of a lossless config
DROP_COUNTERS = ("roce_port_rx_dropped_packets_total", "roce_flow_rx_lost_packets_total",
                 "roce_switch_rx_dropped_packets_total",
                 "roce_port_mbuf_alloc_failures_total")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def scrape(url):
    """{metric name: {labels text: value}}"""
    with urllib.request.urlopen(url, timeout=5) as r:
        text = r.read().decode()
    out = {}
    for line in text.splitlines():
        m = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)$", line)
        if m:
            out.setdefault(m.group(1), {})[m.group(2) or ""] = float(m.group(3))
    return out


def sample(metrics, t):
    pools = metrics.get("roce_mempool_in_use", {})
    row = {"t_s": round(t, 1), "rss_mib": metrics["process_resident_memory_bytes"][""] / 2**20,
           "mbufs_in_use": sum(pools.values()),
           "tx_packets": sum(metrics.get("roce_port_tx_packets_total", {}).values())}
    for name in DROP_COUNTERS:
        row[name] = sum(metrics.get(name, {}).values())
    for labels, v in pools.items():
        row["pool " + re.search(r'pool="([^"]*)"', labels).group(1)] = v
    return row


def third_means(values):
    n = max(1, len(values) // 3)
    return sum(values[:n]) / n, sum(values[-n:]) / n


def verdict(rows, warmup_s, rss_slack_mib, pool_slack):
    """The checks, as (name, passed, detail)."""
    steady = [r for r in rows if r["t_s"] >= warmup_s]
    if len(steady) < 3:
        return [("enough samples after the warm-up", False, "%d samples" % len(steady))]
    checks = []
    rss = [r["rss_mib"] for r in steady]
    first, last = third_means(rss)
    checks.append(("resident memory flat", last - first <= rss_slack_mib and max(rss) - min(rss) <= 4 * rss_slack_mib,
                   "first third %.1f MiB, last third %.1f MiB, range %.1f..%.1f" % (first, last, min(rss), max(rss))))
    mb = [r["mbufs_in_use"] for r in steady]
    first, last = third_means(mb)
    checks.append(("mbufs in use flat", last - first <= pool_slack,
                   "first third %.0f, last third %.0f, range %.0f..%.0f" % (first, last, min(mb), max(mb))))
    for name in DROP_COUNTERS:
        moved = steady[-1][name] - steady[0][name]
        checks.append(("%s still" % name, moved == 0, "%+.0f after the warm-up" % moved))
    sent = steady[-1]["tx_packets"] - steady[0]["tx_packets"]
    checks.append(("traffic kept flowing", sent > 0 and all(b["tx_packets"] > a["tx_packets"] for a, b in
                                                           zip(steady, steady[1:])),
                   "%.0f packets after the warm-up" % sent))
    return checks


def plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    t = [r["t_s"] for r in rows]
    fig, (a, b) = plt.subplots(2, 1, figsize=(9, 6), sharex=True)
    a.plot(t, [r["rss_mib"] for r in rows])
    a.set_ylabel("resident MiB")
    a.set_ylim(0, max(r["rss_mib"] for r in rows) * 1.15)
    for key in sorted(k for k in rows[-1] if k.startswith("pool ")):
        b.plot(t, [r.get(key, 0) for r in rows], label=key[5:])
    b.set_ylabel("mbufs in use")
    b.set_xlabel("seconds")
    b.legend(fontsize=7)
    fig.suptitle("roce-engine soak")
    fig.tight_layout()
    fig.savefig(path, dpi=90)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--config", default=str(ROOT / "configs" / "lab-incast-dcqcn.cfg"))
    ap.add_argument("--interval", type=float, default=5.0, help="seconds between samples")
    ap.add_argument("--warmup", type=float, default=None, help="seconds not judged (default: a tenth, <= 60)")
    ap.add_argument("--engine", default=os.environ.get("ROCE_ENGINE", str(ROOT / "build" / "apps" / "roce-engine")))
    ap.add_argument("--out", default=None)
    ap.add_argument("--rss-slack-mib", type=float, default=2.0)
    ap.add_argument("--pool-slack", type=float, default=512, help="mbufs (per-lcore caches and bursts in flight)")
    args = ap.parse_args()
    if args.minutes <= 0 or args.interval <= 0:
        ap.error("--minutes and --interval must be > 0")
    duration = args.minutes * 60
    warmup = args.warmup if args.warmup is not None else min(60.0, duration / 10)
    out = Path(args.out or ROOT / "results" / time.strftime("soak-%Y%m%d-%H%M%S"))
    out.mkdir(parents=True, exist_ok=True)
    config = Path(args.config).resolve()
    port = free_port()
    cmd = [args.engine, "-f", str(config), "-q", "-d", "%g" % duration, "-r", str(out / "report.json"),
           "--http", str(port), "--http-linger", "0"]
    print("soak: %s for %.1f min, samples every %g s -> %s" % (config.name, args.minutes, args.interval, out))
    log = open(out / "engine.log", "w")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=str(out))
    url = "http://127.0.0.1:%d/metrics" % port
    rows, t0 = [], None
    try:
        while proc.poll() is None:
            try:
                m = scrape(url)
            except (urllib.error.URLError, ConnectionError, socket.timeout):
                time.sleep(0.2)
                continue
            if m.get("roce_run_active", {}).get("") != 1:
                time.sleep(0.2)
                continue
            t = m["roce_run_elapsed_seconds"][""]
            t0 = t0 if t0 is not None else t
            rows.append(sample(m, t))
            print("soak: %6.0f s  rss %.1f MiB  mbufs in use %d  tx %d" % (
                t, rows[-1]["rss_mib"], rows[-1]["mbufs_in_use"], rows[-1]["tx_packets"]), flush=True)
            time.sleep(args.interval)
    except KeyboardInterrupt:
        proc.terminate()
    proc.wait()
    log.close()
    if proc.returncode != 0 or not rows:
        print("soak: the engine failed (exit status %s); see %s" % (proc.returncode, out / "engine.log"))
        return 2
    with open(out / "soak.csv", "w", newline="") as fh:
        keys = list(dict.fromkeys(k for r in rows for k in r))
        w = csv.DictWriter(fh, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    plot(rows, out / "soak.png")
    checks = verdict(rows, warmup, args.rss_slack_mib, args.pool_slack)
    for name, ok, detail in checks:
        print("soak: %-4s %-42s %s" % ("ok" if ok else "FAIL", name, detail))
    ok = all(c[1] for c in checks)
    print("soak: %s (%d samples; %s, %s)" % ("PASS" if ok else "FAIL", len(rows), out / "soak.csv", out / "soak.png"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
