#!/usr/bin/python3
"""A fabric's switches as Linux routers in network namespaces: a real switch tier, independent of
the engine, for `fabric.external` (docs/fabric.md, "Real ports and a real switch").

    scripts/linux-fabric.py up FILE [--prefix P] [--router-mac MAC] [--shape [--queue-kb KB]]
                                    [--external-out F] [--roce-fabric PATH]
    scripts/linux-fabric.py down [--prefix P]
    scripts/linux-fabric.py link FILE LINK up|down [--prefix P]
    scripts/linux-fabric.py counters FILE [--prefix P]

`up` reads FILE's `fabric` group through roce-fabric (its NICs, links and routes: the plan the
engine's own switches use) and builds it with the kernel's IPv4 forwarding:
  - a namespace P-<switch> per switch and P-hosts for the NICs' ends: NIC h3 is the veth `h3`
    there (the engine opens it with net_af_packet), its switch's end routes to it by a /32 and a
    permanent neighbour entry with the NIC's MAC, and answers as the NIC's gateway (every
    switch port has the one router MAC, as a real switch's routed ports have);
  - each switch-to-switch link a veth pair addressed 10.255.K.0/31 and .1/31 (K the link's index),
    each end's neighbour entry for the other permanent (no ARP: the links carry data only, so
    their counters are the frames forwarded);
  - each switch's routes as roce-fabric computed them, equal-cost next hops as a multipath route
    hashed on the 5-tuple (net.ipv4.fib_multipath_hash_policy = 1: the UDP source port is the
    RoCEv2 entropy, as on a data-centre switch);
  - --shape: each switch port sends at its link's rate (an HTB class), so that a link is a real
    bottleneck, its queue a byte FIFO of --queue-kb (default 64) that drops at its tail; tc counts
    what it sent and dropped (`tc -s qdisc`). (The kernel's ECN markers, sch_red and fq_codel,
    are modules some kernels lack; the engine's own switches mark.)
  - --external-out F: writes the `external` group to include into FILE's fabric group
    (`@include "F"`): every NIC's device (net_af_packet on its veth) and the router MAC.
`link` takes fabric link LINK (its name in the plan: leaf0-spine1, h3-leaf1) down or up at its
switch end, as a failed port (the veth's peer loses its carrier): the routes over it are dropped
on both ends (net.ipv4.conf.*.ignore_routes_with_linkdown), so ECMP hashes over the others. Then
it does what the fabric's routing protocol would: every switch's routes are computed again over
the switch links that are up (equal-cost shortest paths in hops, as roce-fabric computes them)
and replaced, so that a leaf no longer sends toward a spine that lost its way to the destination
(static routes alone would black-hole those flows for good). It is
what fabric.external.link_command runs here:
    link_command = "/path/to/scripts/linux-fabric.py link /path/to/FILE {link} {state} --prefix P";
`counters` prints the switches' cumulative counters per fabric link as JSON, what
fabric.external.counters_command reads before and after a run: per direction `frames` and
`bytes` the sending end put on the link (for a NIC's link toward its switch, what the switch
received), `dropped` the frames the sending switch's egress FIFO dropped (with --shape):
    counters_command = "/path/to/scripts/linux-fabric.py counters /path/to/FILE --prefix P";
`up` keeps roce-fabric's plan of FILE for prefix P in $TMPDIR/linux-fabric-P.json, so that `link`
and `counters` run without planning again (a link command's time is part of what a failure test
measures); `down` deletes every namespace P-* and that file. Needs root (ip, tc, sysctl in
namespaces).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def sh(*args, ns=None, check=True):
    cmd = (["ip", "netns", "exec", ns] if ns else []) + [str(a) for a in args]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if check and r.returncode:
        sys.exit("linux-fabric: %s: %s" % (" ".join(cmd), r.stderr.strip() or r.stdout.strip()))
    return r.stdout


def namespaces(prefix):
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [l.split()[0] for l in out.splitlines() if l.split() and l.split()[0].startswith(prefix + "-")]


def plan_cache(prefix):
    return os.path.join(tempfile.gettempdir(), "linux-fabric-%s.json" % prefix)


def down(prefix):
    for ns in namespaces(prefix):
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    if os.path.exists(plan_cache(prefix)):
        os.unlink(plan_cache(prefix))


def plan(args):
    """roce-fabric's plan of FILE: its links, NICs and routes. `up` keeps it for its prefix, so that
    `link` and `counters` (a lab's commands, run during trials) need not plan again: a link
    command's time is part of what §11.2 measures. FILE changed since: planned again."""
    key = [os.path.abspath(args.file), os.stat(args.file).st_mtime_ns]
    if args.action != "up":
        try:
            with open(plan_cache(args.prefix)) as f:
                kept = json.load(f)
            if kept["key"] == key:
                return kept["fabric"]
        except (OSError, ValueError, KeyError):
            pass
    with tempfile.TemporaryDirectory() as d:
        rep = os.path.join(d, "plan.json")
        r = subprocess.run([args.roce_fabric, "-q", "--routes", "-r", rep, args.file], capture_output=True, text=True)
        if r.returncode:
            sys.exit("linux-fabric: roce-fabric %s: %s" % (args.file, r.stderr.strip()))
        with open(rep) as f:
            doc = json.load(f)
    fab = dict(doc["fabric"], routes=doc.get("routes", {}))
    if args.action == "up":
        with open(plan_cache(args.prefix) + ".new", "w") as f:
            json.dump({"key": key, "fabric": fab}, f)
        os.replace(plan_cache(args.prefix) + ".new", plan_cache(args.prefix))
    return fab


def namespace(ns):
    sh("ip", "netns", "add", ns)
    sh("ip", "link", "set", "lo", "up", ns=ns)
    for k, v in (("net.ipv4.ip_forward", 1), ("net.ipv4.conf.all.rp_filter", 0), ("net.ipv4.conf.default.rp_filter", 0),
                 ("net.ipv4.conf.all.send_redirects", 0), ("net.ipv4.conf.default.send_redirects", 0),
                 ("net.ipv4.fib_multipath_hash_policy", 1), ("net.ipv6.conf.all.disable_ipv6", 1),
                 ("net.ipv4.conf.all.ignore_routes_with_linkdown", 1),
                 ("net.ipv4.conf.default.ignore_routes_with_linkdown", 1),
                 ("net.ipv6.conf.default.disable_ipv6", 1)):
        sh("sysctl", "-q", "-w", "%s=%s" % (k, v), ns=ns)


def port_queue(ns, dev, gbps, args):
    """The switch port's egress at its link's rate (HTB), its queue a byte FIFO of --queue-kb."""
    if not args.shape:
        return
    rate = "%dkbit" % max(8, round(gbps * 1e6))
    sh("tc", "qdisc", "add", "dev", dev, "root", "handle", "1:", "htb", "default", "1", ns=ns)
    sh("tc", "class", "add", "dev", dev, "parent", "1:", "classid", "1:1", "htb", "rate", rate, "burst", "16k", ns=ns)
    sh("tc", "qdisc", "add", "dev", dev, "parent", "1:1", "handle", "10:", "bfifo", "limit",
       str(int(args.queue_kb * 1024)), ns=ns)


def up(args):
    p = args.prefix
    down(p)
    fab = plan(args)
    hosts = p + "-hosts"
    namespace(hosts)
    sw_ns = {s["name"]: "%s-%s" % (p, s["name"]) for s in fab["switches"]}
    for ns in sw_ns.values():
        namespace(ns)
    nics = {n["link"]: n for n in fab["nic_list"]}
    for k, l in enumerate(fab["links"]):
        dev = "l%d" % k
        if l["name"] in nics:
            n, ns = nics[l["name"]], sw_ns[l["a"]]
            sh("ip", "link", "add", n["name"], "netns", hosts, "type", "veth", "peer", "name", dev, "netns", ns)
            sh("ip", "link", "set", n["name"], "address", n["mac"], "up", ns=hosts)
            sh("ip", "link", "set", dev, "address", args.router_mac, "up", ns=ns)
            sh("ip", "addr", "add", n["gateway"] + "/32", "dev", dev, ns=ns)
            sh("ip", "route", "add", n["ip"] + "/32", "dev", dev, ns=ns)
            sh("ip", "neigh", "replace", n["ip"], "lladdr", n["mac"], "dev", dev, "nud", "permanent", ns=ns)
            port_queue(ns, dev, l["gbps"], args)
            continue
        if k > 255:
            sys.exit("linux-fabric: more than 256 links")
        a, b = sw_ns[l["a"]], sw_ns[l["b"]]
        sh("ip", "link", "add", dev, "netns", a, "type", "veth", "peer", "name", dev, "netns", b)
        for ns, ip in ((a, "10.255.%d.0" % k), (b, "10.255.%d.1" % k)):
            sh("ip", "link", "set", dev, "address", args.router_mac, "up", ns=ns)
            sh("ip", "addr", "add", ip + "/31", "dev", dev, ns=ns)
            port_queue(ns, dev, l["gbps"], args)
        for ns, end in ((a, "a"), (b, "b")):   # no ARP on the links: every frame is data
            sh("ip", "neigh", "replace", next_hop(k, end), "lladdr", args.router_mac, "dev", dev, "nud", "permanent",
               ns=ns)
    converge(fab, args)
    if args.external_out:
        with open(args.external_out, "w") as f:
            f.write("# written by scripts/linux-fabric.py up: the NICs on their veths in namespace %s\n" % hosts)
            f.write('external = { gateway_mac = "%s";\n  nics = (\n' % args.router_mac)
            f.write(",\n".join('    { nic = "%s"; device = "net_af_packet%d"; vdev_args = "iface=%s"; }'
                               % (n["name"], i, n["name"]) for i, n in enumerate(fab["nic_list"])))
            f.write(" );\n};\n")
    print(json.dumps({"hosts_namespace": hosts, "switch_namespaces": sorted(sw_ns.values()),
                      "router_mac": args.router_mac, "nics": [n["name"] for n in fab["nic_list"]]}))


def next_hop(k, end):
    """The address switch link k's `end` ("a" or "b") routes to: the other end's (a is .0, b .1)."""
    return "10.255.%d.%d" % (k, 1 if end == "a" else 0)


def up_switch_links(fab, prefix):
    """The switch-to-switch links up at both ends, by index: (a, b)."""
    names = {s["name"] for s in fab["switches"]}
    state = {sw: {d["ifname"]: d.get("operstate") for d in json.loads(sh("ip", "-j", "link", "show", ns="%s-%s" % (prefix, sw)))}
             for sw in names}
    return {k: (l["a"], l["b"]) for k, l in enumerate(fab["links"])
            if l["b"] in names and state[l["a"]].get("l%d" % k) == "UP" and state[l["b"]].get("l%d" % k) == "UP"}


def hops_to(dst, links):
    """Every switch's distance in hops to switch dst over `links` (those unreachable absent)."""
    dist, todo = {dst: 0}, [dst]
    while todo:
        here = todo.pop(0)
        for a, b in links.values():
            for near, far in ((a, b), (b, a)):
                if near == here and far not in dist:
                    dist[far] = dist[here] + 1
                    todo.append(far)
    return dist


def converge(fab, args):
    """Every switch's route to each destination prefix of the plan: a multipath route over its links
    (up at both ends) to the neighbours one hop nearer the destination's switch; none when it has
    no way there. One `ip -batch` per switch."""
    links = up_switch_links(fab, args.prefix)
    dist = {}
    for sw, routes in fab.get("routes", {}).items():
        batch = []
        for r in routes:
            d = dist.setdefault(r["switch"], hops_to(r["switch"], links))
            hops = []
            for k, (a, b) in sorted(links.items()):
                end, far = ("a", b) if a == sw else ("b", a) if b == sw else (None, None)
                if end and sw in d and d.get(far) == d[sw] - 1:
                    hops += ["nexthop", "via", next_hop(k, end), "dev", "l%d" % k]
            batch.append(" ".join(["route", "replace", r["prefix"]] + hops) if hops else "route flush exact " + r["prefix"])
        r = subprocess.run(["ip", "netns", "exec", "%s-%s" % (args.prefix, sw), "ip", "-batch", "-"],
                           input="\n".join(batch) + "\n", capture_output=True, text=True)
        if r.returncode:
            sys.exit("linux-fabric: routes of %s: %s" % (sw, r.stderr.strip()))


def link(args):
    fab = plan(args)
    for k, l in enumerate(fab["links"]):
        if l["name"] == args.link:
            sh("ip", "link", "set", "l%d" % k, args.state, ns="%s-%s" % (args.prefix, l["a"]))
            converge(fab, args)
            return
    sys.exit("linux-fabric: no link %s in %s" % (args.link, args.file))


def namespace_counters(ns):
    """Every interface of namespace ns: its TX and RX frames and bytes, and what it dropped on the
    way out (its egress FIFO's tail drops and the device's own, sent while it was down); one
    `ip` and one `tc` call for the namespace."""
    fifo = {}
    for q in json.loads(sh("tc", "-s", "-j", "qdisc", "show", ns=ns) or "[]"):
        if q.get("kind") == "bfifo":
            fifo[q["dev"]] = fifo.get(q["dev"], 0) + q.get("drops", 0)
    out = {}
    for d in json.loads(sh("ip", "-s", "-j", "link", "show", ns=ns)):
        st = d["stats64"]
        out[d["ifname"]] = (st["tx"], st["rx"], fifo.get(d["ifname"], 0) + st["tx"].get("dropped", 0))
    return out


def counters(args):
    fab = plan(args)
    nics = {n["name"] for n in fab["nic_list"]}
    ns = {s["name"]: namespace_counters("%s-%s" % (args.prefix, s["name"])) for s in fab["switches"]}
    links = []
    for k, l in enumerate(fab["links"]):
        dev = "l%d" % k
        tx, rx, dropped = ns[l["a"]][dev]
        a_to_b = {"frames": tx["packets"], "bytes": tx["bytes"], "dropped": dropped}
        if l["b"] in nics:      # the NIC's end is no switch: what its switch received of it
            b_to_a = {"frames": rx["packets"], "bytes": rx["bytes"], "dropped": 0}
        else:
            tx_b, _, dropped_b = ns[l["b"]][dev]
            b_to_a = {"frames": tx_b["packets"], "bytes": tx_b["bytes"], "dropped": dropped_b}
        links.append({"name": l["name"], "a": l["a"], "b": l["b"], "a_to_b": a_to_b, "b_to_a": b_to_a})
    print(json.dumps({"links": links}))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("action", choices=["up", "down", "link", "counters"])
    ap.add_argument("file", nargs="?")
    ap.add_argument("link", nargs="?")
    ap.add_argument("state", nargs="?", choices=["up", "down"])
    ap.add_argument("--prefix", default="lf")
    ap.add_argument("--router-mac", default="02:dd:00:00:00:01")
    ap.add_argument("--shape", action="store_true")
    ap.add_argument("--queue-kb", type=float, default=64)
    ap.add_argument("--external-out")
    ap.add_argument("--roce-fabric", default=os.environ.get("ROCE_FABRIC", os.path.join(HERE, "..", "build", "apps",
                                                                                       "roce-fabric")))
    args = ap.parse_args()
    if args.action == "down":
        down(args.prefix)
        return
    if not args.file:
        ap.error("%s needs the config FILE" % args.action)
    if args.action == "counters":
        counters(args)
        return
    if args.action == "link":
        if not args.state:
            ap.error("link needs FILE LINK up|down")
        link(args)
        return
    try:
        up(args)
    except BaseException:
        down(args.prefix)
        raise


if __name__ == "__main__":
    main()
