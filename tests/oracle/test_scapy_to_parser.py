"""roce-pcap read --json, fed with frames scapy built (the other direction).

What it proves: frames built by scapy 2.5.0 -- every opcode scapy's BTH layer knows (RC, UC,
RD, UD) plus the RC invalidate opcodes 0x16/0x17, over IPv4 with scapy's own ICRC, untagged and
802.1Q-tagged; IPv6 ones with the ICRC of oracle_common.icrc_v2; CNPs from scapy's cnp() helper;
PFC and PAUSE from scapy.contrib.mac_control -- are decoded by the tool into exactly the field
values scapy put there (extended headers: the values packed here at the IBA offsets), with the
right verdict:
  * good frames: kind roce/cnp/pfc/pause, error "none", icrc.ok true, icrc.calc equal to the
    independent ICRC, exit status 0 for a file of good frames;
  * the same frames with a wrong ICRC: kind "malformed", error "icrc", icrc.ok false, exit 1;
  * RD opcodes (0x40-0x54, not supported by the engine): malformed, "unknown_opcode";
  * IPv4 header checksums scapy computed or was given wrong: the verdict tshark's own check
    (ip.check_checksum) gives every frame, "ip_checksum" for the wrong ones; the same kinds of
    frame over IPv6 (no header checksum) unaffected, IPv4 traffic to other ports "other";
  * hand-made malformed frames, one defect each, with the error name listed in MALFORMED
    below (names from wire/wire.h enum wire_error, lower-cased without the WIRE_ERR_ prefix);
  * non-RoCE traffic (ARP, TCP, UDP to another port): kind "other", error "none".
"""
import random
import shutil
import struct
import subprocess

import pytest
from scapy.all import Ether, IP, IPv6, UDP, TCP, ARP, Dot1Q, Raw, raw, wrpcap, conf
from scapy.contrib.roce import BTH, AETH, cnp, _bth_opcodes
try:
    from scapy.contrib import mac_control as mc
except ImportError:  # pragma: no cover - present in Debian's scapy 2.5.0
    mc = None

import oracle_common as oc

conf.verb = 0

SCAPY_OPCODES = sorted(c for c in _bth_opcodes if c != 0x81)
# opcodes scapy does not name but the engine supports
EXTRA_OPCODES = [0x16, 0x17]
ALL_SCAPY_OPS = SCAPY_OPCODES + EXTRA_OPCODES


def _opname(code):
    return oc.OP_BY_CODE.get(code) or _bth_opcodes.get(code) or "0x%02x" % code


def _ext_values(rng, op):
    vals = {}
    for e in oc.OPS[op][1]:
        for k in oc.EXT_KEYS[e]:
            vals[k] = rng.getrandbits(oc.EXT_BITS[k])
    return vals


def _pack_ext(op, v, skip_aeth=False):
    b = b""
    for e in oc.OPS[op][1]:
        if e == "RETH":
            b += struct.pack("!QII", v["va"], v["rkey"], v["dmalen"])
        elif e == "AETH":
            if not skip_aeth:
                b += struct.pack("!I", v["syndrome"] << 24 | v["msn"])
        elif e == "DETH":
            b += struct.pack("!II", v["qkey"], v["srcqp"])
        elif e == "IMMDT":
            b += struct.pack("!I", v["imm"])
        elif e == "IETH":
            b += struct.pack("!I", v["ieth"])
        elif e == "ATOMICETH":
            b += struct.pack("!QIQQ", v["va"], v["rkey"], v["swap"], v["cmp"])
        elif e == "ATOMICACKETH":
            b += struct.pack("!Q", v["orig"])
    return b


def _l2l3(rng, vlan, v6=False):
    e = Ether(src="02:%02x:00:00:00:01" % rng.getrandbits(8), dst="02:00:%02x:00:00:02" % rng.getrandbits(8))
    if vlan:
        e = e / Dot1Q(prio=rng.randint(0, 7), id=rng.randint(0, 1), vlan=rng.randint(1, 4094))
    if v6:
        ip = IPv6(src="fd00::%x" % rng.getrandbits(16), dst="fd00::1:%x" % rng.getrandbits(16),
                  tc=rng.getrandbits(8), fl=rng.getrandbits(20), hlim=rng.randint(1, 255))
    else:
        ip = IP(src="10.0.%d.%d" % (rng.getrandbits(8), rng.getrandbits(8)),
                dst="10.1.%d.%d" % (rng.getrandbits(8), rng.getrandbits(8)),
                tos=rng.getrandbits(8), ttl=rng.randint(1, 255), id=rng.getrandbits(16),
                flags="DF" if rng.random() < 0.7 else 0)
    return e / ip / UDP(sport=rng.randint(0xC000, 0xFFFF), dport=4791, chksum=0)


def _bth(rng, code, pad=0, **kw):
    f = dict(opcode=code, solicited=rng.randint(0, 1), migreq=rng.randint(0, 1), padcount=pad,
             pkey=rng.getrandbits(16), fecn=rng.randint(0, 1), becn=rng.randint(0, 1),
             dqpn=rng.getrandbits(24), ackreq=rng.randint(0, 1), psn=rng.getrandbits(24))
    f.update(kw)
    return BTH(**f)


def _seal_v6(frame_bytes):
    """Fill the ICRC of an IPv6 RoCE frame with the independent ICRC (scapy 2.5.0 cannot)."""
    d = oc.decode_frame(frame_bytes)
    return frame_bytes[:d["l3_end"] - 4] + struct.pack("<I", d["icrc_calc"]) + frame_bytes[d["l3_end"]:]


def _roce_frame(rng, code, vlan, v6=False):
    """(frame bytes, extended-header values, payload length) for a supported or RD opcode."""
    op = oc.OP_BY_CODE.get(code)
    if op is None:  # RD or unnamed: some bytes after the BTH
        body = bytes(rng.getrandbits(8) for _ in range(16))
        pkt = _l2l3(rng, vlan, v6) / _bth(rng, code) / Raw(body)
        return raw(pkt) if not v6 else _seal_v6(raw(pkt)), {}, None
    has_payload = oc.OPS[op][2]
    n = 0
    if has_payload:
        n = rng.randint(0, 80)
        if op.endswith("_FIRST") or op.endswith("_MIDDLE"):
            n &= ~3  # IBA: only the last/only packet of a message may be padded
    pad = (-n) % 4
    vals = _ext_values(rng, op)
    payload = bytes(rng.getrandbits(8) for _ in range(n)) + b"\0" * pad
    if "AETH" in oc.OPS[op][1]:
        # use scapy's AETH layer (it is bound to the ACK opcode only; stacked explicitly here)
        l4 = _bth(rng, code, pad) / AETH(syndrome=vals["syndrome"], msn=vals["msn"]) / \
            Raw(_pack_ext(op, vals, skip_aeth=True) + payload)
    else:
        l4 = _bth(rng, code, pad) / Raw(_pack_ext(op, vals) + payload)
    pkt = _l2l3(rng, vlan, v6) / l4
    b = raw(pkt)
    return (_seal_v6(b) if v6 else b), vals, n


class Built:
    def __init__(self):
        self.good = []   # (label, code, frame, ext values, payload len)
        self.bad = []    # (label, code, frame) with a wrong ICRC


@pytest.fixture(scope="module")
def built(roce_pcap, tmp_path_factory):
    rng = random.Random(oc.seed() + 5)
    b = Built()
    for code in ALL_SCAPY_OPS:
        for vlan, v6 in ((False, False), (True, False), (False, False), (True, False), (False, True), (True, True)):
            f, vals, n = _roce_frame(rng, code, vlan, v6)
            b.good.append(("%s v%d vlan=%d" % (_opname(code), 6 if v6 else 4, vlan), code, f, vals, n))
        f, vals, n = _roce_frame(rng, code, rng.random() < 0.5)
        d = oc.decode_frame(f)
        k = d["l3_end"] - 1
        bad = f[:k] + bytes([f[k] ^ (1 << rng.randint(0, 7))]) + f[k + 1:]
        b.bad.append(("%s bad icrc" % _opname(code), code, bad))
    for vlan in (False, True, False, True):
        q = rng.getrandbits(24)
        pkt = _l2l3(rng, vlan) / cnp(q)
        b.good.append(("CNP vlan=%d" % vlan, 0x81, raw(pkt), {"dqpn": q}, 0))
    pkt = _l2l3(rng, False) / cnp(0x1234)
    f = raw(pkt)
    b.bad.append(("CNP bad icrc", 0x81, f[:-1] + bytes([f[-1] ^ 0x80])))
    for _ in range(6 if mc else 0):
        en = rng.getrandbits(8)
        qs = [rng.getrandbits(16) for _ in range(8)]
        kw = {"c%d_enabled" % n: (en >> n) & 1 for n in range(8)}
        kw.update({"c%d_pause_time" % n: qs[n] for n in range(8)})
        pkt = Ether(src="02:00:00:00:00:%02x" % rng.getrandbits(8), dst="01:80:c2:00:00:01") / \
            mc.MACControlClassBasedFlowControl(**kw)
        b.good.append(("PFC", "pfc", raw(pkt), {"enable": en, "quanta": qs}, None))
    for _ in range(4 if mc else 0):
        qt = rng.getrandbits(16)
        pkt = Ether(src="02:00:00:00:00:%02x" % rng.getrandbits(8), dst="01:80:c2:00:00:01") / \
            mc.MACControlPause(pause_time=qt)
        b.good.append(("PAUSE", "pause", raw(pkt), {"quanta": qt}, None))
    dgood = tmp_path_factory.mktemp("scapy")
    wrpcap(str(dgood / "good.pcap"), [Ether(x[2]) for x in b.good])
    wrpcap(str(dgood / "bad.pcap"), [Ether(x[2]) for x in b.bad])
    b.good_json, b.good_rc = oc.tool_read_json(dgood / "good.pcap")
    b.bad_json, b.bad_rc = oc.tool_read_json(dgood / "bad.pcap")
    assert len(b.good_json) == len(b.good) and len(b.bad_json) == len(b.bad)
    return b


def _check_good(label, code, frame, vals, n, o):
    tag = "%s [%s]" % (label, frame.hex())
    p = Ether(frame)
    assert o["len"] == len(frame), tag
    assert o["eth"]["src"] == p[Ether].src and o["eth"]["dst"] == p[Ether].dst, tag
    if code == "pfc":
        assert (o["kind"], o["error"]) == ("pfc", "none"), tag
        assert o["pfc"]["enable"] == vals["enable"] and o["pfc"]["quanta"] == vals["quanta"], "%s: %r" % (tag, o["pfc"])
        return
    if code == "pause":
        assert (o["kind"], o["error"]) == ("pause", "none"), tag
        assert o["pause"]["quanta"] == vals["quanta"], "%s: %r" % (tag, o["pause"])
        return
    if code not in oc.OP_BY_CODE and code != 0x81:
        # RD opcodes (0x40-0x5f) and anything else outside the engine's table
        assert (o["kind"], o["error"]) == ("malformed", "unknown_opcode"), "%s: %s/%s" % (tag, o["kind"], o["error"])
        return
    want = "cnp" if code == 0x81 else "roce"
    assert (o["kind"], o["error"]) == (want, "none"), "%s: %s/%s" % (tag, o["kind"], o["error"])
    assert o["roce_version"] == 2, tag
    if Dot1Q in p:
        q = p[Dot1Q]
        assert o["vlan"] == {"pcp": q.prio, "dei": q.id, "vid": q.vlan}, tag
    else:
        assert o["vlan"] is None, tag
    ip = o["ip"]
    if IPv6 in p:
        x = p[IPv6]
        got = (ip["version"], ip["src"], ip["dst"], ip["dscp"], ip["ecn"], ip["ttl"], ip["flow_label"])
        want_ = (6, x.src, x.dst, x.tc >> 2, x.tc & 3, x.hlim, x.fl)
    else:
        x = p[IP]
        got = (ip["version"], ip["src"], ip["dst"], ip["dscp"], ip["ecn"], ip["ttl"], ip["id"], ip["df"])
        want_ = (4, x.src, x.dst, x.tos >> 2, x.tos & 3, x.ttl, x.id, 1 if "DF" in x.flags else 0)
    assert got == want_, "%s: ip %s vs scapy %s" % (tag, got, want_)
    u = p[UDP]
    assert (o["udp"]["sport"], o["udp"]["dport"], o["udp"]["len"]) == (u.sport, u.dport, u.len), tag
    b = p[BTH]
    bj = o["bth"]
    got = tuple(bj[k] for k in ("opcode", "se", "mig", "pad", "tver", "pkey", "fecn", "becn", "dqpn", "ackreq", "psn"))
    want_ = (b.opcode, b.solicited, b.migreq, b.padcount, b.version, b.pkey, b.fecn, b.becn, b.dqpn, b.ackreq, b.psn)
    assert got == want_, "%s: bth\n got %s\nscapy %s" % (tag, got, want_)
    d = oc.decode_frame(frame)
    assert o["icrc"]["ok"] is True, tag
    assert o["icrc"]["wire"] == d["icrc_wire"] and o["icrc"]["calc"] == d["icrc_calc"], (
        "%s: icrc %r; wire (LE) 0x%08x, independent 0x%08x" % (tag, o["icrc"], d["icrc_wire"], d["icrc_calc"]))
    if code == 0x81:
        assert bj["dqpn"] == vals["dqpn"] and bj["becn"] == 1, tag
        return
    op = oc.OP_BY_CODE[code]
    assert bj["name"] == op, tag
    exts = oc.OPS[op][1]
    if "RETH" in exts:
        assert [o["reth"][k] for k in ("va", "rkey", "dmalen")] == [vals[k] for k in ("va", "rkey", "dmalen")], tag
    if "AETH" in exts:
        a = p[AETH] if AETH in p else AETH(raw(p[BTH].payload)[:4])  # AETH is first after the BTH
        assert (o["aeth"]["syndrome"], o["aeth"]["msn"]) == (a.syndrome, a.msn) == (vals["syndrome"], vals["msn"]), tag
    if "DETH" in exts:
        assert (o["deth"]["qkey"], o["deth"]["srcqp"]) == (vals["qkey"], vals["srcqp"]), tag
    if "IMMDT" in exts:
        assert o["imm"] == vals["imm"], tag
    if "IETH" in exts:
        assert o["ieth"] == vals["ieth"], tag
    if "ATOMICETH" in exts:
        assert [o["atomic"][k] for k in ("va", "rkey", "swap", "cmp")] == [vals[k] for k in ("va", "rkey", "swap", "cmp")], tag
    if "ATOMICACKETH" in exts:
        assert o["atomic_ack"]["orig"] == vals["orig"], tag
    for key, e in (("reth", "RETH"), ("aeth", "AETH"), ("deth", "DETH"), ("imm", "IMMDT"), ("ieth", "IETH"),
                   ("atomic", "ATOMICETH"), ("atomic_ack", "ATOMICACKETH")):
        if e not in exts:
            assert o.get(key) is None, "%s: unexpected %s" % (tag, key)
    assert o["payload_len"] == n, tag


def test_good_file_exit_status(built):
    """Exactly the RD-opcode frames are malformed in the file of otherwise good frames, so exit 1."""
    rd = [i + 1 for i, x in enumerate(built.good) if x[1] not in oc.OP_BY_CODE and x[1] not in (0x81, "pfc", "pause")]
    malformed = [o["frame"] for o in built.good_json if o["kind"] == "malformed"]
    assert malformed == rd
    assert built.good_rc == (1 if rd else 0)


@pytest.mark.parametrize("code", ALL_SCAPY_OPS, ids=[_opname(c) for c in ALL_SCAPY_OPS])
def test_scapy_opcode(code, built):
    rows = [(x, o) for x, o in zip(built.good, built.good_json) if x[1] == code]
    assert len(rows) == 6
    for (label, c, frame, vals, n), o in rows:
        _check_good(label, c, frame, vals, n, o)


@pytest.mark.parametrize("kind", ["cnp", "pfc", "pause"])
def test_scapy_cnp_pfc_pause(kind, built):
    if kind != "cnp" and mc is None:
        pytest.skip("scapy.contrib.mac_control absent")
    code = {"cnp": 0x81}.get(kind, kind)
    rows = [(x, o) for x, o in zip(built.good, built.good_json) if x[1] == code]
    assert rows
    for (label, c, frame, vals, n), o in rows:
        _check_good(label, c, frame, vals, n, o)


def test_wrong_icrc_verdicts(built):
    assert built.bad_rc == 1
    for (label, code, frame), o in zip(built.bad, built.bad_json):
        if code not in oc.OP_BY_CODE and code != 0x81:
            assert (o["kind"], o["error"]) == ("malformed", "unknown_opcode"), label
            continue
        assert (o["kind"], o["error"]) == ("malformed", "icrc"), "%s: %s/%s" % (label, o["kind"], o["error"])
        d = oc.decode_frame(frame)
        assert o["icrc"]["ok"] is False, label
        assert o["icrc"]["wire"] == d["icrc_wire"] and o["icrc"]["calc"] == d["icrc_calc"], label


# ---------------------------------------------------------------------------------------------
# hand-made malformed frames: (case id, expected "error" name, builder)
# Expected error names (wire/wire.h enum wire_error, lower case):
#   truncated_l2, truncated_l3, bad_ip_version, bad_ip_hlen, ip_options, ip_len, ip_fragment,
#   ip_checksum, udp_len, truncated_bth, bad_bth_version, unknown_opcode, bad_length, bad_pad,
#   bad_cnp, icrc, truncated_mac_ctrl, bad_mac_ctrl
# Each case below names the error it expects in its second member.
# ---------------------------------------------------------------------------------------------
def _eth():
    return Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")


def _good_send(payload=b"\x01\x02\x03\x04", **bth):
    f = dict(opcode=0x04, dqpn=0x12, psn=1)
    f.update(bth)
    return _eth() / IP(src="1.1.1.1", dst="2.2.2.2", flags="DF") / UDP(sport=0xC000, dport=4791, chksum=0) / \
        BTH(**f) / Raw(payload)


def _truncated_bth():
    # IP and UDP lengths consistent, but only 8 bytes of BTH
    return raw(_eth() / IP(src="1.1.1.1", dst="2.2.2.2") / UDP(sport=0xC000, dport=4791, chksum=0) /
               Raw(raw(BTH(opcode=4))[:8]))


def _udp_len_too_big():
    p = _good_send()
    b = bytearray(raw(p))
    ulen = struct.unpack("!H", b[38:40])[0]
    b[38:40] = struct.pack("!H", ulen + 8)       # UDP length 8 bytes beyond the IP payload
    return bytes(b)


def _ip_len_beyond_frame():
    p = _good_send()
    b = bytearray(raw(p))
    tl = struct.unpack("!H", b[16:18])[0] + 40   # IP total length beyond the frame
    b[16:18] = struct.pack("!H", tl)
    b[24:26] = b"\0\0"
    b[24:26] = struct.pack("!H", oc.inet_csum(bytes(b[14:34])))
    return bytes(b)


def _ip_options():
    p = _eth() / IP(src="1.1.1.1", dst="2.2.2.2", options=b"\x01\x01\x01\x00") / \
        UDP(sport=0xC000, dport=4791, chksum=0) / BTH(opcode=4) / Raw(b"\0" * 4)
    return raw(p)


def _ip_fragment():
    return raw(_eth() / IP(src="1.1.1.1", dst="2.2.2.2", flags="MF") / UDP(sport=0xC000, dport=4791, chksum=0) /
               BTH(opcode=4) / Raw(b"\0" * 4))


def _bad_ip_version():
    b = bytearray(raw(_good_send()))
    b[14] = 0x65  # EtherType IPv4, version nibble 6
    return bytes(b)


def _bad_ip_hlen():
    b = bytearray(raw(_good_send()))
    b[14] = 0x44  # IHL 4 (< 5)
    return bytes(b)


def _bad_cnp(n):
    # CNP with n instead of 16 reserved bytes (BTH + n + ICRC)
    return raw(_eth() / IP(src="1.1.1.1", dst="2.2.2.2") / UDP(sport=0xC000, dport=4791, chksum=0) /
               BTH(opcode=0x81, becn=1, dqpn=5) / Raw(b"\0" * n))


def _wrong_ip_checksum():
    p = Ether(raw(_good_send()))  # scapy's checksum and ICRC, then another checksum (outside the ICRC)
    p[IP].chksum ^= 0x0100
    return raw(p)


def _pfc_reserved():
    b = bytearray(bytes.fromhex("0180c20000010200000000018808" "0101" "0008" "00000000000000640000000000000000")
                  + b"\0" * 26)
    b[16] = 0x01  # high byte of the class-enable vector must be zero
    return bytes(b)


MALFORMED = [
    # (id, expected error, builder)
    ("truncated_l2", "truncated_l2", lambda: bytes.fromhex("0200000000020200000000010800")[:10]),
    ("truncated_l3", "truncated_l3", lambda: raw(_good_send())[:14 + 12]),
    ("bad_ip_version", "bad_ip_version", _bad_ip_version),
    ("bad_ip_hlen", "bad_ip_hlen", _bad_ip_hlen),
    ("ip_options", "ip_options", _ip_options),
    ("ip_len_beyond_frame", "ip_len", _ip_len_beyond_frame),
    ("ip_fragment", "ip_fragment", _ip_fragment),
    ("ipv4_wrong_checksum", "ip_checksum", _wrong_ip_checksum),
    ("udp_len_beyond_ip", "udp_len", _udp_len_too_big),
    ("truncated_bth", "truncated_bth", _truncated_bth),
    ("bth_tver_1", "bad_bth_version", lambda: raw(_good_send(version=1))),
    ("reserved_opcode_0x15", "unknown_opcode", lambda: raw(_good_send(opcode=0x15))),
    ("reserved_opcode_0x18", "unknown_opcode", lambda: raw(_good_send(opcode=0x18))),
    ("length_not_multiple_of_4", "bad_length", lambda: raw(_good_send(payload=b"\x01\x02\x03\x04\x05"))),
    ("pad_count_on_ack", "bad_pad", lambda: raw(_good_send(payload=b"\x00\x00\x00\x00", opcode=0x11, padcount=1))),
    ("pad_larger_than_payload", "bad_pad", lambda: raw(_good_send(payload=b"", padcount=2))),
    # a CNP shorter than BTH + 16 + ICRC is both "truncated" and a bad CNP: either name is accepted
    ("cnp_short", ("bad_cnp", "truncated_bth"), lambda: _bad_cnp(8)),
    ("cnp_long", "bad_cnp", lambda: _bad_cnp(24)),
    ("wrong_icrc", "icrc", lambda: (lambda b: b[:-1] + bytes([b[-1] ^ 1]))(raw(_good_send()))),
    ("mac_ctrl_truncated", "truncated_mac_ctrl",
     lambda: bytes.fromhex("0180c20000010200000000018808") + b"\x01\x01\x00"),
    ("pfc_reserved_vector_byte", "bad_mac_ctrl", _pfc_reserved),
]


@pytest.fixture(scope="module")
def malformed_json(roce_pcap, tmp_path_factory):
    d = tmp_path_factory.mktemp("malformed")
    frames = [f() for _, _, f in MALFORMED]
    path = d / "malformed.pcap"
    wrpcap(str(path), [Ether(f) if len(f) >= 14 else Raw(f) for f in frames], linktype=1)
    _, got = oc.read_pcap(path)
    assert got == frames
    objs, rc = oc.tool_read_json(path, expect_rc=1)
    assert len(objs) == len(frames)
    return objs


@pytest.mark.parametrize("idx", range(len(MALFORMED)), ids=[m[0] for m in MALFORMED])
def test_malformed(idx, malformed_json):
    name, err, _ = MALFORMED[idx]
    o = malformed_json[idx]
    errs = err if isinstance(err, tuple) else (err,)
    assert o["kind"] == "malformed" and o["error"] in errs, "%s: got %s/%s, expected malformed/%s" % (
        name, o["kind"], o["error"], "|".join(errs))


def test_other_traffic(roce_pcap, tmp_path):
    frames = [
        Ether(src="02:00:00:00:00:01", dst="ff:ff:ff:ff:ff:ff") / ARP(psrc="1.1.1.1", pdst="1.1.1.2"),
        _eth() / IP(src="1.1.1.1", dst="2.2.2.2") / TCP(sport=1234, dport=80),
        _eth() / IP(src="1.1.1.1", dst="2.2.2.2") / UDP(sport=4791, dport=53) / Raw(b"\0" * 20),
        _eth() / IPv6(src="fd00::1", dst="fd00::2") / UDP(sport=1, dport=123) / Raw(b"\0" * 20),
    ]
    wrpcap(str(tmp_path / "o.pcap"), frames)
    objs, rc = oc.tool_read_json(tmp_path / "o.pcap", expect_rc=0)
    assert [(o["kind"], o["error"]) for o in objs] == [("other", "none")] * 4
    assert all(o["bth"] is None for o in objs)


# ---------------------------------------------------------------------------------------------
# IPv4 header checksums (issue 19): scapy computes a frame's checksum or is given a wrong one, and
# tshark's own check (ip.check_checksum) judges every frame; the parser must agree with it on each.
# The ICRC leaves the checksum out, so it cannot catch these: only the header checksum does.
# ---------------------------------------------------------------------------------------------
TSHARK = shutil.which("tshark") or "/usr/bin/tshark"


def _tshark_ip_checksum_ok(path):
    """Frame number -> True/False (tshark's ip.checksum.status: 1 good, 0 bad) for IPv4 frames."""
    r = subprocess.run([TSHARK, "-r", str(path), "-o", "ip.check_checksum:TRUE", "-T", "fields",
                        "-e", "frame.number", "-e", "ip.checksum.status"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    got = {}
    for line in r.stdout.splitlines():
        num, _, status = line.partition("\t")
        if status:
            got[int(num)] = {"1": True, "0": False}[status]
    return got


def _set_ip_chksum(frame, value):
    p = Ether(frame)
    assert raw(p) == frame
    p[IP].chksum = value
    return raw(p)


def _zero_checksum_pair(rng):
    """A frame whose header words sum to 0xffff without the checksum, so scapy writes 0x0000,
    and its twin holding 0xffff, the other zero of ones' complement (tshark takes both)."""
    src = "10.0.0.%d" % rng.randint(1, 254)

    def frame(ip_id):
        return raw(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") /
                   IP(src=src, dst="10.0.1.1", id=ip_id, ttl=64) /
                   UDP(sport=0xC000, dport=4791, chksum=0) / BTH(opcode=0x04, dqpn=0x12, psn=7) / Raw(b"\0" * 8))
    base = frame(0)
    c = int.from_bytes(base[24:26], "big")
    zero = frame(c)  # ID = the checksum with ID 0: the other words then sum to 0xffff
    assert zero[24:26] == b"\0\0" and oc.inet_csum(zero[14:34]) == 0
    return zero, _set_ip_chksum(zero, 0xFFFF)


def _ip_chksum(frame):
    return Ether(frame)[IP].chksum


def test_ipv4_header_checksum_against_tshark(roce_pcap, tmp_path):
    rng = random.Random(oc.seed() + 19)
    frames, want = [], []  # want: (kind when the checksum is good, IPv4?)
    codes = sorted(oc.OP_BY_CODE)
    for i in range(240):  # every opcode, a quarter over IPv6, half of the IPv4 ones with a wrong checksum
        v6 = i % 4 == 3
        f, _, _ = _roce_frame(rng, codes[i % len(codes)], rng.random() < 0.5, v6)
        if i % 4 == 1:
            good = bad = _ip_chksum(f)
            while bad == good or {bad, good} == {0, 0xFFFF}:  # any other value but the other zero
                bad = rng.getrandbits(16)
            f = _set_ip_chksum(f, bad)
        frames.append(f)
        want.append(("roce", not v6))
    for i in range(8):  # CNPs, half with a wrong checksum
        f = raw(_l2l3(rng, i % 2 == 0) / cnp(rng.getrandbits(24)))
        frames.append(_set_ip_chksum(f, _ip_chksum(f) ^ 0x8000) if i < 4 else f)
        want.append(("cnp", True))
    frames += list(_zero_checksum_pair(rng))
    want += [("roce", True)] * 2
    for ck in (None, 0x1234):  # not RoCEv2: other traffic, whatever its checksum
        frames.append(raw(_eth() / IP(src="1.1.1.1", dst="2.2.2.2", chksum=ck) / UDP(sport=4791, dport=53) /
                          Raw(b"\0" * 20)))
        want.append(("other", True))
    path = tmp_path / "ipcsum.pcap"
    wrpcap(str(path), [Ether(f) for f in frames])
    tshark_ok = _tshark_ip_checksum_ok(path)
    objs, rc = oc.tool_read_json(path, expect_rc=1)
    assert len(objs) == len(frames)
    bad = []
    for i, (o, (kind, v4)) in enumerate(zip(objs, want)):
        tag = "frame %d [%s]" % (i + 1, frames[i].hex())
        if not v4:  # IPv6: no header checksum, nothing for tshark to judge
            assert (i + 1) not in tshark_ok, tag
            assert (o["kind"], o["error"]) == (kind, "none"), tag
        elif tshark_ok[i + 1] or kind == "other":
            assert (o["kind"], o["error"]) == (kind, "none"), "%s: got %s/%s" % (tag, o["kind"], o["error"])
        else:
            bad.append(i)
            assert (o["kind"], o["error"]) == ("malformed", "ip_checksum"), "%s: got %s/%s" % (tag, o["kind"], o["error"])
    assert len(bad) == 60 + 4  # tshark found exactly the checksums made wrong
    n = len(frames)
    assert tshark_ok[n - 3] and tshark_ok[n - 2]  # both zeros are good checksums, the parser took them above
    assert tshark_ok[n - 1] and not tshark_ok[n]  # the other traffic: one good, one wrong, both "other"
