// SPDX-License-Identifier: GPL-2.0
/*
 * test-stats - dlmd's latency histogram and counters: bucket edges,
 * percentiles within the histogram's precision, error classes, JSON.  TAP.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "tap.h"

static int near(uint64_t got, uint64_t want)
{
	double e = (double)got / (double)want;

	return e > 0.87 && e < 1.13;	/* 1/8 of a power of two */
}

int main(void)
{
	static struct stats st;
	static struct hist h;
	unsigned int i, okay = 1, prev = 0;
	uint64_t v, q50, q99;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	tap_plan(9);
	for (v = 1; v < (1ULL << 40); v = v * 3 / 2 + 1) {
		i = hist_index(v);
		okay &= i >= prev && i < HIST_BUCKETS && hist_lower(i) <= v &&
			(i + 1 >= HIST_BUCKETS || hist_lower(i + 1) > v);
		prev = i;
	}
	okay &= hist_index(UINT64_MAX) == HIST_BUCKETS - 1;
	tap_ok(okay, "bucket index is monotonic and each value lies in its bucket");

	tap_ok(hist_quantile(&h, 0.5) == 0, "empty histogram: quantile 0");
	for (v = 1; v <= 100000; v++)
		hist_add(&h, v * 1000);	/* 1 us .. 100 ms */
	q50 = hist_quantile(&h, 0.50);
	q99 = hist_quantile(&h, 0.99);
	tap_ok(near(q50, 50000000), "p50 of 1..100000 us is ~50 ms (%llu ns)",
	       (unsigned long long)q50);
	tap_ok(near(q99, 99000000), "p99 is ~99 ms (%llu ns)",
	       (unsigned long long)q99);
	tap_ok(h.count == 100000 && h.max == 100000000ULL,
	       "count and max kept exactly");

	memset(&h, 0, sizeof(h));
	for (v = 0; v < 99; v++)
		hist_add(&h, 1000);
	hist_add(&h, 1000000000);
	tap_ok(near(hist_quantile(&h, 0.99), 1000) &&
	       near(hist_quantile(&h, 1.0), 1000000000),
	       "one outlier in 100: p99 unaffected, p100 is the outlier");

	stats_init(&st);
	stats_record(&st, ST_FETCH, 0, 5000);
	stats_record(&st, ST_FETCH, -EIO, 7000);
	stats_record(&st, ST_STORE, -ENOSPC, 1000);
	stats_record(&st, ST_SPACE_NEW, -EINVAL, 100);
	stats_record(&st, ST_SPACE_DEL, -ENOENT, 100);
	tap_ok(st.requests[ST_FETCH] == 2 && st.errors[ST_FETCH] == 1 &&
	       st.err_eio == 1 && st.err_enospc == 1 && st.err_einval == 1 &&
	       st.err_other == 1 && st.latency[ST_FETCH].count == 2,
	       "requests and errors counted by op and by errno class");

	f = open_memstream(&buf, &len);
	fprintf(f, "{\n");
	stats_json(&st, f);
	fprintf(f, "\n}\n");
	fclose(f);
	tap_ok(strstr(buf, "\"requests\": {\"space_new\": 1, \"space_del\": 1, \"fetch\": 2, \"store\": 1, \"drop\": 0, \"read\": 0, \"write\": 0, \"discard\": 0}") &&
	       strstr(buf, "\"eio\": 1") && strstr(buf, "\"bytes_in\": 0") &&
	       strstr(buf, "\"fetch\": {\"count\": 2"),
	       "JSON carries requests, errors, bytes and latency");
	{
		int depth = 0, bad = 0;
		char *p;

		for (p = buf; *p; p++) {
			depth += (*p == '{' || *p == '[') - (*p == '}' || *p == ']');
			bad |= depth < 0;
			/* A comma followed (past blanks) by a closing brace. */
			if (*p == ',')
				bad |= strchr("}]", p[1 + strspn(p + 1, " \n")]) != NULL &&
				       p[1 + strspn(p + 1, " \n")] != '\0';
		}
		tap_ok(!bad && depth == 0, "JSON braces balance, no trailing commas");
		if (bad || depth)
			printf("%s", buf);
	}
	free(buf);
	return tap_done();
}
