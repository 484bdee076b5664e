// SPDX-License-Identifier: GPL-2.0
/*
 * awgstard - carries the token of the AWG-STAR ring between boards
 * (/dev/awgstar of dlmem.ko) over TCP or RDMA verbs.
 *
 * The ring is physically a star, as AWG-STAR's is through its AWG router:
 * node 0's daemon (--listen) is the hub; every other node's daemon
 * (--hub) joins it.  Node 0 makes the token, lets its own board visit it,
 * then hands it to nodes 1, 2, ... in turn, each returning it after its
 * board's visit.  A node that does not return the token within
 * --token-timeout-ms, or whose link fails, has left: node 0 drops it from
 * the live mask, logs it and makes a new token (the others send again
 * what the lost token carried).  All processing of frames is the
 * kernel's (AWG_IOC_RING_VISIT); this program only moves bytes.
 *
 * awgstard --show prints a board's state and counters; --set changes its
 * timing model (mode, fiber length, ...).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <unistd.h>

#include <linux/awgstar.h>

#include "awg_link.h"
#include "log.h"

#define AWGSTARD_VERSION "0.1.0"

struct opts {
	const char *device;
	const char *transport;
	const char *listen;
	const char *hub;
	const char *set;
	int node, nodes;
	int token_timeout_ms;
	int join_timeout_ms;
	int show;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: awgstard --node 0 --nodes N --listen [HOST:]PORT [OPTIONS]\n"
"  or:  awgstard --node I --nodes N --hub HOST:PORT [OPTIONS]\n"
"  or:  awgstard --show [--device PATH]\n"
"  or:  awgstard --set KEY=VALUE[,KEY=VALUE...] [--device PATH]\n"
"\n"
"Carries the token of an AWG-STAR ring between boards (/dev/awgstar).\n"
"Node 0 (the first form) is the hub of the star: it waits for nodes\n"
"1 .. N-1 (the second form), then passes the token to each in turn; a\n"
"node that fails or keeps the token longer than --token-timeout-ms\n"
"leaves the ring (the others keep a consistent replica).  When awgstard\n"
"exits its board is alone again (a ring of one).\n"
"\n"
"Options:\n"
"  -d, --device PATH         the board (default /dev/awgstar)\n"
"  -i, --node I              this board's place on the ring, 0 .. N-1\n"
"  -n, --nodes N             nodes on the ring, 1 .. %d\n"
"  -l, --listen [HOST:]PORT  node 0: where nodes join (e.g. [::]:7470)\n"
"  -H, --hub HOST:PORT       nodes 1 .. N-1: node 0's address\n"
"                            (IPv6 link-local: fe80::1%%veth0)\n"
"  -t, --transport T         tcp (default) or verbs (RDMA, rdma-core)\n"
"  -T, --token-timeout-ms MS\n"
"                            node 0: a node holding the token longer has\n"
"                            left (default 2000)\n"
"  -J, --join-timeout-ms MS  node 0: wait this long for every node; others:\n"
"                            for node 0 to answer (default 30000)\n"
"  -s, --show                print the board's state and counters\n"
"  -S, --set LIST            change the board (root): mode=fast|model,\n"
"                            fiber=METRES, idle=US, crc_inject=PERMILLE,\n"
"                            node_delay=NS\n"
"  -v, --log-level L         debug, info (default), warn, error\n"
"  -h, --help                this text\n"
"  -V, --version             awgstard's version, the awgstar uapi version\n"
"                            and the ring protocol version it speaks\n"
"\n"
"Exit status: 0 after SIGINT/SIGTERM, 1 on a failure (logged), 2 on bad\n"
"arguments.\n", AWG_NODES_MAX);
}

/* The kernel has AWG_VISIT_CHECK (node 0 checks each node's token). */
static int visit_check;

static int open_board(const char *dev)
{
	struct awg_api a = { .api = AWG_API_VERSION,
			     .features = AWG_FEATURE_RING };
	int fd = open(dev, O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		log_error("cannot open the board", "device=%s err=\"%s\"%s", dev,
			  strerror(errno), errno == ENOENT ?
			  " hint=\"load dlmem.ko (awg_boards=N for N boards)\"" : "");
		return -1;
	}
	if (ioctl(fd, AWG_IOC_API, &a)) {
		log_error("the kernel has no AWG-STAR ring", "device=%s err=\"%s\"",
			  dev, strerror(errno));
		close(fd);
		return -1;
	}
	visit_check = !!(a.features & AWG_FEATURE_VISIT_CHECK);
	return fd;
}

static int show(int fd)
{
	struct awg_info in;
	struct awg_stats s;

	if (ioctl(fd, AWG_IOC_GET_INFO, &in) || ioctl(fd, AWG_IOC_GET_STATS, &s)) {
		perror("awgstard: AWG_IOC_GET_INFO/GET_STATS");
		return 1;
	}
	printf("node_id=%u\nnodes=%u\nlive_mask=%#x\nring=%s\nmode=%s\n"
	       "size=%" PRIu64 "\nfiber_m=%u\nnode_delay_ns=%u\nidle_us=%u\n"
	       "frames_per_visit=%u\ngeneration=%u\n",
	       in.node_id, in.nodes, in.live_mask,
	       in.ring == AWG_RING_DAEMON ? "daemon" : "loopback",
	       in.mode == AWG_MODE_MODEL ? "model" : "fast", (uint64_t)in.size,
	       in.fiber_m, in.node_delay_ns, in.idle_us, in.frames_per_visit,
	       in.generation);
#define S(f) printf(#f "=%" PRIu64 "\n", (uint64_t)s.f)
	S(rotations); S(frames_sent); S(frames_recv); S(bytes_sent);
	S(bytes_recv); S(writes); S(pio_pages); S(flushes); S(events_sent);
	S(events_recv); S(crc_errors); S(retries); S(stalls);
	S(regenerations); S(bad_tokens); S(event_overflows); S(node_changes);
	S(rot_count); S(rot_ns); S(rot_busy_count); S(rot_busy_ns);
	S(rot_busy_model_ns);
#undef S
	return 0;
}

static int set_config(int fd, const char *list)
{
	struct awg_config c = { 0 };
	char *dup = strdup(list), *save = NULL, *kv;

	for (kv = strtok_r(dup, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
		char *val = strchr(kv, '='), *end;
		unsigned long v;

		if (!val)
			goto bad;
		*val++ = 0;
		if (!strcmp(kv, "mode")) {
			c.set |= AWG_CFG_MODE;
			if (!strcmp(val, "model"))
				c.mode = AWG_MODE_MODEL;
			else if (strcmp(val, "fast"))
				goto bad;
			continue;
		}
		errno = 0;
		v = strtoul(val, &end, 10);
		if (errno || *end || !*val || v > UINT32_MAX)
			goto bad;
		if (!strcmp(kv, "fiber")) {
			c.set |= AWG_CFG_FIBER;
			c.fiber_m = v;
		} else if (!strcmp(kv, "idle")) {
			c.set |= AWG_CFG_IDLE;
			c.idle_us = v;
		} else if (!strcmp(kv, "crc_inject")) {
			c.set |= AWG_CFG_CRC_INJECT;
			c.crc_inject_permille = v;
		} else if (!strcmp(kv, "node_delay")) {
			c.set |= AWG_CFG_NODE_DELAY;
			c.node_delay_ns = v;
		} else {
			goto bad;
		}
	}
	free(dup);
	if (ioctl(fd, AWG_IOC_SET_CONFIG, &c)) {
		fprintf(stderr, "awgstard: --set %s: %s%s\n", list, strerror(errno),
			errno == EPERM ? " (needs root)" :
			errno == EINVAL ? " (out of range: see the awg_config limits in linux/awgstar.h)" : "");
		return 1;
	}
	return 0;
bad:
	fprintf(stderr, "awgstard: --set: bad item '%s' (want mode=fast|model, fiber=M, idle=US, crc_inject=PERMILLE, node_delay=NS)\n",
		kv);
	free(dup);
	return 2;
}

static int visit(int fd, const void *in, uint32_t in_len, void *out,
		 uint32_t *out_len, uint32_t flags, uint32_t live,
		 uint32_t ring_id)
{
	struct awg_ring_visit v = {
		.in = (uintptr_t)in, .out = (uintptr_t)out, .in_len = in_len,
		.out_cap = AWG_TOKEN_MAX, .flags = flags, .live_mask = live,
		.ring_id = ring_id,
	};

	while (ioctl(fd, AWG_IOC_RING_VISIT, &v)) {
		if (errno == EINTR && !stop)
			continue;
		return -errno;
	}
	*out_len = v.out_len;
	return 0;
}

/*
 * Node 0: would the boards take the token a node replied (LEN bytes at
 * TOK)?  The board checks it (AWG_VISIT_CHECK) and the ring's id and live
 * nodes must be those node 0 sent round: else the node that replied it
 * is the one to drop, not the next one, whose board would refuse it.  A
 * kernel without AWG_VISIT_CHECK leaves that to the next board.
 */
static int token_ok(int fd, const void *tok, uint32_t len, void *scratch,
		    uint32_t live, uint32_t ring_id)
{
	struct awg_token t;
	uint32_t none;
	int r;

	if (!visit_check)
		return 0;
	r = visit(fd, tok, len, scratch, &none, AWG_VISIT_CHECK, 0, 0);
	if (r)
		return r;
	memcpy(&t, tok, sizeof(t));	/* the board found len >= sizeof(t) */
	return t.ring_id == ring_id && t.live_mask == live ? 0 : -EINVAL;
}

static int attach(int fd, const struct opts *o)
{
	struct awg_ring_attach a = { .node_id = o->node, .nodes = o->nodes };

	if (ioctl(fd, AWG_IOC_RING_ATTACH, &a)) {
		log_error("cannot attach the board to the ring", "device=%s err=\"%s\"%s",
			  o->device, strerror(errno), errno == EBUSY ?
			  " hint=\"another awgstard serves this board\"" : "");
		return -1;
	}
	return 0;
}

/* Node 0: accept every node, then pass the token round until stopped. */
static int run_hub(int fd, const struct opts *o)
{
	struct awg_link *link[AWG_NODES_MAX] = { 0 };
	struct awg_listener ls = { .transport = o->transport, .fd = -1 };
	uint8_t *a = malloc(AWG_TOKEN_MAX), *b = malloc(AWG_TOKEN_MAX);
	uint32_t live = 1, len = 0, ring_id = 0, joined = 1;
	struct netaddr addr;
	char err[512] = "";
	const char *perr;
	int r, i, rc = 1, fresh = 1, last = 0;

	perr = netaddr_parse(o->listen, &addr, 0);
	if (perr) {
		log_error("bad --listen", "value=%s err=\"%s\"", o->listen, perr);
		return 2;
	}
	if (!a || !b || awg_listen(o->transport, &addr, &ls, err, sizeof(err))) {
		log_error("cannot listen", "err=\"%s\"", err);
		goto out;
	}
	while (joined < (uint32_t)o->nodes && !stop) {
		struct awg_hello h;
		struct awg_link *l;

		*err = 0;
		r = awg_accept(&ls, o->join_timeout_ms, AWG_TOKEN_MAX, &l, &h, err,
			       sizeof(err));
		if (r == -EAGAIN) {	/* one peer failed, not the listener */
			if (*err)
				log_warn("refused a connection", "err=\"%s\"", err);
			continue;
		}
		if (r) {
			log_error("the ring did not form", "joined=%u nodes=%d err=\"%s\"",
				  joined, o->nodes, err);
			goto out;
		}
		if (h.magic != AWG_HELLO_MAGIC || h.version != AWG_HELLO_VERSION ||
		    h.nodes != (uint32_t)o->nodes || !h.node_id ||
		    h.node_id >= (uint32_t)o->nodes || link[h.node_id]) {
			log_warn("refused a node", "peer=%s node=%u nodes=%u",
				 l->peer, h.node_id, h.nodes);
			l->ops->close(l);
			continue;
		}
		l->node = h.node_id;
		link[h.node_id] = l;
		live |= 1U << h.node_id;
		joined++;
		log_info("node joined", "node=%u peer=%s", h.node_id, l->peer);
	}
	if (attach(fd, o))
		goto out;
	while (!ring_id || ring_id == 1)
		if (getrandom(&ring_id, sizeof(ring_id), 0) != sizeof(ring_id))
			ring_id = (uint32_t)getpid() << 8;
	log_info("ring formed", "nodes=%d live_mask=%#x transport=%s ring_id=%u",
		 o->nodes, live, o->transport, ring_id);
	if (!visit_check)
		log_warn("this kernel cannot check a node's token for the hub (no AWG_FEATURE_VISIT_CHECK)",
			 "effect=\"a node that returns a malformed token makes the next node leave\"");

	while (!stop) {
		r = fresh ? visit(fd, NULL, 0, b, &len, AWG_VISIT_NEW, live, ring_id) :
			    visit(fd, a, len, b, &len, 0, 0, 0);
		if (r == -EINVAL && !fresh && last) {
			/* Its token is refused: that node goes, not the ring. */
			log_warn("node sent a token the board refuses", "node=%d action=\"new token without it\"",
				 last);
			link[last]->ops->close(link[last]);
			link[last] = NULL;
			live &= ~(1U << last);
			fresh = 1;
			continue;
		}
		if (r) {
			log_error("the board refused the token", "err=\"%s\"",
				  strerror(-r));
			goto out;
		}
		fresh = 0;
		last = 0;
		for (i = 1; i < o->nodes && !fresh && !stop; i++) {
			int bad = 0;

			if (!link[i])
				continue;
			r = link[i]->ops->send(link[i], b, len);
			if (!r)
				r = link[i]->ops->recv(link[i], b, AWG_TOKEN_MAX, &len,
						      o->token_timeout_ms);
			if (!r) {
				r = token_ok(fd, b, len, a, live, ring_id);
				bad = r == -EINVAL;
			}
			if (bad) {
				log_warn("node sent a token the board refuses", "node=%d action=\"new token without it\"",
					 i);
			} else if (r) {
				log_warn("node left the ring", "node=%d err=\"%s\" action=\"new token without it\"",
					 i, strerror(-r));
			}
			if (r) {
				link[i]->ops->close(link[i]);
				link[i] = NULL;
				live &= ~(1U << i);
				fresh = 1;
			}
			last = i;
		}
		if (!fresh)	/* else b and len are a failed reply's */
			memcpy(a, b, len);
	}
	rc = 0;
out:
	for (i = 1; i < AWG_NODES_MAX; i++)
		if (link[i])
			link[i]->ops->close(link[i]);
	awg_listener_close(&ls);
	free(a);
	free(b);
	return rc;
}

/* Nodes 1 .. N-1: take the token from the hub, visit, give it back. */
static int run_node(int fd, const struct opts *o)
{
	struct awg_hello h = { AWG_HELLO_MAGIC, AWG_HELLO_VERSION,
			       (uint32_t)o->node, (uint32_t)o->nodes };
	uint8_t *a = malloc(AWG_TOKEN_MAX), *b = malloc(AWG_TOKEN_MAX);
	struct awg_link *l = NULL;
	struct netaddr addr;
	char err[512] = "";
	const char *perr;
	uint32_t len, out;
	int r, t, rc = 1;

	perr = netaddr_parse(o->hub, &addr, 0);
	if (perr) {
		log_error("bad --hub", "value=%s err=\"%s\"", o->hub, perr);
		return 2;
	}
	if (!a || !b || attach(fd, o))
		goto out;
	/* Node 0 may not listen yet: try again until the join timeout. */
	for (t = 0;; t += 100) {
		*err = 0;
		r = awg_connect(o->transport, &addr, &h, o->join_timeout_ms - t,
				AWG_TOKEN_MAX, &l, err, sizeof(err));
		if (!r || stop || t + 100 >= o->join_timeout_ms ||
		    (r != -ECONNREFUSED && r != -EADDRNOTAVAIL))
			break;
		usleep(100000);
	}
	if (r) {
		log_error("cannot join the ring", "hub=%s err=\"%s\"", o->hub, err);
		goto out;
	}
	log_info("joined the ring", "node=%d nodes=%d hub=%s transport=%s",
		 o->node, o->nodes, o->hub, o->transport);
	while (!stop) {
		r = l->ops->recv(l, a, AWG_TOKEN_MAX, &len, 500);
		if (r == -ETIMEDOUT)
			continue;
		if (!r)
			r = visit(fd, a, len, b, &out, 0, 0, 0);
		if (!r)
			r = l->ops->send(l, b, out);
		if (r) {
			log_error("left the ring", "node=%d err=\"%s\"%s", o->node,
				  strerror(-r), r == -EINVAL ?
				  " hint=\"node 0 dropped this node (too slow?)\"" : "");
			goto out;
		}
	}
	rc = 0;
out:
	if (l)
		l->ops->close(l);
	free(a);
	free(b);
	return rc;
}

static int parse_int(const char *s, int lo, int hi, const char *what)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || !*s || v < lo || v > hi) {
		fprintf(stderr, "awgstard: %s '%s': want %d .. %d\n", what, s, lo, hi);
		exit(2);
	}
	return (int)v;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "node", required_argument, NULL, 'i' },
		{ "nodes", required_argument, NULL, 'n' },
		{ "listen", required_argument, NULL, 'l' },
		{ "hub", required_argument, NULL, 'H' },
		{ "transport", required_argument, NULL, 't' },
		{ "token-timeout-ms", required_argument, NULL, 'T' },
		{ "join-timeout-ms", required_argument, NULL, 'J' },
		{ "show", no_argument, NULL, 's' },
		{ "set", required_argument, NULL, 'S' },
		{ "log-level", required_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	struct opts o = { .device = "/dev/awgstar", .transport = "tcp",
			  .node = -1, .nodes = 0, .token_timeout_ms = 2000,
			  .join_timeout_ms = 30000 };
	struct sigaction sa = { .sa_handler = on_signal };
	int c, fd, rc, lvl;

	log_init("awgstard", DLOG_INFO);
	while ((c = getopt_long(argc, argv, "d:i:n:l:H:t:T:J:sS:v:hV", lopts,
				NULL)) != -1) {
		switch (c) {
		case 'd': o.device = optarg; break;
		case 'i': o.node = parse_int(optarg, 0, AWG_NODES_MAX - 1, "--node"); break;
		case 'n': o.nodes = parse_int(optarg, 1, AWG_NODES_MAX, "--nodes"); break;
		case 'l': o.listen = optarg; break;
		case 'H': o.hub = optarg; break;
		case 't': o.transport = optarg; break;
		case 'T': o.token_timeout_ms = parse_int(optarg, 1, 3600000, "--token-timeout-ms"); break;
		case 'J': o.join_timeout_ms = parse_int(optarg, 1, 3600000, "--join-timeout-ms"); break;
		case 's': o.show = 1; break;
		case 'S': o.set = optarg; break;
		case 'v':
			lvl = log_parse_level(optarg);
			if (lvl < 0) {
				fprintf(stderr, "awgstard: --log-level '%s': want debug, info, warn or error\n", optarg);
				return 2;
			}
			log_set_level(lvl);
			break;
		case 'h': usage(stdout); return 0;
		case 'V':
			printf("awgstard %s (awgstar uapi %u, ring protocol %u)\n",
			       AWGSTARD_VERSION, AWG_API_VERSION, AWG_HELLO_VERSION);
			return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "awgstard: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (o.show || o.set) {
		fd = open_board(o.device);
		if (fd < 0)
			return 1;
		rc = o.set ? set_config(fd, o.set) : 0;
		if (!rc && o.show)
			rc = show(fd);
		close(fd);
		return rc;
	}
	if (strcmp(o.transport, "tcp") && strcmp(o.transport, "verbs")) {
		fprintf(stderr, "awgstard: --transport '%s': want tcp or verbs\n", o.transport);
		return 2;
	}
	if (o.node < 0 || !o.nodes || o.node >= o.nodes) {
		fprintf(stderr, "awgstard: want --node I and --nodes N with I < N (see --help)\n");
		return 2;
	}
	if (!o.node == !o.listen || (o.node && !o.hub) || (!o.node && o.hub)) {
		fprintf(stderr, "awgstard: node 0 takes --listen, the others --hub (see --help)\n");
		return 2;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	fd = open_board(o.device);
	if (fd < 0)
		return 1;
	rc = o.node ? run_node(fd, &o) : run_hub(fd, &o);
	close(fd);
	log_info("stopped", "node=%d status=%d", o.node, rc);
	return rc;
}
