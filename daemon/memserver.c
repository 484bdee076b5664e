// SPDX-License-Identifier: GPL-2.0
/*
 * dlm-memserver - hold memory for dlmd and serve it over TCP or RDMA.
 *
 * A dumb, fast memory server: SIZE MB of anonymous memory (touched lazily)
 * read and written by offset with the protocol of wire.h.  One thread per
 * connection; payloads go straight between the socket and the memory.
 * With --transport verbs the memory is registered for RDMA instead and
 * dlmd reads and writes it itself (memserver_verbs.c).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cpusched.h"
#include "log.h"
#include "netaddr.h"
#include "wire.h"
#include "memserver_verbs.h"

#define MEMSERVER_VERSION	"0.1.0"
#define MEMSERVER_MB_MAX	(1ULL << 30)	/* 1 PiB */
#define MEMSERVER_CLIENTS_DEFAULT 64	/* one dlmd needs one per thread */
#define MEMSERVER_CLIENTS_MAX	65536

struct client {
	int fd;
	struct wire_pipe pipe;		/* for READ replies */
	char peer[NETADDR_STR_MAX];
	struct client *next, *prev;
};

static struct {
	uint8_t *mem;
	uint64_t size;

	pthread_mutex_t lock;		/* protects clients, nclients */
	pthread_cond_t gone;		/* a client thread ended */
	struct client *clients;
	unsigned int nclients;
	unsigned int max_clients;	/* --max-clients */

	atomic_uint_fast64_t ops[WIRE_OP_PING + 1];
	atomic_uint_fast64_t bytes_read, bytes_written;
	atomic_uint_fast64_t refused, malformed, conns, conns_refused;
} srv = {
	.max_clients = MEMSERVER_CLIENTS_DEFAULT,
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.gone = PTHREAD_COND_INITIALIZER,
};

static void usage(FILE *f)
{
	fprintf(f,
"Usage: dlm-memserver --listen ADDR:PORT --size MB [OPTIONS]\n"
"\n"
"Serve SIZE MB of this machine's memory to dlmd over TCP or RDMA.\n"
"\n"
"dlm-memserver is the memory-server side of DLM (distributed large\n"
"memory): dlmd on a compute node stores the DLM pages that do not fit in\n"
"its local budget here and fetches them back on a fault.  The memory is\n"
"anonymous, reserved lazily (pages are only allocated when first written)\n"
"and never swapped by this program.  Each connection is served by its own\n"
"thread, in order; several clients may connect at once.  The protocol is\n"
"described in daemon/README.md and daemon/wire.h.\n"
"\n"
"Options:\n"
"  -l, --listen ADDR:PORT  address to listen on, e.g. 0.0.0.0:7777,\n"
"                          [::]:7777 or 127.0.0.1:0 (0 = any free port;\n"
"                          the port chosen is logged as addr=)\n"
"  -s, --size MB           megabytes (MiB) of memory to serve, at least 1\n"
"  -t, --transport T       tcp (default) or verbs: with verbs, ADDR:PORT\n"
"                          is an rdma_cm address of a local RDMA device\n"
"                          (e.g. [fe80::1%%eth0]:7777); the whole memory\n"
"                          is registered (pinned) with the device, and\n"
"                          dlmd (dlmd --transport verbs) moves the pages\n"
"                          by RDMA READ and WRITE without this program:\n"
"                          it only handles connections.  Needs a locked-\n"
"                          memory limit of SIZE (ulimit -l) unless root\n"
"      --max-clients N     connections served at once, 1 to 65536\n"
"                          (default 64): each has a thread (with tcp)\n"
"                          or a queue pair (with verbs); one more is\n"
"                          closed (refused) at once and logged\n"
"      --log-level LEVEL   debug, info (default), warn or error\n"
"      --sched P           CPU policy of its threads: batch (default;\n"
"                          SCHED_BATCH: a reply does not preempt a\n"
"                          program computing on this machine, it takes\n"
"                          an idle CPU or waits for the next tick),\n"
"                          normal (SCHED_OTHER) or idle (SCHED_IDLE:\n"
"                          only CPU time nothing else wants; while\n"
"                          other work starves them, a guard lifts the\n"
"                          threads to SCHED_BATCH; needs root or\n"
"                          RLIMIT_NICE, and Linux 6.6 or later to\n"
"                          lift them in time)\n"
"  -h, --help              this text\n"
"  -V, --version           version and protocol version\n"
"\n"
"Logging: one key=value line per event on stderr, e.g.\n"
"  ts=... level=info prog=dlm-memserver msg=\"listening\" addr=0.0.0.0:7777\n"
"\n"
"Signals: SIGTERM or SIGINT closes every connection and exits 0;\n"
"SIGUSR1 logs the counters.\n"
"\n"
"Security: any client that can connect may read and write all of the\n"
"memory; run it on a trusted network only.\n"
"\n"
"Exit status: 0 after SIGTERM/SIGINT, 1 on a runtime error (cannot listen,\n"
"cannot map or register the memory, no RDMA device), 2 on a usage error.\n");
}

static void log_counters(const char *msg)
{
	unsigned int n;

	pthread_mutex_lock(&srv.lock);
	n = srv.nclients;
	pthread_mutex_unlock(&srv.lock);
	log_info(msg, "clients=%u conns=%" PRIuFAST64 " hello=%" PRIuFAST64
		 " read=%" PRIuFAST64 " write=%" PRIuFAST64 " ping=%" PRIuFAST64
		 " bytes_read=%" PRIuFAST64 " bytes_written=%" PRIuFAST64
		 " refused=%" PRIuFAST64 " malformed=%" PRIuFAST64
		 " conns_refused=%" PRIuFAST64,
		 n, srv.conns, srv.ops[WIRE_OP_HELLO],
		 srv.ops[WIRE_OP_READ], srv.ops[WIRE_OP_WRITE],
		 srv.ops[WIRE_OP_PING], srv.bytes_read, srv.bytes_written,
		 srv.refused, srv.malformed, srv.conns_refused);
}

/* Reply header for REQ; PAYLOAD of LEN bytes follows when non-NULL. */
static int reply(int fd, const struct wire_hdr *req, uint32_t status,
		 const void *payload, uint32_t len)
{
	uint8_t buf[WIRE_HDR_SIZE];
	struct wire_hdr h = *req;
	struct iovec iov[2] = {
		{ .iov_base = buf, .iov_len = sizeof(buf) },
		{ .iov_base = (void *)payload, .iov_len = len },
	};

	h.magic = WIRE_MAGIC;
	h.version = WIRE_VERSION;
	h.op = req->op | WIRE_OP_REPLY;
	h.status = status;
	h.len = payload ? len : 0;
	wire_hdr_encode(buf, &h);
	return wire_sendv(fd, iov, payload && len ? 2 : 1);
}

/* WIRE_OK reply to the READ REQ, its LEN bytes at PAYLOAD lent. */
static int reply_lent(struct client *c, const struct wire_hdr *req,
		      const void *payload, uint32_t len)
{
	uint8_t buf[WIRE_HDR_SIZE];
	struct wire_hdr h = *req;

	h.magic = WIRE_MAGIC;
	h.version = WIRE_VERSION;
	h.op = req->op | WIRE_OP_REPLY;
	h.status = WIRE_OK;
	h.len = len;
	wire_hdr_encode(buf, &h);
	return wire_send_lent(c->fd, &c->pipe, buf, sizeof(buf), payload, len);
}

static const char *malformed(const struct wire_hdr *h, uint32_t *status)
{
	*status = WIRE_E_PROTO;
	if (h->magic != WIRE_MAGIC)
		return "bad magic";
	if (h->version != WIRE_VERSION) {
		*status = WIRE_E_VERSION;
		return "protocol version not spoken";
	}
	if (h->status)
		return "non-zero status in a request";
	if (h->op < WIRE_OP_HELLO || h->op > WIRE_OP_PING)
		return "unknown op";
	if ((h->op == WIRE_OP_HELLO || h->op == WIRE_OP_PING) && h->len)
		return "payload on hello or ping";
	return NULL;
}

/* Serve one request; 0 to go on, -1 to close the connection. */
static int serve_one(struct client *c, const struct wire_hdr *h)
{
	uint8_t hello[WIRE_HELLO_SIZE];
	struct wire_hello w = { .size = srv.size, .max_io = WIRE_MAX_IO };
	uint32_t st;
	int r = 0;

	srv.ops[h->op]++;
	switch (h->op) {
	case WIRE_OP_HELLO:
		wire_hello_encode(hello, &w);
		r = reply(c->fd, h, WIRE_OK, hello, sizeof(hello));
		break;
	case WIRE_OP_PING:
		r = reply(c->fd, h, WIRE_OK, NULL, 0);
		break;
	case WIRE_OP_READ:
		st = wire_check_range(h->offset, h->len, srv.size);
		if (st) {
			srv.refused++;
			log_debug("request refused", "peer=%s op=read offset=%" PRIu64
				  " len=%u status=\"%s\"", c->peer, h->offset,
				  h->len, wire_status_str(st));
			r = reply(c->fd, h, st, NULL, 0);
			break;
		}
		/*
		 * Straight from the memory, lent to the socket: the client
		 * writes these bytes again only after it has received them
		 * (a /dev/dlm page is written back only once fetched; a
		 * /dev/dlmbN WRITE waits for overlapping READs in the
		 * kernel, kmod/blk_order.c).
		 */
		r = reply_lent(c, h, srv.mem + h->offset, h->len);
		if (!r)
			srv.bytes_read += h->len;
		break;
	case WIRE_OP_WRITE:
		st = wire_check_range(h->offset, h->len, srv.size);
		if (st) {
			srv.refused++;
			log_debug("request refused", "peer=%s op=write offset=%" PRIu64
				  " len=%u status=\"%s\"", c->peer, h->offset,
				  h->len, wire_status_str(st));
			/* Keep the stream in step: drop the payload. */
			r = wire_discard(c->fd, h->len);
			if (!r)
				r = reply(c->fd, h, st, NULL, 0);
			break;
		}
		/* Straight into the memory. */
		r = wire_recv(c->fd, srv.mem + h->offset, h->len, NULL);
		if (!r) {
			srv.bytes_written += h->len;
			r = reply(c->fd, h, WIRE_OK, NULL, 0);
		}
		break;
	}
	if (r) {
		log_info("connection lost", "peer=%s op=%s err=\"%s\"", c->peer,
			 wire_op_str(h->op), strerror(-r));
		return -1;
	}
	return 0;
}

static void *client_main(void *arg)
{
	struct client *c = arg;
	uint8_t buf[WIRE_HDR_SIZE];
	struct wire_hdr h;
	const char *why;
	uint32_t st;
	size_t got;
	int r;

	/* Named here: the thread is detached and may be gone after create. */
	pthread_setname_np(pthread_self(), "msrv-client");
	for (;;) {
		r = wire_recv(c->fd, buf, sizeof(buf), &got);
		if (r) {
			if (r == -ECONNRESET && got == 0)
				log_info("client closed", "peer=%s", c->peer);
			else
				log_info("connection lost", "peer=%s err=\"%s\"",
					 c->peer, strerror(-r));
			break;
		}
		wire_hdr_decode(&h, buf);
		why = malformed(&h, &st);
		if (why) {
			srv.malformed++;
			log_warn("malformed header, closing the connection",
				 "peer=%s reason=\"%s\" magic=%#x version=%u op=%u len=%u",
				 c->peer, why, h.magic, h.version, h.op, h.len);
			/* Best effort: say why before closing. */
			reply(c->fd, &h, st, NULL, 0);
			break;
		}
		if (serve_one(c, &h))
			break;
	}

	pthread_mutex_lock(&srv.lock);
	if (c->prev)
		c->prev->next = c->next;
	else
		srv.clients = c->next;
	if (c->next)
		c->next->prev = c->prev;
	srv.nclients--;
	pthread_cond_broadcast(&srv.gone);
	pthread_mutex_unlock(&srv.lock);
	close(c->fd);
	wire_pipe_close(&c->pipe);
	free(c);
	return NULL;
}

static void accept_one(int lfd)
{
	struct client *c;
	pthread_attr_t attr;
	unsigned int n;
	pthread_t t;
	int fd, e;

	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0) {
		if (errno != EINTR && errno != EAGAIN && errno != ECONNABORTED)
			log_warn("accept failed", "err=\"%s\"", strerror(errno));
		if (errno == EMFILE || errno == ENFILE)
			usleep(100000);	/* do not spin on a full fd table */
		return;
	}
	net_tune(fd);
	c = calloc(1, sizeof(*c));
	if (!c) {
		log_error("out of memory for a client", "fd=%d", fd);
		close(fd);
		return;
	}
	c->fd = fd;
	c->pipe = (struct wire_pipe)WIRE_PIPE_INIT;
	net_peer_str(fd, c->peer, sizeof(c->peer));

	pthread_mutex_lock(&srv.lock);
	if (srv.nclients >= srv.max_clients) {
		n = srv.nclients;
		pthread_mutex_unlock(&srv.lock);
		srv.conns_refused++;
		log_warn("refused a connection: as many clients as --max-clients",
			 "peer=%s clients=%u max_clients=%u", c->peer, n,
			 srv.max_clients);
		close(fd);
		free(c);
		return;
	}
	c->next = srv.clients;
	if (c->next)
		c->next->prev = c;
	srv.clients = c;
	n = ++srv.nclients;
	srv.conns++;
	pthread_mutex_unlock(&srv.lock);
	/* Before the thread starts: it may end and free C at once. */
	log_info("client connected", "peer=%s clients=%u", c->peer, n);

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	e = pthread_create(&t, &attr, client_main, c);
	pthread_attr_destroy(&attr);
	if (e) {
		log_error("cannot start a client thread", "peer=%s err=\"%s\"",
			  c->peer, strerror(e));
		pthread_mutex_lock(&srv.lock);
		if (c->next)
			c->next->prev = NULL;
		srv.clients = c->next;
		srv.nclients--;
		pthread_mutex_unlock(&srv.lock);
		close(fd);
		free(c);
	}
}

/* Close every connection and wait (bounded) for their threads. */
static void stop_clients(void)
{
	struct timespec deadline;
	struct client *c;

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 5;
	pthread_mutex_lock(&srv.lock);
	for (c = srv.clients; c; c = c->next)
		shutdown(c->fd, SHUT_RDWR);
	while (srv.nclients &&
	       pthread_cond_timedwait(&srv.gone, &srv.lock, &deadline) == 0)
		;
	if (srv.nclients)
		log_warn("client threads still busy at exit", "clients=%u",
			 srv.nclients);
	pthread_mutex_unlock(&srv.lock);
}

/* A whole decimal number from 1 to MAX in *V, or -1. */
static int parse_count(const char *s, uint64_t max, uint64_t *v)
{
	char *end;
	unsigned long long n;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno || *end || n == 0 || n > max)
		return -1;
	*v = n;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "size", required_argument, NULL, 's' },
		{ "transport", required_argument, NULL, 't' },
		{ "log-level", required_argument, NULL, 'L' },
		{ "sched", required_argument, NULL, 'S' },
		{ "max-clients", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *listen_s = NULL, *size_s = NULL, *why;
	int verbs = 0;
	char err[512], bound[NETADDR_STR_MAX];
	struct signalfd_siginfo si;
	struct netaddr addr;
	struct pollfd pfd[2];
	uint64_t mb = 0, n;
	long pages, psz;
	sigset_t set;
	int c, lfd, sfd, lvl, policy = DLM_SCHED_BATCH;

	log_init("dlm-memserver", DLOG_INFO);
	while ((c = getopt_long(argc, argv, "l:s:t:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			listen_s = optarg;
			break;
		case 's':
			size_s = optarg;
			break;
		case 't':
			if (strcmp(optarg, "tcp") && strcmp(optarg, "verbs")) {
				fprintf(stderr, "dlm-memserver: --transport '%s': use tcp or verbs\n",
					optarg);
				return 2;
			}
			verbs = !strcmp(optarg, "verbs");
#ifndef DLM_WITH_VERBS
			if (verbs) {
				fprintf(stderr, "dlm-memserver: --transport verbs: built without rdma-core: apt-get install libibverbs-dev librdmacm-dev (or make deps), then make\n");
				return 1;
			}
#endif
			break;
		case 'L':
			lvl = log_parse_level(optarg);
			if (lvl < 0) {
				fprintf(stderr, "dlm-memserver: --log-level '%s': use debug, info, warn or error\n",
					optarg);
				return 2;
			}
			log_set_level((enum dlog_level)lvl);
			break;
		case 'S':
			policy = dlm_sched_parse(optarg);
			if (policy < 0) {
				fprintf(stderr, "dlm-memserver: --sched '%s': use batch, normal or idle\n",
					optarg);
				return 2;
			}
			break;
		case 'C':
			if (parse_count(optarg, MEMSERVER_CLIENTS_MAX, &n)) {
				fprintf(stderr, "dlm-memserver: --max-clients '%s': give a whole number, 1 to %u\n",
					optarg, MEMSERVER_CLIENTS_MAX);
				return 2;
			}
			srv.max_clients = (unsigned int)n;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("dlm-memserver %s (wire protocol %u)\n",
			       MEMSERVER_VERSION, WIRE_VERSION);
			return 0;
		default:
			fprintf(stderr, "Try 'dlm-memserver --help'.\n");
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "dlm-memserver: unexpected argument '%s' (see --help)\n",
			argv[optind]);
		return 2;
	}
	if (!listen_s || !size_s) {
		fprintf(stderr, "dlm-memserver: --listen ADDR:PORT and --size MB are both required (see --help)\n");
		return 2;
	}
	why = netaddr_parse(listen_s, &addr, 1);
	if (why) {
		fprintf(stderr, "dlm-memserver: --listen '%s': %s (e.g. 0.0.0.0:7777)\n",
			listen_s, why);
		return 2;
	}
	if (parse_count(size_s, MEMSERVER_MB_MAX, &mb)) {
		fprintf(stderr, "dlm-memserver: --size '%s': give whole megabytes, 1 to %llu\n",
			size_s, MEMSERVER_MB_MAX);
		return 2;
	}
	srv.size = mb << 20;
	/* Before any thread exists: the connections' threads inherit it. */
	dlm_sched_apply(policy);

	pages = sysconf(_SC_PHYS_PAGES);
	psz = sysconf(_SC_PAGESIZE);
	if (pages > 0 && psz > 0 && srv.size > (uint64_t)pages * (uint64_t)psz)
		log_warn("serving more memory than this machine has; writes may fail with out-of-memory",
			 "size=%" PRIu64 " ram=%" PRIu64, srv.size,
			 (uint64_t)pages * (uint64_t)psz);
	srv.mem = mmap(NULL, srv.size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (srv.mem == MAP_FAILED) {
		fprintf(stderr, "dlm-memserver: cannot map %" PRIu64 " MB: %s (lower --size, or check ulimit -v and vm.overcommit_memory)\n",
			mb, strerror(errno));
		return 1;
	}

	/* Signals are taken by the main loop only, through a signalfd. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	sfd = signalfd(-1, &set, SFD_CLOEXEC);
	if (sfd < 0) {
		fprintf(stderr, "dlm-memserver: signalfd: %s\n", strerror(errno));
		return 1;
	}

	lfd = verbs ? memserver_verbs_listen(&addr, srv.mem, srv.size,
					     srv.max_clients) : -1;
	if (verbs && lfd < 0)
		return 1;
	if (!verbs) {
		lfd = net_listen(&addr, bound, sizeof(bound), err, sizeof(err));
		if (lfd < 0) {
			fprintf(stderr, "dlm-memserver: %s\n", err);
			return 1;
		}
		log_info("listening", "addr=%s size=%" PRIu64 " max_io=%u sched=%s pid=%d",
			 bound, srv.size, WIRE_MAX_IO, dlm_sched_name(policy),
			 (int)getpid());
	}

	pfd[0] = (struct pollfd){ .fd = lfd, .events = POLLIN };
	pfd[1] = (struct pollfd){ .fd = sfd, .events = POLLIN };
	for (;;) {
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			log_error("poll failed", "err=\"%s\"", strerror(errno));
			break;
		}
		if (pfd[1].revents & POLLIN) {
			if (read(sfd, &si, sizeof(si)) != sizeof(si))
				continue;
			if (si.ssi_signo == SIGUSR1) {
				if (verbs)
					memserver_verbs_counters("counters");
				else
					log_counters("counters");
				continue;
			}
			log_info("signal received, exiting", "signal=%s",
				 si.ssi_signo == SIGINT ? "SIGINT" : "SIGTERM");
			break;
		}
		if (pfd[0].revents & POLLIN && verbs)
			memserver_verbs_event();
		else if (pfd[0].revents & POLLIN)
			accept_one(lfd);
	}
	if (verbs) {
		memserver_verbs_stop();
		memserver_verbs_counters("exit");
		return 0;
	}
	close(lfd);
	stop_clients();
	log_counters("exit");
	return 0;
}
