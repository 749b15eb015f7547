"""Configurations that `roce-engine --check` accepts must start, and those it cannot start are
refused at --check with the file, line and setting (docs/config.md). Each case here once passed
--check and then failed or misbehaved at run time (issue 19, item 5)."""
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import engine_path
from test_engine import MAC_A, MAC_B, cfg, flow, pair_ports, port, role


def _exact_run(engine, ports, roles, ip_b, msgs=200):
    f = flow("f", "a", MAC_B, ip_b, transport='"ud"', ops="{ send = 1; }", message_size=512, qpn="0x100",
             dest_qpn="0x300", rate_gbps=1.0, stop="{ messages = %d; }" % msgs)
    return engine.run(cfg(ports, roles, [f]))


# ---- ring cables ---------------------------------------------------------------------------------

@pytest.mark.parametrize("link", ["abcdefghijklm", "abcdefghijklmnopqrst", "A_b-1"])
def test_ring_link_names_of_every_allowed_length_start(engine, link):
    """LINK is 1..20 characters (docs/config.md); 13 and more once made EAL's vdev name too long."""
    ports, ip_b = pair_ports(link=link)
    text = cfg(ports, [role(1, "a", "tx"), role(1, "b", "rx")], [])
    rc, _, out = engine.run(text, "--check", report=False)
    assert rc == 0, out
    rc, rep, out = _exact_run(engine, ports, [role(1, "a", "tx"), role(1, "b", "rx")], ip_b)
    assert rc == 0, out
    a, b = rep["ports"]
    assert a["tx_packets"] == 200 == b["rx_packets"]
    assert [p["mbufs_in_use_at_exit"] for p in rep["ports"]] == [0, 0]


def test_ring_cable_queue_counts_that_would_lose_frames_are_refused(engine):
    """Frames of a TX queue the other end does not have once vanished (their mbufs leaked)."""
    ports, _ = pair_ports()
    ports[0] = ports[0].replace("link_speed_gbps", "tx_queues = 2; link_speed_gbps")
    text = cfg(ports, [role(1, "a", "tx", 0), role(1, "a", "tx", 1), role(1, "b", "rx")], [])
    rc, _, out = engine.run(text, "--check", report=False)
    assert rc == 3, out
    assert "run1.cfg:4: ports.[1].rx_queues: port 'a' (ring:lab:a) has tx_queues 2 but the other end of its " \
           "ring cable, port 'b' (ring:lab:b), has rx_queues 1" in out, out


def test_ring_cable_with_every_queue_polled_carries_all(engine):
    """Equal counts at both ends: every TX queue's frames arrive at the RX queue of its number."""
    ports, ip_b = pair_ports()
    ports = [p.replace("link_speed_gbps", "rx_queues = 2; tx_queues = 2; link_speed_gbps") for p in ports]
    # class 1 (DSCP 8) goes out on TX queue 1, class 3 (DSCP 26) on queue 0
    ports[0] = ports[0].replace("link_speed_gbps", "qos = { tc_to_queue = [0, 1, 0, 0, 0, 0, 0, 0]; }; link_speed_gbps")
    fl = [flow("f%d" % q, "a", MAC_B, ip_b, transport='"ud"', ops="{ send = 1; }", message_size=256,
               qpn="0x%x" % (0x100 + q), dest_qpn="0x%x" % (0x300 + q), rate_gbps=0.5, dscp=(26, 8)[q],
               stop="{ messages = 300; }") for q in range(2)]
    rc, rep, out = engine.run(cfg(ports, [role(1, "a", "tx", 0), role(1, "a", "tx", 1), role(1, "b", "rx", 0),
                                          role(1, "b", "rx", 1)], fl))
    assert rc == 0, out
    a, b = rep["ports"]
    assert a["tx_packets"] == 600 == b["rx_packets"]
    assert [p["mbufs_in_use_at_exit"] for p in rep["ports"]] == [0, 0]


# ---- device names and drivers --------------------------------------------------------------------

def _one_port(device, eal='lcores = "0-1";', extra=""):
    return ("eal = { %s };\nports = ( { name = \"p\"; device = \"%s\"; ipv4 = \"10.0.0.1\"; %s%s } );\n"
            "lcores = ( { lcore = 1; port = \"p\"; role = \"txrx\"; } );\n"
            % (eal, device, "link_speed_gbps = 10; " if device.startswith("net_") else "", extra))


def _pmdinfo_vdev_drivers():
    """The vdev drivers of the engine's DPDK by DPDK's own tool: dpdk-pmdinfo.py -p follows the
    program's libraries and librte_eal's DPDK_PLUGIN_PATH (a vdev driver has no PCI ids)."""
    tool = shutil.which("dpdk-pmdinfo.py")
    if not tool:
        pytest.skip("dpdk-pmdinfo.py (package dpdk) not installed")
    r = subprocess.run(["/usr/bin/python3", tool, "-p", str(engine_path())], capture_output=True, text=True,
                       timeout=120)
    if r.returncode != 0:
        pytest.skip("dpdk-pmdinfo.py failed (python3-pyelftools?): %s" % r.stderr.strip())
    return {d["name"] for d in json.loads(r.stdout) if d["name"].startswith("net_") and not d.get("pci_ids")}


def test_unknown_vdev_driver_is_refused_at_check_naming_the_drivers_there_are(engine):
    """net_foo0 once passed --check; EAL then failed. The list is DPDK's own (dpdk-pmdinfo.py)."""
    rc, _, out = engine.run(_one_port("net_foo0"), "--check", report=False)
    assert rc == 3, out
    m = re.search(r"run1\.cfg:2: ports\.\[0\]\.device: no vdev driver of this DPDK takes 'net_foo0' "
                  r"\(vdev drivers: ([a-z0-9_, ]+); read from the program, its DPDK libraries and (\S+)\)", out)
    assert m, out
    assert set(m.group(1).split(", ")) == _pmdinfo_vdev_drivers()
    assert any(f.startswith("librte_net_null.so") for f in os.listdir(m.group(2)))  # DPDK's plugin folder


def test_every_vdev_driver_of_this_dpdk_passes_check(engine):
    for name in sorted(_pmdinfo_vdev_drivers()):
        rc, _, out = engine.run(_one_port(name + "0"), "--check", report=False)
        assert rc == 0, (name, out)


def test_eal_failure_prints_the_arguments_it_was_given(engine):
    rc, _, out = engine.run(_one_port("net_null0", 'lcores = "0-1"; extra_args = ["--no-such-eal-option"];'),
                            report=False)
    assert rc == 4, out
    m = re.search(r"EAL initialisation failed \(see DPDK's message above\) with the arguments: (.*)", out)
    assert m, out
    args = m.group(1).split()
    assert args[:2] == ["-l", "0-1"] and "--vdev" in args and "net_null0" in args
    assert args[-1] == "--no-such-eal-option"


# ---- PCI: an allow-list of the configured devices, --no-pci without any --------------------------

def _check_eal_line(engine, text):
    rc, _, out = engine.run(text, "--check", report=False)
    assert rc == 0, out
    return re.search(r"^EAL: (.*)$", out, re.M).group(1).split()


def test_pci_ports_are_allow_listed_and_vdev_only_configs_get_no_pci(engine):
    args = _check_eal_line(engine, _one_port("0000:3b:00.0"))
    assert "--no-pci" not in args
    assert [args[i + 1] for i, a in enumerate(args) if a == "-a"] == ["0000:3b:00.0"]
    args = _check_eal_line(engine, _one_port("net_null0"))
    assert "--no-pci" in args and "-a" not in args


def test_pci_devargs_in_extra_args_are_not_shadowed(engine):
    """EAL takes a device's first -a: the engine's own would drop the user's devargs."""
    args = _check_eal_line(engine, _one_port("0000:3b:00.0", 'lcores = "0-1"; extra_args = ["-a", "3B:00.0,dv_flow_en=1"];'))
    assert [args[i + 1] for i, a in enumerate(args) if a == "-a"] == ["3B:00.0,dv_flow_en=1"]
    args = _check_eal_line(engine, _one_port("net_null0", 'lcores = "0-1"; extra_args = ["--allow=0000:3b:00.0"];'))
    assert "--no-pci" not in args  # the user asked for a PCI device


@pytest.mark.parametrize("extra,why", [('"-b", "0000:00:03.0"', "'-b' (a block-list) with PCI port 'p'"),
                                       ('"--no-pci"', "--no-pci with PCI port 'p'")])
def test_eal_options_that_cannot_go_with_pci_ports_are_refused(engine, extra, why):
    rc, _, out = engine.run(_one_port("0000:3b:00.0", 'lcores = "0-1"; extra_args = [%s];' % extra), "--check",
                            report=False)
    assert rc == 3 and "run1.cfg:1: eal.extra_args.[0]: " + why in out, out


def test_eal_probes_only_the_allow_listed_pci_device(engine):
    """With a PCI port, EAL once probed every PCI device of the machine (the host's own NICs)."""
    host = sorted(os.listdir("/sys/bus/pci/devices")) if os.path.isdir("/sys/bus/pci/devices") else []
    if not host:
        pytest.skip("no PCI device on this machine to leave alone")
    absent = "0000:7f:1f.7"
    assert absent not in host
    rc, _, out = engine.run(_one_port(absent, 'lcores = "0-1"; log_level = "debug";'), report=False)
    assert rc == 4 and "no DPDK device '%s'" % absent in out, out
    assert not [d for d in host if d in out], out


# ---- @include and syntax errors (item 12) ---------------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]


def _write(base, files):
    for name, text in files.items():
        p = base / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def test_shipped_lab_configs_share_their_topology_from_configs_include(tmp_path):
    """configs/lab-incast-{no-pfc,pfc-only}.cfg take their ports and roles from
    configs/include/lab-incast-4to1.cfg; checked from another folder, as users run them."""
    for name in ("lab-incast-no-pfc.cfg", "lab-incast-pfc-only.cfg"):
        text = (ROOT / "configs" / name).read_text()
        assert '@include "include/lab-incast-4to1.cfg"' in text and "ports = (" not in text
        r = subprocess.run([str(engine_path()), "--check", "-f", str(ROOT / "configs" / name)], capture_output=True,
                           text=True, cwd=str(tmp_path))
        assert r.returncode == 0 and "10 ports, 10 lcore roles, 4 flow groups" in r.stdout, r.stdout + r.stderr


def test_an_error_in_an_included_file_names_that_file_and_its_line(engine, tmp_path):
    inc = (ROOT / "configs" / "include" / "lab-incast-4to1.cfg").read_text()
    lines = inc.split("\n")
    at = next(i for i, ln in enumerate(lines) if '"h3"' in ln)
    lines[at] = lines[at].replace("mtu = 4200", "mtu = 99999")
    _write(tmp_path, {"lab/include/topo.cfg": "\n".join(lines),
                      "lab/x.cfg": 'eal = { lcores = "0-1"; };\n@include "include/topo.cfg"\n'})
    r = subprocess.run([str(engine_path()), "--check", "-f", "lab/x.cfg"], capture_output=True, text=True,
                       cwd=str(tmp_path))
    assert r.returncode == 3, r.stdout + r.stderr
    assert r.stderr.strip() == "roce-engine: lab/include/topo.cfg:%d: ports.[3].mtu: 99999 is out of range " \
                               "(576..9000)" % (at + 1), r.stderr


@pytest.mark.parametrize("text,line,words", [
    ('{\n  "eal": { "lcores": "0-1" },\n  "ports": []\n}\n', 1,
     "found '{' where a setting name was expected: this looks like JSON, but the file is libconfig text"),
    ('eal = { lcores = "0-1"; };\nflows = ( { message_size = 64K; } );\n', 2,
     "found '64K' where a value was expected: numbers take no unit suffix"),
])
def test_syntax_errors_say_what_was_found_and_expected(engine, text, line, words):
    """libconfig 1.5 alone said 'syntax error: syntax error'."""
    rc, _, out = engine.run(text, "--check", report=False)
    assert rc == 3, out
    m = re.search(r"run1\.cfg:(\d+): syntax error: (.*)", out)
    assert m and int(m.group(1)) == line and m.group(2).startswith(words), out
    assert "libconfig text: https://hyperrealm.github.io/libconfig/" in m.group(2)


def test_an_sla_check_from_an_included_file_reports_its_file_and_line(engine, tmp_path):
    ports, ip_b = pair_ports("inc")
    f = flow("f", "a", MAC_B, ip_b, transport='"ud"', ops="{ send = 1; }", message_size=256, qpn="0x100",
             dest_qpn="0x300", rate_gbps=0.5, stop="{ messages = 100; }")
    _write(tmp_path, {"checks/sla.cfg": '# the checks\n\nsla = ( { flow = "f"; metric = "loss"; max = 0.0; } );\n',
                      "top.cfg": cfg(ports, [role(1, "a", "tx"), role(1, "b", "rx")], [f]) +
                      '@include "checks/sla.cfg"\n'})
    rc, rep, out = engine.run_file(tmp_path / "top.cfg")
    assert rc == 0, out
    c = rep["sla"]["checks"][0]
    assert (c["file"], c["line"], c["verdict"]) == (str(tmp_path / "checks" / "sla.cfg"), 3, "pass"), c


def test_roce_ccsim_scenarios_include_and_name_the_included_file(tmp_path):
    ccsim = Path(os.environ.get("ROCE_CCSIM", ROOT / "build" / "apps" / "roce-ccsim"))
    shipped = (ROOT / "configs" / "ccsim" / "two-flows-40g.cfg").read_text()
    sw = shipped[shipped.index("switch = {"):shipped.index("receivers = (")]
    rest = shipped.replace(sw, '@include "blocks/switch-40g.cfg"\n')
    _write(tmp_path, {"sc/blocks/switch-40g.cfg": sw, "sc/two.cfg": rest.replace("duration_us = 20000.0", "duration_us = 2000.0")})
    r = subprocess.run([str(ccsim), "-s", "s.json", "sc/two.cfg"], capture_output=True, text=True, cwd=str(tmp_path),
                       timeout=120)
    assert r.returncode == 0, r.stderr
    _write(tmp_path, {"sc/blocks/switch-40g.cfg": sw.replace("pmax = 1.0", "pmax = 2.0")})
    r = subprocess.run([str(ccsim), "-s", "s.json", "sc/two.cfg"], capture_output=True, text=True, cwd=str(tmp_path),
                       timeout=120)
    line = sw.split("\n").index(next(ln for ln in sw.split("\n") if "pmax" in ln)) + 1
    assert r.returncode != 0 and "sc/blocks/switch-40g.cfg:%d: switch.ecn.pmax: " % line in r.stderr, r.stderr


def test_roce_suite_files_include_and_name_the_included_file(tmp_path):
    """A suite file that takes its switch group from a shared block: --check passes, and when the
    engine refuses a trial's switch group (roce-suite copies it into the trials unchecked), the
    suite names the included file and its line."""
    suite = Path(os.environ.get("ROCE_SUITE", ROOT / "build" / "apps" / "roce-suite"))
    shipped = (ROOT / "configs" / "suites" / "hol-lab.cfg").read_text()
    sw = shipped[shipped.index("switch = {"):shipped.index("trial = {")]
    env = dict(os.environ, ROCE_ENGINE=str(engine_path().resolve()))
    _write(tmp_path, {"s/blocks/switch.cfg": sw, "s/hol.cfg": shipped.replace(sw, '@include "blocks/switch.cfg"\n\n')})
    r = subprocess.run([str(suite), "--check", "s/hol.cfg"], capture_output=True, text=True, cwd=str(tmp_path), env=env,
                       timeout=120)
    assert r.returncode == 0 and "is valid" in r.stdout, r.stdout + r.stderr
    _write(tmp_path, {"s/blocks/switch.cfg": sw.replace("queue_limit_kb = 256;", "queue_limit_kb = 256; bufer_kb = 1;")})
    r = subprocess.run([str(suite), "-q", "-d", "0.2", "-r", "r.json", "s/hol.cfg"], capture_output=True, text=True,
                       cwd=str(tmp_path), env=env, timeout=120)
    assert r.returncode == 3 and "stopped: s/blocks/switch.cfg:3: switch.bufer_kb: unknown setting 'bufer_kb'" in r.stderr, \
        r.stdout + r.stderr
