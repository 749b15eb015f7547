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
import signal
import subprocess
import time
from decimal import Decimal

import pytest
from scapy.all import IP, UDP, Ether, rdpcap

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
            cmd += ["-r", str(rep)]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=str(self.tmp))
        data = json.loads(rep.read_text()) if report and rep.exists() else None
        return r.returncode, r.stdout, r.stderr, data


@pytest.fixture
def pt(tmp_path):
    if not engine_path().exists():
        pytest.fail("roce-engine not found at %s (build it, or set $ROCE_ENGINE)" % engine_path())
    return Perftest(tmp_path)


def table(stdout):
    """The rows under the ' #bytes' heading, split into their fields."""
    lines = stdout.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith(" #bytes"))
    rows = []
    for l in lines[start + 1:]:
        if l.startswith("---"):
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
    assert "RDMA_Read BW Test" in out and " Outstand reads  : 64" in out
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
    rc, out, err, rep = pt.run("write_bw", "-q", 4, "-n", 20, "-s", 8192, "-m", 1024, "--tclass", 41,
                               "--capture", cap)
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
    ("write_bw", ["-n", "10", "-D", "1"], "-n and -D are exclusive"),
    ("write_bw", ["-s", "abc"], "-s/--size: 'abc' is not a size in bytes"),
    ("write_bw", ["-s", "0"], "is not a size in bytes, 1..1073741824"),
    ("write_bw", ["-m", "1000"], "is not an IB MTU: 256, 512, 1024, 2048 or 4096"),
    ("write_bw", ["-c", "XRC"], "is not RC, UC or UD"),
    ("write_bw", ["-c", "UD"], "UD connection only possible with SEND"),
    ("read_lat", ["-c", "UC"], "RDMA READ needs RC"),
    ("send_lat", ["-q", "2"], "multiple QPs only available on bw tests"),
    ("send_bw", ["--tclass", "256"], "--tclass: '256' is not a traffic class byte"),
    ("send_bw", ["-a", "-D", "2"], "not with -D"),
    ("send_bw", ["--bogus"], "unrecognized option"),
    ("send_bw", ["--dst-ip", "10.0.0.2"], "need --device"),
    ("send_bw", ["--device", "net_null0", "--src-ip", "10.0.0.1", "10.0.0.2"], "--device needs --dst-ip and --dst-mac"),
    ("send_bw", ["--device", "0000:3b:00.0", "--src-ip", "10.0.0.1", "--dst-mac", "02:00:00:00:00:02", "-m", "4096",
                 "10.0.0.2"], "-m 4096 does not fit the port's IP MTU of 1500"),
    ("write_lat", ["--lcores", "1"], "needs two lcores at least"),
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
                               "-q", "2", "-r", str(srv_rep)],
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
