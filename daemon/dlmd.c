// SPDX-License-Identifier: GPL-2.0
/*
 * dlmd - the DLM compute-node daemon.
 *
 * Registers with dlmem.ko over generic netlink, maps the frame pool and
 * serves the kernel's requests: it places DLM pages on the memory servers
 * of the memfile and moves them between the pool and the servers.
 *
 * Startup order: memfile, netlink family (fail fast without the module),
 * memory servers (their sizes confirm the memfile), REGISTER, pool
 * mapping, then requests.  Shutdown: UNREGISTER first, then the servers.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <linux/dlmem_nl.h>

#include "cpusched.h"
#include "dispatch.h"
#include "dlm_mpi.h"
#include "log.h"
#include "memfile.h"
#include "nl.h"
#include "stats.h"
#include "transport.h"
#include "wire.h"

#define DLMD_VERSION		"0.1.0"
#define DLM_DEVICE		"/dev/dlm"
#define CONNECT_TIMEOUT_MS	5000
#define KERNEL_TIMEOUT_PARAM	"/sys/module/dlmem/parameters/request_timeout_ms"
#define IO_TIMEOUT_DEFAULT_MS	2000	/* when the module's is unknown */

struct options {
	const char *memfile;
	const char *stats_file;
	unsigned int stats_interval;	/* s; 0: only at exit */
	unsigned int io_timeout_ms;	/* 0: from the module's timeout */
	int no_keep;
	unsigned int replicas;		/* 1, or 2: servers mirrored in pairs */
	int mpi_proto;			/* enum dlm_mpi_proto */
	int mpi_level;			/* enum dlm_mpi_level */
	int mpi_wait;			/* enum dlm_mpi_wait */
	int mpi_opts;			/* an --mpi-* option was given */
	const char *transport;		/* --transport; NULL: tcp */
	int sched;			/* enum dlm_sched */
	int cpu;			/* --cpu: a CPU or DLM_CPU_* */
};

static struct {
	struct options opt;
	struct memfile mf;
	struct stats st;
	struct dlm_nl *nl;
	struct dispatch *d;
	const struct transport_ops *tops;
	uint8_t *pool;
	uint64_t pool_size;
	int devfd;
	int cpu;			/* the one dlmd runs on, or -1 */
	int stop_pipe[2];
	pthread_t sig_thread, nl_thread;	/* sig: waits for signals */
	struct dlm_mpi_info mpi;		/* .size 0: tcp transport */
	atomic_int registered;		/* completions go to the kernel */
	atomic_int nl_failed;
	atomic_uint_fast64_t send_fail_logged;
} g = { .devfd = -1, .stop_pipe = { -1, -1 } };

static void usage(FILE *f)
{
	fprintf(f,
"Usage: dlmd -f MEMFILE [OPTIONS]\n"
"\n"
"The DLM compute-node daemon: back remote DLM spaces with the memory of\n"
"memory servers.\n"
"\n"
"dlmd registers with the dlmem kernel module over generic netlink (family\n"
"\"dlm\"), maps the module's frame pool from /dev/dlm, and then serves the\n"
"kernel's requests: when a program's DLM space is over its local budget\n"
"the kernel asks dlmd to STORE a victim DLM page, and dlmd sends it from\n"
"the pool to a memory server (dlm-memserver); on a fault it asks dlmd to\n"
"FETCH a page, and dlmd receives it from its server straight into the\n"
"pool.  Pages are placed in rank order: the first server with free\n"
"capacity first.  Only one dlmd runs per machine; it must run as root\n"
"(CAP_SYS_ADMIN).\n"
"\n"
"Options:\n"
"  -f, --memfile PATH        the memfile (required), see below\n"
"      --log-level LEVEL     debug, info (default), warn or error\n"
"      --stats-file PATH     write the counters as JSON to PATH (atomically,\n"
"                            by rename) every --stats-interval and at exit\n"
"      --stats-interval S    seconds between stats writes (default 10;\n"
"                            0 = at exit only)\n"
"      --io-timeout S        a memory server that does not answer within S\n"
"                            seconds (decimals allowed) is declared dead;\n"
"                            default: half the module's request_timeout_ms,\n"
"                            so that the kernel sees EIO for that server's\n"
"                            pages before it gives up on dlmd altogether\n"
"  -t, --transport T         how to reach the memfile's servers: tcp\n"
"                            (default) or verbs (RDMA READ/WRITE between\n"
"                            the frame pool and the server's memory, with\n"
"                            rdma-core; the servers run dlm-memserver\n"
"                            --transport verbs); see VERBS below\n"
"      --replicas N          1 (default) or 2: keep every stored DLM page on\n"
"                            two memory servers; the memfile's servers form\n"
"                            pairs in order (1+2, 3+4, ...; an even number\n"
"                            is needed), each pair one server of the smaller\n"
"                            size.  Losing one server of a pair loses no\n"
"                            page (its mirror serves it; logged); losing\n"
"                            both fails that pair's pages.  A lost server\n"
"                            restarted at its address rejoins: what the\n"
"                            pair holds is copied to it, then it is used\n"
"                            again (logged).  tcp or verbs\n"
"      --no-keep             release a page's server copy when the kernel\n"
"                            fetches it (by default the copy is kept while\n"
"                            spare capacity allows, so a page the program\n"
"                            only reads is evicted without a transfer)\n"
"      --sched P             CPU policy of dlmd's threads: batch (default;\n"
"                            SCHED_BATCH: a thread woken to move a page\n"
"                            does not preempt the program it serves, it\n"
"                            takes an idle CPU or waits for the next tick),\n"
"                            normal (SCHED_OTHER) or idle (SCHED_IDLE: only\n"
"                            CPU time nothing else wants; while other work\n"
"                            starves them, a guard lifts the threads to\n"
"                            SCHED_BATCH; needs root or RLIMIT_NICE, and\n"
"                            Linux 6.6 or later to lift them in time)\n"
"      --cpu C               the CPU dlmd's threads run on: auto (default:\n"
"                            one CPU under mpirun, see MPI below; the\n"
"                            affinity inherited otherwise), none (as\n"
"                            inherited) or a CPU number (one dlmd may use)\n"
"  -h, --help                this text\n"
"  -V, --version             versions of dlmd and of the protocols it speaks\n"
"\n"
"Memfile (as in DLM-MPI; '#' starts a comment, blank lines are ignored),\n"
"for example:\n"
"  1024                  first line: local MB, the frame pool dlmd asks the\n"
"                        kernel for\n"
"  4096 10.0.0.2:7777    memory server 1: the MB it gives dlmd, and\n"
"                        HOST:PORT of its dlm-memserver ([IPV6]:PORT for\n"
"                        IPv6)\n"
"  4096 10.0.0.3:7777    memory server 2, and so on, one line per server in\n"
"                        rank order\n"
"MB are mebibytes.  A server that reports less memory than its line says is\n"
"used at its own size.\n"
"\n"
"Failures: a memory server that cannot be reached at startup, drops its\n"
"connection, or does not answer within --io-timeout is marked dead and\n"
"logged once; FETCHes of its pages complete with EIO (the program gets\n"
"SIGBUS on those pages only), pending STOREs are re-placed on the other\n"
"servers, and new pages go to the live servers.  Bad requests from the\n"
"kernel are answered EINVAL.\n"
"\n"
"Signals: SIGTERM or SIGINT unregisters from the kernel (requests still in\n"
"flight fail there) and exits 0; SIGUSR1 logs the counters.\n"
"\n"
"Logging: key=value lines on stderr, e.g.\n"
"  ts=... level=info prog=dlmd msg=\"registered\" pool_bytes=1073741824\n"
"\n"
"Stats: counters by op, bytes, errors and p50/p99 latencies; the JSON\n"
"fields are described in daemon/README.md.\n"
"\n"
"VERBS: with --transport verbs each memfile address is where the server's\n"
"dlm-memserver listens for rdma_cm (it resolves to the local RDMA device\n"
"toward it, e.g. [fe80::1%%eth0]:7777); dlmd connects one RC queue pair\n"
"per server, registers the whole frame pool once, and moves every page\n"
"with one RDMA READ or WRITE: no copy here, no CPU there.  dlmd needs an\n"
"RDMA device (ibv_devices; soft-RoCE: modprobe rdma_rxe; rdma link add\n"
"rxe0 type rxe netdev IFACE).  A server that disconnects, a failed work\n"
"request, or one that makes no progress for --io-timeout marks the server\n"
"dead, as above.\n"
"\n"
"MPI (as DLM-MPI): started by mpirun, dlmd runs as an MPI program:\n"
"  mpirun -np N dlmd -f MEMFILE [OPTIONS]\n"
"rank 0 serves the kernel and ranks 1..N-1 are the memory servers of the\n"
"memfile's server lines, in order (lines without HOST:PORT; no\n"
"dlm-memserver is needed).  dlmd finds out it runs under Open MPI or MPICH\n"
"and runs dlmd-openmpi or dlmd-mpich from its own directory.  Open MPI\n"
"needs --allow-run-as-root to start it as root.\n"
"      --mpi-protocol P      auto (default), as1, as2 or cs; auto picks by the\n"
"                            thread level MPI provides: serialized or\n"
"                            multiple -> as1, funneled -> as2, single -> cs\n"
"      --mpi-thread-level L  the level to ask MPI_Init_thread for: single,\n"
"                            funneled, serialized or multiple (default: what\n"
"                            the protocol needs; multiple for auto)\n"
"      --mpi-server-wait W   how memory server ranks wait while a page moves:\n"
"                            poll (in MPI's blocking calls), sleep (test and\n"
"                            sleep up to 50 us: frees the CPU where ranks\n"
"                            outnumber cores) or auto (default): sleep on a\n"
"                            node where this job's ranks are at least as\n"
"                            many as the CPUs, poll where each has a core\n"
"Under --cpu auto with --sched batch or normal, rank 0 runs on one CPU,\n"
"the last it may use (if it may use two or more), and leaves the others\n"
"to the program: left to the scheduler, its threads go to the program's\n"
"CPU while the polling ranks keep the others busy.  If the program is\n"
"bound to that CPU, move one of them (--cpu N, taskset).\n"
"A rank that dies or a server that does not answer within --io-timeout\n"
"ends the MPI job (MPI cannot lose a rank): the kernel then fails the\n"
"outstanding requests, the programs get SIGBUS.\n"
"\n"
"Exit status: 0 after SIGTERM/SIGINT, 1 on an error (bad memfile, module\n"
"not loaded, registration refused, netlink failure, or the kernel dropping\n"
"dlmd after a request outlived its request_timeout_ms), 2 on a usage error.\n"
"\n"
"Example:\n"
"  dlm-memserver --listen 0.0.0.0:7777 --size 4096     # on each server\n"
"  dlmd -f /etc/dlm/memfile --stats-file /run/dlmd.json  # on the node\n");
}

static int parse_uint(const char *s, unsigned int max, unsigned int *out)
{
	unsigned long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > max)
		return -1;
	*out = (unsigned int)v;
	return 0;
}

static int parse_seconds_ms(const char *s, unsigned int *ms)
{
	char *end;
	double v;

	if ((*s < '0' || *s > '9') && *s != '.')
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || v < 0.001 || v > 3600)
		return -1;
	*ms = (unsigned int)(v * 1000 + 0.5);
	return 0;
}

/* The module's request_timeout_ms, or 0 if it cannot be read. */
static unsigned int kernel_timeout_ms(void)
{
	FILE *f = fopen(KERNEL_TIMEOUT_PARAM, "re");
	unsigned int v = 0;

	if (f) {
		if (fscanf(f, "%u", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

/*
 * --mpi-NAME ARG through PARSE into *OUT; -1 with a usage message naming
 * CHOICES if ARG is none of them.
 */
static int mpi_opt(int (*parse)(const char *), const char *name,
		   const char *arg, const char *choices, int *out)
{
	int v = parse(arg);

	if (v < 0) {
		fprintf(stderr, "dlmd: --mpi-%s '%s': use %s\n", name, arg,
			choices);
		return -1;
	}
	*out = v;
	g.opt.mpi_opts = 1;
	return 0;
}

static int parse_options(int argc, char **argv)
{
	enum { O_LOG = 256, O_STATS_FILE, O_STATS_INT, O_IO_TIMEOUT,
	       O_NO_KEEP, O_MPI_PROTO, O_MPI_LEVEL, O_MPI_WAIT, O_REPLICAS,
	       O_SCHED, O_CPU };
	static const struct option opts[] = {
		{ "memfile", required_argument, NULL, 'f' },
		{ "log-level", required_argument, NULL, O_LOG },
		{ "stats-file", required_argument, NULL, O_STATS_FILE },
		{ "stats-interval", required_argument, NULL, O_STATS_INT },
		{ "io-timeout", required_argument, NULL, O_IO_TIMEOUT },
		{ "no-keep", no_argument, NULL, O_NO_KEEP },
		{ "replicas", required_argument, NULL, O_REPLICAS },
		{ "transport", required_argument, NULL, 't' },
		{ "mpi-protocol", required_argument, NULL, O_MPI_PROTO },
		{ "mpi-thread-level", required_argument, NULL, O_MPI_LEVEL },
		{ "mpi-server-wait", required_argument, NULL, O_MPI_WAIT },
		{ "sched", required_argument, NULL, O_SCHED },
		{ "cpu", required_argument, NULL, O_CPU },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c, lvl;

	g.opt.stats_interval = 10;
	g.opt.sched = DLM_SCHED_BATCH;
	g.opt.cpu = DLM_CPU_AUTO;
	g.opt.replicas = 1;
	g.opt.mpi_proto = DLM_MPI_AUTO;
	g.opt.mpi_level = DLM_MPI_LEVEL_DEFAULT;
	while ((c = getopt_long(argc, argv, "f:t:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			g.opt.memfile = optarg;
			break;
		case O_LOG:
			lvl = log_parse_level(optarg);
			if (lvl < 0) {
				fprintf(stderr, "dlmd: --log-level '%s': use debug, info, warn or error\n",
					optarg);
				return 2;
			}
			log_set_level((enum dlog_level)lvl);
			break;
		case O_STATS_FILE:
			g.opt.stats_file = optarg;
			break;
		case O_STATS_INT:
			if (parse_uint(optarg, 86400, &g.opt.stats_interval)) {
				fprintf(stderr, "dlmd: --stats-interval '%s': give whole seconds, 0 to 86400\n",
					optarg);
				return 2;
			}
			break;
		case O_IO_TIMEOUT:
			if (parse_seconds_ms(optarg, &g.opt.io_timeout_ms)) {
				fprintf(stderr, "dlmd: --io-timeout '%s': give seconds, 0.001 to 3600\n",
					optarg);
				return 2;
			}
			break;
		case O_NO_KEEP:
			g.opt.no_keep = 1;
			break;
		case O_REPLICAS:
			if (parse_uint(optarg, 2, &g.opt.replicas) ||
			    !g.opt.replicas) {
				fprintf(stderr, "dlmd: --replicas '%s': use 1 or 2\n",
					optarg);
				return 2;
			}
			break;
		case 't':
			if (strcmp(optarg, "tcp") && strcmp(optarg, "verbs")) {
				fprintf(stderr, "dlmd: --transport '%s': use tcp or verbs (under mpirun the transport is mpi)\n",
					optarg);
				return 2;
			}
			g.opt.transport = optarg;
			break;
		case O_MPI_PROTO:
			if (mpi_opt(dlm_mpi_parse_proto, "protocol", optarg,
				    "auto, as1, as2 or cs", &g.opt.mpi_proto))
				return 2;
			break;
		case O_MPI_LEVEL:
			if (mpi_opt(dlm_mpi_parse_level, "thread-level", optarg,
				    "single, funneled, serialized or multiple",
				    &g.opt.mpi_level))
				return 2;
			break;
		case O_MPI_WAIT:
			if (mpi_opt(dlm_mpi_parse_wait, "server-wait", optarg,
				    "auto, poll or sleep", &g.opt.mpi_wait))
				return 2;
			break;
		case O_SCHED:
			g.opt.sched = dlm_sched_parse(optarg);
			if (g.opt.sched < 0) {
				fprintf(stderr, "dlmd: --sched '%s': use batch, normal or idle\n",
					optarg);
				return 2;
			}
			break;
		case O_CPU:
			g.opt.cpu = dlm_cpu_parse(optarg);
			if (g.opt.cpu == DLM_CPU_BAD) {
				fprintf(stderr, "dlmd: --cpu '%s': use auto, none or a CPU number\n",
					optarg);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			printf("dlmd %s (generic netlink family %s version %u, memserver protocol %u)\n"
			       "transports: tcp%s%s\n",
			       DLMD_VERSION, DLM_GENL_NAME, DLM_GENL_VERSION,
			       WIRE_VERSION,
#ifdef DLM_WITH_VERBS
			       " verbs",
#else
			       "",
#endif
#ifdef DLM_WITH_MPI
			       " mpi"
#else
			       ""
#endif
			       );
			exit(0);
		default:
			fprintf(stderr, "Try 'dlmd --help'.\n");
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "dlmd: unexpected argument '%s' (see dlmd --help)\n",
			argv[optind]);
		return 2;
	}
	if (!g.opt.memfile) {
		fprintf(stderr, "dlmd: no memfile: dlmd -f MEMFILE (see dlmd --help)\n");
		return 2;
	}
	return 0;
}

/* ---- completion and requests ------------------------------------------------ */

static void complete(void *ctx, uint64_t req_id, int32_t status,
		     uint32_t flags)
{
	(void)ctx;
	if (!atomic_load(&g.registered))
		return;		/* unregistered: the kernel failed it already */
	dlm_nl_complete(g.nl, req_id, status, flags);
}

static void on_request(void *ctx, const struct dlm_request *r)
{
	dispatch_request(ctx, r);
}

static void *nl_main(void *arg)
{
	int r = dlm_nl_run(g.nl, on_request, arg, g.stop_pipe[0]);

	if (r == -EPIPE) {
		/* Dropped by the kernel (logged): nothing to unregister. */
		atomic_store(&g.registered, 0);
		atomic_store(&g.nl_failed, 1);
		pthread_kill(g.sig_thread, SIGUSR2);
	} else if (r) {
		log_error("netlink channel failed: exiting", "err=\"%s\"",
			  strerror(-r));
		atomic_store(&g.nl_failed, 1);
		pthread_kill(g.sig_thread, SIGUSR2);
	}
	return NULL;
}

/* ---- stats file ----------------------------------------------------------------- */

static void write_stats(void)
{
	char tmp[4096];
	time_t now = time(NULL);
	struct tm tm;
	char ts[64];
	FILE *f;

	if (!g.opt.stats_file)
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp", g.opt.stats_file);
	f = fopen(tmp, "we");
	if (!f) {
		log_warn("cannot write the stats file", "path=%s err=\"%s\"",
			 tmp, strerror(errno));
		return;
	}
	gmtime_r(&now, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	fprintf(f, "{\n  \"program\": \"dlmd\",\n  \"version\": \"%s\",\n"
		"  \"pid\": %d,\n  \"time\": \"%s\",\n", DLMD_VERSION,
		(int)getpid(), ts);
	stats_json(&g.st, f);
	fprintf(f, ",\n");
	if (g.d)
		dispatch_json(g.d, f);
	else
		fprintf(f, "  \"servers\": []");
	fprintf(f, "\n}\n");
	if (fclose(f) || rename(tmp, g.opt.stats_file)) {
		log_warn("cannot write the stats file", "path=%s err=\"%s\"",
			 g.opt.stats_file, strerror(errno));
		unlink(tmp);
	}
}

/* ---- startup ----------------------------------------------------------------------- */

/*
 * --replicas 2: the memfile's servers in pairs, each pair one mirrored
 * server of the dispatcher (transport_mirror.c), named "A+B", of the
 * smaller of the two sizes.
 */
static int connect_mirrored(void)
{
	unsigned int i, n = g.mf.nservers / 2, alive = 0;
	const char **names = calloc(n, sizeof(*names));
	uint64_t *cap = calloc(n, sizeof(*cap));
	char (*pair)[2 * NETADDR_STR_MAX + 2] = calloc(n, sizeof(*pair));
	struct dispatch_cfg cfg = {
		.tops = &transport_mirror, .complete = complete, .st = &g.st,
		.no_keep = g.opt.no_keep,
	};
	char err[1024];
	int ret = -1;

	if (!names || !cap || !pair) {
		fprintf(stderr, "dlmd: out of memory\n");
		goto out;
	}
	for (i = 0; i < n; i++) {
		const struct memfile_server *a = &g.mf.servers[2 * i];
		const struct memfile_server *b = &g.mf.servers[2 * i + 1];

		snprintf(pair[i], sizeof(pair[i]), "%s+%s", a->addr_str,
			 b->addr_str);
		names[i] = pair[i];
		cap[i] = (a->mb < b->mb ? a->mb : b->mb) << 20;
	}
	g.d = dispatch_create(&cfg, n, names, cap);
	if (!g.d) {
		fprintf(stderr, "dlmd: out of memory\n");
		goto out;
	}
	for (i = 0; i < n; i++) {
		const struct netaddr *addr[2] = {
			&g.mf.servers[2 * i].addr, &g.mf.servers[2 * i + 1].addr,
		};
		struct transport_opts o = {
			.connect_timeout_ms = CONNECT_TIMEOUT_MS,
			.io_timeout_ms = g.opt.io_timeout_ms,
			.dead = dispatch_server_dead,
			.ctx = g.d,
			.index = i,
			.want_size = cap[i],
		};
		struct tconn *c;
		uint64_t size = 0;

		if (mirror_open(&c, g.tops, addr, &o, &size, err, sizeof(err))) {
			dispatch_server_dead(g.d, i, err);	/* logs it */
			continue;
		}
		dispatch_attach(g.d, i, c, size);
		alive++;
	}
	if (!alive)
		log_warn("no memory server reachable: spaces that need remote memory will be refused (ENOSPC)",
			 "servers=%u", g.mf.nservers);
	log_info("replicating every stored page on two memory servers",
		 "pairs=%u transport=%s", n, g.tops->name);
	ret = 0;
out:
	free(names);
	free(cap);
	free(pair);
	return ret;
}

static int connect_servers(void)
{
	const char **names = calloc(g.mf.nservers, sizeof(*names));
	uint64_t *cap = calloc(g.mf.nservers, sizeof(*cap));
	struct dispatch_cfg cfg = {
		.tops = g.tops, .complete = complete, .st = &g.st,
		.no_keep = g.opt.no_keep,
	};
	unsigned int i, alive = 0;
	char err[512];

	if (!names || !cap) {
		fprintf(stderr, "dlmd: out of memory\n");
		free(names);
		free(cap);
		return -1;
	}
	for (i = 0; i < g.mf.nservers; i++) {
		if (g.mpi.size)		/* servers are ranks: name them so */
			snprintf(g.mf.servers[i].addr_str,
				 sizeof(g.mf.servers[i].addr_str), "rank%u",
				 i + 1);
		names[i] = g.mf.servers[i].addr_str;
		cap[i] = g.mf.servers[i].mb << 20;
	}
	g.d = dispatch_create(&cfg, g.mf.nservers, names, cap);
	free(names);
	free(cap);
	if (!g.d) {
		fprintf(stderr, "dlmd: out of memory\n");
		return -1;
	}
	for (i = 0; i < g.mf.nservers; i++) {
		struct transport_opts o = {
			.connect_timeout_ms = CONNECT_TIMEOUT_MS,
			.io_timeout_ms = g.opt.io_timeout_ms,
			.dead = dispatch_server_dead,
			.ctx = g.d,
			.index = i,
			.want_size = g.mf.servers[i].mb << 20,
		};
		struct tconn *c;
		uint64_t size = 0;

		if (g.tops->open(&c, &g.mf.servers[i].addr, &o, &size, err,
				 sizeof(err))) {
			dispatch_server_dead(g.d, i, err);	/* logs it */
			continue;
		}
		dispatch_attach(g.d, i, c, size);
		alive++;
	}
	if (!alive)
		log_warn("no memory server reachable: spaces that need remote memory will be refused (ENOSPC)",
			 "servers=%u", g.mf.nservers);
	return 0;
}

static int map_pool(const struct dlm_nl_reg *reg)
{
	g.devfd = open(DLM_DEVICE, O_RDWR | O_CLOEXEC);
	if (g.devfd < 0) {
		fprintf(stderr, "dlmd: %s: %s%s\n", DLM_DEVICE, strerror(errno),
			errno == ENOENT ? " (load the module: modprobe dlmem; is udev running?)" :
			errno == EACCES ? " (run dlmd as root)" : "");
		return -1;
	}
	g.pool_size = reg->pool_size;
	g.pool = mmap(NULL, g.pool_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		      g.devfd, DLM_POOL_OFFSET);
	if (g.pool == MAP_FAILED) {
		fprintf(stderr, "dlmd: cannot map the frame pool (%" PRIu64 " bytes of %s at offset %d): %s\n",
			g.pool_size, DLM_DEVICE, DLM_POOL_OFFSET, strerror(errno));
		g.pool = NULL;
		return -1;
	}
	return 0;
}

static void shutdown_all(void)
{
	int r;

	if (g.nl_thread) {
		if (write(g.stop_pipe[1], "x", 1) != 1)
			log_warn("cannot stop the netlink thread", "err=\"%s\"",
				 strerror(errno));
		pthread_join(g.nl_thread, NULL);
	}
	if (atomic_exchange(&g.registered, 0)) {
		r = dlm_nl_unregister(g.nl);
		if (r)
			log_warn("DLM_NL_CMD_UNREGISTER failed", "err=\"%s\"",
				 strerror(-r));
		else
			log_info("unregistered", "pid=%d", (int)getpid());
	}
	if (g.nl_thread) {
		stats_log(&g.st, "exit");
		write_stats();	/* the final numbers, servers included */
	}
	dispatch_destroy(g.d);
	g.d = NULL;
	if (g.pool)
		munmap(g.pool, g.pool_size);
	if (g.devfd >= 0)
		close(g.devfd);
	dlm_nl_close(g.nl);
	memfile_free(&g.mf);
}

#ifndef DLM_WITH_MPI
/*
 * Started by mpirun?  Then the MPI build for that MPI, from dlmd's own
 * directory, takes over (this binary links no MPI).  Returns only on an
 * error, with the exit status.
 */
static int exec_mpi_build(char **argv)
{
	const char *impl = getenv("OMPI_COMM_WORLD_SIZE") ? "openmpi" :
			   getenv("PMI_SIZE") ? "mpich" : NULL;
	char self[4096], path[4200], *slash;
	ssize_t n;

	if (!impl) {
		if (g.opt.mpi_opts) {
			fprintf(stderr, "dlmd: --mpi-* options need an MPI launch: mpirun -np N dlmd -f MEMFILE (see dlmd --help)\n");
			return 2;
		}
		return 0;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		fprintf(stderr, "dlmd: cannot find my own path: %s\n",
			strerror(errno));
		return 1;
	}
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (slash)
		*slash = '\0';
	snprintf(path, sizeof(path), "%s/dlmd-%s", self, impl);
	execv(path, argv);
	fprintf(stderr, "dlmd: started by mpirun (%s), but %s cannot run: %s (build it with 'make', which needs the %s development package)\n",
		impl, path, strerror(errno),
		!strcmp(impl, "mpich") ? "libmpich-dev" : "libopenmpi-dev");
	return 1;
}
#endif

/* Rank 0's memfile must name one server per other rank. */
static int check_ranks(void)
{
	if (!g.mpi.size || g.mf.nservers == (unsigned int)g.mpi.size - 1)
		return 0;
	fprintf(stderr, "dlmd: memfile %s lists %u memory server%s but mpirun started %d rank%s (rank 0 is dlmd itself): run mpirun -np %u, or give the memfile %d server line%s\n",
		g.opt.memfile, g.mf.nservers, g.mf.nservers == 1 ? "" : "s",
		g.mpi.size, g.mpi.size == 1 ? "" : "s", g.mf.nservers + 1,
		g.mpi.size - 1, g.mpi.size == 2 ? "" : "s");
	return -1;
}

/* Waits for signals until one says exit; returns the exit status. */
static int signal_loop(void)
{
	uint64_t next_stats;
	struct timespec to;
	sigset_t set;
	siginfo_t si;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	write_stats();
	next_stats = now_ns() + (uint64_t)g.opt.stats_interval * 1000000000ULL;
	for (;;) {
		uint64_t now = now_ns(), wait;

		if (g.opt.stats_file && g.opt.stats_interval && now >= next_stats) {
			write_stats();
			next_stats = now + (uint64_t)g.opt.stats_interval * 1000000000ULL;
		}
		wait = g.opt.stats_file && g.opt.stats_interval ?
		       next_stats - now_ns() : 3600ULL * 1000000000ULL;
		if ((int64_t)wait < 0)
			wait = 0;
		to.tv_sec = (time_t)(wait / 1000000000ULL);
		to.tv_nsec = (long)(wait % 1000000000ULL);
		sig = sigtimedwait(&set, &si, &to);
		if (sig < 0)
			continue;	/* timeout or EINTR */
		if (sig == SIGUSR1) {
			stats_log(&g.st, "stats");
			continue;
		}
		if (sig == SIGUSR2) {
			if (!atomic_load(&g.nl_failed))
				continue;
			return 1;
		}
		log_info("signal received, exiting", "signal=%s",
			 sig == SIGINT ? "SIGINT" : "SIGTERM");
		return 0;
	}
}

#ifdef DLM_WITH_MPI
static int sig_code;

static void *sig_main(void *arg)
{
	(void)arg;
	sig_code = signal_loop();
	dlm_mpi_progress_stop();
	return NULL;
}

/* MPI: the main thread makes progress, another waits for signals. */
static int serve(void)
{
	int r = pthread_create(&g.sig_thread, NULL, sig_main, NULL);

	if (r) {
		fprintf(stderr, "dlmd: cannot start the signal thread: %s\n",
			strerror(r));
		return 1;
	}
	pthread_setname_np(g.sig_thread, "dlmd-signals");
	dlm_mpi_progress();
	pthread_join(g.sig_thread, NULL);
	return sig_code;
}

static int finish(int code)
{
	shutdown_all();
	dlm_mpi_finish();
	return code;
}

static int start_mpi(int *argc, char ***argv)
{
	static char prog[32];
	char err[1024];

	if (dlm_mpi_init(argc, argv, g.opt.mpi_proto, g.opt.mpi_level,
			 &g.mpi, err, sizeof(err))) {
		fprintf(stderr, "dlmd: %s\n", err);
		return 1;
	}
	g.mpi.server_wait = dlm_mpi_resolve_wait(g.opt.mpi_wait,
						 g.mpi.node_ranks,
						 g.mpi.node_cpus);
	if (g.mpi.rank) {
		sigset_t set;

		/* A memory server rank dies of mpirun's SIGTERM as usual. */
		sigemptyset(&set);
		sigaddset(&set, SIGTERM);
		sigaddset(&set, SIGINT);
		pthread_sigmask(SIG_UNBLOCK, &set, NULL);
		snprintf(prog, sizeof(prog), "dlmd-rank%d", g.mpi.rank);
		log_set_prog(prog);
		exit(dlm_mpi_server_main(&g.mpi));
	}
	log_info("MPI job", "library=\"%s\" ranks=%d thread_level_requested=%s thread_level_provided=%s protocol=%s server_wait=%s node_ranks=%d node_cpus=%d",
		 g.mpi.library, g.mpi.size,
		 dlm_mpi_level_name(g.mpi.requested),
		 dlm_mpi_level_name(g.mpi.provided),
		 dlm_mpi_proto_name(g.mpi.proto),
		 dlm_mpi_wait_name(g.mpi.server_wait), g.mpi.node_ranks,
		 g.mpi.node_cpus);
	g.tops = &transport_mpi;
	return 0;
}
#else
static int serve(void)
{
	return signal_loop();
}

static int finish(int code)
{
	shutdown_all();
	return code;
}
#endif

/* --transport: 0 with g.tops set, or the exit status. */
static int select_transport(void)
{
	if (!g.opt.transport)
		return 0;
	if (g.mpi.size) {
		fprintf(stderr, "dlmd: --transport %s: under mpirun the memory servers are MPI ranks, reached by MPI: drop --transport\n",
			g.opt.transport);
		return 2;
	}
	if (!strcmp(g.opt.transport, "verbs")) {
#ifdef DLM_WITH_VERBS
		char err[512];

		g.tops = &transport_verbs;
		if (g.tops->probe(err, sizeof(err))) {
			fprintf(stderr, "dlmd: --transport verbs: %s\n", err);
			return 1;
		}
#else
		fprintf(stderr, "dlmd: --transport verbs: this dlmd was built without rdma-core: apt-get install libibverbs-dev librdmacm-dev (or make deps), then make\n");
		return 1;
#endif
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct dlm_nl_reg reg;
	char err[1024], cpu[16];
	uint64_t want;
	sigset_t set;
	unsigned int kt;
	int r;

	log_init("dlmd", DLOG_INFO);
	r = parse_options(argc, argv);
	if (r)
		return r;
	/* Before any thread exists, so that all of them, MPI's too, get it. */
	dlm_sched_apply(g.opt.sched);
	/*
	 * Signals go to sigtimedwait() in one thread only: blocked before
	 * any thread exists, MPI's own included.
	 */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	stats_init(&g.st);
	g.tops = &transport_tcp;
#ifdef DLM_WITH_MPI
	r = start_mpi(&argc, &argv);
#else
	r = exec_mpi_build(argv);
#endif
	if (r)
		return r;
	r = select_transport();
	if (r)
		return finish(r);
	/* Rank 0 (the ranks serve from start_mpi()), before its threads. */
	g.cpu = dlm_cpu_apply(g.opt.cpu, g.mpi.size &&
			      g.opt.sched != DLM_SCHED_IDLE, err, sizeof(err));
	if (g.cpu == -EINVAL) {
		fprintf(stderr, "dlmd: %s\n", err);
		return finish(2);
	}
	g.sig_thread = pthread_self();

	if (memfile_load(g.opt.memfile, g.mpi.size ? 0 : MEMFILE_NEED_ADDR,
			 &g.mf, err, sizeof(err))) {
		fprintf(stderr, "dlmd: memfile %s\n", err);
		return finish(1);
	}
	if (check_ranks())
		return finish(1);
	if (g.opt.replicas == 2 && (g.mpi.size || g.mf.nservers % 2)) {
		fprintf(stderr, g.mpi.size ?
			"dlmd: --replicas 2 works with the tcp and verbs transports, not under mpirun\n" :
			"dlmd: --replicas 2: the memfile names %u memory servers; mirroring pairs them in order (1+2, 3+4, ...), so give an even number\n",
			g.mf.nservers);
		return finish(2);
	}
	signal(SIGPIPE, SIG_IGN);

	r = dlm_nl_open(&g.nl, &g.st, err, sizeof(err));
	if (r) {
		fprintf(stderr, "dlmd: %s\n", err);
		return finish(1);
	}
	kt = kernel_timeout_ms();
	if (!g.opt.io_timeout_ms) {
		g.opt.io_timeout_ms = kt ? kt / 2 : IO_TIMEOUT_DEFAULT_MS;
		if (g.opt.io_timeout_ms < 100)
			g.opt.io_timeout_ms = 100;
	} else if (kt && g.opt.io_timeout_ms >= kt) {
		log_warn("--io-timeout is not below the module's request_timeout_ms: a stuck memory server will make the kernel drop dlmd as a whole",
			 "io_timeout_ms=%u request_timeout_ms=%u",
			 g.opt.io_timeout_ms, kt);
	}
	snprintf(cpu, sizeof(cpu), g.cpu >= 0 ? "%d" : "any", g.cpu);
	log_info("starting", "version=%s memfile=%s local_mb=%" PRIu64 " servers=%u transport=%s io_timeout_ms=%u sched=%s cpu=%s pid=%d",
		 DLMD_VERSION, g.opt.memfile, g.mf.local_mb, g.mf.nservers,
		 g.tops->name, g.opt.io_timeout_ms,
		 dlm_sched_name(g.opt.sched), cpu, (int)getpid());
	/*
	 * Swap may go to /dev/dlmbN, which only dlmd can serve: if dlmd's own
	 * memory were swapped out, reclaim would wait on itself.  Under MPI
	 * only what is touched is locked: the MPI library maps large
	 * shared-memory segments that would take long to populate.
	 */
	if (mlockall(MCL_CURRENT | MCL_FUTURE | (g.mpi.size ? MCL_ONFAULT : 0)))
		log_warn("cannot lock dlmd's memory: swap on /dev/dlmbN may stall under memory pressure (run as root or grant CAP_IPC_LOCK)",
			 "errno=%d", errno);
	if (g.opt.replicas == 2 ? connect_mirrored() : connect_servers())
		return finish(1);

	want = g.mf.local_mb << 20;
	r = dlm_nl_register(g.nl, want, &reg, err, sizeof(err));
	if (r) {
		fprintf(stderr, "dlmd: %s\n", err);
		return finish(1);
	}
	atomic_store(&g.registered, 1);
	if (!reg.pool_size) {
		fprintf(stderr, "dlmd: the kernel granted no frame pool (asked for %" PRIu64 " bytes): check the module's limits (dmesg)\n",
			want);
		return finish(1);
	}
	if (!reg.cpu_page_size)
		reg.cpu_page_size = (uint32_t)sysconf(_SC_PAGESIZE);
	/* The grant counts the witness page (dlmem_nl.h): mapped whole. */
	if (reg.pool_size != want + reg.cpu_page_size)
		/* A pool still used by spaces of a previous dlmd is kept. */
		log_warn("the kernel granted another frame pool size than the memfile asks (a pool still in use keeps its size)",
			 "wanted=%" PRIu64 " granted=%" PRIu64, want, reg.pool_size);
	if (map_pool(&reg))
		return finish(1);
	if (dispatch_set_pool(g.d, g.pool, g.pool_size, reg.cpu_page_size,
			      err, sizeof(err))) {
		fprintf(stderr, "dlmd: %s\n", err);
		return finish(1);
	}
	if (dispatch_start(g.d)) {
		fprintf(stderr, "dlmd: out of memory\n");
		return finish(1);
	}
	log_info("registered", "pool_bytes=%" PRIu64 " cpu_page_size=%u genl_version=%u alive_servers=%u",
		 g.pool_size, reg.cpu_page_size, reg.version,
		 dispatch_alive_servers(g.d));

	if (pipe2(g.stop_pipe, O_CLOEXEC)) {
		fprintf(stderr, "dlmd: pipe: %s\n", strerror(errno));
		return finish(1);
	}
	r = pthread_create(&g.nl_thread, NULL, nl_main, g.d);
	if (r) {
		fprintf(stderr, "dlmd: cannot start the netlink thread: %s\n",
			strerror(r));
		g.nl_thread = 0;
		return finish(1);
	}
	pthread_setname_np(g.nl_thread, "dlmd-netlink");
	return finish(serve());
}
