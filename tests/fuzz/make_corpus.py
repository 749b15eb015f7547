#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Regenerates the seed corpora of the fuzz targets.

parse (the default): the wire_parse target's seeds (tests/fuzz/corpus/parse/). Valid frames come
from the project's own builder (roce-pcap write); this script splits the pcap into one file per
frame and derives the malformed and "other" seeds by editing bytes.

config: the configuration loader's seeds, written into --out: every shipped configs/**/*.cfg
(its @include lines replaced by the files they name), small valid configurations of the sections
the shipped ones leave out, hand-written broken ones (one per kind of fault) and the fuzzer's past
findings. They are not kept in the tree: the fuzz_config test makes them at each run, into its
temporary corpus (run_fuzz.sh --seeds-from), so the shipped configs among them are always today's.
With --dict, also the libFuzzer dictionary (tests/fuzz/config.dict, kept in the tree): every
setting name and string value the loader knows (read from config/config_*.c and
cc/cc_params.c) plus the grammar's tokens.

Standard library only.

usage: tests/fuzz/make_corpus.py [parse] [--roce-pcap build/apps/roce-pcap] [--out tests/fuzz/corpus/parse]
       tests/fuzz/make_corpus.py config --out DIR [--dict tests/fuzz/config.dict]
"""
import argparse
import glob
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

# One seed per opcode; the four L3/L2 variants rotate over the opcodes so each appears often.
OPCODES = [
    "rc_send_first", "rc_send_middle", "rc_send_last", "rc_send_last_imm", "rc_send_only",
    "rc_send_only_imm", "rc_write_first", "rc_write_middle", "rc_write_last",
    "rc_write_last_imm", "rc_write_only", "rc_write_only_imm", "rc_read_request",
    "rc_read_resp_first", "rc_read_resp_middle", "rc_read_resp_last", "rc_read_resp_only",
    "rc_ack", "rc_atomic_ack", "rc_compare_swap", "rc_fetch_add", "rc_send_last_inv",
    "rc_send_only_inv", "uc_send_first", "uc_send_middle", "uc_send_last", "uc_send_last_imm",
    "uc_send_only", "uc_send_only_imm", "uc_write_first", "uc_write_middle", "uc_write_last",
    "uc_write_last_imm", "uc_write_only", "uc_write_only_imm", "ud_send_only",
    "ud_send_only_imm",
]
NO_PAYLOAD = {"rc_read_request", "rc_ack", "rc_atomic_ack", "rc_compare_swap", "rc_fetch_add"}
# Packets that may not pad (first / middle): payload a multiple of 4.
NO_PAD = {n for n in OPCODES if n.endswith("_first") or n.endswith("_middle")}
VARIANTS = ["ip=4", "ip=6", "ip=4,vlan=7,pcp=3", "ip=6,vlan=100,pcp=5"]


def frame_specs():
    """(file name, roce-pcap FRAME description) of every valid seed."""
    specs = []
    for i, op in enumerate(OPCODES):
        var = VARIANTS[i % len(VARIANTS)]
        desc = f"{op}:{var},psn={0x10000 + i},dqpn={0x100 + i},ackreq=1"
        if op not in NO_PAYLOAD:
            plen = 16 + 8 * (i % 5) if op in NO_PAD else 1 + (i * 7) % 61
            desc += f",payload={plen}"
        tag = var.replace("ip=", "v").replace(",vlan=", "_vlan").split(",")[0]
        specs.append((f"{op}_{tag}", desc))
    specs += [
        ("cnp_v4", "cnp:ip=4"),
        ("cnp_v6_vlan", "cnp:ip=6,vlan=3,pcp=6"),
        ("pfc", "pfc:enable=0x28,q3=65535,q5=100"),
        ("pfc_all", "pfc:enable=0xff,quanta=7"),
        ("pause", "pause:quanta=65535"),
        # the ICRC's two paths: one copy below 192 bytes after the prefix, CRC + combine above
        ("rc_send_only_v4_p200", "rc_send_only:ip=4,payload=200"),
        ("rc_write_only_v6_p1500", "rc_write_only:ip=6,payload=1500,va=0x1000,rkey=0x1234,dmalen=1500"),
        ("uc_send_last_v4_p4093", "uc_send_last:ip=4,vlan=9,payload=4093"),
        ("ud_send_only_v6_p8900", "ud_send_only:ip=6,payload=8900,qkey=0x80010000,srcqp=5"),
        ("rc_ack_nak", "rc_ack:ip=4,syndrome=0x61,msn=77"),
        ("rc_send_only_v4_empty", "rc_send_only:ip=4"),
        ("rc_send_only_flags", "rc_send_only:ip=6,se=1,mig=1,fecn=1,becn=1,pkey=0x8001,ecn=3,flowlabel=0xabcde,payload=3"),
        ("bad_icrc_v4", "rc_send_only:ip=4,payload=9,badicrc=1"),
        ("bad_icrc_v6", "rc_write_only:ip=6,vlan=2,payload=33,badicrc=1"),
    ]
    return specs


def read_pcap(path):
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack_from("<I", data, 0)[0]
    if magic in (0xA1B2C3D4, 0xA1B23C4D):
        endian = "<"
    elif magic in (0xD4C3B2A1, 0x4D3CB2A1):
        endian = ">"
    else:
        sys.exit(f"{path}: not a pcap file")
    off, frames = 24, []
    while off + 16 <= len(data):
        _, _, incl, _ = struct.unpack_from(endian + "IIII", data, off)
        off += 16
        frames.append(data[off:off + incl])
        off += incl
    return frames


# ---- helpers to derive seeds -------------------------------------------------------------
def l3_off(f):
    return 18 if f[12:14] == b"\x81\x00" else 14


def icrc(l3, covered, v6, rocev1=False):
    """ICRC of a RoCE packet whose IP header (or GRH) is l3[0:] (IBA A17.8.4)."""
    m = bytearray(l3[:covered])
    if v6:
        m[0] |= 0x0F
        m[1] = m[2] = m[3] = 0xFF
        m[7] = 0xFF
        hl = 40 if rocev1 else 48
    else:
        m[1] = m[8] = m[10] = m[11] = 0xFF
        hl = 28
    if not rocev1:
        m[hl - 2] = m[hl - 1] = 0xFF
    m[hl + 4] = 0xFF
    return zlib.crc32(b"\xff" * 8 + bytes(m)) & 0xFFFFFFFF


def roce_end(f):
    """Offset just past the ICRC of a RoCEv2 frame (from the IP length)."""
    o = l3_off(f)
    if f[o] >> 4 == 4:
        return o + struct.unpack_from(">H", f, o + 2)[0]
    return o + 40 + struct.unpack_from(">H", f, o + 4)[0]


def reseal(f):
    f = bytearray(f)
    o, end = l3_off(f), roce_end(f)
    v6 = f[o] >> 4 == 6
    f[end - 4:end] = struct.pack("<I", icrc(f[o:], end - 4 - o, v6))
    return bytes(f)


def set_lengths(f, delta):
    """Changes IP and UDP lengths by delta (keeps the frame bytes)."""
    f = bytearray(f)
    o = l3_off(f)
    if f[o] >> 4 == 4:
        struct.pack_into(">H", f, o + 2, struct.unpack_from(">H", f, o + 2)[0] + delta)
        u = o + 20
    else:
        struct.pack_into(">H", f, o + 4, struct.unpack_from(">H", f, o + 4)[0] + delta)
        u = o + 40
    struct.pack_into(">H", f, u + 4, struct.unpack_from(">H", f, u + 4)[0] + delta)
    return bytes(f)


def bth_off(f):
    o = l3_off(f)
    return o + (28 if f[o] >> 4 == 4 else 48)


def patch(f, off, val):
    f = bytearray(f)
    f[off:off + len(val)] = val
    return bytes(f)


def to_rocev1(f):
    """RoCEv2-over-IPv6 frame -> RoCEv1 (EtherType 0x8915, GRH next header 0x1B, no UDP)."""
    o = l3_off(f)
    end = roce_end(f)
    grh = bytearray(f[o:o + 40])
    transport = f[o + 48:end]  # BTH .. ICRC
    struct.pack_into(">H", grh, 4, len(transport))
    grh[6] = 0x1B
    body = bytearray(grh + transport)
    body[-4:] = struct.pack("<I", icrc(body, len(body) - 4, True, rocev1=True))
    eth = bytearray(f[:o])
    eth[o - 2:o] = b"\x89\x15"
    out = bytes(eth + body)
    return out + b"\x00" * max(0, 60 - len(out))


def derived(seeds):
    s4 = seeds["rc_send_only_v4_p200"]
    s6 = seeds["rc_write_only_v6_p1500"]
    first = next(v for k, v in seeds.items() if k.startswith("rc_send_first"))
    rreq = next(v for k, v in seeds.items() if k.startswith("rc_read_request"))
    cnp = seeds["cnp_v4"]
    pfc = seeds["pfc"]
    v6small = next(v for k, v in seeds.items() if k.startswith("rc_send_only_imm"))
    assert v6small[12:14] == b"\x86\xdd", "rc_send_only_imm seed expected over untagged IPv6"
    o4 = l3_off(s4)
    b4 = bth_off(s4)
    d = {}
    # truncations at every layer
    d["trunc_l2"] = s4[:10]
    tagged = next(v for k, v in seeds.items() if "_vlan" in k)
    d["trunc_vlan"] = tagged[:16]
    d["trunc_l3_v4"] = s4[:o4 + 12]
    d["trunc_l3_v6"] = s6[:14 + 30]
    d["trunc_frame_v4"] = s4[:120]  # IP total length beyond the frame
    d["trunc_bth"] = reseal(set_lengths(rreq, -16)[:roce_end(set_lengths(rreq, -16))])
    # IP layer
    d["bad_ip_version"] = patch(s4, o4, b"\x65")
    d["bad_ip_hlen"] = patch(s4, o4, b"\x44")
    opt = bytearray(s4[:o4 + 20] + b"\x01\x01\x01\x00" + s4[o4 + 20:])  # 4 bytes of NOP/EOL
    opt[o4] = 0x46
    struct.pack_into(">H", opt, o4 + 2, struct.unpack_from(">H", opt, o4 + 2)[0] + 4)
    d["ip_options"] = bytes(opt)
    d["ip_len_short"] = patch(s4, o4 + 2, b"\x00\x10")
    d["ip_fragment"] = patch(s4, o4 + 6, b"\x20\x00")
    d["ip_later_fragment"] = patch(s4, o4 + 6, b"\x00\x10")  # kind other
    d["udp_len"] = patch(s4, o4 + 24, b"\x00\x09")
    d["udp_other_port"] = patch(s4, o4 + 22, b"\x00\x35")  # DNS: other
    d["tcp"] = patch(s4, o4 + 9, b"\x06")
    d["ipv6_ext_hdr"] = patch(s6, 14 + 6, b"\x00")
    d["arp"] = patch(s4[:42], 12, b"\x08\x06")
    # transport
    d["bad_tver"] = reseal(patch(s4, b4 + 1, bytes([s4[b4 + 1] | 0x01])))
    d["unknown_opcode"] = reseal(patch(s4, b4, b"\x15"))
    d["bad_length"] = set_lengths(s4, -1)
    d["pad_on_first"] = reseal(patch(first, bth_off(first) + 1, bytes([first[bth_off(first) + 1] | 0x30])))
    empty = seeds["rc_send_only_v4_empty"]  # no payload: a pad count of 2 exceeds it
    d["pad_too_big"] = reseal(patch(empty, bth_off(empty) + 1, bytes([empty[bth_off(empty) + 1] | 0x20])))
    d["cnp_long"] = reseal(set_lengths(cnp + b"\x00" * 4, 4))
    d["no_payload_extra"] = reseal(set_lengths(rreq + b"\x00" * 4, 4))
    d["ecn_ce_ttl_changed"] = patch(patch(s4, o4 + 1, bytes([s4[o4 + 1] | 3])), o4 + 8, b"\x01")  # masked: ICRC still ok
    d["rocev1"] = to_rocev1(v6small)
    # MAC control
    d["mac_ctrl_trunc"] = pfc[:15]
    d["pfc_trunc"] = pfc[:20]
    d["pfc_bad_reserved"] = patch(pfc, 16, b"\x01")
    d["mac_ctrl_other"] = patch(pfc, 14, b"\x00\x03")
    return d


# ---- the configuration loader (fuzz_config) ------------------------------------------------
# A small valid base: eal on line 1, one port on line 2, one role on line 3.
CFG_BASE = ('eal = { lcores = "0-1"; };\n'
            'ports = ( { name = "a"; device = "ring:x:a"; ipv4 = "10.0.0.1"; link_speed_gbps = 10; },\n'
            '          { name = "b"; device = "ring:x:b"; ipv4 = "10.0.0.2"; ipv6 = "fd00::2"; link_speed_gbps = 10; } );\n'
            'lcores = ( { lcore = 1; port = "a"; role = "txrx"; }, { lcore = 1; port = "b"; role = "txrx"; } );\n')
CFG_FLOW = ('flows = ( { name = "f"; port = "a"; dst_mac = "02:00:00:00:00:02"; dst_ip = "10.0.0.2";\n'
            '            qpn = 0x100; dest_qpn = 0x200; rate_gbps = 1.0; %s } );\n')

# Valid configurations of what the shipped ones leave out (every top-level section appears).
CONFIG_VALID = {
    "valid_minimal": CFG_BASE,
    "valid_flow_everything": CFG_BASE + CFG_FLOW % (
        'transport = "rc"; ops = { send = 1; write = 2; read = 1; fetch_add = 1; compare_swap = 1; };\n'
        ' message_size = { dist = "exponential"; mean = 1000; min = 64; max = 4096; }; mtu = 1024;\n'
        ' start_psn = 0xABCDEF; pkey = 0x7FFF; udp_sport = 50000; dscp = 46; ecn = "ce"; vlan = 100; pcp = 3;\n'
        ' stop = { messages = 1000; bytes = 5000000000L; seconds = 2.5; }; count = 4; qpn_step = 2;\n'
        ' dest_qpn_step = 3; sport_step = 4; rc = { retry_timeout_us = 1000.0; retry_limit = 3;\n'
        ' max_outstanding = 8; ack_every = 4; }; latency = { mode = "oneway"; timeout_us = 1000.0; };\n'
        ' cc = "dcqcn"; dcqcn = { profile = "paper"; g = 0.5; ns3_stages = false; hyper_linear = true; };\n'
        ' inject = ( { action = "ce"; every = 10; qp = 1; count = 5; }, { action = "drop"; psn = 7; } );'),
    "valid_ud_timely": CFG_BASE +
        'flows = ( { name = "u"; port = "b"; dst_mac = "02:00:00:00:00:01"; dst_ip = "fd00::1"; transport = "ud";\n'
        '            ops = { send_imm = 1; }; message_size = { dist = "uniform"; min = 64; max = 256; }; mtu = 256;\n'
        '            qpn = 0xFFFFFF; dest_qpn = 2; qkey = 0xFFFFFFFF; rate_pps = 1e6; pattern = "poisson"; },\n'
        '          { name = "t"; port = "a"; dst_mac = "02:00:00:00:00:02"; dst_ip = "10.0.0.2"; qpn = 3; dest_qpn = 3;\n'
        '            cc = "timely"; timely = { beta = 0.5; t_low_us = 10; }; pattern = "constant"; },\n'
        '          { name = "o"; port = "a"; dst_mac = "02:00:00:00:00:02"; dst_ip = "10.0.0.2"; qpn = 4; dest_qpn = 4;\n'
        '            transport = "uc"; rate_gbps = 1; pattern = { type = "onoff"; on_us = 10; off_us = 90; }; } );\n',
    "valid_port_everything": 'eal = { lcores = "0-3,5"; main_lcore = 2; memory_mb = 512; huge_pages = false;\n'
        '        file_prefix = "fz"; log_level = "debug"; extra_args = ["--no-pci"]; };\n'
        'ports = ( { name = "a"; device = "net_pcap0"; vdev_args = "tx_pcap=/tmp/x.pcap"; mac = "02:00:00:00:00:0a";\n'
        '  ipv4 = "192.168.1.1"; ipv6 = "fd00::1"; link_speed_gbps = 25; rx_queues = 2; tx_queues = 4; rx_desc = 512;\n'
        '  tx_desc = 2048; mtu = 9000; rx_drop_probability = 0.01; steering = "off"; timestamps = "software";\n'
        '  tx_schedule_lead_us = 10.0;\n'
        '  qos = { trust = "pcp"; priority_to_tc = [0, 1, 2, 3, 4, 5, 6, 7]; tc_to_queue = [0, 1, 2, 3, 0, 1, 2, 3];\n'
        '          honour_pfc = true; nic_pfc = false;\n'
        '          pfc_xoff = { priorities = [3, 4]; xoff_bytes = 100000; xon_bytes = 50000; quanta = 1000; refresh_us = 10; drain_gbps = 10; };\n'
        '          egress = { shape_gbps = 20; strict = [7]; weights = [1, 2, 3, 4, 5, 6, 7, 8]; tc_shape_gbps = [0, 0, 0, 5, 0, 0, 0, 0]; }; };\n'
        '  np = { enabled = true; min_time_between_cnps = 4; cnp_dscp = 48; cnp_802p_prio = 6; };\n'
        '  rx_inject = ( { action = "corrupt"; probability = 0.5; count = 3; } ); },\n'
        '  { name = "b-2"; device = "0000:3b:00.1"; ipv6 = "fd00::2"; steering = "isolate"; timestamps = "hardware"; } );\n'
        'lcores = ( { lcore = 1; port = "a"; queue = 3; role = "tx"; }, { lcore = 1; port = "a"; queue = 1; role = "rx"; },\n'
        '           { lcore = 5; port = "b-2"; role = "reflect"; } );\n'
        'pfc_generators = ( { port = "a"; priorities = [3]; quanta = 65535; rate_pps = 1000.0; count = 10; start_s = 0.5; },\n'
        '                   { port = "a"; pause = true; rate_pps = 10.0; } );\n'
        'phases = ( { name = "p0"; at_s = 0.0; egress = ( { port = "a"; tc = 3; weight = 5; shape_gbps = 4.0; } ); },\n'
        '           { name = "p1"; at_s = 1.0; } );\n',
    "valid_collective_responders": CFG_BASE +
        'flows = ( { name = "f"; port = "a"; dst_mac = "02:00:00:00:00:02"; dst_ip = "10.0.0.2"; qpn = 0x100; dest_qpn = 0x200; },\n'
        '          { name = "g"; port = "b"; dst_mac = "02:00:00:00:00:01"; dst_ip = "10.0.0.1"; qpn = 0x100; dest_qpn = 0x200; rate_gbps = 2; } );\n'
        'collectives = ( { name = "ring"; type = "ring"; flows = ["f", "g"]; phases = 6; } );\n'
        'responders = ( { port = "a"; qpn = 0x300; peer_qpn = 0x400; count = 4; qpn_step = 2; peer_qpn_step = 2; mtu = 2048;\n'
        '                 start_psn = 5; ack_every = 8; pkey = 0xFFFF; } );\n'
        'peers = ( { port = "b"; qpn = 0x500; peer_qpn = 0x600; count = 2; } );\n'
        'phases = ( { name = "up"; at_s = 1.0; rates = ( { flow = "g"; gbps = 4.0; } ); } );\n'
        'sla = ( { flow = "f"; metric = "loss"; max = 0.0; }, { port = "*"; metric = "pause_percent"; max = 1.0; priority = 3; },\n'
        '        { flow = "*"; metric = "goodput_gbps"; min = 0.5; }, { port = "b"; metric = "rx_dropped"; max = 0.0; } );\n'
        'run = { duration_s = 10; stats_interval_s = 0.5; report = "r.json"; latency_samples = "l.csv"; latency_sample_every = 10;\n'
        '        latency_foreign_qps = 8; timeseries = "t.csv"; capture = "c.pcapng"; capture_every = 10; capture_snaplen = 128;\n'
        '        capture_ports = ["a"]; cc_trace = "cc.csv"; cc_trace_interval_us = 100.0; cc_trace_qps = 4; cc_trace_step = 2;\n'
        '        http = "[::1]:9100"; http_linger_s = 1.0; http_dashboard = "dashboard"; };\n',
    "valid_collective_receives": CFG_BASE +
        'flows = ( { name = "f"; port = "a"; dst_mac = "02:00:00:00:00:02"; dst_ip = "10.0.0.2"; transport = "uc"; qpn = 0x100; dest_qpn = 0x300; count = 2; },\n'
        '          { name = "g"; port = "b"; dst_mac = "02:00:00:00:00:01"; dst_ip = "10.0.0.1"; transport = "uc"; qpn = 0x200; dest_qpn = 0x400; count = 2; } );\n'
        'collectives = ( { name = "ra"; type = "ring"; flows = ["f"]; phases = 6; receives = ( { port = "a"; qpn = 0x400; count = 2; } ); },\n'
        '                { name = "rb"; type = "ring"; flows = ["g"]; phases = 6;\n'
        '                  receives = ( { port = "b"; qpn = 0x300; count = 2; }, { port = "b"; qpn = 0x10000; } ); } );\n'
        'run = { duration_s = 5; };\n',
    "valid_other_forms": 'eal = { lcores = "0-1"; log_level = 7; extra_args = ("-v"); };\n'
        'ports = ( { name = "a"; device = "net_ring0"; ipv4 = "10.0.0.1"; ipv6 = "fd00::1"; link_speed_gbps = 10; mtu = 9000;\n'
        '  qos = { trust = "dscp"; dscp_to_priority = [' + ", ".join(str(d % 8) for d in range(64)) + '];\n'
        '          pfc_xoff = { priorities = [3]; xoff_bytes = 1000L; xon_bytes = 10; drain_gbps = 1; }; }; } );\n'
        'lcores = ( { lcore = 1; port = "a"; role = "txrx"; } );\n'
        'flows = ( { name = "f"; port = "a"; dst_mac = "02:00:00:00:00:02"; dst_ip = "fd00::2"; transport = "uc";\n'
        '            message_size = { dist = "fixed"; size = 4096; }; mtu = 4096; udp_sport = "entropy"; ecn = 1;\n'
        '            qpn = 2; dest_qpn = 2; rate_pps = 1000; pattern = "constant";\n'
        '            latency = { mode = "off"; }; stop = { messages = 10L; }; },\n'
        '          { name = "g"; port = "a"; dst_mac = "02:00:00:00:00:02"; dst_ip = "10.0.0.2"; qpn = 3; dest_qpn = 3;\n'
        '            ops = { write_imm = 1; }; message_size = 100; latency = { mode = "pingpong"; }; sport_step = 0;\n'
        '            udp_sport = 4791; count = 2; qpn_step = 0x100; } );\n'
        'sla = ( { flow = "g"; metric = "p99_9_latency_ns"; max = 1e6; }, { port = "a"; metric = "pfc_rx_per_s"; max = 1; } );\n'
        'run = { http = "127.0.0.1:9100"; capture_ports = ["a"]; };\n',
    "valid_switch": 'eal = { lcores = "0-1"; memory_mb = 2048; };\n'
        'ports = ( { name = "h0"; device = "ring:l0:a"; mac = "02:00:00:0a:00:01"; ipv4 = "10.1.0.1"; link_speed_gbps = 4.0; },\n'
        '          { name = "h1"; device = "ring:l1:a"; mac = "02:00:00:0a:00:02"; ipv4 = "10.1.0.2"; link_speed_gbps = 4.0; },\n'
        '          { name = "s0"; device = "ring:l0:b"; ipv4 = "10.1.255.0"; link_speed_gbps = 4.0; },\n'
        '          { name = "s1"; device = "ring:l1:b"; ipv4 = "10.1.255.1"; link_speed_gbps = 4.0; } );\n'
        'lcores = ( { lcore = 1; port = "h0"; role = "txrx"; }, { lcore = 1; port = "h1"; role = "txrx"; },\n'
        '           { lcore = 1; port = "s0"; role = "switch"; }, { lcore = 1; port = "s1"; role = "switch"; } );\n'
        'switch = { buffer_kb = 4096; queue_limit_kb = 256; alpha = 0.5; delay_us = 2.0; trace = "q.csv"; trace_interval_us = 100.0;\n'
        '           seed = 7; pfc = { priorities = [3]; xoff_kb = 128; xon_kb = 96; headroom_kb = 512; quanta = 65535; };\n'
        '           ecn = ( { tc = 3; kmin_kb = 64; kmax_kb = 256; pmax = 0.2; } );\n'
        '           fdb = ( { mac = "02:00:00:0a:00:02"; port = "s1"; } ); vlans = ( { vid = 100; ports = ["s0", "s1"]; } ); };\n'
        'flows = ( { name = "f0"; port = "h0"; dst_mac = "02:00:00:0a:00:02"; dst_ip = "10.1.0.2"; qpn = 0x100; dest_qpn = 0x200;\n'
        '            transport = "uc"; ops = { write = 1; }; cc = "dcqcn"; rate_gbps = 1.5; } );\n'
        'run = { http = 9100; };\n',
    "valid_fabric_tiers": 'eal = { lcores = "0-1"; memory_mb = 1024; };\n'
        'fabric = { kind = "leaf-spine"; leaves = 2; spines = 1; hosts_per_leaf = 2; host_gbps = 1.0; uplink_gbps = 1.0; };\n'
        'switch = { buffer_kb = 1024; pfc = { priorities = [3]; xoff_kb = 64; xon_kb = 48; headroom_kb = 128; };\n'
        '           leaf = { buffer_kb = 512; queue_limit_kb = 256; alpha = 0.5; };\n'
        '           spine = { buffer_kb = 4096; pfc = { priorities = [3, 4]; xoff_kb = 256; xon_kb = 200; headroom_kb = 256; };\n'
        '                     ecn = ( { tc = 3; kmin_kb = 100; kmax_kb = 400; pmax = 0.1; } ); }; };\n'
        'flows = ( { name = "x"; port = "h0"; dst = "h2"; transport = "uc"; ops = { write = 1; }; message_size = 4096;\n'
        '            qpn = 0x100; dest_qpn = 0x200; } );\n',
}

# One broken configuration per kind of fault (the unit tests hold the full tables).
CONFIG_BROKEN = {
    "bad_syntax_semicolon": 'eal = { lcores = "0-1" }\nports = ( );\n',
    "bad_syntax_unclosed_group": CFG_BASE + 'run = { duration_s = 1;\n',
    "bad_syntax_unclosed_string": CFG_BASE + 'run = { report = "r.json; };\n',
    "bad_syntax_comment": CFG_BASE + '/* run = { };\n',
    "bad_syntax_number": CFG_BASE + 'run = { duration_s = 1.2.3; };\n',
    "bad_include": '@include "other.cfg"\n' + CFG_BASE,
    "bad_syntax_json": '{\n  "eal": { "lcores": "0-1" },\n  "ports": [ ]\n}\n',
    "bad_syntax_unit": CFG_BASE + CFG_FLOW % 'message_size = 64K;',
    "bad_syntax_unquoted": CFG_BASE + CFG_FLOW % 'transport = rc;',
    "bad_syntax_trailing_comma": CFG_BASE + 'run = { capture_ports = ["a",]; };\n',
    "bad_syntax_dotted_name": CFG_BASE + 'run.duration_s = 1;\n',
    "bad_int_overflow": CFG_BASE + CFG_FLOW % 'count = 4294967298;',
    "bad_hex_overflow": CFG_BASE + CFG_FLOW % 'transport = "ud"; qkey = 0x100000000;',
    "bad_int64_overflow": CFG_BASE + 'run = { duration_s = 99999999999999999999999L; };\n',
    "bad_unknown_top": CFG_BASE + 'flow = ( );\n',
    "bad_unknown_flow": CFG_BASE + CFG_FLOW % 'rate_gbs = 1;',
    "bad_type_list_for_group": CFG_BASE + 'run = ( );\n',
    "bad_type_float_for_int": CFG_BASE + CFG_FLOW % 'count = 1.5;',
    "bad_range_qpn": CFG_BASE + CFG_FLOW % 'dest_qpn_step = 0x1000000;',
    "bad_missing_required": CFG_BASE + 'flows = ( { name = "f"; port = "a"; } );\n',
    "bad_port_unknown": CFG_BASE + CFG_FLOW.replace('port = "a"', 'port = "z"') % '',
    "bad_two_roles": 'eal = { lcores = "0-1"; };\nports = ( { name = "a"; device = "ring:x:a"; ipv4 = "10.0.0.1"; link_speed_gbps = 10; } );\n'
                     'lcores = ( { lcore = 1; port = "a"; role = "tx"; }, { lcore = 1; port = "a"; role = "txrx"; } );\n',
    "bad_qpn_overlap": CFG_BASE + 'flows = ( { name = "f"; port = "a"; dst_mac = "02:00:00:00:00:02"; dst_ip = "10.0.0.2"; qpn = 0x100; dest_qpn = 2; count = 4; },\n'
                       '          { name = "g"; port = "a"; dst_mac = "02:00:00:00:00:02"; dst_ip = "10.0.0.2"; qpn = 0x102; dest_qpn = 2; } );\n',
    "bad_switch_one_port": CFG_BASE.replace('port = "b"; role = "txrx"', 'port = "b"; role = "switch"') + 'switch = { };\n',
    "bad_sla_unknown_flow": CFG_BASE + CFG_FLOW % '' + 'sla = ( { flow = "nope"; metric = "loss"; max = 0.0; } );\n',
    "bad_http_address": CFG_BASE + 'run = { http = "localhost:9100"; };\n',
    "bad_collective_stop": CFG_BASE + CFG_FLOW % 'stop = { messages = 5; };' +
                           'collectives = ( { name = "c"; flows = ["f"]; phases = 2; } );\n',
    "bad_collective_receive_overlap": CFG_BASE + CFG_FLOW % '' +
        'collectives = ( { name = "c"; flows = ["f"]; phases = 2;\n'
        '                  receives = ( { port = "b"; qpn = 0x200; count = 4; }, { port = "b"; qpn = 0x203; } ); } );\n',
}

# Inputs that once broke an invariant (the fuzzer's findings, kept as regressions; see
# docs/reliability.md): what was wrong, then the input.
CONFIG_REGRESSIONS = {
    # a vertical tab between settings: libconfig's blanks are space, tab, CR, LF and FF, so it
    # refuses the text; the loader's own reading of the grammar took \v for a blank
    "regress_vertical_tab": CFG_BASE.replace("\n", "\v", 1),
    # "10re = 5" is two settings to libconfig (the number 10, then re = 5): the loader's reading
    # called "10re" a number with a unit
    "regress_number_then_name": CFG_BASE + 'run = { duration_s = 10re = 5; };\n',
    # an included name with bytes that are not text: the message carried them raw
    "regress_include_nonprintable": '@include "ot\xff\xffr.cfg"\n' + CFG_BASE,
    # run.http with a control character in the address: the message carried it raw (two lines on
    # a terminal); config_parse_listen() now shows user text through cr_shown()
    "regress_http_control_char": CFG_BASE + 'run = { http = "localh\x10ost:9100"; };\n',
    # the same for a collective's and a phase's flow name
    "regress_collective_flow_control_char": CFG_BASE + CFG_FLOW % '' +
        'collectives = ( { name = "c"; flows = ["f\\ng"]; phases = 2; } );\n',
    "regress_phase_flow_control_char": CFG_BASE + CFG_FLOW % '' +
        'phases = ( { name = "p"; at_s = 1.0; rates = ( { flow = "\\x1b[2J"; gbps = 1.0; } ); } );\n',
    # an overflowing integer on the line after its name: the message named no setting
    "regress_overflow_next_line": CFG_BASE + 'run = { duration_s =\n 4294967298; };\n',
    # a float without its leading digit was taken for an overflowing integer
    "regress_float_leading_dot": CFG_BASE + 'run = { duration_s = .99999999999; };\n',
    # a 64-bit hex literal with the top bit set: llabs(LLONG_MIN) in the range message
    "regress_hex64_min": CFG_BASE + CFG_FLOW.replace("qpn = 0x100", "qpn = 0x8000000000000000L") % '',
}


def config_dictionary(root):
    """libFuzzer dictionary lines: the loader's names and values, then the grammar's tokens."""
    words = set()
    # the loader's files (config/config_load.c and one per section), not the generic reader's
    src = ""
    for path in sorted(glob.glob(os.path.join(root, "config", "config_*.c"))):
        if not os.path.basename(path).startswith("config_read"):
            with open(path) as f:
                src += f.read()
    # string literals that look like a setting name or a keyword value ("rate_gbps", "txrx", ...)
    words.update(w for w in re.findall(r'"([a-z][a-z0-9_-]*)"', src) if 1 < len(w) <= 32)
    with open(os.path.join(root, "cc", "cc_params.c")) as f:
        src = f.read()
    words.update(re.findall(r'\b(?:DQ|TM)\((\w+),', src))
    words.update(re.findall(r'= "(\w+)"', src))
    lines = ["# libFuzzer dictionary of the configuration loader (tests/fuzz/fuzz_config.c).",
             "# Generated by tests/fuzz/make_corpus.py config --out DIR --dict tests/fuzz/config.dict (do not edit by hand).",
             "# setting names and keyword values, bare and as strings"]
    for w in sorted(words):
        lines.append(f'"{w}"')
        lines.append(f'"\\"{w}\\""')
    lines.append("# grammar")
    tokens = [" = ", ": ", "; ", "{ ", " }", "( ", " )", "[", "]", ", ", "\\\"", "\\x0a", "true", "false",
              "#", "//", "/*", "*/", "@include ", "0x", "L", "-", ".", "e9", "0", "1", "-1", "65536", "0xFFFFFF",
              "0x1000000", "2147483648", "4294967296", "0xFFFFFFFF", "9223372036854775807L", "1e300", ".5",
              "\\\"*\\\"", "\\\"\\\"", "\\\"\\\\n\\\"",
              "\\\"02:00:00:00:00:01\\\"", "\\\"10.0.0.1\\\"", "\\\"fd00::1\\\"", "\\\"net_ring0\\\"",
              "\\\"ring:x:a\\\"", "\\\"ring:x:b\\\"", "\\\"0000:01:00.0\\\"", "\\\"0-1\\\"",
              "\\\"127.0.0.1:9100\\\"", "\\\"[::1]:9100\\\"", "\\\"on-off\\\""]
    for t in tokens:
        lines.append(f'"{t}"')
    return "\n".join(lines) + "\n"


INCLUDE = re.compile(rb'^[ \t]*@include[ \t]+"([^"]+)"[ \t]*(?:(?:#|//).*)?$')


def inlined(path, depth=0):
    """The file with each @include line replaced by the file it names (found beside the file that
    names it, as the loader does): the target loads text, which has no folder to include from."""
    with open(path, "rb") as f:
        lines = f.read().split(b"\n")
    out = []
    for line in lines:
        m = INCLUDE.match(line)
        if m and depth < 10:
            out.append(inlined(os.path.join(os.path.dirname(path), m.group(1).decode()), depth + 1).rstrip(b"\n"))
        else:
            out.append(line)
    return b"\n".join(out)


def make_config_corpus(root, out, dict_path):
    seeds = {}
    for path in sorted(glob.glob(os.path.join(root, "configs", "**", "*.cfg"), recursive=True)):
        rel = os.path.relpath(path, os.path.join(root, "configs"))
        seeds["shipped_" + rel.replace(os.sep, "_")] = inlined(path)
    for table in (CONFIG_VALID, CONFIG_BROKEN, CONFIG_REGRESSIONS):
        for name, text in table.items():
            seeds[name + ".cfg"] = text.encode()
    if os.path.isdir(out):
        shutil.rmtree(out)
    os.makedirs(out)
    for name, data in sorted(seeds.items()):
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
    print(f"{len(seeds)} seeds, {sum(len(d) for d in seeds.values())} bytes in {out}")
    if dict_path:
        with open(dict_path, "w") as f:
            f.write(config_dictionary(root))
        print(f"dictionary {dict_path}")


def make_parse_corpus(args):
    specs = frame_specs()
    with tempfile.TemporaryDirectory() as tmp:
        pcap = os.path.join(tmp, "seeds.pcap")
        subprocess.run([args.roce_pcap, "write", pcap] + [d for _, d in specs], check=True)
        frames = read_pcap(pcap)
    if len(frames) != len(specs):
        sys.exit(f"expected {len(specs)} frames, got {len(frames)}")
    seeds = {name: f for (name, _), f in zip(specs, frames)}
    seeds.update(derived(seeds))

    if os.path.isdir(args.out):
        shutil.rmtree(args.out)
    os.makedirs(args.out)
    total = 0
    for name, f in sorted(seeds.items()):
        with open(os.path.join(args.out, name), "wb") as out:
            out.write(f)
        total += len(f)
    print(f"{len(seeds)} seeds, {total} bytes in {args.out}")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("target", nargs="?", choices=["parse", "config"], default="parse",
                    help="which corpus (default: parse)")
    ap.add_argument("--roce-pcap", default=os.path.join(root, "build", "apps", "roce-pcap"))
    ap.add_argument("--out", help="the corpus folder (parse: default tests/fuzz/corpus/parse; config: required)")
    ap.add_argument("--dict", help="config: also write the dictionary here (tests/fuzz/config.dict)")
    args = ap.parse_args()
    if not args.out and args.target == "config":
        ap.error("config: --out DIR is required (the seeds are made at test time, not kept in the tree)")
    if not args.out:
        args.out = os.path.join(here, "corpus", args.target)
    if args.target == "config":
        make_config_corpus(root, args.out, args.dict)
    else:
        make_parse_corpus(args)


if __name__ == "__main__":
    main()
