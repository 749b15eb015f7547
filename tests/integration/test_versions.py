"""Versions and run_info (docs/report.md, "run_info"): every program's --version line, and the
run_info object of every JSON report (the engine's, its perftest modes' runs, roce-suite's and its
trials', roce-ccsim's).

Oracles: meson's own reading of meson.build (`meson introspect --projectinfo`) for the version,
`git describe` of the tree for the build's description, pkg-config for DPDK's version, Python's
hashlib and coreutils' sha256sum for the configs' SHA-256, socket.gethostname() for the host, the
test's own wall clock for the start time and its own argument list for the command line.
"""
import datetime
import hashlib
import json
import os
import re
import socket
import subprocess
import time
from pathlib import Path

import pytest

from conftest import engine_path, pcap_tool_path

ROOT = Path(__file__).resolve().parents[2]

RING_CFG = """
eal = { lcores = "0-1"; memory_mb = 128; };
ports = (
  { name = "a"; device = "ring:ver:a"; mac = "02:00:00:00:00:01"; ipv4 = "10.0.0.1"; link_speed_gbps = 10.0; },
  { name = "b"; device = "ring:ver:b"; mac = "02:00:00:00:00:02"; ipv4 = "10.0.0.2"; link_speed_gbps = 10.0; }
);
lcores = ( { lcore = 1; port = "a"; role = "txrx"; }, { lcore = 1; port = "b"; role = "txrx"; } );
flows = (
  { name = "f"; port = "a"; dst_mac = "02:00:00:00:00:02"; dst_ip = "10.0.0.2"; transport = "uc";
    message_size = 1024; qpn = 0x100; dest_qpn = 0x200; rate_gbps = 0.1; }
);
"""


def ccsim_path():
    return Path(os.environ.get("ROCE_CCSIM", ROOT / "build" / "apps" / "roce-ccsim"))


def suite_path():
    # the roce-suite of the engine's own build tree (release or ASan), unless told otherwise
    return Path(os.environ.get("ROCE_SUITE", engine_path().resolve().parent / "roce-suite"))


def meson_version():
    r = subprocess.run(["meson", "introspect", "--projectinfo", "meson.build"], capture_output=True, text=True,
                       cwd=str(ROOT), timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["version"]


def git_describe():
    """The build's description as meson's vcs_tag takes it (version/meson.build); None outside git."""
    r = subprocess.run(["git", "-C", str(ROOT), "describe", "--always", "--dirty", "--tags"], capture_output=True,
                       text=True)
    return r.stdout.strip() if r.returncode == 0 and r.stdout.strip() else None


@pytest.fixture(scope="module")
def expected():
    return {"version": meson_version(), "git": git_describe()}


def version_line(program, expected):
    line = "%s %s" % (program, expected["version"])
    return line + (" (git %s)" % expected["git"] if expected["git"] else "")


def run_version(cmd):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, (cmd, r.stdout, r.stderr)
    assert r.stderr == "", (cmd, r.stderr)   # no EAL start, no warning
    lines = r.stdout.splitlines()
    assert len(lines) == 1, (cmd, r.stdout)
    return lines[0]


def test_engine_version_without_eal(expected):
    dpdk = subprocess.run(["pkg-config", "--modversion", "libdpdk"], capture_output=True, text=True).stdout.strip()
    want = "%s, DPDK %s" % (version_line("roce-engine", expected), dpdk)
    e = engine_path()
    # first argument (also before an EAL form's "--"), anywhere among the engine's own options, and
    # after "--"; a config that does not exist is never read
    for args in (["--version"], ["--version", "--", "-f", "nothere.cfg"], ["-q", "--version"],
                 ["-f", "nothere.cfg", "--version"], ["-l", "0", "--", "-q", "--version"]):
        assert run_version([e] + args) == want, args


def test_tools_version(expected):
    assert run_version([pcap_tool_path(), "--version"]) == version_line("roce-pcap", expected)
    for prog, path in (("roce-ccsim", ccsim_path()), ("roce-suite", suite_path())):
        for args in (["--version"], ["-q", "--version"], ["-q", "--version", "nothere.cfg"]):
            assert run_version([path] + args) == version_line(prog, expected), (prog, args)


def sha256sum(path):
    out = subprocess.run(["sha256sum", str(path)], capture_output=True, text=True, check=True).stdout
    return out.split()[0]


def utc_seconds(text):
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", text), text
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def check_run_info(ri, expected, program, cmd, t0, t1, config, read=None):
    """run_info as docs/report.md gives it. config: the path the run was given (None: none); read:
    the file it names, when config is relative to another folder than the test's."""
    assert set(ri) == {"program", "version", "git", "started_utc", "host", "command_line", "config"}, ri
    assert ri["program"] == program
    assert ri["version"] == expected["version"] and ri["git"] == expected["git"], (ri, expected)
    # started after the test started it and before it ended (the field has milliseconds, cut off)
    assert t0 - 0.001 <= utc_seconds(ri["started_utc"]) <= t1, (ri["started_utc"], t0, t1)
    assert ri["host"] == socket.gethostname()
    assert ri["command_line"] == [str(c) for c in cmd]
    if config is None:
        assert ri["config"] is None
        return
    assert set(ri["config"]) == {"path", "sha256"} and ri["config"]["path"] == str(config), ri
    assert ri["config"]["sha256"] == hashlib.sha256(Path(read or config).read_bytes()).hexdigest(), ri


def timed_run(cmd, **kw):
    t0 = time.time()
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=kw.pop("timeout", 120), **kw)
    return r, t0, time.time()


def test_engine_report_run_info(tmp_path, expected):
    cfg = tmp_path / "ring.cfg"
    cfg.write_text(RING_CFG)
    rep = tmp_path / "report.json"
    cmd = [engine_path(), "-f", cfg, "-q", "-d", "0.2", "-r", rep]
    r, t0, t1 = timed_run(cmd, cwd=str(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    ri = json.loads(rep.read_text())["run_info"]
    check_run_info(ri, expected, "roce-engine", cmd, t0, t1, cfg)
    assert ri["config"]["sha256"] == hashlib.sha256(cfg.read_bytes()).hexdigest() == sha256sum(cfg)


def test_engine_report_hashes_the_bytes_it_read(tmp_path, expected):
    """One byte more (a comment): another hash. A config given by a relative path keeps that path."""
    (tmp_path / "ring.cfg").write_text(RING_CFG + "#\n")
    cmd = [engine_path(), "-f", "ring.cfg", "-q", "-d", "0.1", "-r", "r.json"]
    r, t0, t1 = timed_run(cmd, cwd=str(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    ri = json.loads((tmp_path / "r.json").read_text())["run_info"]
    check_run_info(ri, expected, "roce-engine", cmd, t0, t1, "ring.cfg", read=tmp_path / "ring.cfg")
    assert ri["config"]["sha256"] != hashlib.sha256(RING_CFG.encode()).hexdigest()


def test_perftest_runs_carry_run_info(tmp_path, expected):
    rep = tmp_path / "pt.json"
    cmd = [engine_path().resolve(), "write_bw", "-n", "200", "-s", "4096", "--keep", "--report", rep]
    r, t0, t1 = timed_run(cmd, cwd=str(tmp_path), env=dict(os.environ, TMPDIR=str(tmp_path)))
    assert r.returncode == 0, r.stdout + r.stderr
    (work,) = tmp_path.glob("roce-perftest-*")
    runs = json.loads(rep.read_text())["runs"]
    assert runs
    for k, run in enumerate(runs):
        # each run is the engine's own path in a child: the command the user typed, the config generated
        check_run_info(run["run_info"], expected, "roce-engine", cmd, t0, t1, work / ("run%d.cfg" % k))


def test_ccsim_summaries_carry_run_info(tmp_path, expected):
    for scenario in ("two-flows-40g.cfg", "rp-replay.cfg"):
        cfg = ROOT / "configs" / "ccsim" / scenario
        out = tmp_path / (scenario + ".json")
        cmd = [ccsim_path(), "-q", "-c", tmp_path / "x.csv", "-s", out, cfg]
        r, t0, t1 = timed_run(cmd, cwd=str(tmp_path))
        assert r.returncode == 0, r.stdout + r.stderr
        ri = json.loads(out.read_text())["run_info"]
        check_run_info(ri, expected, "roce-ccsim", cmd, t0, t1, cfg)
        assert ri["config"]["sha256"] == sha256sum(cfg)


@pytest.mark.release_only   # a suite of engine trials: the release build only, as tests/integration/test_suites.py
def test_suite_and_its_trials_carry_their_own_run_info(tmp_path, expected):
    suite = tmp_path / "ring.cfg"
    suite.write_text('suite = { name = "ring"; type = "collective"; base = "%s"; };\n'
                     % (ROOT / "configs" / "ring-allreduce-4.cfg"))
    keep, rep = tmp_path / "trials", tmp_path / "suite.json"
    cmd = [suite_path(), "-q", "-k", keep, "-r", rep, suite]
    r, t0, t1 = timed_run(cmd, cwd=str(tmp_path), env=dict(os.environ, ROCE_ENGINE=str(engine_path().resolve())),
                          timeout=240)
    assert r.returncode == 0, r.stdout + r.stderr
    ri = json.loads(rep.read_text())["run_info"]
    check_run_info(ri, expected, "roce-suite", cmd, t0, t1, suite)
    assert ri["config"]["sha256"] == sha256sum(suite)
    trial = json.loads((keep / "t001" / "report.json").read_text())["run_info"]
    # the engine's child: its own command line in the trial's folder, its own config
    check_run_info(trial, expected, "roce-engine",
                   [engine_path().resolve(), "-f", "trial.cfg", "-q", "-r", "report.json"], t0, t1, "trial.cfg",
                   read=keep / "t001" / "trial.cfg")
    assert trial["config"]["sha256"] == sha256sum(keep / "t001" / "trial.cfg")
    assert trial["started_utc"] >= ri["started_utc"]
