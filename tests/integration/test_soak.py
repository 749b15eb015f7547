"""bench/soak.py, the long-run check (docs/reliability.md#long-runs), kept from rotting by a
7-second smoke run (CI's time; the AI-fabric suite's §12 soak runs the engine's own time series
too); the real soak (10 minutes or more) is not a CI test."""
import csv
import subprocess
import sys

import pytest

from conftest import ROOT, engine_path


@pytest.mark.release_only
def test_soak_smoke(tmp_path):
    r = subprocess.run([sys.executable, str(ROOT / "bench" / "soak.py"), "--minutes", "0.12", "--interval", "0.5",
                        "--warmup", "2", "--engine", str(engine_path()), "--out", str(tmp_path / "soak")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "soak: PASS" in r.stdout
    rows = list(csv.DictReader(open(tmp_path / "soak" / "soak.csv")))
    assert len(rows) >= 10
    assert all(float(x["rss_mib"]) > 10 for x in rows) and any(k.startswith("pool ") for k in rows[0])
    assert (tmp_path / "soak" / "soak.png").stat().st_size > 5000


def test_soak_rejects_bad_arguments():
    r = subprocess.run([sys.executable, str(ROOT / "bench" / "soak.py"), "--minutes", "0"], capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 2 and "--minutes and --interval must be > 0" in r.stderr
