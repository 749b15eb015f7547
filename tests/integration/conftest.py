"""Fixtures of the engine's integration tests (tests/integration): roce-engine runs on virtual
devices (ring pairs, net_pcap, net_null) with configurations written by each test.

    /usr/bin/python3 -m pytest -q tests/integration

`engine`: runs $ROCE_ENGINE (else <repo>/build/apps/roce-engine) with a config text (`run`) or an
existing config file in place (`run_file`) and returns (exit code, report dict or None,
stdout+stderr). Every run gets its own EAL file prefix.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "oracle"))


def engine_path():
    return Path(os.environ.get("ROCE_ENGINE", ROOT / "build" / "apps" / "roce-engine"))


def pcap_tool_path():
    return Path(os.environ.get("ROCE_PCAP", ROOT / "build" / "apps" / "roce-pcap"))


def held_up_s(report):
    """Seconds the report's worker lcores were held up off their CPUs (report lcores[]): what a
    busy machine took from the run, to judge rates and timeouts by."""
    return sum(l["held_up_ms"] for l in report["lcores"]) / 1000.0


def on_cpu_share(report):
    """The share of the run its lcores were on their CPUs: a shaper or a PFC generator earns no
    credit for the time held up, so what they carry falls short by that much."""
    return 1.0 - held_up_s(report) / report["duration_s"]


class Engine:
    def __init__(self, tmp_path):
        self.tmp = tmp_path
        self.n = 0

    def run(self, cfg_text, *args, timeout=120, report=True):
        self.n += 1
        cfg = self.tmp / ("run%d.cfg" % self.n)
        cfg.write_text(cfg_text)
        return self._exec(cfg, args, timeout, report)

    def run_file(self, cfg, *args, timeout=120, report=True):
        """An existing config file, in place (its @include files are found beside it)."""
        self.n += 1
        return self._exec(cfg, args, timeout, report)

    def _exec(self, cfg, args, timeout, report):
        rep = self.tmp / ("run%d.json" % self.n)
        cmd = [str(engine_path()), "-f", str(cfg), "-q"] + [str(a) for a in args]
        if report:
            cmd += ["-r", str(rep)]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=str(self.tmp))
        data = json.loads(rep.read_text()) if report and rep.exists() else None
        return r.returncode, data, r.stdout + r.stderr


@pytest.fixture
def engine(tmp_path):
    p = engine_path()
    if not p.exists():
        pytest.fail("roce-engine not found at %s (build it, or set $ROCE_ENGINE)" % p)
    return Engine(tmp_path)


def pytest_configure(config):
    # Tests of outside tools (a Prometheus server, a browser) that exercise no engine code the other
    # tests do not, and claims of timing fidelity that need the release build's speed (a sanitizer's
    # build turns the lcore loop too slowly for frame-time emulation): scripts/run-tests.sh runs
    # them on the release build only (-m "not release_only").
    config.addinivalue_line("markers", "release_only: run on the release build only")
