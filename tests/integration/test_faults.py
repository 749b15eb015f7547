"""Faults at run time (docs/reliability.md#faults-at-run-time): the engine keeps running, counts
what it could not do, and still leaves a complete report.

* A net_memif peer killed with SIGKILL mid-run, twice, and restarted: the engine (memif server)
  reports the link down and up (live lines, the report's `link_events`), survives each
  disconnect (DPDK 22.11's memif PMD unmaps the rings under a polling lcore: the engine's
  control-thread gate, pmd_glue/port.h, closes that race) and resumes traffic to the new peer.
* A veth peer set down and up (`ip link set`, in a network namespace of the test's own; root
  only): net_af_packet's own link state never changes, the engine reads the kernel's.
* RX overload: a fast sender into a receiver lcore that shares its CPU with the sender (the
  kernel time-slices them, so the receiver stalls for milliseconds at a time), on ring pairs,
  one whose ring is smaller than the sender's pool (the PMD refuses bursts: tx_queue_full) and
  one whose ring is larger (the sender's pool runs dry: mbuf_alloc_failures). Both counted in
  the report and the live lines; a `phases` rate change ends the overload and the drops stop;
  nothing is lost on a ring pair (backpressure), every mbuf is back in its pool.
* Signals: SIGINT, SIGTERM and SIGHUP mid-run, a signal during start-up (before traffic), and
  a volley of signals during the final drain and the report's writing: exit 0, a complete
  report, no temporary file left.
* A report path that cannot be written is refused before any traffic (exit 5).

Each test uses its own EAL file prefix and memif socket (pid-based) and kills what it started
on every path.
"""
import itertools
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import threading
import time

import pytest

from conftest import ROOT, engine_path

PID = os.getpid()
_seq = itertools.count()

MAC_A, MAC_B = "02:00:00:00:00:0a", "02:00:00:00:00:0b"
REPORT_KEYS = {"version", "config", "duration_s", "stopped_by", "ports", "flows", "rx_qps", "errors",
               "collectives", "phases"}


def prefix(tag):
    return "flt%d-%s-%d" % (PID, tag, next(_seq))


def eal(tag, lcores="0-1", main=None):
    return 'eal: { lcores = "%s"; %s memory_mb = 256; file_prefix = "%s"; };' % (
        lcores, "main_lcore = %d;" % main if main is not None else "", prefix(tag))


def port(name, device, mac, ip, extra=""):
    return ('{ name = "%s"; device = "%s"; mac = "%s"; ipv4 = "%s"; link_speed_gbps = 100.0; %s }'
            % (name, device, mac, ip, extra))


def role(lcore, port_name, r):
    return '{ lcore = %d; port = "%s"; queue = 0; role = "%s"; }' % (lcore, port_name, r)


def flow(name, port_name, dst_mac, dst_ip, **kw):
    body = ['name = "%s"' % name, 'port = "%s"' % port_name, 'dst_mac = "%s"' % dst_mac, 'dst_ip = "%s"' % dst_ip,
            'transport = "uc"', "message_size = 1000"] + ["%s = %s" % kv for kv in kw.items()]
    return "{ " + "; ".join(body) + "; }"


def config(eal_text, ports, roles, flows=(), extra=""):
    return "%s\nports = (\n%s\n);\nlcores = (\n%s\n);\nflows = (\n%s\n);\n%s\n" % (
        eal_text, ",\n".join(ports), ",\n".join(roles), ",\n".join(flows), extra)


class Proc:
    """An engine process; a thread collects its output lines with their arrival times."""

    def __init__(self, args, cwd, wrap=()):
        self.lines = []  # (monotonic time, line)
        self.p = subprocess.Popen(list(wrap) + [str(engine_path())] + [str(a) for a in args], stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, cwd=str(cwd), bufsize=1)
        self.t = threading.Thread(target=self._read, daemon=True)
        self.t.start()

    def _read(self):
        for line in self.p.stdout:
            self.lines.append((time.monotonic(), line.rstrip("\n")))

    @property
    def pid(self):
        return self.p.pid

    def output(self):
        return "\n".join(l for _, l in self.lines)

    def wait_line(self, pattern, after=0, timeout=20.0):
        """Index of the first line from `after` on that matches `pattern` (a regex)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            for i in range(after, len(self.lines)):
                if re.search(pattern, self.lines[i][1]):
                    return i
            if self.p.poll() is not None and not self.t.is_alive():
                break
            time.sleep(0.02)
        pytest.fail("no line matching %r (exit %s):\n%s" % (pattern, self.p.poll(), self.output()))

    def signal(self, sig):
        if self.p.poll() is None:
            self.p.send_signal(sig)

    def finish(self, timeout=30):
        rc = self.p.wait(timeout=timeout)
        self.t.join(timeout=5)
        return rc


@pytest.fixture
def procs(tmp_path):
    """Starts engines in tmp_path; whatever is still running at the end is killed."""
    started = []

    def start(*args, wrap=()):
        p = Proc(args, tmp_path, wrap)
        started.append(p)
        return p

    start.started = started
    yield start
    for p in started:
        if p.p.poll() is None:
            p.p.kill()
        try:
            p.finish(timeout=10)
        except subprocess.TimeoutExpired:
            pass
    # a killed engine leaves its EAL runtime folder behind (a tmpfs): ours all start with flt<pid>-
    for base in ("/var/run/dpdk", os.path.join(os.environ.get("XDG_RUNTIME_DIR", "/tmp"), "dpdk")):
        if os.path.isdir(base):
            for d in os.listdir(base):
                if d.startswith("flt%d-" % PID):
                    shutil.rmtree(os.path.join(base, d), ignore_errors=True)


def live(proc, port_name):
    """The live lines of a port: (t_s, tx Gb/s, whole line)."""
    out = []
    for _, l in proc.lines:
        m = re.match(r"\[\s*([\d.]+)s\] (\S+)\s+tx\s+[\d.]+ Mpps\s+([\d.]+) Gb/s", l)
        if m and m.group(2) == port_name:
            out.append((float(m.group(1)), float(m.group(3)), l))
    return out


def check_complete(rep_path, tmp_path):
    rep = json.loads(rep_path.read_text())
    assert REPORT_KEYS <= set(rep), set(rep)
    assert not list(tmp_path.glob("*.tmp.*")), "a temporary report was left behind"
    return rep


# ---- a memif peer killed and restarted ---------------------------------------------------------------

def test_memif_peer_killed_and_restarted(tmp_path, procs):
    """Engine A (memif server: it owns the socket, so a restarted client finds it again; a client
    end never reconnects by itself in DPDK 22.11) sends to B (client, receiver). B is killed with
    SIGKILL twice and started again; the third B stops cleanly. A reports every change, keeps
    running, and sends to each new B."""
    sock = tmp_path / ("m%d.sock" % PID)
    dev = 'vdev_args = "role=%s,id=0,socket=%s,socket-abstract=no";'
    (tmp_path / "a.cfg").write_text(config(
        eal("a"), [port("s", "net_memif0", MAC_A, "192.168.50.1", dev % ("server", sock))], [role(1, "s", "txrx")],
        [flow("u", "s", MAC_B, "192.168.50.2", rate_gbps=0.5, qpn="0x30", dest_qpn="0x40")]))
    # B polls on CPU 0 (its main lcore 1 sleeps), A on CPU 1: the two busy loops do not share a CPU
    b_eal = eal("b", main=1)
    prefix_b = re.search(r'file_prefix = "([^"]+)"', b_eal).group(1)
    b_cfg = config(b_eal, [port("r", "net_memif0", MAC_B, "192.168.50.2", dev % ("client", sock))],
                   [role(0, "r", "rx")])
    a = procs("-f", "a.cfg", "-i", "0.2", "-d", "60", "-r", "a.json")
    seen = a.wait_line(r" s +link down \(at start\)")
    for i in range(3):
        (tmp_path / ("b%d.cfg" % i)).write_text(b_cfg.replace(prefix_b, prefix("b")))
        b = procs("-f", "b%d.cfg" % i, "-q", "-d", "30", "-r", "b%d.json" % i)
        seen = a.wait_line(r" s +link up$", after=seen)
        time.sleep(1.0)  # traffic to this B
        if i < 2:
            b.p.kill()
            assert b.finish() == -signal.SIGKILL
        else:
            b.signal(signal.SIGINT)
            assert b.finish() == 0, b.output()
        seen = a.wait_line(r" s +link down$", after=seen)
        assert a.p.poll() is None, "A died when its peer left:\n" + a.output()
    time.sleep(0.5)  # A goes on, its frames refused by the PMD while the link is down
    a.signal(signal.SIGINT)
    assert a.finish() == 0, a.output()
    rep = check_complete(tmp_path / "a.json", tmp_path)
    (p,) = rep["ports"]
    assert [e["state"] for e in p["link_events"]] == ["down", "up", "down", "up", "down", "up", "down"], p
    times = [e["t_s"] for e in p["link_events"]]
    assert times == sorted(times) and times[0] == 0.0
    assert p["link_changes"] == 6 and 0.5 < p["link_down_s"] < rep["duration_s"]
    # traffic went to every B: a live line with traffic between each up and the next down
    lines = live(a, "s")
    ups = [e["t_s"] for e in p["link_events"] if e["state"] == "up"]
    downs = [e["t_s"] for e in p["link_events"] if e["state"] == "down"][1:]
    for up, down in zip(ups, downs):
        assert any(up < t <= down + 0.2 and gbps > 0.05 for t, gbps, _ in lines), (up, down, lines)
    assert any("| link down" in l for _, _, l in lines)
    # the frames A could not send when it stopped (link down) are counted, and freed
    assert 0 < p["tx_unsent"] <= 32 and p["mbufs_in_use_at_exit"] == 0
    assert p["tx_packets"] == rep["flows"][0]["tx_packets"]
    last_b = json.loads((tmp_path / "b2.json").read_text())
    assert last_b["ports"][0]["rx_packets"] > 1000 and last_b["ports"][0]["mbufs_in_use_at_exit"] == 0
    assert "summary: port s        link: 6 changes" in a.output()


# ---- a lab switch's port whose memif peer left --------------------------------------------------------

def test_lab_switch_flushes_the_frames_of_a_peer_that_left(tmp_path, procs):
    """A lab switch (memif servers s0 and s1, PFC on priority 3, a 256 KB buffer, 1 Gb/s links):
    engine A (client on s0) sends to C's MAC on s1 at 0.3 Gb/s for 1.5 s, and C never connects.
    A's frames wait for C, as for a slow peer, until the buffer pauses A (PFC); then A leaves, and
    the switch drops what came in from it (s0's dropped.link_down): a lab whose hosts come and go
    must not keep the frames of a process that left (they would hold the buffer and pause the
    next one on that port, or reach C if it came). The switch says when it is ready
    (run.ready_file, written once its ports are started: a memif client that connects before is
    refused and does not retry). (A process that leaves while another streams into it through the
    switch is not used here: on this VM its exit's munmap sometimes waits in the kernel for as
    long as the stream lasts. test_switch.c covers the flush of what is queued to a port.)"""
    socks = [tmp_path / ("sw%d-%d.sock" % (PID, i)) for i in (0, 1)]
    dev = 'vdev_args = "role=%s,id=0,socket=%s,socket-abstract=no";'
    sw_port = '{ name = "s%d"; device = "net_memif%d"; mac = "02:00:00:5e:00:0%d"; ipv4 = "10.9.255.%d"; ' \
              'link_speed_gbps = 1.0; %s }'
    (tmp_path / "sw.cfg").write_text(config(
        eal("sw"), [sw_port % (i, i, i, i + 1, dev % ("server", socks[i])) for i in (0, 1)],
        [role(1, "s0", "switch"), role(1, "s1", "switch")],
        extra='switch = { buffer_kb = 256; pfc = { priorities = [3]; }; fdb = ( { mac = "%s"; port = "s0"; }, '
              '{ mac = "%s"; port = "s1"; } ); };\nrun = { ready_file = "out/ready"; };' % (MAC_A, MAC_B)))
    sw = procs("-f", "sw.cfg", "-q", "-d", "60", "-r", "sw.json")
    end = time.monotonic() + 30
    while not (tmp_path / "out" / "ready").exists():
        assert time.monotonic() < end and sw.p.poll() is None, "the switch never became ready:\n" + sw.output()
        time.sleep(0.05)
    assert not (tmp_path / "out" / "ready.part").exists()
    assert int((tmp_path / "out" / "ready").read_text()) == sw.pid
    # A's port at the switch's rate: PFC quanta count in that link's time
    (tmp_path / "a.cfg").write_text(config(
        eal("a", "0-1", main=1),
        [port("a", "net_memif0", MAC_A, "10.9.0.1", dev % ("client", socks[0])).replace("100.0", "1.0")],
        [role(0, "a", "txrx")],
        [flow("u", "a", MAC_B, "10.9.0.2", rate_gbps=0.3, qpn="0x30", dest_qpn="0x40")]))
    a = procs("-f", "a.cfg", "-q", "-d", "1.5", "-r", "a.json")
    assert a.finish() == 0, a.output()
    time.sleep(0.3)                                   # the switch's links are read every 10 ms
    sw.signal(signal.SIGINT)
    assert sw.finish() == 0, sw.output()
    ra, rsw = json.loads((tmp_path / "a.json").read_text()), json.loads((tmp_path / "sw.json").read_text())
    s0, s1 = (next(p for p in rsw["switch"]["ports"] if p["port"] == n) for n in ("s0", "s1"))
    assert ra["ports"][0]["pfc_rx_xoff"][3] > 0, ra["ports"][0]  # the waiting frames filled the buffer
    assert s0["dropped"]["link_down"] > 0, s0         # A's frames, waiting for C, when A left
    assert s1["dropped"]["link_down"] == 0 and s1["tx_frames"] == 0, s1
    # nothing of A's stayed behind: each frame A sent was dropped, or lost in the memif ring (1,024)
    # or the burst the switch had read (32) when A left
    assert rsw["switch"]["queued_at_end_frames"] == 0
    (fl,) = [f for f in rsw["switch"]["flows"] if f["egress"] == "s1"]
    assert fl["queued_at_end"] == 0 and fl["sent"] == 0
    assert 0 <= ra["ports"][0]["tx_packets"] - fl["dropped"] <= 1024 + 32, (ra["ports"][0], fl)


# ---- a veth peer down and up (net_af_packet) -------------------------------------------------------------

@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("ip"), reason="needs root and iproute2 (a network namespace)")
def test_af_packet_veth_peer_down_and_up(tmp_path, procs):
    """The engine on one end of a veth pair, in a namespace of its own; the other end is set down,
    then up. The PMD's link is always up (its link_update does nothing): the engine reads the
    kernel interface's carrier. Frames the kernel would not take while the carrier was off waited
    in the TX role and went after it came back."""
    ns = "flt%d" % PID

    def ip(*args):
        subprocess.run(["ip"] + list(args), check=True, capture_output=True, timeout=10)

    subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    try:
        ip("netns", "add", ns)
        ip("-n", ns, "link", "add", "fa", "type", "veth", "peer", "name", "fb")
        ip("-n", ns, "link", "set", "fa", "up")
        ip("-n", ns, "link", "set", "fb", "up")
        (tmp_path / "v.cfg").write_text(config(
            eal("v"), [port("a", "net_af_packet0", MAC_A, "192.168.51.1", 'vdev_args = "iface=fa";')],
            [role(1, "a", "txrx")], [flow("f", "a", MAC_B, "192.168.51.2", rate_gbps=0.1, qpn=2, dest_qpn=3)]))
        e = procs("-f", "v.cfg", "-i", "0.2", "-d", "30", "-r", "v.json", wrap=["ip", "netns", "exec", ns])
        seen = e.wait_line(r"QPs on")
        time.sleep(0.8)
        ip("-n", ns, "link", "set", "fb", "down")
        seen = e.wait_line(r" a +link down$", after=seen)
        time.sleep(0.6)
        ip("-n", ns, "link", "set", "fb", "up")
        seen = e.wait_line(r" a +link up$", after=seen)
        time.sleep(0.8)
        e.signal(signal.SIGTERM)
        assert e.finish() == 0, e.output()
    finally:
        for p in procs.started:  # the engine must be gone before its namespace
            if p.p.poll() is None:
                p.p.kill()
                p.finish()
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    rep = check_complete(tmp_path / "v.json", tmp_path)
    (p,) = rep["ports"]
    assert p["driver"] == "net_af_packet"
    assert [x["state"] for x in p["link_events"]] == ["up", "down", "up"], p["link_events"]
    assert 0.3 < p["link_down_s"] < 3
    lines = live(e, "a")
    up_again = p["link_events"][2]["t_s"]
    assert any(t > up_again + 0.2 and gbps > 0.05 for t, gbps, _ in lines), lines
    # every frame built was taken by the PMD (sent, or refused by the kernel: oerrors) or counted unsent
    assert p["tx_packets"] == p["pmd"]["opackets"] + p["pmd"]["oerrors"] + p["tx_unsent"]
    assert p["mbufs_in_use_at_exit"] == 0


# ---- RX overload and mempool exhaustion -------------------------------------------------------------------

@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2 or not {0, 1} <= os.sched_getaffinity(0),
                    reason="needs CPUs 0 and 1")
def test_rx_overload_counted_and_recovered(tmp_path, procs):
    """TX lcore 1 and RX lcore 2 share CPU 1 (EAL --lcores 1@1,2@1): whenever the kernel runs the
    sender, the receiver is stalled. Link q: ring of 512 < the sender's pool (tx_queue_full);
    link p: ring of 4096 > the sender's pool of 1088 mbufs (mbuf_alloc_failures). At 1.5 s a phase
    lowers both flows to 0.02 Gb/s: the drops stop, the phase runs at its rate."""
    small, big = "rx_desc = 512; tx_desc = 512;", "rx_desc = 4096; tx_desc = 64;"
    ports = [port("a1", "ring:q%d:a" % PID, MAC_A, "192.168.52.1", small),
             port("b1", "ring:q%d:b" % PID, MAC_B, "192.168.52.2", small),
             port("a2", "ring:p%d:a" % PID, "02:00:00:00:01:0a", "192.168.53.1", big),
             port("b2", "ring:p%d:b" % PID, "02:00:00:00:01:0b", "192.168.53.2", big)]
    roles = [role(1, "a1", "tx"), role(1, "a2", "tx"), role(2, "b1", "rx"), role(2, "b2", "rx")]
    flows = [flow("f1", "a1", MAC_B, "192.168.52.2", rate_gbps=40.0, qpn=2, dest_qpn=3),
             flow("f2", "a2", "02:00:00:00:01:0b", "192.168.53.2", rate_gbps=40.0, qpn=4, dest_qpn=5)]
    phases = ('phases = ( { name = "overload"; at_s = 0.0; }, { name = "calm"; at_s = 1.5; rates = ( '
              '{ flow = "f1"; gbps = 0.02; }, { flow = "f2"; gbps = 0.02; } ); } );')
    (tmp_path / "o.cfg").write_text(config('eal: { lcores = "0-2"; };', ports, roles, flows, phases))
    e = procs("--lcores", "0@0,1@1,2@1", "--no-huge", "-m", "256", "--no-pci", "--file-prefix", prefix("o"),
              "--log-level", "notice", "--", "-f", "o.cfg", "-d", "3", "-i", "0.25", "-r", "o.json")
    assert e.finish(timeout=60) == 0, e.output()
    rep = check_complete(tmp_path / "o.json", tmp_path)
    ports = {p["name"]: p for p in rep["ports"]}
    assert ports["a1"]["tx_queue_full"] > 0, ports["a1"]
    assert ports["a2"]["mbuf_alloc_failures"] > 0, ports["a2"]
    for tx, rx in (("a1", "b1"), ("a2", "b2")):
        # backpressure, not loss: everything sent arrived, nothing was left unsent, no mbuf leaked
        assert ports[rx]["rx_packets"] == ports[tx]["tx_packets"] > 0
        assert ports[tx]["tx_unsent"] == 0 and ports[tx]["mbufs_in_use_at_exit"] == 0
        assert ports[rx]["mbufs_in_use_at_exit"] == 0
    assert all(f["lost"] == 0 and f["rx_packets"] == f["tx_packets"] for f in rep["flows"])
    # the live lines: drops while overloaded, none once the calm phase has settled
    for name, what in (("a1", "tx_queue_full"), ("a2", "mbuf_alloc_failures")):
        lines = live(e, name)
        assert any(t < 1.5 and "drops:" in l and not re.search(what + " 0,", l) for t, _, l in lines), lines
        assert not [l for t, _, l in lines if t >= 2.0 and "drops:" in l], lines
    overload, calm = rep["phases"]
    assert calm["name"] == "calm"
    for f in ("f1", "f2"):
        assert abs(calm["flows"][f]["gbps"] - 0.02) < 0.004, calm
        assert overload["flows"][f]["gbps"] > 5 * calm["flows"][f]["gbps"], rep["phases"]
    assert "summary: port a2       drops: tx_queue_full 0, mbuf_alloc_failures" in e.output()


# ---- signals -----------------------------------------------------------------------------------------------

def ring_run_config(tag, rate=1.0):
    return config(eal(tag), [port("a", "ring:s%d%s:a" % (PID, tag), MAC_A, "192.168.54.1"),
                             port("b", "ring:s%d%s:b" % (PID, tag), MAC_B, "192.168.54.2")],
                  [role(1, "a", "tx"), role(1, "b", "rx")],
                  [flow("f", "a", MAC_B, "192.168.54.2", rate_gbps=rate, qpn=2, dest_qpn=3)])


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_signal_mid_run(tmp_path, procs, sig):
    (tmp_path / "s.cfg").write_text(ring_run_config("m"))
    e = procs("-f", "s.cfg", "-i", "0.2", "-r", "s.json")
    e.wait_line(r"\] a +tx ")
    time.sleep(0.3)
    e.signal(sig)
    assert e.finish() == 0, e.output()
    rep = check_complete(tmp_path / "s.json", tmp_path)
    assert rep["stopped_by"] == "signal" and rep["duration_s"] > 0.2
    a, b = rep["ports"]
    assert a["tx_packets"] > 0 and b["rx_packets"] == a["tx_packets"] and a["mbufs_in_use_at_exit"] == 0
    assert "report written to s.json" in e.output()


def _signal_handler_installed(pid, sig):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("SigCgt:"):
                    return int(line.split()[1], 16) >> (sig - 1) & 1
    except OSError:
        pass
    return 0


def test_signal_during_startup(tmp_path, procs):
    """The handlers are the first thing main() installs: a signal during the configuration's
    loading or EAL's start-up stops the run before any traffic, with a report."""
    (tmp_path / "s.cfg").write_text(ring_run_config("u"))
    e = procs("-f", "s.cfg", "-r", "s.json", "-d", "20")
    end = time.monotonic() + 10
    while not _signal_handler_installed(e.pid, signal.SIGTERM) and time.monotonic() < end:
        time.sleep(0.001)
    e.signal(signal.SIGTERM)
    assert e.finish() == 0, e.output()
    rep = check_complete(tmp_path / "s.json", tmp_path)
    assert rep["stopped_by"] == "signal"
    assert rep["duration_s"] < 0.05, rep["duration_s"]  # stopped at (or before) the traffic's start


def _pcap(path, frames):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for fr in frames:
            f.write(struct.pack("<IIII", 0, 0, len(fr), len(fr)) + fr)


def test_signals_during_drain_and_report(tmp_path, procs):
    """Stopped by its duration, the run drains RX until nothing arrived for 50 ms (at most 2 s);
    here a net_pcap port replays its capture forever, so the drain would last the 2 s. A volley
    of SIGINT / SIGTERM / SIGHUP from the middle of the drain until the process has exited: the
    first one cuts the drain short, the others (during teardown and the report's writing) change
    nothing: exit 0, a complete report, no temporary file."""
    frame = bytes.fromhex("02000000000b02000000000a0800") + bytes(50)
    _pcap(tmp_path / "in.pcap", [frame] * 4)
    (tmp_path / "d.cfg").write_text(config(
        eal("d"), [port("a", "ring:d%d:a" % PID, MAC_A, "192.168.55.1"), port("b", "ring:d%d:b" % PID, MAC_B,
                                                                              "192.168.55.2"),
                   port("p", "net_pcap0", "02:00:00:00:00:0c", "192.168.55.3",
                        'vdev_args = "rx_pcap=%s,infinite_rx=1";' % (tmp_path / "in.pcap"))],
        [role(1, "a", "tx"), role(1, "b", "rx"), role(1, "p", "rx")],
        [flow("f", "a", MAC_B, "192.168.55.2", rate_gbps=0.5, qpn=2, dest_qpn=3)]))
    e = procs("-f", "d.cfg", "-i", "0.1", "-d", "1", "-r", "d.json")
    e.wait_line(r"\[\s*(0\.[89]|1\.0)s\] p ")  # the last live lines: the drain starts at 1.0 s, lasts 2 s
    time.sleep(0.5)
    first = time.monotonic()
    sigs = itertools.cycle([signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
    while e.p.poll() is None and time.monotonic() < first + 10:
        e.signal(next(sigs))
        time.sleep(0.01)
    assert e.finish() == 0, e.output()
    rep = check_complete(tmp_path / "d.json", tmp_path)
    assert rep["stopped_by"] == "duration" and 0.9 < rep["duration_s"] < 1.2
    assert "signal during the drain: RX stops now" in e.output()
    ports = {p["name"]: p for p in rep["ports"]}
    assert ports["p"]["rx_packets"] > 0 and ports["b"]["rx_packets"] == ports["a"]["tx_packets"] > 0


# ---- the report's path ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("path,reason", [
    ("a-file/sub/r.json", "not writable: cannot create .*Not a directory"),  # a missing folder is made
    ("a-file/r.json", "not writable: cannot create .*Not a directory"),
    ("a-dir", "is a directory"),
    ("/proc/r.json", "not writable: cannot create"),
    ("/dev/null", "exists and is not a regular file"),
])
def test_report_path_refused_before_traffic(tmp_path, procs, path, reason):
    (tmp_path / "a-file").write_text("")
    (tmp_path / "a-dir").mkdir()
    (tmp_path / "s.cfg").write_text(ring_run_config("r"))
    e = procs("-f", "s.cfg", "-d", "5", "-r", path)
    assert e.finish() == 5, e.output()
    assert re.search(r"roce-engine: report .*" + reason, e.output()), e.output()
    assert "QPs on" not in e.output() and not list(tmp_path.glob("**/*.tmp.*"))
    assert os.path.exists("/dev/null") and not os.path.isfile("/dev/null")


def test_memory_too_small_for_the_pools_fails_cleanly(engine):
    """A pool that cannot be made stops the run at set-up with the reason and exit status 4, and
    the teardown of a half-made engine touches no missing pool (it crashed there once)."""
    text = (ROOT / "configs" / "lab-incast-dcqcn.cfg").read_text()
    text = re.sub(r"memory_mb = \d+;", "memory_mb = 64;", text)
    rc, rep, out = engine.run(text, "-d", "1")
    assert rc == 4, out
    assert "cannot create a mempool" in out and "raise eal.memory_mb" in out
    assert rep is None and "summary:" not in out
