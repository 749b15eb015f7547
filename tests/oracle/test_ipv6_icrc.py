"""ICRC of every frame roce-pcap writes, IPv6 included, against an ICRC written here.

What it proves: oracle_common.icrc_v2 is written straight from the RoCEv2 annex masking rules
(8 bytes of ones for the LRH; IPv4 TOS/TTL/checksum or IPv6 traffic class/flow label/hop limit
set to ones; UDP checksum set to ones; BTH byte 4 set to ones; zlib CRC-32; least-significant
byte first on the wire). It is first validated: it reproduces the three golden vectors of
shared/spec/icrc_ref.py (NVIDIA CNP example, IPv4 and IPv6 SEND_ONLY), agrees with that
reference on random packets, ignores exactly the masked fields and sees every other one.
Then every RoCE/CNP frame of the seeded random set (every opcode, IPv6 and IPv4, tagged or
not, random traffic class / flow label / hop limit / FECN / BECN) must carry that ICRC, stored
little-endian -- the IPv6 case being the one scapy 2.5.0 cannot check.
"""
import importlib.util
import random
import struct

import pytest

import oracle_common as oc


def _icrc_ref(shared):
    p = shared / "spec" / "icrc_ref.py"
    if not p.exists():
        pytest.skip("%s absent" % p)
    spec = importlib.util.spec_from_file_location("icrc_ref", p)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


@pytest.mark.parametrize("idx", [0, 1, 2])
def test_golden_vector(shared, idx):
    ref = _icrc_ref(shared)
    pkt = bytes.fromhex(ref.VECTORS[idx])
    mine = oc.icrc_v2(pkt[:-4])
    assert struct.pack("<I", mine) == pkt[-4:], "vector %d: 0x%08x vs wire %s" % (idx, mine, pkt[-4:].hex())


def _random_l3(rng, v6):
    payload = bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 40) * 4))
    bth = bytes([rng.getrandbits(8) for _ in range(12)])
    udp_len = 8 + len(bth) + len(payload) + 4
    udp = struct.pack("!HHHH", rng.getrandbits(16), 4791, udp_len, rng.getrandbits(16))
    if v6:
        w = 6 << 28 | rng.getrandbits(28)
        ip = struct.pack("!IHBB", w, udp_len, 17, rng.getrandbits(8)) + bytes(rng.getrandbits(8) for _ in range(32))
    else:
        ip = struct.pack("!BBHHHBBH", 0x45, rng.getrandbits(8), 20 + udp_len, rng.getrandbits(16), 0x4000,
                         rng.getrandbits(8), 17, rng.getrandbits(16)) + bytes(rng.getrandbits(8) for _ in range(8))
    return ip + udp + bth + payload


@pytest.mark.parametrize("v6", [False, True], ids=["ipv4", "ipv6"])
def test_agrees_with_reference_on_random_packets(shared, v6):
    ref = _icrc_ref(shared)
    rng = random.Random(oc.seed())
    for _ in range(200):
        l3 = _random_l3(rng, v6)
        assert ref.roce_icrc(l3 + b"\0\0\0\0") == struct.pack("<I", oc.icrc_v2(l3))


# (offset, mask of the bits that are masked) per IP version, relative to the start of the IP header
_MASKED = {
    False: [(1, 0xFF), (8, 0xFF), (10, 0xFF), (11, 0xFF), (26, 0xFF), (27, 0xFF), (32, 0xFF)],
    True: [(0, 0x0F), (1, 0xFF), (2, 0xFF), (3, 0xFF), (7, 0xFF), (46, 0xFF), (47, 0xFF), (52, 0xFF)],
}


@pytest.mark.parametrize("v6", [False, True], ids=["ipv4", "ipv6"])
def test_masking_sanity(v6):
    """Flipping a masked bit leaves the ICRC alone; flipping any other covered bit changes it."""
    rng = random.Random(oc.seed() + 7)
    l3 = bytearray(_random_l3(rng, v6))
    base = oc.icrc_v2(bytes(l3))
    masked = dict(_MASKED[v6])
    for off in range(len(l3)):
        for bit in range(8):
            m = bytearray(l3)
            m[off] ^= 1 << bit
            if off == 0 and (bit >= 4 or not v6):
                continue  # version nibble / IPv4 header length: structural, not a covered value
            same = oc.icrc_v2(bytes(m)) == base
            assert same == bool(masked.get(off, 0) & (1 << bit)), "offset %d bit %d" % (off, bit)


def _check_frames(rows, ipver):
    n = 0
    for _, desc, frame in rows:
        if desc.exp["ipver"] != ipver:
            continue
        d = oc.decode_frame(frame)
        assert d["ip"]["version"] == ipver
        assert frame[d["l3_end"] - 4:d["l3_end"]] == struct.pack("<I", d["icrc_calc"]), (
            "%s: wire ICRC %s, annex ICRC %s" % (desc.arg(), frame[d["l3_end"] - 4:d["l3_end"]].hex(),
                                                 struct.pack("<I", d["icrc_calc"]).hex()))
        n += 1
    assert n > 0


@pytest.mark.parametrize("kind", oc.ALL_OP_KINDS + ["cnp"])
def test_ipv6_frames_icrc(kind, tool_set):
    _check_frames(tool_set.of_kind(kind), 6)


@pytest.mark.parametrize("kind", oc.ALL_OP_KINDS + ["cnp"])
def test_ipv4_frames_icrc(kind, tool_set):
    _check_frames(tool_set.of_kind(kind), 4)


def test_icrc_independent_of_masked_fields(roce_pcap, tmp_path):
    """Two IPv6 (and IPv4) frames differing only in masked fields (TC, flow label, hop limit / TOS, TTL;
    FECN, BECN) carry the same ICRC; changing the PSN changes it."""
    for ip in ("6", "4"):
        base = "rc_send_only:ip=%s,payload=13,psn=5,dqpn=0x77" % ip
        a = base + ",dscp=0,ecn=0,ttl=1,fecn=0,becn=0" + (",flowlabel=0" if ip == "6" else "")
        b = base + ",dscp=63,ecn=3,ttl=255,fecn=1,becn=1" + (",flowlabel=0xfffff" if ip == "6" else "")
        c = base.replace("psn=5", "psn=6")
        fa, fb, fc = oc.tool_write(tmp_path / ("m%s.pcap" % ip), [a, b, c])
        ia, ib, ic = (oc.decode_frame(f)["icrc_wire"] for f in (fa, fb, fc))
        assert ia == ib, "IPv%s: ICRC depends on a masked field" % ip
        assert ia != ic, "IPv%s: ICRC does not depend on the PSN" % ip
