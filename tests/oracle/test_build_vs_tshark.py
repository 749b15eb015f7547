"""roce-pcap write, checked by Wireshark's dissectors (tshark 4.0, `-T json`).

What it proves: on the same seeded random set as test_build_vs_scapy.py (every opcode x
IPv4/IPv6 x untagged/VLAN, CNP, PFC, PAUSE), tshark -- an implementation independent of both
scapy and this project -- dissects every frame as the intended protocol (InfiniBand BTH over
UDP 4791, or MAC control) and finds the intended values: Ethernet addresses, VLAN PCP/DEI/VID,
IPv4 DSCP/ECN/TTL/ID/DF, IPv6 DSCP/ECN/flow label/hop limit, UDP ports and length, BTH opcode,
SE, M, PadCnt, TVer, P_Key, FECN/BECN byte, DestQP, AckReq, PSN, RETH VA/R_Key/DMA length, AETH
syndrome and MSN, DETH Q_Key/source QP, ImmDt, IETH, AtomicETH VA/R_Key/swap/compare,
AtomicAckETH original data, PFC class-enable vector and the eight quanta, PAUSE quanta.

tshark quirks taken into account: it tries the lower UDP port first (the random source ports
stay above 4791, and TFTP is disabled as the shared README advises); it shows the CNP opcode
0x81 as unknown but still dissects its BTH; it does not validate the ICRC (where it shows the
trailer as infiniband.invariant.crc, read big-endian, it must be the last 4 bytes of the
datagram); it flags some SEND payloads as "malformed" on its own, which is not checked.
Field names were found by running tshark -T json on scapy-made frames.
"""
import json
import os
import shutil
import subprocess

import pytest

import oracle_common as oc

TSHARK = shutil.which("tshark") or "/usr/bin/tshark"


def _pairs(pairs):
    """JSON object hook keeping repeated keys (tshark repeats some names) as lists."""
    out = {}
    for k, v in pairs:
        if k in out:
            if not isinstance(out[k], list) or not out.get("__multi_" + k):
                out[k] = [out[k]]
                out["__multi_" + k] = True
            out[k].append(v)
        else:
            out[k] = v
    return out


def _flat(tree, acc=None):
    """All leaf fields of a layer, by name (first occurrence wins)."""
    if acc is None:
        acc = {}
    if isinstance(tree, dict):
        for k, v in tree.items():
            if k.startswith("__multi_"):
                continue
            if isinstance(v, (dict, list)):
                if isinstance(v, list) and all(not isinstance(x, (dict, list)) for x in v):
                    acc.setdefault(k, v[0])
                else:
                    _flat(v, acc)
            else:
                acc.setdefault(k, v)
    elif isinstance(tree, list):
        for x in tree:
            _flat(x, acc)
    return acc


def num(s):
    s = str(s)
    return int(s, 16) if s.lower().startswith("0x") else int(s, 10)


def hexbytes(s):
    return int(s.replace(":", ""), 16)


def run_tshark(path):
    if not os.access(TSHARK, os.X_OK):
        pytest.fail("tshark not installed at %s" % TSHARK)
    r = subprocess.run([TSHARK, "-r", str(path), "-T", "json", "--disable-protocol", "tftp"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    return [f["_source"]["layers"] for f in json.loads(r.stdout, object_pairs_hook=_pairs)]


@pytest.fixture(scope="module")
def tshark_set(tool_set):
    layers = run_tshark(tool_set.path)
    assert len(layers) == len(tool_set.descs)
    return layers


def _check_common_l2(L, exp, tag):
    eth = _flat(L["eth"])
    assert eth["eth.src"] == oc.mac_text(exp["smac"]), tag
    assert eth["eth.dst"] == oc.mac_text(exp["dmac"]), tag
    if exp.get("vlan"):
        assert "vlan" in L, tag + ": tshark sees no 802.1Q tag"
        v = _flat(L["vlan"])
        got = (num(v["vlan.priority"]), num(v["vlan.dei"]), num(v["vlan.id"]))
        assert got == (exp["vlan"]["pcp"], exp["vlan"]["dei"], exp["vlan"]["vid"]), "%s: vlan %s" % (tag, got)
    else:
        assert "vlan" not in L, tag


def _check_roce(L, exp, frame, tag):
    _check_common_l2(L, exp, tag)
    d = oc.decode_frame(frame)
    tlen = 12 + (16 if exp["kind"] == "cnp" else oc.ext_len(exp["kind"].upper())) \
        + exp["payload_len"] + exp["pad"] + 4
    if exp["ipver"] == 4:
        assert "ip" in L and "ipv6" not in L, tag
        ip = _flat(L["ip"])
        got = (num(ip["ip.dsfield.dscp"]), num(ip["ip.dsfield.ecn"]), num(ip["ip.ttl"]), num(ip["ip.id"]),
               num(ip["ip.flags.df"]), num(ip["ip.len"]), ip["ip.src"], ip["ip.dst"], num(ip["ip.proto"]))
        want = (exp["dscp"], exp["ecn"], exp["ttl"], exp["ipid"], exp["df"], 28 + tlen, exp["sip"], exp["dip"], 17)
        assert got == want, "%s: IPv4 (dscp,ecn,ttl,id,df,len,src,dst,proto)\n got %s\nwant %s" % (tag, got, want)
    else:
        assert "ipv6" in L, tag
        ip = _flat(L["ipv6"])
        got = (num(ip["ipv6.tclass.dscp"]), num(ip["ipv6.tclass.ecn"]), num(ip["ipv6.flow"]), num(ip["ipv6.hlim"]),
               num(ip["ipv6.plen"]), ip["ipv6.src"], ip["ipv6.dst"], num(ip["ipv6.nxt"]))
        want = (exp["dscp"], exp["ecn"], exp["flowlabel"], exp["ttl"], 8 + tlen, exp["sip"], exp["dip"], 17)
        assert got == want, "%s: IPv6 (dscp,ecn,flow,hlim,plen,src,dst,nxt)\n got %s\nwant %s" % (tag, got, want)
    u = _flat(L["udp"])
    got = (num(u["udp.srcport"]), num(u["udp.dstport"]), num(u["udp.length"]))
    assert got == (exp["sport"], 4791, 8 + tlen), "%s: udp %s" % (tag, got)
    assert "infiniband" in L, "%s: tshark does not dissect InfiniBand (layers %s)" % (tag, list(L))
    ib = L["infiniband"]
    bth = ib["infiniband.bth_tree"]
    got = tuple(num(bth[k]) for k in ("infiniband.bth.opcode", "infiniband.bth.se", "infiniband.bth.m",
                                      "infiniband.bth.padcnt", "infiniband.bth.tver", "infiniband.bth.p_key",
                                      "infiniband.bth.destqp", "infiniband.bth.a", "infiniband.bth.reserved7",
                                      "infiniband.bth.psn"))
    want = (exp["opcode"], exp["se"], exp["mig"], exp["pad"], 0, exp["pkey"], exp["dqpn"], exp["ackreq"], 0, exp["psn"])
    assert got == want, "%s: BTH (op,se,m,pad,tver,pkey,destqp,a,resv7,psn)\n got %s\nwant %s" % (tag, got, want)
    # tshark 4.0 shows BTH byte 4 (FECN, BECN, resv6) as one "reserved" byte
    byte4 = int(bth["infiniband.reserved"], 16)
    assert byte4 == (exp["fecn"] << 7 | exp["becn"] << 6), "%s: BTH byte 4 = 0x%02x" % (tag, byte4)
    if "infiniband.invariant.crc" in ib:
        assert num(ib["infiniband.invariant.crc"]) == int.from_bytes(d["icrc_wire_bytes"], "big"), tag
    if exp["kind"] == "cnp":
        return
    f = _flat(ib)
    ext = exp["ext"]
    exts = oc.OPS[exp["kind"].upper()][1]
    present = {e for e in ("reth", "aeth", "deth", "immdt", "ieth", "atomiceth", "atomicacketh")
               if "infiniband." + e in ib}
    assert present == {e.lower() for e in exts}, "%s: tshark sees headers %s, expected %s" % (tag, present, exts)
    if "RETH" in exts:
        got = (num(f["infiniband.reth.va"]), num(f["infiniband.reth.r_key"]), num(f["infiniband.reth.dmalen"]))
        assert got == (ext["va"], ext["rkey"], ext["dmalen"]), "%s: RETH %s" % (tag, got)
    if "AETH" in exts:
        got = (num(f["infiniband.aeth.syndrome"]), num(f["infiniband.aeth.msn"]))
        assert got == (ext["syndrome"], ext["msn"]), "%s: AETH %s" % (tag, got)
    if "DETH" in exts:
        got = (num(f["infiniband.deth.q_key"]), num(f["infiniband.deth.srcqp"]))
        assert got == (ext["qkey"], ext["srcqp"]), "%s: DETH %s" % (tag, got)
    if "IMMDT" in exts:
        assert hexbytes(ib["infiniband.immdt"]) == ext["imm"], tag
    if "IETH" in exts:
        assert hexbytes(ib["infiniband.ieth"]) == ext["ieth"], tag
    if "ATOMICETH" in exts:
        a = ib["infiniband.atomiceth_tree"]
        got = (num(a["infiniband.reth.va"]), num(a["infiniband.reth.r_key"]), num(a["infiniband.atomiceth.swapdt"]),
               num(a["infiniband.atomiceth.cmpdt"]))
        assert got == (ext["va"], ext["rkey"], ext["swap"], ext["cmp"]), "%s: AtomicETH %s" % (tag, got)
    if "ATOMICACKETH" in exts:
        assert num(f["infiniband.atomicacketh.origremdt"]) == ext["orig"], tag


@pytest.mark.parametrize("kind", oc.ALL_KINDS)
def test_frames_dissect_in_tshark(kind, tool_set, tshark_set):
    rows = tool_set.of_kind(kind)
    assert rows
    for i, desc, frame in rows:
        L = tshark_set[i]
        exp = desc.exp
        tag = desc.arg()
        assert num(L["frame"]["frame.len"]) == len(frame), tag
        if kind in ("pfc", "pause"):
            _check_common_l2(L, exp, tag)
            assert "macc" in L, "%s: tshark does not see MAC control (layers %s)" % (tag, list(L))
            m = _flat(L["macc"])
            if kind == "pfc":
                assert num(m["macc.opcode"]) == 0x0101, tag
                assert num(m["macc.cbfc.enbv"]) == exp["enable"], "%s: enbv %s" % (tag, m["macc.cbfc.enbv"])
                for n in range(8):
                    assert num(m["macc.cbfc.enbv.c%d" % n]) == (exp["enable"] >> n) & 1, tag
                got = [num(m["macc.cbfc.pause_time.c%d" % n]) for n in range(8)]
                assert got == exp["quanta"], "%s: quanta %s" % (tag, got)
            else:
                assert num(m["macc.opcode"]) == 0x0001, tag
                assert num(m["macc.pause_time"]) == exp["quanta"], tag
        else:
            _check_roce(L, exp, frame, tag)


@pytest.mark.parametrize("ipver", [4, 6])
def test_udp_checksum_option_validated_by_tshark(ipver, roce_pcap, tmp_path):
    """udpcsum=1 writes a real UDP checksum (pseudo-header, ICRC included) that Wireshark's own
    checksum validation accepts; without it the checksum is 0, as RNICs send it."""
    out = tmp_path / "csum.pcap"
    frames = ["rc_send_only:ip=%d,udpcsum=1,payload=%d,psn=%d" % (ipver, n, n) for n in (0, 1, 33, 1000)]
    frames.append("rc_write_only:ip=%d,vlan=9,udpcsum=1,payload=77,va=0x1234,rkey=9,dmalen=77" % ipver)
    frames.append("rc_send_only:ip=%d,payload=8" % ipver)
    oc.run_tool("write", str(out), *frames, check=0)
    r = subprocess.run([TSHARK, "-r", str(out), "-o", "udp.check_checksum:TRUE", "-T", "fields",
                        "-e", "udp.checksum", "-e", "udp.checksum.status"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    rows = [line.split("\t") for line in r.stdout.splitlines()]
    assert len(rows) == len(frames)
    for row in rows[:-1]:
        assert int(row[0], 16) != 0 and row[1] == "1", "tshark says checksum %s status %s (1 = good)" % tuple(row)
    assert int(rows[-1][0], 16) == 0
