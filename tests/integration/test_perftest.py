"""perftest-style front ends (roce-engine write_bw|write_lat|send_bw|send_lat|read_bw|read_lat;
docs/perftest.md), on the built-in virtual topology (two ports of one process joined by a ring
pair) unless said otherwise.

* Each of the six tests prints perftest's table, whose numbers are the JSON report's: BW average
  from the report's goodput (RC: acknowledged messages) over its duration, write/send latency half
  the report's request -> ACK (RC) or ping-pong (UC, UD) round trip, percentile for percentile;
  read latency from a capture of the requester's port, checked against tshark's reading of it.
* Flags change the generated traffic: -q (QPs in the report), -m (packets per message, frame
  sizes), -s, --tclass (DSCP and ECN of the captured frames), -D, --report_gbits, -a, --json.
* Bad flags: one clear line and exit status 2, before any engine runs.
* --server and a client in two processes over a memif pair (--device).
"""
import json
import math
import os
import re
import signal
import subprocess
import time
from collections import Counter
from decimal import Decimal
from pathlib import Path

import pytest
from scapy.all import IP, UDP, Ether, IPv6, rdpcap

from conftest import engine_path
from test_capture import tshark_rows

LOCAL_MAC = "02:00:00:00:70:01"
MIB = 1048576.0


def exe():
    return str(engine_path().resolve())  # the runs' working directory is the test's own


class Perftest:
    def __init__(self, tmp_path):
        self.tmp = tmp_path
        self.n = 0

    def run(self, test, *args, report=True, timeout=120):
        self.n += 1
        rep = self.tmp / ("pt%d.json" % self.n)
        cmd = [exe(), test] + [str(a) for a in args]
        if report:
            cmd += ["--report", str(rep)]
        env = dict(os.environ, TMPDIR=str(self.tmp))  # the work directories too (--keep leaves them)
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=str(self.tmp), env=env)
        data = json.loads(rep.read_text()) if report and rep.exists() else None
        return r.returncode, r.stdout, r.stderr, data


@pytest.fixture
def pt(tmp_path):
    if not engine_path().exists():
        pytest.fail("roce-engine not found at %s (build it, or set $ROCE_ENGINE)" % engine_path())
    return Perftest(tmp_path)


def table(stdout, last=False):
    """The rows under the (first, or last) ' #bytes' heading, split into their fields."""
    lines = stdout.splitlines()
    starts = [i for i, l in enumerate(lines) if l.startswith(" #bytes")]
    start = starts[-1 if last else 0]
    rows = []
    for l in lines[start + 1:]:
        if l.startswith("---") or not l.strip():
            break
        rows.append(l.split())
    return lines[start], rows


def f2(x):
    return "%.2f" % x


def mbs(gbps):
    return gbps * 1e9 / 8 / MIB


def check_common(out, rep, path):
    assert rep["runs"] and all(r["stopped_by"] in ("flows_done", "duration") for r in rep["runs"])
    assert out.rstrip().splitlines()[-1] == " report: %s" % path
    assert " Link type       : Ethernet" in out


# ---- bandwidth ----

def test_write_bw_table_is_the_reports_goodput(pt):
    rc, out, err, rep = pt.run("write_bw", "-n", 2000, "-s", 16384)
    assert rc == 0, out + err
    check_common(out, rep, pt.tmp / "pt1.json")
    assert "RDMA_Write BW Test" in out and " Connection type : RC" in out and " Mtu             : 4096[B]" in out
    assert " local address: LID 0000 QPN 0x0100 PSN 000000" in out
    assert " GID: 00:00:00:00:00:00:00:00:00:00:255:255:192:168:70:02" in out
    head, rows = table(out)
    assert head.split() == ["#bytes", "#iterations", "BW", "peak[MB/sec]", "BW", "average[MB/sec]", "MsgRate[Mpps]"]
    assert len(rows) == 1
    size, iters, peak, avg, rate = rows[0]
    run = rep["runs"][0]
    (fl,) = run["flows"]
    assert fl["transport"] == "rc" and fl["rc"]["completions"] == 2000 and fl["rx_messages"] == 2000
    assert fl["tx_packets"] == 2000 * 4  # 16 KiB in 4 KiB packets
    assert (size, iters) == ("16384", "2000")
    assert abs(float(avg) - mbs(fl["goodput_gbps"])) <= 0.006
    assert float(rate) == pytest.approx(2000 / run["duration_s"] / 1e6, abs=1e-6)
    assert float(peak) >= float(avg)
    res = rep["perftest"]["results"][0]
    assert (f2(res["bw_peak"]), f2(res["bw_average"]), "%.6f" % res["msg_rate_mpps"]) == (peak, avg, rate)
    assert rep["perftest"]["test"] == "write_bw" and rep["perftest"]["iterations"] == 2000


def test_send_bw_ud_sends_at_most_the_mtu(pt):
    rc, out, err, rep = pt.run("send_bw", "-c", "UD", "-n", 500)
    assert rc == 0, out + err
    assert "Send BW Test" in out and " Connection type : UD" in out
    assert " Note: max msg size in UD is the MTU: 65536 bytes are sent as 4096" in out
    _, [[size, iters, peak, avg, rate]] = table(out)
    (fl,) = rep["runs"][0]["flows"]
    assert fl["transport"] == "ud" and fl["rx_messages"] == 500 and fl["tx_packets"] == 500
    assert (size, iters) == ("4096", "500")
    assert abs(float(avg) - mbs(fl["goodput_gbps"])) <= 0.006


def test_read_bw_counts_completed_reads(pt):
    rc, out, err, rep = pt.run("read_bw", "-n", 1000, "-s", 8192, "--report_gbits")
    assert rc == 0, out + err
    assert "RDMA_Read BW Test" in out and " Outstand reads  : 128" in out
    head, [[size, iters, peak, avg, rate]] = table(out)
    assert "BW average[Gb/sec]" in head
    run = rep["runs"][0]
    (fl,) = run["flows"]
    assert fl["rc"]["completions"] == 1000 and fl["rc"]["read_responses_rx"] == 2000  # 8 KiB: 2 responses
    gbps = 1000 * 8192 * 8 / run["duration_s"] / 1e9
    assert (size, iters) == ("8192", "1000")
    assert abs(float(avg) - gbps) <= 0.006
    assert float(peak) >= float(avg)


def test_report_gbits_and_duration(pt):
    rc, out, err, rep = pt.run("send_bw", "-D", 1, "--report_gbits")
    assert rc == 0, out + err
    run = rep["runs"][0]
    assert run["stopped_by"] == "duration" and 0.95 <= run["duration_s"] <= 1.5
    assert rep["perftest"]["duration_s"] == 1 and rep["perftest"]["iterations"] is None
    head, [[size, iters, peak, avg, rate]] = table(out)
    assert "BW peak[Gb/sec]" in head
    (fl,) = run["flows"]
    assert int(iters) == fl["rc"]["completions"] > 0
    # RC: acknowledged messages x size over the run; the receiver's goodput differs by what was
    # still in flight when the duration ended
    assert abs(float(avg) - fl["rc"]["completions"] * 65536 * 8 / run["duration_s"] / 1e9) <= 0.006
    assert float(avg) == pytest.approx(fl["goodput_gbps"], rel=0.01)
    assert float(peak) >= float(avg)


def test_flags_shape_the_traffic(pt):
    cap = pt.tmp / "w.pcapng"
    rc, out, err, rep = pt.run("write_bw", "-q", 4, "-n", 20, "-s", 8192, "-m", 1024, "--tclass", 41, "--capture", cap)
    assert rc == 0, out + err
    assert " Number of qps   : 4" in out and " Mtu             : 1024[B]" in out
    assert " Traffic class   : 41 (DSCP 10, ECN 1)" in out
    assert out.count(" local address:") == 4 and " remote address: LID 0000 QPN 0x0203 PSN 000000" in out
    _, [[size, iters, peak, avg, rate]] = table(out)
    flows = rep["runs"][0]["flows"]
    assert [f["qpn"] for f in flows] == [0x100, 0x101, 0x102, 0x103]
    assert [f["dest_qpn"] for f in flows] == [0x200, 0x201, 0x202, 0x203]
    # 8 KiB in 1 KiB packets (with a capture, the engine may send a QP's first packet twice: its
    # RC retry timer can start before the capture's set-up ends)
    assert all(f["tx_packets"] - f["retransmits"] == 20 * 8 and f["rc"]["completions"] == 20 for f in flows)
    assert (size, iters) == ("8192", "80")
    assert abs(float(avg) - mbs(sum(f["goodput_gbps"] for f in flows))) <= 0.006
    sent = [p for p in rdpcap(str(cap)) if p[Ether].src == LOCAL_MAC and UDP in p]
    assert len(sent) == sum(f["tx_packets"] for f in flows)
    assert {p[IP].tos for p in sent} == {41}  # DSCP 10 << 2 | ECN 1
    # WRITE FIRST: Ethernet 14, IPv4 20, UDP 8, BTH 12, RETH 16, 1024 payload, ICRC 4
    assert max(len(p) for p in sent) == 14 + 20 + 8 + 12 + 16 + 1024 + 4


def test_all_sizes(pt):
    rc, out, err, rep = pt.run("send_bw", "-c", "UD", "-a", "-m", 256, "-n", 50)
    assert rc == 0, out + err
    _, rows = table(out)
    assert [r[0] for r in rows] == [str(2 ** k) for k in range(1, 9)]  # 2 .. 256, the MTU
    assert all(r[1] == "50" for r in rows)
    assert [r["bytes"] for r in rep["perftest"]["results"]] == [2 ** k for k in range(1, 9)]
    assert len(rep["runs"]) == 8
    for r, run in zip(rows, rep["runs"]):
        assert abs(float(r[3]) - mbs(run["flows"][0]["goodput_gbps"])) <= 0.006


# ---- latency ----

@pytest.mark.parametrize("test,conn,kind", [
    ("write_lat", "RC", "ack"), ("send_lat", "RC", "ack"), ("write_lat", "UC", "rtt"), ("send_lat", "UD", "rtt")])
def test_latency_is_half_the_reports_round_trip(pt, test, conn, kind):
    rc, out, err, rep = pt.run(test, "-c", conn, "-n", 300)
    assert rc == 0, out + err
    check_common(out, rep, pt.tmp / "pt1.json")
    assert " Note: messages of 2 bytes are sent as 24: latency probes need 24 payload bytes" in out
    assert " Note: t_* are half the round trip, as perftest's" in out
    head, [row] = table(out)
    assert head.split()[2:7] == ["t_min[usec]", "t_max[usec]", "t_typical[usec]", "t_avg[usec]", "t_stdev[usec]"]
    (fl,) = rep["runs"][0]["flows"]
    s = fl["latency_ns"][kind]
    assert s["count"] == 300 and row[:2] == ["24", "300"]
    want = [f2(s[k] / 2 / 1000.0) for k in ("min", "max", "p50", "mean", "stddev", "p99", "p99_9")]
    assert row[2:] == want
    res = rep["perftest"]["results"][0]
    assert [f2(res[k]) for k in ("t_min_us", "t_max_us", "t_typical_us", "t_avg_us", "t_stdev_us", "t_99_us",
                                 "t_99_9_us")] == want


def test_read_lat_is_the_captured_round_trip(pt):
    cap = pt.tmp / "r.pcapng"
    rc, out, err, rep = pt.run("read_lat", "-n", 300, "-s", 64, "--capture", cap)
    assert rc == 0, out + err
    assert "RDMA_Read Latency Test" in out and " Note: t_* are the full READ round trip (request -> response)" in out
    _, [row] = table(out)
    assert row[:2] == ["64", "300"]
    # tshark's times: READ request (12) out, READ response ONLY (16) back, one in flight; from a
    # request's first copy to its first answer
    sent, rtts = {}, []
    for t, op, psn in tshark_rows(cap, "frame.time_epoch", "infiniband.bth.opcode", "infiniband.bth.psn"):
        if op == "12":
            sent.setdefault(psn, Decimal(t))
        elif op == "16" and psn in sent:  # a request sent twice is answered twice: the first counts
            rtts.append(float((Decimal(t) - sent.pop(psn)) * 1000000))  # µs
    rtts.sort()
    n = len(rtts)
    assert n == 300
    mean = sum(rtts) / n
    want = [rtts[0], rtts[-1], rtts[math.ceil(n * 0.5) - 1], mean, math.sqrt(sum((x - mean) ** 2 for x in rtts) / n),
            rtts[math.ceil(n * 0.99) - 1], rtts[math.ceil(n * 0.999) - 1]]
    got = [float(x) for x in row[2:]]
    for g, w in zip(got, want):
        assert abs(g - w) <= 0.0051, (got, want)
    lat = rep["perftest"]["results"][0]["latency_ns"]
    assert lat["count"] == 300 and f2(lat["p99"] / 1000) == row[7]


def test_json_instead_of_the_table(pt):
    rc, out, err, rep = pt.run("write_lat", "-n", 50, "--json")
    assert rc == 0, out + err
    printed = json.loads(out)
    assert printed == rep and printed["perftest"]["results"][0]["iterations"] == 50


# ---- bad flags ----

@pytest.mark.parametrize("test,args,says", [
    ("write_bw", ["-s", "abc"], "-s/--size: 'abc' is not a size in bytes"),
    ("write_bw", ["-s", "0"], "is not a size in bytes, 1..1073741824"),
    ("write_bw", ["-m", "1000"], "is not an IB MTU: 256, 512, 1024, 2048 or 4096"),
    ("write_bw", ["-c", "XYZ"], "is not RC, UC or UD"),
    ("write_bw", ["-c", "UD"], "UD connection only possible with SEND"),
    ("read_lat", ["-c", "UC"], "RDMA READ needs RC"),
    ("send_lat", ["-q", "2"], "multiple QPs only available on bw tests"),
    ("send_bw", ["--tclass", "256"], "--tclass: '256' is not a traffic class byte"),
    ("send_bw", ["-a", "-D", "2"], "duration mode doesn't support running on all sizes"),
    ("send_bw", ["--bogus"], "unrecognized option '--bogus'\n Invalid Command or flag."),
    ("send_bw", ["-Y"], "invalid option -- 'Y'\n Invalid Command or flag."),
    ("send_bw", ["--dst-ip", "10.0.0.2"], "need --device"),
    ("send_bw", ["--device", "net_null0", "--src-ip", "10.0.0.1", "10.0.0.2"], "--device needs --dst-ip and --dst-mac"),
    ("send_bw", ["--device", "0000:3b:00.0", "--src-ip", "10.0.0.1", "--dst-mac", "02:00:00:00:00:02", "-m", "4096",
                 "10.0.0.2"], "-m 4096 does not fit the port's IP MTU of 1500"),
    ("write_lat", ["--lcores", "1"], "needs two lcores at least"),
    ("write_bw", ["-d", "mlx5_99", "--src-ip", "10.0.0.1", "--dst-mac", "02:00:00:00:00:02", "10.0.0.2"],
     "-d/--ib-dev: 'mlx5_99' is not a DPDK port (net_<driver><n>, ring:LINK:a|b or a PCI address) nor an RDMA device"),
])
def test_bad_flags(pt, test, args, says):
    rc, out, err, rep = pt.run(test, *args)
    assert rc == 2 and says in err, (rc, out, err)
    assert out == "" and rep is None


# ---- any DPDK port: --server at the far end, in another process ----

def test_server_and_client_over_memif(pt):
    sock = pt.tmp / "pt.sock"
    common = ["--vdev-args", "id=0,socket=%s,socket-abstract=no" % sock]
    srv_rep = pt.tmp / "server.json"
    server = subprocess.Popen([exe(), "write_bw", "--server", "--device", "net_memif0", "--vdev-args",
                               "role=server," + common[1], "--src-ip", "10.9.0.2", "--src-mac", "02:00:00:00:09:02",
                               "-q", "2", "--report", str(srv_rep)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=str(pt.tmp))
    try:
        deadline = time.time() + 30
        while not sock.exists() and time.time() < deadline and server.poll() is None:
            time.sleep(0.05)
        assert sock.exists(), "the server made no memif socket"
        rc, out, err, rep = pt.run("write_bw", "--device", "net_memif0", "--vdev-args", "role=client," + common[1],
                                   "--src-ip", "10.9.0.1", "--dst-mac", "02:00:00:00:09:02", "-q", 2, "-n", 50,
                                   "-s", 4096, "10.9.0.2")
    finally:
        server.send_signal(signal.SIGINT)
        s_out, s_err = server.communicate(timeout=60)
    assert rc == 0, out + err
    _, [[size, iters, peak, avg, rate]] = table(out)
    assert (size, iters) == ("4096", "100")
    flows = rep["runs"][0]["flows"]
    assert all(f["receiver"] is None and f["rc"]["completions"] == 50 for f in flows)
    assert server.returncode == 0, s_out + s_err
    assert " served " in s_out
    srv = json.loads(srv_rep.read_text())
    assert srv["perftest"]["server"] is True and srv["runs"][0]["stopped_by"] == "signal"
    got = {q["qpn"]: q["messages"] for q in srv["runs"][0]["rx_qps"]}
    assert got == {0x200: 50, 0x201: 50}


# ---- perftest's flags, carried with perftest's meaning (docs/perftest.md's flag table) ----

ROOT = Path(__file__).resolve().parents[2]


def project_version():
    m = re.search(r"version\s*:\s*'([^']+)'", (ROOT / "meson.build").read_text())
    return m.group(1)


def test_help_lists_every_flag(pt):
    rc, out, err, rep = pt.run("write_bw", "-h", report=False)
    assert rc == 0 and out.startswith("usage: roce-engine write_bw [flags] [DST_IP]"), err
    for flag in ("-b, --bidirectional", "--run_infinitely", "--rate_limit=RATE", "--out_json_file=FILE",
                 "-I/--inline_size", "--use_cuda", "--report=FILE.json"):
        assert flag in out, flag


def test_version(pt):
    rc, out, err, rep = pt.run("write_bw", "-V", report=False)
    assert rc == 0, err
    assert re.fullmatch(r"Version: %s( \(git \S+\))?\n" % re.escape(project_version()), out), out


@pytest.mark.parametrize("test,iters", [("write_bw", 5000), ("send_bw", 1000), ("read_bw", 1000)])
def test_default_iterations_and_tx_depth_are_perftests(pt, test, iters):
    # perftest: DEF_ITERS_WB 5000 for write_bw, DEF_ITERS 1000 for the others; DEF_TX_BW 128
    rc, out, err, rep = pt.run(test, "-s", 4096)
    assert rc == 0, out + err
    _, [row] = table(out)
    assert row[1] == str(iters) and rep["perftest"]["iterations"] == iters
    assert " TX depth        : 128" in out
    (fl,) = rep["runs"][0]["flows"]
    assert fl["rc"]["completions"] == iters
    # perftest's depth runs as it is: the engine's RC window holds 128 messages
    assert "runs as" not in out
    assert rep["perftest"]["tx_depth"] == 128 and rep["perftest"]["window"] == 128


def test_tx_depth_beyond_the_rc_window_is_said(pt):
    rc, out, err, rep = pt.run("write_bw", "-s", 4096, "-t", 200, "-n", 1000)
    assert rc == 0, out + err
    assert "TX depth 200 runs as 128" in out
    assert rep["perftest"]["tx_depth"] == 200 and rep["perftest"]["window"] == 128


def in_flight(cap, request_op, answer_op):
    """Most PSNs a QP had out unanswered at any moment of a capture, as tshark reads it."""
    sent, answered, most = -1, -1, 0
    for op, psn in tshark_rows(cap, "infiniband.bth.opcode", "infiniband.bth.psn"):
        if op == request_op:
            sent = max(sent, int(psn))
        elif op == answer_op:
            answered = max(answered, int(psn))
        most = max(most, sent - answered)
    return most


def test_tx_depth_is_the_number_in_flight(pt):
    cap = pt.tmp / "t.pcapng"
    rc, out, err, rep = pt.run("write_bw", "-t", 4, "-n", 300, "-s", 4096, "--capture", cap)
    assert rc == 0, out + err
    assert " TX depth        : 4" in out
    assert in_flight(cap, "10", "17") == 4  # RC WRITE ONLY out, ACKs back: never more than 4 unanswered


def test_outs_is_the_number_of_reads_in_flight(pt):
    cap = pt.tmp / "o.pcapng"
    rc, out, err, rep = pt.run("read_bw", "-o", 3, "-n", 300, "-s", 4096, "--capture", cap)
    assert rc == 0, out + err
    assert " Outstand reads  : 3" in out and " OUT 0x03" in out
    assert in_flight(cap, "12", "16") == 3  # READ requests out, READ RESPONSE ONLY back


def test_size_suffixes(pt):
    rc, out, err, rep = pt.run("write_bw", "-s", "4K", "-n", 20)
    assert rc == 0, out + err
    _, [row] = table(out)
    assert row[0] == "4096" and rep["runs"][0]["flows"][0]["message_bytes"] == 20 * 4096


@pytest.mark.parametrize("test,conn", [("write_bw", "RC"), ("send_bw", "UD")])
def test_bidirectional_both_ends_send_and_both_are_reported(pt, test, conn):
    cap = pt.tmp / "b.pcapng"
    rc, out, err, rep = pt.run(test, "-b", "--report-both", "-c", conn, "-n", 500, "-s", 1024, "--capture", cap)
    assert rc == 0, out + err
    assert "%s Bidirectional BW Test" % ("RDMA_Write" if test == "write_bw" else "Send") in out
    run = rep["runs"][0]
    by_group = {}
    for f in run["flows"]:
        by_group.setdefault(f["group"], []).append(f)
    assert sorted(by_group) == ["perftest", "perftest_b"]
    assert by_group["perftest"][0]["port"] == "local" and by_group["perftest_b"][0]["port"] == "remote"
    # both directions on the wire: the local port's capture has the requests it sent and those it got
    sent = Counter(p[Ether].src for p in rdpcap(str(cap)) if UDP in p and len(p) > 1000)
    assert sent == {LOCAL_MAC: 500, "02:00:00:00:70:02": 500}, sent
    lines = out.splitlines()
    local_at, remote_at = lines.index(" Local results: "), lines.index(" Remote results: ")
    sums = table(out)[1][0]
    local, remote = lines[local_at + 3].split(), lines[remote_at + 3].split()
    # each direction from its own flow group; the first row is their sum, as perftest's client prints
    for row, group in ((local, "perftest"), (remote, "perftest_b")):
        (fl,) = by_group[group]
        assert row[:2] == ["1024", "500"]
        if conn == "RC":  # acknowledged messages over the run
            assert fl["rc"]["completions"] == 500
            assert abs(float(row[3]) - mbs(500 * 1024 * 8 / run["duration_s"] / 1e9)) <= 0.006
        else:  # what the other end received
            assert fl["rx_messages"] == 500 and abs(float(row[3]) - mbs(fl["goodput_gbps"])) <= 0.006
    assert sums[1] == "500"
    assert abs(float(sums[3]) - (float(local[3]) + float(remote[3]))) <= 0.011
    dirs = rep["perftest"]["results"][0]["directions"]
    assert [d["iterations"] for d in dirs] == [500, 500]


def test_reversed_the_far_end_sends(pt):
    rc, out, err, rep = pt.run("write_bw", "--reversed", "-n", 100, "-s", 4096)
    assert rc == 0, out + err
    flows = rep["runs"][0]["flows"]
    assert [(f["port"], f["rc"]["completions"]) for f in flows] == [("remote", 100)]
    assert {q["port"] for q in rep["runs"][0]["rx_qps"] if q["qpn"] == 0x100} == {"local"}


def test_run_infinitely_prints_every_interval_until_ctrl_c(pt):
    rep_path = pt.tmp / "inf.json"
    p = subprocess.Popen([exe(), "write_bw", "--run_infinitely", "-D", "0.5", "-s", "65536", "--report_gbits",
                          "--report", str(rep_path)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=str(pt.tmp))
    lines, rows = [], 0
    deadline = time.time() + 60
    try:
        while rows < 2 and time.time() < deadline:
            line = p.stdout.readline()
            if not line:
                break
            lines.append(line)
            rows += bool(re.match(r" 65536 +\d+ ", line))
    finally:
        p.send_signal(signal.SIGINT)
        rest, err = p.communicate(timeout=60)
    out = "".join(lines) + rest
    assert p.returncode == 0, out + err
    assert rows == 2, out + err
    assert " User stopped traffic" in out and out.rstrip().endswith(" report: %s" % rep_path)
    rep = json.loads(rep_path.read_text())
    assert rep["runs"][0]["stopped_by"] == "signal"
    assert rep["perftest"]["run_infinitely_interval_s"] == 0.5
    _, shown = table(out)
    res = rep["perftest"]["results"]
    assert len(shown) == len(res) >= 2
    for row, r in zip(shown, res):
        # perftest measures no peak when it runs forever; each row is one interval of about 0.5 s
        assert row[0] == "65536" and int(row[1]) > 0 and row[2] == "0.00"
        assert 0.495 <= r["seconds"] <= 0.55
        assert float(row[3]) == pytest.approx(int(row[1]) * 65536 * 8 / r["seconds"] / 1e9, rel=0.002, abs=0.006)
    # no interval counts more than was sent
    assert sum(int(r[1]) for r in shown) <= rep["runs"][0]["flows"][0]["messages"]


def capture_span(cap, src_mac, op="10"):
    """Seconds from the first to the last request a capture has from src_mac, and their count."""
    times = [float(t) for t, o, s in tshark_rows(cap, "frame.time_epoch", "infiniband.bth.opcode", "eth.src")
             if o == op and s == src_mac]
    return times[-1] - times[0], len(times)


@pytest.mark.parametrize("units,limit,msgs_per_s,more", [
    ("g", 0.1, 0.1e9 / (4096 * 8), []),  # Gb/s of payload (perftest's default unit)
    ("M", 10, 10 * MIB / 4096, ["--rate_limit_type", "HW"]),  # MiB/s of payload
    ("p", 2000, 2000, ["--burst_size", 8]),  # messages a second
])
def test_rate_limit_limits_the_rate_over_all_qps(pt, units, limit, msgs_per_s, more):
    cap = pt.tmp / "rate.pcapng"
    rc, out, err, rep = pt.run("write_bw", "-q", 2, "-n", 100, "-s", 4096, "--rate_limit", limit, "--rate_units", units,
                               "--rate_limit_type", "SW", *more, "--capture", cap)
    assert rc == 0, out + err
    assert ("--burst_size: accepted, no effect: the engine paces every packet" in out) == bool(more and more[0] ==
                                                                                               "--burst_size")
    span, n = capture_span(cap, LOCAL_MAC)
    assert n - sum(f["retransmits"] for f in rep["runs"][0]["flows"]) == 200
    # 200 messages over both QPs at the limit: 199 gaps of 1 / rate. The engine keeps each QP on its
    # schedule: after the lcore ran late it catches up, by at most 10 ms (docs/engine.md#pacing); unpaced,
    # the 200 would take well under 10 ms
    want = 199 / msgs_per_s
    assert want - 0.011 <= span <= 1.25 * want + 0.02, (span, want)
    _, [row] = table(out)
    assert float(row[4]) <= msgs_per_s / 1e6 * 1.03  # MsgRate[Mpps]


@pytest.mark.parametrize("test,args,key", [
    ("write_bw", ["--output=bandwidth"], "bw_average"),
    ("send_bw", ["--output=message_rate", "--report_gbits"], "msg_rate_mpps"),
    ("write_lat", ["--output=latency"], "t_avg_us"),
])
def test_output_prints_one_number(pt, test, args, key):
    rc, out, err, rep = pt.run(test, "-n", 300, *args)
    assert rc == 0, out + err
    assert re.fullmatch(r"\d+\.\d{6}\n", out), out  # perftest's "%lf\n" and nothing else
    assert float(out) == pytest.approx(rep["perftest"]["results"][0][key], abs=1e-6)


def test_out_json_file_has_perftests_fields(pt):
    path = pt.tmp / "pt_out.json"
    rc, out, err, rep = pt.run("write_bw", "-n", 300, "-s", 8192, "-q", 2, "--out_json", "--out_json_file", path)
    assert rc == 0, out + err
    j = json.loads(path.read_text())
    info, res = j["test_info"], j["results"]
    assert info["test"] == "RDMA_Write_BW_Test" and info["Connection_type"] == "RC"
    assert info["Number_of_qps"] == 2 and info["Mtu"] == 4096 and info["Link_type"] == "Ethernet"
    assert info["TX_depth"] == 128
    _, [row] = table(out)
    assert list(res) == ["MsgSize", "n_iterations", "BW_peak", "BW_average", "MsgRate"]  # perftest's order
    assert [str(res["MsgSize"]), str(res["n_iterations"]), f2(res["BW_peak"]), f2(res["BW_average"]),
            "%.6f" % res["MsgRate"]] == row


def test_out_json_latency_in_the_working_directory(pt):
    rc, out, err, rep = pt.run("send_lat", "-n", 200, "--out_json")
    assert rc == 0, out + err
    j = json.loads((pt.tmp / "perftest_out.json").read_text())  # perftest's default name, in the cwd
    assert j["test_info"]["test"] == "Send_Latency_Test"
    res = j["results"]
    keys = ["t_min", "t_max", "t_typical", "t_avg", "t_stdev", "percentile_99", "percentile_99.9"]
    assert list(res) == ["MsgSize", "n_iterations"] + keys
    _, [row] = table(out)
    assert [str(res["MsgSize"]), str(res["n_iterations"])] + [f2(res[k]) for k in keys] == row


def test_no_peak(pt):
    rc, out, err, rep = pt.run("write_bw", "-N", "-n", 500, "-s", 4096)
    assert rc == 0, out + err
    _, [row] = table(out)
    assert row[2] == "0.00" and float(row[3]) > 0
    assert rep["perftest"]["results"][0]["bw_peak_from"] == "not measured (-N)"


@pytest.mark.parametrize("args,status,says", [
    (["-w", "1e9"], 6, "Error: BW result is below bw limit"),
    (["-y", "1000"], 6, "Error: Msg rate is below msg_rate limit"),
    (["-w", "0.001", "-y", "0.000001"], 0, None),
])
def test_limits(pt, args, status, says):
    rc, out, err, rep = pt.run("write_bw", "-n", 200, "-s", 4096, *args)
    assert rc == status, out + err
    assert (says in err) if says else "Error" not in err
    assert table(out)[1]  # the table is printed either way


def test_histogram_and_unsorted_are_every_round_trip(pt):
    cap = pt.tmp / "h.pcapng"
    rc, out, err, rep = pt.run("read_lat", "-n", 100, "-s", 64, "-U", "-H", "--capture", cap)
    assert rc == 0, out + err
    lines = out.splitlines()
    blocks = [i for i, l in enumerate(lines) if l == "#, usec"]
    assert len(blocks) == 2
    unsorted = [float(l.split(", ")[1]) for l in lines[blocks[0] + 1:blocks[1]]]
    hist = [float(l.split(", ")[1]) for l in lines[blocks[1] + 1:blocks[1] + 101]]
    assert [int(l.split(",")[0]) for l in lines[blocks[1] + 1:blocks[1] + 101]] == list(range(1, 101))
    assert hist == sorted(unsorted) and len(unsorted) == 100
    # tshark's reading of the capture, request to response, in the order they happened
    sent, rtts = {}, []
    for t, op, psn in tshark_rows(cap, "frame.time_epoch", "infiniband.bth.opcode", "infiniband.bth.psn"):
        if op == "12":
            sent.setdefault(psn, Decimal(t))
        elif op == "16" and psn in sent:
            rtts.append(float((Decimal(t) - sent.pop(psn)) * 1000000))
    assert len(rtts) == 100
    for got, want in zip(unsorted, rtts):
        assert got == pytest.approx(want, rel=1e-5, abs=0.0011)
    _, [row] = table(out, last=True)  # the table follows, under its heading printed again
    assert float(row[2]) == pytest.approx(hist[0], abs=0.0051) and float(row[3]) == pytest.approx(hist[-1], abs=0.0051)


@pytest.mark.parametrize("flag", ["-H", "--report-histogrm", "--report-histogram"])  # perftest's, its usage's
def test_histogram_of_write_latency_is_half_the_round_trips(pt, flag):
    rc, out, err, rep = pt.run("write_lat", "-n", 200, flag)
    assert rc == 0, out + err
    lines = out.splitlines()
    at = lines.index("#, usec")
    hist = [float(l.split(", ")[1]) for l in lines[at + 1:at + 201]]
    assert hist == sorted(hist)
    ack = rep["runs"][0]["flows"][0]["latency_ns"]["ack"]
    assert ack["count"] == 200
    assert hist[0] == pytest.approx(ack["min"] / 2000, rel=1e-5) and hist[-1] == pytest.approx(ack["max"] / 2000, rel=1e-5)
    assert sum(hist) / 200 == pytest.approx(ack["mean"] / 2000, rel=1e-3)


def test_report_cycles(pt):
    rc, out, err, rep = pt.run("write_lat", "-n", 200, "-C")
    assert rc == 0, out + err
    head, [row] = table(out)
    assert "t_min[cycles]" in head and " Note: t_* in TSC cycles (-C)" in out
    res = rep["perftest"]["results"][0]
    ratios = [float(row[i]) / (res[k] or 1e-9) for i, k in ((3, "t_max_us"), (5, "t_avg_us"), (7, "t_99_us"))]
    # cycles per microsecond: the TSC's MHz, the same for every column
    assert 300 <= ratios[0] <= 10000 and max(ratios) / min(ratios) < 1.01, ratios


def test_duration_is_measured_between_the_margins(pt):
    rc, out, err, rep = pt.run("send_bw", "-D", 1.5, "-f", 0.5, "--report_gbits")
    assert rc == 0, out + err
    res = rep["perftest"]["results"][0]
    assert rep["perftest"]["margin_s"] == 0.5
    # the middle half second of 1.5: about a third of what was acknowledged, over about 0.5 s
    assert 0.48 <= res["seconds"] <= 0.52
    # measured between the engine's snapshots at the margins, not from 0.1 s time series rows
    [ph] = [ph for ph in rep["runs"][0]["phases"] if ph["name"] == "measured"]
    assert ph["start_s"] == pytest.approx(0.5, abs=0.05) and ph["end_s"] == pytest.approx(1.0, abs=0.05)
    assert res["seconds"] == pytest.approx(ph["end_s"] - ph["start_s"], rel=1e-9)
    total = rep["runs"][0]["flows"][0]["rc"]["completions"]
    _, [row] = table(out)
    assert 0.15 * total <= int(row[1]) <= 0.5 * total
    assert float(row[3]) == pytest.approx(int(row[1]) * 65536 * 8 / res["seconds"] / 1e9, rel=0.01)


def test_cpu_util(pt):
    rc, out, err, rep = pt.run("send_bw", "-D", 1, "--cpu_util")
    assert rc == 0, out + err
    assert rep["perftest"]["margin_s"] == 0  # perftest's default margin: int 1 / 4
    assert "noisy" not in err  # a second is long enough for a figure
    head, [row] = table(out)
    assert head.endswith("CPU_Util[%]") and len(row) == 6
    assert 0 < float(row[5]) <= 100 and rep["perftest"]["results"][0]["cpu_util_percent"] == pytest.approx(float(row[5]), abs=0.006)


def test_ipv6_and_tos(pt):
    cap = pt.tmp / "v6.pcapng"
    # -T: perftest's TOS of rdma_cm QPs (-R), the traffic class here; --force-link Ethernet is what this is
    rc, out, err, rep = pt.run("write_bw", "--ipv6", "-T", 41, "-R", "--force-link", "Ethernet", "-n", 50, "-s", 4096,
                               "--capture", cap)
    assert rc == 0, out + err
    assert " GID: 253:00:00:112:00:00:00:00:00:00:00:00:00:00:00:02" in out  # fd00:70::2
    assert " Traffic class   : 41 (DSCP 10, ECN 1)" in out
    sent = [p for p in rdpcap(str(cap)) if p[Ether].src == LOCAL_MAC and UDP in p]
    assert sent and all(IPv6 in p and p[IPv6].dst == "fd00:70::2" and p[UDP].dport == 4791 and p[IPv6].tc == 41
                        for p in sent)


def test_source_port(pt):
    cap = pt.tmp / "k.pcapng"
    rc, out, err, rep = pt.run("write_bw", "-k", 5000, "-K", 4791, "-q", 2, "-n", 20, "-s", 4096, "--capture", cap)
    assert rc == 0, out + err
    sent = [p for p in rdpcap(str(cap)) if p[Ether].src == LOCAL_MAC and UDP in p]
    assert len(sent) >= 40 and {p[UDP].sport for p in sent} == {5000}


@pytest.mark.parametrize("test,flag,opcode,title", [
    ("write_bw", "--write_with_imm", "11", "RDMA_Write_imm BW Test"),  # RC RDMA WRITE ONLY with Immediate
    ("send_lat", "--send_with_imm", "5", "Send_imm Latency Test"),     # RC SEND ONLY with Immediate
])
def test_with_immediate(pt, test, flag, opcode, title):
    cap = pt.tmp / "imm.pcapng"
    rc, out, err, rep = pt.run(test, flag, "-n", 20, "-s", 1024, "--capture", cap)
    assert rc == 0, out + err
    assert title in out
    ops = Counter(op for op, src in tshark_rows(cap, "infiniband.bth.opcode", "eth.src") if src == LOCAL_MAC)
    assert ops[opcode] >= 20 and set(ops) == {opcode}, ops


def test_latency_gap_spaces_the_messages(pt):
    rc, out, err, rep = pt.run("write_lat", "-n", 50, "--latency_gap", 2000)
    assert rc == 0, out + err
    assert rep["runs"][0]["duration_s"] >= 49 * 0.002 * 0.99  # 49 gaps of 2 ms at least


@pytest.mark.parametrize("flag,value", [("--pin_cores", "0, 1"), ("--numa_node", "0"), ("--lcores", "0-1")])
def test_cpus(pt, flag, value):
    rc, out, err, rep = pt.run("write_bw", flag, value, "-n", 20, "-s", 4096, "--keep")
    assert rc == 0, out + err
    cfg = (Path(rep["runs"][0]["config"])).read_text()
    assert re.search(r'eal = \{ lcores = "(0,1|0-1)"; main_lcore = 0;', cfg), cfg


def test_numa_node_that_does_not_exist(pt):
    rc, out, err, rep = pt.run("write_bw", "--numa_node", "999")
    assert rc == 2 and "--numa_node: '999' is not a NUMA node of this machine" in err


def test_use_hugepages_asks_eal_for_hugepages(pt):
    rc, out, err, rep = pt.run("write_bw", "--use_hugepages", "-n", 20, "-s", 4096, "--keep")
    huge = int(re.search(r"HugePages_Total:\s+(\d+)", Path("/proc/meminfo").read_text()).group(1))
    if huge:
        assert rc == 0, out + err
        return
    # this machine has none: EAL says so (exit 4) and the run stops before any traffic
    cfg = re.search(r"its config: (\S+)", err)
    assert rc == 4 and cfg and "huge_pages = true;" in Path(cfg.group(1)).read_text(), out + err


def test_wait_destroy(pt):
    t0 = time.monotonic()
    rc, out, err, rep = pt.run("write_bw", "-n", 20, "-s", 4096, "--wait_destroy", 0.5)
    assert rc == 0 and time.monotonic() - t0 >= 0.5


def test_accepted_flags_say_they_change_nothing(pt):
    flags = ["-p", "18516", "-I", "64", "-R", "-z", "-F", "-x", "3", "-Q", "10", "-l", "4", "-i", "1", "-S", "3", "-e",
             "--odp", "--use_old_post_send", "--dont_xchg_versions", "-P"]
    rc, out, err, rep = pt.run("send_bw", "-n", 20, "-s", 4096, *flags)
    assert rc == 0, out + err
    notes = [l for l in out.splitlines() if ": accepted, no effect: " in l]
    for name in ("-p/--port", "-I/--inline_size", "-R/--rdma_cm", "-z/--comm_rdma_cm", "-F/--CPU-freq",
                 "-x/--gid-index", "-Q/--cq-mod", "-l/--post_list", "-i/--ib-port", "-S/--sl", "-e/--events",
                 "--odp", "--use_old_post_send", "--dont_xchg_versions", "-P/--client"):
        assert sum(l.startswith(" Note: %s: accepted, no effect: " % name) for l in notes) == 1, name
    _, [row] = table(out)
    assert row[1] == "20"


@pytest.mark.parametrize("args,says", [
    (["--use_cuda=0"], "--use_cuda: not available here: device memory"),
    (["-g"], "-g/--mcg: not available here: multicast"),
    (["-O"], "-O/--dualport: not available here"),
    (["-A", "FETCH_AND_ADD"], "-A/--atomic_type: not available here"),
    (["--aes_xts"], "--aes_xts: not available here: the HCA's AES-XTS"),
    (["-c", "XRC"], "XRC needs an HCA's shared receive queues"),
    (["-c", "DC"], "DC (dynamically connected)"),
    (["--rate_limit", "1", "--rate_limit_type", "PP"], "packet pacing limiter of raw Ethernet tests"),
    (["--payload_file_path", "x.txt"], "payload patterns"),
    (["--force-link", "IB"], "InfiniBand's link layer"),
    (["-K", "80"], "RoCEv2 frames go to UDP port 4791"),
    (["--burst_size", "8"], "can't enable burst mode when rate limiter is off"),
    (["-b", "--device", "net_null0", "--src-ip", "10.0.0.1", "--dst-mac", "02:00:00:00:00:02", "10.0.0.2"],
     "-b with --device"),
])
def test_refused_flags_say_why(pt, args, says):
    rc, out, err, rep = pt.run("send_bw", *args)
    assert rc == 2 and says in err, (rc, err)
    assert out == ""


@pytest.mark.parametrize("args", [["--report", "/nonexistent/r.json"], ["--out_json_file", "/nonexistent/o.json"]])
def test_unwritable_outputs_stop_before_the_run(pt, args):
    rc, out, err, rep = pt.run("write_bw", *args, report=False)
    assert rc == 5 and "cannot write /nonexistent/" in err, (rc, err)
    assert out == ""  # no header, no engine started


def test_short_bandwidth_run_warns(pt):
    rc, out, err, rep = pt.run("write_bw", "-n", 100, "-s", 4096)
    assert rc == 0, out + err
    assert re.search(r"warning: the run took \d+\.\d ms: a bandwidth figure from less than 100 ms is noisy", err), err


# ---- fewer iterations than asked; perftest's own spellings of the far end's addresses ----

def memif_server(pt, sock, *args):
    """A --server far end on one end of a memif pair, perftest's spellings (-Z, -d, -j, -B)."""
    p = subprocess.Popen([exe(), "write_bw", "-Z", "-d", "net_memif0", "--vdev-args",
                          "role=server,id=0,socket=%s,socket-abstract=no" % sock, "--source_ip", "10.9.0.2",
                          "--source_mac", "02:00:00:00:09:02", "--report", str(pt.tmp / "server.json")]
                         + [str(a) for a in args],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=str(pt.tmp))
    deadline = time.time() + 30
    while not sock.exists() and time.time() < deadline and p.poll() is None:
        time.sleep(0.05)
    assert sock.exists(), "the server made no memif socket"
    return p


def test_fewer_iterations_than_asked_warns_and_timeouts_follow_u_and_retry_count(pt):
    sock = pt.tmp / "pt.sock"
    server = memif_server(pt, sock, "-q", 1)  # one responder: the client's second QP is never answered
    runs = []
    try:
        # perftest's short and long spellings of the addresses (raw Ethernet tests' there, the ports' here)
        for u, addresses in ((14, ["-j", "10.9.0.1", "-E", "02:00:00:00:09:02", "-J", "10.9.0.2"]),
                             (16, ["--local_ip", "10.9.0.1", "--remote_mac", "02:00:00:00:09:02", "--remote_ip",
                                   "10.9.0.2"])):
            runs.append(pt.run("write_bw", "-d", "net_memif0", "--vdev-args",
                               "role=client,id=0,socket=%s,socket-abstract=no" % sock, *addresses, "-q", 2, "-n", 50,
                               "-s", 4096, "-u", u, "--retry_count", 1))
    finally:
        server.send_signal(signal.SIGINT)
        server.communicate(timeout=60)
    durations = []
    for rc, out, err, rep in runs:
        assert rc == 0, out + err
        assert "warning: 4096 bytes: measured 50 of the 100 iterations asked (the rest were not acknowledged" in err
        _, [row] = table(out)
        assert row[1] == "50"
        answered, lost = rep["runs"][0]["flows"]
        assert answered["rc"]["completions"] == 50
        # --retry_count 1: the first timeout sends again, the second errors the QP
        assert lost["rc"]["completions"] == 0 and lost["rc"]["timeouts"] == 2 and lost["rc"]["error"]
        durations.append(rep["runs"][0]["duration_s"])
    # -u: 4.096 us x 2^14 = 67 ms, x 2^16 = 268 ms a timeout; two of them end the run
    assert durations[0] < 0.4 and durations[1] >= 2 * 0.268, durations


def test_reversed_over_memif_the_server_sends(pt):
    sock = pt.tmp / "rv.sock"
    # the end given the other's address (perftest's client) answers; the -Z end sends
    answering = subprocess.Popen([exe(), "write_bw", "--reversed", "--device", "net_memif0", "--vdev-args",
                                  "role=server,id=0,socket=%s,socket-abstract=no" % sock, "--src-ip", "10.9.0.1",
                                  "--src-mac", "02:00:00:00:09:01", "-q", "2", "--report", str(pt.tmp / "answer.json"),
                                  "10.9.0.2"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=str(pt.tmp))
    try:
        deadline = time.time() + 30
        while not sock.exists() and time.time() < deadline and answering.poll() is None:
            time.sleep(0.05)
        assert sock.exists(), "the answering end made no memif socket"
        rc, out, err, rep = pt.run("write_bw", "--reversed", "-Z", "--device", "net_memif0", "--vdev-args",
                                   "role=client,id=0,socket=%s,socket-abstract=no" % sock, "--src-ip", "10.9.0.2",
                                   "--dst-ip", "10.9.0.1", "--dst-mac", "02:00:00:00:09:01", "-q", 2, "-n", 50, "-s",
                                   4096)
    finally:
        answering.send_signal(signal.SIGINT)
        a_out, a_err = answering.communicate(timeout=60)
    assert rc == 0, out + err
    _, [row] = table(out)
    assert row[:2] == ["4096", "100"]
    assert all(f["rc"]["completions"] == 50 for f in rep["runs"][0]["flows"])
    assert answering.returncode == 0 and " served " in a_out, a_out + a_err
    got = json.loads((pt.tmp / "answer.json").read_text())
    assert got["perftest"]["server"] is True
    assert {q["qpn"]: q["messages"] for q in got["runs"][0]["rx_qps"]} == {0x200: 50, 0x201: 50}
