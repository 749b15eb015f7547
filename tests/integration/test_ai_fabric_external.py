"""The AI-fabric suite on a real switch tier (docs/ai-fabric.md, "Real ports and a real switch"):
the shipped configs/suites/ai-fabric-external.cfg, its fabric's switches built by
scripts/linux-fabric.py as Linux routers in network namespaces (HTB-shaped ports), the suite run
in the hosts' namespace. The oracle is the kernel: every frame the suite's NICs sent and
received over all its trials went through the kernel's switch ports, whose counters must add up
to the trials' own port counts; the figures a real switch keeps to itself (drops, ECMP groups,
uplink use) are null, not zero; the categories that need the virtual switches are refused by
--check when listed and not run when not."""
import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

import linux_tier
from conftest import ROOT, engine_path
from linux_tier import need_netns
from test_fabric import fabric_path

SUITE = ROOT / "configs" / "suites" / "ai-fabric-external.cfg"

# the release build only (CI's time), as the suite's other tests: the engine's side of
# fabric.external runs under ASan in test_fabric_external.py
pytestmark = pytest.mark.release_only


def suite_path():
    return Path(os.environ.get("ROCE_SUITE", ROOT / "build" / "apps" / "roce-suite")).resolve()


@pytest.fixture
def linux_switches():
    need_netns()
    prefix = "sx%d" % (os.getpid() % 10000)
    yield linux_tier.up(SUITE, prefix, "--shape")
    linux_tier.down(prefix)


def nic_facing_counts(info, tmp):
    """Frames the switches' NIC-facing ports received (the NICs sent) and sent (the NICs received)."""
    rx = tx = 0
    for sw, dev, _ in linux_tier.nic_facing(linux_tier.plan_links(SUITE, tmp), info["nics"]):
        st = linux_tier.link_stats(info["hosts_namespace"].replace("-hosts", "-" + sw), dev)
        rx, tx = rx + st["rx"]["packets"], tx + st["tx"]["packets"]
    return rx, tx


def link_carrier_downs(info, tmp):
    """How often each switch-to-switch link's far end (b) lost its carrier (sysfs carrier_down_count
    in its namespace): a link taken down at end a and up again counts one more. Every link must
    be up."""
    out = {}
    for k, link in enumerate(linux_tier.plan_links(SUITE, tmp)):
        if link["b"] in info["nics"]:
            continue
        ns = info["hosts_namespace"].replace("-hosts", "-" + link["b"])
        read = subprocess.run(["ip", "netns", "exec", ns, "cat", "/sys/class/net/l%d/carrier_down_count" % k,
                               "/sys/class/net/l%d/operstate" % k], capture_output=True, text=True, check=True).stdout.split()
        assert read[1] == "up", (link["name"], read)
        out[link["name"]] = int(read[0])
    return out


def test_the_suite_runs_on_a_linux_switch_tier(linux_switches, tmp_path):
    carrier_before = link_carrier_downs(linux_switches, tmp_path)
    env = dict(os.environ, ROCE_ENGINE=str(engine_path().resolve()), ROCE_FABRIC=str(fabric_path()),
               LINUX_FABRIC_PREFIX=linux_switches["hosts_namespace"][:-len("-hosts")])
    p = subprocess.run(["ip", "netns", "exec", linux_switches["hosts_namespace"], str(suite_path()), str(SUITE),
                        "-o", str(tmp_path / "res"), "-k", str(tmp_path / "trials")],
                       capture_output=True, text=True, timeout=600, env=env, cwd=str(tmp_path))
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr
    rep = json.loads((tmp_path / "res" / "report.json").read_text())
    sec = rep["ai_fabric"]["sections"]
    # what runs on a real switch tier, and only that
    assert set(sec["5_results"]) == {"throughput", "latency", "burst", "ecmp", "collectives", "jct", "interference",
                                     "link_failure", "soak"}
    assert "real switch tier" in sec["1_dut"]["kind"]
    assert sec["3_dut_configuration"]["external"]["gateway_mac"] == "02:dd:00:00:00:01"
    # the switches' drops are what counters_command read; what they keep to themselves is unknown, not zero
    for row in sec["5_results"]["throughput"]["rows"] + sec["5_results"]["collectives"]["rows"]:
        assert row["fabric_dropped"] == 0 and row["worst_mmr"] is None
    for row in sec["5_results"]["collectives"]["rows"]:
        assert row["drop_ppm"] == 0 and row["uplink_utilization_mean"] is None
        assert row["iterations_completed"] == row["iterations"]
        assert 0 < row["busbw_mean_gbps"] <= row["link_gbps"] * 1.001
    # §5.3 against the kernel's queue, by hand: 2 senders at line rate into one link queue a frame
    # a frame time in its tail-drop FIFO of 64 KB (frames counted without their FCS), which HTB's
    # 16 KB bucket may let drain early
    burst = sec["5_results"]["burst"]["rows"][0]
    frame = 1102 - 4
    assert burst["absorbed_frames"] <= (64 + 16) * 1024 / frame * 1.05 + 1, burst
    assert burst["first_loss_frames"] >= 64 * 1024 / frame * 0.95 - 1, burst
    assert burst["expected_frames"] is None and burst["first_loss"]["lost"] == burst["first_loss"]["dropped"] > 0
    # §11.2 through the lab's command: each failure ran and succeeded, the switches' own figures
    # null; the kernel counted each failed link's carrier going down once per failure (at the
    # veth's far end), no other link's, and every link is up again after the suite
    failed = set()
    for row in sec["5_results"]["link_failure"]["rows"]:
        assert row["applied"] and row["link_command_status"] == 0 and row["frames_lost"] is None, row
        assert row["iterations_completed"] == 6 and row["reroute_ms"] is None
        failed |= set(row["links"])
    assert "leaf0-spine0" in failed or "leaf0-spine1" in failed
    # the leaf uplink failed is the one the kernel's counters (counters_command) counted most bytes
    # on in the steady run, by hand from that trial's kept report, not the plan's guess of it
    lf = sec["5_results"]["link_failure"]
    assert lf["busiest_uplink_from"] == "external.counters_command"
    first_failure = min(t["id"] for t in rep["trials"] if t.get("kind") == "link_failure")
    steady = max(t["id"] for t in rep["trials"] if t.get("kind") == "collective" and t["id"] < first_failure)
    counted = json.loads((tmp_path / "trials" / ("t%03d" % steady) / "report.json").read_text())["fabric"]["links"]
    uplinks = {l["name"]: l["a_to_b"]["bytes"] + l["b_to_a"]["bytes"] for l in counted
               if l["name"].startswith("leaf") and "spine" in l["name"]}
    assert [r["links"] for r in lf["rows"] if r["failure"] == "leaf_uplink"] == [[max(uplinks, key=uplinks.get)]], uplinks
    # a real tier's link is down by the time its command ended: the failure fell in the slowest
    # iteration in progress while the command ran, by hand from each trial's phase ends (a ring
    # AllReduce over 4 ranks: 6 phases an iteration)
    for row, t in zip(lf["rows"], [t for t in rep["trials"] if t.get("kind") == "link_failure"]):
        assert 0 < row["command_ms"] < 5000 and row["down_by_s"] == pytest.approx(row["applied_s"] + row["command_ms"] / 1e3)
        coll = json.loads((tmp_path / "trials" / ("t%03d" % t["id"]) / "report.json").read_text())["collectives"][0]
        ends = [e / 1e6 for e in coll["phase_end_us"][5::6]]
        times = [b - a for a, b in zip([0] + ends, ends)]
        first, last = (next((i for i, e in enumerate(ends) if e > s), len(ends)) for s in (row["applied_s"], row["down_by_s"]))
        during = range(first, min(last, len(ends) - 1) + 1)
        assert row["failure_iteration"] == (max(during, key=lambda i: (times[i], -i)) if during else len(ends)), (row, times)
    after = link_carrier_downs(linux_switches, tmp_path)
    downs = {name: after[name] - carrier_before[name] for name in after}
    assert downs == {name: sum(name in row["links"] for row in sec["5_results"]["link_failure"]["rows"])
                     for name in after}, downs
    # §12: every interval sampled, each with its op's iterations; the links' drops and marks unknown
    soak = sec["5_results"]["soak"]
    assert 5 <= soak["sample_count"] <= 7 and soak["stalls"] == 0
    assert all(x["dropped"] is None and x["ecn_marked"] is None for x in soak["samples"])
    assert sum(x["iterations_allreduce"] + x["iterations_alltoall"] for x in soak["samples"]) > 0
    # §8.1 with the switches' own hashing: each leaf's group over the spines, its members' bytes the
    # kernel's counters of that trial (by hand from the kept report), their MMR; no BTH runs
    ecmp = sec["5_results"]["ecmp"]["rows"]
    assert [r["qps_per_pair"] for r in ecmp] == [1, 4] and not any(r["bth_aware"] for r in ecmp)
    for r, t in zip(ecmp, [t for t in rep["trials"] if t.get("kind") == "load_balance"]):
        links = {l["name"]: l for l in json.loads((tmp_path / "trials" / ("t%03d" % t["id"]) / "report.json")
                                                  .read_text())["fabric"]["links"]}
        assert {g["switch"] for g in r["ecmp_groups"]} == {"leaf0", "leaf1"} and r["worst_mmr_flows"] is None
        for g in r["ecmp_groups"]:
            by_hand = [links["%s-%s" % (g["switch"], m)]["a_to_b"]["bytes"] for m in g["members"]]
            assert g["bytes"] == by_hand and g["members"] == ["spine0", "spine1"], g
            assert abs(g["mmr"] - max(by_hand) / (sum(by_hand) / 2)) < 1e-9 if sum(by_hand) else g["mmr"] == 0
        assert r["worst_mmr"] == max(g["mmr"] for g in r["ecmp_groups"])
    # §10.3 with the switches' own hashing: each row a draw of B's source ports, its overlap the
    # share of B's spine-tier bytes (its trial alone) on the links that carried A's, by hand from
    # the kernel's counters of those two trials
    itf = sec["5_results"]["interference"]
    trials = [t for t in rep["trials"] if t.get("kind") == "interference"]
    assert len(itf["rows"]) == 2 and len(trials) == 5 and "measured" in itf["overlap_from"]

    def spine_tier_bytes(trial):
        links = json.loads((tmp_path / "trials" / ("t%03d" % trial["id"]) / "report.json").read_text())["fabric"]["links"]
        return {(l["name"], d): l[d]["bytes"] for l in links for d in ("a_to_b", "b_to_a") if "spine" in l["name"]}
    alone_a = spine_tier_bytes(trials[0])
    for k, row in enumerate(itf["rows"]):
        alone_b = spine_tier_bytes(trials[1 + 2 * k])
        used = {key for key, v in alone_a.items() if v >= 0.01 * max(alone_a.values())}
        assert row["overlap"] == pytest.approx(sum(v for key, v in alone_b.items() if key in used)
                                               / sum(alone_b.values()), abs=1e-9), row
        assert row["overlap_wanted"] is None and row["plan_factor_a"] is None and row["udp_sport_first_b"] == 49152 + 8 * (k + 1)
        for j in "ab":
            assert row["interference_factor_" + j] == pytest.approx(row["jct_together_s_" + j] / row["jct_alone_s_" + j])
    tp = sec["5_results"]["throughput"]["rows"][0]
    assert tp["loss_pct"] == 0 and 0 < tp["zero_loss_gbps"] <= tp["expected_gbps"] * 1.02
    # every frame of every trial crossed the kernel's switches: their NIC-facing ports counted
    # what the NICs sent and received, frame for frame
    sent = received = 0
    for t in sorted(d for d in (tmp_path / "trials").iterdir() if (d / "report.json").exists()):
        r = json.loads((t / "report.json").read_text())
        assert r["fabric"]["external"] is True
        sent += sum(port["tx_packets"] for port in r["ports"])
        received += sum(port["rx_packets"] for port in r["ports"])
        # each trial's switch counters (counters_command): what they dropped is what the NICs lost
        # (but for a failure's trial: a downed port's queue is flushed, counted by no counter)
        assert "error" not in r["fabric"]["counters_command"], r["fabric"]["counters_command"]
        if not r["fabric"]["events"]:
            dropped = sum(l[d]["dropped"] for l in r["fabric"]["links"] for d in ("a_to_b", "b_to_a"))
            assert dropped == sum(port["tx_packets"] - port["rx_packets"] for port in r["ports"]), t
    assert sent > 0
    assert nic_facing_counts(linux_switches, tmp_path) == (sent, received)


@pytest.mark.parametrize("category", ["deadlock", "flowlet", "spray", "link_failure"])
def test_categories_of_the_virtual_switches_are_refused(tmp_path, category):
    """Listed on a real switch tier, what needs the virtual switches is refused: link_failure too
    when no link_command can fail a link."""
    text = SUITE.read_text().replace('categories = ["throughput", "latency", "burst", "ecmp", "collectives", "jct", "interference", "link_failure", "soak"];',
                                     'categories = ["latency", "%s"];' % category)
    assert 'categories = ["latency", "%s"];' % category in text
    text = "\n".join(l for l in text.splitlines() if "link_command" not in l) + "\n"
    cfg = tmp_path / "s.cfg"
    cfg.write_text(text)
    p = subprocess.run([str(suite_path()), "--check", str(cfg)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 3, p.stdout + p.stderr
    line = text.splitlines().index('  categories = ["latency", "%s"];' % category) + 1
    assert "s.cfg:%d: ai_fabric.categories.[1]: '%s' is not run with fabric.external" % (line, category) in p.stderr, p.stderr


def test_flowlets_and_spraying_through_the_labs_balance_command(linux_switches, tmp_path):
    """§8.2 and §8.3 on a real tier: ai_fabric.balance_command sets the switches' balancing before
    each trial ({mode}, {gap_us}) and restores it after each category. The Linux switches go on
    hashing as they do; the command logs what it was asked and fails for spray: that verdict
    fails and the suite says so, and the next category still gets its restore. Each row's
    members' bytes are the kernel's counters of its trial."""
    log = tmp_path / "balance.log"
    text = SUITE.read_text().replace('categories = ["throughput", "latency", "burst", "ecmp", "collectives", "jct", "interference", "link_failure", "soak"];',
                                     'categories = ["flowlet", "spray"];\n  flowlet = { gaps_us = [50, 200]; qps_per_pair = 2; };\n'
                                     '  balance_command = "echo {mode} {gap_us} >> %s; test {mode} != spray";' % log)
    text = text.replace("repeats = 2;", "repeats = 1;").replace("$ROCE_SUITE_FILE_DIR", str(SUITE.parent))
    assert "balance_command" in text
    cfg = tmp_path / "lb.cfg"
    cfg.write_text(text)
    env = dict(os.environ, ROCE_ENGINE=str(engine_path().resolve()), ROCE_FABRIC=str(fabric_path()),
               LINUX_FABRIC_PREFIX=linux_switches["hosts_namespace"][:-len("-hosts")])
    p = subprocess.run(["ip", "netns", "exec", linux_switches["hosts_namespace"], str(suite_path()), str(cfg),
                        "-o", str(tmp_path / "res"), "-k", str(tmp_path / "trials")],
                       capture_output=True, text=True, timeout=300, env=env, cwd=str(tmp_path))
    assert p.returncode == 6, p.stdout[-3000:] + p.stderr          # a verdict failed: spray's command
    assert log.read_text().split("\n") == ["flowlet 50", "flowlet 200", "restore 0", "spray 0", "restore 0", ""]
    rep = json.loads((tmp_path / "res" / "report.json").read_text())
    res = rep["ai_fabric"]["sections"]["5_results"]
    rows = res["flowlet"]["rows"] + res["spray"]["rows"]
    assert [(r["mode"], r["flowlet_gap_us"], r["balance_command_status"]) for r in rows] == [
        ("flowlet", 50, 0), ("flowlet", 200, 0), ("spray", 0, 1)]
    verdicts = [v["verdict"] for v in rep["verdicts"] if v["check"] == "balance_command_succeeds"]
    assert verdicts == ["pass", "pass", "fail"] and not [v for v in rep["verdicts"] if v["check"] == "spray_every_member"]
    for r, t in zip(rows, [t for t in rep["trials"] if t.get("kind") == "load_balance"]):
        links = {l["name"]: l for l in json.loads((tmp_path / "trials" / ("t%03d" % t["id"]) / "report.json")
                                                  .read_text())["fabric"]["links"]}
        for g in r["ecmp_groups"]:
            assert g["bytes"] == [links["%s-%s" % (g["switch"], m)]["a_to_b"]["bytes"] for m in g["members"]], g
        assert r["worst_mmr_flows"] is None and r["out_of_order_rate"] >= 0


def test_deadlock_runs_its_storm_alone_on_a_real_tier(tmp_path):
    """§7.4 on a real switch tier is its PFC storm (seen from the NICs): accepted with
    deadlock.storm; the deadlock patterns, which only the virtual switches can see, are refused."""
    base = SUITE.read_text().replace('categories = ["throughput", "latency", "burst", "ecmp", "collectives", "jct", "interference", "link_failure", "soak"];',
                                     'categories = ["latency", "deadlock"];\n  deadlock = { %s storm = { start_s = 0.1; duration_s = 0.2; }; };')
    assert "%s storm" in base
    for patterns, rc in (("", 0), ('patterns = ["shift"];', 3)):
        cfg = tmp_path / "s.cfg"
        cfg.write_text(base % patterns)
        p = subprocess.run([str(suite_path()), "--check", str(cfg)], capture_output=True, text=True, timeout=60)
        assert p.returncode == rc, p.stdout + p.stderr
    line = (base % "").splitlines().index("  deadlock = {  storm = { start_s = 0.1; duration_s = 0.2; }; };") + 1
    assert "s.cfg:%d: ai_fabric.deadlock.patterns: not with fabric.external" % line in p.stderr, p.stderr


# ---- an L2 switch with ECN and PFC: the engine's lab switch in its own process --------------------

L2_SUITE = """suite = { name = "ai-fabric-l2"; type = "ai_fabric"; };
fabric = { kind = "leaf-spine"; leaves = 1; spines = 0; hosts_per_leaf = 4; host_gbps = 0.1;
  external = { bridged = true;
    counters_command = "%s";
    nics = ( %s ); };
};
trial = { duration_s = 0.6; };
ai_fabric = {
  categories = ["burst", "ecn", "pfc_incast", "convergence", "deadlock"];
  memory_mb = 256;
  repeats = 1;
  burst = { ratios = [3]; max_frames = 1000; max_trials = 7; };
  ecn = { ratios = [2, 3]; };
  pfc_incast = { ratios = [3]; };
  convergence = { flows = [1]; runs = 2; join_s = 0.2; settle_s = 0.4; };
  deadlock = { storm = { start_s = 0.1; duration_s = 0.3; }; };
};
"""

DUT_SWITCH = {"buffer_kb": 512, "pfc": "{ priorities = [3]; xoff_kb = 48; xon_kb = 32; headroom_kb = 96; "
                                      "watchdog = { action = \"drop\"; detect_ms = 50; restore_ms = 100; }; }",
              "ecn": "( { tc = 3; kmin_kb = 8; kmax_kb = 40; pmax = 0.2; } )"}


@pytest.fixture
def lab_switch_dut(tmp_path):
    """Four NICs' veths in P-hosts, their peers the ports of a roce-engine lab switch (ECN on class
    3, PFC on 3, a fdb of the NICs' MACs) running in P-sw until the test ends; yields the suite
    file and a function that stops the switch and returns its report."""
    need_netns()
    prefix = "dx%d" % (os.getpid() % 10000)
    hosts, sw = prefix + "-hosts", prefix + "-sw"
    macs = ["02:fa:00:00:00:%02x" % i for i in range(4)]     # the fabric's NIC MACs (docs/fabric.md)
    for ns in (hosts, sw):
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        subprocess.run(["ip", "netns", "add", ns], check=True)
        subprocess.run(["ip", "netns", "exec", ns, "sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1"], check=True)
        subprocess.run(["ip", "netns", "exec", ns, "sysctl", "-q", "-w", "net.ipv6.conf.default.disable_ipv6=1"], check=True)
        subprocess.run(["ip", "-n", ns, "link", "set", "lo", "up"], check=True)   # the switch's /metrics
    for i in range(4):
        subprocess.run(["ip", "link", "add", "h%d" % i, "netns", hosts, "type", "veth", "peer", "name", "s%d" % i,
                        "netns", sw], check=True)
        subprocess.run(["ip", "-n", hosts, "link", "set", "h%d" % i, "address", macs[i], "up"], check=True)
        subprocess.run(["ip", "-n", sw, "link", "set", "s%d" % i, "up"], check=True)
    ports = ",\n  ".join('{ name = "s%d"; device = "net_af_packet%d"; vdev_args = "iface=s%d"; link_speed_gbps = 0.1; '
                         'ipv4 = "10.99.255.%d"; }' % (i, i, i, i + 1) for i in range(4))
    roles = ", ".join('{ lcore = 1; port = "s%d"; role = "switch"; }' % i for i in range(4))
    fdb = ", ".join('{ mac = "%s"; port = "s%d"; }' % (macs[i], i) for i in range(4))
    (tmp_path / "dut.cfg").write_text(
        'eal = { lcores = "0@0,1@0"; memory_mb = 256; file_prefix = "%s"; };\nports = (\n  %s\n);\nlcores = ( %s );\n'
        'switch = { buffer_kb = %d; pfc = %s; ecn = %s; fdb = ( %s ); };\n'
        % (prefix, ports, roles, DUT_SWITCH["buffer_kb"], DUT_SWITCH["pfc"], DUT_SWITCH["ecn"], fdb))
    http = "127.0.0.1:%d" % (19000 + os.getpid() % 1000)  # its /metrics, in its own namespace
    dut = subprocess.Popen(["ip", "netns", "exec", sw, str(engine_path().resolve()), "-f", "dut.cfg", "-d", "900", "-q",
                            "-r", "dut.json", "--http", http], cwd=str(tmp_path), stdout=open(tmp_path / "dut.log", "w"),
                           stderr=subprocess.STDOUT)
    nics = ", ".join('{ nic = "h%d"; device = "net_af_packet%d"; vdev_args = "iface=h%d"; }' % (i, i, i) for i in range(4))
    # the switch's own counters per link, as a lab's script would scrape them
    counters = "ip netns exec %s /usr/bin/python3 %s %s %s" % (
        sw, Path(__file__).parent / "lab_switch_counters.py", http, " ".join("s%d=h%d-leaf0" % (i, i) for i in range(4)))
    suite = tmp_path / "l2.cfg"
    suite.write_text(L2_SUITE % (counters, nics))

    def stop():
        if dut.poll() is None:
            dut.send_signal(signal.SIGINT)
            dut.wait(timeout=60)
        return json.loads((tmp_path / "dut.json").read_text())

    try:
        yield {"hosts_namespace": hosts, "suite": suite, "stop": stop}
    finally:
        if dut.poll() is None:
            dut.kill()
            dut.wait()
        for ns in (hosts, sw):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def test_burst_ecn_and_pfc_on_a_real_l2_switch(lab_switch_dut, tmp_path):
    """§5.3, §7.1 and §7.2 judged from the NICs, against a switch in another process: the CE
    marks the NICs received over every trial are the ones the switch made, the XOFF frames the
    NICs received are the ones it sent, and its drops are the frames the flows lost. Its counters,
    scraped from its /metrics by counters_command, give each trial its drops and §7.2 the
    switch's own hop ("leaf->nic"), which must count the XOFF frames the NICs received."""
    import time
    time.sleep(1.0)                                      # the switch's ports up
    env = dict(os.environ, ROCE_ENGINE=str(engine_path().resolve()), ROCE_FABRIC=str(fabric_path()))
    p = subprocess.run(["ip", "netns", "exec", lab_switch_dut["hosts_namespace"], str(suite_path()),
                        str(lab_switch_dut["suite"]), "-o", str(tmp_path / "res"), "-k", str(tmp_path / "trials")],
                       capture_output=True, text=True, timeout=600, env=env, cwd=str(tmp_path))
    dut = lab_switch_dut["stop"]()
    assert p.returncode in (0, 6), p.stdout[-3000:] + p.stderr
    res = json.loads((tmp_path / "res" / "report.json").read_text())["ai_fabric"]["sections"]["5_results"]
    ce = xoff = lost = 0
    for t in sorted(d for d in (tmp_path / "trials").iterdir() if (d / "report.json").exists()):
        r = json.loads((t / "report.json").read_text())
        ce += sum(q["ecn_ce"] for q in r["rx_qps"])
        xoff += sum(sum(port["pfc_rx_xoff"]) for port in r["ports"])
        # (a NIC also receives the switch's PFC frames, XOFF and XON, which no NIC sent; the storm's
        # PFC frames stop at the switch)
        sent = sum(port["tx_packets"] - sum(port["pfc_tx"]) for port in r["ports"])
        lost_here = sent - sum(port["rx_packets"] - sum(port["pfc_rx"]) for port in r["ports"])
        lost += lost_here
        # the trial's own reading of the switch's counters: its drops (at ingress, and the watchdog's
        # at egress) are what the flows lost
        assert "error" not in r["fabric"]["counters_command"], r["fabric"]["counters_command"]
        assert sum(l[d]["dropped"] for l in r["fabric"]["links"] for d in ("a_to_b", "b_to_a")) == lost_here, t
    sw_ports = dut["switch"]["ports"]
    assert ce > 0 and ce == sum(sum(port["ecn_marked"]) for port in sw_ports)
    assert xoff > 0 and xoff == sum(sum(port["pfc_xoff_tx"]) for port in sw_ports)
    assert lost == sum(sum(port["dropped"].values()) for port in sw_ports)
    # the rows: the CE share per offered load; the incast's pauses as the NICs saw them
    ecn = res["ecn"]["rows"]
    assert [r["offered_load"] for r in ecn] == [2, 3] and all(r["ce_ratio"] > 0 for r in ecn)
    inc = res["pfc_incast"]["rows"][0]
    hops = {h["hop"]: h for h in inc["hops"]}
    assert set(hops) == {"switch->nic", "leaf->nic"} and hops["switch->nic"]["xoff"] > 0, hops
    # the switch's counters say it paused the NICs as often as they were paused, on as many links
    assert hops["leaf->nic"]["xoff"] == hops["switch->nic"]["xoff"], hops
    assert hops["leaf->nic"]["links_paused"] == hops["switch->nic"]["links_paused"] > 0, hops
    assert inc["fabric_dropped"] == inc["dropped"], inc
    assert inc["watchdog_storms"] is None and inc["received_gbps"] <= 0.1 * 1.02
    # §7.3 from the senders' own DCQCN rates; no simulator stands for a real switch
    conv = res["convergence"]["rows"][0]
    assert conv["m"] == 1 and conv["flows"] == 2 and conv["runs"] + conv["machine_limited_runs"] == 2, conv
    assert "ccsim_convergence_ms" not in conv and conv["cnps"] > 0, conv
    # §7.4's storm from h1: it spread to h0 (the switch paused it) until the switch's watchdog (50 ms)
    # dropped the stormed queue; the storm the suite read from the switch's counters is the one
    # the switch's own report counts, on h1's port
    storm = res["deadlock"]["storm"]
    assert (storm["sender"], storm["stormer"], storm["victim_receiver"]) == ("h0", "h1", "h2")
    assert res["deadlock"]["rows"] == [] and storm["storm_frames"] == 300 and storm["sender_xoff_rx"] > 0
    wd = {p["port"]: p["watchdog"] for p in sw_ports}
    assert storm["watchdog_storms"] == sum(wd["s1"]["storms"]) == sum(sum(w["storms"]) for w in wd.values()) == 1, wd
    assert wd["s1"]["dropped"][3] > 0
    if not storm.get("machine_limited"):
        # paused once its frames for h1 filled 48 KB, until the watchdog let it go: 50 ms, and the
        # switch's lcore's and the NICs' hold-ups
        held = max(l.get("longest_held_up_ms", 0) for l in dut["lcores"]) + 20
        assert storm["protection"] == "watchdog" and storm["sender_paused_ms"] <= 50 + held, storm
    burst = res["burst"]["rows"][0]
    assert burst["expected_frames"] is None and burst["threshold_bytes"] is None
    # the search's bracket [absorbed, first loss) holds what the switch's buffer implies, by hand:
    # 3 senders at line rate into one link queue 2 frames a frame time; 512 KB / (2 x 1102 bytes)
    expected = 512 * 1024 / (2 * 1102)
    assert burst["absorbed_frames"] <= expected * 1.05 + 1, burst
    assert burst["first_loss_frames"] >= expected * 0.95 - 1, burst
    assert burst["first_loss"]["lost"] == burst["first_loss"]["dropped"] > 0, burst
