#!/usr/bin/env bash
# roce-ccsim's fabric model next to htsim's RoCE model (Broadcom/csg-htsim, sim/datacenter/htsim_roce)
# on the same fabrics, links, packets, PFC thresholds and traffic matrix: per-flow throughput and
# completion times, queues, pauses, wall time, events per second and peak memory
# (docs/ccsim.md#against-htsim, docs/performance.md#roce-ccsim-against-htsim).
#   128 hosts, permutation: htsim_roce -tiers 2 -nodes 128 (16 leaves of 8, 8 spines, 100 Gb/s and
#              1 µs everywhere) against configs/ccsim/fabric-128-permutation.cfg: long flows for
#              DURATION_US, no congestion control, PFC at 15 packets (XON at 12), 9,000-byte
#              payloads + 64 bytes;
#   128 hosts, all-to-all: the same with configs/ccsim/fabric-128-all-to-all.cfg: 1,008,000 bytes
#              of payload (112 packets) from every host to each other, all at 0, until all complete;
#   1,024 hosts: htsim_roce -tiers 3 -nodes 1024 (K = 16: 128 ToRs of 8, 16 pods, 64 cores) against
#              configs/ccsim/fabric-fat-tree-1024.cfg at htsim's frame size, a permutation.
# Both get one matrix, written here: htsim as its connection matrix, roce-ccsim as `pairs` (or its
# `all_to_all`, the same order). Figures count payload bytes (htsim's ACKed bytes; roce-ccsim's
# frames x 9,000 / 9,064); an FCT is from 0 to the last byte at the receiver.
#
# htsim is not part of the project: build it apart (git clone https://github.com/Broadcom/csg-htsim;
# cd csg-htsim/sim && make -j2; cd datacenter && make -j2) and give its sim/ directory as HTSIM.
# Stock htsim reseeds its RNG from the clock in every RoceSrc (sim/roce.cpp: srand(time(NULL))
# before `_pathid = random() % 256`): delete that srand for repeatable runs (main's -seed, 13,
# then draws the path ids). Its FairPriorityQueue (the NIC's queue) starts a second service on an
# XON that comes while a frame is being sent, and the all-to-all aborts in beginService(); guard
# that call with `&& !_sending` as LosslessOutputQueue does (docs/ccsim.md#against-htsim has both).
# HTSIM_COUNT (optional): a second such build that also prints, without changing what it
# simulates, its events, each queue's peak, the XOFFs each ingress sent, each flow's ECMP next
# hop at each switch and the time its last byte reached the sink (the lines the comments below
# parse). With it roce-ccsim's flows take htsim's ECMP paths (a hash of the UDP source port only,
# one `udp_sports` per flow; the table says whether every switch's flows per next hop are
# htsim's), and the queue, pause, event and receiver-side FCT figures are filled; without it each
# simulator hashes on its own, those figures read "-" and htsim's FCTs are its senders' (the last
# ACK back).
# Every timed run holds /tmp/bench.lock (flock), as the other benchmarks on this machine do;
# REPEAT (default 1) runs each that many times and keeps the median wall time; KEEP=1 keeps the
# work directory (matrices, scenarios, outputs).
# Usage: HTSIM=/path/to/csg-htsim/sim [HTSIM_COUNT=/path/sim] bench/run-ccsim-htsim.sh [BUILD_DIR] [DURATION_US]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
dur=${2:-2000}
repeat=${REPEAT:-1}
ccsim="$build/apps/roce-ccsim"
: "${HTSIM:?set HTSIM to a built csg-htsim sim/ directory (see the comment at the top)}"
roce="$HTSIM/datacenter/htsim_roce"
parse="$HTSIM/parse_output"
count=${HTSIM_COUNT:+$HTSIM_COUNT/datacenter/htsim_roce}
[ -x "$ccsim" ] && [ -x "$roce" ] && [ -x "$parse" ] || { echo "need $ccsim, $roce and $parse" >&2; exit 1; }
[ -z "$count" ] || [ -x "$count" ] || { echo "need $count (HTSIM_COUNT)" >&2; exit 1; }
work=$(mktemp -d /tmp/ccsim-htsim.XXXXXX)
trap '[ -n "${KEEP:-}" ] && echo "kept $work" >&2 || rm -rf "$work"' EXIT
payload=9000 # htsim's -mtu default; roce-ccsim's frames are 64 bytes more (htsim's ACKSIZE header)

# The matrix: perm, a derangement drawn with seed 1 (every host sends to one other and receives
# from one), or a2a, every ordered pair source by source (roce-ccsim's all_to_all order), each
# `size` bytes of payload. htsim's flow ids count from 1 in that order.
matrix() { # kind nodes size dir
  python3 - "$@" <<'EOF'
import random, sys
kind, n, size, d = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
if kind == "perm":
    rng = random.Random(1)
    while True:
        t = list(range(n)); rng.shuffle(t)
        if all(t[i] != i for i in range(n)): break
    pairs = [(s, t[s]) for s in range(n)]
else:
    pairs = [(s, t) for s in range(n) for t in range(n) if s != t]
with open(d + "/m.cm", "w") as f:
    f.write("Nodes %d\nConnections %d\n" % (n, len(pairs)))
    for i, (s, t) in enumerate(pairs):
        f.write("%d->%d id %d start 0 size %d\n" % (s, t, i + 1, size))
with open(d + "/pairs", "w") as f:
    f.writelines("%d %d\n" % p for p in pairs)
EOF
}

# roce-ccsim's scenario: the shipped one at htsim's frame size with the matrix's pairs (a
# permutation) and duration. With the counting build's ECMP lines ("ECMP Switch_LowerPod_T flow
# ID dst D via LST->USa(0)": ToR T sent flow ID up to aggregation (spine) switch a;
# "Switch_UpperPod_A ... via USA->CSc(0)": A sent it up to core c), every flow gets a UDP source
# port that roce-ccsim's hash of the port alone sends the same way at every switch that chooses:
# on a leaf-spine leaf T to spine a; on a fat-tree edge T to its pod's aggregation switch a mod
# k/2, and aggregation switch A to core c div k/2 of its k/2 (htsim wires A to cores
# A mod k/2 + l x k/2, roce-ccsim to l + (A mod k/2) x k/2: the same wiring, the cores numbered
# the other way). Leaves and edges hash with CRC-32 and a seed per switch (switch i: i x
# 0x9E3779B1), aggregation switches with CRC-16 (docs/fabric.md#load-balancing: the member of n
# next hops in order is (crc x n) >> 32, or >> 16): two CRC-32s of one port differ by a constant,
# so an edge's choice would fix its aggregation switch's (polarisation), and htsim's salted hashes
# choose independently.
ccsim_cfg() { # base-cfg kind dir duration-us
  python3 - "$@" <<'EOF'
import binascii, os, re, sys, zlib
base, kind, d, dur = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
cfg = open(base).read()
cfg = re.sub(r"(?m)^duration_us = .*", "duration_us = %s;" % dur, cfg)
cfg = re.sub(r"(?m)^window_us = .*", "window_us = [0, %s];" % dur, cfg)
cfg = re.sub(r"mtu_bytes = [0-9]+", "mtu_bytes = 9064", cfg)
pairs = [tuple(map(int, l.split())) for l in open(d + "/pairs")]
fat = re.search(r"\bk = (\d+);", cfg)
half = int(fat[1]) // 2 if fat else 0
edges = half * half * 2 if fat else int(re.search(r"leaves = (\d+)", cfg)[1])
ups = half if fat else int(re.search(r"spines = (\d+)", cfg)[1])
want = {}  # flow -> ((hash, seed, bits, next hops, member), ...) at each switch that chooses
for l in open(d + "/count.txt") if os.path.exists(d + "/count.txt") else ():
    m = re.match(r"ECMP Switch_(Lower|Upper)Pod_(\d+) flow (\d+) dst \d+ via \w+->(?:US|CS)(\d+)\(", l)
    if not m:
        continue
    sw, flow, to = int(m[2]), int(m[3]) - 1, int(m[4])
    if m[1] == "Lower":
        hop = (zlib.crc32, sw * 0x9E3779B1 % 2**32, 32, ups, to % half if fat else to)
    else:
        assert fat and to % half == sw % half, l
        hop = (binascii.crc_hqx, 0, 16, half, to // half)
    want[flow] = want.get(flow, ()) + (hop,)
extra = ""
if want:
    member = lambda p, crc, seed, bits, n: (crc(p.to_bytes(2, "big"), seed) % 2**bits * n) >> bits
    found = {}
    def port(hops):
        if hops not in found:
            found[hops] = (p for p in range(1024, 65536) if all(member(p, *h) == m for *h, m in hops))
        return next(found[hops])
    sports = [port(want.get(i, ())) for i in range(len(pairs))]
    aggs = ", ".join('{ name = "agg%d"; hash = { function = "crc16"; seed = 0; fields = ["udp_sport"]; }; }' % a
                     for a in range(edges) if fat)
    cfg = re.sub(r"hash = \{[^}]*\};", 'hash = { function = "crc32"; seed = 0; fields = ["udp_sport"]; '
                 "seed_per_switch = true; };" + (" switches = ( %s );" % aggs if fat else ""), cfg)
    extra = "udp_sports = [%s]; " % ", ".join(map(str, sports))
if kind == "perm":
    listed = ", ".join('["h%d", "h%d"]' % p for p in pairs)
    cfg = re.sub(r'pattern = "permutation"; seed = 1;', 'pattern = "pairs"; pairs = ( %s ); %s' % (listed, extra), cfg)
else:
    cfg = cfg.replace('pattern = "all_to_all";', 'pattern = "all_to_all"; ' + extra)
open(d + "/s.cfg", "w").write(cfg)
print("on htsim's ECMP paths" if want else "each its own ECMP hash")
EOF
}

timed() { # out-prefix command...: each run's wall seconds and peak RSS (KB) appended to out-prefix.time
  local out=$1 i; shift
  for ((i = 0; i < repeat; i++)); do
    flock /tmp/bench.lock /usr/bin/time -a -f "%e %M" -o "$out.time" "$@" > "$out.stdout" 2>&1
  done
}

# The figures of one scenario, both simulators, as a Markdown table. htsim's per-flow bytes: its
# sink log's ROCE_SINK samples (parse_output -ascii: time s, field 1; sink id, field 5; ACKed
# bytes, field 9; ids named in the log's ": Roce_sink_S_D=ID" lines); its sender-side FCTs:
# "Flow Roce_S_D ID finished at US"; the counting build's "RXDONE Roce_S_D US", "HTSTATS events N",
# "HTSTATS outq NAME max BYTES", "HTSTATS inq NAME max BYTES pauses N" (NAME: the link direction,
# e.g. LS3->US5(0), SRC7->LS0(0), US2->LS_9(0), LS0->DST4(0)).
figures() { # dir label kind hosts
  "$parse" "$1/sink.log" -ascii > "$1/sink.txt" 2> /dev/null || : > "$1/sink.txt"
  python3 - "$@" "$payload" <<'EOF'
import json, math, os, re, statistics, sys
d, label, kind, hosts, payload = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
s = json.load(open(d + "/s.json"))
frame = payload + 64
tier = lambda name: {"h": "host", "SRC": "host", "DST": "host", "leaf": "leaf", "edge": "leaf", "LS": "leaf",
                     "LS_": "leaf", "spine": "spine", "agg": "spine", "US": "spine", "core": "core",
                     "CS": "core"}[re.match(r"[A-Za-z_]+?(?=\d)", name)[0]]
def pct(v, p):
    v = sorted(v)
    return v[max(0, math.ceil(p / 100 * len(v)) - 1)]
def jain(v):
    return sum(v) ** 2 / (len(v) * sum(x * x for x in v))
def wall(prefix):
    t = [l.split() for l in open(prefix + ".time") if l.strip() and l[0].isdigit()]
    return statistics.median(float(a) for a, _ in t), max(int(b) for _, b in t) / 1024
# roce-ccsim
c = {"events": s["events"], "wall": wall(d + "/ccsim")}
key = lambda f: (int(f["src"][1:]), int(f["dst"][1:]))
if kind == "perm":
    c["rate"] = {key(f): f["goodput_gbps"] * payload / frame for f in s["flows"]}
else:
    c["fct"] = {key(f): f["completion_us"] for f in s["flows"] if f["completion_us"] is not None}
c["queue"], c["xoff"] = {}, {}
for w in s["fabric"]["switches"]:
    for q in w["queues"]:
        c["queue"].setdefault(tier(w["name"]) + "→" + tier(q["port"]), []).append(q["max_bytes"])
for l in s["fabric"]["links"]:
    for a, b, dr in ((l["a"], l["b"], "a_to_b"), (l["b"], l["a"], "b_to_a")):
        k = tier(a) + "→" + tier(b)
        c["xoff"][k] = c["xoff"].get(k, 0) + sum(l[dr]["pauses_received"])
# htsim
h = {"wall": wall(d + "/htsim"), "queue": {}, "xoff": {}, "rx": {}, "events": None}
ids = {}
for line in open(d + "/sink.log", "rb") if kind == "perm" else ():
    m = re.match(rb": Roce_sink_(\d+)_(\d+)=(\d+)", line)
    if m:
        ids[m[3].decode()] = (int(m[1]), int(m[2]))
last = {}
for line in open(d + "/sink.txt"):
    p = line.split()
    if len(p) > 8 and p[2] == "ROCE_SINK":
        last[p[4]] = (float(p[0]), int(p[8]))
if kind == "perm":
    h["rate"] = {ids[k]: b * 8 / t / 1e9 for k, (t, b) in last.items()}
tx = {}
for line in open(d + "/htsim.stdout"):
    m = re.match(r"Flow Roce_(\d+)_(\d+) \d+ finished at ([0-9.e+-]+)", line)
    if m:
        tx[(int(m[1]), int(m[2]))] = float(m[3])
for line in open(d + "/count.txt") if os.path.exists(d + "/count.txt") else ():
    p = line.split()
    if line.startswith("RXDONE"):
        m = re.match(r"Roce_(\d+)_(\d+)", p[1])
        h["rx"][(int(m[1]), int(m[2]))] = float(p[2])
    elif line.startswith("HTSTATS events"):
        h["events"] = int(p[2])
    elif line.startswith("HTSTATS outq") and int(p[4]) >= frame:  # a data packet's port (not ACKs' alone)
        a, b = p[2].split("->")
        h["queue"].setdefault(tier(a) + "→" + tier(b), []).append(int(p[4]))
    elif line.startswith("HTSTATS inq"):
        a, b = p[2].split("->")
        k = tier(a) + "→" + tier(b)
        h["xoff"][k] = h["xoff"].get(k, 0) + int(p[6])
counted = h["events"] is not None
if kind != "perm":
    h["fct"] = h["rx"] if counted else tx
size = lambda x: 112 * payload * 8 / (x * 1e3)  # Gb/s of a flow of 112 payloads done in x µs
for x in (c, h):
    if kind != "perm":
        x["rate"] = {k: size(v) for k, v in x["fct"].items()}
# the table
rows = []
def diff(a, b):
    return "%+.1f %%" % (100 * (a / b - 1)) if b else "-"
def row(name, a, b, fmt, d_=True):
    rows.append("| %s | %s | %s | %s |" % (name, "-" if a is None else fmt(a), "-" if b is None else fmt(b),
                                           diff(a, b) if d_ and a is not None and b is not None else ""))
rc, rh = list(c["rate"].values()), list(h["rate"].values())
done = lambda x: "%d" % len(x) if kind == "perm" else "%d of %d" % (len(x), len(s["flows"]))
row("flows (completed)", c["rate"], h["rate"], done, False)
if kind == "perm":  # long flows: their rates over the run
    row("goodput, share of %d × 100 Gb/s" % hosts, sum(rc) / hosts, sum(rh) / hosts, lambda x: "%.1f %%" % x)
else:  # sized flows: all their bytes by the last completion
    last = lambda x: len(x["fct"]) * 112 * payload * 8 / (max(x["fct"].values()) * 1e3) / hosts if x["fct"] else None
    row("goodput to the last FCT, share of %d × 100 Gb/s" % hosts, last(c), last(h), lambda x: "%.1f %%" % x)
for p, n in ((0, "min"), (50, "p50"), (99, "p99"), (100, "max")):
    f = min if p == 0 else max if p == 100 else (lambda v, p=p: pct(v, p))
    row("per-flow Gb/s, %s" % n, f(rc), f(rh), lambda x: "%.2f" % x)
row("Jain's index", jain(rc), jain(rh), lambda x: "%.3f" % x)
# pinned: every switch's flows per next hop as htsim's ECMP lines say (names mapped as ccsim_cfg does)
half = round((4 * hosts) ** (1 / 3)) // 2 if s["fabric"]["kind"] == "fat-tree" else 0  # k^3 / 4 hosts
hx = {}
for line in open(d + "/count.txt") if os.path.exists(d + "/count.txt") else ():
    m = re.match(r"ECMP Switch_(Lower|Upper)Pod_(\d+) flow \d+ dst \d+ via \w+->(?:US|CS)(\d+)\(", line)
    if m:
        sw, to = int(m[2]), int(m[3])
        k = (("edge%d" if half else "leaf%d") % sw, ("agg%d" if half else "spine%d") % to) if m[1] == "Lower" \
            else ("agg%d" % sw, "core%d" % (sw % half * half + to // half))
        hx[k] = hx.get(k, 0) + 1
cx = {(g["switch"], m): n for g in s["fabric"]["ecmp_groups"] for m, n in zip(g["members"], g["flows"]) if n}
pinned = "udp_sports" in open(d + "/s.cfg").read()
if pinned:
    rows.append("| ECMP: flows per switch and next hop | %s | %d choices | |" %
                ("as htsim's" if cx == hx else "NOT as htsim's (%d differ)" % len(set(cx.items()) ^ set(hx.items())),
                 sum(hx.values())))
same = [k for k in c["rate"] if k in h["rate"]]
if same and pinned:  # the same paths: the same flow compares
    rel = sorted((c["rate"][k] / h["rate"][k] - 1, k) for k in same)
    worst = max(rel, key=lambda r: abs(r[0]))
    rows.append("| same flow within 5 %% | %d of %d (largest: h%d→h%d, %+.1f %%) | | |" %
                (sum(abs(r) <= 0.05 for r, _ in rel), len(same), worst[1][0], worst[1][1], 100 * worst[0]))
if kind != "perm":
    for p in (50, 95, 99, 100):
        row("FCT ms, %s" % ("max" if p == 100 else "p%d" % p), pct(c["fct"].values(), p) / 1e3,
            pct(h["fct"].values(), p) / 1e3 if h["fct"] else None, lambda x: "%.3f" % x)
    if not counted and tx:
        rows.append("| (htsim's FCT: at the sender, its last ACK back) | | | |")
ports = lambda v: "%.0f / %.0f / %.0f" % (pct(v, 50) / 1e3, pct(v, 90) / 1e3, max(v) / 1e3)
for k in sorted(set(c["queue"]) | set(h["queue"])):  # each port's peak: the median port, p90, the busiest
    rows.append("| peak egress queue KB, %s ports (p50 / p90 / max) | %s | %s | |" %
                (k, ports(c["queue"].get(k, [0])), ports(h["queue"][k]) if counted and k in h["queue"] else "-"))
for k in sorted(set(k for k, v in c["xoff"].items() if v) | set(k for k, v in h["xoff"].items() if v)):
    row("XOFF frames pausing %s" % k, c["xoff"].get(k, 0), h["xoff"].get(k, 0) if counted else None,
        lambda x: "{:,}".format(x))
rows.append("| wall s | %.2f | %.2f | %.1f× faster |" % (c["wall"][0], h["wall"][0], h["wall"][0] / c["wall"][0]))
row("peak RSS MB", c["wall"][1], h["wall"][1], lambda x: "%.0f" % x)
row("events (M)", c["events"] / 1e6, h["events"] / 1e6 if counted else None, lambda x: "%.2f" % x)
row("events per second (M)", c["events"] / 1e6 / c["wall"][0], h["events"] / 1e6 / h["wall"][0] if counted else None,
    lambda x: "%.2f" % x)
print("\n#### %s\n\n| | roce-ccsim | htsim | roce-ccsim vs htsim |\n|---|---|---|---|" % label)
print("\n".join(rows))
EOF
}

run() { # label kind hosts size duration-us base-cfg htsim-args...
  local label=$1 kind=$2 hosts=$3 size=$4 du=$5 cfg=$6 d="$work/${1//[^a-z0-9]/}"
  shift 6
  local args=("$@" -tm "$d/m.cm" -strat ecmp_host -paths 256 -end $((du + 1)) -o "$d/sink.log")
  [ "$kind" != perm ] || args+=(-log sink -logtime 0.1)
  mkdir -p "$d"
  matrix "$kind" "$hosts" "$size" "$d"
  [ -z "$count" ] || ( cd "$d" && flock /tmp/bench.lock "$count" "${args[@]}" > "$d/count.txt" )
  echo "$label: $(ccsim_cfg "$cfg" "$kind" "$d" "$du")" >&2
  timed "$d/ccsim" "$ccsim" -q -s "$d/s.json" "$d/s.cfg"
  ( cd "$d" && timed "$d/htsim" "$roce" "${args[@]}" )
  figures "$d" "$label" "$kind" "$hosts"
}
run "128 hosts, permutation, ${dur} µs" perm 128 0 "$dur" configs/ccsim/fabric-128-permutation.cfg -tiers 2 -nodes 128
run "128 hosts, all-to-all, 1 MB per pair" a2a 128 $((112 * payload)) 20000 configs/ccsim/fabric-128-all-to-all.cfg \
    -tiers 2 -nodes 128
run "1,024 hosts, k = 16 fat-tree, permutation, ${dur} µs" perm 1024 0 "$dur" configs/ccsim/fabric-fat-tree-1024.cfg \
    -tiers 3 -nodes 1024
