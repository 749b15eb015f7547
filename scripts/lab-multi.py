#!/usr/bin/python3
"""The virtual lab across processes and network namespaces (docs/virtual-lab.md).

    scripts/lab-multi.py LAB.toml [--out DIR] [--engine PATH] [--duration S] [--grace S]

From a lab description (TOML: hosts, their links' rates, the switch's settings, each host's flows)
it creates one network namespace per host and one for the switch, joins each host to a switch
port with a veth pair (the host's end `lab0`, the switch's `p<i>`), writes an engine config per
process (hosts: one net_af_packet port on `lab0` and their flows; switch: a net_af_packet port per
host with role "switch", its fdb from the hosts' MACs), starts the switch, then the receivers,
then the senders, each pinned to the lab's cores, waits for the senders, stops the switch and the
receivers with SIGINT (each writes its report), collects every report into one
(`lab-report.json`: per process, and per flow the frames sent, received, dropped and queued in the
switch), and tears everything down — processes, namespaces (and with them the veths), EAL runtime
folders — whatever happened, also on Ctrl-C. Exit 0 when every process ended well.

A process that outlives its deadline (a sender still running --grace seconds after its run's
duration, a switch or receiver that does not end within its grace after SIGINT) is diagnosed
before it is killed: its state and threads (/proc: State, wchan, each thread's name, state and
kernel stack), a user-space backtrace of every thread (`eu-stack`, Debian's elfutils, when
installed), when it wrote its report, the machine's load, and the end of its log. The diagnosis
goes into DIR/diagnosis-<process>.txt and into the problem lab-multi prints and records in
lab-report.json.

Description (every key but `name` and the hosts' `name` optional):

    name = "incast"                 # 1..8 of a-z 0-9: namespaces are rl-<name>-<host>
    duration_s = 4.0                # how long the senders send
    cores = [1, 0]                  # the switch's worker core, the hosts' worker core
    link_gbps = 1.0                 # every link, unless a host says otherwise
    memory_mb = 256
    [switch]                        # the switch group of the switch's config (docs/config.md)
    buffer_kb = 1024
    pfc = { priorities = [3], xoff_kb = 64, xon_kb = 48, headroom_kb = 128 }
    ecn = [ { tc = 3, kmin_kb = 16, kmax_kb = 64, pmax = 0.2 } ]
    [[hosts]]
    name = "r"
    [[hosts]]
    name = "h0"
    link_gbps = 1.0
    vlan = 10                       # its VLAN segment: frames tagged, forwarded within the segment only
    [[hosts.flows]]                 # one table per flow
    name = "f0"
    to = "r"
    transport = "uc"
    ops = { write = 1 }
    message_size = 65536
    mtu = 1024
    qpn = 0x100
    dest_qpn = 0x200
    cc = "dcqcn"

A flow takes any setting of the engine's flows (docs/config.md) but `port`, `dst_mac` and
`dst_ip`, which `to` fills in.
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STALL_S = 5.0  # a look at the processes this late (they come every 50 ms): the script did not run


def fail(msg):
    print("lab-multi: " + msg, file=sys.stderr)
    sys.exit(2)


# ---- the description --------------------------------------------------------------------------

def load(path):
    try:
        with open(path, "rb") as f:
            d = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as e:
        fail("%s: %s" % (path, e))
    if not re.fullmatch(r"[a-z0-9]{1,8}", str(d.get("name", ""))):
        fail("%s: name: 1..8 of a-z 0-9 (it names the namespaces)" % path)
    hosts = d.get("hosts", [])
    if not 2 <= len(hosts) <= 15:
        fail("%s: hosts: 2..15 hosts (the switch has a port each)" % path)
    names = [h.get("name") for h in hosts]
    for n in names:
        if not n or not re.fullmatch(r"[a-z0-9]{1,6}", n):
            fail("%s: hosts.name %r: 1..6 of a-z 0-9" % (path, n))
    if len(set(names)) != len(names):
        fail("%s: hosts: duplicate names" % path)
    for h in hosts:
        for f in h.get("flows", []):
            if f.get("to") not in names or f.get("to") == h["name"]:
                fail("%s: hosts.%s.flows: 'to' must name another host" % (path, h["name"]))
            for k in ("port", "dst_mac", "dst_ip"):
                if k in f:
                    fail("%s: hosts.%s.flows: %s is set by the lab ('to')" % (path, h["name"], k))
    return d


# ---- libconfig text -----------------------------------------------------------------------------

def value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, dict):
        return "{ " + " ".join("%s = %s;" % (k, value(x)) for k, x in v.items()) + " }"
    if isinstance(v, list):
        if v and all(isinstance(x, dict) for x in v):  # a list of groups
            return "( " + ", ".join(value(x) for x in v) + " )"
        return "[ " + ", ".join(value(x) for x in v) + " ]"
    raise ValueError("cannot write %r" % (v,))


class Host:
    def __init__(self, lab, i, h):
        self.i, self.name, self.desc = i, h["name"], h
        self.ns = "rl-%s-%s" % (lab.name, self.name)
        self.mac = "02:00:00:1a:%02x:01" % i
        self.ip = "10.99.0.%d" % (i + 1)
        self.sw_mac = "02:00:00:1b:%02x:00" % i
        self.gbps = float(h.get("link_gbps", lab.link_gbps))
        self.flows = h.get("flows", [])
        self.vlan = int(h.get("vlan", 0))  # its VLAN segment (0: untagged, reaches every host)
        self.prefix = "rl-%s-%s-%d" % (lab.name, self.name, os.getpid())


class Lab:
    def __init__(self, d, out, engine, duration, grace=60.0):
        self.d, self.name, self.out, self.engine = d, d["name"], out, engine
        self.duration = float(duration if duration is not None else d.get("duration_s", 4.0))
        self.grace = float(grace)  # how long a sender may run past its duration before it is stuck
        # two cores: the switch polls on one, the hosts on the other (each process's main lcore,
        # which only wakes every millisecond, on the other one)
        self.cores = [int(c) for c in d.get("cores", [0, 1])]
        if len(self.cores) != 2 or self.cores[0] == self.cores[1]:
            fail("cores: two different cores [switch's, hosts'] (e.g. [1, 0])")
        self.sw_worker, self.host_worker = self.cores
        self.link_gbps = float(d.get("link_gbps", 1.0))
        self.memory = int(d.get("memory_mb", 256))
        self.hosts = [Host(self, i, h) for i, h in enumerate(d["hosts"])]
        self.sw_ns = "rl-%s-sw" % self.name
        self.sw_prefix = "rl-%s-sw-%d" % (self.name, os.getpid())
        self.procs = {}      # name -> Popen
        self.started = {}    # name -> (time.monotonic(), time.time()) at its start
        self.prefixes = {}   # name -> its EAL file prefix
        self.stuck = []      # diagnoses of the processes killed past their deadline
        self.notes = []      # what went oddly but not wrong (lab-report.json's notes)
        self.namespaces = []

    # -- topology --
    def ip(self, *args, ns=None, check=True):
        cmd = (["ip", "netns", "exec", ns] if ns else []) + list(args)
        r = subprocess.run(cmd, capture_output=True, text=True)
        if check and r.returncode:
            raise RuntimeError("%s: %s" % (" ".join(cmd), r.stderr.strip()))
        return r

    def create(self):
        for ns in [self.sw_ns] + [h.ns for h in self.hosts]:
            self.ip("ip", "netns", "del", ns, check=False)  # a previous run's, if it was killed
            self.ip("ip", "netns", "add", ns)
            self.namespaces.append(ns)
            # no IPv6 chatter (router solicitations, MLD) on the lab's links
            self.ip("sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", ns=ns)
            self.ip("sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1", ns=ns)
        for h in self.hosts:
            self.ip("ip", "link", "add", "lab0", "netns", h.ns, "type", "veth", "peer", "name", "p%d" % h.i, "netns",
                    self.sw_ns)
            self.ip("ip", "link", "set", "lab0", "address", h.mac, "mtu", "1600", "up", ns=h.ns)
            self.ip("ip", "link", "set", "p%d" % h.i, "address", h.sw_mac, "mtu", "1600", "up", ns=self.sw_ns)

    # -- configs --
    def eal(self, prefix, worker):
        main = next(c for c in self.cores if c != worker)
        return ('eal = { lcores = "%d,%d"; main_lcore = %d; memory_mb = %d; file_prefix = "%s"; log_level = "error"; };\n'
                % (min(main, worker), max(main, worker), main, self.memory, prefix))

    def port(self, name, n, iface, mac, ip, gbps, extra=""):
        return ('{ name = "%s"; device = "net_af_packet%d"; vdev_args = "iface=%s,qpairs=1"; mac = "%s"; '
                'ipv4 = "%s"; link_speed_gbps = %r; %s}' % (name, n, iface, mac, ip, gbps, extra))

    def host_config(self, h):
        by_name = {x.name: x for x in self.hosts}
        flows = []
        for f in h.flows:
            to = by_name[f["to"]]
            body = {k: v for k, v in f.items() if k != "to"}
            body = {"port": "p", "dst_mac": to.mac, "dst_ip": to.ip, **body}
            if h.vlan:  # the host's segment tags its frames (the receiver's CNPs keep the tag)
                body.setdefault("vlan", h.vlan)
            flows.append(value(body))
        text = self.eal(h.prefix, self.host_worker)
        text += "ports = ( %s );\n" % self.port("p", 0, "lab0", h.mac, h.ip, h.gbps)
        text += 'lcores = ( { lcore = %d; port = "p"; role = "txrx"; } );\n' % self.host_worker
        # the QPs of other hosts that send here: this host's notification point sends them CNPs
        peers = ['{ port = "p"; qpn = %d; peer_qpn = %d; count = %d; qpn_step = %d; peer_qpn_step = %d; }' % (
            f["dest_qpn"], f["qpn"], f.get("count", 1), f.get("dest_qpn_step", 1), f.get("qpn_step", 1))
            for o in self.hosts for f in o.flows if f["to"] == h.name]
        if peers:
            text += "peers = (\n  %s\n);\n" % ",\n  ".join(peers)
        if flows:
            text += "flows = (\n  %s\n);\n" % ",\n  ".join(flows)
            if any(f.get("cc", "none") != "none" for f in h.flows):
                text += 'run = { cc_trace = "cc-trace.csv"; };\n'
        return text

    def switch_config(self):
        sw = dict(self.d.get("switch", {}))
        sw["fdb"] = [{"mac": h.mac, "port": "s%d" % h.i} for h in self.hosts]
        vids = sorted({h.vlan for h in self.hosts if h.vlan})
        if vids:
            sw["vlans"] = [{"vid": v, "ports": ["s%d" % h.i for h in self.hosts if h.vlan == v]} for v in vids]
        sw.setdefault("trace", "switch-queues.csv")
        ports = [self.port("s%d" % h.i, h.i, "p%d" % h.i, h.sw_mac, "10.99.255.%d" % (h.i + 1), h.gbps)
                 for h in self.hosts]
        roles = ['{ lcore = %d; port = "s%d"; role = "switch"; }' % (self.sw_worker, h.i) for h in self.hosts]
        return (self.eal(self.sw_prefix, self.sw_worker) + "ports = (\n  %s\n);\n" % ",\n  ".join(ports) +
                "lcores = (\n  %s\n);\n" % ",\n  ".join(roles) + "switch = %s;\n" % value(sw))

    # -- processes --
    def start(self, name, ns, config, args):
        d = self.out / name
        d.mkdir(parents=True, exist_ok=True)
        (d / "engine.cfg").write_text(config)
        # `ip netns exec` execs the engine: the Popen's pid is the engine's. Its output goes to a file
        # (no pipe that could fill up and block it), nothing comes from stdin.
        cmd = ["ip", "netns", "exec", ns, str(self.engine), "-f", "engine.cfg", "-r", "report.json", "-q"] + args
        with open(d / "engine.log", "w") as log:
            self.procs[name] = subprocess.Popen(cmd, cwd=str(d), stdin=subprocess.DEVNULL, stdout=log,
                                                stderr=subprocess.STDOUT)
        self.started[name] = (time.monotonic(), time.time())
        self.prefixes[name] = re.search(r'file_prefix = "([^"]*)"', config).group(1)

    def wait_ready(self, name, prefix, timeout=30):
        """EAL is up once its runtime folder has its config file; the ports need a moment more."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.procs[name].poll() is not None:
                raise RuntimeError("%s exited at start-up (see %s)" % (name, self.out / name / "engine.log"))
            if (Path("/var/run/dpdk") / prefix / "config").exists():
                time.sleep(1.0)
                return
            time.sleep(0.1)
        raise RuntimeError("%s did not start within %d s" % (name, timeout))

    def run(self):
        self.start("switch", self.sw_ns, self.switch_config(), [])
        self.wait_ready("switch", self.sw_prefix)
        receivers = [h for h in self.hosts if not h.flows]
        senders = [h for h in self.hosts if h.flows]
        for h in receivers:
            self.start(h.name, h.ns, self.host_config(h), [])
        for h in receivers:
            self.wait_ready(h.name, h.prefix)
        for h in senders:
            self.start(h.name, h.ns, self.host_config(h), ["-d", str(self.duration)])
        self.wait_senders([h.name for h in senders])
        time.sleep(0.5)  # frames still in the switch and the veths arrive
        for h in receivers:
            self.stop(h.name)
        self.stop("switch")

    def wait(self, deadlines):
        """Waits until every process named in `deadlines` (name -> time.monotonic() deadline) has
        ended, or one is past its deadline; returns those past it, still running. Deadlines count
        only the time this script saw pass: a look that comes more than STALL_S late (this script,
        or the whole machine, was stopped: a paused VM, a frozen cgroup, SIGSTOP) moves them all by
        its delay (in `deadlines`), noted in lab-report.json; the engines stood still as well."""
        last = time.monotonic()
        while True:
            pending, slow = [], []
            for n in deadlines:
                t = time.monotonic()
                if self.procs[n].poll() is None:  # waitpid(WNOHANG): should never take long
                    pending.append(n)
                if time.monotonic() - t > 1.0:
                    slow.append("%s's waitpid took %.1f s" % (n, time.monotonic() - t))
            now = time.monotonic()
            if now - last > STALL_S:
                self.notes.append("lab-multi did not run for %.1f s (the machine or this script stopped%s); the "
                                  "processes' deadlines were moved by as much" % (now - last, "".join(
                                      "; " + x for x in slow)))
                print("lab-multi: " + self.notes[-1], file=sys.stderr)
                for n in deadlines:
                    deadlines[n] += now - last
            last = now
            if not pending:
                return []
            late = [n for n in pending if now >= deadlines[n]]
            if late:
                return late
            time.sleep(0.05)

    def wait_senders(self, names):
        """Each sender ends by itself after its -d; one still running `grace` seconds later is stuck:
        it is diagnosed and killed (the others still get their time), and the lab fails."""
        deadlines = {n: self.started[n][0] + self.duration + self.grace for n in names}
        problems = []
        while deadlines:
            for n in self.wait(deadlines):
                problems.append(self.kill_stuck(n, "still running %.1f s after it started (a %.3g s run, then %.3g s "
                                                   "of grace)" % (time.monotonic() - self.started[n][0],
                                                                  self.duration, self.grace)))
            deadlines = {n: d for n, d in deadlines.items() if self.procs[n].poll() is None}
        if problems:
            raise RuntimeError("\n".join(problems))

    def stop(self, name, grace=20):
        p = self.procs.get(name)
        if p is None or p.poll() is not None:
            return
        p.send_signal(signal.SIGINT)  # the engine stops and writes its report
        t = time.monotonic()
        if self.wait({name: t + grace}):
            self.stuck.append(self.kill_stuck(name, "still running %.1f s after SIGINT (%.1f s after it started)" % (
                time.monotonic() - t, time.monotonic() - self.started[name][0])))

    def phase(self, name):
        """Where in its life a running engine is, from what it leaves in files: EAL's runtime config
        appears once rte_eal_init() is done, the report after the run, and the engine removes the
        runtime folder after rte_eal_cleanup(), just before it returns from main()."""
        up = (Path("/var/run/dpdk") / self.prefixes[name] / "config").exists()
        report = (self.out / name / "report.json").exists()
        return "phase: %s\n" % (
            "after its report, before its EAL runtime folder's removal: release() or rte_eal_cleanup()" if up and report
            else "after rte_eal_cleanup() and its EAL runtime folder's removal: exit (atexit handlers, library "
                 "destructors, the kernel's exit)" if report
            else "EAL up, no report: setting up, running, or stopping its ports" if up
            else "no EAL runtime config and no report: in rte_eal_init() or before")

    def timeline(self):
        """Every process of the lab: when it started, when it wrote its report, how it is."""
        t0 = min(w for _, w in self.started.values())
        rows = []
        for n, p in self.procs.items():
            rep = self.out / n / "report.json"
            rows.append("  %-8s started at +%.1f s, report %s, %s" % (
                n, self.started[n][1] - t0,
                "at +%.1f s" % (rep.stat().st_mtime - t0) if rep.exists() else "not written",
                "running" if p.poll() is None else "exited with %s" % p.returncode))
        return "the lab's processes (times since the first one's start):\n" + "\n".join(rows) + "\n"

    def kill_stuck(self, name, why):
        """Diagnoses a process past its deadline (diagnosis-<name>.txt), kills it; returns the problem's
        text, the diagnosis included."""
        p = self.procs[name]
        try:
            text = self.phase(name) + diagnose(p.pid, self.out / name, self.started[name][1]) + self.timeline()
        except Exception as e:  # a diagnosis that fails must not keep the process alive
            text = "(the diagnosis failed: %r)" % e
        f = self.out / ("diagnosis-%s.txt" % name)
        f.write_text("%s %s\n%s" % (name, why, text))
        p.kill()
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:  # not even SIGKILL ends it (a thread in the kernel, state D)
            text += "\n(still not ended 30 s after SIGKILL)"
        return "%s %s: stuck, killed; diagnosis (also in %s):\n%s" % (name, why, f, text)

    def teardown(self):
        for name in list(self.procs):
            self.stop(name, grace=5)
        for ns in self.namespaces:
            self.ip("ip", "netns", "del", ns, check=False)
        for prefix in [self.sw_prefix] + [h.prefix for h in self.hosts]:
            shutil.rmtree(Path("/var/run/dpdk") / prefix, ignore_errors=True)

    # -- results --
    def collect(self):
        reports, problems = {}, list(self.stuck)
        for name, p in self.procs.items():
            f = self.out / name / "report.json"
            if p.returncode != 0:
                problems.append("%s exited with %s (see %s)" % (name, p.returncode, self.out / name / "engine.log"))
            if f.exists():
                reports[name] = json.loads(f.read_text())
            else:
                problems.append("%s wrote no report" % name)
        flows = []
        sw = reports.get("switch", {}).get("switch", {})
        by_name = {x.name: x for x in self.hosts}
        for h in self.hosts:
            for fl in reports.get(h.name, {}).get("flows", []):
                if fl["group"] not in [x.get("name") for x in h.flows]:
                    continue
                spec = next(x for x in h.flows if fl["group"] == x.get("name"))
                to = by_name[spec["to"]]
                rx = next((q for q in reports.get(to.name, {}).get("rx_qps", []) if q["qpn"] == fl["dest_qpn"]), {})
                swf = next((x for x in sw.get("flows", []) if x["egress"] == "s%d" % to.i and
                            x["dest_qpn"] == fl["dest_qpn"]), {})
                sw_in = next((p for p in sw.get("ports", []) if p["port"] == "s%d" % h.i), {})
                row = {"flow": fl["name"], "from": h.name, "to": to.name, "tx_packets": fl["tx_packets"],
                       "switch_admitted": swf.get("admitted", 0), "switch_dropped": swf.get("dropped", 0),
                       "switch_queued_at_end": swf.get("queued_at_end", 0), "rx_packets": rx.get("packets", 0),
                       "vlan_filtered": sw_in.get("dropped", {}).get("vlan", 0) if h.vlan != to.vlan else 0,
                       "cnp_rx": fl.get("cnp_rx", 0), "goodput_gbps": rx.get("payload_bytes", 0) * 8 / 1e9 /
                       max(1e-9, reports[h.name]["duration_s"])}
                # frames the kernel (veth, packet sockets) lost between the processes
                row["lost_between_processes"] = (row["tx_packets"] - row["switch_dropped"] - row["vlan_filtered"] -
                                                 row["switch_queued_at_end"] - row["rx_packets"])
                flows.append(row)
        lab = {"lab": self.name, "duration_s": self.duration, "ok": not problems, "problems": problems,
               "notes": self.notes, "flows": flows, "processes": reports}
        (self.out / "lab-report.json").write_text(json.dumps(lab, indent=2))
        return lab


# ---- a stuck process's diagnosis --------------------------------------------------------------

def _read(path, default="(unreadable)"):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError as e:
        return "%s: %s" % (default, e.strerror)


def _status(path, keys):
    fields = {}
    for line in _read(path, "").splitlines():
        k, _, v = line.partition(":")
        fields[k] = v.strip()
    return ", ".join("%s %s" % (k, fields[k]) for k in keys if k in fields)


def diagnose(pid, folder, started_wall, log_lines=30):
    """What a process past its deadline is doing, as text: the process's and each thread's state,
    kernel wait channel and kernel stack (/proc, readable as root), every thread's user-space
    backtrace (eu-stack, when installed), whether and when it wrote its report, the machine's load,
    and the end of its log (block-buffered: its newest lines may still be in the process)."""
    out = []
    proc = Path("/proc/%d" % pid)
    out.append("pid %d: %s" % (pid, _read(proc / "cmdline").replace("\0", " ").strip()))
    out.append("status: " + _status(proc / "status", ("State", "Threads", "SigPnd", "ShdPnd", "SigBlk", "SigCgt",
                                                       "voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")))
    out.append("wchan: " + (_read(proc / "wchan").strip() or "0 (running or runnable)"))
    children = _read(proc / "task" / str(pid) / "children", "").split()
    if children:
        out.append("children: " + " ".join(children))
    rep = folder / "report.json"
    if rep.exists():
        out.append("report.json written %.1f s after the start, %.1f s ago" % (
            rep.stat().st_mtime - started_wall, time.time() - rep.stat().st_mtime))
    else:
        out.append("report.json: not written")
    out.append("machine: loadavg %s; cpu pressure: %s" % (
        _read("/proc/loadavg").strip(), (_read("/proc/pressure/cpu", "-").splitlines() or ["-"])[0]))
    out.append("threads (tid, name, state, wchan, kernel stack):")
    try:
        tids = sorted(os.listdir(proc / "task"), key=int)
    except OSError as e:
        tids = []
        out.append("  (%s)" % e.strerror)
    for tid in tids:
        t = proc / "task" / tid
        out.append("  %s %s: %s, wchan %s" % (tid, _read(t / "comm").strip(), _status(t / "status", ("State",)),
                                             _read(t / "wchan").strip() or "0"))
        out.extend("      " + l for l in _read(t / "stack").splitlines())
    eu = shutil.which("eu-stack")
    if eu:
        try:
            r = subprocess.run([eu, "-p", str(pid)], capture_output=True, text=True, timeout=30)
            out.append("eu-stack -p %d:" % pid)
            out.extend("  " + l for l in (r.stdout + r.stderr).splitlines())
        except subprocess.TimeoutExpired:
            out.append("eu-stack -p %d: no answer within 30 s" % pid)
    else:
        out.append("no user-space backtrace: eu-stack (Debian's elfutils) is not installed")
    log = folder / "engine.log"
    lines = _read(log).splitlines()
    out.append("engine.log, last %d of %d lines (stdout to a file is block-buffered: the newest lines may "
               "still be in the process):" % (min(log_lines, len(lines)), len(lines)))
    out.extend("  " + l for l in lines[-log_lines:])
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("lab")
    ap.add_argument("--out", help="results folder (default results/lab-multi-<name>-<time>)")
    ap.add_argument("--engine", default=os.environ.get("ROCE_ENGINE", str(ROOT / "build" / "apps" / "roce-engine")))
    ap.add_argument("--duration", type=float)
    ap.add_argument("--grace", type=float, default=60.0,
                    help="a sender still running this long after its run's duration is stuck: diagnosed "
                         "(DIR/diagnosis-<host>.txt) and killed (default 60)")
    a = ap.parse_args()
    if os.geteuid() != 0:
        fail("needs root (network namespaces)")
    d = load(a.lab)
    out = Path(a.out or ROOT / "results" / ("lab-multi-%s-%s" % (d["name"], time.strftime("%Y%m%d-%H%M%S"))))
    out.mkdir(parents=True, exist_ok=True)
    lab = Lab(d, out.resolve(), Path(a.engine).resolve(), a.duration, a.grace)
    # Ctrl-C and SIGTERM tear down too
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    error = None
    try:
        lab.create()
        lab.run()
    except (RuntimeError, subprocess.TimeoutExpired, KeyboardInterrupt) as e:
        error = str(e) or type(e).__name__
    finally:
        lab.teardown()
    result = lab.collect()
    if error:
        result["problems"].insert(0, error)
        result["ok"] = False
        (lab.out / "lab-report.json").write_text(json.dumps(result, indent=2))
    print("%-8s %-6s %-6s %10s %10s %8s %8s %8s %9s" % ("flow", "from", "to", "sent", "received", "dropped", "queued",
                                                        "lost", "Gb/s"))
    for f in result["flows"]:
        print("%-8s %-6s %-6s %10d %10d %8d %8d %8d %9.3f" % (f["flow"], f["from"], f["to"], f["tx_packets"],
              f["rx_packets"], f["switch_dropped"], f["switch_queued_at_end"], f["lost_between_processes"],
              f["goodput_gbps"]))
    for p in result["problems"]:
        print("problem: " + p.replace("\n", "\n  "), file=sys.stderr)
    print("lab-multi: results in %s" % lab.out)
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
