"""Fixtures of the independent-oracle suite (tests/oracle).

Run with Debian's interpreter (scapy 2.5.0 with scapy.contrib.roce, pytest 7.2):

    /usr/bin/python3 -m pytest -q tests/oracle

* `roce_pcap`: path of the tool under test, $ROCE_PCAP or <repo>/build/apps/roce-pcap. When the
  tool is missing every test that needs it FAILS (it is not skipped): an oracle suite that
  silently skips proves nothing.
* `shared`: $ROCE_SHARED or <repo>/../shared (spec and third-party captures, read in place).
  Tests that need it are skipped, visibly, when it is absent.
* `tool_set`: one seeded random set of frame descriptions (every opcode x IPv4/IPv6 x
  untagged/VLAN, CNP, PFC, PAUSE) written once by `roce-pcap write`; shared by the scapy, tshark
  and ICRC tests. The seed is printed in the report header; override it with $ROCE_ORACLE_SEED.
"""
import os
import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import oracle_common as oc  # noqa: E402


def pytest_report_header(config):
    return ["roce oracle: seed %d (ROCE_ORACLE_SEED), tool %s, shared %s" % (
        oc.seed(), oc.tool_path(), oc.shared_dir())]


@pytest.fixture(scope="session")
def roce_pcap():
    p = oc.tool_path()
    if not p.exists() or not os.access(p, os.X_OK):
        pytest.fail("roce-pcap not found or not executable at %s (build it, or set $ROCE_PCAP)" % p)
    return p


@pytest.fixture(scope="session")
def shared():
    d = oc.shared_dir()
    if not d.is_dir():
        pytest.skip("shared folder %s absent (set $ROCE_SHARED): third-party data tests skipped" % d)
    return d


class ToolSet:
    def __init__(self, descs, frames, path, seed):
        self.descs = descs
        self.frames = frames
        self.path = path
        self.seed = seed

    def of_kind(self, kind):
        return [(i, d, self.frames[i]) for i, d in enumerate(self.descs) if d.kind == kind]


@pytest.fixture(scope="session")
def tool_set(roce_pcap, tmp_path_factory):
    s = oc.seed()
    print("oracle random seed: %d" % s)
    rng = random.Random(s)
    descs = oc.gen_set(rng)
    path = tmp_path_factory.mktemp("toolset") / "random.pcap"
    frames = oc.tool_write(path, [d.arg() for d in descs])
    assert len(frames) == len(descs), "tool wrote %d frames for %d descriptions" % (len(frames), len(descs))
    return ToolSet(descs, frames, path, s)


@pytest.fixture(scope="session")
def tool_bad_set(roce_pcap, tmp_path_factory):
    """Frames written with badicrc=1 (one per opcode, IPv4 and IPv6, plus CNPs)."""
    rng = random.Random(oc.seed() + 1)
    descs = []
    for kind in oc.ALL_OP_KINDS + ["cnp"]:
        for ipver in (4, 6):
            descs.append(oc.gen_roce(rng, kind, ipver, rng.random() < 0.5, badicrc=True))
    path = tmp_path_factory.mktemp("toolbad") / "badicrc.pcap"
    frames = oc.tool_write(path, [d.arg() for d in descs])
    assert len(frames) == len(descs)
    return ToolSet(descs, frames, path, oc.seed() + 1)
