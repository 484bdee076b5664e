// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/awgstar: the token ring (seed 001, section 3.3.2).
 *
 * One token circulates.  At each visit a node (awg_visit()):
 *   1. checks every byte of the token (it may come from a daemon);
 *   2. takes the frames of the others in token order: applies and
 *      acknowledges each; from a frame whose CRC fails on, takes none and
 *      leaves them for the next rotation, where they still are, in the
 *      same order (so every node applies every frame in one order);
 *   3. removes its own frames that came back acknowledged by every live
 *      node; one that is not goes round again in its place (a retry);
 *   4. node 0 only: holds the token until the rotation has taken the timing
 *      model's time, or, with nothing to carry, up to idle_us for work;
 *   5. appends its own frames: stores of dirty pages, then DMA writes and
 *      events in the order they were made, at most frames_per_visit.
 * Without a daemon the board is a ring of one node whose visits are made
 * by whoever waits for the token (a writer, a flush) or by publish_work.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/crc32.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "awgstar.h"

#define AWG_LOOPBACK_RING_ID	1

static inline u32 awg_frame_size(u32 len)
{
	return sizeof(struct awg_frame) + ALIGN(len, 8);
}

static u32 awg_frame_crc(const struct awg_frame *f)
{
	const u8 *p = (const u8 *)f + offsetof(struct awg_frame, type);

	return crc32_le(~0U, p, awg_frame_size(f->len) -
			offsetof(struct awg_frame, type));
}

static u32 awg_all_mask(u32 nodes)
{
	return nodes >= 32 ? ~0U : (1U << nodes) - 1;
}

/* Sleep, then spin, until CLOCK_MONOTONIC reaches `deadline` (ns). */
static void awg_wait_until(u64 deadline)
{
	const u64 spin = 200 * NSEC_PER_USEC;
	u64 now = ktime_get_ns();

	if (now + spin < deadline) {
		ktime_t t = ns_to_ktime(deadline - spin);

		set_current_state(TASK_KILLABLE);
		schedule_hrtimeout_range(&t, 10 * NSEC_PER_USEC, HRTIMER_MODE_ABS);
		__set_current_state(TASK_RUNNING);
	}
	while (ktime_get_ns() < deadline && !fatal_signal_pending(current))
		cpu_relax();
}

/* Timing model: a DMA transfer of `len` bytes takes at least len / rate. */
void awg_model_rate(struct awg_board *b, u64 start_ns, u64 len, u32 kbps)
{
	if (READ_ONCE(b->cfg.mode) != AWG_MODE_MODEL || !kbps)
		return;
	awg_wait_until(start_ns + div_u64(len * USEC_PER_SEC, kbps));
}

/* 500 N + 5 L ns plus the token's time on the line. */
static u64 awg_model_rotation_ns(struct awg_board *b, u32 token_len)
{
	return (u64)b->nodes * b->cfg.node_delay_ns +
	       (u64)b->cfg.fiber_m * AWG_FIBER_NS_PER_M +
	       div_u64((u64)token_len * 8 * 1000, AWG_LINK_MBPS);
}

unsigned int awg_budget(struct awg_board *b)
{
	if (b->cfg.mode == AWG_MODE_MODEL)
		return 1;	/* 1 KiB per node per visit, as the board */
	return max_t(u32, 1, AWG_TOKEN_FRAMES_MAX / b->nodes / 2);
}

static void awg_free_list(struct list_head *list)
{
	struct awg_item *it, *tmp;

	list_for_each_entry_safe(it, tmp, list, node) {
		list_del(&it->node);
		kfree(it);
	}
}

static void awg_event_queue(struct awg_board *b, u32 from, u32 id, u32 data)
{
	struct awg_event_q *q = &b->events[id];

	spin_lock(&b->lock);
	if (q->count == AWG_EVENT_QUEUE) {
		b->stats.event_overflows++;
	} else {
		u32 i = (q->head + q->count++) % AWG_EVENT_QUEUE;

		q->e[i].node = from;
		q->e[i].data = data;
		b->stats.events_recv++;
	}
	spin_unlock(&b->lock);
	wake_up_all(&b->event_wq);
}

/* Copy an item's frame, data and zero padding to *pos (room checked). */
static void awg_put_frame(u8 **pos, const struct awg_item *it)
{
	struct awg_frame *f = (struct awg_frame *)*pos;

	memcpy(f, &it->f, sizeof(*f));
	memcpy(f + 1, it->data, it->f.len);
	memset((u8 *)(f + 1) + it->f.len, 0, ALIGN(it->f.len, 8) - it->f.len);
	*pos += awg_frame_size(it->f.len);
}

/*
 * Put a frame at *pos: sequence number, own acknowledgment, CRC; keep it
 * on the flight list (the preallocated `it` of a DMA write or event, or a
 * copy).  -ENOSPC when the token is full.
 */
static int awg_emit_item(struct awg_board *b, u8 **pos, u8 *end,
			 struct awg_item *it)
{
	struct awg_frame *f = (struct awg_frame *)*pos;

	if (end - *pos < awg_frame_size(it->f.len))
		return -ENOSPC;
	it->f.seq = ++b->seq_next;
	it->f.origin = b->node_id;
	it->f.ack = BIT(b->node_id);
	awg_put_frame(pos, it);
	f->crc = awg_frame_crc(f);
	it->f.crc = f->crc;
	spin_lock(&b->lock);
	list_add_tail(&it->node, &b->flight);
	b->stats.frames_sent++;
	b->stats.bytes_sent += it->f.len;
	spin_unlock(&b->lock);
	return 0;
}

int awg_emit(struct awg_board *b, u8 **pos, u8 *end, u8 type, u64 addr,
	     u64 aux, const u8 *data, u32 len)
{
	struct awg_item *it;
	int ret;

	if (end - *pos < awg_frame_size(len))
		return -ENOSPC;
	it = kzalloc(struct_size(it, data, len), GFP_KERNEL);
	if (!it)
		return -ENOMEM;
	it->f.type = type;
	it->f.len = len;
	it->f.addr = addr;
	it->f.aux = aux;
	memcpy(it->data, data, len);
	ret = awg_emit_item(b, pos, end, it);
	if (ret)
		kfree(it);
	return ret;
}

/* Every byte of a token from a daemon, before anything is changed. */
static int awg_token_check(struct awg_board *b, const u8 *tok, u32 len)
{
	const struct awg_token *h = (const void *)tok;
	u32 all = awg_all_mask(b->nodes), off, i;

	if (len < sizeof(*h) || len > AWG_TOKEN_MAX)
		return -EINVAL;
	if (h->magic != AWG_TOKEN_MAGIC || h->version != AWG_TOKEN_VERSION ||
	    h->nodes != b->nodes || h->len != len || h->reserved ||
	    !h->ring_id || h->ring_id == AWG_LOOPBACK_RING_ID ||
	    (h->live_mask & ~all) || !(h->live_mask & BIT(b->node_id)) ||
	    !(h->live_mask & 1))
		return -EINVAL;
	for (i = 0, off = sizeof(*h); i < h->nframes; i++) {
		const struct awg_frame *f = (const void *)(tok + off);

		if (len - off < sizeof(*f) || f->reserved || !f->seq ||
		    f->origin >= b->nodes || (f->ack & ~all))
			return -EINVAL;
		switch (f->type) {
		case AWG_FRAME_DATA:
			if (!f->len || f->len > AWG_FRAME_DATA_MAX || f->aux ||
			    f->addr >= b->size || f->len > b->size - f->addr)
				return -EINVAL;
			break;
		case AWG_FRAME_EVENT:
			if (f->len || (f->aux >> 32) >= AWG_EVENTS ||
			    (f->addr >= b->nodes && f->addr != AWG_NODE_ALL))
				return -EINVAL;
			break;
		default:
			return -EINVAL;
		}
		if (len - off < awg_frame_size(f->len))
			return -EINVAL;
		off += awg_frame_size(f->len);
	}
	return off == len ? 0 : -EINVAL;
}

/* The ring changed: a new ring forgets sequence numbers. */
static void awg_ring_reset(struct awg_board *b, u32 ring_id)
{
	LIST_HEAD(old);

	spin_lock(&b->lock);
	list_splice_init(&b->flight, &old);
	b->acked_seq = 0;
	b->seq_next = 0;
	memset(b->expect, 0, sizeof(b->expect));
	b->ring_id = ring_id;
	spin_unlock(&b->lock);
	awg_free_list(&old);
	wake_up_all(&b->done_wq);
}

static bool awg_inject_crc_error(struct awg_board *b)
{
	u32 x = b->inject_state;

	if (!b->cfg.crc_inject_permille)
		return false;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	b->inject_state = x;
	return x % 1000 < b->cfg.crc_inject_permille;
}

/*
 * A frame of another node; true when it stays on the token.  Frames are
 * applied in token order, the same order at every node: after a frame this
 * node cannot take (CRC error), it takes none of the frames behind it
 * (*blocked) and acknowledges none, so they all come round again, in the
 * same order, still on the token (their origins keep them there until
 * every live node has them).  A frame already taken (a copy sent again
 * after a lost token) is only acknowledged.
 */
static bool awg_take(struct awg_board *b, struct awg_frame *f, u32 live,
		     bool *blocked)
{
	u32 me = BIT(b->node_id);
	u64 *expect = &b->expect[f->origin];

	if (!(live & BIT(f->origin)) && (f->ack & live) == live)
		return false;	/* its origin left; everyone has it */
	if ((f->ack & me) || *blocked)
		return true;
	if (awg_frame_crc(f) != f->crc || awg_inject_crc_error(b)) {
		b->stats.crc_errors++;
		*blocked = true;
		return true;
	}
	if (f->seq > *expect + 1) {
		*blocked = true;	/* an earlier one is still to come */
		return true;
	}
	if (f->seq == *expect + 1) {
		(*expect)++;
		if (f->type == AWG_FRAME_DATA) {
			awg_apply(b, f->addr, (u8 *)(f + 1), f->len, false);
			b->stats.frames_recv++;
			b->stats.bytes_recv += f->len;
		} else if (f->addr == b->node_id || f->addr == AWG_NODE_ALL) {
			awg_event_queue(b, f->origin, f->aux >> 32, (u32)f->aux);
		}
	}
	f->ack |= me;
	return true;
}

/*
 * One of our frames came back.  Acknowledged by every live node: done
 * (false: off the token).  Else it goes round again where it is (true).
 */
static bool awg_returned(struct awg_board *b, const struct awg_frame *f,
			 u32 live)
{
	struct awg_item *it;

	if ((f->ack & live) != live) {
		b->stats.retries++;
		return true;
	}
	spin_lock(&b->lock);
	it = list_first_entry_or_null(&b->flight, struct awg_item, node);
	if (it && it->f.seq == f->seq) {
		list_del(&it->node);
		b->acked_seq = f->seq;
	} else {
		it = NULL;	/* a stale copy: already done */
	}
	spin_unlock(&b->lock);
	kfree(it);
	return false;
}

/* After a lost token: every in-flight frame again, in order. */
static void awg_resend(struct awg_board *b, u8 **pos, u8 *end)
{
	struct awg_item *it;

	list_for_each_entry(it, &b->flight, node) {
		if (end - *pos < awg_frame_size(it->f.len))
			break;
		it->f.ack = BIT(b->node_id);
		awg_put_frame(pos, it);
		b->stats.retries++;
		b->stats.frames_sent++;
		b->stats.bytes_sent += it->f.len;
	}
}

static bool awg_published_upto(struct awg_board *b, u64 ticket)
{
	struct awg_pstate *ps;
	bool ret;

	spin_lock(&b->lock);
	ps = list_first_entry_or_null(&b->dirty, struct awg_pstate, dirty);
	ret = !ps || ps->ticket > ticket;
	spin_unlock(&b->lock);
	return ret;
}

/* Step 5: stores of dirty pages, then queued writes and events. */
static void awg_append(struct awg_board *b, u8 **pos, u8 *end)
{
	unsigned int left = awg_budget(b);

	left -= awg_publish(b, pos, end, left);
	while (left) {
		struct awg_item *it;
		bool gone;

		spin_lock(&b->lock);
		it = list_first_entry_or_null(&b->send, struct awg_item, node);
		if (it && end - *pos < awg_frame_size(it->f.len))
			it = NULL;
		if (it && it->f.type == AWG_FRAME_EVENT &&
		    !list_empty(&b->dirty) &&
		    list_first_entry(&b->dirty, struct awg_pstate,
				     dirty)->ticket <= it->ticket_req)
			it = NULL;	/* stores made before it go first */
		/*
		 * An event queued for a node of a larger ring than the one
		 * attached since: on the token it would make every node
		 * refuse the token.  Its sender gets EHOSTUNREACH.
		 */
		gone = it && it->f.type == AWG_FRAME_EVENT &&
		       it->f.addr >= b->nodes && it->f.addr != AWG_NODE_ALL;
		if (it) {
			list_del(&it->node);
			if (gone)
				it->sub->error = -EHOSTUNREACH;
			it->sub->pending--;
			it->sub = NULL;
		}
		spin_unlock(&b->lock);
		if (!it)
			break;
		if (gone) {
			pr_warn_ratelimited("%s: event %u for node %llu dropped: the ring now has %u nodes\n",
					    b->name, (u32)(it->f.aux >> 32),
					    it->f.addr, b->nodes);
			kfree(it);
			continue;
		}
		if (it->f.type == AWG_FRAME_DATA) {
			awg_apply(b, it->f.addr, it->data, it->f.len, true);
		} else {
			u32 dest = it->f.addr;

			b->stats.events_sent++;
			if (dest == b->node_id)
				awg_event_queue(b, dest, it->f.aux >> 32,
						(u32)it->f.aux);
		}
		/* Cannot fail: the room was checked. */
		WARN_ON_ONCE(awg_emit_item(b, pos, end, it));
		left--;
	}
	wake_up_all(&b->done_wq);
}

static bool awg_has_work(struct awg_board *b)
{
	return !list_empty_careful(&b->send) || awg_has_dirty(b);
}

/* Step 4, node 0: the timing model and the idle hold; rotation stats. */
static void awg_monitor(struct awg_board *b, bool carried, u32 out_len)
{
	u64 arrive = ktime_get_ns(), model, depart;
	bool idled = false, rested, counted;

	if (!carried && b->ring_file && !awg_has_work(b)) {
		idled = true;
		wait_event_interruptible_hrtimeout(b->work_wq, awg_has_work(b),
						   ns_to_ktime((u64)b->cfg.idle_us *
							       NSEC_PER_USEC));
	}
	model = awg_model_rotation_ns(b, out_len);
	rested = !b->ring_file && arrive - b->last_depart_ns > model;
	if (b->cfg.mode == AWG_MODE_MODEL && b->last_depart_ns && !rested) {
		/*
		 * A late wake-up (timer slack, a busy host) is paid back on
		 * the next rotations, up to half of each, so that rotations
		 * keep the model's average as a clocked ring would.
		 */
		u64 back = min(b->model_debt_ns, model / 2);
		u64 deadline = b->last_depart_ns + model - back;

		awg_wait_until(deadline);
		depart = ktime_get_ns();
		b->model_debt_ns += (depart > deadline ? depart - deadline : 0) - back;
		b->model_debt_ns = min(b->model_debt_ns, 10 * model);
	} else {
		b->model_debt_ns = 0;
		depart = ktime_get_ns();
	}
	/*
	 * A rotation is timed unless node 0 held the token idle; on the
	 * loopback ring a token that rested (nobody needed it for longer
	 * than a rotation) is not a rotation either.
	 */
	counted = b->last_depart_ns && !idled && !rested;
	if (counted) {
		u64 rot = depart - b->last_depart_ns;

		spin_lock(&b->lock);
		b->stats.rot_count++;
		b->stats.rot_ns += rot;
		if (carried) {
			b->stats.rot_busy_count++;
			b->stats.rot_busy_ns += rot;
			b->stats.rot_busy_model_ns += model;
		}
		spin_unlock(&b->lock);
	}
	b->last_depart_ns = depart;
}

static void awg_token_header(struct awg_board *b, struct awg_token *h,
			     u32 nframes, u32 len)
{
	memset(h, 0, sizeof(*h));
	h->magic = AWG_TOKEN_MAGIC;
	h->version = AWG_TOKEN_VERSION;
	h->nodes = b->nodes;
	h->ring_id = b->ring_id;
	h->generation = b->generation;
	h->live_mask = b->live_mask;
	h->nframes = nframes;
	h->len = len;
	h->rotation = b->rotation;
}

/*
 * One visit: `in` (checked) to `out`.  `fresh`: node 0 makes a new token
 * (generation + 1) for `live` nodes of ring `ring_id`.  visit_mutex held.
 */
static int awg_visit(struct awg_board *b, const u8 *in, u32 in_len, u8 *out,
		     u32 *out_len, bool fresh, u32 live, u32 ring_id)
{
	u8 *pos = out + sizeof(struct awg_token), *end = out + AWG_TOKEN_MAX;
	const struct awg_token *h = (const void *)in;
	bool resend_all = false, carried = false, blocked = false;
	u32 off, i, gen;

	if (fresh) {
		gen = b->generation + 1;
	} else {
		live = h->live_mask;
		ring_id = h->ring_id;
		gen = h->generation;
	}
	if (ring_id != b->ring_id) {
		awg_ring_reset(b, ring_id);
	} else if (gen != b->generation) {
		resend_all = true;
		spin_lock(&b->lock);
		b->stats.regenerations++;
		spin_unlock(&b->lock);
	}
	if (live != b->live_mask) {
		spin_lock(&b->lock);
		b->stats.node_changes += hweight32(b->live_mask & ~live);
		b->live_mask = live;
		spin_unlock(&b->lock);
	}
	b->generation = gen;

	for (i = 0, off = sizeof(*h); !fresh && i < h->nframes; i++) {
		struct awg_frame *f = (struct awg_frame *)(in + off);
		u32 size = awg_frame_size(f->len);
		bool keep;

		off += size;
		carried = true;
		if (f->origin == b->node_id)
			keep = !resend_all && awg_returned(b, f, live);
		else
			keep = awg_take(b, f, live, &blocked);
		if (keep) {
			memcpy(pos, f, size);
			pos += size;
		}
	}
	if (resend_all)
		awg_resend(b, &pos, end);

	spin_lock(&b->lock);
	b->stats.rotations++;
	spin_unlock(&b->lock);
	if (b->node_id == 0) {
		b->rotation++;
		awg_monitor(b, carried || pos > out + sizeof(*h) ||
			    awg_has_work(b), pos - out);
	}
	/* Frames ahead not taken yet: ours would overtake them here. */
	if (!blocked)
		awg_append(b, &pos, end);
	else
		wake_up_all(&b->done_wq);

	*out_len = pos - out;
	for (i = 0, off = sizeof(*h); off < *out_len; i++)
		off += awg_frame_size(((struct awg_frame *)(out + off))->len);
	awg_token_header(b, (struct awg_token *)out, i, *out_len);
	return 0;
}

/* The loopback ring: a visit by whoever needs the token. */
static void awg_visit_loopback(struct awg_board *b)
{
	const struct awg_token *h = b->tok;
	u32 len;

	awg_visit(b, b->tok, h->len, b->tok_out, &len, false, 0, 0);
	swap(b->tok, b->tok_out);
}

static void awg_loopback_token(struct awg_board *b)
{
	b->node_id = 0;
	b->nodes = 1;
	b->live_mask = 1;
	b->ring_id = AWG_LOOPBACK_RING_ID;
	b->generation++;
	awg_token_header(b, b->tok, 0, sizeof(struct awg_token));
}

void awg_publish_tick(struct work_struct *work)
{
	struct awg_board *b = container_of(to_delayed_work(work),
					   struct awg_board, publish_work);

	unsigned int n;

	mutex_lock(&b->visit_mutex);
	for (n = 0; n < 64 && !b->ring_file && awg_has_dirty(b); n++)
		awg_visit_loopback(b);
	mutex_unlock(&b->visit_mutex);
	/* Stores keep coming: publish them later, let others run. */
	if (!b->ring_file && awg_has_dirty(b))
		mod_delayed_work(system_wq, &b->publish_work,
				 msecs_to_jiffies(20));
}

/*
 * Wait for `done` until @deadline (jiffies): on the loopback ring by making
 * visits, else for the daemon's.  -ETIMEDOUT, or -EINTR for a fatal signal.
 */
static int awg_wait(struct awg_board *b, bool (*done)(struct awg_board *, void *),
		    void *arg, unsigned long deadline, bool *stalled)
{
	for (;;) {
		long left = deadline - jiffies;
		long ret;

		if (done(b, arg))
			return 0;
		if (stalled)
			*stalled = true;
		if (left <= 0)
			return -ETIMEDOUT;
		if (!READ_ONCE(b->ring_file)) {
			if (mutex_lock_killable(&b->visit_mutex))
				return -EINTR;
			if (!b->ring_file && !done(b, arg))
				awg_visit_loopback(b);
			mutex_unlock(&b->visit_mutex);
			if (fatal_signal_pending(current))
				return -EINTR;
			continue;
		}
		ret = wait_event_killable_timeout(b->done_wq,
						  done(b, arg) || !READ_ONCE(b->ring_file),
						  left);
		if (ret < 0)
			return -EINTR;
	}
}

static bool awg_sub_done(struct awg_board *b, void *arg)
{
	struct awg_sub *sub = arg;

	return !READ_ONCE(sub->pending);
}

/* Queue items of one call; wait until all are on the token. */
static int awg_submit(struct awg_board *b, struct list_head *items,
		      struct awg_sub *sub)
{
	struct awg_item *it, *tmp;
	bool stalled = false;
	int ret;

	spin_lock(&b->lock);
	list_for_each_entry(it, items, node) {
		it->sub = sub;
		it->ticket_req = b->ticket_next;
		sub->pending++;
	}
	list_splice_tail_init(items, &b->send);
	spin_unlock(&b->lock);
	wake_up(&b->work_wq);

	ret = awg_wait(b, awg_sub_done, sub,
		       jiffies + msecs_to_jiffies(AWG_SUBMIT_TIMEOUT_MS), &stalled);
	if (ret) {
		/* Take back what is not on the token yet. */
		spin_lock(&b->lock);
		list_for_each_entry_safe(it, tmp, &b->send, node) {
			if (it->sub != sub)
				continue;
			list_move(&it->node, items);
			sub->pending--;
		}
		spin_unlock(&b->lock);
		awg_free_list(items);
	}
	spin_lock(&b->lock);
	if (!ret)
		ret = sub->error;
	if (stalled)
		b->stats.stalls++;
	spin_unlock(&b->lock);
	return ret;
}

int awg_submit_write(struct awg_board *b, u64 off, const void __user *buf,
		     u64 len)
{
	u64 start = ktime_get_ns(), total = len;
	int ret = 0;

	spin_lock(&b->lock);
	b->stats.writes++;
	spin_unlock(&b->lock);
	while (len && !ret) {
		struct awg_sub sub = { 0 };
		unsigned int n;
		LIST_HEAD(items);

		/* At most a token's worth of frames per round. */
		for (n = 0; len && n < AWG_TOKEN_FRAMES_MAX; n++) {
			u32 chunk = min_t(u64, len, AWG_FRAME_DATA_MAX);
			struct awg_item *it;

			it = kzalloc(struct_size(it, data, chunk), GFP_KERNEL);
			if (!it) {
				ret = -ENOMEM;
				break;
			}
			list_add_tail(&it->node, &items);
			if (copy_from_user(it->data, buf, chunk)) {
				ret = -EFAULT;
				break;
			}
			it->f.type = AWG_FRAME_DATA;
			it->f.len = chunk;
			it->f.addr = off;
			buf += chunk;
			off += chunk;
			len -= chunk;
		}
		if (ret) {
			awg_free_list(&items);
			break;
		}
		ret = awg_submit(b, &items, &sub);
	}
	if (!ret)
		awg_model_rate(b, start, total, AWG_WRITE_KBPS);
	return ret;
}

int awg_submit_event(struct awg_board *b, u32 node, u32 id, u32 data)
{
	struct awg_sub sub = { 0 };
	struct awg_item *it;
	LIST_HEAD(items);

	it = kzalloc(sizeof(*it), GFP_KERNEL);
	if (!it)
		return -ENOMEM;
	it->f.type = AWG_FRAME_EVENT;
	it->f.addr = node;
	it->f.aux = (u64)id << 32 | data;
	list_add_tail(&it->node, &items);
	return awg_submit(b, &items, &sub);
}

int awg_wait_event(struct awg_board *b, struct awg_event *ev)
{
	struct awg_event_q *q = &b->events[ev->id];
	/* One deadline: an event another waiter takes does not restart it. */
	unsigned long deadline = jiffies + msecs_to_jiffies(ev->timeout_ms);
	long left, ret;

	for (;;) {
		spin_lock(&b->lock);
		if (q->count) {
			ev->node = q->e[q->head].node;
			ev->data = q->e[q->head].data;
			q->head = (q->head + 1) % AWG_EVENT_QUEUE;
			q->count--;
			spin_unlock(&b->lock);
			return 0;
		}
		spin_unlock(&b->lock);
		if (!ev->timeout_ms)
			return -EAGAIN;
		left = deadline - jiffies;
		if (left <= 0)
			return -ETIMEDOUT;
		ret = wait_event_interruptible_timeout(b->event_wq,
						       READ_ONCE(q->count), left);
		if (ret < 0)
			return -EINTR;
	}
}

struct awg_flush_goal {
	u64 ticket, seq;
};

static bool awg_flush_published(struct awg_board *b, void *arg)
{
	struct awg_flush_goal *g = arg;

	return awg_published_upto(b, g->ticket);
}

static bool awg_flush_acked(struct awg_board *b, void *arg)
{
	struct awg_flush_goal *g = arg;

	return READ_ONCE(b->acked_seq) >= g->seq;
}

int awg_flush(struct awg_board *b, unsigned int timeout_ms)
{
	/* One deadline for both: published, then acknowledged. */
	unsigned long deadline = jiffies + msecs_to_jiffies(timeout_ms);
	struct awg_flush_goal g;
	int ret;

	spin_lock(&b->lock);
	b->stats.flushes++;
	g.ticket = b->ticket_next;
	spin_unlock(&b->lock);
	ret = awg_wait(b, awg_flush_published, &g, deadline, NULL);
	if (ret)
		return ret;
	g.seq = READ_ONCE(b->seq_next);
	return awg_wait(b, awg_flush_acked, &g, deadline, NULL);
}

int awg_ring_attach(struct awg_board *b, struct file *file,
		    const struct awg_ring_attach *a)
{
	void *in, *out;

	in = kvmalloc(AWG_TOKEN_MAX, GFP_KERNEL);
	out = kvmalloc(AWG_TOKEN_MAX, GFP_KERNEL);
	if (!in || !out) {
		kvfree(in);
		kvfree(out);
		return -ENOMEM;
	}
	mutex_lock(&b->visit_mutex);
	if (b->ring_file) {
		mutex_unlock(&b->visit_mutex);
		kvfree(in);
		kvfree(out);
		return -EBUSY;
	}
	cancel_delayed_work(&b->publish_work);
	b->ring_in = in;
	b->ring_out = out;
	b->node_id = a->node_id;
	b->nodes = a->nodes;
	b->live_mask = BIT(a->node_id);
	b->last_depart_ns = 0;
	/* Loopback frames have reached every node there was. */
	awg_ring_reset(b, 0);
	WRITE_ONCE(b->ring_file, file);
	mutex_unlock(&b->visit_mutex);
	pr_info("%s: ring attached as node %u of %u\n", b->name, a->node_id,
		a->nodes);
	return 0;
}

void awg_ring_detach(struct awg_board *b, struct file *file)
{
	mutex_lock(&b->visit_mutex);
	if (b->ring_file != file) {
		mutex_unlock(&b->visit_mutex);
		return;
	}
	spin_lock(&b->lock);
	b->stats.node_changes += hweight32(b->live_mask & ~BIT(b->node_id));
	spin_unlock(&b->lock);
	pr_info("%s: ring detached (node %u), alone on a loopback ring\n",
		b->name, b->node_id);
	WRITE_ONCE(b->ring_file, NULL);
	awg_ring_reset(b, AWG_LOOPBACK_RING_ID);
	awg_loopback_token(b);
	b->last_depart_ns = 0;
	kvfree(b->ring_in);
	kvfree(b->ring_out);
	b->ring_in = NULL;
	b->ring_out = NULL;
	mutex_unlock(&b->visit_mutex);
	wake_up_all(&b->done_wq);
	if (awg_has_dirty(b))
		mod_delayed_work(system_wq, &b->publish_work, 0);
}

int awg_ring_visit(struct awg_board *b, struct file *file,
		   struct awg_ring_visit *v)
{
	bool fresh = v->flags & AWG_VISIT_NEW;
	bool check = v->flags & AWG_VISIT_CHECK;
	u32 out_len = 0;
	int ret;

	if (READ_ONCE(b->ring_file) != file)
		return -ENOTCONN;
	if (v->flags & ~(AWG_VISIT_NEW | AWG_VISIT_CHECK) ||
	    (fresh && check) || v->out_cap < AWG_TOKEN_MAX)
		return -EINVAL;
	if (fresh) {
		if (v->in_len || b->node_id || !v->ring_id ||
		    v->ring_id == AWG_LOOPBACK_RING_ID || !(v->live_mask & 1) ||
		    (v->live_mask & ~awg_all_mask(b->nodes)))
			return -EINVAL;
	} else if (v->live_mask || v->ring_id || v->in_len > AWG_TOKEN_MAX) {
		return -EINVAL;
	}
	/*
	 * The attachment's buffers: only its file comes here, but maybe from
	 * several threads.  One at a time, or another thread's token could
	 * replace this one between its check and the visit.
	 */
	if (mutex_lock_killable(&b->ring_io_mutex))
		return -EINTR;
	if (!fresh && copy_from_user(b->ring_in, u64_to_user_ptr(v->in),
				     v->in_len)) {
		ret = -EFAULT;
		goto unlock_io;
	}
	if (mutex_lock_killable(&b->visit_mutex)) {
		ret = -EINTR;
		goto unlock_io;
	}
	ret = fresh ? 0 : awg_token_check(b, b->ring_in, v->in_len);
	if (ret) {
		spin_lock(&b->lock);
		b->stats.bad_tokens++;
		spin_unlock(&b->lock);
	} else if (!check) {
		ret = awg_visit(b, b->ring_in, v->in_len, b->ring_out, &out_len,
				fresh, v->live_mask, v->ring_id);
	}
	mutex_unlock(&b->visit_mutex);
	if (ret || check)
		goto unlock_io;
	if (copy_to_user(u64_to_user_ptr(v->out), b->ring_out, out_len)) {
		ret = -EFAULT;
		goto unlock_io;
	}
	v->out_len = out_len;
unlock_io:
	mutex_unlock(&b->ring_io_mutex);
	return ret;
}

int awg_ring_init(struct awg_board *b)
{
	mutex_init(&b->ring_io_mutex);
	mutex_init(&b->visit_mutex);
	spin_lock_init(&b->lock);
	INIT_LIST_HEAD(&b->dirty);
	INIT_LIST_HEAD(&b->send);
	INIT_LIST_HEAD(&b->flight);
	init_waitqueue_head(&b->done_wq);
	init_waitqueue_head(&b->work_wq);
	init_waitqueue_head(&b->event_wq);
	INIT_DELAYED_WORK(&b->publish_work, awg_publish_tick);
	b->inject_state = 0x2545f491 + b->idx;
	b->cfg.mode = AWG_MODE_FAST;
	b->cfg.fiber_m = 10;
	b->cfg.idle_us = AWG_IDLE_US;
	b->cfg.node_delay_ns = AWG_NODE_DELAY_NS;
	b->tok = kvmalloc(AWG_TOKEN_MAX, GFP_KERNEL);
	b->tok_out = kvmalloc(AWG_TOKEN_MAX, GFP_KERNEL);
	if (!b->tok || !b->tok_out) {
		kvfree(b->tok);
		kvfree(b->tok_out);
		return -ENOMEM;
	}
	awg_loopback_token(b);
	return 0;
}

void awg_ring_exit(struct awg_board *b)
{
	cancel_delayed_work_sync(&b->publish_work);
	awg_free_list(&b->flight);
	kvfree(b->tok);
	kvfree(b->tok_out);
}
