#!/usr/bin/python3
"""Plots a virtual-lab run (roce-engine with a switch) and prints its summary.

    scripts/plot-lab.py RESULTS_FOLDER [--quiet]

The folder holds what the engine wrote there (scripts/lab.sh runs it in the folder):
cc-trace.csv (run.cc_trace), switch-queues.csv (switch.trace) and report.json. Writes, in the
same folder:

  rates.png    per-flow DCQCN rate (solid) and target (dotted) over time
  queues.png   egress queue depth per switch (port, class), and the shared buffer in use
  cnps.png     CNPs each flow received per bin, ECN marks per bin at the bottleneck queue
  pauses.png   XOFF in force toward each switch port (ingress side), egress paused by PFC
  summary.png  the four together, on one time axis
  summary.txt  the text summary, also printed

Time is in ms from the first row of cc-trace.csv (both traces use the engine's time base).
Per-bin counts are differences of the cumulative columns (cnps, ecn_marked, dropped) at the bin
edges; the bin is a multiple of the trace interval chosen for about 500 bins per run.
docs/virtual-lab.md explains how to read each plot.

Exit status: 0 when all three inputs were usable and every PNG was written; 1 when an input is
missing, empty or not what the engine writes (the plots that do not need it are still written);
2 on a bad command line.
"""
import argparse
import csv
import json
import math
import os
import re
import sys

CC_COLUMNS = {"time_ns": "int", "qp": "int", "rate_gbps": "float", "target_gbps": "float", "cnps": "int"}
SW_COLUMNS = {"time_ns": "int", "port": "str", "tc": "int", "queue_bytes": "int", "buffer_bytes": "int", "xoff": "hex",
              "paused": "hex", "dropped": "int", "ecn_marked": "int"}


LAB_END = [None]  # the right end of every time axis, ms (set from the data)


class InputError(Exception):
    pass


def note(msg):
    print("plot-lab: " + msg, file=sys.stderr)


# ---- input -------------------------------------------------------------------------------------

def read_table(path, spec, produced_by):
    """The columns of a CSV named in spec ({name: "int" | "float" | "str" | "hex"}) as numpy arrays.
    Fast path: numpy's C parser, one pass per kind. When a row does not parse (a cut last line,
    a stray field), the slower path keeps the rows with the right field count and says so."""
    if not os.path.exists(path):
        raise InputError("%s: missing (%s)" % (path, produced_by))
    with open(path, newline="") as f:
        first, second = f.readline(), f.readline()
    header = first.strip().split(",") if first.strip() else None
    if not header:
        raise InputError("%s: empty file, not even a header (%s)" % (path, produced_by))
    idx = {name: i for i, name in enumerate(header)}
    lacking = [c for c in spec if c not in idx]
    if lacking:
        raise InputError("%s: not the engine's trace: no column %s (header: %s)"
                         % (path, ", ".join(lacking), ",".join(header)))
    if not second.strip():
        raise InputError("%s: the header only, no rows (did the run send anything?)" % path)
    try:
        out = {}
        for kind, dtype in (("int", np.int64), ("float", np.float64), ("text", str)):
            names = [n for n, k in spec.items() if k == kind or (kind == "text" and k in ("str", "hex"))]
            if names:
                arr = np.loadtxt(path, delimiter=",", skiprows=1, usecols=[idx[n] for n in names], dtype=dtype,
                                 ndmin=2, comments=None)
                for j, n in enumerate(names):
                    out[n] = arr[:, j]
        for n, k in spec.items():
            if k == "hex":
                out[n] = as_hex(out[n])
        return out
    except ValueError:
        pass
    cols = read_columns_slowly(path, header, list(spec))
    conv = {"int": as_int, "float": as_float, "str": np.array, "hex": as_hex}
    return {n: conv[k](cols[n]) for n, k in spec.items()}


def read_columns_slowly(path, header, need):
    """The columns `need` as lists of strings, skipping rows with the wrong field count."""
    with open(path, newline="") as f:
        f.readline()
        rows = [r for r in csv.reader(f) if r]
    width = len(header)
    good = [r for r in rows if len(r) == width]
    if len(good) != len(rows):
        note("%s: %d row(s) with the wrong number of fields skipped (a cut last line?)" % (path, len(rows) - len(good)))
    if not good:
        raise InputError("%s: no complete row" % path)
    idx = {name: i for i, name in enumerate(header)}
    return {c: [r[idx[c]] for r in good] for c in need}


def as_int(col):
    return np.fromiter(map(int, col), dtype=np.int64, count=len(col))


def as_float(col):
    return np.fromiter(map(float, col), dtype=np.float64, count=len(col))


def as_hex(col):
    """'0x08' strings -> ints, converting each distinct value once."""
    values, inverse = np.unique(np.asarray(col), return_inverse=True)
    return np.array([int(v, 16) for v in values], dtype=np.int64)[inverse]


def load_cc(path):
    c = read_table(path, CC_COLUMNS, "run.cc_trace in the config")
    t_ns, qp, rate, target, cnps = c["time_ns"], c["qp"], c["rate_gbps"], c["target_gbps"], c["cnps"]
    t0 = int(t_ns.min())
    flows = {}
    for q in np.unique(qp):
        sel = np.nonzero(qp == q)[0]
        sel = sel[np.argsort(t_ns[sel], kind="stable")]
        flows[int(q)] = {"t": (t_ns[sel] - t0) / 1e6, "rate": rate[sel], "target": target[sel], "cnps": cnps[sel]}
    return {"t0": t0, "flows": flows, "rows": len(qp), "end": float((t_ns.max() - t0) / 1e6)}


def load_sw(path):
    c = read_table(path, SW_COLUMNS, "switch.trace in the config")
    t_ns, ports_all, tc = c["time_ns"], c["port"], c["tc"]
    queue, used, xoff, paused = c["queue_bytes"], c["buffer_bytes"], c["xoff"], c["paused"]
    dropped, marked = c["dropped"], c["ecn_marked"]
    order = np.argsort(t_ns, kind="stable")
    names = sorted((str(p) for p in np.unique(ports_all)), key=natural_key)
    queues, ports = {}, {}
    for p in names:
        sel_p = order[ports_all[order] == p]
        for k in np.unique(tc[sel_p]):
            sel = sel_p[tc[sel_p] == k]
            queues[(p, int(k))] = {"t_ns": t_ns[sel], "queue": queue[sel], "marked": marked[sel]}
        # the masks and the drop counter are the port's: one sample per trace tick
        _, first = np.unique(t_ns[sel_p], return_index=True)
        sel = sel_p[first]
        ports[p] = {"t_ns": t_ns[sel], "xoff": xoff[sel], "paused": paused[sel], "dropped": dropped[sel]}
    _, first = np.unique(t_ns[order], return_index=True)
    sel = order[first]
    return {"ports": ports, "queues": queues, "names": names, "buffer": {"t_ns": t_ns[sel], "used": used[sel]},
            "rows": len(t_ns), "t_first": int(t_ns.min())}


def load_report(path):
    if not os.path.exists(path):
        raise InputError("%s: missing (roce-engine -r)" % path)
    try:
        with open(path) as f:
            r = json.load(f)
    except ValueError as e:
        raise InputError("%s: not JSON (%s); was the run cut short?" % (path, e))
    if not isinstance(r, dict) or "flows" not in r:
        raise InputError("%s: not a roce-engine report (no \"flows\")" % path)
    if "switch" not in r:
        note("%s: no \"switch\" object: the config has no switch" % path)
    return r


def ecn_thresholds(folder):
    """Best effort: (tc -> (kmin_bytes, kmax_bytes)) from a config copied into the folder."""
    out = {}
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".cfg"):
            continue
        try:
            text = open(os.path.join(folder, name)).read()
        except OSError:
            continue
        text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
        text = re.sub(r"(#|//)[^\n]*", "", text)
        m = re.search(r"\becn\s*[=:]\s*\((.*?)\)\s*;?", text, flags=re.S)
        if not m:
            continue
        for grp in re.findall(r"\{([^}]*)\}", m.group(1)):
            kv = dict(re.findall(r"(\w+)\s*[=:]\s*([-+0-9.eE]+)", grp))
            try:
                out[int(kv["tc"])] = (float(kv["kmin_kb"]) * 1024, float(kv["kmax_kb"]) * 1024)
            except (KeyError, ValueError):
                pass
        break
    return out


def natural_key(s):
    return [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", s)]


# ---- derived series ----------------------------------------------------------------------------

def step_at(t, v, x):
    """Value of the step function (t, v) (0 before its first sample) at times x."""
    i = np.searchsorted(t, x, side="right") - 1
    return np.where(i >= 0, v[np.maximum(i, 0)], 0)


def per_bin(t, cum, edges):
    """Increments of a cumulative counter sampled at t, per bin [edges[k], edges[k+1])."""
    return np.diff(step_at(t, cum, edges))


def time_mean(t, v, a, b):
    """Time-weighted mean over [a, b] of the step function (t, v)."""
    if b <= a or len(t) == 0:
        return float("nan")
    knots = np.concatenate(([a], t[(t > a) & (t < b)], [b]))
    vals = step_at(t, v, knots[:-1])
    return float(np.sum(vals * np.diff(knots)) / (b - a))


def envelope(x, y, n=2000):
    """At most ~4n points that draw like (x, y) at a figure's resolution: per bin of x, the first,
    the lowest, the highest and the last value. Returns (x, y, exact)."""
    if len(x) <= 4 * n:
        return x, y, True
    edges = np.linspace(x[0], x[-1], n + 1)
    starts = np.unique(np.searchsorted(x, edges[:-1], side="left"))
    starts = starts[starts < len(x)]
    ends = np.append(starts[1:], len(x)) - 1
    lo, hi = np.minimum.reduceat(y, starts), np.maximum.reduceat(y, starts)
    mid = (x[starts] + x[ends]) / 2
    return (np.column_stack([x[starts], mid, mid, x[ends]]).ravel(),
            np.column_stack([y[starts], lo, hi, y[ends]]).ravel(), False)


def plot_steps(ax, x, y, **kw):
    """A step function (value held until the next sample), thinned when it has many points."""
    x, y, exact = envelope(np.asarray(x, dtype=float), np.asarray(y, dtype=float))
    return ax.plot(x, y, drawstyle="steps-post" if exact else "default", **kw)


def bin_fraction(t, on, edges):
    """Share of each bin [edges[k], edges[k+1]) the 0/1 step function (t, on) is 1 (0 outside t)."""
    area = np.concatenate(([0.0], np.cumsum(on[:-1] * np.diff(t))))
    x = np.clip(edges, t[0], t[-1])
    i = np.clip(np.searchsorted(t, x, side="right") - 1, 0, len(t) - 1)
    at = area[i] + on[i] * (x - t[i])
    return np.diff(at) / np.diff(edges)


def nice_ceil(x):
    """The smallest 1, 2 or 5 x 10^k at least x."""
    if x <= 0:
        return 1.0
    e = 10 ** math.floor(math.log10(x))
    for m in (1, 2, 5, 10):
        if m * e >= x * (1 - 1e-9):
            return m * e
    return 10 * e


def trace_interval_ms(sw):
    """The switch trace's interval (median gap of its ticks), ms."""
    if sw is None or len(sw["buffer"]["t_ns"]) < 2:
        return 0.1
    return max(float(np.median(np.diff(sw["buffer"]["t_ns"]))) / 1e6, 1e-3)


def fmt_kb(nbytes):
    kb = nbytes / 1024
    return ("%.0f" % kb) if kb >= 10 else ("%.2g" % kb)


def fmt_ms(ms):
    return ("%g ms" % ms) if ms >= 1 else ("%g µs" % (ms * 1000))


# ---- drawing -----------------------------------------------------------------------------------

class Lab:
    """Everything the plots share: data, time origin, colours, flow names, bins."""

    def __init__(self, cc, sw, report, folder):
        self.cc, self.sw, self.report = cc, sw, report
        self.t0 = cc["t0"] if cc else (sw["t_first"] if sw else 0)
        ends = []
        if cc:
            ends.append(cc["end"])
        if sw:
            ends.append((int(sw["buffer"]["t_ns"].max()) - self.t0) / 1e6)
        self.end = max(ends) if ends else 1.0
        LAB_END[0] = self.end
        self.bin_ms = max(nice_ceil(self.end / 500), nice_ceil(trace_interval_ms(sw)))
        self.edges = np.arange(0, self.end + self.bin_ms, self.bin_ms)
        self.flow_names = {}
        if report:
            for i, f in enumerate(report.get("flows", [])):
                self.flow_names[i] = "%s (%s)" % (f.get("name", "qp %d" % i), f.get("port", "?"))
        self.ecn = ecn_thresholds(folder)
        self.bottleneck = self.find_bottleneck()

    def ms(self, t_ns):
        return (t_ns - self.t0) / 1e6

    def flow_label(self, q):
        return self.flow_names.get(q, "qp %d" % q)

    def flow_color(self, q):
        return "C%d" % (q % 10)

    def find_bottleneck(self):
        """(port, tc) of the deepest queue in the trace (else in the report)."""
        if self.sw:
            best = max(self.sw["queues"].items(), key=lambda kv: int(kv[1]["queue"].max()))
            return best[0]
        sw = (self.report or {}).get("switch")
        if sw and sw.get("ports"):
            p = max(sw["ports"], key=lambda p: max(p.get("max_queue_bytes", [0])))
            mq = p.get("max_queue_bytes", [0])
            return (p["port"], int(np.argmax(mq)))
        return None

    def bottleneck_flows(self):
        """(link Gb/s, number of the report's flows) of the bottleneck port, or None."""
        sw = (self.report or {}).get("switch")
        if not sw or not self.bottleneck:
            return None
        link = next((p.get("link_gbps") for p in sw.get("ports", []) if p.get("port") == self.bottleneck[0]), None)
        qpns = {f.get("dest_qpn") for f in sw.get("flows", []) if f.get("egress") == self.bottleneck[0]}
        n = sum(1 for f in self.report.get("flows", []) if f.get("dest_qpn") in qpns)
        return (link, n) if link and n else None

    def fair_share(self):
        """The bottleneck's link over the flows that cross it, Gb/s (None if unknown)."""
        b = self.bottleneck_flows()
        return b[0] / b[1] if b else None

    # each draw_* fills given axes; the standalone figures and summary.png share them

    def draw_rates(self, ax, legend=True):
        if not self.cc:
            return no_data(ax, "no cc-trace.csv")
        for q, s in sorted(self.cc["flows"].items()):
            c = self.flow_color(q)
            plot_steps(ax, s["t"], s["rate"], lw=0.8, color=c, label=self.flow_label(q))
            plot_steps(ax, s["t"], s["target"], lw=0.6, ls=":", color=c)
        fair = self.fair_share()
        if fair:
            ax.axhline(fair, color="black", lw=0.8, ls="--", alpha=0.6,
                       label="fair share at %s: %.3g Gb/s" % (self.bottleneck[0], fair))
        ax.set_ylabel("rate Gb/s\n(target dotted)")
        ax.set_ylim(bottom=0)
        if legend:
            ax.legend(loc="upper right", fontsize="small", ncol=3)

    def draw_queues(self, ax, buffer_too=False, legend=True):
        if not self.sw:
            return no_data(ax, "no switch-queues.csv")
        for (p, tc), s in sorted(self.sw["queues"].items(), key=lambda kv: (natural_key(kv[0][0]), kv[0][1])):
            top = int(s["queue"].max())
            plot_steps(ax, self.ms(s["t_ns"]), s["queue"] / 1024, lw=0.8,
                       label="%s tc%d (max %s KB)" % (p, tc, fmt_kb(top)))
        if buffer_too:
            b = self.sw["buffer"]
            plot_steps(ax, self.ms(b["t_ns"]), b["used"] / 1024, lw=0.6, color="gray", alpha=0.8,
                       label="buffer in use")
        if self.bottleneck and self.bottleneck[1] in self.ecn:
            kmin, kmax = self.ecn[self.bottleneck[1]]
            ax.axhline(kmin / 1024, color="green", lw=0.7, ls=":", label="ECN kmin tc%d" % self.bottleneck[1])
            ax.axhline(kmax / 1024, color="red", lw=0.7, ls=":", label="ECN kmax tc%d" % self.bottleneck[1])
        ax.set_ylabel("egress queue KB")
        ax.set_ylim(bottom=0)
        if legend:
            ax.legend(loc="upper right", fontsize="small", ncol=2)

    def draw_buffer(self, ax):
        if not self.sw:
            return no_data(ax, "no switch-queues.csv")
        b = self.sw["buffer"]
        plot_steps(ax, self.ms(b["t_ns"]), b["used"] / 1024, lw=0.8, color="black", label="shared buffer in use")
        size = ((self.report or {}).get("switch") or {}).get("buffer_bytes")
        if size:
            ax.axhline(size / 1024, color="red", lw=0.8, ls="--", label="buffer size %g KB" % (size / 1024))
        ax.set_ylabel("buffer KB")
        ax.set_ylim(bottom=0)
        ax.legend(loc="upper right", fontsize="small")

    def draw_cnps(self, ax, legend=True):
        if not self.cc:
            return no_data(ax, "no cc-trace.csv")
        for q, s in sorted(self.cc["flows"].items()):
            ax.stairs(per_bin(s["t"], s["cnps"], self.edges), self.edges, lw=0.8, color=self.flow_color(q),
                      label=self.flow_label(q))
        ax.set_ylabel("CNPs received\nper %s" % fmt_ms(self.bin_ms))
        ax.set_ylim(bottom=0)
        if legend:
            ax.legend(loc="upper right", fontsize="small", ncol=2)

    def draw_marks(self, ax, legend=True, color="black", drops=True, fill=False):
        if not self.sw or not self.bottleneck:
            return no_data(ax, "no switch-queues.csv")
        port = self.bottleneck[0]
        total = np.zeros(len(self.edges) - 1)
        for (p, tc), s in self.sw["queues"].items():
            if p == port:
                total += per_bin(self.ms(s["t_ns"]), s["marked"], self.edges)
        if fill:
            ax.stairs(total, self.edges, fill=True, color=color, alpha=0.25, lw=0, label="ECN marks at %s" % port)
        else:
            ax.stairs(total, self.edges, lw=0.8, color=color, label="ECN marks at %s" % port)
        ps = self.sw["ports"]
        dropped = {p: per_bin(self.ms(s["t_ns"]), s["dropped"], self.edges) for p, s in ps.items()}
        if drops and any(d.sum() for d in dropped.values()):
            ax2 = ax.twinx()
            mids = (self.edges[:-1] + self.edges[1:]) / 2
            for p, d in sorted(dropped.items(), key=lambda kv: natural_key(kv[0])):
                nz = d > 0
                if nz.any():
                    ax2.plot(mids[nz], d[nz], "x", ms=5, label="drops at ingress %s (%d)" % (p, d.sum()))
            ax2.set_ylabel("drops per bin")
            ax2.set_ylim(bottom=0)
            if legend:
                ax2.legend(loc="upper left", fontsize="x-small", ncol=2)
        ax.set_ylabel("ECN marks (%s)\nper %s" % (port, fmt_ms(self.bin_ms)))
        ax.set_ylim(bottom=0)
        if legend:
            ax.legend(loc="upper right", fontsize="small")

    def draw_pauses(self, ax, which=("xoff", "paused"), lone=False):
        """One lane per (port, priority): light fill where the state is in force at the trace's
        samples, dark line the fraction of each bin it is in force. `lone`: a panel of its own."""
        if not self.sw:
            return no_data(ax, "no switch-queues.csv")
        lanes = []  # (label, t_ms, on, kind)
        for kind in which:
            for p in self.sw["names"]:
                s = self.sw["ports"][p]
                t = self.ms(s["t_ns"])
                mask = s[kind]
                prios = [pr for pr in range(8) if np.any((mask >> pr) & 1)]
                for pr in prios:
                    on = ((mask >> pr) & 1).astype(float)
                    frac = time_mean(t, on, float(t[0]), float(t[-1])) if len(t) > 1 else float(on[0])
                    what = "XOFF to" if kind == "xoff" else "%s paused" % p
                    lanes.append(("%s p%d (%.0f%%)" % (what if kind == "paused" else "%s %s" % (what, p), pr,
                                                      100 * frac), t, on, kind))
                if not prios and kind == "xoff":
                    lanes.append(("XOFF to %s: never" % p, t, None, kind))
        if "paused" in which and not any(k == "paused" for *_, k in lanes):
            if lone:
                return no_data(ax, "no switch port received PFC: no egress was paused")
            lanes.append(("egress paused: never", None, None, "paused"))
        for i, (label, t, on, kind) in enumerate(lanes):
            base = len(lanes) - 1 - i
            ax.axhline(base, color="gray", lw=0.3)
            if on is None:
                continue
            light, dark = ("#f4a6a6", "#b00000") if kind == "xoff" else ("#d4b8e8", "#5b2a86")
            ax.fill_between(t, base, base + 0.8 * on, step="post", lw=0, color=light)
            ax.stairs(base + 0.8 * bin_fraction(t, on, self.edges), self.edges, baseline=None, color=dark, lw=0.8)
        ax.set_yticks([len(lanes) - 1 - i + 0.4 for i in range(len(lanes))])
        ax.set_yticklabels([label for label, *_ in lanes], fontsize="x-small")
        ax.set_ylim(-0.2, len(lanes))
        ax.set_ylabel("PFC, sampled every %s\n(line: share of each %s)"
                      % (fmt_ms(round(trace_interval_ms(self.sw), 4)), fmt_ms(self.bin_ms)))


def no_data(ax, text):
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center", color="gray")
    ax.set_yticks([])


def finish(fig, axes, title, path):
    for a in axes:
        a.grid(alpha=0.3)
        a.set_xlim(0, LAB_END[0])
    axes[-1].set_xlabel("time ms (from the first cc-trace row)")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_all(lab, folder, title):
    out = []
    fig, ax = plt.subplots(figsize=(11, 5))
    lab.draw_rates(ax)
    out.append(finish(fig, [ax], title + ": DCQCN rate per flow", os.path.join(folder, "rates.png")))

    fig, ax = plt.subplots(2, 1, sharex=True, figsize=(11, 7), gridspec_kw={"height_ratios": [3, 2]})
    lab.draw_queues(ax[0])
    lab.draw_buffer(ax[1])
    out.append(finish(fig, list(ax), title + ": switch queues", os.path.join(folder, "queues.png")))

    fig, ax = plt.subplots(2, 1, sharex=True, figsize=(11, 7))
    lab.draw_cnps(ax[0])
    lab.draw_marks(ax[1])
    out.append(finish(fig, list(ax), title + ": CNPs and ECN marks", os.path.join(folder, "cnps.png")))

    fig, ax = plt.subplots(2, 1, sharex=True, figsize=(11, 7), gridspec_kw={"height_ratios": [3, 2]})
    lab.draw_pauses(ax[0], which=("xoff",), lone=True)
    lab.draw_pauses(ax[1], which=("paused",), lone=True)
    ax[0].set_title("XOFF in force toward each switch port (its ingress), per priority", fontsize="small")
    ax[1].set_title("egress of each switch port paused by PFC it received", fontsize="small")
    out.append(finish(fig, list(ax), title + ": PFC", os.path.join(folder, "pauses.png")))

    fig, ax = plt.subplots(4, 1, sharex=True, figsize=(12, 14), gridspec_kw={"height_ratios": [3, 2.5, 2, 2.5]})
    lab.draw_rates(ax[0])
    lab.draw_queues(ax[1], buffer_too=True)
    lab.draw_cnps(ax[2], legend=False)
    if lab.sw:
        lab.draw_marks(ax[2].twinx(), legend=False, color="black", drops=False, fill=True)
        ax[2].set_title("CNPs per flow (lines), ECN marks at %s (gray area, right axis)" % lab.bottleneck[0],
                        fontsize="small")
    lab.draw_pauses(ax[3])
    out.append(finish(fig, list(ax), title, os.path.join(folder, "summary.png")))
    return out


# ---- text summary ------------------------------------------------------------------------------

def jain(xs):
    xs = [x for x in xs if x == x]
    if not xs or sum(x * x for x in xs) == 0:
        return float("nan")
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs))


def summary(lab, folder):
    r, sw = lab.report or {}, (lab.report or {}).get("switch") or {}
    lines = ["lab results: %s" % os.path.abspath(folder)]
    if r:
        lines.append("run: %.2f s (stopped by %s), config %s" % (r.get("duration_s", 0), r.get("stopped_by", "?"),
                                                                r.get("config", "?")))
    half = lab.cc["end"] / 2 if lab.cc else None
    flows = r.get("flows", [])
    sw_flows = sw.get("flows", [])
    if lab.cc:
        qps = sorted(set(lab.cc["flows"]) | set(range(len(flows))))
    else:
        qps = list(range(len(flows)))
    head = "%-12s %10s %9s %9s %9s %9s %7s %6s" % ("flow", "mean rate", "goodput", "rate end", "CNPs rx",
                                                   "cuts", "drops", "lost")
    lines += ["", "per flow, Gb/s. mean rate: time-weighted mean DCQCN rate over the last half of the trace",
              "(%.1f .. %.1f ms); goodput: the whole run; drops: the switch's, for the flow's destination QPN"
              % (half or 0, lab.cc["end"] if lab.cc else 0), head]
    means = []
    for q in qps:
        f = flows[q] if q < len(flows) else {}
        s = lab.cc["flows"].get(q) if lab.cc else None
        m = time_mean(s["t"], s["rate"], half, lab.cc["end"]) if s is not None else float("nan")
        if s is not None:
            means.append(m)
        cc = f.get("cc", {})
        drops = sum(x.get("dropped", 0) for x in sw_flows if x.get("dest_qpn") == f.get("dest_qpn")) if f else None
        lines.append("%-12s %10s %9s %9s %9s %9s %7s %6s" % (
            f.get("name", "qp %d" % q)[:12], num(m, "%.3f"), num(f.get("goodput_gbps"), "%.3f"),
            num(cc.get("rate_gbps"), "%.3f"), num(f.get("cnp_rx")), num(cc.get("cuts")), num(drops),
            num(f.get("lost"))))
    if means:
        lines.append("Jain's fairness index over the last half (mean rates): %.4f  (%d flows, sum %.3f Gb/s)"
                     % (jain(means), len(means), sum(x for x in means if x == x)))
    good = sum(f.get("goodput_gbps", 0) for f in flows)
    b = lab.bottleneck_flows()
    if flows:
        lines.append("goodput, all flows: %.3f Gb/s%s" % (good, (" (deepest queue at %s: a %.3g Gb/s link shared by "
                                                                 "%d flows)" % (lab.bottleneck[0], b[0], b[1]))
                                                        if b else ""))
    if sw:
        lines += ["", "switch: buffer %.0f KB, max in use %.1f KB; admitted %d; dropped: buffer full %d, queue limit %d, "
                  "headroom %d" % (sw.get("buffer_bytes", 0) / 1024, sw.get("max_buffer_used", 0) / 1024,
                                   sw.get("admitted", 0), sw.get("dropped_buffer_full", 0),
                                   sw.get("dropped_queue_limit", 0), sw.get("dropped_headroom", 0))]
        for p in sw.get("ports", []):
            mq = p.get("max_queue_bytes", [])
            parts = ["max queue " + ", ".join("tc%d %.1f KB" % (t, b / 1024) for t, b in enumerate(mq) if b) or "-"]
            for key, label, unit in (("ecn_marked", "ECN marked", "tc"), ("pfc_xoff_tx", "XOFF sent", "p"),
                                     ("pfc_xon_tx", "XON sent", "p"), ("pfc_rx", "PFC received", "p")):
                v = p.get(key, [])
                if any(v):
                    parts.append("%s %s" % (label, ", ".join("%s%d %d" % (unit, t, n) for t, n in enumerate(v) if n)))
            d = p.get("dropped", {})
            if any(d.values()):
                parts.append("dropped here " + ", ".join("%s %d" % (k, n) for k, n in d.items() if n))
            lines.append("  %-4s %s" % (p.get("port", "?"), "; ".join(parts)))
        if sw.get("trace_dropped"):
            lines.append("  trace rows lost to a full ring: %d (the queue plot has gaps)" % sw["trace_dropped"])
    paused = [(p.get("name"), p.get("paused_ns", [])) for p in r.get("ports", []) if any(p.get("paused_ns", []))]
    dur = r.get("duration_s") or 0
    if paused and dur:
        lines.append("hosts paused by PFC: " + ", ".join("%s p%d %.1f%%" % (n, t, 100 * ns / 1e9 / dur)
                                                       for n, v in paused for t, ns in enumerate(v) if ns))
    ct = r.get("cc_trace") or {}
    if ct.get("dropped"):
        lines.append("cc trace rows lost to a full ring: %d" % ct["dropped"])
    return "\n".join(lines)


def num(v, fmt="%d"):
    if v is None or (isinstance(v, float) and v != v):
        return "-"
    return fmt % v


# ---- main --------------------------------------------------------------------------------------

def main():
    global np, plt
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", help="results folder with cc-trace.csv, switch-queues.csv, report.json")
    ap.add_argument("--title", help="title of the plots (default: the folder's name)")
    ap.add_argument("-q", "--quiet", action="store_true", help="do not print the summary (still in summary.txt)")
    args = ap.parse_args()
    try:
        import numpy as np
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        sys.exit("plot-lab: %s (Debian: apt-get install python3-matplotlib; scripts/install-deps.sh does it; "
                 "run with /usr/bin/python3)" % e)
    folder = args.folder
    if not os.path.isdir(folder):
        note("%s: no such folder" % folder)
        return 1
    problems = 0
    cc = sw = report = None
    for name, loader in (("report.json", load_report), ("cc-trace.csv", load_cc), ("switch-queues.csv", load_sw)):
        try:
            data = loader(os.path.join(folder, name))
        except InputError as e:
            note(str(e))
            problems += 1
            continue
        except (ValueError, OSError) as e:
            note("%s: unreadable: %s" % (os.path.join(folder, name), e))
            problems += 1
            continue
        if name == "report.json":
            report = data
        elif name == "cc-trace.csv":
            cc = data
        else:
            sw = data
    if not (cc or sw or report):
        note("nothing to plot in %s" % folder)
        return 1
    lab = Lab(cc, sw, report, folder)
    title = args.title or os.path.basename(os.path.normpath(os.path.abspath(folder)))
    if cc or sw:
        written = plot_all(lab, folder, title)
    else:
        written = []
        note("no trace to plot; the summary only")
    text = summary(lab, folder)
    with open(os.path.join(folder, "summary.txt"), "w") as f:
        f.write(text + "\n")
    if not args.quiet:
        print(text)
        print()
        print("plots: " + " ".join(os.path.basename(p) for p in written))
    if problems:
        note("%d input(s) missing or unusable: the plots above lack them" % problems)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
