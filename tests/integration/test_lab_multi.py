"""The virtual lab across processes (scripts/lab-multi.py, docs/virtual-lab.md): a switch process
and three engine processes in four network namespaces joined by veth pairs (net_af_packet).

* The shipped description runs: every process reports, frames cross the switch, CNPs come back
  to the senders, and the per-flow table adds up from four reports.
* Nothing is left behind — no namespace, no engine process, no EAL runtime folder — after a good
  run, after a process that fails at start-up, and after the script itself is interrupted.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "lab-multi.py"

pytestmark = [pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("ip"),
                                reason="needs root and iproute2 (network namespaces)"),
              # the provisioning script is under test, not engine code the ASan pass would add to
              pytest.mark.release_only]


def _leftovers(name):
    ns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    procs = subprocess.run(["pgrep", "-f", "roce-engine -f engine.cfg"], capture_output=True, text=True).stdout
    runtime = [p for p in os.listdir("/var/run/dpdk") if p.startswith("rl-%s-" % name)] if os.path.isdir(
        "/var/run/dpdk") else []
    return [l for l in ns.splitlines() if l.startswith("rl-%s-" % name)], procs.split(), runtime


def _run(desc, out, *extra, timeout=180):
    return subprocess.run([sys.executable, str(SCRIPT), str(desc), "--out", str(out)] + list(extra),
                          capture_output=True, text=True, timeout=timeout)


def test_shipped_lab_runs_across_namespaces_and_cleans_up(tmp_path):
    r = _run(ROOT / "configs" / "lab" / "incast-veth.toml", tmp_path / "out", "--duration", "2")
    assert r.returncode == 0, r.stdout + r.stderr
    lab = json.loads((tmp_path / "out" / "lab-report.json").read_text())
    assert lab["ok"] and set(lab["processes"]) == {"switch", "r", "h0", "h1"}, lab["problems"]
    sw = lab["processes"]["switch"]["switch"]
    assert sw["admitted"] > 1000 and len(sw["ports"]) == 3
    for f in lab["flows"]:
        assert f["tx_packets"] > 1000 and f["rx_packets"] > 0.5 * f["tx_packets"], f
        assert f["cnp_rx"] > 0, f  # the receiver's CNPs crossed the switch back to the sender
        assert f["tx_packets"] == (f["rx_packets"] + f["switch_dropped"] + f["switch_queued_at_end"] +
                                   f["lost_between_processes"])
        assert f["lost_between_processes"] >= 0
    for h in ("h0", "h1", "r"):
        assert (tmp_path / "out" / h / "engine.cfg").exists() and (tmp_path / "out" / h / "report.json").exists()
    assert _leftovers("incast") == ([], [], [])


def test_a_process_that_fails_leaves_nothing_behind(tmp_path):
    desc = (ROOT / "configs" / "lab" / "incast-veth.toml").read_text().replace('name = "incast"', 'name = "broken"')
    desc = desc.replace("message_size = 65536", 'message_size = "big"', 1)  # h0's config is refused
    (tmp_path / "broken.toml").write_text(desc)
    r = _run(tmp_path / "broken.toml", tmp_path / "out")
    assert r.returncode == 1, r.stdout + r.stderr
    lab = json.loads((tmp_path / "out" / "lab-report.json").read_text())
    assert not lab["ok"] and any("h0" in p for p in lab["problems"]), lab["problems"]
    assert "message_size" in (tmp_path / "out" / "h0" / "engine.log").read_text()
    assert _leftovers("broken") == ([], [], [])


def test_interrupted_lab_tears_down(tmp_path):
    desc = (ROOT / "configs" / "lab" / "incast-veth.toml").read_text().replace('name = "incast"', 'name = "intr"')
    (tmp_path / "intr.toml").write_text(desc)
    p = subprocess.Popen([sys.executable, str(SCRIPT), str(tmp_path / "intr.toml"), "--out", str(tmp_path / "out"),
                          "--duration", "30"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    end = time.monotonic() + 60
    while not (tmp_path / "out" / "h1" / "engine.log").exists() and time.monotonic() < end:
        time.sleep(0.2)
    time.sleep(1.0)
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=120)
    assert p.returncode == 1, out
    lab = json.loads((tmp_path / "out" / "lab-report.json").read_text())
    assert not lab["ok"] and "KeyboardInterrupt" in lab["problems"][0], lab["problems"]
    assert "switch" in lab["processes"]  # stopped with SIGINT: its report still came
    assert _leftovers("intr") == ([], [], [])


def test_vlan_segments_keep_hosts_apart(tmp_path):
    """h0 -> r0 within VLAN 10 and h1 -> r1 within VLAN 20 arrive (tagged); h1 -> r0 crosses
    segments and the switch drops it, counted as VLAN drops at h1's switch port."""
    r = _run(ROOT / "configs" / "lab" / "vlan-segments.toml", tmp_path / "out", "--duration", "2")
    assert r.returncode == 0, r.stdout + r.stderr
    lab = json.loads((tmp_path / "out" / "lab-report.json").read_text())
    f = {x["flow"]: x for x in lab["flows"]}
    for name in ("a", "b"):
        assert f[name]["rx_packets"] > 0.8 * f[name]["tx_packets"] > 0 and f[name]["vlan_filtered"] == 0, f[name]
    assert f["x"]["rx_packets"] == 0 and f["x"]["vlan_filtered"] > 0.9 * f["x"]["tx_packets"] > 0, f["x"]
    sw = {p["port"]: p for p in lab["processes"]["switch"]["switch"]["ports"]}
    assert sw["s3"]["dropped"]["vlan"] == f["x"]["vlan_filtered"] and sw["s2"]["dropped"]["vlan"] == 0
    assert _leftovers("vlans") == ([], [], [])
