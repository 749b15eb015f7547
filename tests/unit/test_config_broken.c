/* SPDX-License-Identifier: BSD-3-Clause
 *
 * A table of broken configurations, one test case per row: each must fail to load with exactly
 * one line "broken.cfg:LINE: SETTING: what is wrong" (docs/config.md#error-messages) naming the
 * expected line and setting and containing the expected words. SETTING is also looked up with
 * config_lookup() in the same text: it is the setting at fault, at LINE, or (when it is missing)
 * a member of the group at LINE.
 *
 * The rows complement the tables of test_config.c (none repeats one of them): the sections those
 * leave out (switch, collectives, responders, peers, SLA checks, phases, PFC generators, HTTP,
 * captures, RC and congestion-control groups) and further faults of each kind: syntax, unknown
 * settings, wrong types, out-of-range values, contradictions between settings. SHOW_ERRORS=1 in
 * the environment prints every message.
 */
#include <libconfig.h>

#include "config.h"
#include "testlib.h"

#define NAME "broken.cfg"

/* A valid base: eal on line 1, two ports on line 2, their roles on line 3; rows add from line 4. */
#define EAL "eal = { lcores = \"0-1\"; };\n"
#define PORT_A "{ name = \"a\"; device = \"ring:x:a\"; ipv4 = \"10.0.0.1\"; link_speed_gbps = 100; "
#define PORT_B "{ name = \"b\"; device = \"ring:x:b\"; ipv4 = \"10.0.0.2\"; link_speed_gbps = 100; }"
#define PORTS "ports = ( " PORT_A "}, " PORT_B " );\n"
#define ROLES "lcores = ( { lcore = 1; port = \"a\"; role = \"txrx\"; }, { lcore = 1; port = \"b\"; role = \"txrx\"; } );\n"
#define BASE EAL PORTS ROLES
/* port a with more settings (line 2) */
#define PORT(x) EAL "ports = ( " PORT_A x " }, " PORT_B " );\n" ROLES
/* a flow from a to b on line 4, with more settings */
#define F0 "name = \"f\"; port = \"a\"; dst_mac = \"02:00:00:00:00:02\"; dst_ip = \"10.0.0.2\"; qpn = 0x100; dest_qpn = 0x200; "
#define FLOW(x) BASE "flows = ( { " F0 x " } );\n"
/* two flows on line 4 (f, rate 1 Gb/s) and line 5 (g), then rows add from line 6 */
#define FLOWS2(x, y) BASE "flows = ( { " F0 "rate_gbps = 1.0; " x " },\n"                                          \
	"  { name = \"g\"; port = \"b\"; dst_mac = \"02:00:00:00:00:01\"; dst_ip = \"10.0.0.1\"; qpn = 0x100; "    \
	"dest_qpn = 0x200; " y " } );\n"
/* a collective of flow f (line 6) whose receive ranges are x (g sends from b to a's 0x200) */
#define COLL_RX(x) FLOWS2("", "") "collectives = ( { name = \"c\"; flows = [\"f\"]; phases = 2; receives = ( " x " ); } );\n"
/* the virtual lab: hosts h0, h1 cabled to switch ports s0, s1 (line 2), roles on line 3, the switch
 * group on line 4 */
#define LAB_PORTS                                                                                              \
	"ports = ( { name = \"h0\"; device = \"ring:l0:a\"; ipv4 = \"10.1.0.1\"; link_speed_gbps = 4; },"        \
	" { name = \"h1\"; device = \"ring:l1:a\"; ipv4 = \"10.1.0.2\"; link_speed_gbps = 4; },"                   \
	" { name = \"s0\"; device = \"ring:l0:b\"; ipv4 = \"10.1.255.0\"; link_speed_gbps = 4; },"                 \
	" { name = \"s1\"; device = \"ring:l1:b\"; ipv4 = \"10.1.255.1\"; link_speed_gbps = 4; } );\n"
#define LAB_ROLES(s1lcore)                                                                                     \
	"lcores = ( { lcore = 1; port = \"h0\"; role = \"txrx\"; }, { lcore = 1; port = \"h1\"; role = \"txrx\"; },"   \
	" { lcore = 1; port = \"s0\"; role = \"switch\"; }, { lcore = " s1lcore "; port = \"s1\"; role = \"switch\"; } );\n"
#define LAB(x) "eal = { lcores = \"0-2\"; };\n" LAB_PORTS LAB_ROLES("1") "switch = { " x " };\n"
/* 33 EAL arguments (at most 32) */
#define ARGS4 "\"-v\", \"-v\", \"-v\", \"-v\", "
#define ARGS33 "[" ARGS4 ARGS4 ARGS4 ARGS4 ARGS4 ARGS4 ARGS4 ARGS4 "\"-v\"]"

struct bad {
	const char *kind;     /* syntax, unknown, type, range, contradiction */
	const char *name;     /* the case's name in the output */
	const char *text;
	unsigned line;
	const char *setting;  /* what follows "NAME:LINE: " up to ": " ("syntax error", "@include") */
	const char *what;     /* a substring of the rest */
};

static const struct bad rows[] = {
	/* ---- syntax ---------------------------------------------------------------------------- *
	 * what libconfig calls "syntax error", said with what was found and what was expected */
	{ "syntax", "missing comma between list elements",
	  EAL "ports = ( " PORT_A "}\n " PORT_B " );\n" ROLES, 3, "syntax error",
	  "found '{' where ',' or ')' was expected: a missing ',' between the elements of a list?" },
	{ "syntax", "semicolon between list elements",
	  EAL "ports = ( " PORT_A "};\n " PORT_B " );\n" ROLES, 2, "syntax error",
	  "found ';' where ',' or ')' was expected: the elements of a list are separated by ','" },
	{ "syntax", "group left open in the middle of the file (the end names where it opened)",
	  BASE "run = { duration_s = 1;\nsla = ( );\n", 6, "syntax error",
	  "found the end of the text where '}' was expected: the '{' at line 4 is never closed" },
	{ "syntax", "array left open", BASE "run = { capture_ports = [\"a\", \"b\"; };\n", 4, "syntax error",
	  "found ';' where ',' or ']' was expected: the elements of an array are separated by ','" },
	{ "syntax", "string left open, later strings pair up wrongly",
	  BASE "run = { report = \"r.json;\n capture = \"c.pcapng\"; };\n", 5, "syntax error", "unterminated string" },
	{ "syntax", "number with two decimal points", BASE "run = { duration_s = 1.2.3; };\n", 4, "syntax error",
	  "found '1.2.3' where a value was expected: not a number" },
	{ "syntax", "number with letters", BASE "run = { capture_every = 12abc; };\n", 4, "syntax error",
	  "found '12abc' where a value was expected: numbers take no unit suffix" },
	{ "syntax", "negative hex (libconfig has none)", BASE "run = { capture_every = -0x10; };\n", 4, "syntax error",
	  "found '-0x10' where a value was expected: hex numbers have no sign in libconfig" },
	{ "syntax", "missing = ", BASE "run = { duration_s 5; };\n", 4, "syntax error",
	  "found '5' where '=' or ':' after the name 'duration_s' was expected" },
	{ "syntax", "missing value", BASE "run = { duration_s = ; };\n", 4, "syntax error", "found ';' where a value was expected" },
	{ "syntax", "setting name starting with a digit", BASE "run = { 1x = 5; };\n", 4, "syntax error",
	  "found '1x' where a setting name or '}' was expected: a name begins with a letter or '*'" },
	{ "syntax", "section given twice", BASE "run = { report = \"r.json\"; };\nrun = { report = \"s.json\"; };\n", 5,
	  "syntax error", "duplicate setting name" },
	{ "syntax", "hex beyond 64 bits", BASE "run = { capture_every = 0x10000000000000000L; };\n", 4,
	  "run.capture_every", "0x10000000000000000L does not fit a 64-bit integer" },
	{ "syntax", "integer beyond 32 bits on the line after its name", BASE "run = { capture_every =\n 4294967296; };\n",
	  4, "run.capture_every", "4294967296 does not fit a 32-bit integer" },
	{ "syntax", "missing semicolon: optional in libconfig, the next setting is still read and checked",
	  "eal = { lcores = \"0-1\" memory_mb = 8 };\n" PORTS ROLES, 1, "eal.memory_mb", "8 is out of range (16..65536)" },
	/* the usual mistakes, named */
	{ "syntax", "a JSON file", "{\n  \"eal\": { \"lcores\": \"0-1\" }\n}\n", 1, "syntax error",
	  "found '{' where a setting name was expected: this looks like JSON, but the file is libconfig text: "
	  "name = value; groups { ... }, lists ( ..., ... ), arrays [ ..., ... ] (the configuration is libconfig "
	  "text: https://hyperrealm.github.io/libconfig/libconfig_manual.html#Configuration-Files)" },
	{ "syntax", "JSON's quoted names and colons", BASE "\"run\": { duration_s = 1; };\n", 4, "syntax error",
	  "found '\"run\"' where a setting name was expected: names are not quoted (name = value; as JSON's "
	  "\"name\": value would be)" },
	{ "syntax", "a unit suffix: 64K", FLOW("message_size = 64K;"), 4, "syntax error",
	  "found '64K' where a value was expected: numbers take no unit suffix: write the number alone, in the unit "
	  "the setting's name gives (message_size in bytes: 65536, not 64K" },
	{ "syntax", "a unit suffix on a float: 1.5s", BASE "run = { duration_s = 1.5s; };\n", 4, "syntax error",
	  "found '1.5s' where a value was expected: numbers take no unit suffix" },
	{ "syntax", "a missing semicolon and name: two values in a row", BASE "run = { duration_s = 1\n 2; };\n", 5,
	  "syntax error", "found '2' where ';' or the next setting or '}' was expected: 'duration_s' has one value: "
	  "a missing ';' and setting name" },
	{ "syntax", "a string without quotes", FLOW("transport = rc;"), 4, "syntax error",
	  "found 'rc' where a value was expected: a string is written in double quotes: \"rc\"" },
	{ "syntax", "a string in single quotes", FLOW("transport = 'rc';"), 4, "syntax error",
	  "found ''' where a value was expected: strings are written in double quotes, not single" },
	{ "syntax", "yes for true", "eal = { lcores = \"0-1\"; huge_pages = yes; };\n" PORTS ROLES, 1, "syntax error",
	  "found 'yes' where a value was expected: booleans are true or false" },
	{ "syntax", "a comma after the last element", BASE "run = { capture_ports = [\"a\", \"b\",]; };\n", 4,
	  "syntax error", "found ']' where the next element was expected: libconfig allows no ',' after the last element" },
	{ "syntax", "two semicolons", BASE "run = { duration_s = 1;; };\n", 4, "syntax error",
	  "found ';' where a setting name or '}' was expected: a second ';' (one ends a setting)" },
	{ "syntax", "a dotted name", BASE "run.duration_s = 1;\n", 4, "syntax error",
	  "found '.' where '=' or ':' after the name 'run' was expected: names have no '.' (nest groups instead" },
	{ "syntax", "groups in an array", BASE "flows = [ { " F0 "} ];\n", 4, "syntax error",
	  "found '{' where a number, a string or a boolean was expected: an array [ ] holds scalars of one type; a "
	  "list ( ) holds groups" },
	{ "syntax", "a vertical tab between settings (not one of libconfig's blanks)", "eal = { lcores = \"0-1\"; };\v" PORTS ROLES,
	  1, "syntax error", "found '?' where a setting name was expected: byte 0x0b is no text" },
	{ "syntax", "@include inside a line", BASE "run = { duration_s = 1; @include \"x.cfg\" };\n", 4, "syntax error",
	  "found '@include' where a setting name or '}' was expected: @include must begin its line" },

	/* ---- unknown settings -------------------------------------------------------------------- */
	{ "unknown", "switch", LAB("buffer = 100;"), 4, "switch.buffer",
	  "unknown setting 'buffer' (allowed: buffer_kb, queue_limit_kb, alpha, pfc, ecn, delay_us" },
	{ "unknown", "switch.pfc", LAB("pfc = { priorities = [3]; xoff = 100; };"), 4, "switch.pfc.xoff",
	  "unknown setting 'xoff' (allowed: priorities, xoff_kb, xon_kb, headroom_kb, quanta, watchdog)" },
	{ "unknown", "switch.ecn entry", LAB("ecn = ( { tc = 3; kmin = 10; } );"), 4, "switch.ecn.[0].kmin",
	  "unknown setting 'kmin'" },
	{ "unknown", "switch.vlans entry", LAB("vlans = ( { vid = 5; ports = [\"s0\"]; pvid = 1; } );"), 4,
	  "switch.vlans.[0].pvid", "unknown setting 'pvid' (allowed: vid, ports)" },
	{ "unknown", "sla entry", FLOW("") "sla = ( { flow = \"f\"; metric = \"loss\"; threshold = 0.0; } );\n", 5,
	  "sla.[0].threshold", "unknown setting 'threshold' (allowed: flow, port, metric, min, max, priority)" },
	{ "unknown", "collective", FLOW("") "collectives = ( { name = \"c\"; flow = [\"f\"]; phases = 2; } );\n", 5,
	  "collectives.[0].flow", "unknown setting 'flow' (allowed: name, type, flows, phases, compute_us, iteration_phases, receives, repeat, window)" },
	{ "unknown", "collective receive range", COLL_RX("{ port = \"a\"; qpn = 0x200; counts = 2; }"), 6,
	  "collectives.[0].receives.[0].counts", "unknown setting 'counts' (allowed: port, qpn, count)" },
	{ "unknown", "responder", BASE "responders = ( { port = \"a\"; qpn = 0x10; peer_qpn = 0x20; qkey = 1; } );\n", 4,
	  "responders.[0].qkey", "unknown setting 'qkey'" },
	{ "unknown", "phase", BASE "phases = ( { name = \"p\"; at = 1.0; } );\n", 4, "phases.[0].at",
	  "unknown setting 'at' (allowed: name, at_s, egress, rates)" },
	{ "unknown", "phase rate change", FLOW("rate_gbps = 1;") "phases = ( { name = \"p\"; at_s = 1.0; rates = ( { flow = \"f\"; rate = 2.0; } ); } );\n",
	  5, "phases.[0].rates.[0].rate", "unknown setting 'rate' (allowed: flow, gbps)" },
	{ "unknown", "flow rc group", FLOW("rc = { timeout_us = 100; };"), 4, "flows.[0].rc.timeout_us",
	  "unknown setting 'timeout_us' (allowed: retry_timeout_us, retry_limit, max_outstanding, ack_every)" },
	{ "unknown", "flow timely group", FLOW("cc = \"timely\"; timely = { gamma = 0.5; };"), 4, "flows.[0].timely.gamma",
	  "unknown setting 'gamma'" },
	{ "unknown", "port qos.egress", PORT("qos = { egress = { rate_gbps = 10; }; };"), 2, "ports.[0].qos.egress.rate_gbps",
	  "unknown setting 'rate_gbps' (allowed: shape_gbps, strict, weights, tc_shape_gbps)" },
	{ "unknown", "run.http_port (http takes the port)", BASE "run = { http_port = 9100; };\n", 4, "run.http_port",
	  "unknown setting 'http_port'" },

	/* ---- wrong types ------------------------------------------------------------------------- */
	{ "type", "list for a group (switch)", "eal = { lcores = \"0-2\"; };\n" LAB_PORTS LAB_ROLES("1") "switch = ( );\n", 4,
	  "switch", "must be a group { ... }, not a list" },
	{ "type", "integer for a group (flows.rc)", FLOW("rc = 1;"), 4, "flows.[0].rc", "must be a group { ... }, not an integer" },
	{ "type", "group for a list (flows)", BASE "flows = { name = \"f\"; };\n", 4, "flows", "must be a list" },
	{ "type", "group for a list (sla)", FLOW("") "sla = { flow = \"f\"; };\n", 5, "sla", "must be a list of up to 64" },
	{ "type", "string for an integer (collectives.phases)",
	  FLOW("") "collectives = ( { name = \"c\"; flows = [\"f\"]; phases = \"4\"; } );\n", 5, "collectives.[0].phases",
	  "must be an integer, not a string" },
	{ "type", "float for an integer (responders.count)",
	  BASE "responders = ( { port = \"a\"; qpn = 0x10; peer_qpn = 0x20; count = 2.5; } );\n", 4, "responders.[0].count",
	  "must be an integer, not a float" },
	{ "type", "group for a string (ports.device)", EAL "ports = ( { name = \"a\"; device = { }; } );\n" ROLES, 2,
	  "ports.[0].device", "must be a string, not a group" },
	{ "type", "array for a string (run.report)", BASE "run = { report = [\"r.json\"]; };\n", 4, "run.report",
	  "must be a string, not an array" },
	{ "type", "boolean for a number (switch.alpha)", LAB("alpha = true;"), 4, "switch.alpha",
	  "must be a number, not a boolean" },
	{ "type", "integer for a boolean (qos.nic_pfc)", PORT("qos = { nic_pfc = 1; };"), 2, "ports.[0].qos.nic_pfc",
	  "must be true or false, not an integer" },
	{ "type", "integer for an array (pfc_generators.priorities)",
	  BASE "pfc_generators = ( { port = \"a\"; priorities = 3; rate_pps = 10.0; } );\n", 4,
	  "pfc_generators.[0].priorities", "must be a non-empty array of priorities 0..7" },
	{ "type", "string for an array (run.capture_ports)", BASE "run = { capture_ports = \"a\"; };\n", 4,
	  "run.capture_ports", "must be a non-empty array of port names" },
	{ "type", "float for a port (run.http)", BASE "run = { http = 9100.0; };\n", 4, "run.http",
	  "must be a string \"[ADDRESS:]PORT\" or a port number, not a float" },
	{ "type", "group for a list (switch.vlans)", LAB("vlans = { vid = 5; };"), 4, "switch.vlans",
	  "must be a list of up to 32" },
	{ "type", "group for a collective's receives list",
	  FLOWS2("", "") "collectives = ( { name = \"c\"; flows = [\"f\"]; phases = 2; receives = { port = \"a\"; }; } );\n", 6,
	  "collectives.[0].receives", "must be a list ( { port = ...; qpn = ...; count = N; }, ... ), not a group" },
	{ "type", "integer for a receive range", COLL_RX("5"), 6, "collectives.[0].receives.[0]",
	  "must be a group { port = ...; qpn = ...; count = N; }, not an integer" },
	{ "type", "integer in a list of flow names", FLOW("") "collectives = ( { name = \"c\"; flows = [1]; phases = 2; } );\n",
	  5, "collectives.[0].flows.[0]", "element 0 is not a string (a flow name)" },

	/* ---- out of range -------------------------------------------------------------------------- */
	{ "range", "a flow that starts before the traffic", FLOW("start_s = -1;"), 4, "flows.[0].start_s",
	  "out of range" },
	{ "range", "a start time in seconds, not since the epoch (run.start_at_unix_s)",
	  BASE "run = { start_at_unix_s = 5.0; };\n", 4, "run.start_at_unix_s", "out of range" },
	{ "range", "QPN above 24 bits (responders.qpn)",
	  BASE "responders = ( { port = \"a\"; qpn = 0x1000000; peer_qpn = 0x20; } );\n", 4, "responders.[0].qpn",
	  "16777216 is out of range (2..16777215)" },
	{ "range", "QPN 0 and 1 are reserved (peers.peer_qpn)", BASE "peers = ( { port = \"a\"; qpn = 0x10; peer_qpn = 1; } );\n",
	  4, "peers.[0].peer_qpn", "1 is out of range (2..16777215)" },
	{ "range", "QPN expansion past 24 bits (responders.count)",
	  BASE "responders = ( { port = \"a\"; qpn = 0xFFFFF0; peer_qpn = 0x20; count = 32; } );\n", 4, "responders.[0].count",
	  "the last qpn or peer_qpn would pass 0xFFFFFF" },
	{ "range", "port MTU below 576", PORT("mtu = 575;"), 2, "ports.[0].mtu", "575 is out of range (576..9000)" },
	{ "range", "responder IB MTU not a power of two", BASE "responders = ( { port = \"a\"; qpn = 0x10; peer_qpn = 0x20; mtu = 1000; } );\n",
	  4, "responders.[0].mtu", "1000 is not an IB MTU (256, 512, 1024, 2048 or 4096)" },
	{ "range", "rate 0 Gb/s", FLOW("rate_gbps = 0;"), 4, "flows.[0].rate_gbps", "0 is out of range (> 0 and <= 800)" },
	{ "range", "phase rate 0 Gb/s", FLOW("rate_gbps = 1;") "phases = ( { name = \"p\"; at_s = 1.0; rates = ( { flow = \"f\"; gbps = 0.0; } ); } );\n",
	  5, "phases.[0].rates.[0].gbps", "0 is out of range (> 0 and <= 800)" },
	{ "range", "egress shaper above 800 Gb/s", PORT("qos = { egress = { shape_gbps = 10; tc_shape_gbps = [0, 0, 0, 900, 0, 0, 0, 0]; }; };"),
	  2, "ports.[0].qos.egress.tc_shape_gbps", "element 3 must be a number 0..800" },
	{ "range", "DSCP map to priority 8", PORT("qos = { dscp_to_priority = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,"
						 " 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,"
						 " 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]; };"),
	  2, "ports.[0].qos.dscp_to_priority", "element 26 (DSCP 26) must be a priority 0..7" },
	{ "range", "PFC priority 8 (switch.pfc)", LAB("pfc = { priorities = [8]; };"), 4, "switch.pfc.priorities.[0]",
	  "8 is out of range (0..7)" },
	{ "range", "SLA priority 8", FLOW("") "sla = ( { port = \"a\"; metric = \"pause_percent\"; max = 1.0; priority = 8; } );\n", 5,
	  "sla.[0].priority", "8 is out of range (0..7)" },
	{ "range", "VLAN 0 (switch.vlans)", LAB("vlans = ( { vid = 0; ports = [\"s0\"]; } );"), 4, "switch.vlans.[0].vid",
	  "0 is out of range (1..4094)" },
	{ "range", "VLAN 4095 (switch.vlans)", LAB("vlans = ( { vid = 4095; ports = [\"s0\"]; } );"), 4, "switch.vlans.[0].vid",
	  "4095 is out of range (1..4094)" },
	{ "range", "VLAN 4095 (a flow's tag: reserved by 802.1Q)", FLOW("vlan = 4095;"), 4, "flows.[0].vlan",
	  "4095 is out of range (0..4094)" },
	{ "range", "collective of 0 phases", FLOW("") "collectives = ( { name = \"c\"; flows = [\"f\"]; phases = 0; } );\n", 5,
	  "collectives.[0].phases", "0 is out of range (1..4096)" },
	{ "range", "collective of no flows", FLOW("") "collectives = ( { name = \"c\"; flows = [ ]; phases = 2; } );\n", 5,
	  "collectives.[0].flows", "0 flows (allowed: 1..256)" },
	{ "range", "receive range of 0 QPs", COLL_RX("{ port = \"a\"; qpn = 0x200; count = 0; }"), 6,
	  "collectives.[0].receives.[0].count", "0 is out of range (1..65536)" },
	{ "range", "receive range of 65537 QPs", COLL_RX("{ port = \"a\"; qpn = 0x200; count = 65537; }"), 6,
	  "collectives.[0].receives.[0].count", "65537 is out of range (1..65536)" },
	{ "range", "receive QPN 1", COLL_RX("{ port = \"a\"; qpn = 1; }"), 6, "collectives.[0].receives.[0].qpn",
	  "out of range (0x2..0xffffff)" },
	{ "range", "receive QPN above 24 bits", COLL_RX("{ port = \"a\"; qpn = 0x1000000; }"), 6,
	  "collectives.[0].receives.[0].qpn", "out of range (0x2..0xffffff)" },
	{ "range", "receive range past 0xFFFFFF", COLL_RX("{ port = \"a\"; qpn = 0xFFFFF0; count = 0x20; }"), 6,
	  "collectives.[0].receives.[0].count", "the last QPN would be 0x100000f (qpn + count - 1 must be <= 0xffffff)" },
	{ "range", "receive range without a qpn", COLL_RX("{ port = \"a\"; count = 2; }"), 6,
	  "collectives.[0].receives.[0].qpn", "missing" },
	{ "range", "33 EAL arguments", "eal = { lcores = \"0-1\"; extra_args = " ARGS33 "; };\n" PORTS ROLES, 1,
	  "eal.extra_args", "33 arguments are too many (at most 32)" },
	{ "range", "empty EAL argument", "eal = { lcores = \"0-1\"; extra_args = [\"--no-pci\", \"\"]; };\n" PORTS ROLES, 1,
	  "eal.extra_args.[1]", "empty argument" },
	{ "range", "main lcore 128", "eal = { lcores = \"0-1\"; main_lcore = 128; };\n" PORTS ROLES, 1, "eal.main_lcore",
	  "128 is out of range (0..127)" },
	{ "range", "drop probability above 1", PORT("rx_drop_probability = 1.5;"), 2, "ports.[0].rx_drop_probability",
	  "1.5 is out of range (0..1)" },
	{ "range", "RED pmax above 1", LAB("ecn = ( { tc = 3; kmin_kb = 10; kmax_kb = 20; pmax = 2.0; } );"), 4,
	  "switch.ecn.[0].pmax", "2 is out of range (0..1)" },
	{ "range", "SLA limit beyond 1e18", FLOW("") "sla = ( { flow = \"f\"; metric = \"retransmits\"; max = 1e19; } );\n", 5,
	  "sla.[0].max", "out of range (-1e+18..1e+18)" },
	{ "range", "max_outstanding 129", FLOW("rc = { max_outstanding = 129; };"), 4, "flows.[0].rc.max_outstanding",
	  "129 is out of range (1..128)" },
	{ "range", "retry timeout below 1 us", FLOW("rc = { retry_timeout_us = 0.5; };"), 4, "flows.[0].rc.retry_timeout_us",
	  "0.5 is out of range (1..1e+08)" },
	{ "range", "switch buffer above 1 GiB (the limit shown exactly)", LAB("buffer_kb = 1048577;"), 4, "switch.buffer_kb",
	  "1048577 is out of range (1..1048576)" },
	{ "range", "switch alpha 65", LAB("alpha = 65;"), 4, "switch.alpha", "65 is out of range (0..64)" },
	{ "range", "switch seed 0", LAB("seed = 0;"), 4, "switch.seed", "0 is out of range (1..4611686018427387904)" },
	{ "range", "capture snap length 32", BASE "run = { capture_snaplen = 32; };\n", 4, "run.capture_snaplen",
	  "32 is too short to dissect (0 = whole frames, or >= 64)" },
	{ "range", "capture every 0th frame", BASE "run = { capture_every = 0; };\n", 4, "run.capture_every",
	  "0 is out of range (1..1000000000)" },
	{ "range", "HTTP linger of 2 hours", BASE "run = { http_linger_s = 7200; };\n", 4, "run.http_linger_s",
	  "7200 is out of range (0..3600)" },
	{ "range", "HTTP port 0", BASE "run = { http = 0; };\n", 4, "run.http", "0 is out of range (1..65535)" },
	{ "range", "HTTP port 70000 in a string", BASE "run = { http = \"127.0.0.1:70000\"; };\n", 4, "run.http",
	  "'70000' is not a port 1..65535" },
	{ "range", "PFC generator starting before the run", BASE "pfc_generators = ( { port = \"a\"; priorities = [3]; rate_pps = 10.0; start_s = -1.0; } );\n",
	  4, "pfc_generators.[0].start_s", "-1 is out of range (0..1e+06)" },
	{ "range", "phase weight 1001", PORT("qos = { egress = { shape_gbps = 10; }; };")
	  "phases = ( { name = \"p\"; at_s = 0.0; egress = ( { port = \"a\"; tc = 3; weight = 1001; } ); } );\n", 4,
	  "phases.[0].egress.[0].weight", "1001 is out of range (1..1000)" },

	/* ---- contradictions ------------------------------------------------------------------------ */
	{ "contradiction", "two RX roles on one queue (rx, then reflect)",
	  EAL PORTS "lcores = ( { lcore = 1; port = \"a\"; role = \"rx\"; },\n { lcore = 1; port = \"a\"; role = \"reflect\"; } );\n", 4,
	  "lcores.[1]", "port 'a' queue 0 rx is already polled by the role at line 3" },
	{ "contradiction", "TX role on a queue the port does not have",
	  EAL PORTS "lcores = ( { lcore = 1; port = \"a\"; role = \"tx\"; queue = 2; } );\n", 3, "lcores.[0].queue",
	  "queue 2 is beyond port 'a''s tx queues (0..0; raise tx_queues)" },
	{ "contradiction", "a vdev no driver of this DPDK takes",
	  EAL "ports = ( { name = \"a\"; device = \"net_foo0\"; ipv4 = \"10.0.0.1\"; link_speed_gbps = 100; } );\n"
	  "lcores = ( { lcore = 1; port = \"a\"; role = \"txrx\"; } );\n", 2, "ports.[0].device",
	  "no vdev driver of this DPDK takes 'net_foo0' (vdev drivers: net_null, net_pcap, net_ring)" },
	{ "contradiction", "a PCI port with an EAL block-list (EAL refuses -a with -b)",
	  "eal = { lcores = \"0-1\"; extra_args = [\"-b\", \"0000:00:03.0\"]; };\n"
	  "ports = ( { name = \"p\"; device = \"0000:3b:00.0\"; ipv4 = \"10.0.0.1\"; } );\n"
	  "lcores = ( { lcore = 1; port = \"p\"; role = \"txrx\"; } );\n", 1, "eal.extra_args.[0]",
	  "'-b' (a block-list) with PCI port 'p': the engine allow-lists its PCI ports (-a)" },
	{ "contradiction", "a PCI port with --no-pci",
	  "eal = { lcores = \"0-1\"; extra_args = [\"-v\", \"--no-pci\"]; };\n"
	  "ports = ( { name = \"p\"; device = \"3b:00.0\"; ipv4 = \"10.0.0.1\"; } );\n"
	  "lcores = ( { lcore = 1; port = \"p\"; role = \"txrx\"; } );\n", 1, "eal.extra_args.[1]",
	  "--no-pci with PCI port 'p': EAL would not find the port" },
	{ "contradiction", "ring cable: more TX queues at one end than RX queues at the other (frames would vanish)",
	  PORT("tx_queues = 2;"), 2, "ports.[1].rx_queues",
	  "port 'a' (ring:x:a) has tx_queues 2 but the other end of its ring cable, port 'b' (ring:x:b), has "
	  "rx_queues 1: frames of its TX queue 1 would reach no RX queue" },
	{ "contradiction", "ring cable: the end declared second sends on more queues",
	  EAL "ports = ( " PORT_A "},\n { name = \"b\"; device = \"ring:x:b\"; ipv4 = \"10.0.0.2\"; link_speed_gbps = 100; "
	  "tx_queues = 3; } );\n" ROLES, 3, "ports.[1].tx_queues",
	  "port 'b' (ring:x:b) has tx_queues 3 but the other end of its ring cable, port 'a' (ring:x:a), has "
	  "rx_queues 1: frames of its TX queues 1..2 would reach no RX queue" },
	{ "contradiction", "IPv4 destination, port with IPv6 only",
	  EAL "ports = ( { name = \"a\"; device = \"ring:x:a\"; ipv6 = \"fd00::1\"; link_speed_gbps = 100; } );\n"
	  "lcores = ( { lcore = 1; port = \"a\"; role = \"txrx\"; } );\nflows = ( { " F0 "} );\n", 4, "flows.[0].dst_ip",
	  "an IPv4 destination, but port 'a' has no ipv4 address" },
	{ "contradiction", "UD with fetch_add", FLOW("transport = \"ud\"; ops = { fetch_add = 1; };"), 4, "flows.[0].ops.fetch_add",
	  "UD has no fetch_add" },
	{ "contradiction", "UC with compare_swap", FLOW("transport = \"uc\"; ops = { compare_swap = 1; };"), 4,
	  "flows.[0].ops.compare_swap", "UC has no compare_swap" },
	{ "contradiction", "latency on zero-length messages (no payload)",
	  FLOW("message_size = 0; latency = { mode = \"pingpong\"; };"), 4, "flows.[0].latency.mode",
	  "messages of 0 bytes have no room for the 24-byte probe" },
	{ "contradiction", "rc group on a UC flow", FLOW("transport = \"uc\"; rc = { retry_limit = 3; };"), 4, "flows.[0].rc",
	  "only for transport rc" },
	{ "contradiction", "timely parameters with cc dcqcn", FLOW("cc = \"dcqcn\"; timely = { beta = 0.5; };"), 4,
	  "flows.[0].timely", "the flow's cc is not timely" },
	{ "contradiction", "DCQCN minimum rate above its maximum",
	  FLOW("cc = \"dcqcn\"; dcqcn = { rpg_max_rate = 1000; rpg_min_rate = 2000; };"), 4, "flows.[0].dcqcn.rpg_min_rate",
	  "must be <= rpg_max_rate" },
	{ "contradiction", "TIMELY low threshold above the high one",
	  FLOW("cc = \"timely\"; timely = { t_low_us = 100; t_high_us = 50; };"), 4, "flows.[0].timely.t_low_us",
	  "must be <= t_high_us" },
	{ "contradiction", "QPN overlap of two strided groups on one port",
	  BASE "flows = ( { " F0 "count = 2; qpn_step = 0x10; },\n { name = \"g\"; port = \"a\"; dst_mac = \"02:00:00:00:00:02\"; "
	  "dst_ip = \"10.0.0.2\"; qpn = 0xF0; dest_qpn = 0x300; count = 4; qpn_step = 0x10; } );\n", 5, "flows.[1].qpn",
	  "QPN 0x100 of flow 'g' is also a QPN of flow 'f' at line 4" },
	{ "contradiction", "collective of a flow with its own stop", FLOWS2("stop = { seconds = 2.0; };", "")
	  "collectives = ( { name = \"c\"; flows = [\"g\", \"f\"]; phases = 2; } );\n", 6, "collectives.[0].flows.[1]",
	  "flow 'f' has a stop condition (line 4); in a collective the phases stop it" },
	{ "contradiction", "collective of a flow that starts later", FLOWS2("start_s = 0.5;", "")
	  "collectives = ( { name = \"c\"; flows = [\"g\", \"f\"]; phases = 2; } );\n", 6, "collectives.[0].flows.[1]",
	  "flow 'f' has a start_s (line 4); in a collective the phases start it" },
	{ "contradiction", "iterations that do not divide the phases", FLOWS2("", "")
	  "collectives = ( { name = \"c\"; flows = [\"g\", \"f\"]; phases = 6; iteration_phases = 4; } );\n", 6,
	  "collectives.[0].iteration_phases", "4 does not divide phases 6" },
	{ "contradiction", "flow in two collectives", FLOWS2("", "")
	  "collectives = ( { name = \"c\"; flows = [\"f\"]; phases = 2; },\n { name = \"d\"; flows = [\"g\", \"f\"]; phases = 2; } );\n",
	  7, "collectives.[1].flows.[1]", "flow 'f' is already in collective 'c'" },
	{ "contradiction", "collective naming an unknown flow", FLOWS2("", "")
	  "collectives = ( { name = \"c\"; flows = [\"f\", \"h\"]; phases = 2; } );\n", 6, "collectives.[0].flows.[1]",
	  "no flow named 'h'" },
	{ "contradiction", "two collectives of one name", FLOWS2("", "")
	  "collectives = ( { name = \"c\"; flows = [\"f\"]; phases = 2; },\n { name = \"c\"; flows = [\"g\"]; phases = 2; } );\n",
	  7, "collectives.[1].name", "duplicate collective name 'c' (also at line 6)" },
	{ "contradiction", "receive range on an unknown port", COLL_RX("{ port = \"z\"; qpn = 0x200; }"), 6,
	  "collectives.[0].receives.[0].port", "no port named 'z' (ports: a, b)" },
	{ "contradiction", "receive range on a port no role receives on",
	  EAL PORTS "lcores = ( { lcore = 1; port = \"a\"; role = \"tx\"; }, { lcore = 1; port = \"b\"; role = \"txrx\"; } );\n"
	  "flows = ( { " F0 " } );\ncollectives = ( { name = \"c\"; flows = [\"f\"]; phases = 2;\n"
	  "  receives = ( { port = \"a\"; qpn = 0x200; } ); } );\n", 6, "collectives.[0].receives.[0].port",
	  "port 'a' has no rx or txrx role in lcores" },
	{ "contradiction", "receive ranges of one collective overlapping",
	  COLL_RX("{ port = \"a\"; qpn = 0x200; count = 4; }, { port = \"a\"; qpn = 0x203; }"), 6,
	  "collectives.[0].receives.[1].qpn",
	  "QPNs 0x203..0x203 on port 'a' overlap the receives of collective 'c' at line 6 (a receiver QP counts for one collective)" },
	{ "contradiction", "receive ranges of two collectives overlapping", FLOWS2("", "")
	  "collectives = ( { name = \"c\"; flows = [\"f\"]; phases = 2; receives = ( { port = \"a\"; qpn = 0x200; count = 4; } ); },\n"
	  " { name = \"d\"; flows = [\"g\"]; phases = 2; receives = ( { port = \"b\"; qpn = 0x200; },\n"
	  "   { port = \"a\"; qpn = 0x1F0; count = 0x11; } ); } );\n", 8, "collectives.[1].receives.[1].qpn",
	  "QPNs 0x1f0..0x200 on port 'a' overlap the receives of collective 'c' at line 6" },
	{ "contradiction", "receive range over a local flow's QPNs", COLL_RX("{ port = \"a\"; qpn = 0xF0; count = 0x20; }"), 6,
	  "collectives.[0].receives.[0].qpn", "QPN 0x100 is a QPN of flow 'f' at line 4 on port 'a' (frames to it answer" },
	{ "contradiction", "switch with one switch port",
	  "eal = { lcores = \"0-1\"; };\n" LAB_PORTS
	  "lcores = ( { lcore = 1; port = \"h0\"; role = \"txrx\"; }, { lcore = 1; port = \"s0\"; role = \"switch\"; } );\n"
	  "switch = { buffer_kb = 1024; };\n", 4, "switch", "a switch needs at least two ports with role \"switch\" in lcores (it has 1)" },
	{ "contradiction", "switch role without a switch group",
	  "eal = { lcores = \"0-1\"; };\n" LAB_PORTS "lcores = ( { lcore = 1; port = \"s0\"; role = \"switch\"; } );\n", 1, "switch",
	  "missing: lcores.[0] has role \"switch\"" },
	{ "contradiction", "switch ports polled by two lcores",
	  "eal = { lcores = \"0-2\"; };\n" LAB_PORTS LAB_ROLES("2") "switch = { };\n", 3, "lcores.[3]",
	  "switch ports are all polled by one lcore (lcore 1 at line 3, here lcore 2)" },
	{ "contradiction", "switch queue limit above its buffer", LAB("buffer_kb = 100; queue_limit_kb = 200;"), 4,
	  "switch.queue_limit_kb", "200 is above buffer_kb 100" },
	{ "contradiction", "switch PFC XON above XOFF", LAB("pfc = { priorities = [3]; xoff_kb = 50; xon_kb = 60; };"), 4,
	  "switch.pfc.xon_kb", "60 is above xoff_kb 50" },
	{ "contradiction", "switch PFC thresholds beyond the buffer",
	  LAB("buffer_kb = 100; pfc = { priorities = [3]; xoff_kb = 80; xon_kb = 60; headroom_kb = 40; };"), 4, "switch.pfc",
	  "xoff_kb + headroom_kb exceed buffer_kb" },
	{ "contradiction", "switch RED kmax below kmin", LAB("ecn = ( { tc = 3; kmin_kb = 20; kmax_kb = 10; } );"), 4,
	  "switch.ecn.[0].kmax_kb", "10 is below kmin_kb 20" },
	{ "contradiction", "switch RED twice for one class",
	  LAB("ecn = ( { tc = 3; kmin_kb = 10; kmax_kb = 20; },\n { tc = 3; kmin_kb = 30; kmax_kb = 40; } );"), 5,
	  "switch.ecn.[1].tc", "class 3 already has ECN marking (one entry per class)" },
	{ "contradiction", "switch FDB entry on a host port", LAB("fdb = ( { mac = \"02:00:00:00:00:09\"; port = \"h0\"; } );"), 4,
	  "switch.fdb.[0].port", "port 'h0' is not a switch port" },
	{ "contradiction", "switch VLAN of a host port", LAB("vlans = ( { vid = 5; ports = [\"s0\", \"h1\"]; } );"), 4,
	  "switch.vlans.[0].ports", "element 1 is not the name of a switch port" },
	{ "contradiction", "switch VLAN listed twice",
	  LAB("vlans = ( { vid = 5; ports = [\"s0\"]; },\n { vid = 5; ports = [\"s1\"]; } );"), 5, "switch.vlans.[1].vid",
	  "VLAN 5 is already listed" },
	{ "contradiction", "SLA naming an unknown port", FLOW("") "sla = ( { port = \"z\"; metric = \"rx_gbps\"; min = 1.0; } );\n",
	  5, "sla.[0].port", "no port named 'z'" },
	{ "contradiction", "SLA port metric for a flow", FLOW("") "sla = ( { flow = \"f\"; metric = \"tx_gbps\"; min = 1.0; } );\n",
	  5, "sla.[0].metric", "tx_gbps is a port metric (the check names a flow)" },
	{ "contradiction", "SLA flow metric for a port", FLOW("") "sla = ( { port = \"a\"; metric = \"goodput_gbps\"; min = 1.0; } );\n",
	  5, "sla.[0].metric", "goodput_gbps is a flow metric (the check names a port)" },
	{ "contradiction", "HTTP on a host name", BASE "run = { http = \"localhost:9100\"; };\n", 4, "run.http",
	  "'localhost' is not a numeric IPv4 or IPv6 address" },
	{ "contradiction", "HTTP with no address before the colon", BASE "run = { http = \":9100\"; };\n", 4, "run.http",
	  "has no address before the port" },
	{ "contradiction", "HTTP IPv6 address in brackets without a port", BASE "run = { http = \"[::1]\"; };\n", 4, "run.http",
	  "'[::1]' has no port after the ']'" },
	{ "contradiction", "HTTP IPv6 address without brackets or port", BASE "run = { http = \"fd00::1\"; };\n", 4, "run.http",
	  "'fd00::1' is an IPv6 address without a port" },
	{ "contradiction", "HTTP address of 64 characters",
	  BASE "run = { http = \"1111111111111111111111111111111111111111111111111111111111111111:80\"; };\n", 4, "run.http",
	  "has an address longer than 63 characters" },
	{ "contradiction", "capture of an unknown port", BASE "run = { capture_ports = [\"a\", \"c\"]; };\n", 4,
	  "run.capture_ports", "element 1 is not the name of a port" },
	{ "contradiction", "rte_flow steering on a ring end", PORT("steering = \"rules\";"), 2, "ports.[0].steering",
	  "ring pair end ring:x:a has no rte_flow: steering must be auto or off" },
	{ "contradiction", "pause frame generator with priorities",
	  BASE "pfc_generators = ( { port = \"a\"; pause = true; rate_pps = 10.0;\n priorities = [3]; } );\n", 5,
	  "pfc_generators.[0].priorities", "pauses every priority: no priorities here" },
	{ "contradiction", "phase rate change of an unknown flow (control characters shown as ?)",
	  FLOW("rate_gbps = 1;") "phases = ( { name = \"p\"; at_s = 1.0; rates = ( { flow = \"f\\ng\"; gbps = 2.0; } ); } );\n",
	  5, "phases.[0].rates.[0].flow", "no flow named 'f?g'" },
	{ "contradiction", "phases out of time order", BASE "phases = ( { name = \"p\"; at_s = 2.0; },\n { name = \"q\"; at_s = 1.0; } );\n",
	  5, "phases.[1].at_s", "1 is not after the previous phase's 2" },
	/* eal.lcores as an EAL --lcores map ("0@0,1@0,2@1") */
	{ "range", "lcore map without CPUs after @", "eal = { lcores = \"0@0,1@\"; };\n" PORTS ROLES, 1, "eal.lcores",
	  "'0@0,1@' is not an lcore map: CPU id expected at the end" },
	{ "range", "lcore map with lcore 128", "eal = { lcores = \"0@0,128@1\"; };\n" PORTS ROLES, 1, "eal.lcores",
	  "is not an lcore map: lcore 128 is out of range (0..127)" },
	{ "range", "lcore map with CPU 1024", "eal = { lcores = \"0@0,1@1024\"; };\n" PORTS ROLES, 1, "eal.lcores",
	  "is not an lcore map: CPU 1024 is out of range (0..1023)" },
	{ "range", "lcore map with a downward range", "eal = { lcores = \"(2-1)@0,0@0\"; };\n" PORTS ROLES, 1, "eal.lcores",
	  "is not an lcore map: the range 2-1 goes downward" },
	{ "range", "lcore map with an unclosed group", "eal = { lcores = \"(0,1@0\"; };\n" PORTS ROLES, 1, "eal.lcores",
	  "is not an lcore map: a group in parentheses has no closing ')'" },
	{ "range", "lcore map with blanks", "eal = { lcores = \"0@0, 1@1\"; };\n" PORTS ROLES, 1, "eal.lcores",
	  "is not an lcore map: lcore id expected at ' 1@1'" },
	{ "range", "lcore map with two @", "eal = { lcores = \"0@0@1,1@1\"; };\n" PORTS ROLES, 1, "eal.lcores",
	  "is not an lcore map: unexpected '@' (lcores@CPUs are joined by ',')" },
	{ "contradiction", "lcore map giving an lcore twice", "eal = { lcores = \"0@0,1@0,(1,2)@1\"; };\n" PORTS ROLES, 1,
	  "eal.lcores", "is not an lcore map: lcore 1 is given twice" },
	{ "contradiction", "role on an lcore outside the lcore map", "eal = { lcores = \"0@0,2@1\"; };\n" PORTS ROLES, 3,
	  "lcores.[0].lcore", "lcore 1 is not in eal.lcores \"0@0,2@1\"" },
	{ "contradiction", "main lcore outside the lcore map", "eal = { lcores = \"(0,1)@0,2@1\"; main_lcore = 3; };\n"
	  PORTS ROLES, 1, "eal.main_lcore", "lcore 3 is not in eal.lcores \"(0,1)@0,2@1\"" },
};

#define N_ROWS (sizeof(rows) / sizeof(rows[0]))

static struct engine_config cfg; /* large: keep it off the stack */
static const struct bad *cur;

/* The vdev drivers of a made-up DPDK build (the engine reads the real one's, pmd_glue/drivers.c). */
static bool some_drivers(void *arg, const struct cfg_eal *eal, const char *device, char *why, size_t len)
{
	static const char *const names[] = { "net_null", "net_pcap", "net_ring" };

	(void)arg, (void)eal;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strncmp(device, names[i], strlen(names[i])))
			return true;
	snprintf(why, len, "net_null, net_pcap, net_ring");
	return false;
}
static const struct config_env env = { .vdev_driver = some_drivers };

/* SETTING is what config_lookup() finds at LINE, or a member missing from the group at LINE. */
static void check_path(const struct bad *r)
{
	const config_setting_t *s, *parent;
	char parent_path[256];
	const char *dot;
	config_t lc;

	config_init(&lc);
	CHECK(config_read_string(&lc, r->text) == CONFIG_TRUE);
	s = config_lookup(&lc, r->setting);
	if (s) {
		CHECK_EQ(config_setting_source_line(s), r->line);
	} else {
		dot = strrchr(r->setting, '.');
		snprintf(parent_path, sizeof(parent_path), "%.*s", dot ? (int)(dot - r->setting) : 0, r->setting);
		parent = dot ? config_lookup(&lc, parent_path) : config_root_setting(&lc);
		CHECK(parent != NULL && config_setting_is_group(parent));
		if (parent && config_setting_source_line(parent))
			CHECK_EQ(config_setting_source_line(parent), r->line);
		else
			CHECK_EQ(r->line, 1); /* the root: line 1 */
	}
	config_destroy(&lc);
}

static void test_row(void)
{
	const struct bad *r = cur;
	bool syntax = !strcmp(r->setting, "syntax error") || !strcmp(r->setting, "@include");
	char err[1024], want[256];
	size_t wl;
	int rc;

	memset(err, 'x', sizeof(err));
	rc = config_load_string_env(r->text, NAME, &env, &cfg, err, sizeof(err));
	wl = (size_t)snprintf(want, sizeof(want), NAME ":%u: %s: ", r->line, r->setting);
	if (getenv("SHOW_ERRORS"))
		printf("  %s\n", err);
	CHECK_EQ(rc, -1);
	CHECK(memchr(err, '\0', sizeof(err)) != NULL);
	CHECK(!strncmp(err, want, wl));           /* NAME:LINE: SETTING: */
	CHECK(strstr(err + wl, r->what) != NULL); /* what is wrong */
	for (const char *p = err; *p; p++)         /* one line of printable text */
		CHECK(*p >= 0x20 && *p < 0x7f);
	if (testlib_case_failed)
		printf("  got  \"%s\"\n  want \"%s...%s...\"\n", err, want, r->what);
	if (!syntax)
		check_path(r);
}

int main(void)
{
	static const char *const kinds[] = { "syntax", "unknown", "type", "range", "contradiction" };
	char name[200];

	printf("# %zu broken configurations:", N_ROWS);
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		unsigned n = 0;

		for (size_t i = 0; i < N_ROWS; i++)
			n += !strcmp(rows[i].kind, kinds[k]);
		printf(" %u %s", n, kinds[k]);
	}
	printf("\n");
	for (size_t i = 0; i < N_ROWS; i++) {
		cur = &rows[i];
		snprintf(name, sizeof(name), "%s: %s", rows[i].kind, rows[i].name);
		testlib_run(name, test_row);
	}
	return testlib_finish("test_config_broken");
}
