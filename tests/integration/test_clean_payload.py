"""Clean payloads (transport/tx_payload.h): a TX role's mbufs keep their payload zeros from frame to
frame, so only the old ICRC is cleared. Frames of every size from one pool, recycled thousands of
times, checked on the wire by the independent decoder (ICRC over the whole frame) and byte by byte
(zero payload but the probe)."""
import collections

import oracle_common as oc
from scapy.all import raw, rdpcap

from test_engine import MAC_A, MAC_B, cfg, flow, port, role

LATENCY_PROBE_LEN = 24


def test_mixed_sizes_from_one_pool(engine, tmp_path):
    pcap = tmp_path / "tx.pcap"
    # a small pool (tx_desc 64) so that every mbuf carries frames of many sizes in turn
    p = port("p", "net_pcap0", MAC_A, "192.168.9.1", 'vdev_args = "tx_pcap=%s"; mtu = 4200; tx_desc = 64;' % pcap)
    flows = [
        # fast path, 4 KB single-packet WRITEs with latency probes
        flow("big", "p", MAC_B, "192.168.9.2", transport='"uc"', ops="{ write = 1; }", message_size=4000, mtu=4096,
             qpn="0x40", dest_qpn="0x80", stop="{ messages = 400; }", latency='{ mode = "oneway"; }'),
        # fast path, frames below and just past the 128 bytes the shape copy writes
        flow("small", "p", MAC_B, "192.168.9.2", transport='"uc"', ops="{ send = 1; }", message_size=100, mtu=256,
             qpn="0x50", dest_qpn="0x90", stop="{ messages = 400; }"),
        # the general path: sizes drawn per message, several packets each
        flow("mixed", "p", MAC_B, "192.168.9.2", transport='"uc"', ops="{ write = 1; send = 1; }",
             message_size='{ dist = "uniform"; min = 0; max = 5000; }', mtu=1024, qpn="0x60", dest_qpn="0xa0",
             stop="{ messages = 400; }"),
        # IPv4 UD: a DETH, another header length
        flow("ud", "p", MAC_B, "192.168.9.2", transport='"ud"', ops="{ send = 1; }", message_size=700, mtu=1024,
             qpn="0x70", dest_qpn="0xb0", stop="{ messages = 400; }"),
    ]
    rc, rep, out = engine.run(cfg([p], [role(1, "p", "tx")], flows))
    assert rc == 0, out
    frames = rdpcap(str(pcap))
    assert len(frames) == rep["ports"][0]["tx_packets"] > 1600
    per_qp = collections.Counter()
    for fr in frames:
        d = oc.decode_frame(raw(fr))
        assert d["icrc_wire"] == d["icrc_calc"], "bad ICRC on a %d-byte frame" % d["len"]
        payload = d.get("payload", b"")
        skip = LATENCY_PROBE_LEN if d["bth"]["dqpn"] == 0x80 else 0
        assert payload[skip:] == bytes(len(payload) - skip), "payload not zero (%d-byte frame)" % d["len"]
        assert d["pad_bytes"] == bytes(len(d["pad_bytes"]))
        assert d["trailer"] == bytes(len(d["trailer"])), "Ethernet padding not zero"
        per_qp[d["bth"]["dqpn"]] += 1
    assert set(per_qp) == {0x80, 0x90, 0xA0, 0xB0}
    assert per_qp[0x80] == 400 and per_qp[0x90] == 400 and per_qp[0xB0] == 400


def test_in_process_cable_keeps_writing_zeros(engine):
    """On the in-process ring cable frames can be changed by the receiving side (here RX injection
    corrupts ICRCs): the mode is off there, and every uncorrupted frame still arrives intact."""
    a = port("a", "ring:cp:a", MAC_A, "192.168.7.1")
    b = port("b", "ring:cp:b", MAC_B, "192.168.7.2", 'rx_inject = ( { action = "corrupt"; every = 7; } );')
    f = flow("w", "a", MAC_B, "192.168.7.2", transport='"uc"', ops="{ write = 1; }", message_size=1000, mtu=1024,
             qpn="0x40", dest_qpn="0x80", stop="{ messages = 5000; }")
    g = flow("v", "a", MAC_B, "192.168.7.2", transport='"uc"', ops="{ write = 1; }", message_size=300, mtu=1024,
             qpn="0x41", dest_qpn="0x81", stop="{ messages = 5000; }")
    rc, rep, out = engine.run(cfg([a, b], [role(1, "a", "tx"), role(1, "b", "rx")], [f, g]))
    assert rc == 0, out
    corrupted = rep["errors"]["icrc"]
    assert corrupted == 10000 // 7
    assert rep["ports"][1]["rx_packets"] == 10000
    qps = {q["qpn"]: q for q in rep["rx_qps"]}
    assert qps[0x80]["icrc_errors"] + qps[0x81]["icrc_errors"] == corrupted
