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
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, engine_path
from test_fabric import fabric_path

SUITE = ROOT / "configs" / "suites" / "ai-fabric-external.cfg"
SCRIPT = ROOT / "scripts" / "linux-fabric.py"


def suite_path():
    return Path(os.environ.get("ROCE_SUITE", ROOT / "build" / "apps" / "roce-suite")).resolve()


@pytest.fixture
def linux_switches():
    if os.geteuid() != 0 or subprocess.run(["ip", "netns", "list"], capture_output=True).returncode:
        pytest.skip("needs root and ip netns (network namespaces)")
    prefix = "sx%d" % (os.getpid() % 10000)
    r = subprocess.run([sys.executable, str(SCRIPT), "up", str(SUITE), "--prefix", prefix, "--shape",
                        "--roce-fabric", str(fabric_path())], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    yield json.loads(r.stdout)
    subprocess.run([sys.executable, str(SCRIPT), "down", "--prefix", prefix], capture_output=True, timeout=60)


def nic_facing_counts(info, tmp):
    """Frames the switches' NIC-facing ports received (the NICs sent) and sent (the NICs received):
    interface l<K> of the switch at end a of each NIC's link K in roce-fabric's plan."""
    plan = tmp / "plan.json"
    subprocess.run([str(fabric_path()), "-q", "-r", str(plan), str(SUITE)], check=True)
    rx = tx = 0
    for k, link in enumerate(json.loads(plan.read_text())["fabric"]["links"]):
        if link["b"] not in info["nics"]:
            continue
        ns = info["hosts_namespace"].replace("-hosts", "-" + link["a"])
        st = json.loads(subprocess.run(["ip", "-n", ns, "-s", "-j", "link", "show", "l%d" % k], capture_output=True,
                                       text=True, check=True).stdout)[0]["stats64"]
        rx, tx = rx + st["rx"]["packets"], tx + st["tx"]["packets"]
    return rx, tx


def test_the_suite_runs_on_a_linux_switch_tier(linux_switches, tmp_path):
    env = dict(os.environ, ROCE_ENGINE=str(engine_path().resolve()), ROCE_FABRIC=str(fabric_path()))
    p = subprocess.run(["ip", "netns", "exec", linux_switches["hosts_namespace"], str(suite_path()), str(SUITE),
                        "-o", str(tmp_path / "res"), "-k", str(tmp_path / "trials")],
                       capture_output=True, text=True, timeout=600, env=env, cwd=str(tmp_path))
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr
    rep = json.loads((tmp_path / "res" / "report.json").read_text())
    sec = rep["ai_fabric"]["sections"]
    # what runs on a real switch tier, and only that
    assert set(sec["5_results"]) == {"throughput", "latency", "collectives", "jct"}
    assert "real switch tier" in sec["1_dut"]["kind"]
    assert sec["3_dut_configuration"]["external"]["gateway_mac"] == "02:dd:00:00:00:01"
    # the switches' own counters are unknown, not zero
    for row in sec["5_results"]["throughput"]["rows"] + sec["5_results"]["collectives"]["rows"]:
        assert row["fabric_dropped"] is None and row["worst_mmr"] is None
    for row in sec["5_results"]["collectives"]["rows"]:
        assert row["drop_ppm"] is None and row["uplink_utilization_mean"] is None
        assert row["iterations_completed"] == row["iterations"]
        assert 0 < row["busbw_mean_gbps"] <= row["link_gbps"] * 1.001
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
    assert sent > 0
    assert nic_facing_counts(linux_switches, tmp_path) == (sent, received)


@pytest.mark.parametrize("category", ["burst", "ecmp", "link_failure"])
def test_categories_of_the_virtual_switches_are_refused(tmp_path, category):
    text = SUITE.read_text().replace("ai_fabric = {", 'ai_fabric = {\n  categories = ["latency", "%s"];' % category)
    cfg = tmp_path / "s.cfg"
    cfg.write_text(text)
    p = subprocess.run([str(suite_path()), "--check", str(cfg)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 3, p.stdout + p.stderr
    line = text.splitlines().index('  categories = ["latency", "%s"];' % category) + 1
    assert "s.cfg:%d: ai_fabric.categories.[1]: '%s' is not run with fabric.external" % (line, category) in p.stderr, p.stderr
