"""roce-pcap read --json on frames a capture cut short (a snap length: the record's captured
length below the frame's length), fed with frames scapy built.

What it proves, for every frame of test_scapy_to_parser's kinds (every opcode scapy knows, over
IPv4 and IPv6, untagged and tagged; CNP, PFC, PAUSE; ARP, TCP, UDP to another port) cut at every
length from 0 to its own, and for every hand-made malformed frame cut the same way:
  * a well-formed frame cut anywhere is not malformed, and the file reads with exit status 0;
  * the tool gives the frame's length and its captured length, and says where the cut is
    ("l2", "l3", "udp", "bth", "ext", "payload" or "after"), at the header boundaries computed
    here from the IBA / IEEE layouts (oracle_common.decode_frame);
  * every header captured whole decodes to scapy's values, and none that was cut is reported
    (kind "roce" from the UDP port alone when the BTH was cut; "other" when even that was);
  * the ICRC is never reported for a cut frame, except one cut after the IP datagram (then it
    is checked);
  * a malformed frame stays malformed, with its error, once the header holding its defect was
    captured whole; cut before it, it is not malformed.
"""
import struct

import pytest
from scapy.all import Ether, IP, IPv6, UDP, TCP, ARP, Dot1Q, Raw, raw, conf
from scapy.contrib.roce import BTH, cnp
try:
    from scapy.contrib import mac_control as mc
except ImportError:  # pragma: no cover - present in Debian's scapy 2.5.0
    mc = None

import oracle_common as oc
import test_scapy_to_parser as sp

conf.verb = 0


def write_cut_pcap(path, records):
    """A pcap of (frame bytes, captured length) records: the header says each frame's length, the
    record holds its first `caplen` bytes."""
    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)]
    for i, (frame, caplen) in enumerate(records):
        out.append(struct.pack("<IIII", 1, i % 1000000, caplen, len(frame)) + frame[:caplen])
    path.write_bytes(b"".join(out))


def boundaries(frame):
    """Header ends of a frame, from the independent decoder: (name, end) in wire order, the
    UDP header as the 6 bytes the parser reads of it (ports, length; not the checksum)."""
    d = oc.decode_frame(frame)
    b = [("l2", d["l3_off"])]
    if d["ethertype"] == 0x8808:
        return d, b + [("l3", d["l3_off"] + (20 if d["mac_ctrl_opcode"] == 0x0101 else 4))]
    if "ip" not in d:
        return d, b
    b.append(("l3", d["l3_off"] + (20 if d["ethertype"] == 0x0800 else 40)))
    if d["ip"].get("proto", d["ip"].get("nh")) != 17:
        return d, b
    b.append(("udp", d["l4_off"] + 8))
    if d["udp"]["dport"] != 4791:
        return d, b
    b.append(("bth", d["bth_off"] + 12))
    op = oc.OP_BY_CODE.get(d["bth"]["opcode"])
    if op:
        b.append(("ext", d["bth_off"] + 12 + oc.ext_len(op)))
    b.append(("payload", d["l3_end"]))
    return d, b


def where(bounds, n):
    for name, end in bounds:
        if n < end:
            return name
    return "after"


def good_frames():
    """(label, frame) of well-formed frames: scapy's, built as test_scapy_to_parser builds them."""
    rng = sp.random.Random(oc.seed() + 11)
    out = []
    for code in sp.ALL_SCAPY_OPS:
        if code not in oc.OP_BY_CODE:
            continue  # RD opcodes: malformed whole
        for vlan, v6 in ((False, False), (True, True)):
            f, _, _ = sp._roce_frame(rng, code, vlan, v6)
            out.append(("%s v%d vlan=%d" % (sp._opname(code), 6 if v6 else 4, vlan), f))
    for vlan in (False, True):
        out.append(("CNP vlan=%d" % vlan, raw(sp._l2l3(rng, vlan) / cnp(rng.getrandbits(24)))))
    if mc:
        out.append(("PFC", raw(Ether(src="02:00:00:00:00:01", dst="01:80:c2:00:00:01") /
                               mc.MACControlClassBasedFlowControl(c3_enabled=1, c3_pause_time=0xffff))))
        out.append(("PAUSE", raw(Ether(src="02:00:00:00:00:01", dst="01:80:c2:00:00:01") /
                                 mc.MACControlPause(pause_time=100))))
    out.append(("ARP", raw(Ether(src="02:00:00:00:00:01", dst="ff:ff:ff:ff:ff:ff") / ARP(psrc="1.1.1.1"))))
    out.append(("TCP", raw(sp._eth() / IP(src="1.1.1.1", dst="2.2.2.2") / TCP(sport=1234, dport=80))))
    out.append(("UDP 53", raw(sp._eth() / IPv6(src="fd00::1", dst="fd00::2") / UDP(sport=1, dport=53) /
                              Raw(b"\0" * 20))))
    return out


@pytest.fixture(scope="module")
def cut_good(roce_pcap, tmp_path_factory):
    records, labels = [], []
    for label, f in good_frames():
        for n in range(len(f) + 1):
            records.append((f, n))
            labels.append(label)
    path = tmp_path_factory.mktemp("cut") / "good.pcap"
    write_cut_pcap(path, records)
    objs, rc = oc.tool_read_json(path)
    assert len(objs) == len(records)
    return records, labels, objs, rc


def test_good_frames_cut_anywhere_are_not_malformed(cut_good):
    records, labels, objs, rc = cut_good
    bad = ["%s cut at %d: %s/%s" % (l, n, o["kind"], o["error"])
           for (f, n), l, o in zip(records, labels, objs) if o["kind"] == "malformed"]
    assert not bad, bad[:20]
    assert rc == 0


def test_lengths_and_place_of_the_cut(cut_good):
    records, labels, objs, _ = cut_good
    for (f, n), label, o in zip(records, labels, objs):
        tag = "%s cut at %d of %d" % (label, n, len(f))
        assert (o["len"], o["caplen"]) == (len(f), n), tag
        if n == len(f):
            assert o["cut"] is None, tag
            continue
        _, b = boundaries(f)
        assert o["cut"] is not None and o["cut"]["in"] == where(b, n), "%s: %r, headers end at %s" % (tag, o["cut"], b)


def _check_captured_headers(f, n, o, tag):
    d, b = boundaries(f)
    ends = dict(b)
    p = Ether(f)
    if n >= ends["l2"]:
        assert o["vlan"] == ({"pcp": p[Dot1Q].prio, "dei": p[Dot1Q].id, "vid": p[Dot1Q].vlan}
                             if Dot1Q in p else None), tag
    if n >= 12:
        assert (o["eth"]["dst"], o["eth"]["src"]) == (p[Ether].dst, p[Ether].src), tag
    if "l3" in ends and (IP in p or IPv6 in p):
        if n >= ends["l3"]:
            assert o["ip"] is not None and o["ip"]["src"] == (p[IP].src if IP in p else p[IPv6].src), tag
        else:
            assert o["ip"] is None, tag
    if "udp" in ends:
        seen = n >= ends["udp"] - 2  # the checksum is not read
        assert (o["udp"] is not None) == seen, tag
        if seen:
            assert (o["udp"]["sport"], o["udp"]["dport"], o["udp"]["len"]) == (p[UDP].sport, p[UDP].dport, p[UDP].len), tag
    if "bth" not in ends:
        return
    if n < ends["bth"]:
        assert o["bth"] is None, tag
        assert o["kind"] == ("roce" if n >= ends["udp"] - 2 else "other"), tag
        return
    x = p[BTH] if BTH in p else BTH(f[d["bth_off"]:])
    got = tuple(o["bth"][k] for k in ("opcode", "pad", "pkey", "dqpn", "psn"))
    assert got == (x.opcode, x.padcount, x.pkey, x.dqpn, x.psn), tag
    assert o["kind"] == ("cnp" if x.opcode == 0x81 else "roce"), tag
    op = oc.OP_BY_CODE.get(x.opcode)
    exts = oc.OPS[op][1] if op else ()
    keys = {"RETH": "reth", "AETH": "aeth", "DETH": "deth", "IMMDT": "imm", "IETH": "ieth", "ATOMICETH": "atomic",
            "ATOMICACKETH": "atomic_ack"}
    for e in exts:
        assert (keys[e] in o) == (n >= ends["ext"]), "%s: %s" % (tag, keys[e])
    if exts and n >= ends["ext"]:
        want = d["ext"]
        if "RETH" in exts:
            assert [o["reth"][k] for k in ("va", "rkey", "dmalen")] == [want[k] for k in ("va", "rkey", "dmalen")], tag
        if "AETH" in exts:
            assert (o["aeth"]["syndrome"], o["aeth"]["msn"]) == (want["syndrome"], want["msn"]), tag
    if n < len(f):
        assert o["icrc"] == {"wire": None, "calc": None, "ok": None}, tag
    else:
        assert o["icrc"]["ok"] is True and o["icrc"]["calc"] == d["icrc_calc"], tag


def test_captured_headers_decode_as_scapy_built_them(cut_good):
    records, labels, objs, _ = cut_good
    for (f, n), label, o in zip(records, labels, objs):
        _check_captured_headers(f, n, o, "%s cut at %d of %d" % (label, n, len(f)))


def test_cut_after_the_datagram_checks_the_icrc(roce_pcap, tmp_path):
    """A 58-byte RoCE frame padded to 60 and cut at 58: only padding is missing, all is checked."""
    f = raw(sp._eth() / IP(src="1.1.1.1", dst="2.2.2.2") / UDP(sport=0xC000, dport=4791, chksum=0) /
            BTH(opcode=0x11, dqpn=5) / Raw(b"\0\0\0\x1f"))  # RC ACK: 14 + 20 + 8 + 12 + 4 + ICRC 4 = 62
    g = f[:-4] + struct.pack("<I", oc.icrc_v2(f[14:-4]))
    d = oc.decode_frame(g)
    assert d["icrc_calc"] == d["icrc_wire"]
    padded = g + b"\0" * 10
    bad = g[:-1] + bytes([g[-1] ^ 1]) + b"\0" * 10
    write_cut_pcap(tmp_path / "p.pcap", [(padded, len(g)), (bad, len(g))])
    objs, rc = oc.tool_read_json(tmp_path / "p.pcap", expect_rc=1)
    assert objs[0]["cut"]["in"] == "after" and objs[0]["icrc"]["ok"] is True and objs[0]["kind"] == "roce"
    assert (objs[1]["kind"], objs[1]["error"]) == ("malformed", "icrc") and objs[1]["icrc"]["ok"] is False


# The end of the header holding each hand-made defect (test_scapy_to_parser.MALFORMED), from the
# layouts: Ethernet 14, IPv4 14..34 (with options 14..38), UDP 34..42 of which the parser reads
# the ports and the length (34..40), BTH 42..54; a MAC control frame's opcode 14..16 and its
# first fields 16..18. None: decided by the lengths alone (malformed however short the capture).
# "icrc": never decided on a cut frame.
DEFECT_END = {
    "truncated_l2": None,
    "truncated_l3": 14,             # the EtherType says IPv4; the frame's length says too short
    "bad_ip_version": 34,
    "bad_ip_hlen": 34,
    "ip_options": 38 + 4,           # the header with options, then the UDP port that makes it RoCE
    "ip_len_beyond_frame": 34,
    "ip_fragment": 34 + 4,
    "udp_len_beyond_ip": 40,
    "truncated_bth": 42,            # shorter than a BTH and ICRC by its lengths
    "bth_tver_1": 54,
    "reserved_opcode_0x15": 54,
    "reserved_opcode_0x18": 54,
    "length_not_multiple_of_4": 54,
    "pad_count_on_ack": 54,
    "pad_larger_than_payload": 54,
    "cnp_short": 54,
    "cnp_long": 54,
    "wrong_icrc": "icrc",
    "mac_ctrl_truncated": 16,
    "pfc_reserved_vector_byte": 18,
}


def test_malformed_frames_stay_malformed_once_their_defect_is_captured(roce_pcap, tmp_path):
    assert set(DEFECT_END) == {m[0] for m in sp.MALFORMED}
    records, cases = [], []
    for name, err, build in sp.MALFORMED:
        f = build()
        for n in range(len(f) + 1):
            records.append((f, n))
            cases.append((name, err, n, len(f)))
    write_cut_pcap(tmp_path / "m.pcap", records)
    objs, rc = oc.tool_read_json(tmp_path / "m.pcap", expect_rc=1)
    assert len(objs) == len(records)
    wrong = []
    for (name, err, n, size), o in zip(cases, objs):
        errs = err if isinstance(err, tuple) else (err,)
        end = DEFECT_END[name]
        if end == "icrc":
            want = n == size
        else:
            want = end is None or n >= end or n == size
        got = o["kind"] == "malformed"
        if got != want or (got and o["error"] not in errs):
            wrong.append("%s cut at %d of %d: %s/%s, expected %s" % (name, n, size, o["kind"], o["error"],
                                                                   "malformed/" + "|".join(errs) if want else "not malformed"))
    assert not wrong, wrong[:30]


def test_summary_counts_the_cut_frames(roce_pcap, tmp_path):
    f = raw(sp._good_send(payload=b"\x01" * 200))
    write_cut_pcap(tmp_path / "s.pcap", [(f, 128), (f, len(f)), (f, 50)])
    r = oc.run_tool("read", tmp_path / "s.pcap", check=0)
    lines = r.stdout.splitlines()
    assert lines[0].endswith("| cut at 128 of %d bytes, in the payload or ICRC: the ICRC and the payload not checked"
                             % len(f)), lines[0]
    assert "icrc ok" in lines[1] and "cut" not in lines[1]
    assert lines[2].endswith("| cut at 50 of %d bytes, in the BTH: the transport headers, the ICRC and the payload "
                             "not checked" % len(f)), lines[2]
    assert lines[-1] == ("3 frames: roce 3, cnp 0, pfc 0, pause 0, other 0, malformed 0; 2 cut short by the capture, "
                         "checked as far as captured")
