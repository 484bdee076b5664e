// SPDX-License-Identifier: GPL-2.0
/*
 * Module-wide statistics: cumulative counters and latency histograms of
 * the remote fault path, shown in /sys/class/misc/dlm/stats/ for dlmctl.
 *
 * A histogram has four buckets per power of two of nanoseconds, so a
 * percentile read from it (the upper bound of its bucket) is at most 25%
 * high; the count, mean and maximum are exact.
 */
#include <linux/atomic.h>
#include <linux/bitops.h>
#include <linux/device.h>
#include <linux/math64.h>
#include <linux/sysfs.h>

#include "dlmem.h"

#define DLM_LAT_SUB_BITS	2
#define DLM_LAT_BUCKETS		128

struct dlm_lat {
	atomic64_t count;
	atomic64_t sum;
	atomic64_t max;
	atomic64_t bucket[DLM_LAT_BUCKETS];
};

struct dlm_totals dlm_totals;
static struct dlm_lat dlm_lat[DLM_LAT_NR];

static unsigned int dlm_lat_bucket(u64 ns)
{
	unsigned int msb, idx;

	if (ns < (1U << DLM_LAT_SUB_BITS))
		return ns;
	msb = fls64(ns) - 1;
	idx = ((msb - DLM_LAT_SUB_BITS + 1) << DLM_LAT_SUB_BITS) |
	      ((ns >> (msb - DLM_LAT_SUB_BITS)) &
	       ((1U << DLM_LAT_SUB_BITS) - 1));
	return min_t(unsigned int, idx, DLM_LAT_BUCKETS - 1);
}

/* The largest value that falls into bucket @idx. */
static u64 dlm_lat_upper(unsigned int idx)
{
	unsigned int shift;
	u64 low;

	if (idx < (1U << DLM_LAT_SUB_BITS))
		return idx;
	shift = (idx >> DLM_LAT_SUB_BITS) - 1;
	low = (u64)((1U << DLM_LAT_SUB_BITS) |
		    (idx & ((1U << DLM_LAT_SUB_BITS) - 1))) << shift;
	return low + (1ULL << shift) - 1;
}

void dlm_lat_record(enum dlm_lat_phase ph, u64 ns)
{
	struct dlm_lat *l = &dlm_lat[ph];
	s64 old = atomic64_read(&l->max);

	/*
	 * Phases are timed with local_clock(), cheap but read on whichever
	 * CPU each end ran: two CPUs may disagree by a little, never below 0.
	 */
	if ((s64)ns < 0)
		ns = 0;
	atomic64_inc(&l->bucket[dlm_lat_bucket(ns)]);
	atomic64_add(ns, &l->sum);
	atomic64_inc(&l->count);
	while (old < (s64)ns) {
		s64 seen = atomic64_cmpxchg(&l->max, old, ns);

		if (seen == old)
			break;
		old = seen;
	}
}

static u64 dlm_lat_percentile(const struct dlm_lat *l, u64 count,
			      unsigned int pct)
{
	u64 want = div_u64(count * pct + 99, 100), seen = 0;
	unsigned int i;

	for (i = 0; i < DLM_LAT_BUCKETS; i++) {
		seen += atomic64_read(&l->bucket[i]);
		if (seen >= want)
			return min_t(u64, dlm_lat_upper(i),
				     atomic64_read(&l->max));
	}
	return atomic64_read(&l->max);
}

static ssize_t dlm_counter_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	atomic64_t *c = container_of(attr, struct dev_ext_attribute, attr)->var;

	return sysfs_emit(buf, "%lld\n", atomic64_read(c));
}

static ssize_t dlm_lat_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	const struct dlm_lat *l =
		container_of(attr, struct dev_ext_attribute, attr)->var;
	u64 count = atomic64_read(&l->count);

	if (!count)
		return sysfs_emit(buf, "0 0 0 0 0 0\n");
	return sysfs_emit(buf, "%llu %llu %llu %llu %llu %llu\n", count,
			  div64_u64(atomic64_read(&l->sum), count),
			  dlm_lat_percentile(l, count, 50),
			  dlm_lat_percentile(l, count, 90),
			  dlm_lat_percentile(l, count, 99),
			  (u64)atomic64_read(&l->max));
}

static struct dev_ext_attribute dlm_attr_faults = {
	__ATTR(faults, 0444, dlm_counter_show, NULL), &dlm_totals.faults
};

static struct dev_ext_attribute dlm_attr_populates = {
	__ATTR(populates, 0444, dlm_counter_show, NULL), &dlm_totals.populates
};

static struct dev_ext_attribute dlm_attr_sigbus = {
	__ATTR(sigbus, 0444, dlm_counter_show, NULL), &dlm_totals.sigbus
};

static struct dev_ext_attribute dlm_attr_swapins = {
	__ATTR(swapins, 0444, dlm_counter_show, NULL), &dlm_totals.swapins
};

static struct dev_ext_attribute dlm_attr_swapouts = {
	__ATTR(swapouts, 0444, dlm_counter_show, NULL), &dlm_totals.swapouts
};

static struct dev_ext_attribute dlm_attr_drops = {
	__ATTR(drops, 0444, dlm_counter_show, NULL), &dlm_totals.drops
};

static struct dev_ext_attribute dlm_attr_store_waits = {
	__ATTR(store_waits, 0444, dlm_counter_show, NULL), &dlm_totals.store_waits
};

static struct dev_ext_attribute dlm_attr_lost = {
	__ATTR(lost, 0444, dlm_counter_show, NULL), &dlm_totals.lost
};

static struct dev_ext_attribute dlm_attr_bytes_in = {
	__ATTR(bytes_in, 0444, dlm_counter_show, NULL), &dlm_totals.bytes_in
};

static struct dev_ext_attribute dlm_attr_readaheads = {
	__ATTR(readaheads, 0444, dlm_counter_show, NULL), &dlm_totals.readaheads
};

static struct dev_ext_attribute dlm_attr_same_filled = {
	__ATTR(same_filled, 0444, dlm_counter_show, NULL), &dlm_totals.same_filled
};

static struct dev_ext_attribute dlm_attr_fills_reused = {
	__ATTR(fills_reused, 0444, dlm_counter_show, NULL), &dlm_totals.fills_reused
};

static struct dev_ext_attribute dlm_attr_readaheads_unused = {
	__ATTR(readaheads_unused, 0444, dlm_counter_show, NULL),
	&dlm_totals.readaheads_unused
};

static struct dev_ext_attribute dlm_attr_held_skips = {
	__ATTR(held_skips, 0444, dlm_counter_show, NULL), &dlm_totals.held_skips
};

static struct dev_ext_attribute dlm_attr_bytes_out = {
	__ATTR(bytes_out, 0444, dlm_counter_show, NULL), &dlm_totals.bytes_out
};

static struct dev_ext_attribute dlm_attr_lat_request = {
	__ATTR(lat_request, 0444, dlm_lat_show, NULL), &dlm_lat[DLM_LAT_REQUEST]
};

static struct dev_ext_attribute dlm_attr_lat_data = {
	__ATTR(lat_data, 0444, dlm_lat_show, NULL), &dlm_lat[DLM_LAT_DATA]
};

static struct dev_ext_attribute dlm_attr_lat_map = {
	__ATTR(lat_map, 0444, dlm_lat_show, NULL), &dlm_lat[DLM_LAT_MAP]
};

static struct dev_ext_attribute dlm_attr_lat_store = {
	__ATTR(lat_store, 0444, dlm_lat_show, NULL), &dlm_lat[DLM_LAT_STORE]
};

static struct attribute *dlm_stats_attrs[] = {
	&dlm_attr_faults.attr.attr,
	&dlm_attr_populates.attr.attr,
	&dlm_attr_sigbus.attr.attr,
	&dlm_attr_swapins.attr.attr,
	&dlm_attr_swapouts.attr.attr,
	&dlm_attr_drops.attr.attr,
	&dlm_attr_store_waits.attr.attr,
	&dlm_attr_lost.attr.attr,
	&dlm_attr_bytes_in.attr.attr,
	&dlm_attr_bytes_out.attr.attr,
	&dlm_attr_readaheads.attr.attr,
	&dlm_attr_same_filled.attr.attr,
	&dlm_attr_fills_reused.attr.attr,
	&dlm_attr_readaheads_unused.attr.attr,
	&dlm_attr_held_skips.attr.attr,
	&dlm_attr_lat_request.attr.attr,
	&dlm_attr_lat_data.attr.attr,
	&dlm_attr_lat_map.attr.attr,
	&dlm_attr_lat_store.attr.attr,
	NULL,
};

const struct attribute_group dlm_stats_group = {
	.name = "stats",
	.attrs = dlm_stats_attrs,
};
