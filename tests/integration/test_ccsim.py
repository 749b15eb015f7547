"""roce-ccsim (apps/roce_ccsim): the deterministic congestion-control simulator on the cc/ library.

    /usr/bin/python3 -m pytest -q tests/integration/test_ccsim.py

The binary is $ROCE_CCSIM, else <repo>/build/apps/roce-ccsim. The scenarios are the shipped
configs/ccsim/*.cfg (what they model and why their RED/PFC values: their comments and
docs/ccsim.md), plus small ones written here. Every run is a few tens of ms of CPU (release).
"""
import collections
import csv
import json
import os
import re
import resource
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CFG = ROOT / "configs" / "ccsim"
HEADER = "time_us,flow,rate_gbps,target_gbps,alpha,queue_bytes,cnp_rx,paused"

# "Settled" (the incast test, docs/ccsim.md): the first sample time T from which on, at every
# sample, every flow's rate averaged over the trailing SETTLE_AVG_US is within ±SETTLE_TOL of the
# fair share.
SETTLE_AVG_US = 100.0
SETTLE_TOL = 0.10


def ccsim_path():
    return Path(os.environ.get("ROCE_CCSIM", ROOT / "build" / "apps" / "roce-ccsim"))


class Run:
    def __init__(self, rc, out, err, csv_text, summary):
        self.rc, self.out, self.err, self.csv_text, self.summary = rc, out, err, csv_text, summary

    def rows(self):
        return list(csv.DictReader(self.csv_text.splitlines()))


class Sim:
    def __init__(self, tmp):
        self.tmp = tmp
        self.n = 0

    def run(self, cfg, *args, text=None):
        """Runs a scenario file (or `text` written to a file named `cfg`); CSV and JSON captured."""
        self.n += 1
        if text is not None:
            path = self.tmp / cfg
            path.write_text(text)
            cfg = path
        out_csv = self.tmp / ("run%d.csv" % self.n)
        out_json = self.tmp / ("run%d.json" % self.n)
        cmd = [str(ccsim_path()), "-c", str(out_csv), "-s", str(out_json)] + [str(a) for a in args] + [str(cfg)]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=str(self.tmp))
        csv_text = out_csv.read_text() if out_csv.exists() else ""
        summary = json.loads(out_json.read_text()) if r.returncode == 0 and out_json.exists() else None
        return Run(r.returncode, r.stdout, r.stderr, csv_text, summary)


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    if not ccsim_path().exists():
        pytest.fail("roce-ccsim not found at %s (build it, or set $ROCE_CCSIM)" % ccsim_path())
    return Sim(tmp_path_factory.mktemp("ccsim"))


_cache = {}


def shipped(sim, name):
    """The run of configs/ccsim/NAME.cfg, once per module."""
    if name not in _cache:
        r = sim.run(CFG / (name + ".cfg"))
        assert r.rc == 0, r.err
        _cache[name] = r
    return _cache[name]


def per_flow_rates(rows):
    rates = collections.defaultdict(list)
    for row in rows:
        rates[int(row["flow"])].append((float(row["time_us"]), float(row["rate_gbps"])))
    return rates


def settle_time_us(rows, share):
    """See SETTLE_*: None when the rates never stay within the band to the end."""
    rates = per_flow_rates(rows)
    times = [t for t, _ in rates[0]]
    k = max(1, int(round(SETTLE_AVG_US / (times[1] - times[0]))))
    inside = [True] * len(times)
    for series in rates.values():
        window = collections.deque()
        for i, (_, x) in enumerate(series):
            window.append(x)
            if len(window) > k:
                window.popleft()
            if abs(sum(window) / len(window) - share) > SETTLE_TOL * share:
                inside[i] = False
    settled = None
    for i in range(len(times) - 1, -1, -1):
        if not inside[i]:
            break
        settled = times[i]
    return settled


def headroom_bytes(rate_gbps, delay_us, mtu):
    """What can still arrive after XOFF: the round trip's bytes on the wire, plus a packet being
    serialised at each end."""
    return int(2 * delay_us * rate_gbps * 1000 / 8) + 2 * mtu


# ---- output format ----------------------------------------------------------------------------

def test_csv_has_one_row_per_flow_and_sample(sim):
    r = shipped(sim, "two-flows-40g")
    lines = r.csv_text.splitlines()
    assert lines[0] == HEADER
    rows = r.rows()
    samples = 20000 // 10 + 1  # duration_us / sample_us, both ends
    assert len(rows) == 2 * samples
    assert [row["flow"] for row in rows[:4]] == ["0", "1", "0", "1"]
    assert all(row["paused"] in ("0", "1") for row in rows)
    # the table on stdout names each flow
    assert re.search(r"^\s+0 f0\s+dcqcn", r.out, re.M) and re.search(r"^\s+1 f1\s+dcqcn", r.out, re.M)


# ---- fairness and settling ------------------------------------------------------------------------

def test_two_flows_share_40g_fairly(sim):
    """Two DCQCN flows at 40 Gb/s (the second 1 ms later) into 40 Gb/s: each within 5 % of
    20 Gb/s over the last half, Jain >= 0.99."""
    s = shipped(sim, "two-flows-40g").summary
    assert s["window_us"] == [10000.0, 20000.0]
    for f in s["flows"]:
        assert abs(f["throughput_gbps"] - 20) <= 1.0, f
        assert abs(f["mean_rate_gbps"] - 20) <= 1.0, f
        assert f["cnps"] > 0 and f["dropped_packets"] == 0
    assert s["jain"] >= 0.99


def test_incast_8to1_dcqcn_settles_within_10ms(sim):
    """8:1 incast at 100 Gb/s with DCQCN and PFC: settled (SETTLE_*) by 10 ms, the queue bounded
    (by PFC's XOFF plus headroom per ingress port throughout, below Kmax once settled), no drop."""
    r = shipped(sim, "incast-8to1-100g")
    s, rows = r.summary, r.rows()
    settled = settle_time_us(rows, 100.0 / 8)
    assert settled is not None and settled <= 10000, settled
    assert s["dropped_packets"] == 0
    assert s["max_queue_bytes"] <= 8 * (150000 + headroom_bytes(100, 1.0, 1024))
    assert max(int(row["queue_bytes"]) for row in rows if float(row["time_us"]) >= settled) <= 200000
    assert s["jain"] >= 0.99
    assert sum(f["throughput_gbps"] for f in s["flows"]) >= 99.0


def test_incast_pfc_only_pauses_without_drops(sim):
    """No congestion control, PFC on: every sender is paused (often), nothing is dropped, the
    bottleneck stays busy and the buffer never holds more than XOFF + headroom per port."""
    s = shipped(sim, "incast-8to1-pfc-only").summary
    assert s["dropped_packets"] == 0 and s["pauses"] > 0
    for f in s["flows"]:
        assert f["pauses"] > 0 and f["paused_us"] > 0
        assert f["dropped_packets"] == 0
    assert sum(f["throughput_gbps"] for f in s["flows"]) >= 99.0
    assert s["max_buffer_bytes"] <= 8 * (150000 + headroom_bytes(100, 1.0, 1024))


def test_incast_without_pfc_drops_and_counts(sim):
    """No congestion control, no PFC, a 2 MB buffer: drops, counted per flow and in total."""
    s = shipped(sim, "incast-8to1-no-pfc").summary
    assert s["pauses"] == 0
    assert s["dropped_packets"] > 0
    assert s["dropped_packets"] == sum(f["dropped_packets"] for f in s["flows"])
    assert s["dropped_bytes"] == sum(f["dropped_bytes"] for f in s["flows"])
    for f in s["flows"]:
        assert f["dropped_packets"] > 0 and f["dropped_bytes"] == f["dropped_packets"] * 1024
    assert s["max_buffer_bytes"] <= 2000000
    assert sum(f["throughput_gbps"] for f in s["flows"]) >= 99.0


def test_timely_two_flows_run(sim):
    s = shipped(sim, "timely-2flows").summary
    for f in s["flows"]:
        assert f["cc"] == "timely" and f["acks"] > 0 and f["cnps"] == 0
        assert 15 <= f["throughput_gbps"] <= 25, f
    assert sum(f["throughput_gbps"] for f in s["flows"]) >= 38.0


@pytest.mark.parametrize("name", ["two-flows-40g", "incast-8to1-100g", "incast-8to1-pfc-only",
                                  "incast-8to1-no-pfc", "timely-2flows"])
def test_conservation_per_flow(sim, name):
    """sent = received + dropped + still queued in the switch + still on a wire, per flow."""
    for f in shipped(sim, name).summary["flows"]:
        assert f["sent_bytes"] == f["rx_bytes"] + f["dropped_bytes"] + f["queued_bytes"] + f["in_flight_bytes"], f
        assert f["sent_bytes"] > 0


def test_completion_time_by_hand(sim):
    """1 MB alone at 40 Gb/s through a 40 Gb/s port, 1 µs per hop: the first 1024-byte packet
    reaches the switch at 204.8 ns + 1 µs; from then the port sends back to back (store and
    forward: the short last packet waits for the full one before it) for 1e6·8/40 ns, and the last
    byte lands 1 µs later: 202,204.8 ns, reported at the ns at or after it. The second flow starts
    at 500 µs, alone again: the same time."""
    text = """duration_us = 1000.0;
receivers = ( { rate_gbps = 40.0; delay_us = 1.0; } );
flows = ( { cc = "none"; rate_gbps = 40.0; size_bytes = 1000000; delay_us = 1.0; count = 2;
            start_step_us = 500.0; } );
"""
    s = sim.run("fct.cfg", text=text).summary
    fct_ns = 1024 * 8 / 40 + 1000 + 1e6 * 8 / 40 + 1000
    assert fct_ns == 202204.8
    assert [f["completion_us"] for f in s["flows"]] == [202.205, 202.205]
    assert s["last_completion_us"] == 202.205
    for f in s["flows"]:
        assert f["rx_bytes"] == f["sent_bytes"] == 1000000 and f["final_rate_gbps"] == 0


# ---- determinism ---------------------------------------------------------------------------------

def test_same_inputs_same_bytes_other_seed_differs(sim):
    cfg = CFG / "two-flows-40g.cfg"
    a, b = sim.run(cfg), sim.run(cfg)
    assert a.rc == b.rc == 0
    assert a.csv_text == b.csv_text and a.out == b.out
    # run_info says when and how each was run (its own -c/-s paths): the rest is the simulation's
    assert a.summary.pop("run_info")["command_line"] != b.summary.pop("run_info")["command_line"]
    assert json.dumps(a.summary, sort_keys=True) == json.dumps(b.summary, sort_keys=True)
    c = sim.run(cfg, "--seed", "2")  # marking is probabilistic between Kmin and Kmax
    assert c.rc == 0 and c.csv_text != a.csv_text


def test_sampling_does_not_change_the_run(sim):
    """Sampling reads state (α is computed lazily): the run must be the same at any interval."""
    text = (CFG / "incast-8to1-100g.cfg").read_text().replace("sample_us = 10.0;", "sample_us = 997.0;")
    sparse = sim.run("sparse.cfg", text=text).summary
    dense = shipped(sim, "incast-8to1-100g").summary
    keys = ("cnps", "cuts", "sent_bytes", "rx_bytes", "pauses", "ce_marked", "final_rate_gbps")
    for f, g in zip(sparse["flows"], dense["flows"]):
        assert [f[k] for k in keys] == [g[k] for k in keys]


def test_fast_enough(sim):
    """8 senders at 100 Gb/s, 1 KB packets, 20 ms simulated: well under 2 s of CPU."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = sim.run(CFG / "incast-8to1-100g.cfg")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert r.rc == 0
    assert (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime) < 2.0


# ---- rp_replay against hand calculations (the NVIDIA formulas of cc/dcqcn.h) ------------------------

G = 1019  # dce_tcp_g default


def alpha_decay(a, periods):
    """α after `periods` α periods without a CNP: α = G·α/1024 each (integer)."""
    for _ in range(periods):
        a = G * a // 1024
    return a


def replay(sim, name, rp_body, duration_us):
    text = 'scenario = "rp_replay";\nduration_us = %s;\nrp = { %s };\n' % (duration_us, rp_body)
    r = sim.run(name, text=text)
    assert r.rc == 0, r.err
    lines = r.csv_text.splitlines()
    assert lines[0] == "time_us,event,rate_gbps,target_gbps,alpha"
    return [tuple(line.split(",")) for line in lines[1:]]


def kbps(gbps_text):
    return round(float(gbps_text) * 1e6)


def alpha_units(text):
    """The CSV's α (6 decimals) in the NVIDIA profile's 1/1024 units."""
    return round(float(text) * 1024)


def test_rp_replay_first_cut_and_recovery(sim):
    """100 Gb/s, NVIDIA defaults. CNP at 10 µs: the QP's first, α = 1023, no cut (dcqcn.h: the
    cut rule applies from the next CNP on). CNP at 11 µs: in the decrease period [10, 14) µs, so
    the cut comes at 14 µs with α of that moment: α periods of 1 µs from 10 µs; [10, 11) had no
    CNP (the first does not count), [11, 12) had one, [12, 14) none."""
    ev = replay(sim, "rp1.cfg", "rate_gbps = 100.0; cnp_times_us = [10.0, 11.0];", 1000.0)
    a11 = alpha_decay(1023, 1)                 # 1018
    a12 = min(G * a11 // 1024 + (1024 - G), 1023)  # CNP in [11, 12): 1018
    a14 = alpha_decay(a12, 2)                  # 1008
    assert (a11, a12, a14) == (1018, 1018, 1008)
    line = 100_000_000
    cut = min(line * a14 >> 11, line * (100 - 50) // 100)  # rpg_gd 11, rpg_min_dec_fac 50
    rc = line - cut                            # 50,781,250 kb/s
    assert rc == 50_781_250
    assert ev[0] == ("0.000", "start", "100.000000", "100.000000", "%.6f" % (1023 / 1024))
    assert ev[1][:4] == ("10.000", "cnp", "100.000000", "100.000000")
    assert ev[2][:2] == ("11.000", "cnp") and alpha_units(ev[2][4]) == a11
    assert ev[3][:2] == ("14.000", "decrease_timer")
    assert kbps(ev[3][2]) == rc and kbps(ev[3][3]) == line and alpha_units(ev[3][4]) == a14
    # rpg_time_reset 300 µs after the cut: fast recovery (T = BC = 0 < rpg_threshold 1), R_T kept
    rt = line
    rc = rt - (rt - rc) // 2                   # halfway, rounded toward R_T
    assert ev[4][:2] == ("314.000", "increase_timer") and (kbps(ev[4][2]), kbps(ev[4][3])) == (rc, rt)
    # then additive (max(T, BC) = 1 >= threshold): R_T + 5 Mb/s, capped at the line rate
    for i, t in ((5, "614.000"), (6, "914.000")):
        rt = min(rt + 5000, line)
        rc = rt - (rt - rc) // 2
        assert ev[i][:2] == (t, "increase_timer") and (kbps(ev[i][2]), kbps(ev[i][3])) == (rc, rt)
    assert ev[-1][:2] == ("1000.000", "end") and len(ev) == 8


def test_rp_replay_min_dec_fac_and_target_clamp(sim):
    """rpg_min_dec_fac 70: the first cut leaves 70 % (the α cut would take 49 %). A later pair of
    CNPs after two timer increases: R_T = R_C at the cut (clamp_tgt_rate_after_time_inc), and α
    has decayed to 0 by then, so the cut is α's few units from the CNPs at 700 and 701 µs."""
    ev = replay(sim, "rp2.cfg", "rate_gbps = 100.0; cnp_times_us = [10.0, 11.0, 700.0, 701.0]; "
                "dcqcn = { rpg_min_dec_fac = 70; };", 1000.0)
    line = 100_000_000
    rc = line - min(line * 1008 >> 11, line * 30 // 100)
    assert rc == 70_000_000
    got = {(e[0], e[1]): e for e in ev}
    assert kbps(got[("14.000", "decrease_timer")][2]) == rc
    rt = line
    rc = rt - (rt - rc) // 2                   # 314: fast recovery
    rt = min(rt + 5000, line)
    rc = rt - (rt - rc) // 2                   # 614: additive
    assert kbps(got[("614.000", "increase_timer")][2]) == rc == 92_500_000
    a700 = alpha_decay(1008, 700 - 14)         # no CNP from 14 to 700 µs
    assert a700 == 0
    a701 = min(G * a700 // 1024 + 5, 1023)     # [700, 701) saw the CNP at 700
    a702 = min(G * a701 // 1024 + 5, 1023)     # [701, 702) saw the one at 701
    # decrease periods are 4 µs from the first CNP (10 µs): [698, 702) saw CNPs -> cut at 702
    rt = rc
    rc = rc - min(rc * a702 >> 11, rc * 30 // 100)
    e = got[("702.000", "decrease_timer")]
    assert (kbps(e[2]), kbps(e[3]), alpha_units(e[4])) == (rc, rt, a702)


def test_rp_replay_byte_counter(sim):
    """send_gbps 100 in 1024-byte packets (packet k at ceil(k · 81.92 ns)): after the cut at 14 µs
    resets the count, the rpg_byte_reset · 64 = 2,097,088-byte event comes with the 2048th packet
    after it: packet 171 + 2047, at ceil(2218 · 81.92 ns) = 181.699 µs, a fast recovery step."""
    ev = replay(sim, "rp3.cfg", "rate_gbps = 100.0; cnp_times_us = [10.0, 11.0]; send_gbps = 100.0;", 200.0)
    assert 170 * 81.92 < 14000 < 171 * 81.92 and 2048 * 1024 >= 32767 * 64 > 2047 * 1024
    e = [x for x in ev if x[1] == "byte_counter"]
    assert len(e) == 1 and e[0][0] == "181.699"
    assert (kbps(e[0][2]), kbps(e[0][3])) == (100_000_000 - 49_218_750 // 2, 100_000_000)


def test_rp_replay_paper_stages_default_and_kept(sim):
    """Paper profile through the scenario loader: CNPs at 10 and 20 µs (α 0.5) leave R_T 75 Gb/s and
    R_C 56,176,758 kb/s (tests/unit/test_dcqcn.c works them out); the increase timer fires every
    55 µs from 20 µs. The authors' ns-3 stages (the default, ns3_stages) count the event before
    the test: T = 1..4 fast recovery, the fifth (295 µs) additive, R_T + 40 Mb/s. With
    ns3_stages = false the counts before the event decide: five fast steps, additive at 350 µs."""
    body = 'rate_gbps = 100.0; cnp_times_us = [10.0, 20.0]; dcqcn = { profile = "paper"; initial_alpha = 0.5; %s };'
    for name, extra, fast in (("ns3", "", 4), ("kept", "ns3_stages = false;", 5)):
        ev = replay(sim, "rp-paper-%s.cfg" % name, body % extra, 400.0)
        inc = [e for e in ev if e[1] == "increase_timer"]
        assert [e[0] for e in inc] == ["%.3f" % (20 + 55 * k) for k in range(1, 7)], name
        rc, rt = 56_176_758, 75_000_000
        for i, e in enumerate(inc):
            if i >= fast:
                rt += 40_000
            rc = rt - (rt - rc) // 2
            assert (kbps(e[2]), kbps(e[3])) == (rc, rt), (name, e)


# ---- bad scenario files ---------------------------------------------------------------------------

GOOD_NET = """scenario = "network";
duration_us = 100.0;
receivers = ( { name = "r0"; rate_gbps = 40.0; } );
flows = ( { rate_gbps = 40.0; } );
"""

BAD = [
    # (file text, line, setting, words in the message)
    (GOOD_NET + "flowz = 1;\n", 5, "flowz", "unknown setting 'flowz'"),
    (GOOD_NET.replace("flows = ( { rate_gbps = 40.0; } );", "flows = ( { rate_gbps = -5.0; } );"),
     4, "flows.[0].rate_gbps", "out of range"),
    (GOOD_NET.replace("flows = ( { rate_gbps = 40.0; } );", 'flows = ( { rate_gbps = 40.0;\n  cc = "reno"; } );'),
     5, "flows.[0].cc", "allowed: none, dcqcn, timely"),
    (GOOD_NET.replace("flows = ( { rate_gbps = 40.0; } );",
                      "flows = ( { rate_gbps = 40.0;\n  dcqcn = { rpg_gd = 40; }; } );"),
     5, "flows.[0].dcqcn.rpg_gd", "1..31"),
    (GOOD_NET.replace("flows = ( { rate_gbps = 40.0; } );",
                      "flows = ( { rate_gbps = 40.0;\n  dcqcn = { g = 0.5; }; } );"),
     5, "flows.[0].dcqcn.g", 'profile "paper"'),
    (GOOD_NET.replace("flows = ( { rate_gbps = 40.0; } );",
                      'flows = ( { rate_gbps = 40.0; cc = "timely";\n  dcqcn = { }; } );'),
     5, "flows.[0].dcqcn", 'only with cc = "dcqcn"'),
    (GOOD_NET.replace("flows = ( { rate_gbps = 40.0; } );", 'flows = ( { rate_gbps = 40.0; receiver = "r9"; } );'),
     4, "flows.[0].receiver", "no receiver is named 'r9'"),
    (GOOD_NET.replace('receivers = ( { name = "r0"; rate_gbps = 40.0; } );\n', ""),
     1, "receivers", "missing"),
    (GOOD_NET + "switch = {\n  pfc = { xoff_bytes = 1000; xon_bytes = 2000; };\n};\n",
     6, "switch.pfc.xon_bytes", "above xoff_bytes"),
    (GOOD_NET + "switch = { ecn = { kmin_bytes = 10; kmax_bytes = 20; pmax = 1.5; }; };\n",
     5, "switch.ecn.pmax", "out of range"),
    (GOOD_NET + "window_us = [0.0, 200.0];\n", 5, "window_us", "not a window"),
    (GOOD_NET.replace("flows = ( { rate_gbps = 40.0; } );",
                      "flows = ( { rate_gbps = 40.0;\n  size_bytes = 10000000000; } );"),
     5, "flows.[0].size_bytes", "does not fit a 32-bit integer"),
    ('scenario = "rp_replay";\nduration_us = 100.0;\nrp = { rate_gbps = 100.0;\n'
     '  cnp_times_us = [5.0, 3.0]; };\n', 4, "rp.cnp_times_us.[1]", "ascending"),
    ('scenario = "rp_replay";\nduration_us = 100.0;\nflows = ( );\n', 3, "flows", "unknown setting 'flows'"),
    ('scenario = "rp_replay";\nduration_us = 100.0;\nrp = { rate_gbps = 100.0;\n'
     '  dcqcn = { profile = "paper"; hyper_linear = true; }; };\n', 4, "rp.dcqcn.hyper_linear",
     "false with ns3_stages"),
]


@pytest.mark.parametrize("case", range(len(BAD)))
def test_bad_scenario_names_file_line_setting(sim, case):
    text, line, setting, words = BAD[case]
    r = sim.run("bad.cfg", text=text)
    assert r.rc != 0
    msg = r.err.strip()
    m = re.match(r"^(\S+):(\d+): (\S+): (.+)$", msg)
    assert m, msg
    assert m.group(1).endswith("bad.cfg") and int(m.group(2)) == line and m.group(3) == setting, msg
    assert words in m.group(4), msg
    assert r.summary is None


def test_syntax_error_and_missing_file(sim):
    r = sim.run("bad.cfg", text='duration_us = 100.0;\nflows = ( { rate_gbps = 40.0 } ;\n')
    assert r.rc != 0 and re.match(r"^\S*bad\.cfg:2: syntax error", r.err.strip()), r.err
    r = sim.run(Path("/nonexistent/x.cfg"))
    assert r.rc != 0 and "/nonexistent/x.cfg: cannot read" in r.err


# ---- the plot script ------------------------------------------------------------------------------

def test_plot_script_writes_png(sim, tmp_path):
    if subprocess.run([sys.executable, "-c", "import matplotlib"], capture_output=True).returncode != 0:
        pytest.skip("matplotlib is not installed (python3-matplotlib)")
    src = tmp_path / "samples.csv"
    src.write_text(shipped(sim, "two-flows-40g").csv_text)
    png = tmp_path / "plot.png"
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "plot-ccsim.py"), str(src), "-o", str(png)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
