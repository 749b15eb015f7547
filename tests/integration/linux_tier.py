"""A real switch tier for the tests of fabric.external: a fabric's switches as Linux routers in
network namespaces (scripts/linux-fabric.py), and what the kernel counts on their ports. Shared by
test_fabric_external.py (the engine) and test_ai_fabric_external.py (the suite)."""
import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT
from test_fabric import fabric_path

SCRIPT = ROOT / "scripts" / "linux-fabric.py"


def need_netns():
    if os.geteuid() != 0 or subprocess.run(["ip", "netns", "list"], capture_output=True).returncode:
        pytest.skip("needs root and ip netns (network namespaces)")


def up(cfg, prefix, *args):
    """linux-fabric.py up on the fabric of cfg (more of its options in args); what it printed:
    the hosts' namespace and the NICs."""
    r = subprocess.run([sys.executable, str(SCRIPT), "up", str(cfg), "--prefix", prefix, "--roce-fabric",
                        str(fabric_path())] + [str(a) for a in args], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def down(prefix):
    subprocess.run([sys.executable, str(SCRIPT), "down", "--prefix", prefix], capture_output=True, timeout=60)


def plan_links(cfg, tmp):
    """roce-fabric's links of cfg's fabric, in its order: link K is interface l<K> at both ends."""
    rep = tmp / "plan.json"
    subprocess.run([str(fabric_path()), "-q", "-r", str(rep), str(cfg)], check=True)
    return json.loads(rep.read_text())["fabric"]["links"]


def link_stats(ns, dev):
    """The kernel's counters of interface dev in namespace ns (ip's stats64: rx and tx)."""
    out = subprocess.run(["ip", "-n", ns, "-s", "-j", "link", "show", dev], capture_output=True, text=True,
                         check=True).stdout
    return json.loads(out)[0]["stats64"]


def nic_facing(links, nics):
    """(switch, interface, nic) of each link whose end b is one of nics: the switch's port facing it."""
    return [(l["a"], "l%d" % k, l["b"]) for k, l in enumerate(links) if l["b"] in nics]
