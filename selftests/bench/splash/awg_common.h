/* SPDX-License-Identifier: GPL-2.0 */
/*
 * awg_common.h - the AWG-STAR side of the SPLASH-2-style kernels: one
 * process per node, each on its own board (--device, default $AWG_DEVICE
 * or /dev/awgstar); node number and count from the board's live mask; all
 * shared data in the board's region, read through awg_map(), written with
 * awg_poke64()/awg_write(), synchronised only with awg_barrier().
 *
 * The last AWGB_RESULTS bytes of the region hold, per node, what it
 * measured; node 0 adds them up for the result line.  Every failure of a
 * board call ends the program (status 2) with a message.
 */
#ifndef SPLASH_AWG_COMMON_H
#define SPLASH_AWG_COMMON_H

#include <awgstar.h>

#include "common.h"

#define AWGB_RESULTS	4096

/* What node i leaves in the results area after the timed part. */
struct awgb_slot {
	uint64_t writes, frames, rotations, stalls;
	uint64_t wall_ns, cpu_ns;
	uint64_t pad[2];
};

struct awgb {
	const char *prog;
	struct awg_handle *h;
	uint8_t *map;
	uint64_t size;		/* usable bytes: the region less the results */
	uint32_t node_id;	/* place on the ring */
	unsigned int node;	/* 0 .. nodes-1: rank among the live nodes */
	unsigned int nodes;
	uint32_t live_mask;
	struct awg_info info;
	struct awg_stats s0;
	double t0, c0;
	/* node 0, after awgb_stop(): the sums over the nodes */
	double seconds, cpu_seconds;
	uint64_t writes, frames, rotations, stalls;
	char node_writes[32 * 21];
};

/* The options every AWG-STAR kernel takes (getopt_long values). */
enum { AWGB_OPT_DEVICE = 1000, AWGB_OPT_MODE, AWGB_OPT_FIBER, AWGB_OPT_DELAY,
       AWGB_OPT_NODES };
#define AWGB_LONG_OPTIONS						\
	{ "device", required_argument, NULL, AWGB_OPT_DEVICE },	\
	{ "nodes", required_argument, NULL, AWGB_OPT_NODES },		\
	{ "mode", required_argument, NULL, AWGB_OPT_MODE },		\
	{ "fiber-m", required_argument, NULL, AWGB_OPT_FIBER },		\
	{ "node-delay-ns", required_argument, NULL, AWGB_OPT_DELAY }

#define AWGB_HELP \
"  --device PATH       this node's board (default $AWG_DEVICE, else /dev/awgstar)\n" \
"  --nodes N           refuse to run unless the ring has N live nodes\n" \
"  --mode model|fast   set the board's timing mode first (AWG_IOC_SET_CONFIG, root)\n" \
"  --fiber-m M         set the ring's fiber length in metres first (root)\n" \
"  --node-delay-ns NS  set the per-node frame delay first (root)\n" \
"Run one process per node, each with its own board of one ring; node 0\n" \
"prints the result.  The board counters are AWG_IOC_GET_STATS differences\n" \
"over the timed part, summed over the nodes (node_writes: each node's).\n" \
"Untuned, every element store is one board write, one token visit: under\n" \
"QEMU TCG about 10 us on a lone board, about 5 ms on a ring of awgstard\n" \
"daemons (the defaults: well under a second alone, about a minute on a ring).\n" \
"Barriers wait up to $AWG_BARRIER_TIMEOUT_MS ms (here default 600000); a node\n" \
"leaving the ring during the run ends it (status 2).\n"

struct awgb_opts {
	const char *device;
	unsigned int nodes;	/* --nodes: 0 for any */
	struct awg_config cfg;
};

/* 1 when getopt_long's @c was one of AWGB_LONG_OPTIONS (taken), else 0. */
static inline int awgb_option(const char *prog, int c, const char *arg, struct awgb_opts *o)
{
	switch (c) {
	case AWGB_OPT_DEVICE:
		o->device = arg;
		return 1;
	case AWGB_OPT_NODES:
		o->nodes = (unsigned int)splash_num(prog, "--nodes", arg, 1, AWG_NODES_MAX);
		return 1;
	case AWGB_OPT_MODE:
		if (!strcmp(arg, "model"))
			o->cfg.mode = AWG_MODE_MODEL;
		else if (!strcmp(arg, "fast"))
			o->cfg.mode = AWG_MODE_FAST;
		else
			splash_die(prog, "--mode %s: want model or fast", arg);
		o->cfg.set |= AWG_CFG_MODE;
		return 1;
	case AWGB_OPT_FIBER:
		o->cfg.fiber_m = (uint32_t)splash_num(prog, "--fiber-m", arg, 0, 1000000);
		o->cfg.set |= AWG_CFG_FIBER;
		return 1;
	case AWGB_OPT_DELAY:
		o->cfg.node_delay_ns = (uint32_t)splash_num(prog, "--node-delay-ns", arg, 0, 1000000);
		o->cfg.set |= AWG_CFG_NODE_DELAY;
		return 1;
	}
	return 0;
}

static void __attribute__((noreturn)) awgb_fail(struct awgb *b, const char *what)
{
	int err = errno;

	fprintf(stderr, "%s: node %u: %s: %s\n", b->prog, b->node, what, strerror(err));
	exit(2);
}

/* Open the board, configure it if asked, find this node's place. */
static inline void awgb_open(struct awgb *b, const char *prog, const struct awgb_opts *o)
{
	const char *dev = o->device;

	memset(b, 0, sizeof(*b));
	b->prog = prog;
	/*
	 * An untuned phase (one token visit per element store) may keep the
	 * others waiting at a barrier longer than libawgstar's default 60 s.
	 */
	setenv("AWG_BARRIER_TIMEOUT_MS", "600000", 0);
	if (!dev)
		dev = getenv("AWG_DEVICE") && *getenv("AWG_DEVICE") ?
		      getenv("AWG_DEVICE") : "/dev/awgstar";
	if (awg_open(dev, &b->h) < 0) {
		int err = errno;

		fprintf(stderr, "%s: cannot open %s: %s%s\n", prog, dev, strerror(err),
			err == ENOENT ? " (load dlmem.ko built with CONFIG_DLMEM_AWGSTAR)" :
			err == EPROTONOSUPPORT ? " (dlmem.ko too old for this libawgstar)" : "");
		exit(2);
	}
	if (o->cfg.set && awg_set_config(b->h, &o->cfg) < 0)
		awgb_fail(b, "awg_set_config (needs root)");
	if (awg_get_info(b->h, &b->info) < 0)
		awgb_fail(b, "awg_get_info");
	if (b->info.size < 2 * AWGB_RESULTS)
		splash_die(prog, "%s: region of %llu bytes is too small", dev,
			   (unsigned long long)b->info.size);
	b->map = awg_map(b->h);
	b->size = b->info.size - AWGB_RESULTS;
	b->node_id = b->info.node_id;
	b->live_mask = b->info.live_mask;
	b->nodes = (unsigned int)__builtin_popcount(b->live_mask);
	b->node = (unsigned int)__builtin_popcount(b->live_mask &
			((1ULL << b->node_id) - 1));
	if (b->node_id >= 32 || !(b->live_mask & (1U << b->node_id)))
		splash_die(prog, "%s: node %u is not in the live mask %#x", dev,
			   b->node_id, b->live_mask);
	if (o->nodes && o->nodes != b->nodes)
		splash_die(prog, "%s: the ring has %u live node(s) (mask %#x), want %u: "
			   "is the ring formed (awgstard)?", dev, b->nodes, b->live_mask,
			   o->nodes);
}

/* The shared data must fit in the region (less the results area). */
static inline void awgb_need(struct awgb *b, uint64_t bytes)
{
	if (bytes > b->size)
		splash_die(b->prog, "the shared data needs %llu bytes, the board's region "
			   "has %llu (load dlmem.ko with a larger awg_size_mb, or choose "
			   "smaller sizes)", (unsigned long long)bytes,
			   (unsigned long long)b->size);
}

/* A barrier of the ring the run started with: nobody may have left it. */
static inline void awgb_barrier(struct awgb *b)
{
	struct awg_info info;

	if (awg_barrier(b->h) < 0)
		awgb_fail(b, "awg_barrier");
	if (awg_get_info(b->h, &info) < 0)
		awgb_fail(b, "awg_get_info");
	if (info.live_mask != b->live_mask || info.node_id != b->node_id) {
		fprintf(stderr, "%s: node %u: the ring changed during the run: live mask "
			"%#x, was %#x (node id %u, was %u): a node left\n", b->prog, b->node,
			info.live_mask, b->live_mask, info.node_id, b->node_id);
		exit(2);
	}
}

/* One board write of a double: one frame, one token visit. */
static inline void awgb_poke_double(struct awgb *b, uint64_t off, double v)
{
	uint64_t u;

	memcpy(&u, &v, sizeof(u));
	if (awg_poke64(b->h, off, u) < 0)
		awgb_fail(b, "awg_poke64");
}

static inline void awgb_poke32(struct awgb *b, uint64_t off, uint32_t v)
{
	if (awg_poke32(b->h, off, v) < 0)
		awgb_fail(b, "awg_poke32");
}

static inline void awgb_write(struct awgb *b, uint64_t off, const void *buf, size_t len)
{
	if (awg_write(b->h, off, buf, len) < 0)
		awgb_fail(b, "awg_write");
}

/* Everybody here: the timed part starts. */
static inline void awgb_start(struct awgb *b)
{
	awgb_barrier(b);
	if (awg_get_stats(b->h, &b->s0) < 0)
		awgb_fail(b, "awg_get_stats");
	b->t0 = splash_now();
	b->c0 = splash_cpu();
}

/*
 * Everybody done: the timed part ends.  Each node leaves its counters in
 * the results area; node 0 adds them up.
 */
static inline void awgb_stop(struct awgb *b)
{
	struct awgb_slot me, s;
	struct awg_stats s1;
	unsigned int i, k;
	size_t len = 0;

	awgb_barrier(b);
	me.wall_ns = (uint64_t)((splash_now() - b->t0) * 1e9);
	me.cpu_ns = (uint64_t)((splash_cpu() - b->c0) * 1e9);
	if (awg_get_stats(b->h, &s1) < 0)
		awgb_fail(b, "awg_get_stats");
	me.writes = s1.writes - b->s0.writes;
	me.frames = s1.frames_sent - b->s0.frames_sent;
	me.rotations = s1.rotations - b->s0.rotations;
	me.stalls = s1.stalls - b->s0.stalls;
	me.pad[0] = me.pad[1] = 0;
	awgb_write(b, b->size + (uint64_t)b->node_id * sizeof(me), &me, sizeof(me));
	awgb_barrier(b);
	if (b->node)
		return;
	b->seconds = me.wall_ns / 1e9;
	b->cpu_seconds = me.cpu_ns / 1e9;
	for (i = 0, k = 0; i < 32; i++) {
		if (!(b->live_mask & (1U << i)))
			continue;
		memcpy(&s, b->map + b->size + (uint64_t)i * sizeof(s), sizeof(s));
		b->writes += s.writes;
		b->frames += s.frames;
		b->rotations += s.rotations;
		b->stalls += s.stalls;
		len += snprintf(b->node_writes + len, sizeof(b->node_writes) - len,
				"%s%llu", k++ ? ":" : "", (unsigned long long)s.writes);
	}
}

/* The board part of the result line. */
static inline void awgb_print(struct awgb *b)
{
	printf("seconds=%.6f cpu_seconds=%.6f board_writes=%llu frames=%llu "
	       "node_writes=%s rotations=%llu stalls=%llu mode=%s fiber_m=%u ",
	       b->seconds, b->cpu_seconds, (unsigned long long)b->writes,
	       (unsigned long long)b->frames, b->node_writes,
	       (unsigned long long)b->rotations, (unsigned long long)b->stalls,
	       b->info.mode == AWG_MODE_MODEL ? "model" : "fast", b->info.fiber_m);
}

static inline void awgb_close(struct awgb *b)
{
	if (awg_close(&b->h) < 0)
		awgb_fail(b, "awg_close");
}

#endif /* SPLASH_AWG_COMMON_H */
