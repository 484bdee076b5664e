// SPDX-License-Identifier: GPL-2.0
/*
 * stats.c - dlmd counters and latency histograms (stats.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "stats.h"

static const char *const op_names[ST_NOPS] = {
	[ST_SPACE_NEW] = "space_new",
	[ST_SPACE_DEL] = "space_del",
	[ST_FETCH] = "fetch",
	[ST_STORE] = "store",
	[ST_DROP] = "drop",
	[ST_READ] = "read",
	[ST_WRITE] = "write",
	[ST_DISCARD] = "discard",
};

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

void stats_init(struct stats *st)
{
	memset(st, 0, sizeof(*st));
	st->start = (double)now_ns() / 1e9;
}

const char *stats_op_name(enum st_op op)
{
	return (unsigned int)op < ST_NOPS ? op_names[op] : "?";
}

unsigned int hist_index(uint64_t v)
{
	unsigned int msb, shift;

	if (v < HIST_SUB)
		return (unsigned int)v;
	msb = 63u - (unsigned int)__builtin_clzll(v);
	shift = msb - HIST_SUB_BITS;
	return (shift + 1) * HIST_SUB +
	       (unsigned int)((v >> shift) & (HIST_SUB - 1));
}

uint64_t hist_lower(unsigned int idx)
{
	unsigned int shift;

	if (idx < HIST_SUB)
		return idx;
	shift = idx / HIST_SUB - 1;
	return (uint64_t)(HIST_SUB + idx % HIST_SUB) << shift;
}

void hist_add(struct hist *h, uint64_t v)
{
	uint_fast64_t m = atomic_load_explicit(&h->max, memory_order_relaxed);

	atomic_fetch_add_explicit(&h->bucket[hist_index(v)], 1,
				  memory_order_relaxed);
	atomic_fetch_add_explicit(&h->count, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&h->sum, v, memory_order_relaxed);
	while (v > m && !atomic_compare_exchange_weak(&h->max, &m, v))
		;
}

uint64_t hist_quantile(const struct hist *h, double q)
{
	uint64_t snap[HIST_BUCKETS], total = 0, want, seen = 0, lo, hi;
	unsigned int i;

	for (i = 0; i < HIST_BUCKETS; i++) {
		snap[i] = atomic_load_explicit(&h->bucket[i],
					       memory_order_relaxed);
		total += snap[i];
	}
	if (!total)
		return 0;
	want = (uint64_t)(q * (double)total + 0.999999);
	if (want < 1)
		want = 1;
	if (want > total)
		want = total;
	for (i = 0; i < HIST_BUCKETS; i++) {
		seen += snap[i];
		if (seen >= want)
			break;
	}
	if (i >= HIST_BUCKETS)
		i = HIST_BUCKETS - 1;
	lo = hist_lower(i);
	hi = i + 1 < HIST_BUCKETS ? hist_lower(i + 1) : lo;
	return lo + (hi - lo) / 2;
}

void stats_record(struct stats *st, enum st_op op, int status, uint64_t ns)
{
	atomic_fetch_add(&st->requests[op], 1);
	if (status) {
		atomic_fetch_add(&st->errors[op], 1);
		if (status == -EINVAL)
			atomic_fetch_add(&st->err_einval, 1);
		else if (status == -EIO)
			atomic_fetch_add(&st->err_eio, 1);
		else if (status == -ENOSPC)
			atomic_fetch_add(&st->err_enospc, 1);
		else
			atomic_fetch_add(&st->err_other, 1);
	}
	hist_add(&st->latency[op], ns);
}

#define U(x) ((uint64_t)atomic_load(&(x)))

void stats_json(const struct stats *st, FILE *f)
{
	unsigned int i;

	fprintf(f, "  \"uptime_s\": %.3f,\n", (double)now_ns() / 1e9 - st->start);
	fprintf(f, "  \"requests\": {");
	for (i = 0; i < ST_NOPS; i++)
		fprintf(f, "%s\"%s\": %" PRIu64, i ? ", " : "", op_names[i],
			U(st->requests[i]));
	fprintf(f, "},\n  \"errors_by_op\": {");
	for (i = 0; i < ST_NOPS; i++)
		fprintf(f, "%s\"%s\": %" PRIu64, i ? ", " : "", op_names[i],
			U(st->errors[i]));
	fprintf(f, "},\n");
	fprintf(f, "  \"errors\": {\"einval\": %" PRIu64 ", \"eio\": %" PRIu64
		", \"enospc\": %" PRIu64 ", \"other\": %" PRIu64
		", \"bad_requests\": %" PRIu64 ", \"unknown_ops\": %" PRIu64
		", \"nl_refused\": %" PRIu64 ", \"nl_send\": %" PRIu64
		", \"nl_overruns\": %" PRIu64 "},\n",
		U(st->err_einval), U(st->err_eio), U(st->err_enospc),
		U(st->err_other), U(st->bad_requests), U(st->unknown_ops),
		U(st->nl_refused), U(st->nl_send_errors), U(st->nl_overruns));
	fprintf(f, "  \"bytes_in\": %" PRIu64 ",\n  \"bytes_out\": %" PRIu64
		",\n  \"store_retries\": %" PRIu64 ",\n  \"inflight\": %" PRId64
		",\n", U(st->bytes_in), U(st->bytes_out), U(st->store_retries),
		(int64_t)atomic_load(&st->inflight));
	fprintf(f, "  \"latency_us\": {\n");
	for (i = 0; i < ST_NOPS; i++) {
		const struct hist *h = &st->latency[i];
		uint64_t n = U(h->count);

		fprintf(f, "    \"%s\": {\"count\": %" PRIu64
			", \"mean\": %.1f, \"p50\": %.1f, \"p99\": %.1f, \"max\": %.1f}%s\n",
			op_names[i], n,
			n ? (double)U(h->sum) / (double)n / 1e3 : 0.0,
			(double)hist_quantile(h, 0.50) / 1e3,
			(double)hist_quantile(h, 0.99) / 1e3,
			(double)U(h->max) / 1e3, i + 1 < ST_NOPS ? "," : "");
	}
	fprintf(f, "  }");
}

void stats_log(const struct stats *st, const char *msg)
{
	unsigned int i;

	log_info(msg, "bytes_in=%" PRIu64 " bytes_out=%" PRIu64 " inflight=%" PRId64
		 " einval=%" PRIu64 " eio=%" PRIu64 " enospc=%" PRIu64
		 " other=%" PRIu64 " bad_requests=%" PRIu64 " nl_refused=%" PRIu64
		 " nl_send=%" PRIu64 " nl_overruns=%" PRIu64 " store_retries=%" PRIu64,
		 U(st->bytes_in), U(st->bytes_out),
		 (int64_t)atomic_load(&st->inflight), U(st->err_einval),
		 U(st->err_eio), U(st->err_enospc), U(st->err_other),
		 U(st->bad_requests), U(st->nl_refused), U(st->nl_send_errors),
		 U(st->nl_overruns), U(st->store_retries));
	for (i = 0; i < ST_NOPS; i++) {
		const struct hist *h = &st->latency[i];

		log_info(msg, "op=%s requests=%" PRIu64 " errors=%" PRIu64
			 " p50_us=%.1f p99_us=%.1f max_us=%.1f", op_names[i],
			 U(st->requests[i]), U(st->errors[i]),
			 (double)hist_quantile(h, 0.50) / 1e3,
			 (double)hist_quantile(h, 0.99) / 1e3,
			 (double)U(h->max) / 1e3);
	}
}
