/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stats.h - dlmd counters and latency histograms.
 *
 * Lock-free (atomics): any thread records, any thread reads.  Latencies
 * go into a log-linear histogram (8 sub-buckets per power of two, so a
 * percentile is exact to within 12.5%) from which p50/p99 are computed.
 */
#ifndef DLM_STATS_H
#define DLM_STATS_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

enum st_op {
	ST_SPACE_NEW,
	ST_SPACE_DEL,
	ST_FETCH,
	ST_STORE,
	ST_DROP,
	ST_READ,	/* block spaces (/dev/dlmbN) */
	ST_WRITE,
	ST_DISCARD,
	ST_NOPS,
};

#define HIST_SUB_BITS	3
#define HIST_SUB	(1u << HIST_SUB_BITS)
#define HIST_BUCKETS	(62u * HIST_SUB)

struct hist {
	atomic_uint_fast64_t bucket[HIST_BUCKETS];
	atomic_uint_fast64_t count, sum, max;
};

struct stats {
	atomic_uint_fast64_t requests[ST_NOPS];
	atomic_uint_fast64_t errors[ST_NOPS];		/* completed != 0 */
	atomic_uint_fast64_t bytes_in;		/* fetched from servers */
	atomic_uint_fast64_t bytes_out;		/* stored to servers */
	atomic_uint_fast64_t err_einval, err_eio, err_enospc, err_other;
	atomic_uint_fast64_t bad_requests;	/* no REQ_ID: not answerable */
	atomic_uint_fast64_t unknown_ops;
	atomic_uint_fast64_t nl_refused;	/* COMPLETE refused by the kernel */
	atomic_uint_fast64_t nl_send_errors;
	atomic_uint_fast64_t nl_overruns;	/* receive buffer overflowed */
	atomic_uint_fast64_t store_retries;	/* re-placed after a server died */
	atomic_int_fast64_t inflight;
	struct hist latency[ST_NOPS];
	double start;				/* monotonic seconds */
};

void stats_init(struct stats *st);
const char *stats_op_name(enum st_op op);
/* One completed request: STATUS 0 or -errno, NS its latency. */
void stats_record(struct stats *st, enum st_op op, int status, uint64_t ns);

void hist_add(struct hist *h, uint64_t v);
/* Value at quantile Q (0..1) of H, the middle of its bucket; 0 if empty. */
uint64_t hist_quantile(const struct hist *h, double q);
unsigned int hist_index(uint64_t v);
uint64_t hist_lower(unsigned int idx);

/* Monotonic clock in nanoseconds. */
uint64_t now_ns(void);

/*
 * The counters as the members of a JSON object (no braces), indented
 * by two spaces, each line ending with ",\n" except the last.
 */
void stats_json(const struct stats *st, FILE *f);
/* The counters as log lines, with MSG. */
void stats_log(const struct stats *st, const char *msg);

#endif /* DLM_STATS_H */
