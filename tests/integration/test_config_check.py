"""Configurations that `roce-engine --check` accepts must start, and those it cannot start are
refused at --check with the file, line and setting (docs/config.md). Each case here once passed
--check and then failed or misbehaved at run time (issue 19, item 5)."""
import pytest

from test_engine import MAC_A, MAC_B, cfg, flow, pair_ports, port, role


def _exact_run(engine, ports, roles, ip_b, msgs=200):
    f = flow("f", "a", MAC_B, ip_b, transport='"ud"', ops="{ send = 1; }", message_size=512, qpn="0x100",
             dest_qpn="0x300", rate_gbps=1.0, stop="{ messages = %d; }" % msgs)
    return engine.run(cfg(ports, roles, [f]))


# ---- ring cables ---------------------------------------------------------------------------------

@pytest.mark.parametrize("link", ["abcdefghijklm", "abcdefghijklmnopqrst", "A_b-1"])
def test_ring_link_names_of_every_allowed_length_start(engine, link):
    """LINK is 1..20 characters (docs/config.md); 13 and more once made EAL's vdev name too long."""
    ports, ip_b = pair_ports(link=link)
    text = cfg(ports, [role(1, "a", "tx"), role(1, "b", "rx")], [])
    rc, _, out = engine.run(text, "--check", report=False)
    assert rc == 0, out
    rc, rep, out = _exact_run(engine, ports, [role(1, "a", "tx"), role(1, "b", "rx")], ip_b)
    assert rc == 0, out
    a, b = rep["ports"]
    assert a["tx_packets"] == 200 == b["rx_packets"]
    assert [p["mbufs_in_use_at_exit"] for p in rep["ports"]] == [0, 0]


def test_ring_cable_queue_counts_that_would_lose_frames_are_refused(engine):
    """Frames of a TX queue the other end does not have once vanished (their mbufs leaked)."""
    ports, _ = pair_ports()
    ports[0] = ports[0].replace("link_speed_gbps", "tx_queues = 2; link_speed_gbps")
    text = cfg(ports, [role(1, "a", "tx", 0), role(1, "a", "tx", 1), role(1, "b", "rx")], [])
    rc, _, out = engine.run(text, "--check", report=False)
    assert rc == 3, out
    assert "run1.cfg:4: ports.[1].rx_queues: port 'a' (ring:lab:a) has tx_queues 2 but the other end of its " \
           "ring cable, port 'b' (ring:lab:b), has rx_queues 1" in out, out


def test_ring_cable_with_every_queue_polled_carries_all(engine):
    """Equal counts at both ends: every TX queue's frames arrive at the RX queue of its number."""
    ports, ip_b = pair_ports()
    ports = [p.replace("link_speed_gbps", "rx_queues = 2; tx_queues = 2; link_speed_gbps") for p in ports]
    # class 1 (DSCP 8) goes out on TX queue 1, class 3 (DSCP 26) on queue 0
    ports[0] = ports[0].replace("link_speed_gbps", "qos = { tc_to_queue = [0, 1, 0, 0, 0, 0, 0, 0]; }; link_speed_gbps")
    fl = [flow("f%d" % q, "a", MAC_B, ip_b, transport='"ud"', ops="{ send = 1; }", message_size=256,
               qpn="0x%x" % (0x100 + q), dest_qpn="0x%x" % (0x300 + q), rate_gbps=0.5, dscp=(26, 8)[q],
               stop="{ messages = 300; }") for q in range(2)]
    rc, rep, out = engine.run(cfg(ports, [role(1, "a", "tx", 0), role(1, "a", "tx", 1), role(1, "b", "rx", 0),
                                          role(1, "b", "rx", 1)], fl))
    assert rc == 0, out
    a, b = rep["ports"]
    assert a["tx_packets"] == 600 == b["rx_packets"]
    assert [p["mbufs_in_use_at_exit"] for p in rep["ports"]] == [0, 0]
