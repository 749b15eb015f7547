"""roce-pcap read --json on the third-party capture set (shared/captures, read in place).

What it proves: on real hardware traffic (Huawei hns, Mellanox ConnectX-4 Lx CNP, probable
ConnectX RoCEv1), on Linux rxe traffic and on the PcapPlusPlus / scapy vectors, the parser
  * gives no "malformed" verdict and exits 0;
  * accepts every ICRC, and its icrc.calc equals the ICRC computed independently here
    (oracle_common.icrc_v2; RoCEv1: icrc_v1 over the GRH), icrc.wire the trailer read LSB first;
  * decodes every RoCEv2 frame's BTH like scapy does, and its extended headers like the
    byte-offset decoder here;
  * finds the frame counts and contents the captures README lists per file.
One test case per file (the file list is the folder's content, synthetic/ included); when the
shared folder is absent the cases are skipped, visibly.
"""
import collections

import pytest
from scapy.all import Ether, UDP, raw, rdpcap, conf
from scapy.contrib.roce import BTH

import oracle_common as oc

conf.verb = 0

CAP = oc.shared_dir() / "captures"

# Expectations from shared/captures/README.md
EXPECT = {
    "oferby-proxy_roce_huawei-hns_rc_send.pcap": {
        "frames": 123, "roce": 105, "other": 18,
        "ops": {"RC_SEND_FIRST": 33, "RC_SEND_LAST_IMM": 33, "RC_SEND_ONLY_IMM": 2, "RC_ACK": 37},
    },
    "montybeatnik_softroce-rxe_cm_write_read.pcap": {
        "frames": 12, "roce": 12, "other": 0,
        "ops": {"UD_SEND_ONLY": 5, "RC_WRITE_ONLY": 1, "RC_ACK": 1, "RC_READ_REQUEST": 1,
                "RC_READ_RESP_FIRST": 1, "RC_READ_RESP_MIDDLE": 2, "RC_READ_RESP_LAST": 1},
    },
    "montybeatnik_softroce-rxe_cm_write_read_2.pcap": {
        "frames": 16, "roce": 12, "other": 4,
        "ops": {"UD_SEND_ONLY": 5, "RC_WRITE_ONLY": 1, "RC_ACK": 1, "RC_READ_REQUEST": 1,
                "RC_READ_RESP_FIRST": 1, "RC_READ_RESP_MIDDLE": 2, "RC_READ_RESP_LAST": 1},
    },
    "scapy-uts_connectx4lx_cnp.pcap": {"frames": 1, "cnp": 1, "ops": {}},
    "pcapplusplus_InfiniBandPacket_rdma_read_req.pcap": {"frames": 1, "roce": 1, "ops": {"RC_READ_REQUEST": 1}},
    "scapy-uts_rocev1_connectx_write_ack.pcap": {"frames": 2, "roce": 2, "version": 1,
                                                 "ops": {"RC_WRITE_ONLY": 1, "RC_ACK": 1}},
    "synthetic/scapy-uts_synthetic_uc_send_only_ipv4_ipv6.pcap": {"frames": 2, "roce": 2, "ops": {"UC_SEND_ONLY": 2}},
}


def _files():
    if not CAP.is_dir():
        return ["(shared captures absent)"]
    return sorted(str(p.relative_to(CAP)) for p in CAP.rglob("*.pcap"))


def _specific(name, objs, frames):
    """Contents the README states per file."""
    roce = [o for o in objs if o["kind"] in ("roce", "cnp")]
    if name.startswith("oferby"):
        acks = [o for o in roce if o["bth"]["name"] == "RC_ACK"]
        assert {o["aeth"]["syndrome"] for o in acks} <= {0x05, 0x06}, "ACK syndromes"
        assert all(o["aeth"]["syndrome"] >> 5 == 0 for o in acks)
        assert any(o["bth"]["pad"] > 0 for o in roce if o["bth"]["name"] == "RC_SEND_ONLY_IMM"), "padcnt > 0"
        assert all(o["ip"]["ecn"] == 2 for o in roce), "all ECT(0)"
        assert any(o["udp"]["sport"] == 69 for o in roce), "the sport-69 direction"
    elif name.startswith("montybeatnik"):
        by = collections.defaultdict(list)
        for o in roce:
            by[o["bth"]["name"]].append(o)
        assert by["RC_WRITE_ONLY"][0]["bth"]["pad"] > 0
        assert by["RC_ACK"][0]["aeth"]["syndrome"] == 0x1F
        assert by["RC_READ_REQUEST"][0]["reth"]["dmalen"] > 0
        for n in ("RC_READ_RESP_FIRST", "RC_READ_RESP_LAST"):
            assert "aeth" in by[n][0]
        assert all(o.get("aeth") is None for o in by["RC_READ_RESP_MIDDLE"]), "READ_RESP_MIDDLE has no AETH"
        assert all(o["deth"] is not None for o in by["UD_SEND_ONLY"])
        if name.endswith("_2.pcap"):
            assert sum(1 for o in objs if o["kind"] == "other" and o["eth"]["type"] == 0x0806) == 4, "4 ARP frames"
    elif name.startswith("scapy-uts_connectx4lx_cnp"):
        o = objs[0]
        assert o["kind"] == "cnp" and o["bth"]["opcode"] == 0x81
        assert o["bth"]["dqpn"] == 0x118 and o["bth"]["becn"] == 1 and o["bth"]["fecn"] == 0
        assert o["ip"]["dscp"] == 48 and o["ip"]["ecn"] == 2, "DSCP CS6 + ECT(0)"
        assert o["udp"]["sport"] == 0
        assert o["icrc"]["wire"] == 0x2A00FD82, "ICRC bytes 82 fd 00 2a, read LSB first"
    elif name.startswith("pcapplusplus"):
        o = objs[0]
        assert o["bth"]["name"] == "RC_READ_REQUEST"
        assert o["reth"]["va"] == 0x7FEE260FB000 and o["reth"]["rkey"] == 0x2B8 and o["reth"]["dmalen"] == 0x10000
    elif name.startswith("scapy-uts_rocev1"):
        w, a = objs
        assert all(o["roce_version"] == 1 for o in objs)
        assert w["bth"]["name"] == "RC_WRITE_ONLY" and w["bth"]["pad"] == 3 and w["reth"] is not None
        assert a["bth"]["name"] == "RC_ACK" and a["aeth"] is not None
        assert [o["icrc"]["wire"] for o in objs] == [0xBB56D8E3, 0x38C0F025], "README ICRCs e3d856bb, 25f0c038"
        for o, f in zip(objs, frames):
            assert oc.icrc_v1(_v1_covered(f)) == o["icrc"]["calc"]
    elif name.startswith("synthetic/"):
        v4, v6 = objs
        assert all(o["bth"]["pad"] == 2 for o in objs)
        assert v4["ip"]["version"] == 4 and (v4["ip"]["dscp"], v4["ip"]["ecn"]) == (0, 1), "TOS 0x01"
        assert v6["ip"]["version"] == 6 and (v6["ip"]["dscp"], v6["ip"]["ecn"]) == (226 >> 2, 226 & 3)
        assert v6["ip"]["flow_label"] == 0x1FACE and v6["ip"]["ttl"] == 255
        assert [o["icrc"]["wire"] for o in objs] == [0xF353F378, 0x3B745B3E], "README ICRCs 78f353f3, 3e5b743b"


def _v1_covered(f):
    """RoCEv1: GRH .. end of the last pad byte (ICRC excluded); the GRH PayLen counts BTH..ICRC."""
    grh = f[14:54]
    paylen = int.from_bytes(grh[4:6], "big")
    return f[14:54 + paylen - 4]


@pytest.mark.parametrize("name", _files())
def test_capture(name, roce_pcap):
    if not CAP.is_dir():
        pytest.skip("shared captures folder %s absent (set $ROCE_SHARED)" % CAP)
    path = CAP / name
    exp = EXPECT.get(name)
    objs, rc = oc.tool_read_json(path)
    _, frames = oc.read_pcap(path)
    assert len(objs) == len(frames), "%d JSON objects for %d frames" % (len(objs), len(frames))
    bad = [(o["frame"], o["error"]) for o in objs if o["kind"] == "malformed"]
    assert not bad, "malformed verdicts: %s" % bad[:10]
    assert rc == 0
    pkts = rdpcap(str(path))
    kinds = collections.Counter(o["kind"] for o in objs)
    for i, (o, f, p) in enumerate(zip(objs, frames, pkts)):
        assert o["frame"] == i + 1 and o["len"] == len(f)
        is_v2 = UDP in p and p[UDP].dport == 4791
        is_v1 = int.from_bytes(f[12:14], "big") == 0x8915
        if not (is_v1 or is_v2):
            assert o["kind"] == "other", "frame %d: %s" % (i + 1, o["kind"])
            continue
        assert o["kind"] in ("roce", "cnp"), "frame %d" % (i + 1)
        assert o["icrc"]["ok"] is True and o["icrc"]["wire"] == o["icrc"]["calc"], "frame %d: %r" % (i + 1, o["icrc"])
        if is_v1:
            assert o["roce_version"] == 1
            cov = _v1_covered(f)
            assert o["icrc"]["calc"] == oc.icrc_v1(cov), "frame %d: v1 ICRC" % (i + 1)
            assert o["icrc"]["wire"] == int.from_bytes(f[14 + len(cov):18 + len(cov)], "little")
            continue
        assert o["roce_version"] == 2
        d = oc.decode_frame(f)
        assert o["icrc"]["calc"] == d["icrc_calc"] and o["icrc"]["wire"] == d["icrc_wire"], "frame %d" % (i + 1)
        b = p[BTH]
        got = tuple(o["bth"][k] for k in ("opcode", "se", "mig", "pad", "tver", "pkey", "fecn", "becn", "dqpn",
                                           "ackreq", "psn"))
        want = (b.opcode, b.solicited, b.migreq, b.padcount, b.version, b.pkey, b.fecn, b.becn, b.dqpn, b.ackreq, b.psn)
        assert got == want, "frame %d: bth %s, scapy %s" % (i + 1, got, want)
        assert (o["udp"]["sport"], o["udp"]["dport"], o["udp"]["len"]) == (p[UDP].sport, p[UDP].dport, p[UDP].len)
        assert (o["ip"]["dscp"], o["ip"]["ecn"], o["ip"]["ttl"]) == (d["ip"]["dscp"], d["ip"]["ecn"], d["ip"]["ttl"])
        # scapy also recomputes the IPv4 ICRC
        if d["ip"]["version"] == 4:
            t = f[:d["l3_end"]]
            q = Ether(t)
            q[BTH].icrc = None
            assert raw(q) == t, "frame %d: scapy ICRC differs" % (i + 1)
        if o["kind"] == "roce":
            op = oc.OP_BY_CODE[b.opcode]
            assert o["bth"]["name"] == op
            x = d["ext"]
            for key, fields in (("reth", ("va", "rkey", "dmalen")), ("aeth", ("syndrome", "msn")),
                                ("deth", ("qkey", "srcqp"))):
                if key.upper() in oc.OPS[op][1]:
                    assert [o[key][k] for k in fields] == [x[k] for k in fields], "frame %d %s" % (i + 1, key)
            if "IMMDT" in oc.OPS[op][1]:
                assert o["imm"] == x["imm"]
            assert o["payload_len"] == len(d["payload"]), "frame %d payload_len" % (i + 1)
    if exp is None:
        return  # a capture the README does not describe: generic checks only
    assert len(frames) == exp["frames"]
    assert kinds.get("roce", 0) == exp.get("roce", 0), kinds
    assert kinds.get("cnp", 0) == exp.get("cnp", 0), kinds
    assert kinds.get("other", 0) == exp.get("other", 0), kinds
    ops = collections.Counter(o["bth"]["name"] for o in objs if o["kind"] == "roce")
    assert dict(ops) == exp["ops"], "opcodes %s" % dict(ops)
    if exp.get("version", 2) == 2:
        assert all(o["roce_version"] == 2 for o in objs if o["kind"] in ("roce", "cnp"))
    _specific(name, objs, frames)


def test_all_readme_files_present():
    if not CAP.is_dir():
        pytest.skip("shared captures folder %s absent (set $ROCE_SHARED)" % CAP)
    missing = [n for n in EXPECT if not (CAP / n).exists()]
    assert not missing, missing
