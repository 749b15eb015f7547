"""roce-fabric (docs/fabric.md): the topology, routes and fluid view of a traffic matrix, checked
against independent models: networkx's shortest paths for the routes, Python's zlib.crc32 and
binascii.crc_hqx for the ECMP hashes, a max-min fair allocation written here, and values worked
out by hand."""
import binascii
import json
import os
import subprocess
import zlib
from pathlib import Path

import networkx as nx
import pytest

from conftest import ROOT


def fabric_path():
    return Path(os.environ.get("ROCE_FABRIC", ROOT / "build" / "apps" / "roce-fabric"))


@pytest.fixture
def fab(tmp_path):
    if not fabric_path().exists():
        pytest.fail("roce-fabric not found at %s" % fabric_path())

    def run(text, *args, name="fabric.cfg"):
        cfg = tmp_path / name
        cfg.write_text(text)
        rep = tmp_path / (name + ".json")
        if rep.exists():
            rep.unlink()
        r = subprocess.run([str(fabric_path()), str(cfg), "-r", str(rep)] + [str(a) for a in args],
                           capture_output=True, text=True, timeout=120)
        data = json.loads(rep.read_text()) if rep.exists() else None
        return r.returncode, r.stdout, r.stderr, data

    return run


# ---- the independent model -------------------------------------------------------------------

class Model:
    """The fabric as the report lists it: a switch's ports are its links in the order of
    fabric.links (docs/fabric.md); routes by networkx's shortest paths between switches."""

    def __init__(self, rep):
        fab = rep["fabric"]
        self.switch = {s["name"]: s for s in fab["switches"]}
        self.nic = {n["name"]: n for n in fab["nic_list"]}
        self.links = fab["links"]
        self.ports = {s: [] for s in self.switch}         # switch -> [(peer, link name)]
        self.g = nx.MultiGraph()
        self.g.add_nodes_from(self.switch)
        for l in self.links:
            self.ports[l["a"]].append((l["b"], l["name"]))
            if l["b"] in self.switch:
                self.ports[l["b"]].append((l["a"], l["name"]))
                self.g.add_edge(l["a"], l["b"])
        self.dist = {}

    def hops_to(self, dst_switch):
        if dst_switch not in self.dist:
            self.dist[dst_switch] = nx.single_source_shortest_path_length(self.g, dst_switch)
        return self.dist[dst_switch]

    def next_hops(self, s, dst_nic):
        """The ports (peer, link) of switch s toward NIC dst_nic, in port order."""
        home = self.nic[dst_nic]["switch"]
        if home == s:
            return [p for p in self.ports[s] if p[0] == dst_nic]
        d = self.hops_to(home)
        return [p for p in self.ports[s] if p[0] in self.switch and d[p[0]] == d[s] - 1]


def ip_bytes(ip):
    return bytes(int(x) for x in ip.split("."))


def ecmp_hash(lb, flow):
    fields = lb["fields"].split(",")
    key = b""
    if "src_ip" in fields:
        key += ip_bytes(flow["src_ip"])
    if "dst_ip" in fields:
        key += ip_bytes(flow["dst_ip"])
    if "udp_sport" in fields:
        key += flow["udp_sport"].to_bytes(2, "big")
    if "udp_dport" in fields:
        key += flow["udp_dport"].to_bytes(2, "big")
    if "dest_qp" in fields:
        key += flow["dest_qpn"].to_bytes(3, "big")
    if lb["hash"] == "crc16":
        return binascii.crc_hqx(key, lb["seed"] & 0xFFFF), 16
    return zlib.crc32(key, lb["seed"]), 32


def ecmp_path(model, flow):
    """The links an ECMP flow crosses, from its NIC to the destination NIC."""
    src = model.nic[flow["src"]]
    path, s = [src["link"]], src["switch"]
    for _ in range(16):
        members = model.next_hops(s, flow["dst"])
        assert members, (s, flow)
        if len(members) == 1:
            peer, link = members[0]
        else:
            h, bits = ecmp_hash(model.switch[s]["load_balance"], flow)
            peer, link = members[(h * len(members)) >> bits]
        path.append(link)
        if peer == flow["dst"]:
            return path
        s = peer
    raise AssertionError("no end")


def maxmin(flows, cap):
    """Max-min fair rates by progressive filling, the hops as (directed link, share)."""
    rate = [0.0] * len(flows)
    frozen = [False] * len(flows)
    load = {d: 0.0 for d in cap}
    while not all(frozen):
        weight = {d: 0.0 for d in cap}
        for i, hops in enumerate(flows):
            if not frozen[i]:
                for d, share in hops:
                    weight[d] += share
        inc = min((cap[d] - load[d]) / w for d, w in weight.items() if w > 1e-12)
        for d, w in weight.items():
            load[d] += inc * w
        full = {d for d in cap if cap[d] - load[d] <= cap[d] * 1e-9}
        for i, hops in enumerate(flows):
            if not frozen[i]:
                rate[i] += inc
                if any(d in full for d, _ in hops):
                    frozen[i] = True
    return rate


def directed(hops):
    return [((h["link"], h["from"]), h["share"]) for h in hops]


def capacities(rep):
    cap = {}
    for l in rep["fabric"]["links"]:
        cap[(l["name"], l["a"])] = cap[(l["name"], l["b"])] = l["gbps"]
    return cap


LEAF_SPINE = """
fabric = {
  kind = "leaf-spine"; leaves = 4; spines = 3; hosts_per_leaf = 4; uplinks = 2;
  host_gbps = 100; uplink_gbps = 40;
  hash = { function = "%s"; seed = 11; fields = [%s]; };
  switches = ( { name = "spine1"; hash = { function = "crc32"; seed = 99; }; },
               { name = "leaf2"; hash = { seed = 12345; fields = ["src_ip", "udp_sport"]; }; } );
};
traffic = ( { pattern = "all_to_all"; qps_per_pair = 2; } );
"""


@pytest.mark.parametrize("fn,fields", [("crc32", '"src_ip", "dst_ip", "udp_sport", "udp_dport"'),
                                       ("crc16", '"dst_ip", "udp_sport", "dest_qp"')])
def test_ecmp_paths_match_the_model(fab, fn, fields):
    """Every flow of a 16-host all-to-all (2 QPs a pair, 6 parallel uplinks a leaf, per-switch
    seeds and fields) takes the links networkx's shortest paths and Python's CRC choose."""
    rc, out, err, rep = fab(LEAF_SPINE % (fn, fields))
    assert rc == 0, err
    model = Model(rep)
    assert rep["summary"]["flows"] == 16 * 15 * 2
    for flow in rep["flows"]:
        assert [h["link"] for h in flow["path"]] == ecmp_path(model, flow), flow
        assert all(h["share"] == 1.0 for h in flow["path"])
    # the QPNs count up from 0x100, the UDP source port from the QPN pair (the engine's entropy)
    f3 = rep["flows"][3]
    assert f3["dest_qpn"] == 0x103
    label = (0x103 * 0x103) ^ ((0x103 * 0x103) >> 20)
    label = (label ^ (label >> 40)) & 0xFFFFF
    assert f3["udp_sport"] == ((label & 0x3FFF) ^ ((label & 0xFC000) >> 14)) | 0xC000


def test_routes_match_networkx(fab):
    rc, out, err, rep = fab("fabric = { kind = \"fat-tree\"; k = 4; };\n", "--routes")
    assert rc == 0, err
    model = Model(rep)
    for sw, routes in rep["routes"].items():
        for r in routes:
            d = model.hops_to(r["switch"])
            want = sorted(p for p, _ in model.ports[sw] if p in model.switch and d[p] == d[sw] - 1)
            assert sorted(r["via"]) == want, (sw, r)
            assert r["hops"] == d[sw]
    # the text: edge0's route to pod 3's last edge switch, over both aggregation switches
    assert "    198.18.7.0/24 via agg0, agg1 (4 hops)" in out
    assert "    198.18.0.2/32 port 0 (h0)" in out


def test_rates_are_max_min_fair(fab):
    """The report's rates against the model's progressive filling, with ECMP and sprayed."""
    rc, out, err, rep = fab(LEAF_SPINE % ("crc32", '"src_ip", "dst_ip", "udp_sport", "udp_dport"'))
    assert rc == 0, err
    cap = capacities(rep)
    rates = maxmin([directed(f["path"]) for f in rep["flows"]], cap)
    for f, r in zip(rep["flows"], rates):
        assert f["gbps"] == pytest.approx(r, rel=1e-6, abs=1e-9)
    assert rep["summary"]["aggregate_gbps"] == pytest.approx(sum(rates), rel=1e-9)
    # no link carries more than its capacity, in either direction
    for l in rep["fabric"]["links"]:
        for d in ("a_to_b", "b_to_a"):
            assert l[d]["gbps"] <= l["gbps"] * (1 + 1e-9)


def test_hand_computed_rates(fab):
    """2 leaves of 2 hosts, one spine, 100 Gb/s everywhere: h0 -> h2 and h1 -> h3 share leaf0's
    uplink (50 each); h2 -> h1 is alone on every link it crosses (100)."""
    rc, out, err, rep = fab("""
fabric = { kind = "leaf-spine"; leaves = 2; spines = 1; hosts_per_leaf = 2; };
traffic = ( { pattern = "pairs"; pairs = ( ["h0", "h2"], ["h1", "h3"], ["h2", "h1"] ); } );
""")
    assert rc == 0, err
    assert [f["gbps"] for f in rep["flows"]] == pytest.approx([50, 50, 100])
    assert rep["summary"]["aggregate_gbps"] == pytest.approx(200)
    assert rep["summary"]["sprayed_aggregate_gbps"] == pytest.approx(200)  # one spine: nothing to spread
    (grp,) = [g for g in rep["ecmp_groups"]] or [None]
    assert grp is None  # a single spine makes no ECMP group


def test_permutation_on_a_non_blocking_fabric(fab):
    """htsim's 128-host two-tier fabric (16 leaves x 8 hosts, 8 spines, 100 Gb/s): sprayed, a
    permutation runs every flow at line rate (each leaf's 8 uplinks carry what its 8 hosts send:
    12,800 Gb/s); with 5-tuple ECMP, collisions keep it near half (htsim measured 54 %, median
    47.5 Gb/s, Jain 0.82 for one such matrix: docs/fabric.md)."""
    effs = []
    for seed in (1, 2, 3):
        rc, out, err, rep = fab((ROOT / "configs" / "fabric" / "plan-128.cfg").read_text().replace("seed = 1;", "seed = %d;" % seed))
        assert rc == 0, err
        s = rep["summary"]
        assert s["sprayed_aggregate_gbps"] == pytest.approx(12800, rel=1e-9)
        assert s["sprayed_gbps"]["min"] == pytest.approx(100)
        assert 0.4 < s["efficiency"] < 0.7 and s["gbps"]["jfi"] < 0.95
        effs.append(s["efficiency"])
        # each leaf's ECMP group against balls into bins for its 8 flows on 8 spines
        for g in rep["ecmp_groups"]:
            assert sum(g["flows"]) == pytest.approx(sum(1 for f in rep["flows"] if f["path"][1]["from"] == g["switch"]
                                                        and f["path"][1]["to"] in g["members"]))
            assert 1 <= g["mmr_flows"] <= 8 and 2.0 < g["mmr_random_expected"] < 3.5
    assert len(set(round(e, 6) for e in effs)) > 1  # the seed draws another matrix


def test_bth_aware_hashing(fab):
    """One host pair per leaf pair, 8 QPs each, one UDP source port for all (sport_step 0): the
    5-tuple puts every QP of a pair on one spine; with the BTH destination QP in the hash they
    spread over the four."""
    text = """
fabric = { kind = "leaf-spine"; leaves = 2; spines = 4; hosts_per_leaf = 1;
           host_gbps = 400; uplink_gbps = 100; hash = { fields = [%s]; }; };
traffic = ( { pattern = "pairs"; pairs = ( ["h0", "h1"] ); qps_per_pair = 8; udp_sport = 49152; sport_step = 0; } );
"""
    rc, out, err, rep = fab(text % '"src_ip", "dst_ip", "udp_sport", "udp_dport"')
    assert rc == 0, err
    (g,) = [g for g in rep["ecmp_groups"] if g["switch"] == "leaf0"]
    assert sorted(g["flows"]) == [0, 0, 0, 8] and rep["summary"]["aggregate_gbps"] == pytest.approx(100)
    rc, out, err, rep = fab(text % '"src_ip", "dst_ip", "udp_sport", "udp_dport", "dest_qp"')
    assert rc == 0, err
    (g,) = [g for g in rep["ecmp_groups"] if g["switch"] == "leaf0"]
    assert sum(1 for x in g["flows"] if x > 0) >= 3
    assert rep["summary"]["aggregate_gbps"] > 250


def test_rail_mapping(fab):
    rc, out, err, rep = fab("fabric = { kind = \"rail\"; hosts = 4; rails = 2; spines = 1; };\n")
    assert rc == 0, err
    nics = {n["name"]: n for n in rep["fabric"]["nic_list"]}
    n = nics["h1-r1"]
    assert (n["host"], n["rail"], n["switch"], n["ip"], n["gateway"], n["mac"]) == \
        ("h1", 1, "leaf1", "198.18.1.3", "198.18.1.1", "02:fa:00:00:00:03")
    assert all(n["switch"] == "leaf%d" % n["rail"] for n in nics.values())
    assert "  h1-r1        h1              1  198.18.1.3/24      02:fa:00:00:00:03  leaf1 1" in out


@pytest.mark.parametrize("text,line,setting,what", [
    ("traffic = ( { pattern = \"ring\"; } );\n", 1, "fabric", "missing"),
    ("fabric = { kind = \"leaf-spine\"; leaves = 2;\n spines = 1; hosts_per_leaf = 2; host_gbps = 0; };\n", 2,
     "fabric.host_gbps", "out of range"),
    ("fabric = { kind = \"custom\"; switches = ( { name = \"s0\"; } ); hosts = [\"h0\"];\n"
     "  links = ( { a = \"s0\"; b = \"h0\"; }, { a = \"s0\"; b = \"s1\"; } ); };\n", 2, "fabric.links.[1]",
     "s1 is neither a switch nor a host"),
    ("fabric = { kind = \"custom\"; switches = ( { name = \"s0\"; }, { name = \"s1\"; } ); hosts = [\"h0\", \"h1\"];\n"
     "  links = ( { a = \"s0\"; b = \"h0\"; }, { a = \"s1\"; b = \"h1\"; } ); };\n", 2, "fabric.links", "has no route to"),
    ("fabric = { kind = \"leaf-spine\"; leaves = 64; spines = 2; hosts_per_leaf = 300; subnet = \"10.0.0.0/18\"; };\n", 1,
     "fabric.subnet",
     "more hosts than addresses"),
    ("fabric = { kind = \"leaf-spine\"; leaves = 2; spines = 1; hosts_per_leaf = 2; };\n"
     "traffic = ( { pattern = \"ring\"; udp_sport = \"entropy\"; sport_step = 2; } );\n", 2, "traffic.[0].sport_step",
     "only with a udp_sport number"),
])
def test_bad_files(fab, text, line, setting, what):
    rc, out, err, rep = fab(text)
    assert rc == 1 and rep is None and out == ""
    assert "fabric.cfg:%d: %s: " % (line, setting) in err, err
    assert what in err and len(err.strip().splitlines()) == 1, err


def test_command_line(fab, tmp_path):
    r = subprocess.run([str(fabric_path()), "--version"], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.startswith("roce-fabric ")
    r = subprocess.run([str(fabric_path())], capture_output=True, text=True)
    assert r.returncode == 2 and "usage: roce-fabric" in r.stderr
    r = subprocess.run([str(fabric_path()), str(tmp_path / "none.cfg")], capture_output=True, text=True)
    assert r.returncode == 1 and "none.cfg" in r.stderr
    rc, out, err, rep = fab("fabric = { kind = \"leaf-spine\"; leaves = 2; spines = 1; hosts_per_leaf = 1; };\n"
                            "traffic = ( { pattern = \"ring\"; } );\n", "--flows", "-q")
    assert rc == 0 and out == "" and rep["run_info"]["program"] == "roce-fabric"
    rc, out, err, rep = fab("fabric = { kind = \"leaf-spine\"; leaves = 2; spines = 1; hosts_per_leaf = 1; };\n"
                            "traffic = ( { pattern = \"ring\"; } );\n", "--flows")
    assert "  ring h0 -> h1 qp 0x100 sport " in out and ": 100.00 Gb/s (sprayed 100.00): leaf0 spine0 leaf1 h1" in out


def test_shipped_plans(fab):
    """Every configs/fabric/*.cfg loads and has traffic to weigh."""
    plans = sorted((ROOT / "configs" / "fabric").glob("*.cfg"))
    assert plans
    for p in plans:
        rc, out, err, rep = fab(p.read_text(), name=p.name)
        assert rc == 0, (p, err)
        assert rep["summary"]["flows"] > 0 and "traffic:" in out


def test_polarisation_on_three_tiers(fab):
    """k = 4 fat-tree, all-to-all: with one hash and seed on every switch, the flows an edge
    switch sent to aggregation switch j take member j there too, so only core0 and core3 carry
    traffic between pods; seed_per_switch uses all four (docs/fabric.md#load-balancing)."""
    def core_gbps(extra):
        rc, out, err, rep = fab('fabric = { kind = "fat-tree"; k = 4; hash = { seed = 5; %s }; };\n'
                                'traffic = ( { pattern = "all_to_all"; } );\n' % extra)
        assert rc == 0, err
        load = {"core%d" % c: 0.0 for c in range(4)}
        for l in rep["fabric"]["links"]:
            if l["b"] in load:
                load[l["b"]] += l["a_to_b"]["gbps"]
        return load, rep["summary"]["efficiency"]
    polarised, eff_p = core_gbps("")
    assert polarised["core1"] == 0 and polarised["core2"] == 0 and polarised["core0"] > 0 and polarised["core3"] > 0
    spread, eff_s = core_gbps("seed_per_switch = true;")
    assert all(v > 0 for v in spread.values())
