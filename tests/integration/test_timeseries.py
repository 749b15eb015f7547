"""Per-interval time series (run.timeseries, docs/monitoring.md) and their plots
(scripts/plot-run.py): rows per port and flow group every stats interval, the rates adding up to
the report's totals, latency percentiles of each interval, CNPs and PFC per interval."""
import csv
import subprocess
import sys
from pathlib import Path

from test_engine import MAC_B, cfg, flow, pair_ports, port, role

ROOT = Path(__file__).resolve().parents[2]


def test_rows_per_interval_add_up_and_plot(engine, tmp_path):
    ts = tmp_path / "ts.csv"
    ports, ip_b = pair_ports("ts")
    f = flow("w", "a", MAC_B, ip_b, transport='"uc"', ops="{ write = 1; }", message_size=1000, qpn=0x10,
             dest_qpn=0x110, rate_gbps=1.0, stop="{ seconds = 2.0; }", latency='{ mode = "oneway"; }')
    gen = 'pfc_generators = ( { port = "b"; priorities = [0]; quanta = 100; rate_pps = 50.0; } );'
    rc, rep, out = engine.run(cfg(ports, [role(1, "a", "txrx"), role(1, "b", "txrx")], [f],
                                  run=gen + '\nrun = { timeseries = "%s"; stats_interval_s = 0.5; };' % ts), "-q")
    assert rc == 0, out
    rows = list(csv.DictReader(ts.open()))
    assert rep["timeseries"]["rows"] == len(rows) and rows
    ports = {r["name"] for r in rows if r["kind"] == "port"}
    assert ports == {"a", "b"} and {r["name"] for r in rows if r["kind"] == "flow"} == {"w"}
    times = sorted({float(r["time_s"]) for r in rows})
    assert len(times) >= 4 and all(b > a for a, b in zip(times, times[1:]))
    # the intervals' rates times their lengths give the report's totals (the last row covers the drain)
    prev, tx_bits, gp_bits = 0.0, 0.0, 0.0
    for t in times:
        a = next(r for r in rows if r["kind"] == "port" and r["name"] == "a" and float(r["time_s"]) == t)
        w = next(r for r in rows if r["kind"] == "flow" and float(r["time_s"]) == t)
        tx_bits += float(a["tx_gbps"]) * 1e9 * (t - prev)
        gp_bits += float(w["goodput_gbps"]) * 1e9 * (t - prev)
        prev = t
    assert abs(tx_bits - rep["ports"][0]["tx_bytes"] * 8) < 0.01 * rep["ports"][0]["tx_bytes"] * 8
    assert abs(gp_bits - rep["flows"][0]["rx_messages"] * 1000 * 8) < 0.01 * gp_bits
    mid = [r for r in rows if r["kind"] == "port" and r["name"] == "b" and 0.4 < float(r["time_s"]) < 1.8]
    assert mid and all(0.8 < float(r["rx_gbps"]) < 1.2 for r in mid), mid
    assert all(int(r["lat_samples"]) > 0 and 0 < int(r["lat_p50_ns"]) <= int(r["lat_p99_ns"]) for r in mid)
    a_mid = [r for r in rows if r["kind"] == "port" and r["name"] == "a" and 0.4 < float(r["time_s"]) < 1.8]
    assert sum(int(r["pfc_rx"]) for r in a_mid) > 20 and sum(float(r["paused_ms"]) for r in a_mid) > 0
    png = tmp_path / "ts.png"
    p = subprocess.run(["/usr/bin/python3", str(ROOT / "scripts" / "plot-run.py"), str(ts), "-o", str(png)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and png.stat().st_size > 10000, p.stderr


def test_unwritable_timeseries_path_stops_first(engine, tmp_path):
    ports, ip_b = pair_ports("ts2")
    (tmp_path / "no").write_text("")  # a missing folder would be made: a file stands in the way
    rc, rep, out = engine.run(cfg(ports, [role(1, "a", "txrx")], [],
                                  run='run = { timeseries = "%s"; };' % (tmp_path / "no" / "ts.csv")))
    assert rc == 5 and "run.timeseries: cannot write" in out and rep is None, out


def test_the_drain_ends_when_the_runs_own_frames_stop(engine, tmp_path):
    """After TX stops, RX goes on until the run's frames in flight have arrived (50 ms quiet, 2 s
    at most). net_null makes a frame at every poll, none of them RoCE, PFC or ARP: they must not
    keep the drain open (before, every run on net_null ended 2 s late). The last time-series row
    is written after the drain, so its time less the traffic's duration is the drain's length."""
    ts = tmp_path / "ts.csv"
    p = port("n", "net_null0", "02:00:00:00:00:01", "192.168.3.1")
    f = flow("f", "n", MAC_B, "192.168.3.2", transport='"uc"', message_size=1024, qpn=2, dest_qpn=3, rate_gbps=0.1)
    rc, rep, out = engine.run(cfg([p], [role(1, "n", "txrx")], [f], run='run = { timeseries = "%s"; };' % ts),
                              "-d", "0.2")
    assert rc == 0, out
    assert rep["ports"][0]["rx_other"] > 1000          # net_null's frames went on through the drain
    last = max(float(r["time_s"]) for r in csv.DictReader(ts.open()))
    # 50 ms of quiet, checked every 5 ms; a busy machine adds its hold-ups of the main lcore
    assert last - rep["duration_s"] < 0.5, (last, rep["duration_s"])
