"""A fabric whose switches are outside the engine (docs/fabric.md, "Real ports and a real switch"):
the NICs are ports on devices, the switch tier is a real one. Here the real switch tier is the
Linux kernel's IPv4 forwarding in network namespaces (scripts/linux-fabric.py builds the fabric's
leaves and spines from roce-fabric's plan), the NICs veths opened with net_af_packet. The
oracles are independent of our packet code: the kernel forwards what it parses as IPv4, counts
what each interface sent and received, and tc's RED counts the frames it marked CE; scapy reads
the frames the NICs received (TTL, checksum, ICRC after three routed hops)."""
import json
import os
import re
import subprocess
import sys

import pytest
from scapy.all import IP, Ether, rdpcap
from scapy.contrib.roce import BTH

from conftest import ROOT, engine_path

import linux_tier
from linux_tier import SCRIPT, need_netns

sys.path.insert(0, str(ROOT / "tests" / "oracle"))
import oracle_common as oc  # noqa: E402

FABRIC = ('fabric = { kind = "leaf-spine"; leaves = 2; spines = 2; hosts_per_leaf = 2; host_gbps = %g; '
          'uplink_gbps = %g;%s\n%s};\n')


class LinuxFabric:
    """scripts/linux-fabric.py up on a fabric; down at the end, whatever happened."""

    def __init__(self, tmp, prefix, gbps, extra_args=()):
        self.tmp, self.prefix, self.gbps = tmp, prefix, gbps
        base = tmp / "fabric-base.cfg"
        base.write_text(FABRIC % (gbps, gbps, "", ""))
        self.external = tmp / "external.cfg"
        self.info = linux_tier.up(base, prefix, "--external-out", self.external, *extra_args)

    def down(self):
        linux_tier.down(self.prefix)

    def config(self, body, memory_mb=256):
        """An engine config: the fabric with its NICs on the veths, then body."""
        return ('eal = { lcores = "0-1"; memory_mb = %d; };\n' % memory_mb +
                FABRIC % (self.gbps, self.gbps, "", '  @include "%s"\n' % self.external) + body)

    def engine(self, name, text, *args, timeout=120):
        cfg, rep = self.tmp / (name + ".cfg"), self.tmp / (name + ".json")
        cfg.write_text(text)
        r = subprocess.run(["ip", "netns", "exec", self.info["hosts_namespace"], str(engine_path()), "-f", str(cfg), "-q",
                            "-r", str(rep)] + [str(a) for a in args], capture_output=True, text=True, timeout=timeout,
                           cwd=str(self.tmp))
        return r.returncode, json.loads(rep.read_text()) if rep.exists() else None, r.stdout + r.stderr

    def link_stats(self, switch, dev):
        return linux_tier.link_stats("%s-%s" % (self.prefix, switch), dev)

    def qdisc_dropped(self, ns):
        """Frames every shaped port of namespace ns dropped (its FIFOs' tc counters)."""
        total = 0
        for dev in json.loads(subprocess.run(["ip", "-n", ns, "-j", "link", "show"], capture_output=True, text=True,
                                             check=True).stdout):
            out = subprocess.run(["tc", "-n", ns, "-s", "qdisc", "show", "dev", dev["ifname"]], capture_output=True,
                                 text=True, check=True).stdout
            total += sum(int(m) for m in re.findall(r"bfifo 10:.*?dropped (\d+)", out, re.S))
        return total


@pytest.fixture
def linux_fabric(tmp_path):
    need_netns()
    made = []

    def make(gbps=0.2, extra_args=()):
        lf = LinuxFabric(tmp_path, "rx%d" % (os.getpid() % 10000), gbps, extra_args)
        made.append(lf)
        return lf

    yield make
    for lf in made:
        lf.down()


def port_of(links, nic):
    """The switch and its interface (l<K>) that face NIC nic."""
    ((sw, dev, _),) = linux_tier.nic_facing(links, [nic])
    return sw, dev


def plan_links(tmp):
    return linux_tier.plan_links(tmp / "fabric-base.cfg", tmp)


def rc_flow(name, src, dst, qpn, messages=300, rate=0.02, extra=""):
    return ('{ name = "%s"; port = "%s"; dst = "%s"; transport = "rc"; ops = { write = 1; }; message_size = 4096; '
            'mtu = 1024; qpn = 0x%x; dest_qpn = 0x%x; rate_gbps = %g; stop = { messages = %d; }; %s }'
            % (name, src, dst, qpn, qpn + 0x1000, rate, messages, extra))


def test_frames_cross_a_linux_leaf_spine(linux_fabric, tmp_path):
    lf = linux_fabric()
    cap = tmp_path / "ext.pcapng"
    rc, rep, out = lf.engine("cross", lf.config(
        "flows = ( %s,\n %s );\nrun = { duration_s = 2.0; capture = \"%s\"; };\n"
        % (rc_flow("x", "h0", "h2", 0x100), rc_flow("y", "h3", "h1", 0x200), cap)))
    assert rc == 0, out
    fab = rep["fabric"]
    assert fab["external"] is True and "switches" not in fab and "links" not in fab
    nics = {n["name"]: n for n in fab["nics"]}
    assert nics["h2"]["ipv4"] == "198.18.1.2" and nics["h0"]["gateway_mac"] == "02:dd:00:00:00:01"
    assert nics["h1"]["device"] == "net_af_packet1"
    for g in ("x", "y"):
        assert sum(q["rc"]["completions"] for q in rep["flows"] if q["group"] == g) == 300, rep["flows"]
    # the kernel's leaf0 sent toward h1 what the engine's h1 received, frame for frame
    links = plan_links(tmp_path)
    sw, dev = port_of(links, "h1")
    ports = {p["name"]: p for p in rep["ports"]}
    assert lf.link_stats(sw, dev)["tx"]["packets"] == ports["h1"]["rx_packets"]
    # h0's frames toward h2 as the NIC h2 received them: routed by leaf0, a spine and leaf1
    seen = 0
    for p in rdpcap(str(cap)):
        if BTH not in p or p[IP].dst != nics["h2"]["ipv4"] or p[Ether].dst != nics["h2"]["mac"]:
            continue
        seen += 1
        assert p[Ether].src == "02:dd:00:00:00:01"           # leaf1's router MAC
        assert p[IP].ttl == 64 - 3, p[IP].ttl
        l3 = bytes(p[IP])
        assert oc.inet_csum(l3[:20]) == 0
        assert oc.icrc_v2(l3[:-4]) == int.from_bytes(l3[-4:], "little")
    assert seen >= 300 * 4                                      # 4 packets a message, retries aside


def route_devices(ns, prefix):
    """The interfaces the kernel's route to prefix in namespace ns leaves by (its next hops)."""
    (r,) = json.loads(subprocess.run(["ip", "-n", ns, "-j", "route", "show", prefix], capture_output=True, text=True,
                                     check=True).stdout)
    return sorted(h["dev"] for h in r["nexthops"]) if "nexthops" in r else [r["dev"]]


def test_a_failed_leaf_uplink_is_routed_around(linux_fabric, tmp_path):
    """linux-fabric.py link does what a routing protocol would after a failure: leaf1 stops sending
    toward spine0, which lost its link to leaf0, so no flow is black-holed (the kernel's routes and
    RC's completions say so); after the link comes back, both spines again."""
    lf = linux_fabric()
    links = plan_links(tmp_path)
    idx = {l["name"]: k for k, l in enumerate(links)}
    both = sorted("l%d" % idx[n] for n in ("leaf1-spine0", "leaf1-spine1"))
    leaf1 = lf.prefix + "-leaf1"
    assert route_devices(leaf1, "198.18.0.0/24") == both

    def link(state):
        subprocess.run([sys.executable, str(SCRIPT), "link", str(tmp_path / "fabric-base.cfg"), "leaf0-spine0", state,
                        "--prefix", lf.prefix, "--roce-fabric", str(linux_tier.fabric_path())], check=True, timeout=60)
    link("down")
    assert route_devices(leaf1, "198.18.0.0/24") == ["l%d" % idx["leaf1-spine1"]]
    # eight QPs from leaf1's hosts to leaf0's: their UDP source ports spread over both spines' hash
    # buckets at leaf1; every message completes
    flows = ",\n ".join(rc_flow("q%d" % i, "h%d" % (2 + i % 2), "h%d" % (i % 2), 0x100 + 0x10 * i, messages=50)
                        for i in range(8))
    rc, rep, out = lf.engine("around", lf.config("flows = ( %s );\nrun = { duration_s = 1.5; };\n" % flows))
    assert rc == 0, out
    done = {q["group"]: 0 for q in rep["flows"]}
    for q in rep["flows"]:
        done[q["group"]] += q["rc"]["completions"]
    assert done == {"q%d" % i: 50 for i in range(8)}, done
    link("up")
    assert route_devices(leaf1, "198.18.0.0/24") == both


@pytest.mark.release_only  # (CI's time: the engine's side runs under ASan in the others)
def test_a_shaped_linux_port_drops_what_the_receiver_misses(linux_fabric, tmp_path):
    """2:1 into h1 at line rate through HTB-shaped ports with tail-drop FIFOs: what the senders
    sent and h1 did not receive is what the kernel's queues dropped (tc's counters), frame for
    frame, and h1 received its link's rate."""
    lf = linux_fabric(gbps=0.1, extra_args=("--shape", "--queue-kb", "32"))
    flows = ['{ name = "s%d"; port = "h%d"; dst = "h1"; transport = "uc"; ops = { write = 1; }; message_size = 65536; '
             'mtu = 1024; qpn = 0x%x; dest_qpn = 0x%x; rate_gbps = 0.1; }' % (i, s, 0x100 * (i + 1), 0x100 * (i + 1) + 0x1000)
             for i, s in enumerate((0, 2))]
    rc, rep, out = lf.engine("drop", lf.config("flows = ( %s );\nrun = { duration_s = 1.5; };\n" % ",\n".join(flows)))
    assert rc == 0, out
    ports = {p["name"]: p for p in rep["ports"]}
    sent = ports["h0"]["tx_packets"] + ports["h2"]["tx_packets"]
    received = ports["h1"]["rx_packets"]
    dropped = sum(lf.qdisc_dropped(ns) for ns in lf.info["switch_namespaces"])
    assert dropped > 0
    assert sent - received == dropped, (sent, received, dropped)
    # h1's link carried its rate: 0.1 Gb/s of frames (with 24 bytes of preamble, gap and FCS
    # each) over the run, within what the shaper's burst and the run's ends allow
    gbps = (ports["h1"]["rx_bytes"] + 24 * received) * 8 / 1.5e9
    assert 0.08 < gbps < 0.11, gbps


# ---- configs the engine refuses, naming file, line and setting ------------------------------------

NICS = ('{ nic = "h0"; device = "net_null0"; }, { nic = "h1"; device = "net_null1"; },\n'
        '    { nic = "h2"; device = "net_null2"; }, { nic = "h3"; device = "net_null3"; }')


@pytest.mark.parametrize("external, extra, message", [
    ('gateway_mac = "02:dd:00:00:00:01"; nics = ( %s );' % NICS, "", None),
    ('gateway_mac = "02:dd:00:00:00:01"; nics = ( %s );' % NICS.replace('"h3"', '"h0"'), "",
     "fabric.external.nics.[3].nic: NIC h0 is listed twice"),
    ('gateway_mac = "02:dd:00:00:00:01"; nics = ( %s );' % NICS.replace('"h3"', '"h7"'), "",
     "'h7' is not a NIC of the fabric (h0 .. h3)"),
    ('gateway_mac = "02:dd:00:00:00:01"; nics = ( %s );' % NICS.split(",\n")[0], "",
     "fabric.external.nics: NIC h2 has no device (list every NIC of the fabric: 4, h0 .. h3)"),
    ('nics = ( %s );' % NICS, "", "NIC h0 has no gateway_mac"),
    ('gateway_mac = "03:dd:00:00:00:01"; nics = ( %s );' % NICS, "", "multicast address"),
    ('gateway_mac = "02:dd:00:00:00:01"; nics = ( %s );' % NICS.replace("net_null3", "net_null2"), "",
     "device net_null2 is already port 'h2'"),
    ('gateway_mac = "02:dd:00:00:00:01"; nics = ( %s );' % NICS.replace("net_null3", "nic3"), "",
     "'nic3' is neither a vdev name"),
    ('gateway_mac = "02:dd:00:00:00:01"; vlan = 3; nics = ( %s );' % NICS, "",
     "fabric.external.vlan: unknown setting"),
    ('gateway_mac = "02:dd:00:00:00:01"; nics = ( %s );' % NICS, 'events = ( { at_s = 0.1; link = "leaf0-spine0"; state = "down"; } );',
     "fabric.events: with fabric.external, events need external.link_command"),
    ('gateway_mac = "02:dd:00:00:00:01"; nics = ( %s );' % NICS, "lcores = [1];", "fabric.lcores: not with fabric.external"),
    ('gateway_mac = "02:dd:00:00:00:01"; nics = ( %s );' % NICS, "SWITCH", "switch: not with fabric.external"),
])
def test_bad_external_fabrics_are_refused(engine, external, extra, message):
    after = "switch = { buffer_kb = 512; };\n" if extra == "SWITCH" else ""
    text = ('eal = { lcores = "0-1"; memory_mb = 256; };\n' +
            FABRIC % (1.0, 1.0, "" if after else "\n  " + extra, "  external = { %s };\n" % external) + after +
            'traffic = ( { name = "t"; pattern = "pairs"; pairs = ( ["h0", "h2"] ); flow = { transport = "uc"; '
            'ops = { write = 1; }; message_size = 4096; }; } );\n')
    rc, _, out = engine.run(text, "--check", report=False)
    if message is None:
        assert rc == 0, out
        return
    assert rc != 0, out
    assert message in out, out
    assert "run%d.cfg:" % engine.n in out, out


@pytest.mark.release_only  # (CI's time: the engine's side runs under ASan in the others)
def test_the_shipped_example_runs_on_linux_switches(tmp_path):
    """configs/fabric-external-linux.cfg as its comment says to run it: through the Linux switches
    built from the file itself, every frame the NICs sent reaches their leaves' ports."""
    need_netns()
    cfg = ROOT / "configs" / "fabric-external-linux.cfg"
    prefix = "ex%d" % (os.getpid() % 10000)
    info = linux_tier.up(cfg, prefix, "--shape")
    try:
        p = subprocess.run(["ip", "netns", "exec", info["hosts_namespace"], str(engine_path()), "-f", str(cfg), "-q", "-d",
                            "1", "-r", str(tmp_path / "r.json")], capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stdout + p.stderr
        rep = json.loads((tmp_path / "r.json").read_text())
        assert rep["fabric"]["external"] and len(rep["flows"]) == 8
        ports = {port["name"]: port for port in rep["ports"]}
        for sw, dev, nic in linux_tier.nic_facing(linux_tier.plan_links(cfg, tmp_path), ports):
            assert linux_tier.link_stats("%s-%s" % (prefix, sw), dev)["rx"]["packets"] == ports[nic]["tx_packets"], nic
    finally:
        linux_tier.down(prefix)


# ---- link events through a command (external.link_command) -----------------------------------------

def null_fabric(external_extra, fabric_extra="", duration=1.0):
    return ('eal = { lcores = "0-1"; memory_mb = 256; };\n' +
            FABRIC % (1.0, 1.0, "\n  " + fabric_extra, '  external = { gateway_mac = "02:dd:00:00:00:01"; nics = ( %s ); %s };\n'
                      % (NICS, external_extra)) +
            'traffic = ( { name = "t"; pattern = "pairs"; pairs = ( ["h0", "h2"] ); flow = { transport = "uc"; '
            'ops = { write = 1; }; message_size = 4096; rate_gbps = 0.01; }; } );\nrun = { duration_s = %g; };\n' % duration)


def test_link_events_run_their_command_at_their_time(engine, tmp_path):
    log = tmp_path / "links.log"
    rc, rep, out = engine.run(null_fabric(
        'link_command = "echo {link} {state} $(date +%%s.%%N) >> %s; test {state} = up";' % log,
        'events = ( { at_s = 0.3; link = "leaf0-spine1"; state = "down"; }, { at_s = 0.6; link = "leaf0-spine1"; state = "up"; } );',
        duration=0.7))
    assert rc == 0, out
    lines = log.read_text().split("\n")
    assert [l.split()[:2] for l in lines if l] == [["leaf0-spine1", "down"], ["leaf0-spine1", "up"]]
    # the commands started 0.3 s apart, as the events' times are
    t_down, t_up = (float(l.split()[2]) for l in lines if l)
    assert 0.25 < t_up - t_down < 0.45, (t_down, t_up)
    ev = rep["fabric"]["events"]
    assert [(e["link"], e["state"], e["applied"]) for e in ev] == [("leaf0-spine1", "down", True), ("leaf0-spine1", "up", True)]
    assert abs(ev[0]["applied_s"] - 0.3) < 0.05 and abs(ev[1]["applied_s"] - 0.6) < 0.05
    assert ev[0]["exit_status"] == 1 and ev[1]["exit_status"] == 0      # `test down = up` fails: said, not hidden
    assert ev[1]["command"].startswith("echo leaf0-spine1 up ")


@pytest.mark.release_only  # (CI's time: the engine's side runs under ASan in the others)
def test_a_link_command_still_going_at_the_end_is_killed(engine, tmp_path):
    rc, rep, out = engine.run(null_fabric('link_command = "sleep 600";',
                                          'events = ( { at_s = 0.1; link = "leaf0-spine0"; state = "down"; } );',
                                          duration=0.3))
    assert rc == 0, out
    e = rep["fabric"]["events"][0]
    assert e["applied"] and e["exit_status"] == 128 + 9 and e["command_ms"] >= 9000
    assert subprocess.run(["pgrep", "-f", "^sleep 600$"], capture_output=True).returncode != 0   # the shell's child too


@pytest.mark.parametrize("external_extra, fabric_extra, message", [
    ("", 'events = ( { at_s = 0.1; link = "leaf0-spine0"; state = "down"; } );',
     "fabric.events: with fabric.external, events need external.link_command"),
    ('link_command = "";', "", "fabric.external.link_command: is empty"),
    ('counters_command = "";', "", "fabric.external.counters_command: is empty"),
    ('counters_command = 3;', "", "fabric.external.counters_command"),
    ('link_command = "x";', 'events = ( { at_s = 0.1; link = "leaf0-spine9"; state = "down"; } );', "leaf0-spine9"),
    ('link_command = "x";', 'convergence_ms = 5;', "fabric.convergence_ms: not with fabric.external"),
    ('link_command = "%s";' % ("x{link}" * 30), 'events = ( { at_s = 0.1; link = "leaf0-spine0"; state = "down"; } );',
     "longer than 255 characters once {link} and {state} are filled in"),
])
def test_bad_link_events_are_refused(engine, external_extra, fabric_extra, message):
    rc, _, out = engine.run(null_fabric(external_extra, fabric_extra), "--check", report=False)
    assert rc != 0 and message in out, out


# ---- the switches' own counters (external.counters_command) -----------------------------------------

@pytest.mark.release_only  # (CI's time: the engine's side runs under ASan in the others)
def test_counters_command_gives_the_linux_switches_counts(linux_fabric, tmp_path):
    """2:1 into h1 through shaped Linux ports, the switches' counters read by linux-fabric.py
    counters before and after: the report's links say what the kernel's ports sent and dropped,
    and they agree with the NICs' own counts."""
    lf = linux_fabric(gbps=0.1, extra_args=("--shape", "--queue-kb", "32"))
    base = tmp_path / "fabric-base.cfg"
    counters = '"%s %s counters %s --prefix %s"' % (sys.executable, SCRIPT, base, lf.prefix)
    lf.external.write_text(lf.external.read_text().replace('external = {', 'external = { counters_command = %s;' % counters))
    flows = ['{ name = "s%d"; port = "h%d"; dst = "h1"; transport = "uc"; ops = { write = 1; }; message_size = 65536; '
             'mtu = 1024; qpn = 0x%x; dest_qpn = 0x%x; rate_gbps = 0.1; }' % (i, s, 0x100 * (i + 1), 0x100 * (i + 1) + 0x1000)
             for i, s in enumerate((0, 2))]
    rc, rep, out = lf.engine("cnt", lf.config("flows = ( %s );\nrun = { duration_s = 1.0; };\n" % ",\n".join(flows)))
    assert rc == 0, out
    fab = rep["fabric"]
    assert "error" not in fab["counters_command"], fab["counters_command"]
    links = {l["name"]: l for l in fab["links"]}
    ports = {p["name"]: p for p in rep["ports"]}
    assert links["h1-leaf0"]["a_to_b"]["frames"] == ports["h1"]["rx_packets"]
    assert links["h0-leaf0"]["b_to_a"]["frames"] == ports["h0"]["tx_packets"]
    assert links["h2-leaf1"]["b_to_a"]["frames"] == ports["h2"]["tx_packets"]
    # h2's frames crossed the spines: leaf1's uplinks carried them all, but for those leaf1 dropped
    # (its uplink FIFOs overflow when a held-up NIC lcore catches up in a burst: a busy machine)
    up = [links["leaf1-spine%d" % k]["a_to_b"] for k in (0, 1)]
    assert sum(d["frames"] + d["dropped"] for d in up) + links["h2-leaf1"]["b_to_a"]["dropped"] == ports["h2"]["tx_packets"]
    dropped = sum(l[d]["dropped"] for l in links.values() for d in ("a_to_b", "b_to_a"))
    sent = ports["h0"]["tx_packets"] + ports["h2"]["tx_packets"]
    assert dropped > 0 and dropped == sent - ports["h1"]["rx_packets"]


def test_counters_command_differences_and_failures(engine, tmp_path):
    """A fake command (a counter file it bumps): the report's links are after - before per
    counter, and per element of a counter per priority, null where one went backwards; a command
    that fails or prints no JSON is said, and the run still ends well."""
    state = tmp_path / "n"
    state.write_text("0")
    fake = tmp_path / "fake.sh"
    fake.write_text('#!/bin/sh\nn=$(cat %s); echo $((n + 1)) > %s\n'
                    'printf \'{"links": [{"name": "leaf0-spine0", "a_to_b": {"frames": %%d, "dropped": 7, "wrap": %%d}, '
                    '"b_to_a": {"frames": 5, "ecn_marked": %%d, "note": "x", "pfc_xoff_sent": [0, %%d, 4, %%d, "y"]}}]}\' '
                    '$((100 + 40 * n)) $((9 - n)) $((3 * n)) $((5 - n)) $((11 * n))\n' % (state, state))
    fake.chmod(0o755)
    rc, rep, out = engine.run(null_fabric('counters_command = "%s";' % fake, duration=0.05))
    assert rc == 0, out
    link = rep["fabric"]["links"][0]
    assert link == {"name": "leaf0-spine0", "a_to_b": {"frames": 40, "dropped": 0, "wrap": None},
                    "b_to_a": {"frames": 0, "ecn_marked": 3, "pfc_xoff_sent": [0, None, 0, 11, None]}}, link
    for command, why in (("exit 3", "exit status 3"), ("echo nope", "its output is not JSON"),
                         ("echo {}", 'no "links" list')):
        rc, rep, out = engine.run(null_fabric('counters_command = "%s";' % command, duration=0.05))
        assert rc == 0, out
        assert why in rep["fabric"]["counters_command"]["error"] and "links" not in rep["fabric"], rep["fabric"]
