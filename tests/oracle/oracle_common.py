"""Shared pieces of the independent-oracle suite (no test in here).

Everything in this module is written from the IBA / RoCEv2 annex / IEEE 802.1Qbb texts
(as summarised in shared/spec/roce-facts.md sections 3 and 4), *not* from the C sources
of the project:

* OPS: the RoCEv2 opcode table (opcode value, extended headers in IBA order, payload yes/no);
* the `roce-pcap write` frame-description generator (random, seeded) and the expected values
  each description implies (defaults of the tool interface applied);
* an independent byte-level decoder (`decode_frame`) reading the fields at the offsets the
  IBA spec gives;
* an independent ICRC (`icrc_v2`, `icrc_v1`) built straight from the annex masking rules;
* helpers to run the tool and to read pcap files without scapy.
"""
import ipaddress
import json
import os
import struct
import subprocess
import zlib
from pathlib import Path

# --------------------------------------------------------------------------------------------
# locations
# --------------------------------------------------------------------------------------------
HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent  # tests/oracle -> tests -> <repo>


def tool_path():
    env = os.environ.get("ROCE_PCAP")
    return Path(env) if env else REPO / "build" / "apps" / "roce-pcap"


def shared_dir():
    env = os.environ.get("ROCE_SHARED")
    return Path(env) if env else REPO.parent / "shared"


# --------------------------------------------------------------------------------------------
# opcode table (IBA vol 1 ch. 9 / roce-facts 3.3): name -> (opcode, extended headers, payload)
# Extended headers are listed in IBA order: DETH, RETH, AtomicETH, AETH, AtomicAckETH, ImmDt, IETH.
# --------------------------------------------------------------------------------------------
_RC_UC_COMMON = [
    ("SEND_FIRST", 0x00, (), True),
    ("SEND_MIDDLE", 0x01, (), True),
    ("SEND_LAST", 0x02, (), True),
    ("SEND_LAST_IMM", 0x03, ("IMMDT",), True),
    ("SEND_ONLY", 0x04, (), True),
    ("SEND_ONLY_IMM", 0x05, ("IMMDT",), True),
    ("WRITE_FIRST", 0x06, ("RETH",), True),
    ("WRITE_MIDDLE", 0x07, (), True),
    ("WRITE_LAST", 0x08, (), True),
    ("WRITE_LAST_IMM", 0x09, ("IMMDT",), True),
    ("WRITE_ONLY", 0x0A, ("RETH",), True),
    ("WRITE_ONLY_IMM", 0x0B, ("RETH", "IMMDT"), True),
]
_RC_ONLY = [
    ("READ_REQUEST", 0x0C, ("RETH",), False),
    ("READ_RESP_FIRST", 0x0D, ("AETH",), True),
    ("READ_RESP_MIDDLE", 0x0E, (), True),
    ("READ_RESP_LAST", 0x0F, ("AETH",), True),
    ("READ_RESP_ONLY", 0x10, ("AETH",), True),
    ("ACK", 0x11, ("AETH",), False),
    ("ATOMIC_ACK", 0x12, ("AETH", "ATOMICACKETH"), False),
    ("COMPARE_SWAP", 0x13, ("ATOMICETH",), False),
    ("FETCH_ADD", 0x14, ("ATOMICETH",), False),
    ("SEND_LAST_INV", 0x16, ("IETH",), True),
    ("SEND_ONLY_INV", 0x17, ("IETH",), True),
]
_UD = [
    ("SEND_ONLY", 0x64, ("DETH",), True),
    ("SEND_ONLY_IMM", 0x65, ("DETH", "IMMDT"), True),
]

OPS = {}
for _n, _c, _e, _p in _RC_UC_COMMON + _RC_ONLY:
    OPS["RC_" + _n] = (_c, _e, _p)
for _n, _c, _e, _p in _RC_UC_COMMON:
    OPS["UC_" + _n] = (_c | 0x20, _e, _p)
for _n, _c, _e, _p in _UD:
    OPS["UD_" + _n] = (_c, _e, _p)
OP_BY_CODE = {v[0]: k for k, v in OPS.items()}
CNP_OPCODE = 0x81

EXT_LEN = {"DETH": 8, "RETH": 16, "ATOMICETH": 28, "AETH": 4, "ATOMICACKETH": 8, "IMMDT": 4, "IETH": 4}
# description keys belonging to each extended header
EXT_KEYS = {
    "DETH": ("qkey", "srcqp"),
    "RETH": ("va", "rkey", "dmalen"),
    "ATOMICETH": ("va", "rkey", "swap", "cmp"),
    "AETH": ("syndrome", "msn"),
    "ATOMICACKETH": ("orig",),
    "IMMDT": ("imm",),
    "IETH": ("ieth",),
}
EXT_BITS = {"qkey": 32, "srcqp": 24, "va": 64, "rkey": 32, "dmalen": 32, "swap": 64, "cmp": 64,
            "syndrome": 8, "msn": 24, "orig": 64, "imm": 32, "ieth": 32}

ALL_OP_KINDS = [k.lower() for k in OPS]            # 35 RoCE opcodes
ALL_KINDS = ALL_OP_KINDS + ["cnp", "pfc", "pause"]  # what `write` can produce


def ext_len(op):
    return sum(EXT_LEN[e] for e in OPS[op][1])


# --------------------------------------------------------------------------------------------
# independent decoder (offsets from the IBA / IEEE texts)
# --------------------------------------------------------------------------------------------
def decode_ext(op, ext_bytes):
    """Values of the extended headers of opcode `op`, read at the IBA offsets."""
    out = {}
    off = 0
    for e in OPS[op][1]:
        b = ext_bytes[off:off + EXT_LEN[e]]
        if e == "RETH":
            va, rkey, dmalen = struct.unpack("!QII", b)
            out.update(va=va, rkey=rkey, dmalen=dmalen)
        elif e == "AETH":
            out.update(syndrome=b[0], msn=int.from_bytes(b[1:4], "big"))
        elif e == "DETH":
            qkey, = struct.unpack("!I", b[:4])
            out.update(qkey=qkey, srcqp=int.from_bytes(b[5:8], "big"), deth_rsvd=b[4])
        elif e == "IMMDT":
            out["imm"], = struct.unpack("!I", b)
        elif e == "IETH":
            out["ieth"], = struct.unpack("!I", b)
        elif e == "ATOMICETH":
            va, rkey, swap, cmp_ = struct.unpack("!QIQQ", b)
            out.update(va=va, rkey=rkey, swap=swap, cmp=cmp_)
        elif e == "ATOMICACKETH":
            out["orig"], = struct.unpack("!Q", b)
        off += EXT_LEN[e]
    return out


def decode_frame(fr):
    """Plain-bytes decoder of the frames the tool writes (no scapy). Returns a dict."""
    d = {"len": len(fr), "dst": fr[0:6], "src": fr[6:12]}
    et = int.from_bytes(fr[12:14], "big")
    off = 14
    d["vlan"] = None
    if et == 0x8100:
        tci = int.from_bytes(fr[14:16], "big")
        d["vlan"] = {"pcp": tci >> 13, "dei": (tci >> 12) & 1, "vid": tci & 0xFFF}
        et = int.from_bytes(fr[16:18], "big")
        off = 18
    d["ethertype"] = et
    d["l3_off"] = off
    if et == 0x8808:
        mop = int.from_bytes(fr[off:off + 2], "big")
        d["mac_ctrl_opcode"] = mop
        if mop == 0x0101:
            d["pfc_vector_hi"] = fr[off + 2]
            d["pfc_enable"] = fr[off + 3]
            d["pfc_quanta"] = list(struct.unpack("!8H", fr[off + 4:off + 20]))
        elif mop == 0x0001:
            d["pause_quanta"] = int.from_bytes(fr[off + 2:off + 4], "big")
        d["trailer"] = fr[off + 20 if mop == 0x0101 else off + 4:]
        return d
    if et == 0x0800:
        ip = fr[off:off + 20]
        d["ip"] = {"version": ip[0] >> 4, "ihl": ip[0] & 15, "dscp": ip[1] >> 2, "ecn": ip[1] & 3,
                   "total_len": int.from_bytes(ip[2:4], "big"), "id": int.from_bytes(ip[4:6], "big"),
                   "df": (ip[6] >> 6) & 1, "mf": (ip[6] >> 5) & 1,
                   "frag": int.from_bytes(ip[6:8], "big") & 0x1FFF,
                   "ttl": ip[8], "proto": ip[9], "csum": int.from_bytes(ip[10:12], "big"),
                   "src": str(ipaddress.IPv4Address(ip[12:16])), "dst": str(ipaddress.IPv4Address(ip[16:20]))}
        d["ip"]["csum_ok"] = inet_csum(ip) == 0
        l4 = off + 20
        l3_end = off + d["ip"]["total_len"]
    elif et == 0x86DD:
        ip = fr[off:off + 40]
        w = int.from_bytes(ip[0:4], "big")
        tc = (w >> 20) & 0xFF
        d["ip"] = {"version": w >> 28, "dscp": tc >> 2, "ecn": tc & 3, "flow_label": w & 0xFFFFF,
                   "plen": int.from_bytes(ip[4:6], "big"), "nh": ip[6], "ttl": ip[7],
                   "src": str(ipaddress.IPv6Address(ip[8:24])), "dst": str(ipaddress.IPv6Address(ip[24:40]))}
        l4 = off + 40
        l3_end = l4 + d["ip"]["plen"]
    else:
        return d
    d["l4_off"] = l4
    d["l3_end"] = l3_end
    u = fr[l4:l4 + 8]
    d["udp"] = {"sport": int.from_bytes(u[0:2], "big"), "dport": int.from_bytes(u[2:4], "big"),
                "len": int.from_bytes(u[4:6], "big"), "csum": int.from_bytes(u[6:8], "big")}
    b = fr[l4 + 8:l4 + 20]
    d["bth"] = {"opcode": b[0], "se": b[1] >> 7, "mig": (b[1] >> 6) & 1, "pad": (b[1] >> 4) & 3,
                "tver": b[1] & 15, "pkey": int.from_bytes(b[2:4], "big"), "fecn": b[4] >> 7,
                "becn": (b[4] >> 6) & 1, "resv6": b[4] & 0x3F, "dqpn": int.from_bytes(b[5:8], "big"),
                "ackreq": b[8] >> 7, "resv7": b[8] & 0x7F, "psn": int.from_bytes(b[9:12], "big")}
    bth_off = l4 + 8
    d["bth_off"] = bth_off
    d["icrc_wire_bytes"] = fr[l3_end - 4:l3_end]
    d["icrc_wire"] = int.from_bytes(fr[l3_end - 4:l3_end], "little")
    d["icrc_calc"] = icrc_v2(fr[off:l3_end - 4])
    d["trailer"] = fr[l3_end:]
    op = OP_BY_CODE.get(b[0])
    if op is not None:
        el = ext_len(op)
        d["ext"] = decode_ext(op, fr[bth_off + 12:bth_off + 12 + el])
        body = fr[bth_off + 12 + el:l3_end - 4]
        pad = d["bth"]["pad"]
        d["payload"] = body[:len(body) - pad]
        d["pad_bytes"] = body[len(body) - pad:]
    elif b[0] == CNP_OPCODE:
        d["cnp_rsvd"] = fr[bth_off + 12:l3_end - 4]
    return d


def inet_csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


# --------------------------------------------------------------------------------------------
# ICRC, straight from the annex masking rules (IBA A16/A17; roce-facts 3.6)
# --------------------------------------------------------------------------------------------
def icrc_v2(l3):
    """ICRC value of a RoCEv2 packet; `l3` = IP header .. last pad byte (ICRC excluded).
    Covered: 8 bytes of ones (masked LRH), IP header with variant fields set to ones, UDP
    header with checksum set to ones, BTH with byte 4 (FECN, BECN, resv6) set to ones, rest.
    CRC-32/IEEE 802.3 (zlib.crc32). On the wire the value goes least-significant byte first."""
    b = bytearray(l3)
    if b[0] >> 4 == 4:
        ihl = (b[0] & 0x0F) * 4
        b[1] = 0xFF                  # type of service: DSCP + ECN
        b[8] = 0xFF                  # time to live
        b[10:12] = b"\xff\xff"       # header checksum
        udp = ihl
    elif b[0] >> 4 == 6:
        w = int.from_bytes(b[0:4], "big") | 0x0FFFFFFF  # traffic class (8) + flow label (20)
        b[0:4] = w.to_bytes(4, "big")
        b[7] = 0xFF                  # hop limit
        udp = 40
    else:
        raise ValueError("not IPv4/IPv6")
    b[udp + 6:udp + 8] = b"\xff\xff"  # UDP checksum
    b[udp + 8 + 4] = 0xFF            # BTH byte 4: FECN, BECN, resv6
    return zlib.crc32(b"\xff" * 8 + bytes(b)) & 0xFFFFFFFF


def icrc_v1(grh_and_rest):
    """RoCEv1 ICRC: 8 x 0xFF, GRH with traffic class, flow label, hop limit set to ones, BTH byte 4
    set to ones, then the rest (ICRC excluded)."""
    b = bytearray(grh_and_rest)
    w = int.from_bytes(b[0:4], "big") | 0x0FFFFFFF
    b[0:4] = w.to_bytes(4, "big")
    b[7] = 0xFF
    b[40 + 4] = 0xFF
    return zlib.crc32(b"\xff" * 8 + bytes(b)) & 0xFFFFFFFF


# --------------------------------------------------------------------------------------------
# pcap reading without scapy
# --------------------------------------------------------------------------------------------
def read_pcap(path):
    data = Path(path).read_bytes()
    magic = data[:4]
    if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
        e = "<"
    elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        e = ">"
    else:
        raise ValueError("%s: not a libpcap file" % path)
    linktype = struct.unpack(e + "I", data[20:24])[0]
    off = 24
    frames = []
    while off + 16 <= len(data):
        _, _, incl, _ = struct.unpack(e + "IIII", data[off:off + 16])
        off += 16
        frames.append(data[off:off + incl])
        off += incl
    return linktype, frames


# --------------------------------------------------------------------------------------------
# running the tool
# --------------------------------------------------------------------------------------------
def run_tool(*args, check=None, timeout=60):
    exe = tool_path()
    r = subprocess.run([str(exe)] + [str(a) for a in args], capture_output=True, text=True, timeout=timeout)
    if check is not None and r.returncode != check:
        raise AssertionError("roce-pcap %s: exit %d (expected %d)\nstderr: %s\nstdout: %s" % (
            " ".join(str(a) for a in args)[:400], r.returncode, check, r.stderr[-2000:], r.stdout[-2000:]))
    return r


def tool_write(out, frame_args):
    run_tool("write", out, *frame_args, check=0)
    linktype, frames = read_pcap(out)
    assert linktype == 1, "linktype %d, expected 1 (Ethernet)" % linktype
    return frames


def tool_read_json(path, expect_rc=None):
    r = run_tool("read", path, "--json")
    if expect_rc is not None:
        assert r.returncode == expect_rc, "read %s: exit %d, expected %d; stderr=%s" % (
            path, r.returncode, expect_rc, r.stderr[-1000:])
    assert r.returncode in (0, 1), "read %s: exit %d; stderr=%s" % (path, r.returncode, r.stderr[-1000:])
    out = []
    for line in r.stdout.splitlines():
        line = line.strip()
        if line:
            out.append(json.loads(line))
    return out, r.returncode


# --------------------------------------------------------------------------------------------
# random frame descriptions for `roce-pcap write`
# --------------------------------------------------------------------------------------------
DEFAULT_SEED = 20240611


def seed():
    return int(os.environ.get("ROCE_ORACLE_SEED", str(DEFAULT_SEED)), 0)


def mac_text(b):
    return ":".join("%02x" % x for x in b)


def _num(rng, v):
    """decimal or 0x-hex, both accepted by the tool"""
    return ("0x%x" % v) if rng.random() < 0.5 else str(v)


class Desc:
    """One frame description plus the values it implies."""

    def __init__(self, kind, args, exp):
        self.kind = kind          # lower-case KIND as written
        self.args = args          # ordered list of (key, text)
        self.exp = exp            # expected values (defaults applied)

    def arg(self):
        if not self.args:
            return self.kind
        return self.kind + ":" + ",".join("%s=%s" % kv for kv in self.args)

    def __repr__(self):
        return self.arg()


def _rand_mac(rng, unicast=True):
    b = bytearray(rng.getrandbits(8) for _ in range(6))
    if unicast:
        b[0] = (b[0] & 0xFE) | 0x02
    return bytes(b)


def gen_roce(rng, kind, ipver, vlan, paylen=None, omit_p=0.25, badicrc=False):
    """Random description of a RoCE opcode (kind = 'rc_send_only' ...) or 'cnp'."""
    cnp = kind == "cnp"
    args = []
    exp = {"kind": kind, "ipver": ipver}

    def put(key, value, text=None, always=False):
        exp[key] = value
        if always or rng.random() >= omit_p:
            args.append((key, text if text is not None else _num(rng, value)))
            return True
        return False

    # L2
    smac = _rand_mac(rng)
    dmac = _rand_mac(rng)
    exp["smac"] = bytes.fromhex("020000000001")
    exp["dmac"] = bytes.fromhex("020000000002")
    if rng.random() >= omit_p:
        exp["smac"] = smac
        args.append(("smac", mac_text(smac)))
    if rng.random() >= omit_p:
        exp["dmac"] = dmac
        args.append(("dmac", mac_text(dmac)))
    exp["vlan"] = None
    if vlan:
        vid = rng.randint(1, 4094)
        args.append(("vlan", _num(rng, vid)))
        v = {"vid": vid, "pcp": 0, "dei": 0}
        if rng.random() >= omit_p:
            v["pcp"] = rng.randint(0, 7)
            args.append(("pcp", str(v["pcp"])))
        if rng.random() >= omit_p:
            v["dei"] = rng.randint(0, 1)
            args.append(("dei", str(v["dei"])))
        exp["vlan"] = v
    # L3
    if ipver == 6 or rng.random() >= omit_p:
        args.append(("ip", str(ipver)))
    if ipver == 4:
        sip = str(ipaddress.IPv4Address((10 << 24) | rng.getrandbits(24)))
        dip = str(ipaddress.IPv4Address((172 << 24) | (16 << 16) | rng.getrandbits(16)))
        dsip, ddip = "192.168.1.1", "192.168.1.2"
    else:
        sip = str(ipaddress.IPv6Address((0xFD << 120) | rng.getrandbits(120)))
        dip = str(ipaddress.IPv6Address((0xFD << 120) | rng.getrandbits(120)))
        dsip, ddip = "fd00::1", "fd00::2"
    exp["sip"], exp["dip"] = dsip, ddip
    if rng.random() >= omit_p:
        exp["sip"] = sip
        args.append(("sip", sip))
    if rng.random() >= omit_p:
        exp["dip"] = dip
        args.append(("dip", dip))
    exp["dscp"] = 48 if cnp else 26
    exp["ecn"] = 2
    exp["ttl"] = 64
    if rng.random() >= omit_p:
        put("dscp", rng.randint(0, 63), always=True)
    if rng.random() >= omit_p:
        put("ecn", rng.randint(0, 3), always=True)
    if rng.random() >= omit_p:
        put("ttl", rng.randint(1, 255), always=True)
    if ipver == 4:
        exp["ipid"], exp["df"] = 0, 1
        if rng.random() >= omit_p:
            put("ipid", rng.getrandbits(16), always=True)
        if rng.random() >= omit_p:
            put("df", rng.randint(0, 1), text=None, always=True)
    else:
        exp["flowlabel"] = 0
        if rng.random() >= omit_p:
            put("flowlabel", rng.getrandbits(20), always=True)
    # UDP: source port above 4791 so that tshark picks the RoCE port (it tries the lower port first)
    exp["sport"] = 0xC000
    if rng.random() >= omit_p:
        sp = rng.randint(0xC000, 0xFFFF) if rng.random() < 0.8 else rng.randint(4792, 0xBFFF)
        put("sport", sp, always=True)
    exp["dport"] = 4791
    # BTH
    exp.update(se=0, mig=0, pkey=0xFFFF, fecn=0, becn=1 if cnp else 0, dqpn=0x12, ackreq=0, psn=0)
    for key, bits in (("se", 1), ("mig", 1), ("pkey", 16), ("fecn", 1), ("becn", 1), ("dqpn", 24),
                      ("ackreq", 1), ("psn", 24)):
        if cnp and key in ("se", "mig", "fecn", "ackreq"):
            continue
        if rng.random() >= omit_p:
            v = rng.getrandbits(bits)
            if key in ("dqpn", "psn") and rng.random() < 0.1:
                v = 0xFFFFFF  # extremes of the 24-bit fields
            put(key, v, always=True)
    if cnp:
        exp["opcode"] = CNP_OPCODE
        exp["payload_len"] = 0
        exp["exts"] = ()
    else:
        op = kind.upper()
        code, exts, has_payload = OPS[op]
        exp["opcode"] = code
        exp["exts"] = exts
        ext_vals = {}
        for e in exts:
            for key in EXT_KEYS[e]:
                v = rng.getrandbits(EXT_BITS[key])
                if rng.random() < 0.1:
                    v = (1 << EXT_BITS[key]) - 1
                ext_vals[key] = 0
                if rng.random() >= omit_p / 2:
                    ext_vals[key] = v
                    args.append((key, _num(rng, v)))
        exp["ext"] = ext_vals
        n = 0
        if has_payload:
            n = rng.randint(0, 300) if paylen is None else paylen
            if kind.endswith("_first") or kind.endswith("_middle"):
                n -= n % 4  # IBA: only the last/only packet of a message may pad
            if n or rng.random() < 0.5:
                args.append(("payload", str(n)))
        exp["payload_len"] = n
    exp["pad"] = (-exp["payload_len"]) % 4
    exp["badicrc"] = badicrc
    if badicrc:
        args.append(("badicrc", "1"))
    rng.shuffle(args)
    return Desc(kind, args, exp)


def gen_pfc(rng):
    args, exp = [], {"kind": "pfc", "smac": bytes.fromhex("020000000001"),
                     "dmac": bytes.fromhex("0180c2000001"), "enable": 0, "quanta": [0] * 8}
    if rng.random() < 0.8:
        exp["smac"] = _rand_mac(rng)
        args.append(("smac", mac_text(exp["smac"])))
    if rng.random() < 0.3:
        exp["dmac"] = _rand_mac(rng, unicast=False)
        args.append(("dmac", mac_text(exp["dmac"])))
    if rng.random() < 0.9:
        exp["enable"] = rng.getrandbits(8)
        args.append(("enable", "0x%02x" % exp["enable"]))
    for i in range(8):
        if rng.random() < 0.8:
            exp["quanta"][i] = rng.choice([0, 0xFFFF, rng.getrandbits(16)])
            args.append(("q%d" % i, _num(rng, exp["quanta"][i])))
    rng.shuffle(args)
    return Desc("pfc", args, exp)


def gen_pause(rng):
    args, exp = [], {"kind": "pause", "smac": bytes.fromhex("020000000001"),
                     "dmac": bytes.fromhex("0180c2000001"), "quanta": 0}
    if rng.random() < 0.8:
        exp["smac"] = _rand_mac(rng)
        args.append(("smac", mac_text(exp["smac"])))
    if rng.random() < 0.3:
        exp["dmac"] = _rand_mac(rng, unicast=False)
        args.append(("dmac", mac_text(exp["dmac"])))
    if rng.random() < 0.9:
        exp["quanta"] = rng.choice([0, 0xFFFF, rng.getrandbits(16)])
        args.append(("quanta", _num(rng, exp["quanta"])))
    rng.shuffle(args)
    return Desc("pause", args, exp)


def gen_set(rng, per_combo=3):  # 456 frames; the tool writes at most 512 per file
    """Every opcode x {IPv4, IPv6} x {untagged, VLAN} x per_combo random frames, with payload
    lengths chosen so that each opcode that may pad (last/only) sees every pad count 0..3;
    plus CNPs, PFC and PAUSE."""
    descs = []
    for kind in ALL_OP_KINDS:
        i = 0
        for ipver in (4, 6):
            for vlan in (False, True):
                for _ in range(per_combo):
                    n = rng.randint(0, 74) * 4 + (i % 4)  # 0..299, pad = (4 - i%4) % 4
                    i += 1
                    descs.append(gen_roce(rng, kind, ipver, vlan, paylen=n))
    for ipver in (4, 6):
        for vlan in (False, True):
            for _ in range(per_combo):
                descs.append(gen_roce(rng, "cnp", ipver, vlan))
    for _ in range(4 * per_combo):
        descs.append(gen_pfc(rng))
        descs.append(gen_pause(rng))
    return descs


def expected_frame_len(exp):
    if exp["kind"] in ("pfc", "pause"):
        return 60
    n = 14 + (4 if exp["vlan"] else 0) + (20 if exp["ipver"] == 4 else 40) + 8 + 12
    if exp["kind"] == "cnp":
        n += 16
    else:
        n += ext_len(exp["kind"].upper())
    n += exp["payload_len"] + exp["pad"] + 4
    return max(n, 60)


def expected_payload(n):
    return bytes(i & 0xFF for i in range(n))
