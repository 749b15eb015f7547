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
