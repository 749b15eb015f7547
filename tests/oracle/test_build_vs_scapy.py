"""roce-pcap write, checked by scapy (scapy.contrib.roce / scapy.contrib.mac_control 2.5.0).

What it proves: for a seeded random set of frame descriptions covering every RoCE opcode of
wire/wire.h over IPv4 and IPv6, with and without an 802.1Q tag, random field values over
their whole range and payloads of 0..299 bytes (every pad count 0..3), plus CNP, PFC and PAUSE:

* scapy dissects each frame as the intended protocol and decodes exactly the values the
  description asked for (or the documented defaults): Ethernet, VLAN PCP/DEI/VID, IPv4
  DSCP/ECN/TTL/ID/DF/checksum, IPv6 TC/flow label/hop limit, UDP ports and length, every BTH
  field (opcode, SE, M, PadCnt, TVer, P_Key, FECN, BECN, DestQP, AckReq, PSN, reserved = 0),
  AETH through scapy's own layer;
* the extended headers scapy has no layer for (RETH, DETH, ImmDt, IETH, AtomicETH,
  AtomicAckETH) hold the asked values at the IBA offsets (decoded here from raw bytes);
* the payload is bytes i & 0xff, pad bytes are zero, the frame is zero-padded to 60 bytes;
* for every IPv4 RoCE/CNP frame scapy recomputes the very same ICRC (the packet is copied,
  BTH.icrc deleted, rebuilt, and must equal the wire bytes). scapy 2.5.0 cannot compute the
  IPv6 ICRC: test_ipv6_icrc.py covers those;
* badicrc=1 writes exactly the correct ICRC XOR 0xFFFFFFFF;
* `write --all` covers every opcode x IPv4/IPv6 x untagged/VLAN plus CNP, PFC and PAUSE;
* the tool reads its own frames back with the values it was asked to write.
"""

import pytest
from scapy.all import Ether, IP, IPv6, UDP, Dot1Q, raw, rdpcap, conf  # noqa: F401
from scapy.contrib.roce import BTH, AETH, CNPPadding
try:
    from scapy.contrib import mac_control as mc
except ImportError:  # pragma: no cover - present in Debian's scapy 2.5.0
    mc = None

import oracle_common as oc

conf.verb = 0


def _trim(frame, d):
    """Frame without the Ethernet padding (end of the IP datagram, from the IP length)."""
    return frame[:d["l3_end"]]


@pytest.fixture(scope="module")
def scapy_set(tool_set):
    pkts = rdpcap(str(tool_set.path))
    assert len(pkts) == len(tool_set.descs)
    return pkts


def _check_l2(p, exp, tag):
    assert p[Ether].src == oc.mac_text(exp["smac"]), tag
    assert p[Ether].dst == oc.mac_text(exp["dmac"]), tag
    if exp.get("vlan"):
        assert Dot1Q in p and p[Ether].type == 0x8100, tag + ": no 802.1Q tag"
        q = p[Dot1Q]
        assert (q.prio, q.id, q.vlan) == (exp["vlan"]["pcp"], exp["vlan"]["dei"], exp["vlan"]["vid"]), tag
    else:
        assert Dot1Q not in p, tag + ": unexpected 802.1Q tag"


def _check_roce_frame(frame, p, desc):
    exp = desc.exp
    tag = desc.arg()
    d = oc.decode_frame(frame)
    assert len(frame) == oc.expected_frame_len(exp), "%s: length %d, expected %d" % (
        tag, len(frame), oc.expected_frame_len(exp))
    assert d["trailer"] == b"\0" * len(d["trailer"]), tag + ": Ethernet padding not zero"
    _check_l2(p, exp, tag)
    tlen = 12 + (16 if exp["kind"] == "cnp" else oc.ext_len(exp["kind"].upper())) \
        + exp["payload_len"] + exp["pad"] + 4
    if exp["ipver"] == 4:
        assert IP in p and IPv6 not in p, tag
        ip = p[IP]
        assert (ip.version, ip.ihl, ip.proto, ip.frag) == (4, 5, 17, 0), tag
        assert ip.tos >> 2 == exp["dscp"] and ip.tos & 3 == exp["ecn"], "%s: tos 0x%x" % (tag, ip.tos)
        assert ip.ttl == exp["ttl"], tag
        assert ip.id == exp["ipid"], tag
        assert int(ip.flags) == (2 if exp["df"] else 0), "%s: flags %s" % (tag, ip.flags)
        assert (ip.src, ip.dst) == (exp["sip"], exp["dip"]), tag
        assert ip.len == 20 + 8 + tlen, tag
        q = IP(raw(ip)[:20])
        del q.chksum
        assert IP(raw(q)).chksum == ip.chksum, tag + ": bad IPv4 header checksum"
    else:
        assert IPv6 in p, tag
        ip = p[IPv6]
        assert ip.version == 6 and ip.nh == 17, tag
        assert ip.tc >> 2 == exp["dscp"] and ip.tc & 3 == exp["ecn"], "%s: tc 0x%x" % (tag, ip.tc)
        assert ip.hlim == exp["ttl"], tag
        assert ip.fl == exp["flowlabel"], tag
        assert ip.plen == 8 + tlen, tag
        assert (ip.src, ip.dst) == (exp["sip"], exp["dip"]), tag
    u = p[UDP]
    assert (u.sport, u.dport, u.len) == (exp["sport"], 4791, 8 + tlen), tag
    assert BTH in p, tag + ": scapy does not see a BTH"
    b = p[BTH]
    got = (b.opcode, b.solicited, b.migreq, b.padcount, b.version, b.pkey, b.fecn, b.becn, b.resv6,
           b.dqpn, b.ackreq, b.resv7, b.psn)
    want = (exp["opcode"], exp["se"], exp["mig"], exp["pad"], 0, exp["pkey"], exp["fecn"], exp["becn"], 0,
            exp["dqpn"], exp["ackreq"], 0, exp["psn"])
    assert got == want, "%s: BTH (op,se,m,pad,tver,pkey,fecn,becn,resv6,dqpn,ackreq,resv7,psn)\n got %s\nwant %s" % (
        tag, got, want)
    # ICRC as scapy computes it (IPv4 only in scapy 2.5.0)
    if exp["ipver"] == 4:
        t = _trim(frame, d)
        p2 = Ether(t)
        q = p2.copy()
        q[BTH].icrc = None
        assert raw(q) == t, "%s: scapy ICRC %s, wire %s" % (tag, raw(q)[-4:].hex(), t[-4:].hex())
    if exp["kind"] == "cnp":
        assert CNPPadding in p, tag
        assert (p[CNPPadding].reserved1, p[CNPPadding].reserved2) == (0, 0), tag
        return
    op = exp["kind"].upper()
    # AETH through scapy's layer (scapy binds it to the ACK opcode only; decode others from the BTH payload)
    if "AETH" in oc.OPS[op][1]:
        exts = oc.OPS[op][1]
        a = p[AETH] if AETH in p else AETH(raw(b.payload)[sum(oc.EXT_LEN[e] for e in exts[:exts.index("AETH")]):])
        assert (a.syndrome, a.msn) == (exp["ext"]["syndrome"], exp["ext"]["msn"]), tag
    # every extended header from the raw bytes at the IBA offsets
    got = {k: v for k, v in d["ext"].items() if k != "deth_rsvd"}
    assert got == exp["ext"], "%s: extended headers\n got %s\nwant %s" % (tag, got, exp["ext"])
    assert d["ext"].get("deth_rsvd", 0) == 0, tag + ": DETH reserved byte not zero"
    assert d["payload"] == oc.expected_payload(exp["payload_len"]), tag + ": payload bytes"
    assert d["pad_bytes"] == b"\0" * exp["pad"], tag + ": pad bytes not zero"


@pytest.mark.parametrize("kind", oc.ALL_KINDS)
def test_frames_decode_in_scapy(kind, tool_set, scapy_set):
    rows = tool_set.of_kind(kind)
    assert rows, "no frame of kind %s in the set" % kind
    for i, desc, frame in rows:
        p = scapy_set[i]
        assert raw(p) == frame
        tag = desc.arg()
        exp = desc.exp
        if kind in ("pfc", "pause") and mc is None:
            pytest.skip("scapy.contrib.mac_control absent")
        if kind == "pfc":
            assert len(frame) == 60, tag
            _check_l2(p, exp, tag)
            assert p[Ether].type == 0x8808, tag
            assert mc.MACControlClassBasedFlowControl in p, tag + ": scapy does not see a PFC frame"
            c = p[mc.MACControlClassBasedFlowControl]
            assert c._reserved == 0, tag
            en = sum(getattr(c, "c%d_enabled" % n) << n for n in range(8))
            assert en == exp["enable"], "%s: enable 0x%02x" % (tag, en)
            assert [getattr(c, "c%d_pause_time" % n) for n in range(8)] == exp["quanta"], tag
            assert frame[34:] == b"\0" * 26, tag + ": PFC padding not zero"
        elif kind == "pause":
            assert len(frame) == 60, tag
            _check_l2(p, exp, tag)
            assert p[Ether].type == 0x8808, tag
            assert mc.MACControlPause in p, tag + ": scapy does not see a PAUSE frame"
            assert p[mc.MACControlPause].pause_time == exp["quanta"], tag
            assert frame[18:] == b"\0" * 42, tag + ": PAUSE padding not zero"
        else:
            _check_roce_frame(frame, p, desc)


@pytest.mark.parametrize("kind", oc.ALL_OP_KINDS + ["cnp"])
def test_badicrc_is_correct_icrc_inverted(kind, tool_bad_set):
    rows = tool_bad_set.of_kind(kind)
    assert rows
    for _, desc, frame in rows:
        d = oc.decode_frame(frame)
        assert d["icrc_wire"] == d["icrc_calc"] ^ 0xFFFFFFFF, "%s: wire 0x%08x, correct 0x%08x" % (
            desc.arg(), d["icrc_wire"], d["icrc_calc"])
        if desc.exp["ipver"] == 4:
            t = _trim(frame, d)
            q = Ether(t)
            q[BTH].icrc = None
            good = raw(q)
            assert good[:-4] == t[:-4]
            assert bytes(x ^ 0xFF for x in good[-4:]) == t[-4:], desc.arg()


def test_write_all_covers_every_kind(roce_pcap, tmp_path):
    """`write --all`: every opcode over IPv4 and IPv6, untagged and tagged, plus CNP, PFC, PAUSE;
    every RoCE/CNP frame carries a correct ICRC (independent computation, and scapy for IPv4)."""
    frames = oc.tool_write(tmp_path / "all.pcap", ["--all"])
    seen = set()
    for f in frames:
        d = oc.decode_frame(f)
        if d["ethertype"] == 0x8808:
            seen.add({0x0101: "pfc", 0x0001: "pause"}.get(d["mac_ctrl_opcode"], "?"))
            continue
        assert "bth" in d, "frame %s is neither RoCE nor MAC control" % f[:20].hex()
        code = d["bth"]["opcode"]
        name = "cnp" if code == oc.CNP_OPCODE else oc.OP_BY_CODE[code].lower()
        seen.add((name, d["ip"]["version"], d["vlan"] is not None))
        assert d["icrc_wire"] == d["icrc_calc"], "--all frame %s: bad ICRC" % name
        if d["ip"]["version"] == 4:
            t = f[:d["l3_end"]]
            q = Ether(t)
            q[BTH].icrc = None
            assert raw(q) == t, "--all frame %s: scapy disagrees with the ICRC" % name
    want = {(k, v, t) for k in oc.ALL_OP_KINDS for v in (4, 6) for t in (False, True)} | {"pfc", "pause"}
    missing = want - seen
    assert not missing, "write --all lacks %s" % sorted(missing, key=str)
    assert any(isinstance(s, tuple) and s[0] == "cnp" for s in seen), "write --all lacks a CNP"


@pytest.mark.parametrize("variant", ["RC_SEND_ONLY", "rc-send-only", "Rc_Send-Only", "UD-SEND-ONLY-IMM",
                                     "CNP", "PFC", "Pause"])
def test_kind_names_case_and_dash_insensitive(roce_pcap, tmp_path, variant):
    frames = oc.tool_write(tmp_path / "v.pcap", [variant])
    assert len(frames) == 1
    d = oc.decode_frame(frames[0])
    key = variant.lower().replace("-", "_")
    if key == "pfc":
        assert d.get("mac_ctrl_opcode") == 0x0101
    elif key == "pause":
        assert d.get("mac_ctrl_opcode") == 0x0001
    elif key == "cnp":
        assert d["bth"]["opcode"] == 0x81 and d["bth"]["becn"] == 1 and d["ip"]["dscp"] == 48
    else:
        assert d["bth"]["opcode"] == oc.OPS[key.upper()][0]


@pytest.mark.parametrize("kind", oc.ALL_KINDS)
def test_tool_reads_back_own_frames(kind, tool_set):
    """`read --json` on the tool's own random frames gives back the written values."""
    objs = _readback(tool_set)
    for i, desc, frame in tool_set.of_kind(kind):
        o = objs[i]
        exp = desc.exp
        tag = desc.arg()
        assert o["frame"] == i + 1 and o["len"] == len(frame), tag
        assert o["eth"]["src"] == oc.mac_text(exp["smac"]) and o["eth"]["dst"] == oc.mac_text(exp["dmac"]), tag
        if kind == "pfc":
            assert (o["kind"], o["error"]) == ("pfc", "none"), tag
            assert o["pfc"] == {"enable": exp["enable"], "quanta": exp["quanta"]}, tag
            continue
        if kind == "pause":
            assert (o["kind"], o["error"]) == ("pause", "none"), tag
            assert o["pause"] == {"quanta": exp["quanta"]}, tag
            continue
        want_kind = "cnp" if kind == "cnp" else "roce"
        assert (o["kind"], o["error"]) == (want_kind, "none"), "%s: %s/%s" % (tag, o["kind"], o["error"])
        assert o["roce_version"] == 2
        assert o["vlan"] == exp["vlan"], tag
        ip = o["ip"]
        assert (ip["version"], ip["src"], ip["dst"], ip["dscp"], ip["ecn"], ip["ttl"]) == (
            exp["ipver"], exp["sip"], exp["dip"], exp["dscp"], exp["ecn"], exp["ttl"]), tag
        if exp["ipver"] == 4:
            assert (ip["id"], ip["df"]) == (exp["ipid"], exp["df"]), tag
        else:
            assert ip["flow_label"] == exp["flowlabel"], tag
        assert (o["udp"]["sport"], o["udp"]["dport"]) == (exp["sport"], 4791), tag
        b = o["bth"]
        for k in ("opcode", "se", "mig", "pad", "pkey", "fecn", "becn", "dqpn", "ackreq", "psn"):
            assert b[k] == exp[k], "%s: bth.%s = %r, expected %r" % (tag, k, b[k], exp[k])
        assert b["tver"] == 0
        if kind != "cnp":
            assert b["name"] == kind.upper(), tag
            _check_json_ext(o, kind.upper(), exp["ext"], tag)
            assert o["payload_len"] == exp["payload_len"], tag
        assert o["icrc"]["ok"] is True and o["icrc"]["wire"] == o["icrc"]["calc"], tag
        assert o["icrc"]["calc"] == oc.decode_frame(frame)["icrc_calc"], tag + ": icrc.calc differs from the oracle"


_READBACK = {}


def _readback(tool_set):
    if "objs" not in _READBACK:
        objs, rc = oc.tool_read_json(tool_set.path)
        assert len(objs) == len(tool_set.descs)
        malformed = [o for o in objs if o["kind"] == "malformed"]
        assert rc == 0, "read exit %d with %d malformed frames" % (rc, len(malformed))
        assert not malformed, "malformed verdicts on the tool's own frames: %s" % [
            (o["frame"], tool_set.descs[o["frame"] - 1].arg(), o["error"]) for o in malformed][:10]
        _READBACK["objs"] = objs
    return _READBACK["objs"]


def _check_json_ext(o, op, ext, tag):
    """JSON extended-header objects: present exactly for the headers of the opcode, with the values."""
    exts = oc.OPS[op][1]
    groups = {"RETH": ("reth", ("va", "rkey", "dmalen")), "AETH": ("aeth", ("syndrome", "msn")),
              "DETH": ("deth", ("qkey", "srcqp"))}
    for e, (key, fields) in groups.items():
        if e in exts:
            # extra informative members (e.g. aeth.name) are allowed
            got = {f: o[key].get(f) for f in fields} if isinstance(o.get(key), dict) else o.get(key)
            assert got == {f: ext[f] for f in fields}, "%s: %s = %r" % (tag, key, o.get(key))
        else:
            assert o.get(key) is None, "%s: unexpected %s" % (tag, key)
    if "ATOMICETH" in exts:
        assert {f: o["atomic"].get(f) for f in ("va", "rkey", "swap", "cmp")} == \
            {f: ext[f] for f in ("va", "rkey", "swap", "cmp")}, "%s: atomic = %r" % (tag, o.get("atomic"))
    else:
        assert o.get("atomic") is None, tag
    if "ATOMICACKETH" in exts:
        assert o["atomic_ack"].get("orig") == ext["orig"], "%s: atomic_ack = %r" % (tag, o.get("atomic_ack"))
    else:
        assert o.get("atomic_ack") is None, tag
    for e, key, f in (("IMMDT", "imm", "imm"), ("IETH", "ieth", "ieth")):
        if e in exts:
            assert o.get(key) == ext[f], "%s: %s = %r" % (tag, key, o.get(key))
        else:
            assert o.get(key) is None, tag


def test_documented_defaults(roce_pcap, tmp_path):
    """Descriptions without keys get exactly the documented defaults; a 4 KiB payload also works."""
    frames = oc.tool_write(tmp_path / "def.pcap", ["rc_send_only", "rc_send_only:ip=6", "cnp", "cnp:ip=6", "pfc",
                                                   "pause", "rc_write_only:ip=6,vlan=7,payload=4096"])
    d = [oc.decode_frame(f) for f in frames]
    for x, v6 in ((d[0], False), (d[1], True), (d[2], False), (d[3], True)):
        cnp = x["bth"]["opcode"] == 0x81
        assert x["src"] == bytes.fromhex("020000000001") and x["dst"] == bytes.fromhex("020000000002")
        assert x["vlan"] is None
        ip = x["ip"]
        assert (ip["dscp"], ip["ecn"], ip["ttl"]) == ((48 if cnp else 26), 2, 64)
        if v6:
            assert (ip["src"], ip["dst"], ip["flow_label"]) == ("fd00::1", "fd00::2", 0)
        else:
            assert (ip["src"], ip["dst"], ip["id"], ip["df"], ip["mf"], ip["frag"]) == \
                ("192.168.1.1", "192.168.1.2", 0, 1, 0, 0)
            assert ip["csum_ok"]
        assert (x["udp"]["sport"], x["udp"]["dport"]) == (0xC000, 4791)
        b = x["bth"]
        assert (b["opcode"], b["se"], b["mig"], b["pad"], b["tver"], b["pkey"], b["fecn"], b["becn"], b["dqpn"],
                b["ackreq"], b["psn"], b["resv6"], b["resv7"]) == \
            ((0x81 if cnp else 0x04), 0, 0, 0, 0, 0xFFFF, 0, (1 if cnp else 0), 0x12, 0, 0, 0, 0)
        assert x["icrc_wire"] == x["icrc_calc"]
        if cnp:
            assert x["cnp_rsvd"] == b"\0" * 16
            assert x["udp"]["len"] == 8 + 12 + 16 + 4
        else:
            assert x["payload"] == b""
    assert len(frames[0]) == 60  # 58 bytes, zero-padded
    for x in d[4:6]:
        assert x["src"] == bytes.fromhex("020000000001") and x["dst"] == bytes.fromhex("0180c2000001")
        assert x["ethertype"] == 0x8808
    assert d[4]["mac_ctrl_opcode"] == 0x0101 and d[4]["pfc_vector_hi"] == 0 and d[4]["pfc_enable"] == 0
    assert d[4]["pfc_quanta"] == [0] * 8
    assert d[5]["mac_ctrl_opcode"] == 0x0001 and d[5]["pause_quanta"] == 0
    big = d[6]
    assert big["vlan"] == {"pcp": 0, "dei": 0, "vid": 7}
    assert len(frames[6]) == 18 + 40 + 8 + 12 + 16 + 4096 + 4
    assert big["payload"] == oc.expected_payload(4096) and big["icrc_wire"] == big["icrc_calc"]


@pytest.mark.parametrize("args", [["read", "/nonexistent/x.pcap", "--json"], ["read"],
                                  ["write", "OUT", "no_such_opcode"], ["write", "OUT", "rc_send_only:nokey=1"],
                                  ["write", "OUT", "rc_send_first:payload=5"], ["write", "OUT", "rc_ack:payload=4"],
                                  ["write", "OUT", "rc_send_only:psn=0x1000000"]],
                         ids=["read_missing_file", "read_no_file", "write_unknown_kind", "write_unknown_key",
                              "write_pad_on_first", "write_payload_on_ack", "write_psn_out_of_range"])
def test_usage_and_io_errors_exit_2(roce_pcap, tmp_path, args):
    args = [str(tmp_path / "o.pcap") if a == "OUT" else a for a in args]
    r = oc.run_tool(*args)
    assert r.returncode == 2, "exit %d for %s; stderr %s" % (r.returncode, args, r.stderr)
